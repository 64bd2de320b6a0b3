//! Compiles the emulated DCB driver (the C in c/, described in c/dcbdrv.h) into OUT_DIR
//! with gcc, against the kernel's uapi headers. Without gcc the crate still builds (tests
//! that do not preload the driver keep running); `dcbdrv::library()` then fails with the
//! reason.
use std::path::PathBuf;
use std::process::Command;

/// The driver's sources; every one includes c/dcbdrv.h.
const SOURCES: [&str; 18] = [
    "c/state.c",
    "c/statefile.c",
    "c/nlmsg.c",
    "c/ops.c",
    "c/ieee.c",
    "c/models.c",
    "c/drv_mlx5.c",
    "c/drv_ice.c",
    "c/drv_i40e.c",
    "c/drv_ixgbe.c",
    "c/drv_bnxt.c",
    "c/drv_hns3.c",
    "c/shim.c",
    "c/lldpad_fix.c",
    "c/sysfs.c",
    "c/ethtool.c",
    "c/ethtool_ioctl.c",
    "c/ethmodels.c",
];
const HEADER: &str = "c/dcbdrv.h";

/// The directory-fsync fault library (its own `.so`: it wraps only fsync and fdatasync).
const FSYNC_FAULT: &str = "c/fsync_fault.c";

fn main() {
    for file in SOURCES.iter().chain([&HEADER, &FSYNC_FAULT]) {
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fsync_fault(&out);
    let so = out.join("liblossless_dcbdrv.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    // -fvisibility=hidden: the library exports only the wrapped libc calls (DCBDRV_EXPORT).
    let result = Command::new(&cc)
        .args(["-O2", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(["-fvisibility=hidden", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .args(SOURCES)
        .arg("-ldl")
        .arg("-lpthread")
        .output();
    match result {
        Ok(o) if o.status.success() => {
            println!("cargo:rustc-env=LOSSLESS_DCBDRV_SO={}", so.display());
            println!("cargo:rustc-env=LOSSLESS_DCBDRV_BUILD_ERROR=");
        }
        Ok(o) => {
            // Our own C does not compile: that is a bug to see at once.
            panic!(
                "{cc} failed on the emulated DCB driver ({}; it needs the kernel's uapi headers, Debian package linux-libc-dev):\n{}",
                SOURCES.join(" "),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        Err(e) => {
            println!("cargo:rustc-env=LOSSLESS_DCBDRV_SO=");
            println!(
                "cargo:rustc-env=LOSSLESS_DCBDRV_BUILD_ERROR={cc} could not be run ({e}): install gcc (Debian package gcc) to build the emulated DCB driver"
            );
        }
    }
}

/// Builds `c/fsync_fault.c` (see [`FSYNC_FAULT`]); without gcc, the reason is kept for
/// `fault::dir_fsync_library()` to fail with.
fn fsync_fault(out: &std::path::Path) {
    let so = out.join("liblossless_fsync_fault.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    let result = Command::new(&cc)
        .args(["-O2", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(["-fvisibility=hidden", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(FSYNC_FAULT)
        .arg("-ldl")
        .output();
    match result {
        Ok(o) if o.status.success() => {
            println!("cargo:rustc-env=LOSSLESS_FSYNC_FAULT_SO={}", so.display());
            println!("cargo:rustc-env=LOSSLESS_FSYNC_FAULT_BUILD_ERROR=");
        }
        Ok(o) => panic!(
            "{cc} failed on {FSYNC_FAULT}:\n{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            println!("cargo:rustc-env=LOSSLESS_FSYNC_FAULT_SO=");
            println!(
                "cargo:rustc-env=LOSSLESS_FSYNC_FAULT_BUILD_ERROR={cc} could not be run ({e}): install gcc (Debian package gcc)"
            );
        }
    }
}

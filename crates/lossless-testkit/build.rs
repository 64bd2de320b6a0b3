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
/// The wall-clock step library (its own `.so`: it wraps only clock_gettime).
const CLOCK_STEP: &str = "c/clock_step.c";

fn main() {
    for file in SOURCES.iter().chain([&HEADER, &FSYNC_FAULT, &CLOCK_STEP]) {
        println!("cargo:rerun-if-changed={file}");
    }
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    preload(&out, FSYNC_FAULT, "fsync_fault", "LOSSLESS_FSYNC_FAULT");
    preload(&out, CLOCK_STEP, "clock_step", "LOSSLESS_CLOCK_STEP");
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

/// Builds a one-file library to preload (`source`) into `liblossless_{name}.so`, its
/// path in `{var}_SO`; without gcc, the reason is kept in `{var}_BUILD_ERROR` for the
/// testkit function that returns the library to fail with (`fault::dir_fsync_library`,
/// `clock::step_library`).
fn preload(out: &std::path::Path, source: &str, name: &str, var: &str) {
    let so = out.join(format!("liblossless_{name}.so"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "gcc".into());
    let result = Command::new(&cc)
        .args(["-O2", "-g", "-Wall", "-Wextra", "-Werror"])
        .args(["-fvisibility=hidden", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(source)
        .arg("-ldl")
        .output();
    match result {
        Ok(o) if o.status.success() => {
            println!("cargo:rustc-env={var}_SO={}", so.display());
            println!("cargo:rustc-env={var}_BUILD_ERROR=");
        }
        Ok(o) => panic!(
            "{cc} failed on {source}:\n{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => {
            println!("cargo:rustc-env={var}_SO=");
            println!(
                "cargo:rustc-env={var}_BUILD_ERROR={cc} could not be run ({e}): install gcc (Debian package gcc)"
            );
        }
    }
}

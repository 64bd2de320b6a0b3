//! Compiles the relay's XDP program (bpf/relay.bpf.c) with `clang -target bpf`
//! into OUT_DIR when clang and the kernel's BPF headers (libbpf-dev) are there.
//! Without them the crate still builds: `xdp::object()` then returns the
//! reason, and the relay runs its AF_PACKET path.
use std::path::{Path, PathBuf};
use std::process::Command;

const SOURCE: &str = "bpf/relay.bpf.c";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-env-changed=BPF_CLANG");
    println!("cargo:rerun-if-env-changed=LOSSLESS_NO_XDP");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let obj = out.join("relay.bpf.o");
    let _ = std::fs::remove_file(&obj);
    match build(&obj) {
        Ok(()) => {
            println!("cargo:rustc-env=LOSSLESS_XDP_OBJECT={}", obj.display());
            println!("cargo:rustc-env=LOSSLESS_XDP_BUILD_ERROR=");
        }
        Err(why) => {
            // An empty object; the reason goes into the binary.
            std::fs::write(&obj, b"").expect("write OUT_DIR");
            println!("cargo:rustc-env=LOSSLESS_XDP_OBJECT={}", obj.display());
            println!("cargo:rustc-env=LOSSLESS_XDP_BUILD_ERROR={why}");
            println!("cargo:warning=the relay's XDP path is not built: {why}");
        }
    }
}

fn build(obj: &Path) -> Result<(), String> {
    if std::env::var_os("LOSSLESS_NO_XDP").is_some() {
        return Err("LOSSLESS_NO_XDP was set at build time".into());
    }
    if !Path::new("/usr/include/bpf/bpf_helpers.h").exists() {
        return Err("libbpf's headers (bpf/bpf_helpers.h) are missing: install libbpf-dev".into());
    }
    let clang = std::env::var("BPF_CLANG").unwrap_or_else(|_| "clang".into());
    // Debian keeps asm/types.h under the multiarch directory.
    let multiarch = Command::new("gcc")
        .arg("-print-multiarch")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "x86_64-linux-gnu".into());
    let result = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(format!("-I/usr/include/{multiarch}"))
        .args(["-c", SOURCE, "-o"])
        .arg(obj)
        .output();
    match result {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{clang} -target bpf failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )),
        Err(e) => Err(format!("{clang} not found ({e}): install clang")),
    }
}

//! Compiles the relay's XDP program (bpf/relay.bpf.c) with `clang -target bpf`
//! into OUT_DIR when clang and the kernel's BPF headers (libbpf-dev) are there.
//! Without them the crate still builds: `xdp::object()` then returns the
//! reason, and the relay runs its AF_PACKET path.
use std::path::{Path, PathBuf};

#[path = "build_xdp.rs"]
mod build_xdp;

const SOURCE: &str = "bpf/relay.bpf.c";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-changed=bpf/storm.bpf.h");
    println!("cargo:rerun-if-changed=build_xdp.rs");
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
    let clang = std::env::var("BPF_CLANG").unwrap_or_else(|_| "clang".into());
    build_xdp::compile(&clang, Path::new("/usr/include"), Path::new(SOURCE), obj)
}

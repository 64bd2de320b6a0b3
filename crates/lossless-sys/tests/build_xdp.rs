#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The build script's decision (build_xdp.rs): without clang, or without
//! libbpf's headers, the XDP program is not built and the reason names what
//! to install (the crate, and so the README's main command, still builds;
//! the daemon then runs the AF_PACKET path and `relay show` gives this
//! reason); with them it is.

#[path = "../build_xdp.rs"]
mod build_xdp;

use std::path::Path;

/// A fresh directory for one test's output.
fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("lossless-build-xdp-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn source() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/bpf/relay.bpf.c"))
}

#[test]
fn without_clang_the_reason_says_to_install_it() {
    let dir = scratch("no-clang");
    let obj = dir.join("relay.bpf.o");
    let why = build_xdp::compile(
        "lossless-no-such-clang",
        Path::new("/usr/include"),
        source(),
        &obj,
    )
    .unwrap_err();
    assert!(why.contains("lossless-no-such-clang not found"), "{why}");
    assert!(why.ends_with("install clang"), "{why}");
    assert!(!obj.exists());
}

#[test]
fn without_libbpf_headers_the_reason_says_to_install_them() {
    let dir = scratch("no-headers");
    let why = build_xdp::compile("clang", &dir, source(), &dir.join("o")).unwrap_err();
    assert!(why.contains("install libbpf-dev"), "{why}");
}

#[test]
fn with_the_toolchain_the_program_is_built() {
    use lossless_testkit::{require, Oracle};
    if !require("build_xdp", &[Oracle::Bpf]) {
        return;
    }
    let dir = scratch("built");
    let obj = dir.join("relay.bpf.o");
    build_xdp::compile("clang", Path::new("/usr/include"), source(), &obj).unwrap();
    assert!(std::fs::metadata(&obj).unwrap().len() > 1000);
}

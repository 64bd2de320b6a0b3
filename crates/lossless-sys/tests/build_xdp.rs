#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The build script's decision (build_xdp.rs): without clang, or without
//! libbpf's headers, the XDP program is not built and the reason names what
//! to install (the crate, and so the README's main command, still builds;
//! the daemon then runs the AF_PACKET path and `relay show` gives this
//! reason); with them it is.

#[path = "../build_xdp.rs"]
mod build_xdp;

use std::path::Path;

use lossless_testkit::TempDir;

fn source() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/bpf/relay.bpf.c"))
}

#[test]
fn without_clang_the_reason_says_to_install_it() {
    let dir = TempDir::new();
    let obj = dir.path().join("relay.bpf.o");
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
    let dir = TempDir::new();
    let why = build_xdp::compile("clang", dir.path(), source(), &dir.path().join("o")).unwrap_err();
    assert!(why.contains("install libbpf-dev"), "{why}");
}

#[test]
fn with_the_toolchain_the_program_is_built() {
    use lossless_testkit::{require, Oracle};
    if !require("build_xdp", &[Oracle::Bpf]) {
        return;
    }
    let dir = TempDir::new();
    let obj = dir.path().join("relay.bpf.o");
    build_xdp::compile("clang", Path::new("/usr/include"), source(), &obj).unwrap();
    // An ELF relocatable object for the BPF machine (e_type 1, e_machine 247), with the
    // program's sections in it.
    let elf = std::fs::read(&obj).unwrap();
    assert_eq!(&elf[..4], b"\x7fELF");
    assert_eq!(u16::from_le_bytes([elf[16], elf[17]]), 1, "ET_REL");
    assert_eq!(u16::from_le_bytes([elf[18], elf[19]]), 247, "EM_BPF");
    let has = |name: &[u8]| elf.windows(name.len()).any(|w| w == name);
    assert!(has(b"xdp"), "no xdp section");
    assert!(has(b".maps"), "no .maps section");
}

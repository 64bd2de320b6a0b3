//! The build script's decision, a function of what it finds: compile the
//! relay's XDP program with `clang` (a name looked up in PATH, or a path)
//! against the headers under `include`, or say why not. build.rs runs it;
//! tests/build_xdp.rs runs it with a compiler or headers missing.
use std::path::Path;
use std::process::Command;

/// Compiles `source` into `obj`, or the reason the XDP path is not built.
pub fn compile(clang: &str, include: &Path, source: &Path, obj: &Path) -> Result<(), String> {
    if !include.join("bpf/bpf_helpers.h").exists() {
        return Err("libbpf's headers (bpf/bpf_helpers.h) are missing: install libbpf-dev".into());
    }
    // Debian keeps asm/types.h under the multiarch directory.
    let multiarch = Command::new("gcc")
        .arg("-print-multiarch")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "x86_64-linux-gnu".into());
    let result = Command::new(clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg(format!("-I{}", include.join(&multiarch).display()))
        .arg(format!("-I{}", include.display()))
        .arg("-c")
        .arg(source)
        .arg("-o")
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

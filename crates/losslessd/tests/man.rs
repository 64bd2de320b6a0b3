#![allow(clippy::unwrap_used)]
//! `losslessd --man DIR` writes the daemon's man page from its clap definition;
//! groff (Debian groff-base) renders it with every warning on and says nothing.

use std::process::Command;

#[test]
fn man_page_renders_without_a_warning() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("losslessd-man");
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_losslessd"))
        .arg("--man")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(pages, ["losslessd.8"]);
    let page = dir.join("losslessd.8");
    let text = std::fs::read_to_string(&page).unwrap();
    for want in ["\\-\\-config", "\\-\\-check", "\\-\\-man"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    let groff = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww"])
        .arg(&page)
        .output()
        .expect("groff runs (Debian package groff-base)");
    assert!(groff.status.success());
    assert_eq!(String::from_utf8_lossy(&groff.stderr), "");
    assert!(String::from_utf8_lossy(&groff.stdout).contains("losslessd"));
}

//! Reading the configuration file: a file that is missing, cannot be read or parsed is
//! refused with where and why; which file is read when none is named.

use lossless_node::config::{ConfigFileError, DaemonConfig};
use losslessd::config_file::{load, ConfigSource};

#[test]
fn load_reads_files_and_refuses_a_missing_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("none.toml");
    let e = load(&missing).expect_err("refused");
    assert_eq!(
        e.to_string(),
        format!("{}: no such file", missing.display())
    );
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").expect("write");
    assert_eq!(load(&empty).expect("defaults"), DaemonConfig::default());
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[defaults]\nadmin_status = 1\n").expect("write");
    let e = load(&bad).expect_err("refused");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2:16: defaults.admin_status: expected a string, found an integer",
            bad.display()
        )
    );
    // A directory is not a file.
    let e = load(dir.path()).expect_err("refused");
    assert!(matches!(e, ConfigFileError::Io { .. }), "{e:?}");
    assert!(e
        .to_string()
        .starts_with(&format!("{}: ", dir.path().display())));
}

/// `losslessd --check` lists every mistake of a bad file, one `losslessd: FILE:LINE:COL:
/// KEY: REASON` line each, in file order, and exits 2.
#[test]
fn check_lists_every_mistake() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[defaults]\nadmin_status = 1\npfc.priorities = [3, 3]\nbogus = true\n\
         [ports.\"eth0\"]\npg.percent = [50, 40, 0, 0, 0, 0, 0, 0]\ndcbx.mode = \"fast\"\n",
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_losslessd"))
        .arg("--check")
        .arg("--config")
        .arg(&bad)
        .output()
        .expect("run losslessd");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    let at: Vec<String> = [(2, 16), (3, 22), (4, 1), (6, 14), (7, 13)]
        .iter()
        .map(|(l, c)| format!("losslessd: {}:{l}:{c}: ", bad.display()))
        .collect();
    assert_eq!(lines.len(), at.len(), "{err}");
    for (line, at) in lines.iter().zip(&at) {
        assert!(
            line.starts_with(at.as_str()),
            "{line:?} does not start {at:?}"
        );
    }
}

#[test]
fn the_source_is_the_named_file_else_the_default_one_if_it_exists() {
    let dir = tempfile::tempdir().expect("temp dir");
    let named = dir.path().join("named.toml");
    let default = dir.path().join("default.toml");
    // Named: whether or not it exists (a missing one is refused when read).
    let s = ConfigSource::resolve(Some(&named), &default);
    assert_eq!(s, ConfigSource::Named(named.clone()));
    assert_eq!(s.path(), Some(named.as_path()));
    assert_eq!(s.describe(), named.display().to_string());
    // Not named, no default file: the built-in defaults, saying where it looked.
    let s = ConfigSource::resolve(None, &default);
    assert_eq!(s.path(), None);
    assert_eq!(
        s.describe(),
        format!(
            "the built-in defaults (no --config, and no {})",
            default.display()
        )
    );
    // Not named, a default file.
    std::fs::write(&default, "").expect("write");
    let s = ConfigSource::resolve(None, &default);
    assert_eq!(s, ConfigSource::Default(default.clone()));
    assert_eq!(
        s.describe(),
        format!("{} (the default file)", default.display())
    );
    assert_eq!(load(&default).expect("empty"), DaemonConfig::default());
}

//! Reading the configuration file: a missing file means every default, a file that
//! cannot be read or parsed is refused with where and why.

use lossless_node::config::{ConfigFileError, DaemonConfig};
use losslessd::config_file::load;

#[test]
fn load_reads_files_and_treats_a_missing_one_as_defaults() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("none.toml");
    assert_eq!(load(&missing).expect("defaults"), DaemonConfig::default());
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

//! `-j` / `--json` before the command (`lossless -j lab`, as `ip -j` and `dcb -j`) and
//! after it, the same output either way; a command without a JSON form says so. The
//! daemon commands are checked against a running losslessd in
//! crates/losslessd/tests/health.rs.

mod common;
use common::*;

/// stdout of a successful run.
fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

#[test]
fn json_goes_before_or_after_the_command() {
    let capture = data("lldpad-cee.pcapng");
    let capture = capture.to_str().expect("utf-8 path");
    let cases: [&[&str]; 3] = [
        &["lab", "--scenario", "willing"],
        &["decode", capture],
        &["headroom", "calc", "--speed", "100G", "--cable", "100m"],
    ];
    for cmd in cases {
        let after = ok(&[cmd, &["--json"]].concat());
        assert!(
            after.trim_start().starts_with(['{', '[']),
            "{cmd:?}: {after}"
        );
        for flag in ["-j", "--json"] {
            assert_eq!(ok(&[&[flag][..], cmd].concat()), after, "{flag} {cmd:?}");
        }
        assert_eq!(ok(&[cmd, &["-j"]].concat()), after, "{cmd:?} -j");
    }
}

#[test]
fn a_command_without_json_says_so() {
    let o = run(&["-j", "profile", "roce"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--json") && err.contains("--apply-to-daemon"),
        "{err}"
    );
    assert!(stdout(&o).is_empty());
}

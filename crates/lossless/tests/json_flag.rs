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

/// Fails on the old code (errors were `lossless: what: why` text whatever was asked):
/// a command asked for JSON fails in JSON, one object on stderr, stdout empty, the
/// exit status as ever (1: the daemon is not there; 2: usage and input).
#[test]
fn a_command_asked_for_json_fails_in_json() {
    let cases: [(&[&str], u8, &str); 4] = [
        (
            &["-j", "status", "--socket", "/nonexistent/losslessd.sock"],
            1,
            "losslessd",
        ),
        (
            &[
                "status",
                "--json",
                "--socket",
                "/nonexistent/losslessd.sock",
            ],
            1,
            "losslessd",
        ),
        (&["-j", "decode", "/nonexistent.pcap"], 2, ""),
        (&["-j", "status", "--no-such-flag"], 2, "usage"),
    ];
    for (args, exit, what) in cases {
        let o = run(args);
        assert_eq!(
            o.status.code(),
            Some(i32::from(exit)),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{args:?}");
        let err = stderr(&o);
        let v: serde_json::Value = serde_json::from_str(err.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {err}"));
        assert_eq!(v["error"]["exit"], exit, "{args:?}: {v}");
        assert!(
            v["error"]["what"].as_str().unwrap_or("").contains(what),
            "{args:?}: {v}"
        );
        assert!(
            !v["error"]["why"].as_str().unwrap_or("").is_empty(),
            "{args:?}: {v}"
        );
    }
    // Without JSON asked for: the house text format, as before.
    let o = run(&["status", "--socket", "/nonexistent/losslessd.sock"]);
    assert!(
        stderr(&o).starts_with("lossless: losslessd: "),
        "{}",
        stderr(&o)
    );
}

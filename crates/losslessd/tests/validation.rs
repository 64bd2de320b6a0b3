#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! One validation for the file, the CLI and the control socket: what the file refuses,
//! `lossless dcbx set`, the raw socket and `losslessd --interface` refuse too, with the
//! same reason, and change nothing.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use serde_json::Value;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What `losslessd --check` says of a file (exit 2 expected).
fn check_file(dir: &TempDir, text: &str) -> String {
    let f = dir.path().join("check.toml");
    std::fs::write(&f, text).unwrap();
    let out = Command::new(losslessd_bin())
        .args(["--check", "--config", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{text}: {}", stderr(&out));
    stderr(&out)
}

/// One raw line on the control socket, and its answer.
fn raw(d: &Daemon, line: &str) -> Value {
    let mut s = UnixStream::connect(&d.socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(line.as_bytes()).unwrap();
    s.write_all(b"\n").unwrap();
    let mut reply = String::new();
    BufReader::new(s).read_line(&mut reply).unwrap();
    serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply:?}"))
}

fn admin_pfc(d: &Daemon) -> Vec<u64> {
    priorities(&d.dcbx("va")["pfc"]["desired"])
}

/// Fails on the old code: `--priorities ''` (an empty shell variable) exited 0 and turned
/// PFC off on every priority.
#[test]
fn a_priority_list_is_refused_alike_by_the_file_the_cli_and_the_socket() {
    if !require(
        "a_priority_list_is_refused_alike_by_the_file_the_cli_and_the_socket",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = lossless_testkit::Pair::down();
    let dir = TempDir::new();
    let d = Daemon::start(&pair.a, &dir.path().join("a"), &["--interface", "va"]);
    let set = |p: &str| d.cli(&["dcbx", "set", "va", "pfc", "--priorities", p]);
    let out = set("3,4");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(admin_pfc(&d), [3, 4]);

    // Empty: refused (an unset variable must not switch PFC off); nothing changed.
    for empty in ["", " ", ","] {
        let out = set(empty);
        assert_eq!(out.status.code(), Some(2), "{empty:?}: {}", stderr(&out));
        assert!(
            stderr(&out)
                .contains("--priorities: no priority given: list them (e.g. 3,4) or say none"),
            "{empty:?}: {}",
            stderr(&out)
        );
        assert_eq!(admin_pfc(&d), [3, 4], "{empty:?} changed PFC");
    }

    // A priority twice: the file's reason, on the CLI, the socket and in the file.
    let twice = "priority 3 is listed twice";
    let out = set("3,3");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(twice), "{}", stderr(&out));
    let v = raw(
        &d,
        r#"{"command":"dcbx_set","port":"va","change":{"feature":"pfc","priorities":[3,3]}}"#,
    );
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"]["kind"], "invalid_config", "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains(twice),
        "{v}"
    );
    let file = check_file(&dir, "[ports.\"va\"]\npfc = { priorities = [3, 3] }\n");
    assert!(file.contains(twice), "{file}");
    // Out of range alike.
    let range = "priority 8 is out of range 0..=7";
    let out = set("3,8");
    assert!(stderr(&out).contains(range), "{}", stderr(&out));
    let file = check_file(&dir, "[ports.\"va\"]\npfc = { priorities = [8] }\n");
    assert!(file.contains(range), "{file}");
    assert_eq!(admin_pfc(&d), [3, 4]);

    // `none` still means no priority.
    let out = set("none");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(admin_pfc(&d), Vec::<u64>::new());
}

/// Fails on the old code: `losslessd --interface ''` (or a/b, a 16-byte name, ..)
/// started with no port and a WARN.
#[test]
fn an_interface_name_the_kernel_cannot_have_is_refused_with_the_files_reason() {
    let dir = TempDir::new();
    for (name, reason) in [
        ("", "an interface name cannot be empty"),
        (
            "a/b",
            "'/' cannot appear in an interface name (no '/', ':', NUL or white space)",
        ),
        (
            "abcdefghijklmnop",
            "an interface name has at most 15 bytes, this one has 16",
        ),
        ("..", "\"..\" cannot be an interface name"),
    ] {
        let file = check_file(&dir, &format!("[ports.{name:?}]\n"));
        assert!(file.contains(reason), "{name:?} in the file: {file}");
        let out = Command::new(losslessd_bin())
            .args(["--check", "--interface", name])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(reason),
            "{name:?} on the command line: {}",
            stderr(&out)
        );
    }
    // A name the kernel can have is accepted.
    let out = Command::new(losslessd_bin())
        .args(["--check", "--interface", "abcdefghijklmno"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

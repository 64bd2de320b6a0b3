#![allow(clippy::unwrap_used)]
//! Every command that writes to standard output ends quietly, status 0, when its
//! reader has gone away before it writes (`lossless lab --json | head -c 10`,
//! `| jq` that quit): no panic, no "Broken pipe" on stderr.

mod common;

use std::process::{Command, Stdio};

use common::data;

/// Runs `lossless ARGS` with stdout a pipe whose read end is already closed.
fn with_reader_gone(args: &[&str]) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    assert!(stderr.is_empty(), "{args:?}: {stderr}");
}

#[test]
fn commands_end_quietly_when_the_reader_went_away() {
    let capture = data("lldpad-ieee.pcapng").display().to_string();
    let policy = data("ethernet-policy.conf").display().to_string();
    let runs: &[&[&str]] = &[
        &["lab"],
        &["lab", "--json"],
        &["lab", "--list"],
        &["lab", "--scenario", "wan-relay"],
        &["decode", &capture],
        &["decode", &capture, "--json"],
        &["policy", "compile", &policy, "--ethernet"],
        &["policy", "check", &policy],
        &["headroom", "calc", "--speed", "100G", "--cable", "100m"],
        &[
            "headroom", "calc", "--speed", "100G", "--cable", "100m", "--json",
        ],
        &["headroom", "compare", "--speeds", "100G"],
        &["profile", "roce"],
        &["completions", "bash"],
        &["--help"],
    ];
    for args in runs {
        with_reader_gone(args);
    }
}

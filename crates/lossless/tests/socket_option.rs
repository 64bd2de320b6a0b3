#![allow(clippy::unwrap_used)]
//! `--socket` belongs to the commands that talk to losslessd: the offline ones
//! (decode, lab, policy, profile without --apply-to-daemon, headroom calc and
//! compare) neither show it in their help nor accept it.

mod common;

use common::{data, run, stderr, stdout};

/// Offline commands, each as it runs without the option.
fn offline() -> Vec<Vec<String>> {
    let capture = data("lldpad-ieee.pcapng").display().to_string();
    let policy = data("ethernet-policy.conf").display().to_string();
    [
        vec!["decode", &capture],
        vec!["lab"],
        vec!["policy", "check", &policy],
        vec!["profile", "roce"],
        vec!["headroom", "calc", "--speed", "100G", "--cable", "100m"],
        vec!["headroom", "compare", "--speeds", "100G"],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect()
}

const DAEMON: &[&[&str]] = &[
    &["status"],
    &["neighbors"],
    &["counters"],
    &["events"],
    &["reload"],
    &["dcbx", "show"],
    &["dcbx", "set", "eth0", "pfc"],
    &["dcbx", "set", "eth0", "app", "add"],
    &["dcbx", "reset"],
    &["relay", "show"],
    &["headroom", "show"],
];

fn help(args: &[&str]) -> String {
    let mut a = args.to_vec();
    a.push("--help");
    let out = run(&a);
    assert_eq!(out.status.code(), Some(0), "{a:?}: {}", stderr(&out));
    stdout(&out)
}

#[test]
fn offline_commands_refuse_socket_and_do_not_offer_it() {
    for args in offline() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let name = args[..args.len().min(2)].join(" ");
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let help = help(
            &args[..if args[0] == "headroom" || args[0] == "policy" || args[0] == "profile" {
                2
            } else {
                1
            }],
        );
        assert!(
            !help.contains("--socket <PATH>"),
            "{name} --help offers --socket:\n{help}"
        );
        for place in [1, args.len()] {
            let mut with = args.clone();
            with.insert(place, "--socket=/tmp/none.sock");
            let out = run(&with);
            assert_eq!(out.status.code(), Some(2), "{with:?} was accepted");
            let err = stderr(&out);
            // profile: `--socket` needs --apply-to-daemon, which clap names.
            assert!(
                err.contains("unexpected argument '--socket'") || err.contains("--apply-to-daemon"),
                "{with:?}: {err}"
            );
        }
    }
    // Nor before the command.
    let out = run(&["--socket=/tmp/none.sock", "lab"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn daemon_commands_keep_socket() {
    for args in DAEMON {
        let help = help(args);
        assert!(help.contains("--socket <PATH>"), "{args:?} --help:\n{help}");
    }
    let help = help(&["profile", "roce"]);
    assert!(help.contains("--apply-to-daemon"), "{help}");
    // With --apply-to-daemon the socket is used: a missing one is the error.
    let out = run(&[
        "profile",
        "roce",
        "--port",
        "eth0",
        "--apply-to-daemon",
        "--socket",
        "/nonexistent/lossless.sock",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent/lossless.sock"),
        "{}",
        stderr(&out)
    );
    // The option after a sub-subcommand, and from the environment.
    let out = run(&["dcbx", "show", "--socket", "/nonexistent/a.sock"]);
    assert!(
        stderr(&out).contains("/nonexistent/a.sock"),
        "{}",
        stderr(&out)
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["status"])
        .env("LOSSLESS_SOCKET", "/nonexistent/env.sock")
        .output()
        .unwrap();
    assert!(
        stderr(&out).contains("/nonexistent/env.sock"),
        "{}",
        stderr(&out)
    );
}

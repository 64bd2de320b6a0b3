#![allow(clippy::unwrap_used)]
//! Which configuration losslessd reads, as docs/config.md says: `--config FILE` must
//! exist (at start and on every reload); without `--config` the daemon reads
//! /etc/lossless/losslessd.toml when it exists, else runs on the built-in defaults;
//! `--check` says which of these it checked.
//!
//! The default file is tested for real, in a private mount namespace whose /etc is an
//! empty tmpfs (the host's /etc is never touched).

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::*;

const DEFAULT_FILE: &str = "/etc/lossless/losslessd.toml";

/// A file that selects `va` (no --interface needed) with PFC on priority 3.
const SELECTS_VA: &str = "[ports.\"va\"]\npfc.priorities = [3]\n";

/// The shell script of [`private_etc`]: an empty /etc, with $0 (when not empty) as
/// the default file, then the command line.
const PRIVATE_ETC: &str = "mount -t tmpfs tmpfs /etc && mkdir /etc/lossless && \
                           if [ -n \"$0\" ]; then cp \"$0\" /etc/lossless/losslessd.toml; fi && \
                           exec \"$@\"";

/// A wrapper that runs its command line in a mount namespace whose /etc holds only
/// `default_file` (copied to /etc/lossless/losslessd.toml), or nothing.
fn private_etc(default_file: Option<&Path>) -> Vec<String> {
    let file = default_file
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        PRIVATE_ETC,
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([file])
    .collect()
}

fn losslessd(wrapper: &[String], args: &[&str]) -> Output {
    let (program, rest) = match wrapper.split_first() {
        Some((p, rest)) => (p.as_str(), rest),
        None => ("env", &[][..]),
    };
    Command::new(program)
        .args(rest)
        .arg(losslessd_bin())
        .args(args)
        .output()
        .expect("run losslessd")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_missing_config_file_is_an_error_naming_it() {
    let dir = TempDir::new();
    let missing = dir.path().join("losslessd.toml");
    for args in [vec!["--check"], vec!["--interface", "lo"]] {
        let mut all = vec!["--config", missing.to_str().unwrap()];
        all.extend(args);
        let out = losslessd(&[], &all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert_eq!(
            text(&out.stderr),
            format!("losslessd: {}: no such file\n", missing.display()),
            "{all:?}"
        );
        assert_eq!(text(&out.stdout), "");
    }
}

#[test]
fn check_says_which_configuration_it_checked() {
    let dir = TempDir::new();
    let named = dir.path().join("named.toml");
    std::fs::write(&named, SELECTS_VA).unwrap();
    let out = losslessd(&[], &["--config", named.to_str().unwrap(), "--check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}: configuration is valid\n", named.display())
    );

    if !lossless_testkit::require(
        "check_says_which_configuration_it_checked (default file)",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    // No --config, no default file: the built-in defaults.
    let out = losslessd(&private_etc(None), &["--check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "the built-in defaults (no --config, and no {DEFAULT_FILE}): configuration is valid\n"
        )
    );
    // No --config, a default file: that file, named.
    let out = losslessd(&private_etc(Some(&named)), &["--check"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{DEFAULT_FILE} (the default file): configuration is valid\n")
    );
    // ... which is really read: a bad one is refused with its line.
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[defaults]\nadmin_status = 1\n").unwrap();
    let out = losslessd(&private_etc(Some(&bad)), &["--check"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("losslessd: {DEFAULT_FILE}:2:16: defaults.admin_status: expected a string, found an integer\n")
    );
    // --config wins over the default file.
    let out = losslessd(
        &private_etc(Some(&bad)),
        &["--config", named.to_str().unwrap(), "--check"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn without_config_the_daemon_runs_the_default_file_if_there_is_one() {
    if !lossless_testkit::require(
        "without_config_the_daemon_runs_the_default_file_if_there_is_one",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let file = dir.path().join("default.toml");
    std::fs::write(&file, SELECTS_VA).unwrap();
    let ns = Netns::new();
    ns.ip(&["link", "add", "va", "type", "veth", "peer", "name", "vx"]);

    // The default file selects va: no --interface.
    let wrapper = private_etc(Some(&file));
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let mut d = Daemon::start_under(&ns, &dir.path().join("a"), &wrapper, &[], NO_ENV);
    let status = d.call(&lossless_node::protocol::Request::Status);
    assert_eq!(status["daemon"]["config"], DEFAULT_FILE, "{status}");
    let ports: Vec<&str> = status["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["port"].as_str().unwrap())
        .collect();
    assert_eq!(ports, ["va"], "{status}");
    assert_eq!(d.dcbx("va")["ieee"]["pfc"]["admin"], serde_json::json!([3]));
    assert!(d.log().contains("(the default file)"), "{}", d.log());
    assert_eq!(d.stop(), Some(0));

    // No default file: the built-in defaults, on the interfaces named.
    let wrapper = private_etc(None);
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let mut d = Daemon::start_under(
        &ns,
        &dir.path().join("b"),
        &wrapper,
        &["--interface", "va"],
        NO_ENV,
    );
    let status = d.call(&lossless_node::protocol::Request::Status);
    assert_eq!(
        status["daemon"]["config"],
        serde_json::Value::Null,
        "{status}"
    );
    assert_eq!(d.dcbx("va")["ieee"]["pfc"]["admin"], serde_json::json!([]));
    assert_eq!(d.stop(), Some(0));
}

/// Fails on the old code: a reload of a file deleted since the start ran every port on
/// the built-in defaults (PFC off) without a word.
#[test]
fn reload_refuses_a_config_file_that_is_gone() {
    if !lossless_testkit::require(
        "reload_refuses_a_config_file_that_is_gone",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let file = dir.path().join("losslessd.toml");
    std::fs::write(&file, SELECTS_VA).unwrap();
    let ns = Netns::new();
    ns.ip(&["link", "add", "va", "type", "veth", "peer", "name", "vx"]);
    let mut d = Daemon::start(
        &ns,
        &dir.path().join("d"),
        &["--config", file.to_str().unwrap()],
    );
    assert_eq!(d.dcbx("va")["ieee"]["pfc"]["admin"], serde_json::json!([3]));
    std::fs::remove_file(&file).unwrap();
    let out = d.cli(&["reload"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{}: no such file", file.display())),
        "{err}"
    );
    // Nothing changed.
    assert_eq!(d.dcbx("va")["ieee"]["pfc"]["admin"], serde_json::json!([3]));
    assert_eq!(d.stop(), Some(0));
}

/// `--check` in a network namespace holding `lo` and one veth: the section whose
/// glob takes the veth and the `--interface` naming `lo` pass silently; the section
/// and the `--interface` that match nothing there are each named in a warning on
/// stderr, after the usual line; the file is valid all the same (exit 0). Fails on the
/// old code, which said nothing of them.
#[test]
fn check_warns_of_sections_and_interfaces_that_match_no_interface_here() {
    if !lossless_testkit::require(
        "check_warns_of_sections_and_interfaces_that_match_no_interface_here",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let host = Netns::new();
    let peer = Netns::new();
    Veth::new(
        &host,
        "enp65s0f0np0",
        "02:00:00:00:00:0a",
        &peer,
        "leaf0",
        "02:00:00:00:00:0b",
    );
    let dir = TempDir::new();
    let file = dir.path().join("losslessd.toml");
    std::fs::write(
        &file,
        "[ports.\"enp*s0f*np*\"]\napply = \"dcbnl\"\n\n[ports.\"enp65s0f1np1\"]\npfc.priorities = [3, 4]\n",
    )
    .unwrap();
    let out = host
        .command(losslessd_bin())
        .args(["--config", file.to_str().unwrap(), "--check"])
        .args(["--interface", "lo", "--interface", "eth9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("{}: configuration is valid\n", file.display())
    );
    assert_eq!(
        text(&out.stderr),
        "losslessd: warning: ports.\"enp65s0f1np1\": matches no interface on this host \
         (interfaces here: lo, enp65s0f0np0)\n\
         losslessd: warning: --interface eth9: matches no interface on this host \
         (interfaces here: lo, enp65s0f0np0)\n"
    );
}

#![allow(clippy::unwrap_used)]
//! losslessd's log as a person, journald or a log shipper reads it: the real daemon
//! with its stderr in a file (not a terminal). No ANSI colour codes; DCBX events as
//! plain fields (`event=syncd feature=pfc`), not Rust's Debug form; durations rounded;
//! no timestamp of our own under journald (`JOURNAL_STREAM` set); `--log-format json`
//! one JSON object per line.

mod common;

use std::time::Duration;

use common::*;
use serde_json::Value;

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";

struct Pair {
    a: Daemon,
    b: Daemon,
    _na: Netns,
    _nb: Netns,
    _dir: TempDir,
}

/// A (CEE DCBX only, from a file) and B (the defaults, falls back to CEE), each with
/// its own extra arguments, converged. `journald`: B's stderr is named by
/// `JOURNAL_STREAM` as systemd does (`DEVICE:INODE` of the file), A's by a stale one.
fn pair(a_args: &[&str], b_args: &[&str], journald: bool) -> Pair {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let conf = dir.path().join("a.toml");
    std::fs::write(
        &conf,
        "[defaults.dcbx]\nmode = \"cee\"\n[ports.\"va\"]\npfc = { willing = false, priorities = [3] }\n",
    )
    .unwrap();
    let mut args = vec!["--config", conf.to_str().unwrap()];
    args.extend_from_slice(a_args);
    let stale = [("JOURNAL_STREAM", "1:1")];
    let a_env: &[(&str, &str)] = if journald { &stale } else { &[] };
    let a = Daemon::start_with_env(&na, &dir.path().join("a"), &args, a_env);
    let mut args = vec!["--interface", "vb"];
    args.extend_from_slice(b_args);
    // The file B's stderr goes to (Daemon appends to it), and what systemd would say.
    let b_dir = dir.path().join("b");
    std::fs::create_dir_all(&b_dir).unwrap();
    let log = std::fs::File::create(b_dir.join("log")).unwrap();
    use std::os::unix::fs::MetadataExt;
    let m = log.metadata().unwrap();
    let stream = format!("{}:{}", m.dev(), m.ino());
    let b_env = [("JOURNAL_STREAM", stream.as_str())];
    let b_env: &[(&str, &str)] = if journald { &b_env } else { &[] };
    let b = Daemon::start_with_env(&nb, &b_dir, &args, b_env);
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    for (d, port) in [(&a, "va"), (&b, "vb")] {
        wait_for(Duration::from_secs(5), "convergence", || {
            converged(&d.dcbx(port)).then_some(())
        });
    }
    // The convergence line is written once the node has seen it: wait for it in each
    // daemon's log.
    for d in [&a, &b] {
        wait_for(Duration::from_secs(5), "the convergence line", || {
            d.log().contains("negotiation converged").then_some(())
        });
    }
    Pair {
        a,
        b,
        _na: na,
        _nb: nb,
        _dir: dir,
    }
}

/// The value of `key=` in a text log line.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(&format!(" {key}="))? + key.len() + 2;
    line[at..].split(' ').next()
}

fn is_level(word: &str) -> bool {
    ["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&word)
}

#[test]
fn text_logs_are_plain_fields_without_colour() {
    if !lossless_testkit::require(
        "text_logs_are_plain_fields_without_colour",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let p = pair(&[], &[], true);
    let log = p.a.log();
    assert!(!log.contains('\u{1b}'), "ANSI escapes in a file:\n{log}");
    assert!(
        log.lines()
            .any(|l| l.contains(" event=syncd feature=pfc") && l.contains(" port=va")),
        "{log}"
    );
    assert!(!log.contains("Syncd {"), "Debug form:\n{log}");
    // Every line starts with our timestamp (A's JOURNAL_STREAM is not its stderr, so
    // not journald's): 2026-01-02T03:04:05...
    for l in log.lines() {
        let ts = l.split(' ').next().unwrap();
        assert!(
            ts.len() > 19 && ts.as_bytes()[4] == b'-' && ts.as_bytes()[10] == b'T',
            "{l}"
        );
    }
    // Durations for people: at most two decimals.
    let converged = log
        .lines()
        .find(|l| l.contains("negotiation converged"))
        .unwrap_or_else(|| panic!("no convergence line:\n{log}"));
    let ms = field(converged, "ms").unwrap();
    let decimals = ms.split_once('.').map_or(0, |(_, d)| d.len());
    assert!(
        ms.parse::<f64>().is_ok() && decimals <= 2,
        "ms={ms} in {converged}"
    );

    // Under journald (JOURNAL_STREAM set) journald stamps each line: we do not.
    let log = p.b.log();
    assert!(!log.contains('\u{1b}'), "{log}");
    assert!(log.contains(" event=syncd feature=pfc"), "{log}");
    for l in log.lines() {
        let first = l.split_whitespace().next().unwrap();
        assert!(is_level(first), "a line under journald: {l:?}");
    }
}

#[test]
fn json_logs_are_one_object_per_line() {
    if !lossless_testkit::require(
        "json_logs_are_one_object_per_line",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let p = pair(&["--log-format", "json"], &["--log-format", "json"], false);
    let log = p.a.log();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["event"] == "syncd"
            && l["feature"] == "pfc"
            && l["port"] == "va"
            && l["message"] == "dcbx"),
        "{log}"
    );
    let converged = lines
        .iter()
        .find(|l| l["message"] == "negotiation converged")
        .unwrap_or_else(|| panic!("{log}"));
    let ms = converged["ms"].as_f64().unwrap();
    assert_eq!((ms * 100.0).round() / 100.0, ms, "{converged}");
    assert!(lines.iter().all(|l| is_level(l["level"].as_str().unwrap())));
    assert!(lines.iter().all(|l| l["timestamp"].is_string()));
    // A bad format is refused at start, naming the choices.
    let out = std::process::Command::new(losslessd_bin())
        .args(["--log-format", "xml", "--check"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("text") && err.contains("json"), "{err}");
    drop(p.b);
}

/// What losslessd writes to a terminal (a pty from util-linux's `script`) in a second
/// of life with `env`.
fn on_a_terminal(env: &[(&str, &str)]) -> String {
    let ns = Netns::new();
    let dir = TempDir::new();
    let cmd = format!(
        "timeout -s TERM 1 {} --socket {} --state-dir {} --interface absent0",
        losslessd_bin().display(),
        dir.path().join("sock").display(),
        dir.path().join("state").display(),
    );
    let out = ns
        .command("script")
        .args(["-qefc", &cmd, "/dev/null"])
        .env_remove("NO_COLOR")
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn colour_only_on_a_terminal_and_without_no_color() {
    if !lossless_testkit::require(
        "colour_only_on_a_terminal_and_without_no_color",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let tty = on_a_terminal(&[]);
    assert!(tty.contains("absent0"), "{tty:?}");
    assert!(tty.contains("\u{1b}["), "no colour on a terminal: {tty:?}");
    let plain = on_a_terminal(&[("NO_COLOR", "1")]);
    assert!(plain.contains("absent0"), "{plain:?}");
    assert!(!plain.contains('\u{1b}'), "NO_COLOR=1: {plain:?}");
}

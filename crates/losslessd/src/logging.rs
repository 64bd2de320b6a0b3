//! The daemon's log on stderr: `tracing` lines for people (`text`) or one JSON object
//! per line (`json`), with the conventions of the place stderr goes to.
//!
//! * Colour (ANSI escapes) only when stderr is a terminal and `NO_COLOR` is unset or
//!   empty (<https://no-color.org>): a file, a pipe or journald gets plain text.
//! * Under journald (`JOURNAL_STREAM` names the stream stderr is, as systemd sets it:
//!   `DEVICE:INODE`), no timestamp of ours: journald stamps every line.
//! * Fields are plain values (`event=syncd feature=pfc`); the node core writes them so
//!   (`lossless_node::node`'s log module).

use std::io::IsTerminal;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;

use tracing_subscriber::EnvFilter;

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event for people: time, level, where, message, key=value fields.
    #[default]
    Text,
    /// One JSON object per line: timestamp, level, target, message and the event's
    /// fields at the top level (for jq, Loki, Elasticsearch).
    Json,
}

/// Where stderr goes, as far as the log's form is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stderr {
    /// Colour: a terminal, and `NO_COLOR` unset or empty.
    pub ansi: bool,
    /// journald's stream (`JOURNAL_STREAM` matches stderr): no timestamp of ours.
    pub journald: bool,
}

impl Stderr {
    /// What this process's stderr and environment say.
    pub fn detect() -> Stderr {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Stderr {
            ansi: std::io::stderr().is_terminal() && !no_color,
            journald: std::env::var("JOURNAL_STREAM")
                .ok()
                .is_some_and(|v| is_stderr(&v)),
        }
    }
}

/// `JOURNAL_STREAM` (`DEVICE:INODE`, decimal) names the file stderr is: systemd sets it
/// for the service's own stderr only; a child that redirected stderr inherits a stale
/// one.
fn is_stderr(journal_stream: &str) -> bool {
    let Some((dev, ino)) = journal_stream.split_once(':') else {
        return false;
    };
    let (Ok(dev), Ok(ino)) = (dev.parse::<u64>(), ino.parse::<u64>()) else {
        return false;
    };
    let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() else {
        return false;
    };
    std::fs::File::from(fd)
        .metadata()
        .is_ok_and(|m| m.dev() == dev && m.ino() == ino)
}

/// Installs the log: `filter` in `tracing`'s syntax (a bad one falls back to `info`).
pub fn init(filter: &str, format: LogFormat, stderr: Stderr) {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let base = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(stderr.ansi);
    match (format, stderr.journald) {
        (LogFormat::Text, false) => base.init(),
        (LogFormat::Text, true) => base.without_time().init(),
        (LogFormat::Json, false) => base.json().flatten_event(true).init(),
        (LogFormat::Json, true) => base.json().flatten_event(true).without_time().init(),
    }
}

//! promtool (Debian package `prometheus`) as the oracle of the metrics' text format. A
//! test that uses it starts with [`crate::require`]`(test, &[Oracle::Promtool])`.

use std::io::Write;
use std::process::{Command, Stdio};

/// `promtool check metrics` on `text`: Ok, or what promtool said (problems and lint
/// findings alike; it exits non-zero for either).
pub fn promtool_check_metrics(text: &str) -> Result<(), String> {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("promtool: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| format!("promtool stdin: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("promtool: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Runs promtool with `args` in `dir`: Ok(what it printed), or Err(what it printed)
/// when it exits non-zero.
pub fn promtool_run(dir: &std::path::Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("promtool: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

/// The samples of a text exposition, in order: (`name{labels}` as written, value).
pub fn exposition_samples(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(series, value)| (series.to_string(), value.to_string()))
        .collect()
}

/// The metric names a text exposition declares (`# TYPE` lines) or has samples of
/// (`_bucket`, `_sum`, `_count` of a histogram included).
pub fn exposition_names(text: &str) -> std::collections::BTreeSet<String> {
    let declared = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next());
    let sampled = exposition_samples(text)
        .into_iter()
        .map(|(series, _)| series);
    declared
        .map(str::to_string)
        .chain(sampled.map(|s| s.split('{').next().unwrap_or_default().to_string()))
        .collect()
}

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

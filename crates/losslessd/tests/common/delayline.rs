//! `lossless-delayline` between two interfaces of a namespace, killed on drop, and
//! what it says it did: its `--report` of the holds the kernel timestamped (receive
//! to transmit of each frame). A measurement through the line is checked against
//! those holds, not against the set delay alone: under load a frame can leave the
//! line late, and the report says by how much.

use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::time::Duration;

use super::{wait_for, Netns};

pub struct DelayLine {
    child: Child,
    report: PathBuf,
}

impl DelayLine {
    /// Starts the line in `ns` between interfaces `a` and `b`, holding each frame
    /// `delay` (e.g. "2ms") per direction; its report is written to `report`.
    pub fn start(ns: &Netns, a: &str, b: &str, delay: &str, report: PathBuf) -> DelayLine {
        let child = ns
            .command(env!("CARGO_BIN_EXE_lossless-delayline"))
            .args(["--a", a, "--b", b, "--delay", delay, "--report"])
            .arg(&report)
            .stdin(Stdio::null())
            .spawn()
            .expect("lossless-delayline");
        DelayLine { child, report }
    }

    /// The holds of the last frames (up to 256 per direction), in us, each
    /// direction sorted (a to b, b to a), once both have `at_least` (the line
    /// writes its report when it goes idle: 5 ms after its last frame).
    pub fn holds(&self, at_least: usize) -> [Vec<f64>; 2] {
        wait_for(Duration::from_secs(2), "the delay line's report", || {
            let text = std::fs::read_to_string(&self.report).ok()?;
            let dirs: Vec<Vec<f64>> = text
                .lines()
                .map(|l| {
                    let mut v: Vec<f64> = l
                        .split_whitespace()
                        .skip(1)
                        .filter_map(|n| n.parse::<f64>().ok())
                        .map(|ns| ns / 1e3)
                        .collect();
                    v.sort_by(f64::total_cmp);
                    v
                })
                .collect();
            match <[Vec<f64>; 2]>::try_from(dirs) {
                Ok(d) if d.iter().all(|v| v.len() >= at_least) => Some(d),
                _ => None,
            }
        })
    }
}

impl Drop for DelayLine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

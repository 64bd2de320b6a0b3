//! The `headroom` section (run only when named): two losslessd measuring the
//! link (Adaptive PFC Headroom), link-up to both ports showing a measured
//! headroom, and the measurement frames that took; the same after a link flap.

use std::time::{Duration, Instant};

use crate::common::*;
use crate::measure::*;
use crate::*;
use lossless_node::protocol::Request;
use serde_json::Value;

pub const MEASURING: &str = "[ports.\"IF\"]\npfc = { priorities = [3] }\n\
                         [ports.\"IF\".headroom]\nmeasure = true\nspeed = \"100G\"\n";

pub fn headroom_of(d: &Daemon) -> Value {
    d.call(&Request::HeadroomShow { port: None })["ports"][0].clone()
}

/// Measurement frames a port sent and received (requests, responses, follow-ups).
pub fn measure_frames(h: &Value) -> (u64, u64) {
    let f = &h["frames"];
    let n = |k: &str| f[k].as_u64().unwrap_or(0);
    (
        n("requests_sent") + n("responses_sent") + n("follow_ups_sent"),
        n("requests_received") + n("responses_received") + n("follow_ups_received"),
    )
}

/// A child process killed (and reaped) on drop.
pub struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One timed link-up: from `up` (the command that brings the link up) to both ports
/// showing a measured headroom; then, once neither port has a round open, the
/// measurement frames each port sent and received since `before`.
pub struct Settle {
    pub ms: f64,
    pub frames: [(u64, u64); 2],
    pub failed_rounds: u64,
}

pub fn settle(a: &Daemon, b: &Daemon, up: impl FnOnce()) -> Option<Settle> {
    let before = [
        measure_frames(&headroom_of(a)),
        measure_frames(&headroom_of(b)),
    ];
    let failed_before = [a, b].map(|d| {
        headroom_of(d)["frames"]["rounds_failed"]
            .as_u64()
            .unwrap_or(0)
    });
    let t0 = Instant::now();
    up();
    poll(Duration::from_secs(10), || {
        headroom_of(a)["last"].is_object() && headroom_of(b)["last"].is_object()
    })?;
    let ms = t0.elapsed().as_secs_f64() * 1e3;
    let _ = poll(Duration::from_secs(2), || {
        headroom_of(a)["measuring"] == false && headroom_of(b)["measuring"] == false
    });
    let (ha, hb) = (headroom_of(a), headroom_of(b));
    let after = [measure_frames(&ha), measure_frames(&hb)];
    let frames = [0, 1].map(|i| (after[i].0 - before[i].0, after[i].1 - before[i].1));
    let failed_rounds = [&ha, &hb]
        .iter()
        .zip(failed_before)
        .map(|(h, f)| h["frames"]["rounds_failed"].as_u64().unwrap_or(0) - f)
        .sum();
    Some(Settle {
        ms,
        frames,
        failed_rounds,
    })
}

/// Two losslessd measuring the link over veth. Each run starts a new pair with the
/// links down, brings `va` up, then (timed) `vb`: the command that brings the link
/// up; then flaps it (`vb` down, both daemons see it and forget the measurement,
/// `vb` up, timed again). A port shows a measured headroom when `headroom show` has
/// a last round (forgotten at link-down). With BENCH_HEADROOM_LINE=DELAY the two
/// veth pairs are joined by `lossless-delayline` (as in tests/headroom.rs) instead.
pub fn headroom(runs: usize) {
    let debug = std::env::var_os("BENCH_DEBUG").is_some();
    let line = std::env::var("BENCH_HEADROOM_LINE").ok();
    if let Some(d) = &line {
        println!("headroom: through lossless-delayline --delay {d} (BENCH_HEADROOM_LINE)");
    }
    let mut samples: [Vec<Settle>; 2] = [Vec::new(), Vec::new()];
    for run in 0..runs {
        let dir = TempDir::new();
        let na = Netns::new();
        let nb = Netns::new();
        // The line's namespace and process go after the daemons (declared first).
        let (_nl, _line) = match &line {
            None => {
                Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
                (None, None)
            }
            Some(delay) => {
                let nl = Netns::new();
                Veth::new(&na, "va", MAC_A, &nl, "la", "02:00:00:00:00:0c");
                Veth::new(&nb, "vb", MAC_B, &nl, "lb", "02:00:00:00:00:0d");
                nl.ip(&["link", "set", "la", "up"]);
                nl.ip(&["link", "set", "lb", "up"]);
                let child = nl
                    .command(env!("CARGO_BIN_EXE_lossless-delayline"))
                    .args(["--a", "la", "--b", "lb", "--delay", delay])
                    .stdin(std::process::Stdio::null())
                    .spawn()
                    .expect("lossless-delayline");
                (Some(nl), Some(KillOnDrop(child)))
            }
        };
        let start = |ns: &Netns, ifname: &str, sub: &str| {
            let conf = dir.path().join(format!("{sub}.toml"));
            std::fs::write(&conf, MEASURING.replace("IF", ifname)).unwrap();
            Daemon::start(
                ns,
                &dir.path().join(sub),
                &["--config", conf.to_str().unwrap()],
            )
        };
        let a = start(&na, "va", "a");
        let b = start(&nb, "vb", "b");
        na.ip(&["link", "set", "va", "up"]);
        std::thread::sleep(Duration::from_millis(100));
        let first = settle(&a, &b, || {
            nb.ip(&["link", "set", "vb", "up"]);
        });
        // Through the line a flap of vb is no link-down for va: first link-ups only.
        let flap = if line.is_some() {
            None
        } else {
            nb.ip(&["link", "set", "vb", "down"]);
            let down = poll(Duration::from_secs(5), || {
                [&a, &b].iter().all(|d| {
                    let h = headroom_of(d);
                    h["running"] == false && h["last"].is_null()
                })
            });
            Some(down.and_then(|_| {
                settle(&a, &b, || {
                    nb.ip(&["link", "set", "vb", "up"]);
                })
            }))
        };
        let mut timed = vec![("first link-up", first)];
        timed.extend(flap.map(|f| ("after a flap", f)));
        for (i, (what, s)) in timed.into_iter().enumerate() {
            let Some(s) = s else {
                println!("headroom: run {run}, {what}: did not settle in 10 s");
                continue;
            };
            if debug {
                println!(
                    "headroom run {run}, {what}: {:.1} ms, frames (sent, received) a {:?} b {:?}, {} failed rounds",
                    s.ms, s.frames[0], s.frames[1], s.failed_rounds
                );
            }
            if debug && s.ms > 1000.0 {
                let tail = |log: String| {
                    let lines: Vec<&str> = log.lines().collect();
                    lines[lines.len().saturating_sub(60)..].join("\n")
                };
                println!("slow run; A:\n{}\nB:\n{}", tail(a.log()), tail(b.log()));
            }
            samples[i].push(s);
        }
    }
    for (what, v) in ["first link-up", "after a flap"].iter().zip(&samples) {
        if v.is_empty() && line.is_some() {
            continue;
        }
        if v.is_empty() {
            println!("headroom, {what}: no run settled");
            continue;
        }
        let ms: Vec<f64> = v.iter().map(|s| s.ms).collect();
        let over = ms.iter().filter(|&&m| m > 1000.0).count();
        let sent = v
            .iter()
            .flat_map(|s| s.frames.map(|f| f.0))
            .max()
            .unwrap_or(0);
        let received = v
            .iter()
            .flat_map(|s| s.frames.map(|f| f.1))
            .max()
            .unwrap_or(0);
        let failed: u64 = v.iter().map(|s| s.failed_rounds).sum();
        println!(
            "headroom, {what}: link-up to a measured headroom on both ports (wall): p50 {:.1} ms, p90 {:.1}, max {:.1} ({} runs, {over} over 1 s)",
            percentile(&ms, 0.5),
            percentile(&ms, 0.9),
            percentile(&ms, 1.0),
            ms.len()
        );
        println!(
            "headroom, {what}: measurement frames per port: at most {sent} sent, {received} received (floor: 100); {failed} failed rounds in all"
        );
    }
}

//! A flood on one port (needs root):
//!
//!   cargo bench -p losslessd --bench flood
//!
//! One losslessd with two ports: `fa`, flooded from its link by a generator thread
//! (LLDPDUs from 65,536 MSAPs in turn, `sendmmsg` batches of 64 on a packet socket,
//! as fast as this machine sends them), and `pa`, whose peer is a second losslessd.
//!   BENCH_ANCHOR_BIN=/path/to/an/older/losslessd cargo bench -p losslessd --bench flood
//!
//! runs each measurement with that binary too, the figure to compare with (main at
//! a4bbcd2, before batched receive and the receive budget: one receive call and one
//! agent pass per frame). Printed, for each binary:
//!
//! * the flood's rate (frames the generator sent per second) and what the daemon
//!   made of it over BENCH_WINDOW_S seconds (default 3): frames read (processed or
//!   refused past the budget), frames the kernel dropped on the full socket buffer;
//! * the daemon's CPU over the window (% of one core) and per frame read;
//! * `pa`'s link-up to agreed PFC 3,4 under the flood: wall (from just before
//!   `ip link set up`, polling every 10 ms) and the daemon's own figure
//!   (`last_convergence_ms`).
//!
//! BENCH_RUNS runs of each (default 3), each with new namespaces and daemons (a
//! link flapped on the same pair waits for the peer's next fast transmission, 1 s);
//! the convergence figures' median and worst at the end.
//!
//!   cargo bench -p losslessd --bench flood -- peer
//!
//! floods `fa` with its DCBX peer's identity instead (issue 29, item 1): `fa`'s peer
//! is a losslessd on `fb`, and the generator sends, in turn, copies of that peer's
//! LLDPDU and XOFFs for priority 3 from its MAC. Printed too: the frames the shared
//! packet sockets dropped (`pa`'s frames go through them) and whether `fa` moved
//! to a socket of its own.
//!
//!   cargo bench -p losslessd --bench flood -- storm
//!
//! a PFC storm instead (tests/flood.rs `a_new_peer_converges_on_a_port_under_a_pfc_storm`
//! asserts that it converges; the time is measured here): a device on `pb` storms
//! `pa` with PFC frames until its budget for frames from others is spent, then a
//! DCBX peer (a second losslessd) starts on `pb`. Printed: the peer's start to
//! agreed PFC 3,4 on `pa` (its process start and netlink dump are in it; the
//! budget should not be: a few seconds at most, where the old code, one budget for
//! all, found no peer within 10 s), median and worst of BENCH_RUNS.
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::flood::{agreed_within, peer_link, FloodRig, LEAF_CONFIG};
use common::*;

fn main() {
    if !require("flood bench", &[Oracle::Netns]) {
        return;
    }
    println!("machine: {}", machine());
    if std::env::args().any(|a| a == "storm") {
        return storm(env_or("BENCH_RUNS", 3));
    }
    let peer = std::env::args().any(|a| a == "peer");
    if peer {
        println!("the flood: copies of fa's DCBX peer's LLDPDU and XOFFs from its MAC");
    }
    let runs = env_or("BENCH_RUNS", 3);
    let window = Duration::from_secs(env_or("BENCH_WINDOW_S", 3) as u64);
    let mut bins = vec![("this build (batched, budget 100/s)", losslessd_bin())];
    if let Ok(anchor) = std::env::var("BENCH_ANCHOR_BIN") {
        bins.push(("anchor", PathBuf::from(anchor)));
    }
    for (name, bin) in bins {
        let (mut wall, mut own) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let (w, o) = run(name, &bin, window, peer);
            wall.extend(w);
            own.push(o);
        }
        let worst = |v: &[f64]| v.iter().copied().fold(f64::NAN, f64::max);
        println!(
            "{name}: pa link-up to agreed under the flood, {} of {runs} runs within 10 s: wall median {:.1} ms, worst {:.1} ms; own figure median {:.2} ms, worst {:.2} ms",
            wall.len(),
            median(&mut wall.clone()),
            worst(&wall),
            median(&mut own.clone()),
            worst(&own),
        );
    }
}

/// utime + stime of `pid`, in clock ticks (10 ms).
fn proc_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

/// Frames the daemon read on `fa` (processed or refused past the budget) and frames
/// the kernel dropped for it (an anchor without a receive budget counts no
/// `rx_over_budget`).
fn read_and_dropped(rig: &FloodRig) -> (u64, u64) {
    let io = rig.flooded_io();
    let n = |k: &str| io[k].as_u64().unwrap_or(0);
    (n("rx_frames") + n("rx_over_budget"), n("kernel_drops"))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One run: a new rig, the flood, its cost over `window`, then `pa`'s link-up (wall
/// and own figure, ms).
fn run(name: &str, bin: &Path, window: Duration, peer: bool) -> (Option<f64>, f64) {
    let (rig, flood) = if peer {
        let (rig, lldpdu) = FloodRig::start_peered("", bin);
        let flood = rig.peer_flood(&lldpdu);
        (rig, flood)
    } else {
        let rig = FloodRig::start("", bin);
        let flood = rig.flood();
        (rig, flood)
    };
    let pid = rig.daemon.pid().unwrap();
    // Let the socket's buffer fill: the daemon is behind from here on, if it can be.
    std::thread::sleep(Duration::from_secs(1));
    let (r0, d0, s0, c0, t0) = {
        let (r, d) = read_and_dropped(&rig);
        (r, d, flood.sent(), proc_ticks(pid), Instant::now())
    };
    std::thread::sleep(window);
    let (r1, d1) = read_and_dropped(&rig);
    let (s1, c1, dt) = (flood.sent(), proc_ticks(pid), t0.elapsed().as_secs_f64());
    let cpu_s = (c1 - c0) as f64 / 100.0;
    let read = r1 - r0;
    println!("{name}:");
    println!(
        "  flood: {:.0} frames/s sent; the daemon read {:.0}/s, the kernel dropped {:.0}/s ({})",
        (s1 - s0) as f64 / dt,
        read as f64 / dt,
        (d1 - d0) as f64 / dt,
        load()
    );
    println!(
        "  daemon CPU: {:.0} % of one core, {:.2} us per frame read",
        cpu_s / dt * 100.0,
        if read > 0 {
            cpu_s * 1e6 / read as f64
        } else {
            f64::NAN
        }
    );
    let took = rig.peer_converges(Duration::from_secs(10));
    let own = rig.own_ms().unwrap_or(f64::NAN);
    match took {
        Some(t) => println!(
            "  pa link-up to agreed under the flood: wall {:.1} ms, own figure {own:.2} ms ({})",
            t.as_secs_f64() * 1e3,
            load()
        ),
        None => println!("  pa not agreed within 10 s under the flood ({})", load()),
    }
    let counters = rig
        .daemon
        .call(&lossless_node::protocol::Request::Counters { port: None });
    println!(
        "  the shared packet sockets dropped {} frames; fa on a socket of its own: {}",
        counters["shared_socket"]["kernel_drops"],
        rig.flooded_io()["own_socket"]
    );
    (took.map(|t| t.as_secs_f64() * 1e3), own)
}

/// `-- storm`: a peer's start to agreed PFC on `pa` under a PFC storm, `runs` times.
fn storm(runs: usize) {
    let mut took = Vec::new();
    for _ in 0..runs {
        let (hub, leaf, dir) = (Netns::new(), Netns::new(), TempDir::new());
        let link = peer_link(&hub, &leaf);
        let conf = |name: &str, text: &str| {
            let p = dir.path().join(format!("{name}.toml"));
            std::fs::write(&p, text).unwrap();
            p
        };
        let (hub_conf, leaf_conf) = (conf("hub", "[ports.\"pa\"]\n"), conf("leaf", LEAF_CONFIG));
        let daemon = Daemon::start(
            &hub,
            &dir.path().join("hub"),
            &["--config", hub_conf.to_str().unwrap()],
        );
        link.up(&hub, &leaf);
        let mut flood = lossless_testkit::Flood::pfc(&leaf, "pb");
        let over = || {
            daemon.call(&lossless_node::protocol::Request::Counters {
                port: Some("pa".into()),
            })["ports"][0]["io"]["rx_over_budget"]
                .as_u64()
        };
        wait_for(Duration::from_secs(10), "the storm past the budget", || {
            (over()? > 10_000).then_some(())
        });
        let t0 = Instant::now();
        let _peer = Daemon::start(
            &leaf,
            &dir.path().join("leaf"),
            &["--config", leaf_conf.to_str().unwrap()],
        );
        let t = agreed_within(&daemon, t0, Duration::from_secs(10));
        let sent = flood.stop();
        match t {
            Some(t) => {
                println!(
                    "  peer start to agreed under a storm of {sent} PFC frames: {:.1} ms ({})",
                    t.as_secs_f64() * 1e3,
                    load()
                );
                took.push(t.as_secs_f64() * 1e3);
            }
            None => println!(
                "  no peer within 10 s under a storm of {sent} PFC frames ({})",
                load()
            ),
        }
    }
    let worst = took.iter().copied().fold(f64::NAN, f64::max);
    println!(
        "peer start to agreed under a PFC storm, {} of {runs} runs within 10 s: median {:.1} ms, worst {:.1} ms",
        took.len(),
        median(&mut took.clone()),
        worst
    );
}

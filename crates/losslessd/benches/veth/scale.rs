//! The `scale` section: one losslessd with many ports against a second one,
//! simultaneous link-up to all converged, then CPU and RSS at steady state;
//! with `BENCH_ANCHOR_BIN=PATH` the same with an older losslessd, and the
//! kernel alone: the same link-up with no daemon, and with 2 x N bound
//! packet sockets held open, a socket per port as losslessd had before its
//! ports shared two per namespace (the kernel walks every packet socket of
//! the namespace on each device event).

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::*;
use crate::measure::*;
use lossless_node::protocol::Request;
use lossless_sys::if_nametoindex;
use lossless_sys::netns::in_netns;
use lossless_sys::packet::PacketSocket;
use lossless_testkit::load;

pub fn proc_ticks(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the ")" of the command name: utime is the 12th, stime the 13th.
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

pub fn proc_kb(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

pub fn count_converged(d: &Daemon) -> usize {
    let Some(v) = d.try_call(&Request::Status) else {
        return 0;
    };
    v["ports"]
        .as_array()
        .map(|a| a.iter().filter(|p| p["all_syncd"] == true).count())
        .unwrap_or(0)
}

/// The scale run with this build, then (with `BENCH_ANCHOR_BIN`) with the
/// anchor, then the kernel alone.
pub fn scale(n: usize) {
    scale_with(n, None);
    if let Ok(bin) = std::env::var("BENCH_ANCHOR_BIN") {
        println!("scale: the anchor ({bin}):");
        scale_with(n, Some(Path::new(&bin)));
    }
    kernel_alone(n, false);
    kernel_alone(n, true);
}

/// `n` veth pairs, `p*` in `hub` and `q*` in `leaf`, the hub's side up.
fn pairs(n: usize, dir: &Path) -> (Netns, Netns) {
    let hub = Netns::new();
    let leaf = Netns::new();
    let mut batch = String::new();
    for i in 0..n {
        batch.push_str(&format!(
            "link add p{i} type veth peer name q{i} netns {}\n",
            leaf.name
        ));
    }
    let file = dir.join("add.batch");
    std::fs::write(&file, batch).unwrap();
    let t = Instant::now();
    hub.ip(&["-batch", file.to_str().unwrap()]);
    println!(
        "scale: created {n} veth pairs in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    (hub, leaf)
}

fn up_batch(n: usize, prefix: &str, dir: &Path) -> std::path::PathBuf {
    let up: String = (0..n)
        .map(|i| format!("link set {prefix}{i} up\n"))
        .collect();
    let file = dir.join(format!("{prefix}-up.batch"));
    std::fs::write(&file, up).unwrap();
    file
}

/// The leaf's link-up with no daemon; with `sockets`, while this process
/// holds a bound packet socket on each of the 2 x `n` interfaces (a socket
/// per port, as the daemons had before they shared them).
fn kernel_alone(n: usize, sockets: bool) {
    let dir = TempDir::new();
    let (hub, leaf) = pairs(n, dir.path());
    hub.ip(&["-batch", up_batch(n, "p", dir.path()).to_str().unwrap()]);
    let open = |ns: &Netns, prefix: &str| {
        in_netns(&ns.name, || {
            (0..n)
                .map(|i| PacketSocket::open(if_nametoindex(&format!("{prefix}{i}"))?))
                .collect::<std::io::Result<Vec<_>>>()
        })
        .unwrap()
    };
    let held = sockets.then(|| (open(&hub, "p"), open(&leaf, "q")));
    if let Some((Err(e), _) | (_, Err(e))) = &held {
        println!("scale: the kernel alone: could not open {n} packet sockets: {e}");
        return;
    }
    let t0 = Instant::now();
    leaf.ip(&["-batch", up_batch(n, "q", dir.path()).to_str().unwrap()]);
    println!(
        "scale: the kernel alone, no daemon{}: ip -batch setting the {n} links up took {:.0} ms ({})",
        if sockets {
            format!(", {} bound packet sockets held open (a socket per port)", 2 * n)
        } else {
            String::new()
        },
        t0.elapsed().as_secs_f64() * 1e3,
        load()
    );
}

/// Each port's own figure, from its link event to every feature agreed
/// (`last_convergence_ms`): how long after its own link-up a port converged.
fn print_own_figures(d: &Daemon, which: &str) {
    let mut ms: Vec<f64> = d.call(&Request::Status)["ports"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["last_convergence_ms"].as_f64())
                .collect()
        })
        .unwrap_or_default();
    if ms.is_empty() {
        return;
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    println!(
        "scale: {which}: each port from its link-up to converged, as the daemon measures it: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} ports)",
        at(0.5),
        at(0.99),
        at(1.0),
        ms.len()
    );
}

/// One losslessd with `n` ports, peers in another namespace (`bin`: an
/// older losslessd for both).
fn scale_with(n: usize, bin: Option<&Path>) {
    let dir = TempDir::new();
    let (hub, leaf) = pairs(n, dir.path());
    let hub_conf = dir.path().join("hub.toml");
    std::fs::write(
        &hub_conf,
        "[ports.\"p*\"]\npfc = { willing = false, priorities = [3, 4] }\n",
    )
    .unwrap();
    let leaf_conf = dir.path().join("leaf.toml");
    std::fs::write(&leaf_conf, "[ports.\"q*\"]\n").unwrap();
    let start = |ns: &Netns, name: &str, conf: &Path| {
        let args = ["--config", conf.to_str().unwrap(), "--log", "warn"];
        let state = dir.path().join(name);
        match bin {
            Some(bin) => Daemon::start_bin(ns, &state, bin, &args),
            None => Daemon::start(ns, &state, &args),
        }
    };
    let h = start(&hub, "hub", &hub_conf);
    let l = start(&leaf, "leaf", &leaf_conf);
    let hub_up = up_batch(n, "p", dir.path());
    let leaf_up = up_batch(n, "q", dir.path());
    hub.ip(&["-batch", hub_up.to_str().unwrap()]);
    std::thread::sleep(Duration::from_millis(500));
    let ports = h.call(&Request::Status)["ports"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(ports, n, "hub manages every port");
    let t0 = Instant::now();
    leaf.ip(&["-batch", leaf_up.to_str().unwrap()]);
    let links_up = t0.elapsed().as_secs_f64() * 1e3;
    let mut last = 0;
    let ok = poll_slow(Duration::from_secs(30), || {
        last = count_converged(&h);
        last == n && count_converged(&l) == n
    });
    match ok {
        Some(_) => println!(
            "scale: {n} ports, simultaneous link-up (ip -batch took {links_up:.0} ms) to all converged on both daemons: {:.0} ms ({:.0} ms after ip -batch returned), RSS {} KiB, {} packet sockets in the hub's namespace ({})",
            t0.elapsed().as_secs_f64() * 1e3,
            t0.elapsed().as_secs_f64() * 1e3 - links_up,
            proc_kb(h.pid().unwrap(), "VmRSS:"),
            lossless_testkit::packet_sockets(&hub),
            load()
        ),
        None => println!("scale: only {last}/{n} converged after 30 s"),
    }
    if ok.is_some() {
        print_own_figures(&h, "hub");
        print_own_figures(&l, "leaf");
    }
    // Steady state: let the fast transmissions end, then measure.
    std::thread::sleep(Duration::from_secs(6));
    let pid = h.pid().unwrap();
    let window = Duration::from_secs(env_or("BENCH_STEADY_S", 30) as u64);
    let (t1, c1) = (Instant::now(), proc_ticks(pid));
    std::thread::sleep(window);
    let (dt, dc) = (t1.elapsed().as_secs_f64(), proc_ticks(pid) - c1);
    let hz = 100.0; // USER_HZ on Linux
    println!(
        "scale: steady state over {dt:.0} s: {:.2} % of one core ({dc} ticks of 10 ms), RSS {} KiB (peak {} KiB) ({})",
        dc as f64 / hz / dt * 100.0,
        proc_kb(pid, "VmRSS:"),
        proc_kb(pid, "VmHWM:"),
        load()
    );
    let c = h.call(&Request::Counters {
        port: Some("p0".into()),
    });
    println!(
        "scale: p0 sent {} LLDPDUs, received {}",
        c["ports"][0]["lldp"]["frames_out"], c["ports"][0]["lldp"]["frames_in"]
    );
    drop(h);
    drop(l);
}

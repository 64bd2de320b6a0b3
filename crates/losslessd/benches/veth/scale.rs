//! The `scale` section: one losslessd with many ports against a second one,
//! simultaneous link-up to all converged, then CPU and RSS at steady state.

use std::time::{Duration, Instant};

use crate::common::*;
use crate::measure::*;
use lossless_node::protocol::Request;
use lossless_testkit::load;
use serde_json::Value;

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

/// One losslessd with `n` ports, peers in another namespace.
pub fn scale(n: usize) {
    let dir = TempDir::new();
    let hub = Netns::new();
    let leaf = Netns::new();
    let mut batch = String::new();
    for i in 0..n {
        batch.push_str(&format!(
            "link add p{i} type veth peer name q{i} netns {}\n",
            leaf.name
        ));
    }
    let file = dir.path().join("add.batch");
    std::fs::write(&file, batch).unwrap();
    let t = Instant::now();
    hub.ip(&["-batch", file.to_str().unwrap()]);
    println!(
        "scale: created {n} veth pairs in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let hub_conf = dir.path().join("hub.toml");
    std::fs::write(
        &hub_conf,
        "[ports.\"p*\"]\npfc = { willing = false, priorities = [3, 4] }\n",
    )
    .unwrap();
    let leaf_conf = dir.path().join("leaf.toml");
    std::fs::write(&leaf_conf, "[ports.\"q*\"]\n").unwrap();
    let h = Daemon::start(
        &hub,
        &dir.path().join("hub"),
        &["--config", hub_conf.to_str().unwrap(), "--log", "warn"],
    );
    let l = Daemon::start(
        &leaf,
        &dir.path().join("leaf"),
        &["--config", leaf_conf.to_str().unwrap(), "--log", "warn"],
    );
    let up = |prefix: &str| {
        (0..n)
            .map(|i| format!("link set {prefix}{i} up\n"))
            .collect::<String>()
    };
    let hub_up = dir.path().join("hub-up.batch");
    std::fs::write(&hub_up, up("p")).unwrap();
    let leaf_up = dir.path().join("leaf-up.batch");
    std::fs::write(&leaf_up, up("q")).unwrap();
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
            "scale: {n} ports, simultaneous link-up (ip -batch took {links_up:.0} ms) to all converged on both daemons: {:.0} ms, RSS {} KiB ({})",
            t0.elapsed().as_secs_f64() * 1e3,
            proc_kb(h.pid().unwrap(), "VmRSS:"),
            load()
        ),
        None => println!("scale: only {last}/{n} converged after 30 s"),
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
    let _: Value = Value::Null;
}

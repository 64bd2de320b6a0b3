//! What the PFC counters and the storm watchdog cost, and how fast they detect:
//!
//! * **polling**: 512 ports read every 200 ms. Per round: the node core's work (512
//!   reading requests out, 512 samples in, the watchdog on each) and the reading
//!   thread's (one `DCB_CMD_IEEE_GET` and one `ETHTOOL_GSSET_INFO` per port, measured on
//!   `lo`: the kernel's round trip, without a driver's own op), as a share of one core.
//! * **event loop lag**: the longest single input the polling puts on the event loop,
//!   and a batch of 256 (the most the runtime takes before looking at timers again): what
//!   an LLDPDU due at that moment may wait.
//! * **detection latency**: storms starting at random times, readings every 200 ms with
//!   up to 20 ms of jitter; p50/p99/max from the storm's start to its declaration,
//!   against detection + one interval.
//!
//! `cargo bench -p losslessd --bench pfc` (BENCH_PORTS, default 512; BENCH_ROUNDS,
//! default 200).
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant as WallInstant};

use lossless_dcbx::Instant;
use lossless_node::config::DaemonConfig;
use lossless_node::link::Link;
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::pfc::{PfcEvent, PfcSample};
use lossless_node::protocol::EventBody;
use lossless_node::state::PersistedState;

const CONFIG: &str = r#"
[ports."p*"]
pfc.priorities = [3]
[ports."p*".pfc_watchdog]
enabled = true
action = "alert"
"#;

fn now(t: Duration) -> Now {
    Now {
        mono: Instant::from_duration(t),
        unix: t.as_secs_f64(),
    }
}

fn node(ports: usize) -> Node {
    let config = DaemonConfig::parse(CONFIG, std::path::Path::new("bench.toml")).unwrap();
    let mut n = Node::new(
        config,
        Identity::default(),
        PersistedState::default(),
        now(Duration::ZERO),
    );
    let links = (0..ports)
        .map(|i| Link {
            ifindex: 10 + i as u32,
            name: format!("p{i}"),
            mac: Some([2, 0, 0, 0, (i >> 8) as u8, i as u8]),
            admin_up: true,
            oper_up: true,
            carrier: true,
            alias: None,
        })
        .collect();
    n.handle_links(now(Duration::ZERO), links);
    while n.poll_output().is_some() {}
    n
}

/// One polling round at `t`: the timers' requests, then every answer as an input.
/// Returns (the round's time, the longest single input, 256 inputs at most in a row).
fn round(n: &mut Node, t: Duration, counts: &mut u64) -> (Duration, Duration, Duration) {
    let start = WallInstant::now();
    n.handle_timeout(now(t));
    let mut asked = Vec::new();
    while let Some(o) = n.poll_output() {
        if let Output::ReadPfc { ifindex, .. } = o {
            asked.push(ifindex);
        }
    }
    let mut longest = Duration::ZERO;
    let mut batch = Duration::ZERO;
    let mut batch_start = WallInstant::now();
    *counts += 7;
    for (k, ifindex) in asked.iter().enumerate() {
        let s = WallInstant::now();
        let mut ind = [0u64; 8];
        ind[3] = *counts;
        n.handle_pfc_counters(now(t), *ifindex, Ok(PfcSample::dcbnl([1; 8], ind)));
        while n.poll_output().is_some() {}
        longest = longest.max(s.elapsed());
        if k % 256 == 255 {
            batch = batch.max(batch_start.elapsed());
            batch_start = WallInstant::now();
        }
    }
    batch = batch.max(batch_start.elapsed());
    (start.elapsed(), longest, batch)
}

fn syscalls(ports: usize) -> Option<Duration> {
    let mut d = lossless_sys::dcbnl::Dcbnl::open().ok()?;
    let e = lossless_sys::ethtool::EthtoolStats::open().ok()?;
    let start = WallInstant::now();
    for _ in 0..ports {
        let _ = d.get_ieee("lo");
        let _ = e.count("lo");
    }
    Some(start.elapsed())
}

/// Detection latency over `storms` storms (the rule's, through the node core).
fn latencies(storms: usize) -> Vec<f64> {
    let mut out = Vec::new();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..storms {
        let mut n = node(1);
        let mut t = Duration::ZERO;
        let start =
            Duration::from_millis(1000 + rand() % 1000) + Duration::from_micros(rand() % 1000);
        let mut count = 0u64;
        let mut last = t;
        loop {
            // Readings every 200 ms, up to 20 ms late.
            t = last + Duration::from_millis(200) + Duration::from_micros(rand() % 20_000);
            last = t;
            // A stuck peer: pause frames counting up from the storm's start.
            if t > start {
                count = (t - start).as_micros() as u64;
            }
            n.handle_timeout(now(t));
            let mut asked = Vec::new();
            while let Some(o) = n.poll_output() {
                if let Output::ReadPfc { ifindex, .. } = o {
                    asked.push(ifindex);
                }
            }
            let mut ind = [0u64; 8];
            ind[3] = count;
            let mut found = false;
            for i in asked {
                n.handle_pfc_counters(now(t), i, Ok(PfcSample::dcbnl([0; 8], ind)));
                while let Some(o) = n.poll_output() {
                    if let Output::Event(r) = o {
                        found |= matches!(r.event, EventBody::Pfc(PfcEvent::PfcStorm { .. }));
                    }
                }
            }
            if found {
                out.push((t - start).as_secs_f64() * 1e3);
                break;
            }
            assert!(t < start + Duration::from_secs(5), "no detection");
        }
    }
    out.sort_by(f64::total_cmp);
    out
}

fn main() {
    common::machine();
    let ports = common::env_or("BENCH_PORTS", 512);
    let rounds = common::env_or("BENCH_ROUNDS", 200);
    let mut n = node(ports);
    let mut counts = 0;
    let (mut total, mut longest, mut batch) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let interval = Duration::from_millis(200);
    // The first round takes the baseline readings.
    round(&mut n, interval, &mut counts);
    for r in 0..rounds {
        let (t, l, b) = round(&mut n, interval * (r as u32 + 2), &mut counts);
        total += t;
        longest = longest.max(l);
        batch = batch.max(b);
    }
    let core = total / rounds as u32;
    let sys = syscalls(ports).unwrap_or_default();
    let share = |d: Duration| d.as_secs_f64() / interval.as_secs_f64() * 100.0;
    println!(
        "polling {ports} ports every {} ms: node core {:.3} ms per round ({:.3} % of one core), \
         reading thread {:.3} ms per round on lo ({:.3} % of one core), together {:.3} % (budget 2 %)",
        interval.as_millis(),
        core.as_secs_f64() * 1e3,
        share(core),
        sys.as_secs_f64() * 1e3,
        share(sys),
        share(core + sys),
    );
    println!(
        "event loop: longest single PFC input {:.1} us, longest batch of 256 {:.3} ms \
         (what an LLDPDU due then may wait; the readings themselves run on their own thread)",
        longest.as_secs_f64() * 1e6,
        batch.as_secs_f64() * 1e3
    );
    let l = latencies(2000);
    let pct = |p: f64| l[((l.len() as f64 - 1.0) * p) as usize];
    println!(
        "detection latency over {} storms (detection 200 ms, readings every 200 ms + 0..20 ms): \
         p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (bound: detection + one interval = 400 ms)",
        l.len(),
        pct(0.5),
        pct(0.99),
        l[l.len() - 1]
    );
}

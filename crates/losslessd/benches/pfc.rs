//! What the PFC counters and the storm watchdog cost, and how fast they detect:
//!
//! * **CPU**: 512 ports read every 200 ms, in CPU time of the threads that do the work
//!   (`CLOCK_THREAD_CPUTIME_ID`, so a busy machine does not inflate it): the node core's
//!   work per round (512 reading requests out, 512 samples in, the watchdog on each)
//!   and the reading thread's (losslessd's own reader, `pfc_reader::Reading`, on `lo`:
//!   one `DCB_CMD_IEEE_GET` per port, the kernel's round trip without a driver's op;
//!   `lo` has no ethtool statistics, so they are looked at every 50th reading only),
//!   as a share of one core.
//! * **event loop lag**: a loop built as losslessd's (inputs first, up to 257 in a row,
//!   then the node's timers) with the real reading thread and 512 ports polled every
//!   200 ms, and beside it a task that wakes every millisecond and records how late it
//!   woke: what an LLDPDU due at that moment waits. The same without the polling is
//!   the machine's own lag, the baseline.
//! * **detection latency**: storms starting at random times; readings on the node's
//!   cadence, each taken late by a lateness drawn from what the loop above measured
//!   (and, as a stress case, up to 20 ms late); each judged on when it was taken.
//!   p50/p99/max from the storm's start to its declaration, against detection + one
//!   interval.
//!
//! `cargo bench -p losslessd --bench pfc` (BENCH_PORTS, default 512; BENCH_ROUNDS,
//! default 100; BENCH_LAG_SECONDS, default 10).
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
use lossless_testkit::thread_cpu_time;
use losslessd::pfc_reader::{PfcRead, PfcReader, Reading};

const CONFIG: &str = r#"
[ports."p*"]
pfc.priorities = [3]
[ports."p*".pfc_watchdog]
enabled = true
action = "alert"
"#;

const INTERVAL: Duration = Duration::from_millis(200);

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

/// A reading of a port whose peer keeps pausing priority 3 a little more each time.
fn counting(count: u64) -> PfcSample {
    let mut ind = [0u64; 8];
    ind[3] = count;
    PfcSample::dcbnl([1; 8], ind)
}

/// The ports whose readings the node asks for now.
fn asked(n: &mut Node) -> Vec<u32> {
    let mut out = Vec::new();
    while let Some(o) = n.poll_output() {
        if let Output::ReadPfc { ifindex, .. } = o {
            out.push(ifindex);
        }
    }
    out
}

/// The node core's CPU time per polling round (and wall time, for comparison).
fn core_cost(ports: usize, rounds: usize) -> (Duration, Duration) {
    let mut n = node(ports);
    let mut count = 0;
    let run = |n: &mut Node, t: Duration, count: &mut u64| {
        n.handle_timeout(now(t));
        *count += 7;
        for ifindex in asked(n) {
            n.handle_pfc_counters(now(t), ifindex, Ok(counting(*count)));
            while n.poll_output().is_some() {}
        }
    };
    // The first round takes the baseline readings, the next declares the storms.
    run(&mut n, INTERVAL, &mut count);
    run(&mut n, INTERVAL * 2, &mut count);
    let (cpu, wall) = (thread_cpu_time(), WallInstant::now());
    for r in 0..rounds {
        run(&mut n, INTERVAL * (r as u32 + 3), &mut count);
    }
    (
        (thread_cpu_time() - cpu) / rounds as u32,
        wall.elapsed() / rounds as u32,
    )
}

/// The reading thread's CPU time per round: losslessd's reader on `lo`, `ports` times.
fn reading_cost(ports: usize, rounds: usize) -> (Duration, String) {
    let mut r = Reading::default();
    let what = match r.read("lo") {
        Ok(s) => format!("lo answered ({})", s.source.name()),
        Err(e) => format!("lo answered: {e}"),
    };
    let cpu = thread_cpu_time();
    for _ in 0..rounds {
        for _ in 0..ports {
            let _ = r.read("lo");
        }
    }
    ((thread_cpu_time() - cpu) / rounds as u32, what)
}

/// Percentiles of sorted values.
fn pct(v: &[f64], p: f64) -> f64 {
    v[((v.len() as f64 - 1.0) * p) as usize]
}

/// What the loop measured, each sorted (ms).
#[derive(Default)]
struct Measured {
    /// How late the task that wakes every millisecond woke.
    lag: Vec<f64>,
    /// How long after its due time each reading was taken.
    lateness: Vec<f64>,
    /// From each port's storm start to the reading that declared it (its taken time),
    /// and to the moment the loop published the event.
    detected: Vec<f64>,
    published: Vec<f64>,
}

/// How late a task that wakes every millisecond woke, for `seconds`, on a loop that
/// polls `ports` ports (0: none) as losslessd does; how late each reading was taken
/// after its due time; how long each port's storm took to be declared.
fn lag(ports: usize, seconds: u64) -> Measured {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async move {
        let stop = WallInstant::now() + Duration::from_secs(seconds);
        let probe = tokio::task::spawn(async move {
            let mut lags = Vec::new();
            let mut due = tokio::time::Instant::now();
            while WallInstant::now() < stop {
                due += Duration::from_millis(1);
                tokio::time::sleep_until(due).await;
                lags.push((tokio::time::Instant::now() - due).as_secs_f64() * 1e3);
                due = due.max(tokio::time::Instant::now());
            }
            lags
        });
        let mut m = Measured::default();
        if ports > 0 {
            m = poll_loop(ports, stop).await;
        }
        m.lag = probe.await.unwrap();
        for v in [
            &mut m.lag,
            &mut m.lateness,
            &mut m.detected,
            &mut m.published,
        ] {
            v.sort_by(f64::total_cmp);
        }
        m
    })
}

/// losslessd's loop, for the PFC polling only: inputs first (the reading thread's
/// batches, up to 257 in a row), then the node's timers; the readings the node asks
/// for go to the real reading thread, which reads `lo` (the kernel's round trip) and
/// the loop hands the node, in place of lo's "not supported", the counters of a port
/// whose peer gets stuck pausing priority 3 at a random time (each port once, between
/// 1 s and 2 s before the end).
async fn poll_loop(ports: usize, stop: WallInstant) -> Measured {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<PfcRead>>(1024);
    let reader = PfcReader::start(move |reads| tx.blocking_send(reads).is_ok());
    let epoch = WallInstant::now();
    let mut n = node(ports);
    let span = (stop - epoch).saturating_sub(Duration::from_secs(2));
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let starts: Vec<Duration> = (0..ports)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            Duration::from_secs(1) + Duration::from_micros(seed % span.as_micros().max(1) as u64)
        })
        .collect();
    let mut m = Measured::default();
    // When each port's reading was due (the deadline the loop woke for).
    let mut due_at = vec![WallInstant::now(); ports];
    let mut tick = WallInstant::now();
    let clock = |w: WallInstant| now(w - epoch);
    while WallInstant::now() < stop {
        let deadline = n
            .poll_timeout()
            .map(|t| tokio::time::Instant::from_std(epoch + t.since_epoch()));
        tokio::select! {
            biased;
            Some(reads) = rx.recv() => {
                let mut batches = vec![reads];
                for _ in 0..256 {
                    match rx.try_recv() {
                        Ok(r) => batches.push(r),
                        Err(_) => break,
                    }
                }
                for r in batches.into_iter().flatten() {
                    let i = (r.ifindex - 10) as usize;
                    let late = r.taken.saturating_duration_since(due_at[i]);
                    m.lateness.push(late.as_secs_f64() * 1e3);
                    let count = (r.taken - epoch).saturating_sub(starts[i]).as_micros() as u64;
                    n.handle_pfc_counters(clock(r.taken), r.ifindex, Ok(counting(count)));
                }
            }
            _ = async { match deadline { Some(d) => tokio::time::sleep_until(d).await, None => std::future::pending().await } } => {
                tick = deadline.map_or_else(WallInstant::now, |d| d.into_std());
                n.handle_timeout(clock(WallInstant::now()));
            }
            _ = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
        while let Some(o) = n.poll_output() {
            match o {
                Output::ReadPfc { ifindex, .. } => {
                    due_at[(ifindex - 10) as usize] = tick;
                    reader.request(ifindex, "lo".into());
                }
                Output::Event(r)
                    if matches!(r.event, EventBody::Pfc(PfcEvent::PfcStorm { .. })) =>
                {
                    let i: usize = r.port[1..].parse().unwrap();
                    let start = starts[i].as_secs_f64();
                    m.detected.push((r.time - start) * 1e3);
                    m.published
                        .push(((WallInstant::now() - epoch).as_secs_f64() - start) * 1e3);
                }
                _ => {}
            }
        }
    }
    m
}

/// Detection latency over `storms` storms, through the node core: readings on the
/// node's cadence, each taken `late()` ms after it was due and judged on that time.
fn latencies(storms: usize, mut late: impl FnMut(u64) -> Duration) -> Vec<f64> {
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
        let start =
            Duration::from_millis(1000 + rand() % 1000) + Duration::from_micros(rand() % 1000);
        let mut t = Duration::ZERO;
        loop {
            // The node's next deadline, and the reading taken that late after it.
            let due = n.poll_timeout().unwrap().since_epoch();
            t = t.max(due + late(rand()));
            // A stuck peer: pause frames counting up from the storm's start.
            let count = if t > start {
                (t - start).as_micros() as u64
            } else {
                0
            };
            n.handle_timeout(now(t));
            let mut found = false;
            for i in asked(&mut n) {
                n.handle_pfc_counters(now(t), i, Ok(counting(count)));
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
    println!("machine: {}", common::machine());
    println!("{}", common::load());
    let ports = common::env_or("BENCH_PORTS", 512);
    let rounds = common::env_or("BENCH_ROUNDS", 100);
    let seconds = common::env_or("BENCH_LAG_SECONDS", 10) as u64;
    let share = |d: Duration| d.as_secs_f64() / INTERVAL.as_secs_f64() * 100.0;

    let (core, core_wall) = core_cost(ports, rounds);
    let (read, what) = reading_cost(ports, rounds.min(50));
    println!(
        "CPU, polling {ports} ports every {} ms: node core {:.3} ms per round ({:.3} % of one core; \
         wall {:.3} ms), reading thread {:.3} ms per round ({:.3} %; {what}), together {:.3} % \
         (budget 2 %)",
        INTERVAL.as_millis(),
        core.as_secs_f64() * 1e3,
        share(core),
        core_wall.as_secs_f64() * 1e3,
        read.as_secs_f64() * 1e3,
        share(read),
        share(core + read),
    );

    let base = lag(0, seconds);
    let polled = lag(ports, seconds);
    let row = |v: &[f64]| {
        format!(
            "p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms ({})",
            pct(v, 0.5),
            pct(v, 0.99),
            pct(v, 0.999),
            v[v.len() - 1],
            v.len()
        )
    };
    println!(
        "event loop lag, {seconds} s without polling: {}",
        row(&base.lag)
    );
    println!(
        "event loop lag, {seconds} s polling {ports} ports every {} ms: {}",
        INTERVAL.as_millis(),
        row(&polled.lag)
    );
    println!(
        "readings taken after their due time: {}",
        row(&polled.lateness)
    );
    println!(
        "detection latency on that loop, one storm per port (detection 200 ms, readings every \
         200 ms; target p99 <= detection + one interval = 400 ms; a reading taken when the \
         window completes, at least half an interval after the last: under the longer of \
         detection and 1.5 intervals = 300 ms, plus lateness):"
    );
    println!("  to the reading that proved it: {}", row(&polled.detected));
    println!(
        "  to the event published:        {}",
        row(&polled.published)
    );

    let stressed = latencies(2000, |r| Duration::from_micros(r % 20_000));
    println!(
        "detection latency in the node core alone, {} storms, readings taken up to 20 ms late \
         at random (stress): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        stressed.len(),
        pct(&stressed, 0.5),
        pct(&stressed, 0.99),
        stressed[stressed.len() - 1]
    );
    println!("{}", common::load());
}

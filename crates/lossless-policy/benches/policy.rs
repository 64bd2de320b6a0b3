//! Resolve throughput (bitset engine vs OpenSM's sequential scan) on a 1,000-rule policy with
//! 100 port groups, and parse+check of a 10,000-line policy against a 10,000-port fabric.

use criterion::{black_box, criterion_group, Criterion, Throughput};
use lossless_policy::bind::bind;
use lossless_policy::check::check;
use lossless_policy::compile::OsmQos;
use lossless_policy::fabric::topo;
use lossless_policy::matcher::{scan, Engine, Request};
use lossless_policy::partitions::Partitions;
use std::fmt::Write;
use std::time::Instant;

/// `switches` leaf switches of `per` CAs each, all leaves on one spine.
fn fabric_text(switches: usize, per: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Switch {} \"spine\"", switches.min(255));
    for l in 0..switches.min(255) {
        let _ = writeln!(s, "[{}] \"leaf{l}\"[{}]", l + 1, per + 1);
    }
    for l in 0..switches.min(255) {
        let _ = writeln!(s, "\nSwitch {} \"leaf{l}\"", per + 1);
        for h in 0..per {
            let _ = writeln!(s, "[{}] \"h{l}-{h}\"[1]", h + 1);
        }
        let _ = writeln!(s, "[{}] \"spine\"[{}]", per + 1, l + 1);
    }
    for l in 0..switches.min(255) {
        for h in 0..per {
            let _ = writeln!(s, "\nHca 1 \"h{l}-{h}\"\n[1] \"leaf{l}\"[{}]", h + 1);
        }
    }
    s
}

/// `groups` port groups of GUID ranges, then `rules` rules mixing groups, service IDs,
/// classes and P_Keys; the default level catches the rest.
fn policy_text(groups: usize, rules: usize, hosts: u64) -> String {
    let mut s = String::from("port-groups\n");
    for g in 0..groups as u64 {
        let lo = 0x10_0000 + (g * hosts * 2 / groups as u64);
        let _ = writeln!(
            s,
            "  port-group\n    name: g{g}\n    port-guid: {lo:#x}-{:#x}\n  end-port-group",
            lo + 40
        );
    }
    s.push_str(
        "end-port-groups\nqos-levels\n  qos-level\n    name: DEFAULT\n    sl: 0\n  end-qos-level\n",
    );
    for l in 1..16 {
        let _ = writeln!(
            s,
            "  qos-level\n    name: l{l}\n    sl: {l}\n  end-qos-level"
        );
    }
    s.push_str("end-qos-levels\nqos-match-rules\n");
    for r in 0..rules {
        s.push_str("  qos-match-rule\n");
        let g = r % groups;
        match r % 4 {
            0 => {
                let _ = writeln!(
                    s,
                    "    source: g{g}\n    destination: g{}",
                    (g * 7 + 3) % groups
                );
            }
            1 => {
                let _ = writeln!(
                    s,
                    "    destination: g{g}\n    service-id: {:#x}-{:#x}",
                    0x10000 + r * 16,
                    0x10000 + r * 16 + 7
                );
            }
            2 => {
                let _ = writeln!(s, "    qos-class: {}-{}", r % 200, r % 200 + 2);
            }
            _ => {
                let _ = writeln!(s, "    source: g{g}\n    pkey: {:#x}", 0x100 + r);
            }
        }
        let _ = writeln!(
            s,
            "    qos-level-name: l{}\n  end-qos-match-rule",
            1 + r % 15
        );
    }
    s.push_str("end-qos-match-rules\n");
    s
}

fn resolve(c: &mut Criterion) {
    let fabric = topo::parse("bench", &fabric_text(25, 40)).expect("fabric");
    let parts = Partitions::build(None, &fabric);
    let src = policy_text(100, 1000, 1000);
    let policy = lossless_policy::parse_policy("bench", &src).expect("policy");
    let b = bind("bench", &policy, &fabric, &parts).expect("bind");
    let engine = Engine::new(&b, &fabric);
    let ends = fabric.end_ports();
    // A fixed pseudo-random query mix.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let queries: Vec<_> = (0..4096)
        .map(|_| {
            let s = ends[(next() % ends.len() as u64) as usize];
            let d = ends[(next() % ends.len() as u64) as usize];
            let r = next();
            let q = Request {
                service_id: (r & 1 == 0).then_some(0x10000 + (r >> 8) % 16000),
                qos_class: (r & 2 == 0).then_some(((r >> 20) % 256) as u16),
                pkey: (r & 4 == 0).then_some((0x100 + (r >> 30) % 1000) as u16),
            };
            (s, d, engine.port_index(s), engine.port_index(d), q)
        })
        .collect();
    // Same answers before timing anything.
    for (s, d, _, _, q) in &queries {
        assert_eq!(engine.first_match(*s, *d, q), scan(&b, &fabric, *s, *d, q));
    }
    let mut g = c.benchmark_group("resolve_1000_rules_100_groups");
    g.throughput(Throughput::Elements(queries.len() as u64));
    g.bench_function("bitset_engine", |bch| {
        bch.iter(|| {
            for (_, _, si, di, q) in &queries {
                black_box(engine.first_match_idx(*si, *di, q));
            }
        })
    });
    g.bench_function("opensm_sequential_scan", |bch| {
        bch.iter(|| {
            for (s, d, _, _, q) in &queries {
                black_box(scan(&b, &fabric, *s, *d, q));
            }
        })
    });
    g.finish();
    // The figure for the closing note, on one core: best of 5 rounds of the whole query mix.
    let rate = |f: &dyn Fn()| {
        (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                queries.len() as f64 / t.elapsed().as_secs_f64()
            })
            .fold(0.0, f64::max)
    };
    let engine_qps = rate(&|| {
        for _ in 0..50 {
            for (_, _, si, di, q) in &queries {
                black_box(engine.first_match_idx(*si, *di, q));
            }
        }
    }) * 50.0;
    let scan_qps = rate(&|| {
        for (s, d, _, _, q) in &queries {
            black_box(scan(&b, &fabric, *s, *d, q));
        }
    });
    println!(
        "FIGURE resolve (1,000 rules, 100 groups, one core): bitset engine {:.1} M queries/s, \
         OpenSM sequential scan {:.3} M queries/s, {:.0}x; targets >= 5 M/s and >= 10x",
        engine_qps / 1e6,
        scan_qps / 1e6,
        engine_qps / scan_qps
    );
}

fn parse_check(c: &mut Criterion) {
    // 250 leaves x 40 hosts = 10,000 CA ports (+251 switch ports).
    let net = fabric_text(250, 40);
    // 800 groups (5 lines each) + 16 levels + 1,450 rules (4-5 lines): just over 10,000 lines.
    let src = policy_text(800, 1450, 10_000);
    let lines = src.lines().count();
    assert!(lines >= 10_000, "the policy has only {lines} lines");
    let run = || {
        let fabric = topo::parse("bench", &net).expect("fabric");
        let parts = Partitions::build(None, &fabric);
        let policy = lossless_policy::parse_policy("bench", &src).expect("policy");
        check(
            "bench",
            &policy,
            Some((&fabric, &parts, &OsmQos::default())),
        )
        .len()
    };
    let mut g = c.benchmark_group("parse_check");
    g.sample_size(10);
    g.bench_function(format!("{lines}_line_policy_10000_port_fabric"), |bch| {
        bch.iter(|| black_box(run()))
    });
    g.finish();
    // The figure for the closing note: median of 15 runs, and where the time goes.
    let mut phases: Vec<[f64; 5]> = (0..15)
        .map(|_| {
            let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
            let t0 = Instant::now();
            let fabric = topo::parse("bench", &net).expect("fabric");
            let a = ms(t0);
            let t = Instant::now();
            let parts = Partitions::build(None, &fabric);
            let b = ms(t);
            let t = Instant::now();
            let policy = lossless_policy::parse_policy("bench", &src).expect("policy");
            let p = ms(t);
            let t = Instant::now();
            black_box(check(
                "bench",
                &policy,
                Some((&fabric, &parts, &OsmQos::default())),
            ));
            [a, b, p, ms(t), ms(t0)]
        })
        .collect();
    phases.sort_by(|x, y| x[4].total_cmp(&y[4]));
    let m = phases[phases.len() / 2];
    let fabric = topo::parse("bench", &net).expect("fabric");
    println!(
        "FIGURE parse+check: {lines}-line policy, {} end ports: median {:.1} ms of 15 runs \
         (fabric parse {:.1}, partitions {:.1}, policy parse {:.1}, check {:.1}); target <= 200 ms",
        fabric.end_ports().len(),
        m[4],
        m[0],
        m[1],
        m[2],
        m[3]
    );
}

criterion_group!(benches, resolve, parse_check);

fn main() {
    println!("machine: {}", lossless_testkit::machine());
    benches();
    Criterion::default().configure_from_args().final_summary();
}

//! Relay core throughput on one core, batch API, for each tunnel: egress
//! (check + encapsulate), ingress (decapsulate + check + SMAC rewrite), and
//! egress with the storm ceiling on. Target: >= 1 M PFC frames/s per core
//! with the ceiling off. Prints the machine first, and one FIGURE line per
//! path (best of 7 timed runs over 1,000 batches of 256 frames).

use std::hint::black_box;
use std::time::{Duration, Instant as Clock};

use criterion::{criterion_group, Criterion, Throughput};
use lossless_relay::example::{pe, Kind, DC2_GW};
use lossless_relay::{Instant, Port, Relay, RelayConfig, StormConfig, TxBatch};
use lossless_wire::{emit_mac_control_frame, MacAddr, MacControl};

const BATCH: usize = 256;

/// The example pair's DC2 gateway sends the PFC (egress at PE2, ingress at PE1).
const GW: MacAddr = DC2_GW;

/// The example pair, by the tunnel's name in the FIGURE lines; `storm`: a ceiling of
/// 1,000 frames/s per priority.
fn config(kind: &str, me: u8, storm: bool) -> RelayConfig {
    let kind = match kind {
        "srv6" => Kind::Srv6,
        "vxlan6" => Kind::Vxlan6,
        "vxlan4" => Kind::Vxlan4,
        _ => Kind::Mpls,
    };
    let mut c = pe(me, kind);
    c.storm = StormConfig {
        max_per_second: storm.then_some(1_000),
        burst: None,
        episode_gap: "100ms".into(),
        ..StormConfig::default()
    };
    c
}

/// A PFC storm: every priority paused and resumed in turn.
fn frames() -> Vec<Vec<u8>> {
    (0..BATCH)
        .map(|i| {
            let mut quanta = [0u16; 8];
            quanta[i % 8] = if i % 16 < 8 { 0xffff } else { 0 };
            let mut out = Vec::new();
            emit_mac_control_frame(
                GW,
                MacAddr::MAC_CONTROL,
                None,
                &MacControl::Pfc {
                    class_enable: 1 << (i % 8),
                    quanta,
                },
                &mut out,
            );
            out
        })
        .collect()
}

/// What PE2 sends PE1 for `frames`.
fn wan_frames(kind: &str, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut pe2 = Relay::new(config(kind, 2, false), Instant::ZERO).expect("config");
    let mut out = TxBatch::with_capacity(BATCH, 256);
    pe2.process(
        Instant::ZERO,
        Port::Dc,
        frames.iter().map(Vec::as_slice),
        &mut out,
    );
    out.iter().map(|t| t.frame.to_vec()).collect()
}

/// Frames per second through `relay` on `port`, best of 7 runs of 1,000
/// batches; the clock of the relay advances 1 ms per batch.
fn rate(relay: &mut Relay, port: Port, input: &[Vec<u8>]) -> (f64, usize) {
    let mut out = TxBatch::with_capacity(BATCH * 2, 256);
    let mut now = Instant::ZERO;
    let mut best: f64 = 0.0;
    let mut sent = 0;
    for _ in 0..7 {
        let start = Clock::now();
        sent = 0;
        for _ in 0..1000 {
            now = now + Duration::from_millis(1);
            out.clear();
            sent += relay.process(now, port, input.iter().map(Vec::as_slice), &mut out);
            black_box(&out);
        }
        let fps = (1000 * input.len()) as f64 / start.elapsed().as_secs_f64();
        best = best.max(fps);
    }
    (best, sent)
}

fn figures() {
    let input = frames();
    for kind in ["srv6", "vxlan6", "vxlan4", "sr-mpls"] {
        let mut egress = Relay::new(config(kind, 2, false), Instant::ZERO).expect("config");
        let (e, e_sent) = rate(&mut egress, Port::Dc, &input);
        let wan = wan_frames(kind, &input);
        let mut ingress = Relay::new(config(kind, 1, false), Instant::ZERO).expect("config");
        let (i, i_sent) = rate(&mut ingress, Port::Wan, &wan);
        let mut storm = Relay::new(config(kind, 2, true), Instant::ZERO).expect("config");
        let (s, _) = rate(&mut storm, Port::Dc, &input);
        assert_eq!(e_sent, 1000 * BATCH, "egress relays every frame");
        assert_eq!(i_sent, 1000 * BATCH, "ingress delivers every frame");
        let c = storm.egress_counters();
        let st = storm.status().storm.expect("ceiling on");
        let instances: u64 = st.priorities.iter().map(|p| p.counters.relayed).sum();
        println!(
            "FIGURE relay {kind} (one core, batches of {BATCH}): egress {:.2} M frames/s, \
             ingress {:.2} M frames/s, egress under a 1000/s-per-priority ceiling {:.2} M frames/s \
             (of {} offered in 7 simulated s, {} frames crossed carrying {} priority instances); \
             target >= 1 M/s",
            e / 1e6,
            i / 1e6,
            s / 1e6,
            c.received,
            c.relayed + c.flushed,
            instances,
        );
    }
}

fn bench(c: &mut Criterion) {
    let input = frames();
    let mut g = c.benchmark_group("relay");
    g.throughput(Throughput::Elements(BATCH as u64));
    for kind in ["srv6", "vxlan6", "sr-mpls"] {
        let mut out = TxBatch::with_capacity(BATCH * 2, 256);
        let mut egress = Relay::new(config(kind, 2, false), Instant::ZERO).expect("config");
        g.bench_function(format!("egress_{kind}_batch_{BATCH}"), |b| {
            b.iter(|| {
                out.clear();
                egress.process(
                    Instant::ZERO,
                    Port::Dc,
                    input.iter().map(Vec::as_slice),
                    &mut out,
                )
            })
        });
        let wan = wan_frames(kind, &input);
        let mut ingress = Relay::new(config(kind, 1, false), Instant::ZERO).expect("config");
        g.bench_function(format!("ingress_{kind}_batch_{BATCH}"), |b| {
            b.iter(|| {
                out.clear();
                ingress.process(
                    Instant::ZERO,
                    Port::Wan,
                    wan.iter().map(Vec::as_slice),
                    &mut out,
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    println!("machine: {}", lossless_testkit::machine());
    figures();
    benches();
    Criterion::default().configure_from_args().final_summary();
}

//! The WAN delay measured by the PEs inside the tunnel, on a simulated clock:
//! PE2 and PE1 exchange the headroom code's T1..T4 measurement frames in their
//! tunnel across a WAN of known delay, and the gateway's reserve follows.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use lossless_relay::config::BufferConfig;
use lossless_relay::{Instant, MeasureConfig, Port, Relay, Verdict};
use lossless_wire::tunnel::{ParseOptions, TunnelFrame};

fn measuring(mut cfg: lossless_relay::RelayConfig) -> Relay {
    cfg.measure = Some(MeasureConfig::default());
    cfg.buffer = Some(BufferConfig {
        wan_delay: "measured".into(),
        rx_rate: "100G".into(),
        tx_rate: None,
        reserved: Some("30MB".into()),
    });
    relay(cfg)
}

/// Runs PE2 and PE1 with `one_way` between them (and `a_to_b_extra` more
/// from PE2 to PE1) until `until`; what reached each DC side is returned.
fn run(pes: &mut [Relay; 2], one_way: Duration, until: Instant) -> Vec<(usize, Vec<u8>)> {
    // In flight: (arrival, sequence) -> (to PE index, frame).
    let mut wire: BTreeMap<(Instant, u64), (usize, Vec<u8>)> = BTreeMap::new();
    let mut seq = 0u64;
    let mut to_dc = Vec::new();
    let mut now = t(0);
    loop {
        for (i, pe) in pes.iter_mut().enumerate() {
            pe.handle_timeout(now);
            for (port, _, _, f) in drain(pe) {
                match port {
                    Port::Wan => {
                        seq += 1;
                        wire.insert((now + one_way, seq), (1 - i, f));
                    }
                    Port::Dc => to_dc.push((i, f)),
                }
            }
        }
        let timer = pes.iter().filter_map(Relay::poll_timeout).min();
        let arrival = wire.keys().next().map(|k| k.0);
        let next = match (timer, arrival) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(n) => n,
                None => return to_dc,
            },
        };
        if next > until {
            return to_dc;
        }
        now = next;
        while let Some(entry) = wire.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (to, f) = entry.remove();
            let v = pes[to].handle_frame(now, Port::Wan, &f);
            assert_eq!(v, Verdict::Measured, "only measurement frames cross");
        }
    }
}

#[test]
fn the_pes_measure_the_wan_and_the_reserve_follows() {
    for kind in KINDS {
        let mut pes = [measuring(pe2(kind)), measuring(pe1(kind))];
        // Before a round completes: no delay, so no condition yet.
        let s = pes[0].status();
        assert_eq!(s.wan_delay.expect("measuring").round_trip_ns, None);
        assert_eq!(
            s.gateway_buffer, None,
            "{kind:?}: nothing to compute from yet"
        );

        let to_dc = run(&mut pes, Duration::from_micros(2_500), t(5_000));
        assert!(
            to_dc.is_empty(),
            "{kind:?}: a measurement frame reached a DC"
        );
        for (i, pe) in pes.iter().enumerate() {
            let s = pe.status();
            let d = s.wan_delay.expect("measuring");
            // The simulated WAN adds exactly 2.5 ms each way; the relay's
            // timestamps are the clock at hand-in and queueing: exact here.
            assert_eq!(d.round_trip_ns, Some(5_000_000), "{kind:?} PE{}", 2 - i);
            assert_eq!(d.one_way_ns, Some(2_500_000));
            assert_eq!((d.valid, d.sent), (16, 16));
            assert!(d.rounds_completed >= 1);
            assert_eq!(s.egress.measurement, d.frames_sent);
            assert_eq!(s.ingress.measurement, d.frames_received);
            assert_eq!(
                s.ingress.received,
                s.ingress.delivered + s.ingress.dropped.total() + s.ingress.measurement
            );
            // The draft's condition on the measured one way, the safe bound
            // on the measured round trip.
            let b = s.gateway_buffer.expect("computed from the measurement");
            assert_eq!(b.delay_source, "measured");
            assert_eq!(b.wan_delay, "2.5ms");
            assert_eq!(b.round_trip, "5ms");
            assert_eq!(b.product_bits, 250_000_000);
            assert_eq!(b.minimum_bytes, 31_250_001);
            assert_eq!(b.safe_bits, 500_000_000);
            assert_eq!(b.safe_minimum_bytes, 62_500_001);
            assert_eq!((b.holds, b.safe_holds), (Some(false), Some(false)));
        }
        // The frames in the tunnel are the measurement frames, marked like PFC.
        let mut pe = measuring(pe2(kind));
        assert_eq!(pe.poll_timeout(), Some(t(0)), "a round starts at once");
        pe.handle_timeout(t(0));
        let out = drain(&mut pe);
        assert_eq!(out.len(), 1, "the first request");
        let opts = lossless_relay::tunnel::Decapsulator::new(&pe1(kind).tunnel, &pe1(kind).wan);
        for (port, prio, _, f) in out {
            assert_eq!((port, prio), (Port::Wan, 7));
            let inner = opts.decapsulate(&f).expect("our tunnel, for PE1");
            assert_eq!(&inner[12..14], &[0x88, 0xb5], "{kind:?}");
            assert_eq!(&inner[..6], &[0x01, 0x80, 0xc2, 0, 0, 0x0e]);
            assert!(TunnelFrame::parse(&f, &ParseOptions::default()).is_ok());
        }
    }
}

#[test]
fn without_measurement_a_measurement_frame_is_not_pfc_and_is_dropped() {
    let mut pe2m = measuring(pe2(Kind::Srv6));
    pe2m.handle_timeout(t(0));
    let f = drain(&mut pe2m).remove(0).3;
    let mut pe1 = relay(pe1(Kind::Srv6));
    assert_eq!(
        pe1.handle_frame(t(0), Port::Wan, &f),
        Verdict::Dropped(lossless_relay::DropReason::NotMacControl)
    );
    assert!(drain(&mut pe1).is_empty());
}

#[test]
fn measured_needs_a_measurement_and_a_gateway_cannot_measure() {
    let mut cfg = pe2(Kind::Srv6);
    cfg.buffer = Some(BufferConfig {
        wan_delay: "measured".into(),
        rx_rate: "100G".into(),
        tx_rate: None,
        reserved: None,
    });
    let e = Relay::new(cfg.clone(), t(0)).expect_err("no [relay.measure]");
    assert_eq!(
        e.to_string(),
        "buffer.wan_delay = \"measured\": needs [relay.measure], which measures it"
    );
    cfg.measure = Some(MeasureConfig {
        period: "10ms".into(),
        ..MeasureConfig::default()
    });
    let e = Relay::new(cfg.clone(), t(0)).expect_err("period too short");
    assert!(e.to_string().starts_with("measure.period"), "{e}");
    let g = lossless_relay::GatewayConfig {
        interface: None,
        pe_port_mac: PE1_DC,
        pe_system_mac: None,
        buffer: cfg.buffer.clone(),
        datapath: lossless_relay::Datapath::default(),
    };
    let e = lossless_relay::GatewayCheck::new(&g).expect_err("a gateway does not measure");
    assert!(
        e.to_string().contains("a gateway does not measure the WAN"),
        "{e}"
    );
}

/// Runs PE2 and PE1 with `one_way` between them, every frame leaving `late`
/// after it was queued (a relay thread waiting for a CPU between queueing a
/// frame and its send). With `kernel`, the runtime asks for the transmit
/// stamps of the frames marked for it and hands each back at the moment the
/// frame left, as the kernel's error queue does.
fn run_late(pes: &mut [Relay; 2], one_way: Duration, late: Duration, kernel: bool, until: Instant) {
    for pe in pes.iter_mut() {
        pe.set_kernel_tx_stamps(kernel);
    }
    // (when, sequence) -> what happens then.
    enum Event {
        Arrive { to: usize, frame: Vec<u8> },
        Stamp { at: usize, frame: Vec<u8> },
    }
    let mut events: BTreeMap<(Instant, u64), Event> = BTreeMap::new();
    let mut seq = 0u64;
    let mut now = t(0);
    let mut out = lossless_relay::TxBatch::new();
    let mut send = |events: &mut BTreeMap<(Instant, u64), Event>,
                    i: usize,
                    now: Instant,
                    frame: &[u8],
                    stamp: bool| {
        let left = now + late;
        seq += 1;
        events.insert(
            (left + one_way, seq),
            Event::Arrive {
                to: 1 - i,
                frame: frame.to_vec(),
            },
        );
        if stamp {
            assert!(kernel, "a stamp asked for only when the runtime gives them");
            seq += 1;
            events.insert(
                (left, seq),
                Event::Stamp {
                    at: i,
                    frame: frame.to_vec(),
                },
            );
        }
    };
    loop {
        for (i, pe) in pes.iter_mut().enumerate() {
            pe.handle_timeout(now);
            while let Some(tx) = pe.poll_transmit() {
                assert_eq!(tx.port, Port::Wan);
                send(&mut events, i, now, tx.frame, tx.stamp);
            }
        }
        let timer = pes.iter().filter_map(Relay::poll_timeout).min();
        let event = events.keys().next().map(|k| k.0);
        let next = match (timer, event) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(n) => n,
                None => return,
            },
        };
        if next > until {
            return;
        }
        now = next;
        while let Some(entry) = events.first_entry() {
            if entry.key().0 > now {
                break;
            }
            match entry.remove() {
                Event::Arrive { to, frame } => {
                    let v = pes[to].handle_frame(now, Port::Wan, &frame);
                    assert_eq!(v, Verdict::Measured);
                }
                Event::Stamp { at, frame } => {
                    out.clear();
                    assert!(pes[at].handle_tx_stamp(now, &frame, now, &mut out));
                    for tx in out.iter() {
                        send(&mut events, at, now, tx.frame, tx.stamp);
                    }
                }
            }
        }
    }
}

/// A relay thread that queues a frame and sends it 3 ms later lengthens the
/// round trip by twice that (the request's and the answer's wait) when
/// departures are the time a frame was queued; timed by the kernel's
/// transmit stamps, the round trip is the WAN's alone.
#[test]
fn kernel_transmit_stamps_keep_a_late_sender_out_of_the_round_trip() {
    let (one_way, late) = (Duration::from_micros(2_000), Duration::from_micros(3_000));
    for kind in KINDS {
        for (kernel, want) in [(false, 10_000_000), (true, 4_000_000)] {
            let mut pes = [measuring(pe2(kind)), measuring(pe1(kind))];
            run_late(&mut pes, one_way, late, kernel, t(5_000));
            for (i, pe) in pes.iter().enumerate() {
                let d = pe.status().wan_delay.expect("measuring");
                assert_eq!(
                    d.round_trip_ns,
                    Some(want),
                    "{kind:?} PE{} kernel stamps {kernel}: {d:?}",
                    2 - i
                );
                assert_eq!((d.valid, d.sent), (16, 16));
                let departure = if kernel {
                    lossless_relay::Departure::Kernel
                } else {
                    lossless_relay::Departure::Queued
                };
                assert_eq!(d.departure, departure);
                // Each request, answer and follow-up sent is stamped.
                assert_eq!(d.tx_stamps, if kernel { d.frames_sent } else { 0 });
            }
        }
    }
}

/// A stamp of a frame that is not a measurement frame of ours is refused and
/// changes nothing.
#[test]
fn a_stamp_of_another_frame_is_refused() {
    let mut pe = measuring(pe2(Kind::Srv6));
    pe.set_kernel_tx_stamps(true);
    let mut out = lossless_relay::TxBatch::new();
    assert!(!pe.handle_tx_stamp(t(0), &[0u8; 20], t(0), &mut out));
    assert!(!pe.handle_tx_stamp(t(0), &[0u8; 200], t(0), &mut out));
    assert!(out.is_empty());
    assert_eq!(pe.status().wan_delay.expect("measuring").tx_stamps, 0);
}

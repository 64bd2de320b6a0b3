//! Property tests of the relay's rules over random inputs.

mod common;

use std::time::Duration;

use common::*;
use lossless_relay::{Instant, PauseClock, PauseTimeline, Port, Relay, StormConfig, Verdict};
use lossless_wire::tunnel::{ParseOptions, TunnelFrame};
use lossless_wire::MacAddr;
use proptest::collection::vec;
use proptest::prelude::*;

fn kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(KINDS.to_vec())
}

/// A legal PFC frame from DC2 GW's port or system MAC, tagged or not.
fn legal_pfc() -> impl Strategy<Value = Vec<u8>> {
    (any::<bool>(), any::<bool>(), 1u16..=0xff, any::<[u16; 8]>()).prop_map(
        |(system, tagged, vector, quanta)| {
            let src = if system { DC2_GW_SYSTEM } else { DC2_GW };
            if tagged {
                pfc_tagged(src, vector, quanta)
            } else {
                pfc_from(src, vector, quanta)
            }
        },
    )
}

/// Sends every legal frame through PE2 and PE1 with no ceiling: each is
/// delivered to DC1 GW with PE1's source MAC and otherwise byte for byte.
fn end_to_end(kind: Kind, frames: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let mut pe2 = relay(pe2(kind));
    let mut pe1 = relay(pe1(kind));
    for (i, f) in frames.iter().enumerate() {
        let now = t(i as u64);
        prop_assert_eq!(
            pe2.handle_frame(now, Port::Dc, f),
            Verdict::Relayed { held: 0 }
        );
        let wan = drain(&mut pe2);
        prop_assert_eq!(wan.len(), 1);
        prop_assert_eq!(
            pe1.handle_frame(now, Port::Wan, &wan[0].3),
            Verdict::Delivered
        );
        let out = drain(&mut pe1);
        prop_assert_eq!(out.len(), 1);
        let d = &out[0].3;
        prop_assert_eq!(&d[6..12], &PE1_DC.0[..]);
        prop_assert_eq!(&d[..6], &f[..6]);
        prop_assert_eq!(&d[12..], &f[12..]);
    }
    Ok(())
}

/// Any bytes on either port: no panic, and every frame is accounted for
/// exactly once.
fn accounted(kind: Kind, inputs: &[(bool, Vec<u8>)]) -> Result<(), TestCaseError> {
    let mut cfg = pe1(kind);
    cfg.storm.max_per_second = Some(50);
    let mut pe = Relay::new(cfg, t(0)).expect("config");
    for (i, (wan, f)) in inputs.iter().enumerate() {
        let port = if *wan { Port::Wan } else { Port::Dc };
        let v = pe.handle_frame(t(i as u64), port, f);
        if let Verdict::Delivered = v {
            prop_assert!(*wan);
        }
        drain(&mut pe);
    }
    let e = pe.egress_counters();
    prop_assert_eq!(e.received, e.relayed + e.suppressed + e.dropped.total());
    let g = pe.ingress_counters();
    prop_assert_eq!(g.received, g.delivered + g.dropped.total());
    prop_assert_eq!(e.received + g.received, inputs.len() as u64);
    Ok(())
}

/// A frame concerning one priority, `at` a time: (time, priority, quanta).
type Event = (Instant, usize, u16);

/// Whether each event of one priority is inside an episode, by the
/// definition in `storm.rs`: an episode opens with a pause while none is
/// open and lasts while frames come less than `gap` apart.
fn in_episode(events: &[Event], gap: Duration) -> Vec<bool> {
    let mut open = false;
    let mut last: Option<Instant> = None;
    events
        .iter()
        .map(|&(at, _, q)| {
            if open && last.is_some_and(|l| at - l >= gap) {
                open = false;
            }
            if !open && q > 0 {
                open = true;
            }
            last = Some(at);
            open
        })
        .collect()
}

#[derive(Debug, Clone)]
struct StormCase {
    rate: u32,
    burst: u32,
    gap_ms: u64,
    /// The far gateway's link, Gb/s.
    speed_gbps: u64,
    refresh_before_us: u64,
    /// (gap before it in microseconds, vector, quanta), with quanta 0 half the time.
    frames: Vec<(u64, u8, [u16; 8])>,
}

fn storm_case() -> impl Strategy<Value = StormCase> {
    let frame = (
        0u64..30_000,
        1u8..=0xff,
        vec(prop_oneof![Just(0u16), 1u16..=0xffff], 8),
    )
        .prop_map(|(dt, v, q)| {
            let mut quanta = [0u16; 8];
            quanta.copy_from_slice(&q);
            (dt, v, quanta)
        });
    (
        (1u32..200, 1u32..8, 1u64..150),
        prop_oneof![Just(1u64), Just(10), Just(100), Just(400)],
        0u64..200,
        vec(frame, 1..250),
    )
        .prop_map(
            |((rate, burst, gap_ms), speed_gbps, refresh_before_us, frames)| StormCase {
                rate,
                burst,
                gap_ms,
                speed_gbps,
                refresh_before_us,
                frames,
            },
        )
}

fn inner_of(bytes: &[u8]) -> (u8, [u16; 8]) {
    let tf = TunnelFrame::parse(bytes, &ParseOptions::default()).expect("our tunnel frame");
    pfc_content(tf.inner)
}

fn storm_guarantees(case: &StormCase) -> Result<(), TestCaseError> {
    let gap = Duration::from_millis(case.gap_ms);
    let mut cfg = pe2(Kind::Srv6);
    cfg.storm = StormConfig {
        max_per_second: Some(case.rate),
        burst: Some(case.burst),
        episode_gap: format!("{}ms", case.gap_ms),
        link_speed: format!("{}G", case.speed_gbps),
        refresh_before: format!("{}us", case.refresh_before_us),
    };
    let clock = PauseClock::new(
        case.speed_gbps * 1_000_000_000,
        Duration::from_micros(case.refresh_before_us),
    );
    let mut near: [PauseTimeline; 8] = std::array::from_fn(|p| PauseTimeline::new(clock, p));
    let mut far_line: [PauseTimeline; 8] = std::array::from_fn(|p| PauseTimeline::new(clock, p));
    let mut pe = Relay::new(cfg, t(0)).expect("config");
    let mut now = t(0);
    let mut events: [Vec<Event>; 8] = Default::default();
    // Per priority, the value the far side holds last (None: never told)
    // and when it was sent.
    let mut far: [Option<(u16, Instant)>; 8] = [None; 8];
    let note = |bytes: &[u8],
                at: Instant,
                far: &mut [Option<(u16, Instant)>; 8],
                line: &mut [PauseTimeline; 8]| {
        let (v, q) = inner_of(bytes);
        for l in line.iter_mut() {
            l.frame(at, v, &q);
        }
        for p in 0..8 {
            if v & (1 << p) != 0 {
                far[p] = Some((q[p], at));
            }
        }
        (v, q)
    };
    for &(dt, vector, quanta) in &case.frames {
        now = now + Duration::from_micros(dt);
        while let Some(at) = pe.poll_timeout() {
            if at > now {
                break;
            }
            pe.handle_timeout(at);
            for (_, _, _, b) in drain(&mut pe) {
                note(&b, at, &mut far, &mut far_line);
            }
        }
        // Where the far side's pause stands before this frame: a pause
        // relayed at once must find it resumed or within its margin.
        let lapsing: [bool; 8] = std::array::from_fn(|p| match far[p] {
            Some((q, at)) if q > 0 => {
                let d = clock.duration(q);
                at + (d - clock.margin(d)) <= now
            }
            _ => true,
        });
        // Which priorities open an episode with this frame?
        let mut opens = 0u8;
        for p in 0..8 {
            if vector & (1 << p) != 0 {
                events[p].push((now, p, quanta[p]));
                let flags = in_episode(&events[p], gap);
                let n = flags.len();
                let was_open = n >= 2 && flags[n - 2] && now - events[p][n - 2].0 < gap;
                if quanta[p] > 0 && !was_open {
                    opens |= 1 << p;
                }
            }
        }
        for l in near.iter_mut() {
            l.frame(now, vector, &quanta);
        }
        let frame = pfc_from(DC2_GW, vector.into(), quanta);
        let v = pe.handle_frame(now, Port::Dc, &frame);
        let out = drain(&mut pe);
        let mut relayed_now = 0u8;
        for (_, _, _, b) in &out {
            let (vv, q) = note(b, now, &mut far, &mut far_line);
            relayed_now = vv;
            // Relayed values are the frame's own.
            for p in 0..8 {
                if vv & (1 << p) != 0 {
                    prop_assert_eq!(q[p], quanta[p]);
                }
            }
        }
        // Rule 1: every first pause crosses with its frame.
        prop_assert_eq!(relayed_now & opens, opens, "verdict {:?}", v);
        // Rule 2: no refresh crosses at once.
        for p in 0..8 {
            let bit = 1u8 << p;
            if relayed_now & bit != 0 && quanta[p] > 0 && opens & bit == 0 {
                prop_assert!(lapsing[p], "priority {}: a refresh crossed at {:?}", p, now);
            }
        }
    }
    // Let every timer run: the ceiling has nothing left to send.
    let end = now + gap + Duration::from_secs(2);
    while let Some(at) = pe.poll_timeout() {
        prop_assert!(at <= end);
        pe.handle_timeout(at);
        for (_, _, _, b) in drain(&mut pe) {
            note(&b, at, &mut far, &mut far_line);
        }
    }
    let status = pe.status().storm.expect("ceiling on");
    let span = (now - t(0)).as_secs_f64() + gap.as_secs_f64() + 2.0;
    for p in 0..8 {
        let ev = &events[p];
        let flags = in_episode(ev, gap);
        let c = status.priorities[p].counters;
        // The far side is paused whenever the near side asks.
        prop_assert_eq!(
            far_line[p].first_uncovered(&near[p]),
            None,
            "priority {}: the far side lapsed",
            p
        );
        // Rule 4: an episode's final resume reaches the far side, at the
        // latest when the episode ends.
        if let (Some(&(last, _, 0)), Some(true)) = (ev.last(), flags.last()) {
            let (told, at) = far[p].expect("told something");
            prop_assert_eq!(told, 0, "priority {}", p);
            prop_assert!(
                at <= last + gap,
                "priority {}: {:?} > {:?} + {:?}",
                p,
                at,
                last,
                gap
            );
        }
        // Episodes counted as defined.
        let opened = flags
            .iter()
            .enumerate()
            .filter(|&(i, &f)| f && (i == 0 || !flags[i - 1] || ev[i].0 - ev[i - 1].0 >= gap))
            .count() as u64;
        prop_assert_eq!(c.episodes, opened, "priority {}", p);
        // Every instance relayed at once or held; held ones may go later.
        prop_assert_eq!(c.relayed - c.flushed + c.suppressed, ev.len() as u64);
        // Over the whole run: resumes relayed with a token within the
        // bucket.
        let paid = c.relayed - c.bypassed;
        let bound = f64::from(case.burst) + f64::from(case.rate) * span;
        prop_assert!(
            (paid as f64) <= bound,
            "priority {}: {} > {}",
            p,
            paid,
            bound
        );
        prop_assert_eq!(status.priorities[p].pending, None);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn legal_frames_cross_intact_with_the_smac_rewritten(k in kind(), frames in vec(legal_pfc(), 1..20)) {
        end_to_end(k, &frames)?;
    }

    #[test]
    fn any_input_is_accounted_for_once(
        k in kind(),
        inputs in vec((any::<bool>(), prop_oneof![
            vec(any::<u8>(), 0..130),
            legal_pfc(),
            legal_pfc().prop_map(|mut f| { let i = f.len() / 2; f[i] ^= 0x10; f }),
        ]), 1..60),
    ) {
        accounted(k, &inputs)?;
    }

    /// A corrupted byte anywhere in a tunnel frame for PE1: never a panic;
    /// delivered only if the inner frame is still legal PFC, and then with
    /// PE1's source MAC.
    #[test]
    fn corrupted_tunnel_frames_are_refused_or_delivered_legal(
        k in kind(),
        f in legal_pfc(),
        at in any::<prop::sample::Index>(),
        b in any::<u8>(),
    ) {
        let mut pe2 = relay(pe2(k));
        pe2.handle_frame(t(0), Port::Dc, &f);
        let mut bytes = drain(&mut pe2).remove(0).3;
        let i = at.index(bytes.len());
        bytes[i] = b;
        let mut pe1 = relay(pe1(k));
        if pe1.handle_frame(t(0), Port::Wan, &bytes) == Verdict::Delivered {
            let out = drain(&mut pe1);
            let d = &out[0].3;
            prop_assert!(lossless_relay::check_pfc(d).is_ok());
            prop_assert_eq!(MacAddr(d[6..12].try_into().expect("6 bytes")), PE1_DC);
        }
    }

    #[test]
    fn storm_ceiling_guarantees(case in storm_case()) {
        storm_guarantees(&case)?;
    }
}

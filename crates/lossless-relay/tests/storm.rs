//! The storm ceiling, on a simulated clock: what crosses the WAN when a DC
//! gateway floods PFC, and when.

mod common;

use common::*;
use lossless_relay::{Instant, Port, Relay, StormConfig, Verdict};
use lossless_wire::tunnel::{ParseOptions, TunnelFrame};

fn storm_pe(rate: u32, burst: u32, gap: &str) -> Relay {
    let mut cfg = pe2(Kind::Srv6);
    cfg.storm = StormConfig {
        max_per_second: Some(rate),
        burst: Some(burst),
        episode_gap: gap.to_string(),
    };
    relay(cfg)
}

/// (vector, times) of every frame `pe` sent to the WAN since the last call.
fn sent(pe: &mut Relay) -> Vec<(u8, [u16; 8])> {
    drain(pe)
        .into_iter()
        .map(|(port, _, _, bytes)| {
            assert_eq!(port, Port::Wan);
            let tf = TunnelFrame::parse(&bytes, &ParseOptions::default()).expect("tunnel");
            pfc_content(tf.inner)
        })
        .collect()
}

/// Runs the timers the way a daemon would up to `now`.
fn advance(pe: &mut Relay, now: Instant) {
    while let Some(at) = pe.poll_timeout() {
        if at > now {
            break;
        }
        pe.handle_timeout(at);
    }
}

#[test]
fn without_a_ceiling_every_legal_frame_crosses() {
    let mut pe = relay(pe2(Kind::Srv6));
    for i in 0..10_000u64 {
        let v = pe.handle_frame(t_us(i * 10), Port::Dc, &pfc_one(3, 0xffff));
        assert_eq!(v, Verdict::Relayed { held: 0 });
    }
    assert_eq!(sent(&mut pe).len(), 10_000);
    assert_eq!(pe.poll_timeout(), None);
    assert!(pe.status().storm.is_none());
}

/// 10 frames/s with a burst of 10, a pause every millisecond for ~1 s, then
/// a resume: the first pause and the burst cross at once; after that the
/// latest held pause goes whenever a token comes (every 100 ms); the final
/// resume finds no token and crosses with the next one.
#[test]
fn a_pause_storm_is_capped_and_the_final_resume_still_crosses() {
    let mut pe = storm_pe(10, 10, "100ms");
    let pause = (0x08, [0, 0, 0, 0xffff, 0, 0, 0, 0]);
    let mut crossed = Vec::new();
    for ms in 0..=998u64 {
        advance(&mut pe, t(ms));
        crossed.extend(sent(&mut pe).into_iter().map(|f| (ms, f, "deferred")));
        let v = pe.handle_frame(t(ms), Port::Dc, &pfc_one(3, 0xffff));
        let expected = if ms < 10 {
            Verdict::Relayed { held: 0 }
        } else {
            Verdict::Suppressed
        };
        assert_eq!(v, expected, "{ms} ms");
        crossed.extend(sent(&mut pe).into_iter().map(|f| (ms, f, "at once")));
    }
    let expected: Vec<_> = (0..10)
        .map(|ms| (ms, pause, "at once"))
        .chain((1..=9).map(|k| (k * 100, pause, "deferred")))
        .collect();
    assert_eq!(crossed, expected);

    // The resume: 0.99 of a token at 999 ms, so held...
    assert_eq!(
        pe.handle_frame(t(999), Port::Dc, &pfc_one(3, 0)),
        Verdict::Suppressed
    );
    assert!(sent(&mut pe).is_empty());
    // ... until the token at 1000 ms.
    assert_eq!(pe.poll_timeout(), Some(t(1000)));
    pe.handle_timeout(t(999));
    assert!(sent(&mut pe).is_empty(), "not before it is due");
    pe.handle_timeout(t(1000));
    assert_eq!(sent(&mut pe), vec![(0x08, [0; 8])]);
    assert_eq!(pe.poll_timeout(), None);

    let c = pe.egress_counters();
    assert_eq!(c.received, 1000);
    assert_eq!(c.relayed, 10);
    assert_eq!(c.suppressed, 990);
    assert_eq!(c.flushed, 10);
    let s = pe.status().storm.expect("ceiling on");
    assert_eq!(s.suppressed, 990);
    let p3 = s.priorities[3];
    assert_eq!(p3.counters.episodes, 1);
    assert_eq!(p3.counters.relayed, 20);
    assert_eq!(p3.counters.flushed, 10);
    assert_eq!(p3.counters.bypassed, 0, "every relay had a token");
    assert!(
        p3.in_episode,
        "the episode ends only after 100 ms of silence"
    );
    pe.handle_timeout(t(1098));
    assert!(pe.status().storm.expect("on").priorities[3].in_episode);
    pe.handle_timeout(t(1099));
    assert!(!pe.status().storm.expect("on").priorities[3].in_episode);
}

/// With a slow ceiling (1/s) the held resume does not wait for a token: it
/// goes when the episode ends, `episode_gap` after the last frame.
#[test]
fn the_final_resume_waits_at_most_the_episode_gap() {
    let mut pe = storm_pe(1, 1, "100ms");
    assert_eq!(
        pe.handle_frame(t(0), Port::Dc, &pfc_one(5, 100)),
        Verdict::Relayed { held: 0 }
    );
    assert_eq!(
        pe.handle_frame(t(10), Port::Dc, &pfc_one(5, 200)),
        Verdict::Suppressed
    );
    assert_eq!(
        pe.handle_frame(t(20), Port::Dc, &pfc_one(5, 0)),
        Verdict::Suppressed
    );
    assert_eq!(sent(&mut pe), vec![(0x20, [0, 0, 0, 0, 0, 100, 0, 0])]);
    // Token at 1 s, episode over at 120 ms: the earlier wins.
    assert_eq!(pe.poll_timeout(), Some(t(120)));
    advance(&mut pe, t(120));
    assert_eq!(sent(&mut pe), vec![(0x20, [0; 8])], "the final resume");
    let p5 = pe.status().storm.expect("on").priorities[5];
    assert_eq!(p5.counters.bypassed, 1, "sent without a token");
    assert_eq!(p5.pending, None);
    assert!(!p5.in_episode);
}

/// A new episode's first pause crosses at once even with an empty bucket.
#[test]
fn the_first_pause_of_every_episode_crosses_at_once() {
    let mut pe = storm_pe(1, 1, "100ms");
    assert_eq!(
        pe.handle_frame(t(0), Port::Dc, &pfc_one(2, 7)),
        Verdict::Relayed { held: 0 }
    );
    // Silence: the episode ends at 100 ms, the pause expired on its own.
    assert_eq!(pe.poll_timeout(), None, "nothing pending");
    for (ms, n) in [(150u64, 2u64), (300, 3), (450, 4)] {
        assert_eq!(
            pe.handle_frame(t(ms), Port::Dc, &pfc_one(2, 7)),
            Verdict::Relayed { held: 0 },
            "{ms} ms"
        );
        let p2 = pe.status().storm.expect("on").priorities[2];
        assert_eq!(p2.counters.episodes, n);
    }
    let p2 = pe.status().storm.expect("on").priorities[2];
    assert_eq!(
        p2.counters.bypassed, 3,
        "the bucket (1/s) was empty each time"
    );
    assert_eq!(sent(&mut pe).len(), 4);
    // Inside an episode the same frame waits for a token.
    assert_eq!(
        pe.handle_frame(t(460), Port::Dc, &pfc_one(2, 7)),
        Verdict::Suppressed
    );
}

/// Pause and resume alternating every millisecond for 2 s is one episode:
/// the ceiling holds (burst + rate x time, plus the one first pause), and
/// the last state (a resume) reaches the far side.
#[test]
fn flapping_is_one_episode_and_stays_under_the_ceiling() {
    let (rate, burst) = (100u64, 5u64);
    let mut pe = storm_pe(rate as u32, burst as u32, "100ms");
    let mut out = Vec::new();
    for ms in 0..2000u64 {
        advance(&mut pe, t(ms));
        out.extend(sent(&mut pe));
        let q = if ms % 2 == 0 { 0xffff } else { 0 };
        pe.handle_frame(t(ms), Port::Dc, &pfc_one(0, q));
        out.extend(sent(&mut pe));
    }
    advance(&mut pe, t(5000));
    out.extend(sent(&mut pe));
    let p0 = pe.status().storm.expect("on").priorities[0];
    assert_eq!(p0.counters.episodes, 1);
    let ceiling = burst + rate * 2 + 1;
    assert!(
        (out.len() as u64) <= ceiling,
        "{} frames crossed, ceiling {ceiling}",
        out.len()
    );
    assert!(
        out.len() as u64 >= rate * 2,
        "the ceiling is used: {}",
        out.len()
    );
    assert_eq!(out.last(), Some(&(0x01, [0; 8])), "ends resumed");
    assert_eq!(p0.counters.relayed, out.len() as u64);
    assert_eq!(
        p0.counters.relayed + p0.counters.suppressed - p0.counters.flushed,
        2000
    );
}

/// Priorities are capped apart: a storming priority is cleared from a frame
/// that also carries another priority's first pause.
#[test]
fn a_frame_is_relayed_with_the_priorities_that_may_go() {
    let mut pe = storm_pe(1, 1, "100ms");
    pe.handle_frame(t(0), Port::Dc, &pfc_one(3, 50));
    sent(&mut pe);
    let both = pfc_from(DC2_GW, 0x28, [0, 0, 0, 60, 0, 70, 0, 0]);
    assert_eq!(
        pe.handle_frame(t(1), Port::Dc, &both),
        Verdict::Relayed { held: 0x08 }
    );
    assert_eq!(sent(&mut pe), vec![(0x20, [0, 0, 0, 0, 0, 70, 0, 0])]);
    assert_eq!(pe.egress_counters().masked, 1);
    // Priority 3's held value (60) follows when its episode ends.
    advance(&mut pe, t(101));
    assert_eq!(sent(&mut pe), vec![(0x08, [0, 0, 0, 60, 0, 0, 0, 0])]);
}

/// A deferred frame is the last held frame with only the deferred
/// priorities: its source MAC and VLAN tag are the gateway's.
#[test]
fn deferred_frames_are_built_from_the_last_held_frame() {
    let mut pe = storm_pe(1, 1, "50ms");
    pe.handle_frame(t(0), Port::Dc, &pfc_one(1, 10));
    let tagged = pfc_tagged(DC2_GW_SYSTEM, 0x06, [0, 11, 12, 0, 0, 0, 0, 0]);
    // Priority 1 is in its episode and out of tokens; priority 2 opens one.
    assert_eq!(
        pe.handle_frame(t(5), Port::Dc, &tagged),
        Verdict::Relayed { held: 0x02 }
    );
    drain(&mut pe);
    advance(&mut pe, t(55));
    let out = drain(&mut pe);
    assert_eq!(out.len(), 1);
    let tf = TunnelFrame::parse(&out[0].3, &ParseOptions::default()).expect("tunnel");
    assert_eq!(tf.inner.len(), 64);
    assert_eq!(&tf.inner[6..12], &DC2_GW_SYSTEM.0);
    assert_eq!(tf.inner[..6], tagged[..6]);
    assert_eq!(tf.inner[12..16], tagged[12..16], "the tag");
    assert_eq!(pfc_content(tf.inner), (0x02, [0, 11, 0, 0, 0, 0, 0, 0]));
}

/// A resume outside any episode (the far side is resumed already) needs a
/// token and is dropped without one, not kept.
#[test]
fn a_stray_resume_is_not_kept() {
    let mut pe = storm_pe(1, 1, "100ms");
    assert_eq!(
        pe.handle_frame(t(0), Port::Dc, &pfc_one(4, 0)),
        Verdict::Relayed { held: 0 }
    );
    assert_eq!(
        pe.handle_frame(t(1), Port::Dc, &pfc_one(4, 0)),
        Verdict::Suppressed
    );
    assert_eq!(pe.poll_timeout(), None);
    let p4 = pe.status().storm.expect("on").priorities[4];
    assert_eq!((p4.counters.episodes, p4.counters.suppressed), (0, 1));
}

/// Frames due before a new frame's arrival go out before it, even when the
/// daemon did not call `handle_timeout` in time.
#[test]
fn late_timers_are_run_before_the_next_frame() {
    let mut pe = storm_pe(1, 1, "100ms");
    pe.handle_frame(t(0), Port::Dc, &pfc_one(6, 9));
    pe.handle_frame(t(1), Port::Dc, &pfc_one(6, 0));
    sent(&mut pe);
    // Episode of 6 ends at 101 ms; nobody ran the timer. A frame at 500 ms:
    let v = pe.handle_frame(t(500), Port::Dc, &pfc_one(1, 3));
    assert_eq!(v, Verdict::Relayed { held: 0 });
    assert_eq!(
        sent(&mut pe),
        vec![(0x40, [0; 8]), (0x02, [0, 3, 0, 0, 0, 0, 0, 0])]
    );
}

#[test]
fn config_defaults_and_refusals() {
    let mut cfg = pe2(Kind::Srv6);
    cfg.storm = StormConfig {
        max_per_second: Some(500),
        burst: None,
        episode_gap: "2ms".into(),
    };
    let s = relay(cfg.clone()).status().storm.expect("on");
    assert_eq!(
        (s.max_per_second, s.burst, s.episode_gap_ns),
        (500, 500, 2_000_000)
    );
    cfg.storm.max_per_second = Some(0);
    assert!(Relay::new(cfg.clone(), t(0)).is_err());
    cfg.storm.max_per_second = Some(1);
    cfg.storm.episode_gap = "0s".into();
    assert!(Relay::new(cfg.clone(), t(0)).is_err());
    cfg.storm.episode_gap = "soon".into();
    let e = Relay::new(cfg, t(0)).expect_err("not a duration");
    assert!(
        e.to_string().starts_with("storm.episode_gap = \"soon\""),
        "{e}"
    );
}

//! The storm ceiling, on a simulated clock: what crosses the WAN when a DC
//! gateway floods PFC, and when; and that the far side stays paused.

mod common;

use std::time::Duration;

use common::*;
use lossless_relay::{Instant, PauseClock, PauseTimeline, Port, Relay, StormConfig, Verdict};
use lossless_wire::tunnel::{ParseOptions, TunnelFrame};

/// A ceiling of `rate`/s with `burst`, pauses timed at `speed`.
fn storm_pe_at(rate: u32, burst: u32, gap: &str, speed: &str) -> Relay {
    let mut cfg = pe2(Kind::Srv6);
    cfg.storm = StormConfig {
        max_per_second: Some(rate),
        burst: Some(burst),
        episode_gap: gap.to_string(),
        link_speed: speed.to_string(),
        ..StormConfig::default()
    };
    relay(cfg)
}

/// At 1 Gb/s, where 65,535 quanta last 33.55 ms.
fn storm_pe(rate: u32, burst: u32, gap: &str) -> Relay {
    storm_pe_at(rate, burst, gap, "1G")
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

/// Runs the timers the way a daemon would up to `now`; what they sent, when.
fn advance(pe: &mut Relay, now: Instant) -> Vec<(Instant, (u8, [u16; 8]))> {
    let mut out = Vec::new();
    while let Some(at) = pe.poll_timeout() {
        if at > now {
            break;
        }
        pe.handle_timeout(at);
        out.extend(sent(pe).into_iter().map(|f| (at, f)));
    }
    out
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

/// DC2-GW refreshes a 65,535-quanta pause every 10 us for 100 ms at 100 Gb/s
/// (10,000 frames), then resumes. The far side's pause (335.5 us) is kept up
/// by one pause every 275.5 to 285.5 us, sent 50 us before the last one lapses
/// and carrying what is left of DC2-GW's latest: the far gateway is paused
/// without a gap as long as DC2-GW asks, and the WAN carries 359
/// frames, not 10,000.
#[test]
fn a_storm_keeps_the_far_side_paused_without_gaps_and_costs_one_frame_per_pause_time() {
    let mut pe = storm_pe_at(100, 10, "100ms", "100G");
    let clock = PauseClock::new(100_000_000_000, Duration::from_micros(50));
    let mut near = PauseTimeline::new(clock, 3);
    let mut far = PauseTimeline::new(clock, 3);
    let mut crossed = Vec::new();
    for k in 0..10_000u64 {
        let now = t_us(k * 10);
        for (at, (v, q)) in advance(&mut pe, now) {
            far.frame(at, v, &q);
            crossed.push((at, v, q));
        }
        let f = pfc_one(3, 0xffff);
        near.frame(now, 0x08, &[0, 0, 0, 0xffff, 0, 0, 0, 0]);
        let v = pe.handle_frame(now, Port::Dc, &f);
        let at_once = sent(&mut pe);
        assert_eq!(
            v,
            if k == 0 {
                Verdict::Relayed { held: 0 }
            } else {
                Verdict::Suppressed
            },
            "frame {k}: only the first pause crosses at once"
        );
        for (v, q) in at_once {
            far.frame(now, v, &q);
            crossed.push((now, v, q));
        }
    }
    // The resume, with tokens to spare: at once.
    let end = t_us(100_000);
    for (at, (v, q)) in advance(&mut pe, end) {
        far.frame(at, v, &q);
        crossed.push((at, v, q));
    }
    near.frame(end, 0x08, &[0; 8]);
    assert_eq!(
        pe.handle_frame(end, Port::Dc, &pfc_one(3, 0)),
        Verdict::Relayed { held: 0 }
    );
    for (v, q) in sent(&mut pe) {
        far.frame(end, v, &q);
        crossed.push((end, v, q));
    }
    assert_eq!(far.first_uncovered(&near), None, "the far side lapsed");
    assert_eq!(
        far.gaps(t(0), end),
        vec![],
        "paused from the first pause to the resume"
    );
    assert_eq!(
        far.spans().last().map(|s| s.1),
        Some(end),
        "resumed at the resume"
    );
    // One frame per 280 us of pause (357 here), the first pause and the resume.
    let refreshes = crossed.len() - 2;
    assert_eq!(refreshes, 357, "refreshes");
    for w in crossed.windows(2).take(refreshes) {
        let gap = w[1].0 - w[0].0;
        assert!(
            gap >= Duration::from_micros(275) && gap <= Duration::from_micros(286),
            "{:?} between refreshes",
            gap
        );
    }
    let c = pe.egress_counters();
    assert_eq!((c.received, c.relayed, c.suppressed), (10_001, 2, 9_999));
    assert_eq!(c.flushed, refreshes as u64);
    let p3 = pe.status().storm.expect("on").priorities[3];
    assert_eq!(p3.counters.refreshed, refreshes as u64);
    assert_eq!(p3.far_paused_until_ns, None, "resumed");
}

/// A refresh carries what is left of DC2-GW's latest pause, rounded up to
/// whole quanta: the far side ends its pause when DC2-GW's would end.
#[test]
fn a_refresh_carries_what_is_left_of_the_latest_pause() {
    // 1 Gb/s: 1000 quanta = 512 us; the margin is 50 us.
    let mut pe = storm_pe(100, 10, "100ms");
    pe.handle_frame(t_us(0), Port::Dc, &pfc_one(2, 1000));
    assert_eq!(sent(&mut pe), vec![(0x04, [0, 0, 1000, 0, 0, 0, 0, 0])]);
    assert_eq!(
        pe.handle_frame(t_us(100), Port::Dc, &pfc_one(2, 1000)),
        Verdict::Suppressed
    );
    // Due at 462 us; DC2-GW's pause ends at 612 us: 150 us = 292.97 quanta.
    assert_eq!(pe.poll_timeout(), Some(t_us(462)));
    let out = advance(&mut pe, t_us(462));
    assert_eq!(out, vec![(t_us(462), (0x04, [0, 0, 293, 0, 0, 0, 0, 0]))]);
    // A shorter refresh the far side already covers sends nothing.
    assert_eq!(
        pe.handle_frame(t_us(500), Port::Dc, &pfc_one(2, 10)),
        Verdict::Suppressed
    );
    assert_eq!(advance(&mut pe, t_us(10_000)), vec![]);
}

/// With a slow ceiling (1/s) a held resume does not wait for a token: it
/// goes when the episode ends, `episode_gap` after the last frame.
#[test]
fn the_final_resume_waits_at_most_the_episode_gap() {
    let mut pe = storm_pe(1, 1, "100ms");
    // The resume at 5 ms spends the only token; the next episode's resume
    // finds the bucket empty.
    pe.handle_frame(t(0), Port::Dc, &pfc_one(5, 0xffff));
    pe.handle_frame(t(5), Port::Dc, &pfc_one(5, 0));
    sent(&mut pe);
    advance(&mut pe, t(200));
    assert_eq!(
        pe.handle_frame(t(300), Port::Dc, &pfc_one(5, 0xffff)),
        Verdict::Relayed { held: 0 }
    );
    assert_eq!(
        pe.handle_frame(t(310), Port::Dc, &pfc_one(5, 0xffff)),
        Verdict::Suppressed,
        "a refresh: the far side is paused for 33.5 ms"
    );
    assert_eq!(
        pe.handle_frame(t(320), Port::Dc, &pfc_one(5, 0)),
        Verdict::Suppressed
    );
    assert_eq!(sent(&mut pe), vec![(0x20, [0, 0, 0, 0, 0, 0xffff, 0, 0])]);
    // Token at 1.005 s, episode over at 420 ms: the earlier wins.
    assert_eq!(pe.poll_timeout(), Some(t(420)));
    assert_eq!(
        advance(&mut pe, t(420)),
        vec![(t(420), (0x20, [0; 8]))],
        "the final resume"
    );
    let p5 = pe.status().storm.expect("on").priorities[5];
    assert_eq!(
        p5.counters.bypassed, 3,
        "two pauses, and the resume without a token"
    );
    assert_eq!(p5.pending, None);
    assert!(!p5.in_episode);
}

/// A new episode's first pause crosses at once even with an empty bucket,
/// and so does a pause the far side no longer holds.
#[test]
fn the_first_pause_of_every_episode_crosses_at_once() {
    let mut pe = storm_pe(1, 1, "100ms");
    pe.handle_frame(t(0), Port::Dc, &pfc_one(2, 0));
    assert_eq!(
        pe.handle_frame(t(1), Port::Dc, &pfc_one(2, 7)),
        Verdict::Relayed { held: 0 }
    );
    // Silence: the episode ends at 101 ms, the pause expired on its own.
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
    assert_eq!(sent(&mut pe).len(), 5);
    // Inside an episode, 7 quanta (3.6 us) later lapsed: the far side
    // needs it.
    assert_eq!(
        pe.handle_frame(t(460), Port::Dc, &pfc_one(2, 7)),
        Verdict::Relayed { held: 0 }
    );
    let p2 = pe.status().storm.expect("on").priorities[2];
    assert_eq!((p2.counters.episodes, p2.counters.bypassed), (4, 5));
}

/// Pause and resume alternating every millisecond for 2 s (at 1 Gb/s, where
/// the pause lasts 33.5 ms) is one episode. Resumes are capped by the bucket
/// (burst + rate x time), each pause that follows a relayed resume crosses,
/// and refreshes keep the far side paused in between: the far side is paused
/// whenever DC2-GW asks, the WAN carries at most twice the bucket plus one
/// pause per pause time, and the last state (a resume) reaches the far side.
#[test]
fn flapping_is_one_episode_keeps_the_far_side_paused_and_stays_bounded() {
    let (rate, burst) = (100u64, 5u64);
    let mut pe = storm_pe(rate as u32, burst as u32, "100ms");
    let clock = PauseClock::new(1_000_000_000, Duration::from_micros(50));
    let (mut near, mut far) = (PauseTimeline::new(clock, 0), PauseTimeline::new(clock, 0));
    let mut out = Vec::new();
    let mut note = |at: Instant, f: (u8, [u16; 8]), far: &mut PauseTimeline| {
        far.frame(at, f.0, &f.1);
        out.push(f);
    };
    for ms in 0..2000u64 {
        for (at, f) in advance(&mut pe, t(ms)) {
            note(at, f, &mut far);
        }
        let q = if ms % 2 == 0 { 0xffff } else { 0 };
        let mut quanta = [0; 8];
        quanta[0] = q;
        near.frame(t(ms), 0x01, &quanta);
        pe.handle_frame(t(ms), Port::Dc, &pfc_one(0, q));
        for f in sent(&mut pe) {
            note(t(ms), f, &mut far);
        }
    }
    for (at, f) in advance(&mut pe, t(5000)) {
        note(at, f, &mut far);
    }
    assert_eq!(far.first_uncovered(&near), None, "the far side lapsed");
    let p0 = pe.status().storm.expect("on").priorities[0];
    assert_eq!(p0.counters.episodes, 1);
    let bucket = burst + rate * 2;
    let ceiling = 2 * bucket + 2 + 2000 / 33;
    assert!(
        (out.len() as u64) <= ceiling,
        "{} frames crossed, ceiling {ceiling}",
        out.len()
    );
    assert!(
        out.len() as u64 >= 2 * rate * 2,
        "the bucket is used: {}",
        out.len()
    );
    assert_eq!(out.last(), Some(&(0x01, [0; 8])), "ends resumed");
    assert_eq!(p0.counters.relayed, out.len() as u64);
    assert_eq!(
        p0.counters.relayed + p0.counters.suppressed - p0.counters.flushed,
        2000
    );
}

/// Priorities are capped apart: a priority's held resume is cleared from a
/// frame that also carries another priority's first pause.
#[test]
fn a_frame_is_relayed_with_the_priorities_that_may_go() {
    let mut pe = storm_pe(1, 1, "100ms");
    pe.handle_frame(t(0), Port::Dc, &pfc_one(3, 0));
    pe.handle_frame(t(0), Port::Dc, &pfc_one(3, 50));
    sent(&mut pe);
    // Priority 3 resumes (the bucket is empty), priority 5 opens an episode.
    let both = pfc_from(DC2_GW, 0x28, [0, 0, 0, 0, 0, 70, 0, 0]);
    assert_eq!(
        pe.handle_frame(t(1), Port::Dc, &both),
        Verdict::Relayed { held: 0x08 }
    );
    assert_eq!(sent(&mut pe), vec![(0x20, [0, 0, 0, 0, 0, 70, 0, 0])]);
    assert_eq!(pe.egress_counters().masked, 1);
    // Priority 3's held resume follows when its episode ends.
    assert_eq!(advance(&mut pe, t(101)), vec![(t(101), (0x08, [0; 8]))]);
}

/// A deferred frame is the last held frame with only the deferred
/// priorities: its source MAC and VLAN tag are the gateway's.
#[test]
fn deferred_frames_are_built_from_the_last_held_frame() {
    let mut pe = storm_pe(1, 1, "50ms");
    pe.handle_frame(t(0), Port::Dc, &pfc_one(1, 0));
    pe.handle_frame(t(0), Port::Dc, &pfc_one(1, 10));
    let tagged = pfc_tagged(DC2_GW_SYSTEM, 0x06, [0, 0, 12, 0, 0, 0, 0, 0]);
    // Priority 1 resumes out of tokens; priority 2 opens an episode.
    assert_eq!(
        pe.handle_frame(t(5), Port::Dc, &tagged),
        Verdict::Relayed { held: 0x02 }
    );
    drain(&mut pe);
    pe.handle_timeout(t(55));
    let out = drain(&mut pe);
    assert_eq!(out.len(), 1);
    let tf = TunnelFrame::parse(&out[0].3, &ParseOptions::default()).expect("tunnel");
    assert_eq!(tf.inner.len(), 64);
    assert_eq!(&tf.inner[6..12], &DC2_GW_SYSTEM.0);
    assert_eq!(tf.inner[..6], tagged[..6]);
    assert_eq!(tf.inner[12..16], tagged[12..16], "the tag");
    assert_eq!(pfc_content(tf.inner), (0x02, [0; 8]));
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
    pe.handle_frame(t(0), Port::Dc, &pfc_one(6, 0));
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
        ..StormConfig::default()
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

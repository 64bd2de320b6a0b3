#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Link-delay measurement on the lab's simulator: two measurement sessions
//! (stations) joined by a link with a set delay per direction, with clocks
//! that disagree (one wraps 5 ms in), a responder that takes 3 us to answer,
//! transmit timestamps that arrive late, lost frames. The measured round trip
//! is exact, whatever order timestamps arrive in. The last case runs the same
//! conditions through the node core, as losslessd measures.
//!
//! (A session's own checks of stale and malformed frames need no link: they
//! stay with the session, in `lossless-headroom/tests/session.rs`.)

use lossless_dcbx::{Duration, Instant};
use lossless_headroom::session::{MeasureEvent, Session, SessionConfig};
use lossless_headroom::units;
use lossless_lab::scenario::{host_config, switch_config};
use lossless_lab::{NodeId, PathProps, SegmentId, Sim};
use lossless_node::config::HeadroomSettings;
use lossless_wire::MacAddr;

const A: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const B: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);

/// Station B's clock stands here when the virtual clock is 0: it wraps
/// through 2^64 ps 5 ms into the run.
const B_CLOCK: u64 = u64::MAX - 5_000_000_000;

struct Link {
    sim: Sim,
    s: [NodeId; 2],
    seg: SegmentId,
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn secs(s: u64) -> Instant {
    Instant::from_duration(Duration::from_secs(s))
}

impl Link {
    /// Stations A (session 100) and B (session 7000) on one link, `delay_ab`
    /// from A to B and `delay_ba` back, link down; each answers a request
    /// 3 us after it came in.
    fn new(delay_ab: Duration, delay_ba: Duration) -> Link {
        let cfg = SessionConfig::default();
        let mut sim = Sim::new(1);
        let a = sim.add_station("a", A, Session::new(cfg, A, 100).unwrap());
        let b = sim.add_station("b", B, Session::new(cfg, B, 7000).unwrap());
        let seg = sim.connect(a, b);
        let path = |delay| PathProps { delay, loss: 0.0 };
        sim.set_path(a, b, path(delay_ab));
        sim.set_path(b, a, path(delay_ba));
        sim.set_clock_offset(b, B_CLOCK);
        for n in [a, b] {
            sim.set_turnaround(n, us(3));
        }
        Link {
            sim,
            s: [a, b],
            seg,
        }
    }

    fn session(&self, i: usize) -> &Session {
        self.sim.measurement(self.s[i]).unwrap()
    }

    fn agree(&mut self, i: usize) {
        self.sim
            .with_station(self.s[i], |s, now| s.set_agreed(now, true));
    }

    /// Link up, both ends agreed.
    fn up(&mut self) {
        self.sim.set_link(self.seg, true);
        self.agree(0);
        self.agree(1);
    }

    fn events(&self, i: usize) -> &[MeasureEvent] {
        self.sim.station_events(self.s[i])
    }

    fn measured(&self, i: usize) -> Vec<units::Duration> {
        self.events(i)
            .iter()
            .filter_map(|e| match e {
                MeasureEvent::Measured(m) => Some(m.round_trip),
                _ => None,
            })
            .collect()
    }
}

#[test]
fn both_ends_measure_the_exact_round_trip() {
    // 10 km of fibre (50 us) one way, 49 us the other: the round trip is 99 us.
    let mut l = Link::new(us(50), us(49));
    l.up();
    l.sim.run_until(secs(1));
    assert_eq!(l.measured(0), vec![units::Duration(99_000_000)]);
    assert_eq!(l.measured(1), vec![units::Duration(99_000_000)]);
    let m = l.session(0).last().unwrap();
    assert_eq!((m.valid, m.sent), (32, 32));
    assert_eq!(m.median, m.round_trip);
    // Settled well within 1 s, within the frame budget: 32 requests, 64 answers.
    assert!(
        m.finished.since_epoch() < Duration::from_millis(100),
        "{:?}",
        m.finished
    );
    let frames = l.s.map(|n| l.sim.frames_sent_by(n));
    assert_eq!(frames, [96, 96]);
    let st = l.session(0).stats();
    assert_eq!(
        (st.requests_sent, st.responses_sent, st.follow_ups_sent),
        (32, 32, 32)
    );
    assert_eq!(st.stale + st.malformed + st.invalid_exchanges, 0);
}

#[test]
fn late_tx_timestamps_and_zero_delay_still_give_exact_results() {
    // The error queue reports transmit timestamps after the answers arrived.
    let mut l = Link::new(us(0), us(0));
    for n in l.s {
        l.sim.set_tx_report_delay(n, us(500));
    }
    l.up();
    l.sim.run_until(secs(1));
    assert_eq!(l.measured(0), vec![units::Duration(0)]);
}

#[test]
fn nothing_runs_without_agreement_and_rounds_repeat_with_the_period() {
    let mut l = Link::new(us(5), us(5));
    l.sim.set_link(l.seg, true);
    l.agree(0);
    // Only station 0 agreed: it measures (station 1 answers while its link is up) ...
    l.sim.run_until(secs(1));
    assert_eq!(l.measured(0), vec![units::Duration(10_000_000)]);
    assert!(l.measured(1).is_empty());
    // ... and again one period later; station 1 never starts a round.
    l.sim.run_until(secs(62));
    assert_eq!(l.measured(0).len(), 2);
    assert_eq!(l.session(1).stats().requests_sent, 0);
    // Link down on station 1: nothing answers, the round fails and is retried.
    let now = l.sim.now();
    l.sim.set_node_link(l.s[1], false);
    l.sim.with_station(l.s[0], |s, now| s.remeasure(now));
    // The round ends 112 ms in (last request at 62 ms, then the 50 ms reply timeout).
    l.sim.run_until(now + Duration::from_millis(300));
    assert!(matches!(
        l.events(0).last(),
        Some(MeasureEvent::Failed {
            valid: 0,
            sent: 32,
            ..
        })
    ));
    // Retried `retry` after the failed round's deadline (last request + reply timeout).
    assert_eq!(
        l.session(0).next_round(),
        Some(now + Duration::from_millis(62 + 50) + Duration::from_millis(250))
    );
}

#[test]
fn losses_leave_the_minimum_intact() {
    let mut l = Link::new(us(20), us(20));
    // Every fifth frame each way is lost.
    let [a, b] = l.s;
    l.sim.set_drop_every(a, b, Some(5));
    l.sim.set_drop_every(b, a, Some(5));
    l.up();
    l.sim.run_until(secs(1));
    let m = *l.session(0).last().expect("a result despite losses");
    assert_eq!(m.round_trip, units::Duration(40_000_000));
    assert!(m.valid < 32 && m.valid >= 8, "{}", m.valid);
    assert!(l.sim.stats().frames_lost > 0);
}

/// The same conditions through the node core (DCBX agrees the measurement,
/// the core runs the session and sizes headroom from it): clocks that
/// disagree, a slow responder and late transmit timestamps still give the
/// exact round trip at both ends.
#[test]
fn the_node_core_measures_exactly_with_offset_clocks_late_stamps_and_a_slow_responder() {
    let mut sim = Sim::new(1);
    let mut sw = switch_config();
    sw.dcbx.headroom_measurement = true;
    let mut host = host_config();
    host.dcbx.headroom_measurement = true;
    let a = sim.add_agent("switch", sw).unwrap();
    let b = sim.add_agent("host", host).unwrap();
    let settings = HeadroomSettings {
        speed: Some(100_000_000_000),
        ..HeadroomSettings::default()
    };
    for n in [a, b] {
        sim.set_headroom(n, settings).unwrap();
        sim.set_turnaround(n, us(3));
        sim.set_tx_report_delay(n, us(500));
    }
    sim.set_clock_offset(b, B_CLOCK);
    let seg = sim.connect(a, b);
    sim.set_path(
        a,
        b,
        PathProps {
            delay: us(50),
            loss: 0.0,
        },
    );
    sim.set_path(
        b,
        a,
        PathProps {
            delay: us(49),
            loss: 0.0,
        },
    );
    sim.set_link(seg, true);
    let done = |s: &Sim| {
        [a, b]
            .iter()
            .all(|n| s.measurement(*n).unwrap().last().is_some())
    };
    assert!(sim.run_until_true(secs(60), done).is_some());
    for n in [a, b] {
        let m = sim.measurement(n).unwrap().last().unwrap();
        assert_eq!(m.round_trip, units::Duration(99_000_000), "{}", sim.name(n));
        assert_eq!((m.valid, m.sent), (32, 32));
    }
}

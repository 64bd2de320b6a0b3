#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Two measurement sessions joined by a link with a set delay per direction, on a virtual
//! clock: the measured round trip is exact, whatever order timestamps arrive in.

use std::collections::BTreeMap;

use lossless_dcbx::{Duration, Instant};
use lossless_headroom::session::{MeasureEvent, Session, SessionConfig};
use lossless_headroom::units;
use lossless_wire::measure::{Measure, MessageKind};
use lossless_wire::{Frame, MacAddr, Payload};

const A: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const B: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);

fn ps(t: Instant) -> u64 {
    t.since_epoch().as_nanos() as u64 * 1000
}

/// What happens next on the virtual timeline.
#[derive(Debug, Clone)]
enum Ev {
    Deliver { to: usize, bytes: Vec<u8> },
    TxStamp { at: usize, bytes: Vec<u8>, ts: u64 },
}

struct Link {
    now: Instant,
    s: [Session; 2],
    /// One-way delay per direction: [a->b, b->a].
    delay: [Duration; 2],
    /// Where each station's clock stands when the virtual clock is 0 (ps).
    clock_offset: [u64; 2],
    /// Responder turnaround: time from receiving a request to sending its response.
    turnaround: Duration,
    /// TX timestamps reach the session this late (error-queue latency).
    tx_report_delay: Duration,
    queue: BTreeMap<(Instant, u64), Ev>,
    seq: u64,
    events: [Vec<MeasureEvent>; 2],
    frames: [u32; 2],
    drop_every: Option<u32>,
}

impl Link {
    fn new(delay_ab: Duration, delay_ba: Duration) -> Link {
        let cfg = SessionConfig::default();
        Link {
            now: Instant::ZERO,
            s: [
                Session::new(cfg, A, 100).unwrap(),
                Session::new(cfg, B, 7000).unwrap(),
            ],
            delay: [delay_ab, delay_ba],
            clock_offset: [0, u64::MAX - 5_000_000_000],
            turnaround: Duration::from_micros(3),
            tx_report_delay: Duration::ZERO,
            queue: BTreeMap::new(),
            seq: 0,
            events: [Vec::new(), Vec::new()],
            frames: [0, 0],
            drop_every: None,
        }
    }

    fn clock(&self, node: usize, t: Instant) -> u64 {
        ps(t).wrapping_add(self.clock_offset[node])
    }

    fn push(&mut self, at: Instant, ev: Ev) {
        self.seq += 1;
        self.queue.insert((at, self.seq), ev);
    }

    fn drain(&mut self, node: usize) {
        while let Some(bytes) = self.s[node].poll_transmit() {
            self.frames[node] += 1;
            // A response leaves `turnaround` after the request that caused it.
            let is_response = matches!(
                Frame::parse(&bytes).map(|f| f.payload),
                Ok(Payload::Measure(Measure {
                    kind: MessageKind::Response,
                    ..
                }))
            );
            let sent = if is_response {
                self.now + self.turnaround
            } else {
                self.now
            };
            let ts = self.clock(node, sent);
            self.push(
                sent + self.tx_report_delay,
                Ev::TxStamp {
                    at: node,
                    bytes: bytes.clone(),
                    ts,
                },
            );
            let dropped = self
                .drop_every
                .is_some_and(|n| self.frames[node].is_multiple_of(n));
            if !dropped {
                self.push(
                    sent + self.delay[node],
                    Ev::Deliver {
                        to: 1 - node,
                        bytes,
                    },
                );
            }
        }
        while let Some(e) = self.s[node].poll_event() {
            self.events[node].push(e);
        }
    }

    fn run_until(&mut self, until: Instant) {
        loop {
            for n in 0..2 {
                self.drain(n);
            }
            let timer = (0..2)
                .filter_map(|n| self.s[n].poll_timeout().map(|t| (t, n)))
                .min();
            let frame = self.queue.keys().next().copied();
            let next = match (timer, frame) {
                (Some((t, _)), Some((f, _))) => t.min(f),
                (Some((t, _)), None) => t,
                (None, Some((f, _))) => f,
                (None, None) => break,
            };
            if next > until {
                break;
            }
            self.now = self.now.max(next);
            if let Some((f, s)) = frame.filter(|(f, _)| *f <= next) {
                let now = self.now;
                match self.queue.remove(&(f, s)).unwrap() {
                    Ev::Deliver { to, bytes } => {
                        let rx = self.clock(to, now);
                        self.s[to].handle_frame(now, &bytes, rx);
                    }
                    Ev::TxStamp { at, bytes, ts } => {
                        self.s[at].handle_tx_timestamp(now, &bytes, ts)
                    }
                }
            } else if let Some((_, n)) = timer {
                let now = self.now;
                self.s[n].handle_timeout(now);
            }
        }
        self.now = until;
    }

    fn up(&mut self) {
        let now = self.now;
        for s in &mut self.s {
            s.set_link(now, true);
            s.set_agreed(now, true);
        }
    }

    fn measured(&self, node: usize) -> Vec<units::Duration> {
        self.events[node]
            .iter()
            .filter_map(|e| match e {
                MeasureEvent::Measured(m) => Some(m.round_trip),
                _ => None,
            })
            .collect()
    }
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

#[test]
fn both_ends_measure_the_exact_round_trip() {
    // 10 km of fibre (50 us) one way, 49 us the other: the round trip is 99 us.
    let mut l = Link::new(us(50), us(49));
    l.up();
    l.run_until(Instant::from_duration(Duration::from_secs(1)));
    assert_eq!(l.measured(0), vec![units::Duration(99_000_000)]);
    assert_eq!(l.measured(1), vec![units::Duration(99_000_000)]);
    let m = l.s[0].last().unwrap();
    assert_eq!((m.valid, m.sent), (32, 32));
    assert_eq!(m.median, m.round_trip);
    // Settled well within 1 s, within the frame budget: 32 requests, 64 answers.
    assert!(
        m.finished.since_epoch() < Duration::from_millis(100),
        "{:?}",
        m.finished
    );
    assert_eq!(l.frames, [96, 96]);
    let st = l.s[0].stats();
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
    l.tx_report_delay = us(500);
    l.up();
    l.run_until(Instant::from_duration(Duration::from_secs(1)));
    assert_eq!(l.measured(0), vec![units::Duration(0)]);
}

#[test]
fn nothing_runs_without_agreement_and_rounds_repeat_with_the_period() {
    let mut l = Link::new(us(5), us(5));
    let now = l.now;
    l.s[0].set_link(now, true);
    l.s[1].set_link(now, true);
    l.s[0].set_agreed(now, true);
    // Only station 0 agreed: it measures (station 1 answers while its link is up) ...
    l.run_until(Instant::from_duration(Duration::from_secs(1)));
    assert_eq!(l.measured(0), vec![units::Duration(10_000_000)]);
    assert!(l.measured(1).is_empty());
    // ... and again one period later; station 1 never starts a round.
    l.run_until(Instant::from_duration(Duration::from_secs(62)));
    assert_eq!(l.measured(0).len(), 2);
    assert_eq!(l.s[1].stats().requests_sent, 0);
    // Link down on station 1: nothing answers, the round fails and is retried.
    let now = l.now;
    l.s[1].set_link(now, false);
    l.s[0].remeasure(now);
    // The round ends 112 ms in (last request at 62 ms, then the 50 ms reply timeout).
    l.run_until(now + Duration::from_millis(300));
    assert!(matches!(
        l.events[0].last(),
        Some(MeasureEvent::Failed {
            valid: 0,
            sent: 32,
            ..
        })
    ));
    // Retried `retry` after the failed round's deadline (last request + reply timeout).
    assert_eq!(
        l.s[0].next_round(),
        Some(now + Duration::from_millis(62 + 50) + Duration::from_millis(250))
    );
}

#[test]
fn losses_leave_the_minimum_intact() {
    let mut l = Link::new(us(20), us(20));
    l.drop_every = Some(5);
    l.up();
    l.run_until(Instant::from_duration(Duration::from_secs(1)));
    let m = *l.s[0].last().expect("a result despite losses");
    assert_eq!(m.round_trip, units::Duration(40_000_000));
    assert!(m.valid < 32 && m.valid >= 8, "{}", m.valid);
}

#[test]
fn stale_and_foreign_frames_are_counted_not_used() {
    let mut s = Session::new(SessionConfig::default(), A, 1).unwrap();
    let now = Instant::ZERO;
    s.set_link(now, true);
    s.set_agreed(now, true);
    while s.poll_transmit().is_some() {}
    // A response for a round that is not ours.
    let mut f = Vec::new();
    let stale = Measure {
        kind: MessageKind::Response,
        session: 999,
        sequence: 0,
        flags: 0,
        t1: 0,
        t2: 5,
        t3: 0,
    };
    lossless_wire::emit_measure_frame(B, &stale, &mut f);
    s.handle_frame(now, &f, 10);
    assert_eq!(s.stats().stale, 1);
    // A truncated measurement frame.
    s.handle_frame(now, &f[..20], 10);
    assert_eq!(s.stats().malformed, 1);
    // An LLDP frame: ignored.
    let mut lldp = f.clone();
    lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
    s.handle_frame(now, &lldp, 10);
    assert_eq!(s.stats().malformed, 1);
}

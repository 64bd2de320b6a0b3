//! The watchdog's rule at its boundaries, and against a brute-force oracle.

use proptest::prelude::*;

use super::*;
use crate::pfc::counters::{PfcCounters, PfcSample};

const P: u8 = 3;

fn settings(detection_ms: u32, restoration_ms: u32, action: WatchdogAction) -> PfcWatchdogSettings {
    PfcWatchdogSettings {
        enabled: true,
        detection_ms,
        restoration_ms,
        action,
        priorities: Some(PriorityMap(1 << P)),
        interval_ms: 100,
    }
}

fn at(ms: u64) -> Instant {
    Instant::ZERO + Duration::from_millis(ms)
}

/// Feeds readings (time ms, rx count on P, tx count on P) through the counters and
/// the watchdog; returns the transitions with the time they happened.
struct Bench {
    counters: PfcCounters,
    wd: Watchdog,
    rx: [Option<u64>; 8],
    tx: [Option<u64>; 8],
    storm: Option<u64>,
}

impl Bench {
    fn new(s: PfcWatchdogSettings) -> Bench {
        Bench {
            counters: PfcCounters::default(),
            wd: Watchdog::new(&s, PriorityMap(1 << P)),
            rx: [Some(0); 8],
            tx: [Some(0); 8],
            storm: None,
        }
    }

    fn read(&mut self, ms: u64) -> Vec<Transition> {
        let mut s = PfcSample::dcbnl([0; 8], [0; 8]);
        s.counters[Counter::RxPause as usize] = self.rx;
        s.counters[Counter::TxPause as usize] = self.tx;
        s.storm_events = self.storm;
        let i = self.counters.ingest(at(ms), &s);
        self.wd.observe(at(ms), &i)
    }

    fn rx(&mut self, n: u64) {
        let v = &mut self.rx[usize::from(P)];
        *v = Some(v.unwrap_or(0) + n);
    }

    fn tx(&mut self, n: u64) {
        let v = &mut self.tx[usize::from(P)];
        *v = Some(v.unwrap_or(0) + n);
    }
}

fn is_storm(t: &[Transition]) -> bool {
    matches!(t, [Transition::Storm { .. }])
}

#[test]
fn a_storm_needs_the_whole_detection_time() {
    // Pauses on every reading, 100 ms apart: the window from the reading before the
    // first to now reaches 200 ms at the second reading with pauses.
    let mut b = Bench::new(settings(200, 200, WatchdogAction::Alert));
    assert!(b.read(0).is_empty());
    b.rx(10);
    assert!(b.read(100).is_empty());
    b.rx(10);
    let t = b.read(200);
    assert_eq!(
        t,
        vec![Transition::Storm {
            priority: P,
            direction: Direction::Rx,
            window: Duration::from_millis(200),
            readings: 2,
            frames: 20,
        }]
    );
    assert_eq!(b.wd.stormed(), PriorityMap(1 << P));
    assert_eq!(b.wd.storms[usize::from(P)], 1);

    // One millisecond more of detection time: not yet at 200, at 300.
    let mut b = Bench::new(settings(201, 200, WatchdogAction::Alert));
    b.read(0);
    for ms in [100, 200] {
        b.rx(1);
        assert!(b.read(ms).is_empty(), "{ms}");
    }
    b.rx(1);
    assert!(is_storm(&b.read(300)));
}

#[test]
fn a_storm_needs_two_readings_with_pauses() {
    // One reading 300 ms after the last covers the detection time alone: not enough.
    let mut b = Bench::new(settings(200, 200, WatchdogAction::Alert));
    b.read(0);
    b.rx(50);
    assert!(b.read(300).is_empty());
    b.rx(50);
    let t = b.read(600);
    assert!(
        matches!(t.as_slice(), [Transition::Storm { readings: 2, window, frames: 100, .. }] if *window == Duration::from_millis(600))
    );
}

#[test]
fn a_reading_without_new_pauses_starts_the_window_again() {
    let mut b = Bench::new(settings(300, 200, WatchdogAction::Alert));
    b.read(0);
    for ms in [100, 200] {
        b.rx(5);
        assert!(b.read(ms).is_empty());
    }
    // Resumed once: the priority is not stuck.
    assert!(b.read(300).is_empty());
    for ms in [400, 500] {
        b.rx(5);
        assert!(b.read(ms).is_empty(), "{ms}");
    }
    b.rx(5);
    assert!(is_storm(&b.read(600)), "300 ms of pauses from 300 to 600");
}

#[test]
fn resets_wraps_and_vanished_counters_are_no_evidence() {
    let mut b = Bench::new(settings(200, 200, WatchdogAction::Alert));
    b.rx[usize::from(P)] = Some(1_000_000);
    b.read(0);
    b.rx(5);
    b.read(100);
    // A driver reset: the counter goes back to a small value. Not pauses.
    b.rx[usize::from(P)] = Some(7);
    assert!(b.read(200).is_empty());
    b.rx(5);
    assert!(b.read(300).is_empty(), "the window starts again at 200");
    // Vanished (driver reload), then back.
    b.rx[usize::from(P)] = None;
    assert!(b.read(400).is_empty());
    b.rx[usize::from(P)] = Some(3);
    assert!(b.read(500).is_empty());
    b.rx(5);
    assert!(b.read(600).is_empty());
    b.rx(5);
    assert!(is_storm(&b.read(700)));
    let d = b.counters.discontinuities;
    assert_eq!((d.resets, d.vanished), (1, 1));
}

#[test]
fn a_wrap_is_no_evidence_and_the_window_starts_again_after_it() {
    let mut b = Bench::new(settings(200, 200, WatchdogAction::Alert));
    let top = u64::from(u32::MAX);
    b.rx[usize::from(P)] = Some(top - 30);
    b.read(0);
    b.rx(10);
    assert!(b.read(100).is_empty());
    // Past the top of 32 bits (21 frames: up to the top, then 0). Taken as pauses,
    // 100 and 200 would make a storm here (2 readings, 200 ms); a wrap is no evidence.
    b.rx[usize::from(P)] = Some(0);
    assert!(b.read(200).is_empty());
    assert_eq!(b.counters.discontinuities.wraps, 1);
    assert_eq!(b.counters.total(Counter::RxPause, P), Some(31));
    b.rx(5);
    assert!(
        b.read(300).is_empty(),
        "one reading with pauses since the wrap"
    );
    // The window runs from the wrap's reading: at 400, 200 ms and 2 readings.
    b.rx(5);
    let t = b.read(400);
    assert!(is_storm(&t), "{t:?}");
}

#[test]
fn a_storm_is_over_after_the_restoration_time_without_pauses_either_way() {
    let mut b = Bench::new(settings(200, 300, WatchdogAction::Forward));
    b.read(0);
    for ms in [100, 200] {
        b.rx(9);
        b.read(ms);
    }
    assert_eq!(b.wd.forced_off(), PriorityMap(1 << P));
    assert!(b.read(300).is_empty());
    assert!(b.read(400).is_empty());
    // We paused the peer: not quiet.
    b.tx(1);
    assert!(b.read(500).is_empty());
    assert!(b.read(600).is_empty());
    assert!(b.read(700).is_empty());
    let t = b.read(800);
    assert_eq!(
        t,
        vec![Transition::Over {
            priority: P,
            direction: Direction::Rx,
            stormed: Duration::from_millis(600),
            quiet: Duration::from_millis(300),
            rx_frames: 0,
            tx_frames: 1,
            reason: "quiet",
        }]
    );
    assert_eq!(b.wd.forced_off(), PriorityMap::NONE);
    assert_eq!(b.wd.restorations[usize::from(P)], 1);
}

#[test]
fn our_own_pauses_make_a_tx_storm() {
    let mut b = Bench::new(settings(200, 200, WatchdogAction::Alert));
    b.read(0);
    for ms in [100, 200] {
        b.tx(3);
        let t = b.read(ms);
        if ms == 200 {
            assert!(
                matches!(
                    t.as_slice(),
                    [Transition::Storm {
                        direction: Direction::Tx,
                        frames: 6,
                        ..
                    }]
                ),
                "{t:?}"
            );
        }
    }
    assert_eq!(
        b.wd.forced_off(),
        PriorityMap::NONE,
        "alert turns nothing off"
    );
}

#[test]
fn the_drivers_storm_counter_rising_is_a_storm_at_once() {
    let mut b = Bench::new(settings(5000, 200, WatchdogAction::Alert));
    b.storm = Some(4);
    assert!(b.read(0).is_empty(), "a first value is a baseline");
    assert!(b.read(100).is_empty());
    b.storm = Some(5);
    let t = b.read(200);
    assert!(
        matches!(
            t.as_slice(),
            [Transition::Storm {
                direction: Direction::Driver,
                ..
            }]
        ),
        "{t:?}"
    );
    // A reset of the storm counter is not a rise.
    let mut b = Bench::new(settings(5000, 200, WatchdogAction::Alert));
    b.storm = Some(9);
    b.read(0);
    b.storm = Some(0);
    assert!(b.read(100).is_empty());
}

#[test]
fn only_watched_priorities_storm_and_are_turned_off() {
    let mut b = Bench::new(settings(200, 200, WatchdogAction::Forward));
    b.read(0);
    for ms in [100, 200, 300] {
        for p in 0..8 {
            if p != usize::from(P) {
                b.rx[p] = Some(b.rx[p].unwrap_or(0) + 100);
            }
        }
        assert!(b.read(ms).is_empty());
    }
    assert_eq!(b.wd.forced_off(), PriorityMap::NONE);
}

#[test]
fn unwatching_or_disabling_ends_a_storm() {
    let mut b = Bench::new(settings(200, 200, WatchdogAction::Forward));
    b.read(0);
    for ms in [100, 200] {
        b.rx(1);
        b.read(ms);
    }
    let mut s = settings(200, 200, WatchdogAction::Forward);
    s.enabled = false;
    let t = b.wd.set_settings(at(250), &s, PriorityMap(1 << P));
    assert!(
        matches!(
            t.as_slice(),
            [Transition::Over {
                reason: "unwatched",
                ..
            }]
        ),
        "{t:?}"
    );
    assert_eq!(b.wd.forced_off(), PriorityMap::NONE);
    assert!(b.wd.prios.is_none(), "off: no per-priority state kept");
    b.rx(1);
    assert!(b.read(300).is_empty(), "disabled: nothing happens");
    // On again: it watches from the next reading (300, while off, is not
    // evidence of anything).
    let on = settings(200, 200, WatchdogAction::Forward);
    assert!(b
        .wd
        .set_settings(at(350), &on, PriorityMap(1 << P))
        .is_empty());
    b.rx(1);
    assert!(b.read(400).is_empty());
    b.rx(1);
    assert!(is_storm(&b.read(500)));
}

/// What one interval between readings showed on the priority.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Pauses,
    Quiet,
    Broken,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Pause(u64),
    Quiet,
    Reset,
    Vanish,
    /// The (32-bit) counter jumps to just below its top: the next pauses wrap it.
    NearTop,
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        6 => (1u64..20).prop_map(Ev::Pause),
        4 => Just(Ev::Quiet),
        1 => Just(Ev::Reset),
        1 => Just(Ev::Vanish),
        1 => Just(Ev::NearTop),
    ]
}

/// The rule written the slow way: every window of past readings is tried.
fn oracle(detection: u64, restoration: u64, times: &[u64], class: &[Class]) -> Vec<(usize, bool)> {
    let mut out = Vec::new();
    // Index of the reading the current storm started at.
    let mut storm: Option<usize> = None;
    for n in 1..times.len() {
        match storm {
            None => {
                let found = (0..n).any(|k| {
                    (k + 1..=n).all(|j| class[j] == Class::Pauses)
                        && times[n] - times[k] >= detection
                        && n - k >= 2
                });
                if found {
                    storm = Some(n);
                    out.push((n, true));
                }
            }
            Some(s) => {
                let found = (s..n).any(|k| {
                    (k + 1..=n).all(|j| class[j] == Class::Quiet)
                        && times[n] - times[k] >= restoration
                });
                if found {
                    storm = None;
                    out.push((n, false));
                }
            }
        }
    }
    out
}

const TOP32: u64 = u32::MAX as u64;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_machine_follows_the_rule(
        detection in prop_oneof![Just(100u64), Just(200), Just(300), 100u64..1000],
        restoration in prop_oneof![Just(100u64), Just(200), 100u64..1000],
        steps in proptest::collection::vec((20u64..400, ev()), 1..60),
    ) {
        let s = settings(detection as u32, restoration as u32, WatchdogAction::Forward);
        let mut b = Bench::new(s);
        let (mut times, mut class) = (vec![0u64], vec![Class::Broken]);
        let mut got = Vec::new();
        assert!(b.read(0).is_empty());
        let mut t = 0;
        let mut vanished = false;
        for (n, (dt, e)) in steps.iter().enumerate() {
            t += dt;
            let v = b.rx[usize::from(P)].unwrap_or(0);
            let c = match e {
                _ if vanished => {
                    b.rx[usize::from(P)] = Some(v);
                    vanished = false;
                    Class::Broken
                }
                // A 32-bit counter: past its top it wraps, which is no evidence.
                Ev::Pause(k) if v + k > TOP32 => {
                    b.rx[usize::from(P)] = Some(v + k - TOP32 - 1);
                    Class::Broken
                }
                Ev::Pause(k) => { b.rx(*k); Class::Pauses }
                Ev::NearTop => {
                    b.rx[usize::from(P)] = Some(TOP32 - 10);
                    match v.cmp(&(TOP32 - 10)) {
                        std::cmp::Ordering::Less => Class::Pauses,
                        std::cmp::Ordering::Equal => Class::Quiet,
                        std::cmp::Ordering::Greater => Class::Broken,
                    }
                }
                Ev::Quiet => Class::Quiet,
                Ev::Reset if v == 0 => Class::Quiet,
                Ev::Reset => { b.rx[usize::from(P)] = Some(v / 2); Class::Broken }
                Ev::Vanish => { b.rx[usize::from(P)] = None; vanished = true; Class::Broken }
            };
            if vanished {
                // The value comes back at the next reading.
                b.rx[usize::from(P)] = None;
            }
            times.push(t);
            class.push(c);
            for tr in b.read(t) {
                got.push((n + 1, matches!(tr, Transition::Storm { .. })));
            }
            if vanished {
                b.rx[usize::from(P)] = Some(v);
            }
            prop_assert_eq!(b.wd.forced_off().0 != 0, got.last().is_some_and(|g| g.1));
        }
        prop_assert_eq!(got, oracle(detection, restoration, &times, &class));
    }
}

//! The PFC storm watchdog of one port, sans-IO: fed with each reading's counter steps
//! and its time, it says when a priority storms and when the storm is over.
//!
//! The rule, per watched priority:
//!
//! * **Storm** when either
//!   - every reading over at least the detection time shows new pause frames received
//!     (`rx`: the peer keeps pausing us and never resumes) or sent (`tx`: we keep
//!     pausing the peer, the broken-NIC case), with at least two such readings: the
//!     window runs from the last reading without new pauses to now; or
//!   - the driver's own storm counter rose (`driver`).
//! * **Over** when, in storm, no pause is seen either way on every reading over at
//!   least the restoration time (the window runs from the last reading that saw one).
//!
//! A reading whose counter is not continuous with the previous one (a reset, a wrap, a
//! vanished counter, a failed read) is no evidence: the windows start again after it.
//! So a driver reset can never make a storm, and a storm is never ended by one.

use lossless_dcbx::{Duration, Instant};
use lossless_wire::cee::PriorityMap;

use super::counters::{Counter, Ingested, Step};
use crate::config::{PfcWatchdogSettings, WatchdogAction};

pub use lossless_proto::pfc::Direction;

/// The machine's settings in time units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    pub detection: Duration,
    pub restoration: Duration,
    /// Readings with new pauses a storm needs at least.
    pub min_readings: u32,
}

impl Rule {
    pub fn of(s: &PfcWatchdogSettings) -> Rule {
        Rule {
            detection: Duration::from_millis(s.detection_ms.into()),
            restoration: Duration::from_millis(s.restoration_ms.into()),
            min_readings: 2,
        }
    }
}

/// Readings in a row that all showed new pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    /// The reading before the first that showed them.
    start: Instant,
    readings: u32,
    frames: u64,
}

/// A storm in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Storm {
    pub since: Instant,
    pub direction: Direction,
    /// Since when no pause was seen either way (the reading before the first quiet one).
    quiet: Option<Instant>,
    pub rx_frames: u64,
    pub tx_frames: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Priority {
    rx: Option<Run>,
    tx: Option<Run>,
    storm: Option<Storm>,
}

/// A change of a priority's state, with its evidence.
#[derive(Debug, Clone, PartialEq)]
pub enum Transition {
    Storm {
        priority: u8,
        direction: Direction,
        /// How long every reading showed new pauses (0 for `driver`).
        window: Duration,
        readings: u32,
        /// Pause frames over the window (the direction's).
        frames: u64,
    },
    Over {
        priority: u8,
        direction: Direction,
        /// How long the storm lasted.
        stormed: Duration,
        /// How long no pause was seen (0 when it ends for another reason).
        quiet: Duration,
        rx_frames: u64,
        tx_frames: u64,
        /// `quiet`, `unwatched` (the priority or the watchdog was turned off) or
        /// `port_gone`.
        reason: &'static str,
    },
}

/// The watchdog of a port.
#[derive(Debug, Clone)]
pub struct Watchdog {
    pub enabled: bool,
    pub rule: Rule,
    pub action: WatchdogAction,
    /// The priorities watched: the only ones `forward` ever turns off.
    pub watched: PriorityMap,
    /// Each priority's runs and storm, while the watchdog is enabled (boxed: a port
    /// whose watchdog is off, the default, keeps 1.1 KB less).
    prios: Option<Box<[Priority; 8]>>,
    /// Storms declared and ended, per priority.
    pub storms: [u64; 8],
    pub restorations: [u64; 8],
}

impl Watchdog {
    /// `pfc_priorities`: the port's configured PFC priorities, watched unless the
    /// settings name others.
    pub fn new(s: &PfcWatchdogSettings, pfc_priorities: PriorityMap) -> Watchdog {
        Watchdog {
            enabled: s.enabled,
            rule: Rule::of(s),
            action: s.action,
            watched: watched(s, pfc_priorities),
            prios: s.enabled.then(Box::default),
            storms: [0; 8],
            restorations: [0; 8],
        }
    }

    /// New settings: storms on priorities no longer watched (or all, when the watchdog
    /// is turned off) are over; the evidence starts again.
    pub fn set_settings(
        &mut self,
        now: Instant,
        s: &PfcWatchdogSettings,
        pfc_priorities: PriorityMap,
    ) -> Vec<Transition> {
        self.enabled = s.enabled;
        self.rule = Rule::of(s);
        self.action = s.action;
        self.watched = watched(s, pfc_priorities);
        let keep = if self.enabled {
            self.watched
        } else {
            PriorityMap::NONE
        };
        let mut out = Vec::new();
        for (p, w) in (0..8u8).zip(self.prios.iter_mut().flat_map(|a| a.iter_mut())) {
            w.rx = None;
            w.tx = None;
            if !keep.contains(p) {
                if let Some(t) = end(now, p, w, Duration::ZERO, "unwatched") {
                    out.push(t);
                }
            }
        }
        // Off, every storm has ended above: nothing left to keep.
        match (self.enabled, &self.prios) {
            (false, _) => self.prios = None,
            (true, None) => self.prios = Some(Box::default()),
            (true, Some(_)) => {}
        }
        out
    }

    /// Each priority's state, in priority order; none while the watchdog is off.
    fn priorities(&self) -> &[Priority] {
        self.prios.as_deref().map_or(&[], |a| &a[..])
    }

    /// The priorities in storm.
    pub fn stormed(&self) -> PriorityMap {
        let mut m = PriorityMap::NONE;
        for (p, w) in self.priorities().iter().enumerate() {
            if w.storm.is_some() {
                m.0 |= 1 << p;
            }
        }
        m
    }

    pub fn storm(&self, priority: u8) -> Option<&Storm> {
        self.priorities()
            .get(usize::from(priority & 7))?
            .storm
            .as_ref()
    }

    /// The priorities whose PFC the action turns off now.
    pub fn forced_off(&self) -> PriorityMap {
        match self.action {
            WatchdogAction::Forward => PriorityMap(self.stormed().0 & self.watched.0),
            WatchdogAction::Alert => PriorityMap::NONE,
        }
    }

    /// A reading failed: no window spans it.
    pub fn gap(&mut self) {
        for w in self.prios.iter_mut().flat_map(|a| a.iter_mut()) {
            w.rx = None;
            w.tx = None;
            if let Some(s) = &mut w.storm {
                s.quiet = None;
            }
        }
    }

    /// When a reading could next change a verdict, after the reading taken at
    /// `last`: a run of readings with new pauses that one more reading could make a
    /// storm once its window reaches the detection time, or a storm's quiet that
    /// could end it once it reaches the restoration time; never sooner than
    /// `min_gap` after `last`, so that the deciding reading brings fresh evidence.
    /// The port reads then instead of waiting for its next round: a storm is
    /// declared when its window is complete, not up to an interval later.
    pub fn next_verdict(&self, last: Instant, min_gap: Duration) -> Option<Instant> {
        let prios = self.prios.as_deref().filter(|_| self.enabled)?;
        let rule = &self.rule;
        self.watched
            .priorities()
            .filter_map(|p| {
                let w = &prios[usize::from(p)];
                match &w.storm {
                    Some(s) => s.quiet.map(|q| q + rule.restoration),
                    None => [w.rx, w.tx]
                        .into_iter()
                        .flatten()
                        .filter(|r| r.readings + 1 >= rule.min_readings)
                        .map(|r| r.start + rule.detection)
                        .min(),
                }
            })
            .min()
            .map(|t| t.max(last + min_gap))
    }

    /// One reading, taken at `at`: the transitions it makes.
    pub fn observe(&mut self, at: Instant, reading: &Ingested) -> Vec<Transition> {
        let (Some(prev), Some(prios)) = (
            reading.prev_at.filter(|_| self.enabled),
            self.prios.as_deref_mut(),
        ) else {
            self.gap();
            return Vec::new();
        };
        let driver = matches!(reading.storm, Step::Delta(d) if d > 0);
        // The driver's counter is per port: it names the priorities that were sending
        // pauses, or every watched one when none was.
        let sending: Vec<u8> = self
            .watched
            .priorities()
            .filter(|p| matches!(reading.step(Counter::TxPause, *p), Step::Delta(d) if d > 0))
            .collect();
        let mut out = Vec::new();
        for p in self.watched.priorities() {
            let rx = reading.step(Counter::RxPause, p);
            let tx = reading.step(Counter::TxPause, p);
            let blamed = driver && (sending.is_empty() || sending.contains(&p));
            let w = &mut prios[usize::from(p)];
            if let Some(t) = step(&self.rule, w, p, prev, at, rx, tx, blamed) {
                match t {
                    Transition::Storm { .. } => self.storms[usize::from(p)] += 1,
                    Transition::Over { .. } => self.restorations[usize::from(p)] += 1,
                }
                out.push(t);
            }
        }
        out
    }
}

/// The priorities a port's watchdog watches: those the settings name, else the port's
/// PFC priorities.
pub(super) fn watched(s: &PfcWatchdogSettings, pfc_priorities: PriorityMap) -> PriorityMap {
    s.priorities.unwrap_or(pfc_priorities)
}

/// Extends (or breaks) a run of readings with new pauses.
fn extend(run: &mut Option<Run>, prev: Instant, step: Step) {
    match step {
        Step::Delta(d) if d > 0 => {
            let r = run.get_or_insert(Run {
                start: prev,
                readings: 0,
                frames: 0,
            });
            r.readings += 1;
            r.frames = r.frames.saturating_add(d);
        }
        _ => *run = None,
    }
}

/// One priority, one reading.
#[allow(clippy::too_many_arguments)]
fn step(
    rule: &Rule,
    w: &mut Priority,
    p: u8,
    prev: Instant,
    at: Instant,
    rx: Step,
    tx: Step,
    driver: bool,
) -> Option<Transition> {
    extend(&mut w.rx, prev, rx);
    extend(&mut w.tx, prev, tx);
    if let Some(storm) = &mut w.storm {
        storm.rx_frames = storm.rx_frames.saturating_add(rx.delta().unwrap_or(0));
        storm.tx_frames = storm.tx_frames.saturating_add(tx.delta().unwrap_or(0));
        let quiet = rx == Step::Delta(0) && matches!(tx, Step::Delta(0) | Step::Absent);
        if !quiet || driver {
            storm.quiet = None;
            return None;
        }
        let since = *storm.quiet.get_or_insert(prev);
        if at - since < rule.restoration {
            return None;
        }
        return end(at, p, w, at - since, "quiet");
    }
    let (direction, window, readings, frames) = if driver {
        (Direction::Driver, at - prev, 1, tx.delta().unwrap_or(0))
    } else if let Some(r) = due(rule, w.rx, at) {
        (Direction::Rx, at - r.start, r.readings, r.frames)
    } else if let Some(r) = due(rule, w.tx, at) {
        (Direction::Tx, at - r.start, r.readings, r.frames)
    } else {
        return None;
    };
    w.storm = Some(Storm {
        since: at,
        direction,
        quiet: None,
        rx_frames: 0,
        tx_frames: 0,
    });
    w.rx = None;
    w.tx = None;
    Some(Transition::Storm {
        priority: p,
        direction,
        window,
        readings,
        frames,
    })
}

fn due(rule: &Rule, run: Option<Run>, at: Instant) -> Option<Run> {
    run.filter(|r| r.readings >= rule.min_readings && at - r.start >= rule.detection)
}

fn end(
    at: Instant,
    p: u8,
    w: &mut Priority,
    quiet: Duration,
    reason: &'static str,
) -> Option<Transition> {
    let s = w.storm.take()?;
    Some(Transition::Over {
        priority: p,
        direction: s.direction,
        stormed: at - s.since,
        quiet,
        rx_frames: s.rx_frames,
        tx_frames: s.tx_frames,
        reason,
    })
}

#[cfg(test)]
#[path = "watchdog_tests.rs"]
mod tests;

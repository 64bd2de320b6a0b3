//! PFC counters per priority: what one reading of the driver says ([`PfcSample`]), and
//! totals that never go down ([`PfcCounters`]) across driver resets, 32- or 64-bit
//! wraps and counters that vanish (a driver reload) and come back.
//!
//! Each reading is turned into a [`Step`] per counter (`track.rs`, which the RDMA
//! counters share): the frames since the previous reading, or why there is no such number. A discontinuity (reset, wrap, vanished) is
//! counted and breaks the watchdog's evidence; it is never taken for pauses.

use lossless_dcbx::Instant;
use serde::{Deserialize, Serialize};

use super::rdma::{RoceCounter, RoceCounters, RoceSample};
pub use super::track::{Discontinuity, DiscontinuityCounts, Step, Track};

/// One reading of a port's PFC counters, as the runtime got it: from dcbnl's IEEE PFC
/// object (`DCB_CMD_IEEE_GET`: `requests` sent, `indications` received) and, where the
/// driver exposes them, its ethtool statistics (mlx5's `rx_prio<N>_pause`,
/// `*_pause_duration`, `*_pause_transition`, `tx_pause_storm_error_events`, the drops
/// per priority `rx_prio<N>_discards`; each driver's names in [`super::names`]). A
/// counter the driver does not report is None. With them, the port's RDMA hw counters
/// (`roce`, None: the port has no RDMA device, or they were not read).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PfcSample {
    /// Where the counters came from.
    pub source: PfcSource,
    /// One array per [`Counter`], indexed by priority.
    pub counters: [[Option<u64>; 8]; Counter::COUNT],
    /// The driver's own storm counter for the port (mlx5:
    /// `tx_pause_storm_error_events`, the device kept pausing and stopped).
    pub storm_events: Option<u64>,
    /// The RDMA device's congestion and retransmission counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roce: Option<RoceSample>,
}

impl PfcSample {
    /// A sample with only the dcbnl pause counters.
    pub fn dcbnl(requests: [u64; 8], indications: [u64; 8]) -> PfcSample {
        let mut s = PfcSample::default();
        s.counters[Counter::TxPause as usize] = requests.map(Some);
        s.counters[Counter::RxPause as usize] = indications.map(Some);
        s
    }

    pub fn get(&self, c: Counter, priority: u8) -> Option<u64> {
        self.counters[c as usize][usize::from(priority & 7)]
    }

    pub fn set(&mut self, c: Counter, priority: u8, v: Option<u64>) {
        self.counters[c as usize][usize::from(priority & 7)] = v;
    }

    /// Whether it holds any counter at all.
    pub fn is_empty(&self) -> bool {
        self.storm_events.is_none() && self.counters.iter().flatten().all(Option::is_none)
    }
}

pub use lossless_proto::pfc::PfcSource;

/// The counters kept per priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    /// PFC frames received (we were asked to pause): dcbnl `indications`.
    RxPause = 0,
    /// PFC frames sent (we asked the peer to pause): dcbnl `requests`.
    TxPause = 1,
    /// Time paused by the peer, microseconds (mlx5 `rx_prio<N>_pause_duration`).
    RxPauseDuration = 2,
    /// Time we paused the peer, microseconds.
    TxPauseDuration = 3,
    /// Pause on/off transitions received (`rx_prio<N>_pause_transition`).
    RxPauseTransitions = 4,
    /// Pause on/off transitions sent.
    TxPauseTransitions = 5,
    /// Packets received on the priority and dropped for lack of receive buffer: the
    /// port's buffer overflowed (mlx5 `rx_prio<N>_discards`). On a PFC priority, the
    /// headroom was too small or the peer did not honour the pause.
    RxDiscards = 6,
    /// Dropped for lack of the host's receive buffer (mlx5 `rx_prio<N>_buf_discard`).
    RxHostBufferDiscards = 7,
    /// Dropped for the host's congestion (mlx5 `rx_prio<N>_cong_discard`).
    RxHostCongestionDiscards = 8,
}

impl Counter {
    pub const COUNT: usize = 9;
    pub const ALL: [Counter; Counter::COUNT] = [
        Counter::RxPause,
        Counter::TxPause,
        Counter::RxPauseDuration,
        Counter::TxPauseDuration,
        Counter::RxPauseTransitions,
        Counter::TxPauseTransitions,
        Counter::RxDiscards,
        Counter::RxHostBufferDiscards,
        Counter::RxHostCongestionDiscards,
    ];
    /// The discard counters, with the `kind` label `lossless_priority_discards_total`
    /// gives each.
    pub const DISCARDS: [(Counter, &'static str); 3] = [
        (Counter::RxDiscards, "no_buffer"),
        (Counter::RxHostBufferDiscards, "host_buffer"),
        (Counter::RxHostCongestionDiscards, "host_congestion"),
    ];

    pub fn name(self) -> &'static str {
        match self {
            Counter::RxPause => "rx_pause",
            Counter::TxPause => "tx_pause",
            Counter::RxPauseDuration => "rx_pause_duration",
            Counter::TxPauseDuration => "tx_pause_duration",
            Counter::RxPauseTransitions => "rx_pause_transitions",
            Counter::TxPauseTransitions => "tx_pause_transitions",
            Counter::RxDiscards => "rx_discards",
            Counter::RxHostBufferDiscards => "rx_host_buffer_discards",
            Counter::RxHostCongestionDiscards => "rx_host_congestion_discards",
        }
    }
}

/// What one reading changed: each counter's step, and the discontinuities found.
#[derive(Debug, Clone)]
pub struct Ingested {
    pub steps: [[Step; 8]; Counter::COUNT],
    pub storm: Step,
    /// When the previous reading was taken (None: this is the first in a row).
    pub prev_at: Option<Instant>,
    /// (counter, priority, what happened); the storm counter has no priority.
    pub discontinuities: Vec<(Option<Counter>, Option<u8>, Discontinuity)>,
    /// The RDMA counters that did not continue from their last value.
    pub roce_discontinuities: Vec<(RoceCounter, Discontinuity)>,
}

impl Ingested {
    pub fn step(&self, c: Counter, priority: u8) -> Step {
        self.steps[c as usize][usize::from(priority & 7)]
    }
}

/// A port's PFC counter totals and the rates of the last interval.
#[derive(Debug, Clone, Default)]
pub struct PfcCounters {
    /// Every counter per priority, from the first reading that had any (boxed: a
    /// port whose driver has none, a veth or a NIC without PFC statistics, keeps
    /// 1.9 KB less).
    per_priority: Option<Box<PerPriority>>,
    storm: Track,
    pub discontinuities: DiscontinuityCounts,
    /// Readings taken, and readings that failed.
    pub samples: u64,
    pub failures: u64,
    /// When the last reading was taken; None before the first or after a failure.
    last_at: Option<Instant>,
    /// Where the last reading came from.
    pub source: Option<PfcSource>,
    /// Why the counters are not available (the last reading failed or was empty).
    pub unavailable: Option<String>,
    /// The RDMA device's counters (none on a port without one).
    pub roce: RoceCounters,
}

/// The counters of each priority: totals, and the rates of the last interval.
#[derive(Debug, Clone, Default)]
struct PerPriority {
    tracks: [[Track; 8]; Counter::COUNT],
    /// Each counter's change over the last interval, per second (None: not known).
    rates: [[Option<f64>; 8]; Counter::COUNT],
}

impl PfcCounters {
    /// Takes a reading made at `at`.
    pub fn ingest(&mut self, at: Instant, sample: &PfcSample) -> Ingested {
        self.samples += 1;
        let prev_at = self.last_at.replace(at);
        let seconds = prev_at.map(|p| (at - p).as_secs_f64()).filter(|s| *s > 0.0);
        let mut out = Ingested {
            steps: [[Step::Absent; 8]; Counter::COUNT],
            storm: Step::Absent,
            prev_at,
            discontinuities: Vec::new(),
            roce_discontinuities: Vec::new(),
        };
        // With no counter now nor ever before, every step is Absent and every
        // rate unknown: what the default tracks would say.
        let any = sample.counters.iter().flatten().any(Option::is_some);
        if any || self.per_priority.is_some() {
            let pp = self.per_priority.get_or_insert_with(Box::default);
            for c in Counter::ALL {
                for p in 0..8u8 {
                    let (ci, pi) = (c as usize, usize::from(p));
                    let step = pp.tracks[ci][pi].update(sample.get(c, p));
                    if let Step::Broken(d) = step {
                        self.discontinuities.count(&d);
                        out.discontinuities.push((Some(c), Some(p), d));
                    }
                    pp.rates[ci][pi] = match (step, seconds) {
                        (Step::Delta(d), Some(s)) => Some(d as f64 / s),
                        _ => None,
                    };
                    out.steps[ci][pi] = step;
                }
            }
        }
        out.storm = self.storm.update(sample.storm_events);
        if let Step::Broken(d) = out.storm {
            self.discontinuities.count(&d);
            out.discontinuities.push((None, None, d));
        }
        out.roce_discontinuities = self.roce.ingest(seconds, sample.roce.as_ref());
        self.source = Some(sample.source);
        self.unavailable = sample
            .is_empty()
            .then(|| "the driver reported no PFC counter".to_string());
        out
    }

    /// The counters come from elsewhere from now on (the driver's, or the frames the
    /// host received, instead of the other): every per-priority counter starts a new
    /// baseline, neither a delta nor a discontinuity across the change.
    pub fn new_source(&mut self) {
        self.last_at = None;
        if let Some(pp) = &mut self.per_priority {
            for t in pp.tracks.iter_mut().flatten() {
                t.last = None;
            }
            pp.rates = [[None; 8]; Counter::COUNT];
        }
    }

    /// A reading failed: the next one starts a new row (no interval spans the gap).
    pub fn failed(&mut self, reason: String) {
        self.failures += 1;
        self.last_at = None;
        if let Some(pp) = &mut self.per_priority {
            pp.rates = [[None; 8]; Counter::COUNT];
        }
        self.roce.failed();
        self.unavailable = Some(reason);
    }

    fn track(&self, c: Counter, priority: u8) -> Track {
        self.per_priority
            .as_ref()
            .map(|pp| pp.tracks[c as usize][usize::from(priority & 7)])
            .unwrap_or_default()
    }

    pub fn total(&self, c: Counter, priority: u8) -> Option<u64> {
        let t = self.track(c, priority);
        (t.last.is_some() || t.total > 0).then_some(t.total)
    }

    /// Whether the counter is reported now.
    pub fn present(&self, c: Counter, priority: u8) -> bool {
        self.track(c, priority).last.is_some()
    }

    pub fn rate(&self, c: Counter, priority: u8) -> Option<f64> {
        self.per_priority
            .as_ref()
            .and_then(|pp| pp.rates[c as usize][usize::from(priority & 7)])
    }

    /// The driver's storm counter, total.
    pub fn storm_total(&self) -> Option<u64> {
        (self.storm.last.is_some() || self.storm.total > 0).then_some(self.storm.total)
    }

    pub fn available(&self) -> bool {
        self.samples > 0 && self.unavailable.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_without_counters_keeps_none_per_priority() {
        let mut c = PfcCounters::default();
        let t0 = Instant::ZERO;
        let at = |ms: u64| t0 + std::time::Duration::from_millis(ms);
        let i = c.ingest(t0, &PfcSample::default());
        assert!(c.per_priority.is_none(), "nothing kept for no counter");
        assert_eq!(i.step(Counter::RxPause, 3), Step::Absent);
        assert_eq!(c.total(Counter::RxPause, 3), None);
        assert_eq!(c.rate(Counter::RxPause, 3), None);
        c.ingest(at(200), &PfcSample::dcbnl([0; 8], [7; 8]));
        let i = c.ingest(at(400), &PfcSample::dcbnl([0; 8], [9; 8]));
        assert_eq!(i.step(Counter::RxPause, 3), Step::Delta(2));
        assert_eq!(c.rate(Counter::RxPause, 3), Some(10.0));
        // Gone again: the kept totals say they vanished.
        let i = c.ingest(at(600), &PfcSample::default());
        assert_eq!(
            i.step(Counter::RxPause, 3),
            Step::Broken(Discontinuity::Vanished { before: 9 })
        );
        assert_eq!(c.total(Counter::RxPause, 3), Some(2));
        assert!(!c.present(Counter::RxPause, 3));
    }

    #[test]
    fn a_failed_reading_leaves_no_interval_across_the_gap() {
        let mut c = PfcCounters::default();
        let t0 = Instant::ZERO;
        let at = |ms: u64| t0 + std::time::Duration::from_millis(ms);
        let s = |n: u64| PfcSample::dcbnl([0; 8], [n; 8]);
        assert_eq!(c.ingest(t0, &s(0)).prev_at, None);
        let i = c.ingest(at(200), &s(10));
        assert_eq!(i.prev_at, Some(t0));
        assert_eq!(i.step(Counter::RxPause, 3), Step::Delta(10));
        assert_eq!(c.rate(Counter::RxPause, 3), Some(50.0));
        c.failed("EBUSY".into());
        assert!(!c.available());
        let i = c.ingest(at(600), &s(30));
        assert_eq!(i.prev_at, None);
        assert_eq!(c.total(Counter::RxPause, 3), Some(30));
        assert!(c.available());
        assert_eq!(c.total(Counter::RxPauseDuration, 3), None);
    }
}

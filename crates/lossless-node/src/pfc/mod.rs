//! PFC per priority on a port: the counters the driver reports, read every interval,
//! and the storm watchdog that watches them (`[ports."X".pfc_watchdog]`).
//!
//! Sans-IO like the rest of the node core: the port asks for a reading when its
//! interval is due ([`PortPfc::due`] → `Output::ReadPfc`), the runtime reads dcbnl (and
//! ethtool) and answers with a [`PfcSample`]; the counters make totals that never go
//! down ([`counters`]), the watchdog decides ([`watchdog`]), the node carries out the
//! action (PFC off on a stormed priority through the normal programming path).

pub mod counters;
pub mod host;
pub mod metrics;
pub mod names;
pub mod rdma;
pub mod track;
pub mod view;
pub mod watchdog;

use lossless_dcbx::{Duration, Instant};
use lossless_wire::cee::PriorityMap;

pub use counters::{Counter, Discontinuity, PfcCounters, PfcSample, PfcSource};
pub use host::{HostCounts, HostPfc};
pub use rdma::{RoceCounter, RoceSample, RoceValue};
pub use watchdog::{Direction, Transition, Watchdog};

use crate::config::{PfcWatchdogSettings, WatchdogAction};

/// After a reading that says the driver has no counters, the next is this much later.
/// A driver that has none gets them by a reload, and the interface then goes and comes
/// back: a new port, read at once. Asking every 10 s instead cost 4,096 veth ports 410
/// dcbnl requests a second. (Reading again at each link change was tried: 4,096 ports
/// coming up asked at once, in the middle of the kernel's link-up, and the link-up
/// took longer than the kernel's alone.)
pub const UNAVAILABLE_RETRY: Duration = Duration::from_secs(60);

/// A port's PFC counters and watchdog, and when it reads next.
#[derive(Debug, Clone)]
pub struct PortPfc {
    pub counters: PfcCounters,
    pub watchdog: Watchdog,
    pub settings: PfcWatchdogSettings,
    interval: Duration,
    next: Instant,
    /// A reading out of the cadence, when the watchdog's next verdict could come
    /// before the next round ([`watchdog::Watchdog::next_verdict`]).
    early: Option<Instant>,
    /// A reading was asked for and not answered yet.
    pub reading: bool,
    /// The port programs its NIC (`apply = "dcbnl"` and a NIC that answered): only then
    /// does `forward` turn PFC off.
    pub can_forward: bool,
    /// The PFC frames the host received, from the port's first one (boxed: most ports
    /// never receive one), and whether they stand in for the driver's counters.
    pub host: Option<Box<HostPfc>>,
}

impl PortPfc {
    /// The first reading is due at once.
    pub fn new(s: &PfcWatchdogSettings, pfc_priorities: PriorityMap, now: Instant) -> PortPfc {
        PortPfc {
            counters: PfcCounters::default(),
            watchdog: Watchdog::new(s, pfc_priorities),
            settings: *s,
            interval: Duration::from_millis(s.interval_ms.into()),
            next: now,
            early: None,
            reading: false,
            can_forward: false,
            host: None,
        }
    }

    /// A frame received on the port, before the receive budget: counted if it is MAC
    /// Control ([`host`]).
    pub fn host_frame(&mut self, frame: &[u8]) {
        if frame.get(12..14) == Some(&[0x88, 0x08]) {
            host::count(
                &mut self.host.get_or_insert_with(Box::default).counts,
                frame,
            );
        }
    }

    /// The host's counts, while they stand in for the driver's.
    pub fn host_source(&self) -> Option<&HostPfc> {
        self.host.as_deref().filter(|h| h.standing_in.is_some())
    }

    /// The driver has no PFC counters (`why`): with the watchdog on, the host's counts
    /// stand in for them until the driver is asked again, [`UNAVAILABLE_RETRY`] later;
    /// the reading to take instead. None with the watchdog off (the driver is asked
    /// again then, and nothing watches).
    pub fn stand_in(&mut self, now: Instant, why: String) -> Option<PfcSample> {
        if !self.settings.enabled {
            return None;
        }
        let host = self.host.get_or_insert_with(Box::default);
        if host.standing_in.is_none() {
            self.counters.new_source();
        }
        host.standing_in = Some((now + UNAVAILABLE_RETRY, why));
        Some(host::sample(&host.counts))
    }

    /// The driver reports counters (again): the host's stop standing in.
    pub fn stand_down(&mut self) {
        if let Some(h) = self.host.as_deref_mut() {
            if h.standing_in.take().is_some() {
                self.counters.new_source();
            }
        }
    }

    /// A reading is due ([`PortPfc::due`] said so) while the host's counts stand in:
    /// the reading, taken from them, unless the driver is to be asked again (None).
    pub fn host_reading(&self, now: Instant) -> Option<PfcSample> {
        let h = self.host_source()?;
        let (retry, _) = h.standing_in.as_ref()?;
        (now < *retry).then(|| host::sample(&h.counts))
    }

    /// New settings (a reload or a runtime change); the transitions they make.
    pub fn set_settings(
        &mut self,
        now: Instant,
        s: &PfcWatchdogSettings,
        pfc_priorities: PriorityMap,
    ) -> Vec<Transition> {
        let interval = Duration::from_millis(s.interval_ms.into());
        if interval != self.interval {
            self.interval = interval;
            self.next = self.next.min(now + interval);
        }
        // The watchdog's evidence starts again (below): so does its timing.
        self.early = None;
        let same =
            *s == self.settings && self.watchdog.watched == watchdog::watched(s, pfc_priorities);
        if s.enabled && !self.settings.enabled && !self.counters.available() {
            // Turned on where the driver had no counters: the host's stand in at once.
            self.next = self.next.min(now);
        }
        self.settings = *s;
        if !s.enabled {
            // Nothing watches: the driver is asked again at the next reading.
            self.stand_down();
        }
        if same {
            return Vec::new();
        }
        self.watchdog.set_settings(now, s, pfc_priorities)
    }

    /// When the next reading is due (None while one is out).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let at = self.early.map_or(self.next, |e| e.min(self.next));
        (!self.reading).then_some(at)
    }

    /// Whether a reading is due now; if so it counts as asked for.
    pub fn due(&mut self, now: Instant) -> bool {
        if self.reading {
            return false;
        }
        if now < self.next {
            // A reading out of the cadence leaves the rounds where they are.
            if self.early.is_some_and(|e| e <= now) {
                self.early = None;
                self.reading = true;
                return true;
            }
            return false;
        }
        self.early = None;
        self.reading = true;
        // Readings keep their cadence; one that was late does not push the rest, one
        // later than a whole interval starts the cadence again from now.
        let next = self.next + self.interval;
        self.next = if next > now {
            next
        } else {
            now + self.interval
        };
        true
    }

    /// A reading came back, taken at `now`: the watchdog's transitions, and an event
    /// for each counter that did not continue from its last value.
    pub fn handle_sample(
        &mut self,
        now: Instant,
        sample: &PfcSample,
    ) -> (Vec<Transition>, Vec<PfcEvent>) {
        self.reading = false;
        let i = self.counters.ingest(now, sample);
        let events = i
            .discontinuities
            .iter()
            .map(|(c, p, what)| PfcEvent::PfcCounterDiscontinuity {
                counter: c.map_or("storm_events", |c| c.name()).into(),
                priority: *p,
                what: *what,
            })
            .chain(i.roce_discontinuities.iter().map(|(c, what)| {
                PfcEvent::PfcCounterDiscontinuity {
                    counter: c.name().into(),
                    priority: None,
                    what: *what,
                }
            }))
            .collect();
        if sample.is_empty() {
            self.next = self.next.max(now + UNAVAILABLE_RETRY);
            self.watchdog.gap();
            return (Vec::new(), events);
        }
        let transitions = self.watchdog.observe(now, &i);
        // Half an interval of fresh evidence at least, and never a reading more
        // often than that.
        self.early = self
            .watchdog
            .next_verdict(now, self.interval / 2)
            .filter(|t| *t < self.next);
        (transitions, events)
    }

    /// A reading failed (`retry_later`: the driver has no counters at all).
    pub fn handle_failure(&mut self, now: Instant, reason: String, retry_later: bool) {
        self.reading = false;
        self.early = None;
        self.counters.failed(reason);
        self.watchdog.gap();
        if retry_later {
            self.next = self.next.max(now + UNAVAILABLE_RETRY);
        }
    }

    /// The priorities whose PFC the watchdog turns off now (none on a port that does
    /// not program its NIC).
    pub fn forced_off(&self) -> PriorityMap {
        if self.can_forward {
            self.watchdog.forced_off()
        } else {
            PriorityMap::NONE
        }
    }

    pub fn action(&self) -> WatchdogAction {
        self.watchdog.action
    }
}

pub use lossless_proto::pfc::PfcEvent;

/// Milliseconds of a duration, for events and views.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_keep_their_cadence_and_a_very_late_one_restarts_it() {
        let s = PfcWatchdogSettings::default(); // every 200 ms
        let mut p = PortPfc::new(&s, PriorityMap::NONE, at(0));
        assert!(p.due(at(0)), "the first reading is due at once");
        assert!(!p.due(at(10)), "one reading out at a time");
        p.reading = false;
        assert!(!p.due(at(199)));
        assert!(p.due(at(250)), "50 ms late");
        p.reading = false;
        assert_eq!(p.poll_timeout(), Some(at(400)), "the cadence holds");
        assert!(p.due(at(900)), "more than an interval late");
        p.reading = false;
        assert_eq!(p.poll_timeout(), Some(at(1100)), "the cadence starts again");
        assert!(p.due(at(1100)));
        p.reading = false;
        assert_eq!(p.poll_timeout(), Some(at(1300)), "exactly on time");
    }

    fn at(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn a_driver_without_counters_is_asked_again_a_minute_later() {
        let s = PfcWatchdogSettings::default();
        let mut p = PortPfc::new(&s, PriorityMap::NONE, at(0));
        assert!(p.due(at(0)));
        p.handle_failure(at(5), "no DCB netlink".into(), true);
        assert_eq!(p.poll_timeout(), Some(at(60_005)));
        assert!(!p.due(at(60_000)));
        assert!(p.due(at(60_005)));
    }

    /// A port watching priority 3, read at the times a test says, its pause
    /// indications rising by 1000 between two readings when `pausing`.
    struct Watched {
        port: PortPfc,
        rx: u64,
    }

    impl Watched {
        fn new(s: &PfcWatchdogSettings) -> Watched {
            Watched {
                port: PortPfc::new(s, PriorityMap(1 << 3), at(0)),
                rx: 0,
            }
        }

        fn read(&mut self, t: u64, pausing: bool) -> Vec<Transition> {
            assert!(self.port.due(at(t)), "a reading is due at {t} ms");
            self.rx += u64::from(pausing) * 1000;
            let mut i = [0; 8];
            i[3] = self.rx;
            self.port
                .handle_sample(at(t), &PfcSample::dcbnl([0; 8], i))
                .0
        }
    }

    /// A storm that begins just after a round: the first reading with pauses opens a
    /// window that already spans the detection time, so the deciding reading comes
    /// half an interval later, not a whole one; the rounds keep their cadence; and once
    /// quiet, the reading that ends the storm comes when the quiet spans the
    /// restoration time.
    #[test]
    fn a_verdict_is_read_when_its_window_is_complete() {
        let s = PfcWatchdogSettings {
            enabled: true,
            ..PfcWatchdogSettings::default() // every 200 ms, detection and restoration 200 ms
        };
        let mut p = Watched::new(&s);
        assert!(p.read(0, false).is_empty());
        assert_eq!(p.port.poll_timeout(), Some(at(200)));
        // The storm begins at 1 ms.
        assert!(p.read(200, true).is_empty());
        assert_eq!(
            p.port.poll_timeout(),
            Some(at(300)),
            "half an interval after"
        );
        let t = p.read(300, true);
        assert!(
            matches!(t[..], [Transition::Storm { priority: 3, readings: 2, window, .. }]
                if window == Duration::from_millis(300)),
            "{t:?}"
        );
        assert_eq!(
            p.port.poll_timeout(),
            Some(at(400)),
            "the round at 400 ms stays"
        );
        assert!(p.read(400, true).is_empty());
        // Quiet since the reading at 400 ms: the round at 600 ms spans the restoration.
        let t = p.read(600, false);
        assert!(
            matches!(
                t[..],
                [Transition::Over {
                    priority: 3,
                    reason: "quiet",
                    ..
                }]
            ),
            "{t:?}"
        );
        assert_eq!(p.port.poll_timeout(), Some(at(800)));

        // Longer times: the deciding reading when the window completes.
        let long = PfcWatchdogSettings {
            detection_ms: 500,
            restoration_ms: 250,
            ..s
        };
        let mut p = Watched::new(&long);
        p.read(0, true);
        for t in [200, 400] {
            assert!(p.read(t, true).is_empty());
        }
        assert_eq!(
            p.port.poll_timeout(),
            Some(at(500)),
            "the window from 0 ms completes"
        );
        assert!(matches!(p.read(500, true)[..], [Transition::Storm { .. }]));
        assert_eq!(p.port.poll_timeout(), Some(at(600)), "the round");
        assert!(p.read(600, false).is_empty());
        assert_eq!(
            p.port.poll_timeout(),
            Some(at(750)),
            "quiet since 500 ms spans 250 ms"
        );
        let t = p.read(750, false);
        assert!(matches!(t[..], [Transition::Over { .. }]), "{t:?}");
        assert_eq!(
            p.port.poll_timeout(),
            Some(at(800)),
            "the rounds kept their cadence"
        );
    }
}

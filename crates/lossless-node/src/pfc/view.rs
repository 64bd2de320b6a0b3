//! `pfc show`: per port and priority, the frames each way, their rates, the share of
//! time paused where the driver reports it, the watchdog's state and the drops; per
//! port, the RDMA device's congestion and retransmission counters.

use lossless_dcbx::Instant;
use lossless_wire::cee::PriorityMap;
use serde::{Deserialize, Serialize};

use super::counters::{Counter, DiscontinuityCounts};
use super::rdma::{Family, RoceCounter, RoceCounters};
use super::{ms, PortPfc};
use crate::config::WatchdogAction;

/// One port of `pfc show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortPfcView {
    pub port: String,
    /// Whether the driver reports PFC counters (false: see `reason`).
    pub available: bool,
    /// Where they come from: `dcbnl`, `ethtool`, `dcbnl+ethtool`, or `host` (the
    /// driver has none: the PFC frames the host received, [`super::host`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Why they are not available (the driver's answer), or null; with `source`
    /// `host`, why the driver's are not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The PFC and PAUSE frames the host received on the port, counted from the
    /// packet socket whatever the driver reports (absent: none yet). With `source`
    /// `host` they are the watchdog's counters: pauses received only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<super::HostCounts>,
    pub interval_ms: u32,
    /// Readings taken, and readings that failed.
    pub samples: u64,
    pub failures: u64,
    pub discontinuities: DiscontinuityCounts,
    /// The driver's storm counter (mlx5 `tx_pause_storm_error_events`), where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_storm_events: Option<u64>,
    pub watchdog: WatchdogView,
    pub priorities: Vec<PriorityView>,
    /// The RDMA device's congestion and retransmission counters (absent: the port has
    /// no RDMA device, or none was read yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roce: Option<RoceView>,
}

/// The RDMA device's hw counters on a port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoceView {
    /// The RDMA device and its port, from the last reading that had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma_port: Option<u32>,
    /// What could not be read, or why there is no device now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub discontinuities: DiscontinuityCounts,
    pub counters: Vec<RoceCounterView>,
}

/// One hw counter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoceCounterView {
    /// What it counts (`cnp_sent`, `cnp_handled`, `cnp_ignored`, `ecn_marked`,
    /// `out_of_buffer`, or a retransmission's reason).
    pub counter: RoceCounter,
    /// True for the counters of `lossless_roce_retransmissions_total`.
    pub retransmission: bool,
    /// The driver's name for it.
    pub name: String,
    /// Since the port was added (null: never reported).
    pub total: Option<u64>,
    /// Per second over the last interval.
    pub rate: Option<f64>,
    /// Reported by the last reading.
    pub present: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchdogView {
    pub enabled: bool,
    pub action: WatchdogAction,
    pub detection_ms: u32,
    pub restoration_ms: u32,
    /// The priorities watched.
    pub priorities: Vec<u8>,
}

/// One priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityView {
    pub priority: u8,
    /// PFC runs on it now (negotiated, and not turned off by the watchdog).
    pub pfc: bool,
    /// Frames received (we were paused) and sent (we paused the peer), since the port
    /// was added; null where the driver does not report them.
    pub rx_frames: Option<u64>,
    pub tx_frames: Option<u64>,
    /// Frames per second over the last interval.
    pub rx_rate: Option<f64>,
    pub tx_rate: Option<f64>,
    /// Share of the last interval paused, 0..1, where the driver reports pause time.
    pub rx_paused: Option<f64>,
    pub tx_paused: Option<f64>,
    /// `off` (not watched), `ok`, or `storm`.
    pub state: String,
    /// The storm's side and since how long, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<super::Direction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storm_ms: Option<f64>,
    /// PFC turned off by the watchdog (`forward`).
    pub forced_off: bool,
    pub storms: u64,
    pub restorations: u64,
    /// Packets received on the priority and dropped, by kind (`no_buffer`,
    /// `host_buffer`, `host_congestion`), where the driver counts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discards: Vec<DiscardView>,
}

/// One kind of drop on a priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscardView {
    pub kind: String,
    /// Since the port was added.
    pub total: u64,
    /// Per second over the last interval.
    pub rate: Option<f64>,
}

impl PriorityView {
    /// Every kind of drop together (None: the driver counts none).
    pub fn discards_total(&self) -> Option<u64> {
        (!self.discards.is_empty()).then(|| self.discards.iter().map(|d| d.total).sum())
    }

    /// Their rate together, when every kind's is known.
    pub fn discard_rate(&self) -> Option<f64> {
        if self.discards.is_empty() {
            return None;
        }
        self.discards.iter().map(|d| d.rate).sum()
    }
}

impl PortPfcView {
    /// `applied`: the PFC priorities the port runs as negotiated.
    pub fn of(port: &str, applied: PriorityMap, pfc: &PortPfc, now: Instant) -> PortPfcView {
        let c = &pfc.counters;
        let w = &pfc.watchdog;
        let forced = pfc.forced_off();
        // µs paused per second of interval, as a share.
        let share = |counter: Counter, p: u8| c.rate(counter, p).map(|r| (r / 1e6).clamp(0.0, 1.0));
        let priorities = (0..8u8)
            .map(|p| {
                let storm = w.storm(p);
                let state = match (w.enabled && w.watched.contains(p), storm) {
                    (_, Some(_)) => "storm",
                    (true, None) => "ok",
                    (false, None) => "off",
                };
                PriorityView {
                    priority: p,
                    pfc: applied.contains(p) && !forced.contains(p),
                    rx_frames: c.total(Counter::RxPause, p),
                    tx_frames: c.total(Counter::TxPause, p),
                    rx_rate: c.rate(Counter::RxPause, p),
                    tx_rate: c.rate(Counter::TxPause, p),
                    rx_paused: share(Counter::RxPauseDuration, p),
                    tx_paused: share(Counter::TxPauseDuration, p),
                    state: state.to_string(),
                    direction: storm.map(|s| s.direction),
                    storm_ms: storm.map(|s| ms(now - s.since)),
                    forced_off: forced.contains(p),
                    storms: w.storms[usize::from(p)],
                    restorations: w.restorations[usize::from(p)],
                    discards: Counter::DISCARDS
                        .iter()
                        .filter_map(|&(counter, kind)| {
                            Some(DiscardView {
                                kind: kind.to_string(),
                                total: c.total(counter, p)?,
                                rate: c.rate(counter, p),
                            })
                        })
                        .collect(),
                }
            })
            .collect();
        PortPfcView {
            port: port.to_string(),
            available: c.available(),
            source: c
                .source
                .filter(|_| c.available())
                .map(|s| s.name().to_string()),
            reason: c
                .unavailable
                .clone()
                .or_else(|| {
                    let (_, why) = pfc.host_source()?.standing_in.as_ref()?;
                    Some(why.clone())
                })
                .or_else(|| {
                    (c.samples == 0 && c.failures == 0).then(|| "not read yet".to_string())
                }),
            host: pfc.host.as_ref().map(|h| h.counts),
            interval_ms: pfc.settings.interval_ms,
            samples: c.samples,
            failures: c.failures,
            discontinuities: c.discontinuities,
            driver_storm_events: c.storm_total(),
            watchdog: WatchdogView {
                enabled: w.enabled,
                action: w.action,
                detection_ms: pfc.settings.detection_ms,
                restoration_ms: pfc.settings.restoration_ms,
                priorities: w.watched.priorities().collect(),
            },
            priorities,
            roce: roce_view(&c.roce),
        }
    }
}

fn roce_view(r: &RoceCounters) -> Option<RoceView> {
    if r.device.is_none() && r.tracks.is_empty() {
        return None;
    }
    Some(RoceView {
        device: r.device.as_ref().map(|(d, _)| d.clone()),
        rdma_port: r.device.as_ref().map(|(_, p)| *p),
        error: r.error.clone().or_else(|| {
            (!r.present() && !r.tracks.is_empty())
                .then(|| "the RDMA device is gone (its counters vanished)".to_string())
        }),
        discontinuities: r.discontinuities,
        counters: r
            .tracks
            .iter()
            .map(|t| RoceCounterView {
                counter: t.counter,
                retransmission: matches!(t.counter.family(), Family::Retransmission(_)),
                name: t.name.clone(),
                total: t.total(),
                rate: t.rate,
                present: t.track.last().is_some(),
            })
            .collect(),
    })
}

//! `pfc show`: per port and priority, the frames each way, their rates, the share of
//! time paused where the driver reports it, the watchdog's state and the drops; per
//! port, the RDMA device's congestion and retransmission counters.
//!
//! The views are `lossless-proto`'s (re-exported here); the node builds them from a
//! port's counters and watchdog ([`port_pfc_view`]).

use lossless_dcbx::Instant;
use lossless_wire::cee::PriorityMap;

pub use lossless_proto::pfc::{
    DiscardView, PortPfcView, PriorityView, RoceCounterView, RoceView, WatchdogView,
};

use super::counters::Counter;
use super::rdma::{family, Family, RoceCounters};
use super::{ms, PortPfc};

/// One port of `pfc show`; `applied`: the PFC priorities the port runs as negotiated.
pub fn port_pfc_view(port: &str, applied: PriorityMap, pfc: &PortPfc, now: Instant) -> PortPfcView {
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
            .or_else(|| (c.samples == 0 && c.failures == 0).then(|| "not read yet".to_string())),
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
                retransmission: matches!(family(t.counter), Family::Retransmission(_)),
                name: t.name.clone(),
                total: t.total(),
                rate: t.rate,
                present: t.track.last().is_some(),
            })
            .collect(),
    })
}

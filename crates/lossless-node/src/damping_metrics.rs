//! The dampening's series on /metrics (see [`crate::damping`]).

use crate::damping::Damping;

/// The dampening's metrics, a sample per port: the gauge whether the peer flaps now,
/// the counters of flaps, coalesced programmings and events not kept.
pub(crate) fn render_metrics(out: &mut String, ports: &[&crate::port::Port]) {
    use std::fmt::Write;
    type Get = fn(&Damping) -> u64;
    let series: [(&str, &str, &str, Get); 4] = [
        (
            "lossless_peer_flapping",
            "1 while the port's DCBX peer flaps: more than 10 changes of what the port runs \
             in 10 s, until 30 s pass without one.",
            "gauge",
            |d| u64::from(d.flapping()),
        ),
        (
            "lossless_peer_flaps_total",
            "Times the port's DCBX peer started flapping.",
            "counter",
            Damping::flaps,
        ),
        (
            "lossless_nic_programs_coalesced_total",
            "NIC programmings (dcbnl) wanted within nic_hold_ms of the last one, coalesced \
             into the one at the end of the hold.",
            "counter",
            Damping::coalesced,
        ),
        (
            "lossless_events_suppressed_total",
            "DCBX events of a flapping peer's churn neither logged nor kept in the event \
             history (each window has a summary instead).",
            "counter",
            Damping::suppressed,
        ),
    ];
    for (name, help, kind, get) in series {
        crate::exposition::header(out, name, help, kind);
        for p in ports {
            let _ = writeln!(
                out,
                "{name}{{port=\"{}\"}} {}",
                crate::exposition::esc(&p.name),
                get(&p.damping)
            );
        }
    }
}

//! The relay's Prometheus series, from a [`RelayShow`]: appended to the
//! daemon's `/metrics` when a `[relay]` section runs.

use std::fmt::Write;

use lossless_relay::DropCounts;

use crate::exposition::{esc, header};
use crate::relay::RelayShow;

fn dropped(out: &mut String, name: &str, labels: &str, counts: &DropCounts) {
    for (reason, n) in counts.iter() {
        let _ = writeln!(out, "{name}{{{labels}reason=\"{}\"}} {n}", reason.as_str());
    }
}

pub fn render(show: &RelayShow, out: &mut String) {
    header(
        out,
        "lossless_relay_port_frames_total",
        "Relay data path frames per interface: received, sent, send_errors, socket_drops (lost in a full receive buffer).",
        "counter",
    );
    for p in &show.ports {
        for (what, n) in [
            ("received", p.received),
            ("sent", p.sent),
            ("send_errors", p.send_errors),
            ("socket_drops", p.socket_drops),
        ] {
            let _ = writeln!(
                out,
                "lossless_relay_port_frames_total{{side=\"{}\",interface=\"{}\",what=\"{what}\"}} {n}",
                p.side,
                esc(&p.interface)
            );
        }
    }
    header(
        out,
        "lossless_relay_port_open",
        "1 when the relay's socket on the interface is open.",
        "gauge",
    );
    for p in &show.ports {
        let _ = writeln!(
            out,
            "lossless_relay_port_open{{side=\"{}\",interface=\"{}\"}} {}",
            p.side,
            esc(&p.interface),
            u8::from(p.open)
        );
    }
    if let Some(pe) = &show.pe {
        header(
            out,
            "lossless_relay_frames_total",
            "PE relay frames by direction (egress: from the DC gateway; ingress: from the WAN) and outcome.",
            "counter",
        );
        let e = &pe.egress;
        for (what, n) in [
            ("received", e.received),
            ("relayed", e.relayed),
            ("masked", e.masked),
            ("suppressed", e.suppressed),
            ("flushed", e.flushed),
        ] {
            let _ = writeln!(
                out,
                "lossless_relay_frames_total{{direction=\"egress\",what=\"{what}\"}} {n}"
            );
        }
        let i = &pe.ingress;
        for (what, n) in [("received", i.received), ("delivered", i.delivered)] {
            let _ = writeln!(
                out,
                "lossless_relay_frames_total{{direction=\"ingress\",what=\"{what}\"}} {n}"
            );
        }
        header(
            out,
            "lossless_relay_dropped_total",
            "Frames the PE refused, by direction and reason.",
            "counter",
        );
        dropped(
            out,
            "lossless_relay_dropped_total",
            "direction=\"egress\",",
            &e.dropped,
        );
        dropped(
            out,
            "lossless_relay_dropped_total",
            "direction=\"ingress\",",
            &i.dropped,
        );
        if let Some(storm) = &pe.storm {
            header(
                out,
                "lossless_relay_storm_suppressed_total",
                "Priority instances the storm ceiling held back, all priorities.",
                "counter",
            );
            let _ = writeln!(
                out,
                "lossless_relay_storm_suppressed_total {}",
                storm.suppressed
            );
            header(
                out,
                "lossless_relay_storm_priority_suppressed_total",
                "Priority instances the storm ceiling held back, per priority.",
                "counter",
            );
            for p in &storm.priorities {
                let _ = writeln!(
                    out,
                    "lossless_relay_storm_priority_suppressed_total{{priority=\"{}\"}} {}",
                    p.priority, p.counters.suppressed
                );
            }
        }
    }
    if let Some(g) = &show.gateway {
        header(
            out,
            "lossless_relay_gateway_frames_total",
            "Forwarded PFC frames at the DC gateway: received, accepted.",
            "counter",
        );
        for (what, n) in [
            ("received", g.counters.received),
            ("accepted", g.counters.accepted),
        ] {
            let _ = writeln!(
                out,
                "lossless_relay_gateway_frames_total{{what=\"{what}\"}} {n}"
            );
        }
        header(
            out,
            "lossless_relay_gateway_dropped_total",
            "Forwarded PFC frames the gateway refused, by reason.",
            "counter",
        );
        dropped(
            out,
            "lossless_relay_gateway_dropped_total",
            "",
            &g.counters.dropped,
        );
    }
    let buffer = show
        .pe
        .as_ref()
        .and_then(|p| p.gateway_buffer.as_ref())
        .or(show.gateway.as_ref().and_then(|g| g.buffer.as_ref()));
    if let Some(b) = buffer {
        header(
            out,
            "lossless_relay_gateway_buffer_minimum_bytes",
            "draft-he-rtgwg-wan-pfc-00's buffer condition: the least reserve above (rx - tx rate) \
             x WAN delay.",
            "gauge",
        );
        let _ = writeln!(
            out,
            "lossless_relay_gateway_buffer_minimum_bytes {}",
            b.minimum_bytes
        );
        if b.safe_bits > 0 {
            header(
                out,
                "lossless_relay_gateway_buffer_safe_minimum_bytes",
                "The physically safe reserve: rx rate x round trip (data in flight, as the PFC \
                 Delay Value Constraint Model counts it).",
                "gauge",
            );
            let _ = writeln!(
                out,
                "lossless_relay_gateway_buffer_safe_minimum_bytes {}",
                b.safe_minimum_bytes
            );
        }
    }
    let delay = show.pe.as_ref().and_then(|p| p.wan_delay.as_ref());
    if let Some(rtt) = delay.and_then(|d| d.round_trip_ns) {
        header(
            out,
            "lossless_relay_wan_round_trip_seconds",
            "The WAN round trip to the far PE, measured inside the tunnel (minimum of the last round).",
            "gauge",
        );
        let _ = writeln!(
            out,
            "lossless_relay_wan_round_trip_seconds {}",
            rtt as f64 / 1e9
        );
    }
}

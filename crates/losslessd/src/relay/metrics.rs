//! The relay's Prometheus series, from a [`RelayShow`]: appended to the
//! daemon's `/metrics` when a `[relay]` section runs.

use std::fmt::Write;

use lossless_relay::DropCounts;

use super::show::RelayShow;

fn help(out: &mut String, name: &str, kind: &str, text: &str) {
    let _ = writeln!(out, "# HELP {name} {text}\n# TYPE {name} {kind}");
}

fn dropped(out: &mut String, name: &str, labels: &str, counts: &DropCounts) {
    for (reason, n) in counts.iter() {
        let _ = writeln!(out, "{name}{{{labels}reason=\"{}\"}} {n}", reason.as_str());
    }
}

pub fn render(show: &RelayShow, out: &mut String) {
    help(
        out,
        "lossless_relay_port_frames_total",
        "counter",
        "Relay data path frames per interface: received, sent, send_errors, socket_drops (lost in a full receive buffer).",
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
                p.side, p.interface
            );
        }
    }
    help(
        out,
        "lossless_relay_port_open",
        "gauge",
        "1 when the relay's socket on the interface is open.",
    );
    for p in &show.ports {
        let _ = writeln!(
            out,
            "lossless_relay_port_open{{side=\"{}\",interface=\"{}\"}} {}",
            p.side,
            p.interface,
            u8::from(p.open)
        );
    }
    if let Some(pe) = &show.pe {
        help(
            out,
            "lossless_relay_frames_total",
            "counter",
            "PE relay frames by direction (egress: from the DC gateway; ingress: from the WAN) and outcome.",
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
        help(
            out,
            "lossless_relay_dropped_total",
            "counter",
            "Frames the PE refused, by direction and reason.",
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
            help(
                out,
                "lossless_relay_storm_suppressed_total",
                "counter",
                "Priority instances the storm ceiling held back, all priorities.",
            );
            let _ = writeln!(
                out,
                "lossless_relay_storm_suppressed_total {}",
                storm.suppressed
            );
            help(
                out,
                "lossless_relay_storm_priority_suppressed_total",
                "counter",
                "Priority instances the storm ceiling held back, per priority.",
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
        help(
            out,
            "lossless_relay_gateway_frames_total",
            "counter",
            "Forwarded PFC frames at the DC gateway: received, accepted.",
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
        help(
            out,
            "lossless_relay_gateway_dropped_total",
            "counter",
            "Forwarded PFC frames the gateway refused, by reason.",
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
        help(
            out,
            "lossless_relay_gateway_buffer_minimum_bytes",
            "gauge",
            "Seed 002's buffer condition: the least reserve above (rx - tx rate) x WAN delay.",
        );
        let _ = writeln!(
            out,
            "lossless_relay_gateway_buffer_minimum_bytes {}",
            b.minimum_bytes
        );
    }
}

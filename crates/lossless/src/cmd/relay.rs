//! `lossless relay show [--json]`: the PFC relay of draft-he-rtgwg-wan-pfc-00 in the running
//! daemon.

use lossless_node::protocol::Request;
use lossless_node::relay::{GatewayShow, RelayShow};
use lossless_relay::{DropCounts, RelayStatus};

use super::daemon::{call, print_json, JsonArg};
use super::table::Table;
use crate::error::CliError;

pub const AFTER_HELP: &str = "\
A PE (role = \"pe\") shows its two interfaces, what came from the DC gateway (egress: \
checked, put in the tunnel, relayed or held back by the storm ceiling) and from the WAN \
(ingress: decapsulated, checked, delivered with our DC-side MAC), every drop by reason, \
the storm ceiling per priority, and draft-he-rtgwg-wan-pfc-00's buffer condition for the DC \
gateway when [relay.buffer] is set. A gateway (role = \"gateway\") shows what it accepted \
from its PE.
Counters start when the relay (re)starts: at daemon start, and when a reload changes [relay].
SOCKET-DROPS are frames the kernel dropped because the relay's receive buffer was full.
Configure it in losslessd's configuration ([relay], see docs/relay.md).
Exit status: 0 success, 1 the daemon could not be reached or runs no relay.";

/// `lossless relay ...`
#[derive(Debug, clap::Subcommand)]
pub enum RelayCommand {
    /// The relay's ports, counters, drops by reason, storm ceiling and gateway buffer.
    ///
    /// Example: lossless relay show --json | jq .pe.egress
    #[command(after_help = AFTER_HELP)]
    Show(JsonArg),
}

pub fn run(cmd: RelayCommand) -> Result<(), CliError> {
    let RelayCommand::Show(args) = cmd;
    let socket = &args.socket.path;
    let v = call(socket, "relay show", &Request::RelayShow)?;
    if args.json {
        return print_json(&v);
    }
    let show: RelayShow = serde_json::from_value(v)
        .map_err(|e| CliError::failure("relay show", format!("unexpected answer: {e}")))?;
    crate::out::emit(&render(&show))
}

fn render(r: &RelayShow) -> String {
    let mut out = format!(
        "relay: {}, up {:.0} s, data path {} (batch {})\n",
        r.role,
        r.uptime_s,
        match r.datapath.poll {
            lossless_relay::Poll::Wait => "wait",
            lossless_relay::Poll::Busy => "busy",
        },
        r.datapath.batch
    );
    if let Some(x) = &r.xdp {
        if x.running && r.gateway.is_some() {
            // The counts are the gateway's own, below.
            out.push_str(&format!(
                "data path: XDP ({}) on the interface facing the PE ({})\n",
                x.mode.as_deref().unwrap_or("?"),
                x.why
            ));
        } else if x.running {
            out.push_str(&format!(
                "data path: XDP ({}) on both interfaces: {} relayed, {} delivered, {} dropped, \
                 {} passed to the AF_PACKET path{}{}\n",
                x.mode.as_deref().unwrap_or("?"),
                x.egress_relayed,
                x.ingress_delivered,
                x.egress_dropped + x.ingress_dropped,
                x.egress_passed + x.ingress_passed,
                if x.redirect_failed > 0 {
                    format!(", {} redirects FAILED", x.redirect_failed)
                } else {
                    String::new()
                },
                if x.why.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", x.why)
                }
            ));
        } else {
            out.push_str(&format!("data path: AF_PACKET only; XDP {}\n", x.why));
        }
    }
    let mut t = Table::new([
        "SIDE",
        "INTERFACE",
        "OPEN",
        "RECEIVED",
        "SENT",
        "SEND-ERR",
        "SOCKET-DROPS",
        "ERROR",
    ]);
    for p in &r.ports {
        t.row([
            p.side.clone(),
            p.interface.clone(),
            if p.open { "yes" } else { "no" }.into(),
            p.received.to_string(),
            p.sent.to_string(),
            p.send_errors.to_string(),
            p.socket_drops.to_string(),
            p.error.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    out.push_str(&t.render());
    if let Some(pe) = &r.pe {
        pe_status(pe, &mut out);
    }
    if let Some(g) = &r.gateway {
        gateway(g, &mut out);
    }
    out
}

/// `reason n, reason n` for the nonzero reasons; `none` without any.
fn drops(c: &DropCounts) -> String {
    let nonzero: Vec<String> = c
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(r, n)| format!("{} {n}", r.as_str()))
        .collect();
    if nonzero.is_empty() {
        "none".into()
    } else {
        nonzero.join(", ")
    }
}

fn pe_status(pe: &RelayStatus, out: &mut String) {
    out.push_str(&format!(
        "tunnel {}: to {}; accepting {}\n",
        pe.tunnel, pe.remote, pe.local
    ));
    let e = &pe.egress;
    out.push_str(&format!(
        "egress (DC gateway -> WAN): received {}, relayed {} ({} masked), suppressed {}, flushed {}, dropped {}: {}\n",
        e.received,
        e.relayed,
        e.masked,
        e.suppressed,
        e.flushed,
        e.dropped.total(),
        drops(&e.dropped)
    ));
    let i = &pe.ingress;
    out.push_str(&format!(
        "ingress (WAN -> DC gateway): received {}, delivered {}, dropped {}: {}{}\n",
        i.received,
        i.delivered,
        i.dropped.total(),
        drops(&i.dropped),
        if pe.wan_delay.is_some() {
            format!(
                "; WAN delay measurement {} in, {} out",
                i.measurement, e.measurement
            )
        } else {
            String::new()
        }
    ));
    match &pe.storm {
        None => out.push_str("storm ceiling: off\n"),
        Some(s) => {
            out.push_str(&format!(
                "storm ceiling: resumes {}/s per priority, burst {}, episode gap {} ms; pauses \
                 timed at {} Gb/s, refreshed {} us before they lapse; suppressed {}\n",
                s.max_per_second,
                s.burst,
                s.episode_gap_ns as f64 / 1e6,
                s.link_speed_bps as f64 / 1e9,
                s.refresh_before_ns as f64 / 1e3,
                s.suppressed
            ));
            let mut t = Table::new([
                "PRIO",
                "EPISODE",
                "PENDING",
                "FAR-PAUSED-UNTIL",
                "TOKENS",
                "EPISODES",
                "RELAYED",
                "BYPASSED",
                "SUPPRESSED",
                "FLUSHED",
                "REFRESHED",
            ]);
            for p in &s.priorities {
                t.row([
                    p.priority.to_string(),
                    if p.in_episode { "open" } else { "-" }.into(),
                    p.pending.map_or("-".into(), |v| v.to_string()),
                    p.far_paused_until_ns
                        .map_or("-".into(), |ns| format!("{:.6} s", ns as f64 / 1e9)),
                    p.tokens.to_string(),
                    p.counters.episodes.to_string(),
                    p.counters.relayed.to_string(),
                    p.counters.bypassed.to_string(),
                    p.counters.suppressed.to_string(),
                    p.counters.flushed.to_string(),
                    p.counters.refreshed.to_string(),
                ]);
            }
            out.push_str(&t.render());
        }
    }
    if let Some(m) = &pe.last_malformed {
        out.push_str(&format!("last malformed tunnel frame: {m}\n"));
    }
    if let Some(d) = &pe.wan_delay {
        match (d.round_trip_ns, d.one_way_ns) {
            (Some(rtt), Some(one)) => out.push_str(&format!(
                "WAN delay, measured to the far PE in the tunnel: round trip {:.3} ms (median {:.3} \
                 ms, {}/{} exchanges), one way {:.3} ms; {} rounds, {} failed; {}\n",
                rtt as f64 / 1e6,
                d.median_ns.unwrap_or(rtt) as f64 / 1e6,
                d.valid,
                d.sent,
                one as f64 / 1e6,
                d.rounds_completed,
                d.rounds_failed,
                d.departure.describe()
            )),
            _ => out.push_str(&format!(
                "WAN delay: measuring (no round completed yet; {} rounds failed, {} frames sent, {} \
                 received)\n",
                d.rounds_failed, d.frames_sent, d.frames_received
            )),
        }
    }
    match &pe.gateway_buffer {
        Some(b) => buffer(b, out),
        None if pe.wan_delay.is_some() => {
            out.push_str("gateway buffer: waiting for the first WAN delay measurement\n")
        }
        None => {}
    }
}

fn gateway(g: &GatewayShow, out: &mut String) {
    out.push_str(&format!(
        "accepting PFC from the PE's port MAC {}{}\n",
        g.pe_port_mac,
        g.pe_system_mac
            .map(|m| format!(" or system MAC {m}"))
            .unwrap_or_default()
    ));
    let c = &g.counters;
    out.push_str(&format!(
        "received {}, accepted {}, dropped {}: {}\n",
        c.received,
        c.accepted,
        c.dropped.total(),
        drops(&c.dropped)
    ));
    if let Some(a) = &g.last_accepted {
        let times: Vec<String> = (0..8)
            .filter(|p| a.class_enable & (1 << p) != 0)
            .map(|p| format!("p{p}={}", a.quanta[p]))
            .collect();
        out.push_str(&format!(
            "last accepted: from {} at {:.3} s, {}\n",
            a.src,
            a.at_s,
            times.join(" ")
        ));
    }
    if let Some(b) = &g.buffer {
        buffer(b, out);
    }
}

fn buffer(b: &lossless_relay::buffer::GatewayBuffer, out: &mut String) {
    let source = if b.delay_source.is_empty() {
        "configured"
    } else {
        b.delay_source.as_str()
    };
    out.push_str(&format!(
        "gateway buffer, the draft's condition (draft-he-rtgwg-wan-pfc-00): (rx {} - tx {}) x \
         forwarding delay {} ({source}) = {} bits: reserve more than that, at least {} bytes",
        b.rx_rate, b.tx_rate, b.wan_delay, b.product_bits, b.minimum_bytes
    ));
    let verdict = |holds: Option<bool>| match (b.reserved_bytes, holds) {
        (Some(r), Some(true)) => format!("; reserved {r} bytes: holds\n"),
        (Some(r), _) => format!("; reserved {r} bytes: TOO SMALL\n"),
        _ => "\n".to_string(),
    };
    out.push_str(&verdict(b.holds));
    if !b.round_trip.is_empty() {
        out.push_str(&format!(
            "gateway buffer, the physically safe bound (data in flight for a round trip, as the PFC \
             Delay Value Constraint Model counts it): rx {} x round trip {} ({source}) = {} bits: at \
             least {} bytes",
            b.rx_rate, b.round_trip, b.safe_bits, b.safe_minimum_bytes
        ));
        out.push_str(&verdict(b.safe_holds));
    }
}

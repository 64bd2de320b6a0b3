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
        "ingress (WAN -> DC gateway): received {}, delivered {}, dropped {}: {}\n",
        i.received,
        i.delivered,
        i.dropped.total(),
        drops(&i.dropped)
    ));
    match &pe.storm {
        None => out.push_str("storm ceiling: off\n"),
        Some(s) => {
            out.push_str(&format!(
                "storm ceiling: {}/s per priority, burst {}, episode gap {} ms; suppressed {}\n",
                s.max_per_second,
                s.burst,
                s.episode_gap_ns as f64 / 1e6,
                s.suppressed
            ));
            let mut t = Table::new([
                "PRIO",
                "EPISODE",
                "PENDING",
                "TOKENS",
                "EPISODES",
                "RELAYED",
                "BYPASSED",
                "SUPPRESSED",
                "FLUSHED",
            ]);
            for p in &s.priorities {
                t.row([
                    p.priority.to_string(),
                    if p.in_episode { "open" } else { "-" }.into(),
                    p.pending.map_or("-".into(), |v| v.to_string()),
                    p.tokens.to_string(),
                    p.counters.episodes.to_string(),
                    p.counters.relayed.to_string(),
                    p.counters.bypassed.to_string(),
                    p.counters.suppressed.to_string(),
                    p.counters.flushed.to_string(),
                ]);
            }
            out.push_str(&t.render());
        }
    }
    if let Some(m) = &pe.last_malformed {
        out.push_str(&format!("last malformed tunnel frame: {m}\n"));
    }
    if let Some(b) = &pe.gateway_buffer {
        buffer(b, out);
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
    out.push_str(&format!(
        "gateway buffer (draft-he-rtgwg-wan-pfc-00): (rx {} - tx {}) x {} = {} bits: reserve more \
         than that, at least {} bytes",
        b.rx_rate, b.tx_rate, b.wan_delay, b.product_bits, b.minimum_bytes
    ));
    match (b.reserved_bytes, b.holds) {
        (Some(r), Some(true)) => out.push_str(&format!("; reserved {r} bytes: holds\n")),
        (Some(r), _) => out.push_str(&format!("; reserved {r} bytes: TOO SMALL\n")),
        _ => out.push('\n'),
    }
}

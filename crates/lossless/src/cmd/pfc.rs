//! `lossless pfc show [PORT] [--json]`: PFC per priority from the running daemon: frames
//! and rates each way, the share of time paused where the driver reports it, the storm
//! watchdog's state and the packets dropped; then the RDMA device's congestion and
//! retransmission counters.

use std::fmt::Write;

use lossless_proto::pfc::{PortPfcView, RoceView};
use lossless_proto::Request;

use super::daemon::{ask, call, print_json, PortArgs};
use super::table::Table;
use crate::error::CliError;
use crate::out::emit;

pub const AFTER_HELP: &str = "\
Per port: where the counters come from (dcbnl's IEEE PFC object, the driver's ethtool \
statistics) or why there are none, then per priority: PFC (on: negotiated and not turned off \
by the watchdog), RX (PFC frames received: the peer paused us) and TX (sent: we paused the \
peer) since the port was added, with their rates over the last reading interval, PAUSED (the \
share of that interval paused, where the driver reports pause time), WATCHDOG (off: not \
watched; ok; storm rx|tx|driver for how long, and pfc-off when the action turned PFC off), and \
DISCARDS (packets received on the priority and dropped by the NIC, every kind together, where \
the driver counts them, e.g. mlx5's rx_prio<N>_discards; --json has each kind): on a PFC \
priority any drop means the lossless guarantee broke (headroom too small, or PFC not honoured).
Where the port has an RDMA device: its hw counters lossless follows (CNPs sent, handled and \
ignored, ECN-marked packets received, packets out of buffer, retransmissions by reason), each \
with the driver's name, its total since the port was added and its rate.
Turn the watchdog on per port in losslessd's configuration:
  [ports.\"eth0\".pfc_watchdog]
  enabled = true
  action = \"forward\"      # or \"alert\"
Exit status: 0 success, 1 the daemon could not be reached, 2 no such port.";

/// `lossless pfc ...`
#[derive(Debug, clap::Subcommand)]
pub enum PfcCommand {
    /// PFC frames per priority each way, rates, time paused, the storm watchdog's state.
    ///
    /// Example: lossless pfc show eth0 --json | jq '.ports[0].priorities[3]'
    #[command(after_help = AFTER_HELP)]
    Show(PortArgs),
}

pub fn run(cmd: PfcCommand) -> Result<(), CliError> {
    let PfcCommand::Show(args) = cmd;
    if args.json {
        let req = Request::PfcShow {
            port: args.port.clone(),
        };
        return print_json(&call(&args.socket.path, "pfc show", &req)?);
    }
    let show = ask(&args.socket.path, "pfc show", |c| {
        c.pfc_show(args.port.as_deref())
    })?;
    let mut out = String::new();
    for p in &show.ports {
        out.push_str(&render(p));
    }
    emit(&out)
}

fn rate(v: Option<f64>) -> String {
    v.map_or("-".into(), |r| format!("{r:.0}/s"))
}

fn count(v: Option<u64>) -> String {
    v.map_or("-".into(), |n| n.to_string())
}

fn share(v: Option<f64>) -> String {
    v.map_or("-".into(), |s| format!("{:.0}%", s * 100.0))
}

/// One port: its header line, then the table of priorities.
pub fn render(p: &PortPfcView) -> String {
    let mut s = String::new();
    let w = &p.watchdog;
    let wd = if w.enabled {
        let prios: Vec<String> = w.priorities.iter().map(u8::to_string).collect();
        format!(
            "watchdog on ({}, detection {} ms, restoration {} ms, priorities {})",
            w.action.name(),
            w.detection_ms,
            w.restoration_ms,
            if prios.is_empty() {
                "none".into()
            } else {
                prios.join(",")
            }
        )
    } else {
        "watchdog off".to_string()
    };
    let source = match (&p.source, &p.reason) {
        (Some(src), Some(why)) if p.available && src == "host" => format!(
            "counters from the PFC frames the host received (the driver has none: {why}; \
             pauses this NIC sends are not seen), every {} ms",
            p.interval_ms
        ),
        (Some(src), _) if p.available => format!("counters from {src}, every {} ms", p.interval_ms),
        (_, Some(why)) => format!("counters unavailable: {why}"),
        _ => "counters unavailable".to_string(),
    };
    let d = &p.discontinuities;
    let _ = writeln!(
        s,
        "{}: {source}; {wd}; readings {} (failed {}), resets {} wraps {} vanished {}",
        p.port, p.samples, p.failures, d.resets, d.wraps, d.vanished
    );
    let mut t = Table::new([
        "PRIO",
        "PFC",
        "RX",
        "RX-RATE",
        "RX-PAUSED",
        "TX",
        "TX-RATE",
        "TX-PAUSED",
        "WATCHDOG",
        "STORMS",
        "DISCARDS",
        "DISC-RATE",
    ]);
    for q in &p.priorities {
        let state = match (&q.direction, q.storm_ms) {
            (Some(dir), Some(ms)) => {
                let dir = serde_json::to_value(dir)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let off = if q.forced_off { ", pfc-off" } else { "" };
                format!("storm {dir} {:.1} s{off}", ms / 1e3)
            }
            _ => q.state.clone(),
        };
        t.row([
            q.priority.to_string(),
            if q.pfc { "on" } else { "off" }.into(),
            count(q.rx_frames),
            rate(q.rx_rate),
            share(q.rx_paused),
            count(q.tx_frames),
            rate(q.tx_rate),
            share(q.tx_paused),
            state,
            format!("{}/{}", q.storms, q.restorations),
            count(q.discards_total()),
            rate(q.discard_rate()),
        ]);
    }
    s.push_str(&t.render());
    s.push('\n');
    if let Some(r) = &p.roce {
        s.push_str(&render_roce(&p.port, r));
    }
    s
}

/// The RDMA device's counters of one port.
fn render_roce(port: &str, r: &RoceView) -> String {
    let mut s = String::new();
    let device = match (&r.device, r.rdma_port) {
        (Some(d), Some(n)) => format!("{d} port {n}"),
        (Some(d), None) => d.clone(),
        _ => "the RDMA device".to_string(),
    };
    let d = &r.discontinuities;
    let _ = write!(
        s,
        "{port}: RoCE counters of {device} (hw_counters); resets {} wraps {} vanished {}",
        d.resets, d.wraps, d.vanished
    );
    if let Some(e) = &r.error {
        let _ = write!(s, "; {e}");
    }
    s.push('\n');
    if r.counters.is_empty() {
        return s;
    }
    let mut t = Table::new(["COUNTS", "COUNTER", "TOTAL", "RATE"]);
    for c in &r.counters {
        let what = if c.retransmission {
            format!("retransmission ({})", c.counter.name())
        } else {
            c.counter.name().to_string()
        };
        let name = if c.present {
            c.name.clone()
        } else {
            format!("{} (gone)", c.name)
        };
        t.row([what, name, count(c.total), rate(c.rate)]);
    }
    s.push_str(&t.render());
    s.push('\n');
    s
}

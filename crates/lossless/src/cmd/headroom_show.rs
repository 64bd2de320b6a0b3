//! `lossless headroom show [PORT] [--json]`: adaptive headroom from the running daemon.

use std::path::Path;

use lossless_proto::headroom::{BufferState, HeadroomHardware, HeadroomShow};
use lossless_proto::Request;

use super::daemon::{ask, call, print_json, PortArgs};
use super::table::Table;
use crate::error::CliError;

pub const AFTER_HELP: &str = "\
Columns: STATE (measuring: a round is open; running: both ends advertise the capability and \
the link is up; off: headroom.measure is off; idle: waiting for the peer), RTT (the last \
round's minimum T4 - T1 - (T3 - T2)), X and DV (bit times, Adaptive PFC Headroom phase 3), \
HEADROOM (the size the hysteresis holds, bytes and cells), CLOCK (rx/tx timestamp clocks), NIC \
(the IEEE PFC delay allowance that reached the hardware), BUFFER (the NIC's DCB buffers \
holding PFC priorities: their sizes, or why they were not sized).
Turn measurement on per port in losslessd's configuration:
  [ports.\"eth0\".headroom]
  measure = true
Exit status: 0 success, 1 the daemon could not be reached, 2 no such port.";

pub fn show(socket: &Path, args: PortArgs) -> Result<(), CliError> {
    if args.json {
        let req = Request::HeadroomShow {
            port: args.port.clone(),
        };
        return print_json(&call(socket, "headroom show", &req)?);
    }
    let show = ask(socket, "headroom show", |c| {
        c.headroom_show(args.port.as_deref())
    })?;
    let mut t = Table::new([
        "PORT", "STATE", "SPEED", "RTT", "SAMPLES", "X(bits)", "DV(bits)", "HEADROOM", "CLOCK",
        "NIC", "BUFFER",
    ]);
    for p in &show.ports {
        let p = match p {
            HeadroomShow::Off(off) => {
                let mut row: [String; 11] = std::array::from_fn(|_| "-".to_string());
                row[0] = off.port.clone();
                row[1] = "off".into();
                t.row(row);
                continue;
            }
            HeadroomShow::On(p) => p,
        };
        let state = if p.measuring {
            "measuring"
        } else if p.running {
            "running"
        } else {
            "idle"
        };
        let speed = match p.speed_bps {
            Some(b) => format!("{}G ({})", b as f64 / 1e9, word(&p.speed_source)),
            None => "unknown".into(),
        };
        let (rtt, samples) = match &p.last {
            Some(last) => (
                format!("{:.3} us", last.round_trip_ns / 1e3),
                format!("{}/{}", last.valid, last.sent),
            ),
            None => ("-".into(), "-".into()),
        };
        let headroom = match &p.applied {
            Some(a) => format!("{} B ({} cells)", a.bytes, a.cells),
            None => "-".into(),
        };
        let clock = match (&p.clocks, &p.socket_error) {
            (Some(c), _) => format!("{}/{}", word(&c.rx), word(&c.tx)),
            (None, Some(e)) => format!("error: {e}"),
            (None, None) => "-".into(),
        };
        let nic = match &p.hardware {
            HeadroomHardware::Applied {
                pfc_delay_bits,
                saturated: true,
            } => format!("pfc delay {pfc_delay_bits} bits (saturated)"),
            HeadroomHardware::Applied { pfc_delay_bits, .. } => {
                format!("pfc delay {pfc_delay_bits} bits")
            }
            HeadroomHardware::Unsupported { .. } => "no dcbnl: reported only".into(),
            HeadroomHardware::ReportOnly => "report only".into(),
            HeadroomHardware::Error { error } => format!("error: {error}"),
            HeadroomHardware::Pending => "pending".into(),
        };
        let (x, dv) = match &p.need {
            Some(n) => (n.x_bit_times.to_string(), n.dv_bit_times.to_string()),
            None => ("-".into(), "-".into()),
        };
        t.row([
            p.port.clone(),
            state.into(),
            speed,
            rtt,
            samples,
            x,
            dv,
            headroom,
            clock,
            nic,
            buffer(&p.buffer),
        ]);
    }
    t.print()
}

/// A value as the JSON names it (`config`, `hardware`, `no_pfc_priority`, ...).
fn word<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(serde_json::Value::Object(o)) => o
            .get("state")
            .and_then(|s| s.as_str())
            .unwrap_or_default()
            .to_string(),
        _ => "-".into(),
    }
}

/// The BUFFER column: `buffer 1: 262016 B of 1048576` (`, written` when this
/// headroom needed a write), or the state and its reason.
fn buffer(b: &BufferState) -> String {
    match b {
        BufferState::Sized {
            lossless,
            buffer_size,
            total_size,
            written,
            ..
        } => {
            let list = lossless
                .iter()
                .map(|&i| {
                    let size = buffer_size
                        .get(usize::from(i))
                        .map_or_else(|| "null".to_string(), u32::to_string);
                    format!("{i}: {size} B")
                })
                .collect::<Vec<_>>()
                .join(", ");
            let plural = if lossless.len() == 1 { "" } else { "s" };
            let written = if *written { ", written" } else { "" };
            format!("buffer{plural} {list} of {total_size}{written}")
        }
        BufferState::Pending => "pending".into(),
        BufferState::Off { reason }
        | BufferState::Unsupported { reason }
        | BufferState::DoesNotFit { reason, .. } => {
            format!("{}: {reason}", word(b).replace('_', " "))
        }
        BufferState::Error { error } => format!("error: {error}"),
        BufferState::NoPfcPriority => "no pfc priority: ".into(),
    }
}

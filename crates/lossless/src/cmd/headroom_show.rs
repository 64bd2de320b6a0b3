//! `lossless headroom show [PORT] [--json]`: adaptive headroom from the running daemon.

use std::path::Path;

use lossless_node::protocol::Request;
use serde_json::Value;

use super::daemon::{arr, call, print_json, s, PortArgs};
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
    let v = call(
        socket,
        "headroom show",
        &Request::HeadroomShow {
            port: args.port.clone(),
        },
    )?;
    if args.json {
        return print_json(&v);
    }
    let mut t = Table::new([
        "PORT", "STATE", "SPEED", "RTT", "SAMPLES", "X(bits)", "DV(bits)", "HEADROOM", "CLOCK",
        "NIC", "BUFFER",
    ]);
    for p in arr(&v["ports"]) {
        if p["off"].as_bool() == Some(true) {
            t.row([
                s(&p["port"]),
                "off".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
            continue;
        }
        let state = if p["measuring"].as_bool() == Some(true) {
            "measuring"
        } else if p["running"].as_bool() == Some(true) {
            "running"
        } else {
            "idle"
        };
        let speed = match p["speed_bps"].as_u64() {
            Some(b) => format!("{}G ({})", b as f64 / 1e9, s(&p["speed_source"])),
            None => "unknown".into(),
        };
        let last = &p["last"];
        let (rtt, samples) = if last.is_object() {
            (
                format!(
                    "{:.3} us",
                    last["round_trip_ns"].as_f64().unwrap_or(0.0) / 1e3
                ),
                format!("{}/{}", last["valid"], last["sent"]),
            )
        } else {
            ("-".into(), "-".into())
        };
        let need = &p["need"];
        let applied = &p["applied"];
        let headroom = if applied.is_object() {
            format!("{} B ({} cells)", applied["bytes"], applied["cells"])
        } else {
            "-".into()
        };
        let clock = match &p["clocks"] {
            Value::Object(c) => format!(
                "{}/{}",
                c.get("rx").map(s).unwrap_or_default(),
                c.get("tx").map(s).unwrap_or_default()
            ),
            _ => p["socket_error"]
                .as_str()
                .map_or_else(|| "-".into(), |e| format!("error: {e}")),
        };
        let hw = &p["hardware"];
        let nic = match hw["state"].as_str() {
            Some("applied") if hw["saturated"].as_bool() == Some(true) => {
                format!("pfc delay {} bits (saturated)", hw["pfc_delay_bits"])
            }
            Some("applied") => format!("pfc delay {} bits", hw["pfc_delay_bits"]),
            Some("unsupported") => "no dcbnl: reported only".into(),
            Some("report_only") => "report only".into(),
            Some("error") => format!("error: {}", s(&hw["error"])),
            Some("pending") => "pending".into(),
            _ => "-".into(),
        };
        let buffer = buffer(&p["buffer"]);
        t.row([
            s(&p["port"]),
            state.into(),
            speed,
            rtt,
            samples,
            s(&need["x_bit_times"]),
            s(&need["dv_bit_times"]),
            headroom,
            clock,
            nic,
            buffer,
        ]);
    }
    t.print()
}

/// The BUFFER column: `buffer 1: 262016 B of 1048576` (`, written` when this
/// headroom needed a write), or the state and its reason.
fn buffer(b: &Value) -> String {
    match b["state"].as_str() {
        Some("sized") => {
            let sizes = &b["buffer_size"];
            let lossless = arr(&b["lossless"]);
            let list = lossless
                .iter()
                .map(|i| format!("{}: {} B", i, sizes[i.as_u64().unwrap_or(0) as usize]))
                .collect::<Vec<_>>()
                .join(", ");
            let plural = if lossless.len() == 1 { "" } else { "s" };
            let written = if b["written"].as_bool() == Some(true) {
                ", written"
            } else {
                ""
            };
            format!("buffer{plural} {list} of {}{written}", b["total_size"])
        }
        Some("pending") => "pending".into(),
        Some(state) => {
            let why = b["reason"].as_str().or(b["error"].as_str()).unwrap_or("");
            format!("{}: {why}", state.replace('_', " "))
        }
        None => "-".into(),
    }
}

//! One-line descriptions of frames for timelines.

use std::fmt::Write;

use lossless_wire::cee::{CeeDcbx, FeatureHeader};
use lossless_wire::frame::{Frame, Payload};
use lossless_wire::mac_control::MacControl;

fn flags(h: &FeatureHeader) -> String {
    let mut s = String::new();
    s.push_str(if h.enable { "en" } else { "off" });
    if h.willing {
        s.push_str(",willing");
    }
    if h.error {
        s.push_str(",ERROR");
    }
    if h.reserved_flags & lossless_wire::cee::FLAG_HEADROOM_MEASUREMENT != 0 {
        s.push_str(",hdrm");
    }
    s
}

/// The DCBX part of a frame: `seq 1 ack 0 | pg[en,willing] ... | pfc[en] 3,4 | app[en] 2`.
pub fn describe_dcbx(c: &CeeDcbx) -> String {
    let mut s = String::new();
    match c.control {
        Some(ctl) => {
            let _ = write!(s, "seq {} ack {}", ctl.seq, ctl.ack);
        }
        None => s.push_str("no control"),
    }
    match &c.pg {
        Some(Ok(pg)) => {
            let ids: Vec<String> = pg
                .cfg
                .pgid
                .iter()
                .map(|g| {
                    if *g == 15 {
                        "s".to_string()
                    } else {
                        g.to_string()
                    }
                })
                .collect();
            let pct: Vec<String> = pg
                .cfg
                .percent
                .iter()
                .filter(|p| **p > 0)
                .map(|p| p.to_string())
                .collect();
            let _ = write!(
                s,
                " | pg[{}] {} {}%",
                flags(&pg.header),
                ids.join(""),
                pct.join("/")
            );
        }
        Some(Err(e)) => {
            let _ = write!(s, " | pg invalid ({e})");
        }
        None => {}
    }
    match &c.pfc {
        Some(Ok(pfc)) => {
            let _ = write!(s, " | pfc[{}] {}", flags(&pfc.header), pfc.cfg.priorities);
        }
        Some(Err(e)) => {
            let _ = write!(s, " | pfc invalid ({e})");
        }
        None => {}
    }
    match &c.app {
        Some(Ok(app)) => {
            let entries: Vec<String> = app
                .cfg
                .entries
                .iter()
                .map(|e| format!("{:#06x}->{}", e.protocol, e.priorities))
                .collect();
            let _ = write!(s, " | app[{}] {}", flags(&app.header), entries.join(" "));
        }
        Some(Err(e)) => {
            let _ = write!(s, " | app invalid ({e})");
        }
        None => {}
    }
    s
}

/// A frame in one line.
pub fn describe_frame(bytes: &[u8]) -> String {
    match Frame::parse(bytes) {
        Err(e) => format!("malformed: {e}"),
        Ok(f) => match f.payload {
            Payload::Lldp(pdu) if pdu.ttl == 0 => "LLDP shutdown (TTL 0)".to_string(),
            Payload::Lldp(pdu) => match &pdu.cee_dcbx {
                Some(c) => format!("LLDP ttl {} DCBX {}", pdu.ttl, describe_dcbx(c)),
                None => format!("LLDP ttl {} (no DCBX)", pdu.ttl),
            },
            Payload::MacControl(MacControl::Pause { quanta }) => format!("PAUSE {quanta} quanta"),
            Payload::MacControl(MacControl::Pfc {
                class_enable,
                quanta,
            }) => format!("PFC classes {class_enable:#04x} quanta {quanta:?}"),
            Payload::Measure(m) => format!("delay {:?} #{}", m.kind, m.sequence),
            Payload::Other(_) => format!("ethertype {:#06x}", f.header.ethertype),
        },
    }
}

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

/// A PFC frame (legal or not) or a tunnel frame carrying one, in one line:
/// outer headers as a router sees them, then the MAC Control frame inside.
/// Used for the relay path, where a frame is the same PFC frame on every hop.
pub fn describe_relay_frame(bytes: &[u8]) -> String {
    match describe_relay_layers(bytes) {
        (Some(outer), inner) => format!("{outer} | {inner}"),
        (None, inner) => inner,
    }
}

/// [`describe_relay_frame`] in two parts: the tunnel headers (None when the
/// frame is not a tunnel frame) and the MAC Control frame.
pub fn describe_relay_layers(bytes: &[u8]) -> (Option<String>, String) {
    use lossless_wire::tunnel::{ParseOptions, TunnelFrame};
    match TunnelFrame::parse(bytes, &ParseOptions::default()) {
        Ok(t) => (
            Some(format!(
                "{} > {} {}",
                t.outer.src,
                t.outer.dst,
                describe_encap(&t.encap)
            )),
            describe_mac_control(t.inner),
        ),
        Err(_) => (None, describe_mac_control(bytes)),
    }
}

fn describe_encap(e: &lossless_wire::tunnel::Encap) -> String {
    use lossless_wire::tunnel::{Encap, IpHeader};
    match e {
        Encap::Srv6 { ipv6, srh } => {
            let mut s = format!(
                "IPv6 {} > {} hlim {} dscp {}",
                ipv6.src,
                ipv6.dst,
                ipv6.hop_limit,
                ipv6.traffic_class >> 2
            );
            match srh {
                Some(h) => {
                    let segs: Vec<String> = h.segments.path().map(|a| a.to_string()).collect();
                    let _ = write!(s, " SRH SL {} [{}]", h.segments_left, segs.join(","));
                }
                None => s.push_str(" (no SRH)"),
            }
            s
        }
        Encap::Vxlan { ip, udp, vxlan } => {
            let ip = match ip {
                IpHeader::V4(h) => {
                    format!(
                        "IPv4 {} > {} ttl {} dscp {}",
                        h.src,
                        h.dst,
                        h.ttl,
                        h.tos >> 2
                    )
                }
                IpHeader::V6(h) => format!(
                    "IPv6 {} > {} hlim {} dscp {}",
                    h.src,
                    h.dst,
                    h.hop_limit,
                    h.traffic_class >> 2
                ),
            };
            format!(
                "{ip} UDP {} > {} VXLAN VNI {}",
                udp.src_port,
                udp.dst_port,
                vxlan.vni.get()
            )
        }
        Encap::Mpls {
            labels,
            control_word,
        } => {
            let entries: Vec<String> = labels
                .iter()
                .map(|l| {
                    format!(
                        "{} tc {} ttl {}{}",
                        l.label,
                        l.tc,
                        l.ttl,
                        if l.bos { " S" } else { "" }
                    )
                })
                .collect();
            format!(
                "MPLS [{}]{}",
                entries.join(", "),
                if control_word.is_some() { " CW" } else { "" }
            )
        }
    }
}

/// A MAC Control frame read field by field, without judging it: the relay's
/// illegal frames are shown as they are (wrong opcode, reserved vector bits).
fn describe_mac_control(bytes: &[u8]) -> String {
    use lossless_wire::mac_control::{ETHERTYPE_MAC_CONTROL, OPCODE_PAUSE, OPCODE_PFC};
    let Ok((h, at)) = lossless_wire::EthernetHeader::parse(bytes) else {
        return format!("runt of {} bytes", bytes.len());
    };
    let head = format!("{} > {}", h.src, h.dst);
    if h.ethertype != ETHERTYPE_MAC_CONTROL {
        return format!("{head} ethertype {:#06x}", h.ethertype);
    }
    let word = |i: usize| {
        bytes
            .get(at + 2 * i..at + 2 * i + 2)
            .map(|w| u16::from_be_bytes([w[0], w[1]]))
    };
    let body = match word(0) {
        None => "MAC Control, no opcode".to_string(),
        Some(OPCODE_PFC) => match word(1) {
            None => "PFC, no class-enable vector".to_string(),
            Some(vector) => {
                let times: Vec<String> = (0..8)
                    .filter(|p| vector & (1 << p) != 0)
                    .map(|p| match word(2 + p) {
                        Some(q) => format!("p{p}={q}"),
                        None => format!("p{p}=?"),
                    })
                    .collect();
                format!("PFC vector {vector:#06x} {}", times.join(" "))
            }
        },
        Some(OPCODE_PAUSE) => match word(1) {
            Some(q) => format!("PAUSE (802.3x) {q} quanta"),
            None => "PAUSE (802.3x), no time".to_string(),
        },
        Some(op) => format!("MAC Control opcode {op:#06x}"),
    };
    format!("{head} {body}")
}

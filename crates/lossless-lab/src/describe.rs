//! One-line descriptions of frames for timelines.

use std::fmt::Write;

use lossless_wire::app_name;
use lossless_wire::cee::{AppEntry, CeeDcbx, FeatureHeader, PGID_STRICT};
use lossless_wire::frame::{Frame, Payload};
use lossless_wire::ieee::{AppPriorityTable, EtsTable, IeeeDcbx};
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
            let ids = describe_pgid(&pg.cfg.pgid);
            let pct: Vec<String> = pg
                .cfg
                .percent
                .iter()
                .filter(|p| **p > 0)
                .map(|p| p.to_string())
                .collect();
            let _ = write!(s, " | pg[{}] {} {}%", flags(&pg.header), ids, pct.join("/"));
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
            let entries = describe_cee_app(&app.cfg.entries);
            let _ = write!(s, " | app[{}] {entries}", flags(&app.header));
        }
        Some(Err(e)) => {
            let _ = write!(s, " | app invalid ({e})");
        }
        None => {}
    }
    s
}

/// An ETS table as every command writes one ([`EtsTable::summary`]):
/// `tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6} strict`.
pub fn describe_ets_table(t: &EtsTable) -> String {
    t.summary()
}

/// An IEEE APP table as every command prints one:
/// `dscp 26 (AF31) -> 3, udp 4791 (RoCEv2) -> 3`; `(none)` when empty.
pub fn describe_app_table(t: &AppPriorityTable) -> String {
    if t.is_empty() {
        return "(none)".into();
    }
    let entries: Vec<String> = t
        .iter()
        .map(|e| app_name::app_entry(e.selector.into(), e.protocol, e.priority))
        .collect();
    entries.join(", ")
}

/// CEE APP entries: `ethertype 0x8906 (FCoE) -> 3, port 4791 (RoCEv2) -> 4`;
/// `(none)` when empty.
pub fn describe_cee_app(entries: &[AppEntry]) -> String {
    if entries.is_empty() {
        return "(none)".into();
    }
    let list: Vec<String> = entries
        .iter()
        .map(|e| app_name::app_entry(e.selector.into(), e.protocol, e.priorities))
        .collect();
    list.join(", ")
}

/// The PGIDs of priorities 0..7 in one word, `s` for 15 (strict priority, in no
/// group): `000111s2`. The timeline and the final table both print them so.
pub fn describe_pgid(pgid: &[u8; 8]) -> String {
    pgid.iter()
        .map(|&g| match g {
            PGID_STRICT => "s".to_string(),
            g => format!("{g:x}"),
        })
        .collect()
}

/// The IEEE 802.1Qaz TLVs of a frame:
/// `ETS[w] tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6} strict | REC .. | PFC[w] 3 | APP dscp 26 (AF31) -> 3`.
/// Flags in brackets: `w` willing, `cbs`, `max N` (fewer than 8 traffic classes),
/// `mbc`, `cap N` (a PFC capability below 8), `hdrm` (adaptive headroom).
pub fn describe_ieee(d: &IeeeDcbx) -> String {
    fn flags(list: &[(bool, String)]) -> String {
        let on: Vec<&str> = list
            .iter()
            .filter(|(set, _)| *set)
            .map(|(_, s)| s.as_str())
            .collect();
        if on.is_empty() {
            String::new()
        } else {
            format!("[{}]", on.join(","))
        }
    }
    let mut parts = Vec::new();
    match &d.ets_config {
        Some(Ok(c)) => parts.push(format!(
            "ETS{} {}",
            flags(&[
                (c.willing, "w".into()),
                (c.cbs, "cbs".into()),
                (c.max_tcs != 8, format!("max {}", c.max_tcs)),
            ]),
            describe_ets_table(&c.table)
        )),
        Some(Err(e)) => parts.push(format!("ETS invalid ({e})")),
        None => {}
    }
    match &d.ets_recommendation {
        Some(Ok(r)) => parts.push(format!("REC {}", describe_ets_table(&r.table))),
        Some(Err(e)) => parts.push(format!("REC invalid ({e})")),
        None => {}
    }
    match &d.pfc {
        Some(Ok(p)) => parts.push(format!(
            "PFC{} {}",
            flags(&[
                (p.willing, "w".into()),
                (p.mbc, "mbc".into()),
                (p.cap != 8, format!("cap {}", p.cap)),
                (p.headroom_measurement, "hdrm".into()),
            ]),
            p.enabled
        )),
        Some(Err(e)) => parts.push(format!("PFC invalid ({e})")),
        None => {}
    }
    match &d.app {
        Some(Ok(t)) => parts.push(format!("APP {}", describe_app_table(t))),
        Some(Err(e)) => parts.push(format!("APP invalid ({e})")),
        None => {}
    }
    parts.join(" | ")
}

/// A frame in one line. An LLDPDU shows its DCBX: `DCBX seq .. | pg ..` for CEE,
/// `IEEE ETS .. | PFC ..` for IEEE 802.1Qaz, both joined by ` + ` when it carries both.
pub fn describe_frame(bytes: &[u8]) -> String {
    match Frame::parse(bytes) {
        Err(e) => format!("malformed: {e}"),
        Ok(f) => match f.payload {
            Payload::Lldp(pdu) if pdu.ttl == 0 => "LLDP shutdown (TTL 0)".to_string(),
            Payload::Lldp(pdu) => {
                let mut dcbx = Vec::new();
                if let Some(c) = &pdu.cee_dcbx {
                    dcbx.push(format!("DCBX {}", describe_dcbx(c)));
                }
                if !pdu.ieee_dcbx.is_empty() {
                    dcbx.push(format!("IEEE {}", describe_ieee(&pdu.ieee_dcbx)));
                }
                if dcbx.is_empty() {
                    format!("LLDP ttl {} (no DCBX)", pdu.ttl)
                } else {
                    format!("LLDP ttl {} {}", pdu.ttl, dcbx.join(" + "))
                }
            }
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

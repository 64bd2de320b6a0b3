//! The readable form: a header line per frame, then an indented decode.

use std::fmt::Write as _;

use lossless_wire::cee::{
    AppConfig, CeeDcbx, FeatureHeader, FeatureTlv, PfcConfig, PgConfig, PGID_STRICT,
};
use lossless_wire::ieee::{AppPriorityTable, EtsTable, IeeeDcbx};
use lossless_wire::lldp::Lldpdu;
use lossless_wire::{DecodeError, MacControl, Payload};

use lossless_wire::app_name;

use super::names::{self, IdKind};
use super::record::{link_type_reason, Decoded, FrameError};

/// Column where values start, after the label.
const LABEL: usize = 14;

fn line(out: &mut String, indent: usize, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(
        out,
        "{:indent$}{:<width$}{}",
        "",
        label,
        value,
        width = LABEL.max(label.len() + 1)
    );
}

fn error_text(e: &DecodeError) -> String {
    format!("{} at offset {}: {}", e.field, e.offset, e.kind)
}

/// Renders one frame, ending with a blank line.
pub fn render(d: &Decoded<'_>, out: &mut String) {
    let _ = write!(out, "frame {}", d.frame);
    if let Some(t) = d.time {
        let _ = write!(out, "  {t}");
    }
    summary(d, out);
    out.push('\n');
    body(d, out);
    out.push('\n');
}

/// `  src -> dst  vlan ..  KIND (0xTYPE)  N bytes`: the rest of a frame's first line.
fn summary(d: &Decoded<'_>, out: &mut String) {
    if let Some(h) = &d.header {
        let _ = write!(out, "  {} -> {}", h.src, h.dst);
        if let Some(v) = h.vlan {
            let _ = write!(out, "  vlan {} pcp {}", v.vid, v.pcp);
            if v.dei {
                out.push_str(" dei");
            }
        }
        if h.ethertype < 0x0600 {
            // Not an Ethertype: an 802.3 length (STP BPDUs, LLC).
            let _ = write!(out, "  other (802.3 length {})", h.ethertype);
        } else {
            let _ = write!(out, "  {} ({:#06x})", d.kind.label(), h.ethertype);
        }
    }
    let _ = write!(out, "  {} bytes", d.len);
    if d.orig_len != d.len {
        let _ = write!(out, " of {} on the wire", d.orig_len);
    }
}

/// The decode under the first line.
fn body(d: &Decoded<'_>, out: &mut String) {
    if let Some(t) = &d.tunnel {
        line(out, 4, "tunnel", super::tunnel::describe(&t.encap));
        let mut head = String::new();
        summary(&t.inner, &mut head);
        line(out, 4, "inner", head.trim_start());
        // The inner frame's decode, two columns further in.
        let mut inner = String::new();
        body(&t.inner, &mut inner);
        for l in inner.lines() {
            let _ = writeln!(out, "  {l}");
        }
        return;
    }
    match &d.payload {
        Ok(Payload::Lldp(pdu)) => lldp(pdu, out),
        Ok(Payload::MacControl(ctl)) => mac_control(ctl, out),
        Ok(Payload::Measure(m)) => measure(m, out),
        Ok(Payload::Other(body)) => line(
            out,
            4,
            "payload",
            format!("{} bytes, not decoded", body.len()),
        ),
        Err(FrameError::Wire(e)) => line(out, 4, "MALFORMED", error_text(e)),
        Err(FrameError::LinkType(l)) => line(out, 4, "not decoded", link_type_reason(*l)),
    }
}

fn measure(m: &lossless_wire::Measure, out: &mut String) {
    line(
        out,
        4,
        "message",
        format!(
            "{:?} session {:#06x} sequence {}",
            m.kind, m.session, m.sequence
        ),
    );
    let clock = if m.flags & lossless_wire::measure::FLAG_HARDWARE != 0 {
        "hardware"
    } else {
        "software"
    };
    line(
        out,
        4,
        "timestamps",
        format!("t2 {} ps, t3 {} ps ({clock} clock)", m.t2, m.t3),
    );
}

fn mac_control(ctl: &MacControl, out: &mut String) {
    match *ctl {
        MacControl::Pause { quanta } => {
            line(
                out,
                4,
                "pause",
                format!("{quanta} quanta (x 512 bit times; 0 resumes)"),
            );
        }
        MacControl::Pfc {
            class_enable,
            quanta,
        } => {
            let enabled = lossless_wire::cee::PriorityMap(class_enable as u8);
            line(
                out,
                4,
                "priorities",
                format!(
                    "{} (class-enable vector {:#06x})",
                    names::priority_list(enabled),
                    class_enable
                ),
            );
            let q: Vec<String> = quanta
                .iter()
                .enumerate()
                .map(|(p, q)| {
                    let mark = if enabled.contains(p as u8) { "" } else { "-" };
                    format!("{p}:{q}{mark}")
                })
                .collect();
            line(out, 4, "quanta", q.join(" "));
            line(
                out,
                4,
                "",
                "(per priority, x 512 bit times; 0 resumes; '-' not enabled, ignored)",
            );
        }
    }
}

fn lldp(pdu: &Lldpdu<'_>, out: &mut String) {
    for (label, kind, id) in [
        ("chassis id", IdKind::Chassis, &pdu.chassis_id),
        ("port id", IdKind::Port, &pdu.port_id),
    ] {
        line(
            out,
            4,
            label,
            format!(
                "{} {}",
                names::id_subtype_name(kind, id.subtype),
                names::id_value(kind, id)
            ),
        );
    }
    let ttl = if pdu.ttl == 0 {
        "0 s (shutdown: forget this neighbour)".to_string()
    } else {
        format!("{} s", pdu.ttl)
    };
    line(out, 4, "ttl", ttl);
    for (label, v) in [
        ("port descr", pdu.port_description),
        ("system name", pdu.system_name),
        ("system descr", pdu.system_description),
    ] {
        if let Some(v) = v {
            line(out, 4, label, format!("{:?}", String::from_utf8_lossy(v)));
        }
    }
    if let Some(c) = pdu.system_capabilities {
        let list = |bits| {
            let n = names::capability_names(bits);
            if n.is_empty() {
                "none".to_string()
            } else {
                n.join(", ")
            }
        };
        line(
            out,
            4,
            "capabilities",
            format!("{} (enabled: {})", list(c.capabilities), list(c.enabled)),
        );
    }
    for m in &pdu.management_addresses {
        let addr = names::ip_address(m.address_subtype, m.address).unwrap_or_else(|| {
            format!(
                "family {} {}",
                m.address_subtype,
                names::hex_spaced(m.address)
            )
        });
        let mut v = format!(
            "{} {}, {} {}",
            names::address_family_name(m.address_subtype),
            addr,
            names::interface_subtype_name(m.interface_subtype),
            m.interface_number
        );
        if !m.oid.is_empty() {
            let _ = write!(v, ", oid {}", names::hex_spaced(m.oid));
        }
        line(out, 4, "mgmt address", v);
    }
    if let Some(cee) = &pdu.cee_dcbx {
        dcbx(cee, out);
    }
    if !pdu.ieee_dcbx.is_empty() {
        ieee(&pdu.ieee_dcbx, out);
    }
    if let Some(cin) = pdu.cin_dcbx {
        line(
            out,
            4,
            "CIN DCBX",
            format!(
                "OUI 00-1b-21 subtype 1 (DCBX 1.0, pre-CEE): recognised, not decoded: {}",
                names::hex_spaced(cin)
            ),
        );
    }
    for o in &pdu.org_specific {
        let name = names::org_tlv_name(o.oui, o.subtype)
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        line(
            out,
            4,
            "org-specific",
            format!(
                "OUI {} subtype {}{}: {}",
                names::oui(o.oui),
                o.subtype,
                name,
                names::hex_spaced(o.info)
            ),
        );
    }
    for u in &pdu.unknown {
        line(
            out,
            4,
            "unknown TLV",
            format!("type {}: {}", u.tlv_type, names::hex_spaced(u.value)),
        );
    }
}

fn flags(h: &FeatureHeader) -> String {
    let yn = |b: bool| if b { "yes" } else { "no" };
    let mut s = format!(
        "enable {}, willing {}, error {}  (version {}, max {}, subtype {})",
        yn(h.enable),
        yn(h.willing),
        yn(h.error),
        h.oper_version,
        h.max_version,
        h.subtype
    );
    let hdrm = lossless_wire::cee::FLAG_HEADROOM_MEASUREMENT;
    if h.reserved_flags & hdrm != 0 {
        s.push_str(", headroom measurement (bit 4)");
    }
    if h.reserved_flags & !hdrm != 0 {
        let _ = write!(s, ", reserved flag bits {:#04x}", h.reserved_flags & !hdrm);
    }
    s
}

fn feature<C>(
    out: &mut String,
    label: &str,
    f: &Option<Result<FeatureTlv<C>, DecodeError>>,
    body: impl FnOnce(&C, &mut String),
) {
    match f {
        None => {}
        Some(Err(e)) => line(out, 6, label, format!("MALFORMED {}", error_text(e))),
        Some(Ok(t)) => {
            line(out, 6, label, flags(&t.header));
            body(&t.cfg, out);
        }
    }
}

fn dcbx(cee: &CeeDcbx, out: &mut String) {
    line(out, 4, "CEE DCBX", "OUI 00-1b-21 subtype 2");
    match &cee.control {
        Some(c) => line(
            out,
            6,
            "control",
            format!(
                "seq {}, ack {}  (version {}, max {})",
                c.seq, c.ack, c.oper_version, c.max_version
            ),
        ),
        None => line(out, 6, "control", "absent"),
    }
    feature(out, "pg", &cee.pg, pg);
    feature(out, "pfc", &cee.pfc, pfc);
    feature(out, "app", &cee.app, app);
    for a in &cee.anomalies {
        line(out, 6, "anomaly", error_text(a));
    }
    if cee.unknown_subtlvs > 0 {
        line(
            out,
            6,
            "unknown",
            format!(
                "{} sub-TLV(s) of unknown type, skipped",
                cee.unknown_subtlvs
            ),
        );
    }
}

fn pg(cfg: &PgConfig, out: &mut String) {
    let pgid: Vec<String> = cfg
        .pgid
        .iter()
        .enumerate()
        .map(|(p, &g)| {
            if g == PGID_STRICT {
                format!("{p}:strict")
            } else {
                format!("{p}:{g}")
            }
        })
        .collect();
    line(out, 8, "pgid", format!("by priority  {}", pgid.join(" ")));
    let pct: Vec<String> = cfg
        .percent
        .iter()
        .enumerate()
        .map(|(g, p)| format!("{g}:{p}%"))
        .collect();
    line(out, 8, "percent", format!("by pg        {}", pct.join(" ")));
    // The same table the other way round: which priorities share each group.
    let mut groups = Vec::new();
    for g in (0..8u8).chain([PGID_STRICT]) {
        let members: Vec<String> = (0..8)
            .filter(|&p| cfg.pgid[p] == g)
            .map(|p| p.to_string())
            .collect();
        if members.is_empty() {
            continue;
        }
        let list = format!("[{}]", members.join(", "));
        match cfg.percent.get(usize::from(g)) {
            Some(pct) => groups.push(format!("pg {g} {pct}% {list}")),
            None => groups.push(format!("strict {list}")),
        }
    }
    let odd: Vec<String> = (0..8)
        .filter(|&p| cfg.pgid[p] > 7 && cfg.pgid[p] != PGID_STRICT)
        .map(|p| format!("priority {p} has pgid {}", cfg.pgid[p]))
        .collect();
    groups.extend(odd);
    line(out, 8, "groups", groups.join("; "));
    line(out, 8, "num_tcs", cfg.num_tcs);
}

fn pfc(cfg: &PfcConfig, out: &mut String) {
    line(out, 8, "priorities", names::priority_list(cfg.priorities));
    line(out, 8, "num_tcs", cfg.num_tcs);
}

fn app(cfg: &AppConfig, out: &mut String) {
    if cfg.entries.is_empty() {
        line(out, 8, "entries", "none");
    }
    for e in &cfg.entries {
        let mut v = app_name::app_entry(e.selector.into(), e.protocol, e.priorities);
        if e.oui != lossless_wire::cee::DCBX_OUI {
            let _ = write!(v, "  (OUI {})", names::oui(e.oui));
        }
        line(out, 8, "entry", v);
    }
}

fn yn(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// One IEEE TLV: its header line and body, or MALFORMED with the error.
fn ieee_tlv<T>(
    out: &mut String,
    label: &str,
    t: &Option<Result<T, DecodeError>>,
    head: impl FnOnce(&T) -> String,
    body: impl FnOnce(&T, &mut String),
) {
    match t {
        None => {}
        Some(Err(e)) => line(out, 6, label, format!("MALFORMED {}", error_text(e))),
        Some(Ok(v)) => {
            line(out, 6, label, head(v));
            body(v, out);
        }
    }
}

fn ieee(i: &IeeeDcbx, out: &mut String) {
    line(out, 4, "IEEE DCBX", "OUI 00-80-c2 (IEEE 802.1Qaz)");
    ieee_tlv(
        out,
        "ets config",
        &i.ets_config,
        |c| {
            format!(
                "willing {}, cbs {}, max_tcs {}",
                yn(c.willing),
                yn(c.cbs),
                c.max_tcs
            )
        },
        |c, out| ets_table(&c.table, out),
    );
    ieee_tlv(
        out,
        "ets reco",
        &i.ets_recommendation,
        |_| "recommended to a willing peer".to_string(),
        |r, out| ets_table(&r.table, out),
    );
    ieee_tlv(
        out,
        "pfc",
        &i.pfc,
        |p| {
            format!(
                "willing {}, mbc {}, cap {}",
                yn(p.willing),
                yn(p.mbc),
                p.cap
            )
        },
        |p, out| line(out, 8, "priorities", names::priority_list(p.enabled)),
    );
    ieee_tlv(
        out,
        "app",
        &i.app,
        |t| match t.len() {
            1 => "1 entry".to_string(),
            n => format!("{n} entries"),
        },
        ieee_app,
    );
}

fn ets_table(t: &EtsTable, out: &mut String) {
    let by = |v: Vec<String>| v.join(" ");
    line(
        out,
        8,
        "prio_tc",
        format!(
            "by priority  {}",
            by(t.prio_tc
                .iter()
                .enumerate()
                .map(|(p, tc)| format!("{p}:{tc}"))
                .collect())
        ),
    );
    line(
        out,
        8,
        "tc_bw",
        format!(
            "by tc        {}",
            by(t.tc_bw
                .iter()
                .enumerate()
                .map(|(tc, bw)| format!("{tc}:{bw}%"))
                .collect())
        ),
    );
    line(
        out,
        8,
        "tsa",
        format!(
            "by tc        {}",
            by(t.tsa
                .iter()
                .enumerate()
                .map(|(tc, &a)| format!("{tc}:{}", names::tsa_name(a)))
                .collect())
        ),
    );
    // The same table the other way round, as every command writes one.
    line(out, 8, "tcs", t.summary());
}

fn ieee_app(t: &AppPriorityTable, out: &mut String) {
    for e in t.iter() {
        line(
            out,
            8,
            "entry",
            app_name::app_entry(e.selector.into(), e.protocol, e.priority),
        );
    }
}

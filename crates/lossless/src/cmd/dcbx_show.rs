//! `lossless dcbx show` as text: the mode line, then the features of the version
//! that runs. IEEE 802.1Qaz: ETS, PFC and APP with admin/peer/oper, agreed and
//! error; CEE DCBX: PG, PFC and APP with desired/peer/oper, Syncd and the control
//! state. The JSON (`--json`) has both, always.

use std::fmt::Write;

use lossless_dcbx::status::{FeatureStatus, IeeeFeatureStatus};
use lossless_dcbx::Version;
use lossless_proto::{DcbxView, NicView, RuleSelector};
use lossless_wire::app_name::{self, AppMatch};
use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig, PriorityMap};
use lossless_wire::ieee::{AppPriority, EtsTable};

use crate::cmd::table::Table;

/// One port of `dcbx show` (or the answer of `dcbx set`/`dcbx reset`), as text.
pub fn render(p: &DcbxView) -> String {
    let mut out = format!("{}\n  mode: {}\n", headline(p), mode_line(p));
    if p.dcbx.mode.running == Version::Ieee {
        ieee(p, &mut out);
    } else {
        cee(p, &mut out);
    }
    out.push('\n');
    out
}

fn headline(v: &DcbxView) -> String {
    let p = &v.dcbx;
    let state = if !p.dcbx_enabled {
        "disabled"
    } else if p.dcbx_active {
        "active"
    } else {
        "inactive"
    };
    let peer = if p.peer_present { "present" } else { "absent" };
    let health = if p.any_error {
        "ERROR"
    } else if p.all_syncd {
        if p.mode.running == Version::Ieee {
            "all agreed"
        } else {
            "all Syncd"
        }
    } else {
        "not in sync"
    };
    format!(
        "{}: DCBX {state}, {}, peer {peer}, {health}",
        p.port,
        version_title(p.mode.running),
    )
}

fn version_title(v: Version) -> &'static str {
    match v {
        Version::Ieee => "IEEE 802.1Qaz",
        Version::Cee => "CEE DCBX",
    }
}

/// A value as the JSON names it (`auto`, `config`, `repair`, ...).
fn word<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "-".into(),
    }
}

fn yn(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn opt_yn(b: Option<bool>) -> String {
    match b {
        Some(b) => yn(b),
        None => "-".into(),
    }
}

/// `configured auto (runtime), running ieee: auto: IEEE 802.1Qaz until ...`.
fn mode_line(p: &DcbxView) -> String {
    let m = &p.dcbx.mode;
    format!(
        "configured {} ({}), running {}: {}",
        word(&m.configured),
        word(&p.source.mode),
        m.running.name(),
        m.reason_text
    )
}

/// One feature's row of the per-feature table.
struct FeatureRow<'a> {
    name: &'static str,
    enable: bool,
    willing: bool,
    advertise: bool,
    peer_willing: Option<bool>,
    oper_mode: bool,
    in_sync: bool,
    error: bool,
    source: String,
    reason_text: &'a str,
}

impl<'a> FeatureRow<'a> {
    fn cee<C>(name: &'static str, f: &'a FeatureStatus<C>, source: String) -> Self {
        FeatureRow {
            name,
            enable: f.enable,
            willing: f.willing,
            advertise: f.advertise,
            peer_willing: f.peer_willing,
            oper_mode: f.oper_mode,
            in_sync: f.syncd,
            error: f.error,
            source,
            reason_text: &f.reason_text,
        }
    }

    fn ieee<C>(name: &'static str, f: &'a IeeeFeatureStatus<C>, source: String) -> Self {
        FeatureRow {
            name,
            enable: f.enable,
            willing: f.willing,
            advertise: f.advertise,
            peer_willing: f.peer_willing,
            oper_mode: f.oper_mode,
            in_sync: f.agreed,
            error: f.error,
            source,
            reason_text: &f.reason_text,
        }
    }
}

/// The per-feature state of one DCBX version; `in_sync` is the version's word for
/// the two ends matching (CEE DCBX's "syncd", IEEE 802.1Qaz's "agreed").
fn feature_table(rows: [FeatureRow; 3], in_sync: &str) -> String {
    let mut t = Table::new([
        "FEATURE", "ENABLE", "WILLING", "ADV", "PEER-W", "OPER", in_sync, "ERROR", "SOURCE",
        "REASON",
    ]);
    for x in rows {
        t.row([
            x.name.to_string(),
            yn(x.enable),
            yn(x.willing),
            yn(x.advertise),
            opt_yn(x.peer_willing),
            yn(x.oper_mode),
            yn(x.in_sync),
            yn(x.error),
            x.source,
            x.reason_text.to_string(),
        ]);
    }
    t.render()
}

fn ieee(p: &DcbxView, out: &mut String) {
    let ieee = &p.dcbx.ieee;
    out.push_str(&feature_table(
        [
            FeatureRow::ieee("ets", &ieee.ets, word(&p.source.ets)),
            FeatureRow::ieee("pfc", &ieee.pfc, word(&p.source.pfc)),
            FeatureRow::ieee("app", &ieee.app, word(&p.source.app)),
        ],
        "AGREED",
    ));
    let a = &p.ieee_admin;
    let peer = &ieee.peer_tlvs;
    let mut t = Table::new(["FEATURE", "", "CONFIG"]);
    let nic = p.nic.as_ref();
    let rows = |t: &mut Table, f: &str, cells: [String; 3]| {
        for (i, (which, cell)) in ["admin", "peer", "oper"].iter().zip(cells).enumerate() {
            t.row([
                if i == 0 { f } else { "" }.to_string(),
                which.to_string(),
                cell,
            ]);
        }
        // What the NIC holds, read back, where the daemon programs it.
        if let Some(nic) = nic {
            let cell = match f {
                "ets" => ets(nic.ets.as_ref()),
                "pfc" => priorities(nic.pfc),
                _ => {
                    let trust = match &nic.trust {
                        None => String::new(),
                        Some(t) => format!("  (trust {})", t.join(" then ")),
                    };
                    format!("{}{trust}", app_ieee(Some(&nic.apps)))
                }
            };
            t.row([String::new(), "nic".into(), cell]);
        }
    };
    let e = &ieee.ets;
    rows(
        &mut t,
        "ets",
        [
            format!(
                "{}  (max TCs {}, CBS {}, recommendation {})",
                ets(Some(&e.admin)),
                a.ets_max_tcs,
                yn(a.ets_cbs),
                if ieee.ets_recommend {
                    "sent"
                } else {
                    "not sent"
                }
            ),
            match &peer.ets_config {
                None => "-".into(),
                Some(c) => format!(
                    "{}  (max TCs {}, CBS {})",
                    ets(Some(&c.table)),
                    c.max_tcs,
                    yn(c.cbs)
                ),
            },
            ets(Some(&e.oper)),
        ],
    );
    if let Some(rec) = &peer.ets_recommendation {
        t.row([String::new(), "peer-rec".into(), ets(Some(&rec.table))]);
    }
    let f = &ieee.pfc;
    rows(
        &mut t,
        "pfc",
        [
            format!(
                "{}  (willing {}, MBC {}, cap {})",
                priorities(Some(f.admin)),
                yn(f.willing),
                yn(a.pfc_mbc),
                a.pfc_cap
            ),
            match &peer.pfc {
                None => "-".into(),
                Some(c) => format!(
                    "{}  (willing {}, MBC {}, cap {})",
                    priorities(Some(c.enabled)),
                    yn(c.willing),
                    yn(c.mbc),
                    c.cap
                ),
            },
            priorities(Some(f.oper)),
        ],
    );
    let x = &ieee.app;
    rows(
        &mut t,
        "app",
        [
            app_ieee(Some(&x.admin)),
            app_ieee(x.peer.as_deref()),
            app_ieee(Some(&x.oper)),
        ],
    );
    out.push_str(&t.render());
    if let Some(nic) = nic {
        nic_lines(nic, out);
    }
}

/// Below the table: when the NIC was read, what the driver refused, where the NIC
/// differs from what was programmed, drift.
fn nic_lines(nic: &NicView, out: &mut String) {
    let read = match (nic.read_s_ago, &nic.read_error) {
        (_, Some(e)) => format!("the last read-back failed: {e}"),
        (None, _) => "not read back yet".to_string(),
        (Some(ago), _) => format!(
            "read back {} s ago (DCB_CMD_IEEE_GET)",
            serde_json::Value::from(ago)
        ),
    };
    let _ = writeln!(
        out,
        "  nic: {read}; drift found {}, repaired {} (nic_drift = \"{}\")",
        nic.drift_detected,
        nic.drift_repaired,
        nic.drift_policy.name()
    );
    for r in &nic.refused {
        let note = if r.covered {
            "; no problem: the NIC classifies by DSCP, and a DSCP entry maps to the same priority"
        } else {
            ""
        };
        let _ = writeln!(out, "  nic: {}{note}", r.text);
    }
    if nic.dscp_only {
        out.push_str("  nic: the driver takes DSCP APP entries only (as mlx5, ice and hns3 do)\n");
    }
    for d in &nic.differences {
        let _ = writeln!(out, "  nic differs: {d}");
    }
}

/// An ETS table as every command writes one
/// ([`lossless_wire::ieee::EtsTable::summary`]): `tc0 {0,1,2,4,5,7} ets 50%; tc2 {6}
/// strict`; `-` when there is none.
fn ets(table: Option<&EtsTable>) -> String {
    match table {
        Some(t) => t.summary(),
        None => "-".into(),
    }
}

fn priorities(v: Option<PriorityMap>) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    let p: Vec<String> = v.priorities().map(|p| p.to_string()).collect();
    if p.is_empty() {
        "priorities none".into()
    } else {
        format!("priorities {}", p.join(","))
    }
}

/// IEEE APP entries grouped per selector and protocol, as every command prints
/// them: `dscp 26 (AF31) -> 3; udp 4791 (RoCEv2) -> 3`.
fn app_ieee(v: Option<&[AppPriority]>) -> String {
    let Some(v) = v else {
        return "-".into();
    };
    let mut groups: Vec<(AppMatch, u16, Vec<String>)> = Vec::new();
    for e in v {
        let sel = AppMatch::from(e.selector);
        let prio = e.priority.to_string();
        match groups.iter_mut().find(|g| g.0 == sel && g.1 == e.protocol) {
            Some(g) => g.2.push(prio),
            None => groups.push((sel, e.protocol, vec![prio])),
        }
    }
    if groups.is_empty() {
        return "(empty)".into();
    }
    groups
        .iter()
        .map(|(sel, proto, prios)| app_name::app_entry(*sel, *proto, prios.join(",")))
        .collect::<Vec<_>>()
        .join("; ")
}

fn cee(p: &DcbxView, out: &mut String) {
    let d = &p.dcbx;
    let c = &d.control;
    let _ = writeln!(
        out,
        "  control: SeqNo {} AckNo {} RcvdAckNo {}, version {}/{}",
        c.seq, c.ack, c.rcvd_ack, c.oper_version, c.max_version,
    );
    out.push_str(&feature_table(
        [
            FeatureRow::cee("pg", &d.pg, word(&p.source.pg)),
            FeatureRow::cee("pfc", &d.pfc, word(&p.source.pfc)),
            FeatureRow::cee("app", &d.app, word(&p.source.app)),
        ],
        "SYNCD",
    ));
    let mut t = Table::new(["FEATURE", "", "CONFIG"]);
    let nic = p.nic.as_ref().and_then(|n| n.cee.as_ref());
    let feature = |t: &mut Table, f: &str, cells: [String; 3]| {
        for (which, cell) in ["desired", "peer", "oper"].into_iter().zip(cells) {
            t.row([
                if which == "desired" { f } else { "" }.to_string(),
                which.to_string(),
                cell,
            ]);
        }
    };
    let list = |v: &[u8]| v.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
    feature(
        &mut t,
        "pg",
        [
            pg_cfg(Some(&d.pg.desired)),
            pg_cfg(d.pg.peer.as_ref()),
            pg_cfg(Some(&d.pg.oper)),
        ],
    );
    // What the NIC holds, read back (PG and PFC; CEE's APP is not read).
    if let Some(nic) = nic {
        let cell = match &nic.pg {
            Some((pgid, percent)) => format!("pgid {}  percent {}", list(pgid), list(percent)),
            None => "- (the driver does not report it)".into(),
        };
        t.row([String::new(), "nic".into(), cell]);
    }
    feature(
        &mut t,
        "pfc",
        [
            pfc_cfg(Some(&d.pfc.desired)),
            pfc_cfg(d.pfc.peer.as_ref()),
            pfc_cfg(Some(&d.pfc.oper)),
        ],
    );
    if let Some(nic) = nic {
        let cell = if nic.pfc_state {
            let on: Vec<String> = (0..8u8)
                .filter(|i| nic.pfc & (1 << i) != 0)
                .map(|i| i.to_string())
                .collect();
            format!(
                "priorities {}",
                if on.is_empty() {
                    "none".into()
                } else {
                    on.join(",")
                }
            )
        } else {
            "off".into()
        };
        t.row([String::new(), "nic".into(), cell]);
    }
    feature(
        &mut t,
        "app",
        [
            app_cfg(Some(&d.app.desired)),
            app_cfg(d.app.peer.as_ref()),
            app_cfg(Some(&d.app.oper)),
        ],
    );
    out.push_str(&t.render());
    if let Some(nic) = &p.nic {
        nic_lines(nic, out);
    }
    let dscp: Vec<String> = p
        .app_rules
        .entries
        .iter()
        .filter(|r| r.selector == RuleSelector::Dscp)
        .map(|r| app_name::AppTarget(AppMatch::Dscp, r.protocol).to_string())
        .collect();
    if !dscp.is_empty() {
        let _ = writeln!(
            out,
            "  (the rules {} are sent in IEEE 802.1Qaz only: CEE DCBX has no DSCP selector)",
            dscp.join(", ")
        );
    }
}

fn pg_cfg(c: Option<&PgConfig>) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    let list = |v: &[u8]| v.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
    format!(
        "pgid {}  percent {}  (tcs {})",
        list(&c.pgid),
        list(&c.percent),
        c.num_tcs
    )
}

fn pfc_cfg(c: Option<&PfcConfig>) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    let p: Vec<String> = c.priorities.priorities().map(|p| p.to_string()).collect();
    format!(
        "priorities {}  (tcs {})",
        if p.is_empty() {
            "none".into()
        } else {
            p.join(",")
        },
        c.num_tcs
    )
}

fn app_cfg(c: Option<&AppConfig>) -> String {
    let Some(c) = c else {
        return "-".into();
    };
    let entries: Vec<String> = c
        .entries
        .iter()
        .map(|e| {
            let prios: Vec<String> = e.priorities.priorities().map(|p| p.to_string()).collect();
            app_name::app_entry(AppMatch::from(e.selector), e.protocol, prios.join(","))
        })
        .collect();
    if entries.is_empty() {
        "(empty)".into()
    } else {
        entries.join("; ")
    }
}

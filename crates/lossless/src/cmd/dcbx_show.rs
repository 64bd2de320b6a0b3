//! `lossless dcbx show` as text: the mode line, then the features of the version
//! that runs. IEEE 802.1Qaz: ETS, PFC and APP with admin/peer/oper, agreed and
//! error; CEE DCBX: PG, PFC and APP with desired/peer/oper, Syncd and the control
//! state. The JSON (`--json`) has both, always.

use std::fmt::Write;

use lossless_wire::app_name::{self, AppMatch};
use serde_json::Value;

use crate::cmd::daemon::{arr, b, opt_yn, s, yn};
use crate::cmd::table::Table;

/// One port of `dcbx show` (or the answer of `dcbx set`/`dcbx reset`), as text.
pub fn render(p: &Value) -> String {
    let mut out = format!("{}\n  mode: {}\n", headline(p), mode_line(p));
    if p["mode"]["running"] == "ieee" {
        ieee(p, &mut out);
    } else {
        cee(p, &mut out);
    }
    out.push('\n');
    out
}

fn headline(p: &Value) -> String {
    let state = if !b(&p["dcbx_enabled"]) {
        "disabled"
    } else if b(&p["dcbx_active"]) {
        "active"
    } else {
        "inactive"
    };
    let peer = if b(&p["peer_present"]) {
        "present"
    } else {
        "absent"
    };
    let health = if b(&p["any_error"]) {
        "ERROR"
    } else if b(&p["all_syncd"]) {
        if p["mode"]["running"] == "ieee" {
            "all agreed"
        } else {
            "all Syncd"
        }
    } else {
        "not in sync"
    };
    format!(
        "{}: DCBX {state}, {}, peer {peer}, {health}",
        s(&p["port"]),
        version_title(&p["mode"]["running"]),
    )
}

fn version_title(v: &Value) -> &'static str {
    match v.as_str() {
        Some("ieee") => "IEEE 802.1Qaz",
        Some("cee") => "CEE DCBX",
        _ => "?",
    }
}

/// `configured auto (runtime), running ieee: auto: IEEE 802.1Qaz until ...`.
fn mode_line(p: &Value) -> String {
    let m = &p["mode"];
    format!(
        "configured {} ({}), running {}: {}",
        s(&m["configured"]),
        s(&p["source"]["mode"]),
        s(&m["running"]),
        s(&m["reason_text"])
    )
}

/// The per-feature state of one DCBX version: `features` holds each feature's object,
/// the port `p` their sources; `in_sync` is the version's word for the two ends
/// matching (CEE DCBX's "syncd", IEEE 802.1Qaz's "agreed").
fn feature_table(p: &Value, features: &Value, names: [&str; 3], in_sync: (&str, &str)) -> String {
    let mut t = Table::new([
        "FEATURE", "ENABLE", "WILLING", "ADV", "PEER-W", "OPER", in_sync.0, "ERROR", "SOURCE",
        "REASON",
    ]);
    for f in names {
        let x = &features[f];
        t.row([
            f.to_string(),
            yn(&x["enable"]),
            yn(&x["willing"]),
            yn(&x["advertise"]),
            opt_yn(&x["peer_willing"]),
            yn(&x["oper_mode"]),
            yn(&x[in_sync.1]),
            yn(&x["error"]),
            s(&p["source"][f]),
            s(&x["reason_text"]),
        ]);
    }
    t.render()
}

fn ieee(p: &Value, out: &mut String) {
    let ieee = &p["ieee"];
    out.push_str(&feature_table(
        p,
        ieee,
        ["ets", "pfc", "app"],
        ("AGREED", "agreed"),
    ));
    let a = &p["ieee_admin"];
    let peer = &ieee["peer_tlvs"];
    let mut t = Table::new(["FEATURE", "", "CONFIG"]);
    let nic = &p["nic"];
    let rows = |t: &mut Table, f: &str, cells: [String; 3]| {
        for (i, (which, cell)) in ["admin", "peer", "oper"].iter().zip(cells).enumerate() {
            t.row([
                if i == 0 { f } else { "" }.to_string(),
                which.to_string(),
                cell,
            ]);
        }
        // What the NIC holds, read back, where the daemon programs it.
        if !nic.is_null() {
            let cell = match f {
                "ets" => ets(&nic["ets"]),
                "pfc" => priorities(&nic["pfc"]),
                _ => {
                    let trust = match &nic["trust"] {
                        Value::Null => String::new(),
                        t => format!(
                            "  (trust {})",
                            arr(t).iter().map(s).collect::<Vec<_>>().join(" then ")
                        ),
                    };
                    format!("{}{trust}", app_ieee(&nic["apps"]))
                }
            };
            t.row([String::new(), "nic".into(), cell]);
        }
    };
    let e = &ieee["ets"];
    rows(
        &mut t,
        "ets",
        [
            format!(
                "{}  (max TCs {}, CBS {}, recommendation {})",
                ets(&e["admin"]),
                a["ets_max_tcs"],
                yn(&a["ets_cbs"]),
                if b(&ieee["ets_recommend"]) {
                    "sent"
                } else {
                    "not sent"
                }
            ),
            match &peer["ets_config"] {
                Value::Null => "-".into(),
                c => format!(
                    "{}  (max TCs {}, CBS {})",
                    ets(c),
                    c["max_tcs"],
                    yn(&c["cbs"])
                ),
            },
            ets(&e["oper"]),
        ],
    );
    if !peer["ets_recommendation"].is_null() {
        t.row([
            String::new(),
            "peer-rec".into(),
            ets(&peer["ets_recommendation"]),
        ]);
    }
    let f = &ieee["pfc"];
    rows(
        &mut t,
        "pfc",
        [
            format!(
                "{}  (willing {}, MBC {}, cap {})",
                priorities(&f["admin"]),
                yn(&f["willing"]),
                yn(&a["pfc_mbc"]),
                a["pfc_cap"]
            ),
            match &peer["pfc"] {
                Value::Null => "-".into(),
                c => format!(
                    "{}  (willing {}, MBC {}, cap {})",
                    priorities(&c["enabled"]),
                    yn(&c["willing"]),
                    yn(&c["mbc"]),
                    c["cap"]
                ),
            },
            priorities(&f["oper"]),
        ],
    );
    let x = &ieee["app"];
    rows(
        &mut t,
        "app",
        [
            app_ieee(&x["admin"]),
            app_ieee(&x["peer"]),
            app_ieee(&x["oper"]),
        ],
    );
    out.push_str(&t.render());
    if !nic.is_null() {
        nic_lines(nic, out);
    }
}

/// Below the table: when the NIC was read, what the driver refused, where the NIC
/// differs from what was programmed, drift.
fn nic_lines(nic: &Value, out: &mut String) {
    let read = match (&nic["read_s_ago"], &nic["read_error"]) {
        (_, Value::String(e)) => format!("the last read-back failed: {e}"),
        (Value::Null, _) => "not read back yet".to_string(),
        (ago, _) => format!("read back {ago} s ago (DCB_CMD_IEEE_GET)"),
    };
    let _ = writeln!(
        out,
        "  nic: {read}; drift found {}, repaired {} (nic_drift = \"{}\")",
        nic["drift_detected"],
        nic["drift_repaired"],
        s(&nic["drift_policy"])
    );
    for r in arr(&nic["refused"]) {
        let note = if b(&r["covered"]) {
            "; no problem: the NIC classifies by DSCP, and a DSCP entry maps to the same priority"
        } else {
            ""
        };
        let _ = writeln!(out, "  nic: {}{note}", s(&r["text"]));
    }
    if b(&nic["dscp_only"]) {
        out.push_str("  nic: the driver takes DSCP APP entries only (as mlx5, ice and hns3 do)\n");
    }
    for d in arr(&nic["differences"]) {
        let _ = writeln!(out, "  nic differs: {}", s(d));
    }
}

/// An ETS table as every command writes one
/// ([`lossless_wire::ieee::EtsTable::summary`]): `tc0 {0,1,2,4,5,7} ets 50%; tc2 {6}
/// strict`; `-` when there is none.
fn ets(table: &Value) -> String {
    match serde_json::from_value::<lossless_wire::ieee::EtsTable>(table.clone()) {
        Ok(t) => t.summary(),
        Err(_) => "-".into(),
    }
}

fn priorities(v: &Value) -> String {
    if v.is_null() {
        return "-".into();
    }
    let p: Vec<String> = arr(v).iter().map(Value::to_string).collect();
    if p.is_empty() {
        "priorities none".into()
    } else {
        format!("priorities {}", p.join(","))
    }
}

/// The selector of an APP entry in the daemon's JSON: a name, or a reserved number.
fn app_match(v: &Value) -> AppMatch {
    match v {
        Value::String(name) => AppMatch::from_name(name).unwrap_or(AppMatch::Reserved(u8::MAX)),
        other => AppMatch::Reserved(
            other
                .as_u64()
                .and_then(|n| u8::try_from(n).ok())
                .unwrap_or(u8::MAX),
        ),
    }
}

/// IEEE APP entries grouped per selector and protocol, as every command prints
/// them: `dscp 26 (AF31) -> 3; udp 4791 (RoCEv2) -> 3`.
fn app_ieee(v: &Value) -> String {
    if v.is_null() {
        return "-".into();
    }
    let mut groups: Vec<(AppMatch, u16, Vec<String>)> = Vec::new();
    for e in arr(v) {
        let sel = app_match(&e["selector"]);
        let proto = e["protocol"]
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or_default();
        let prio = e["priority"].to_string();
        match groups.iter_mut().find(|g| g.0 == sel && g.1 == proto) {
            Some(g) => g.2.push(prio),
            None => groups.push((sel, proto, vec![prio])),
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

fn cee(p: &Value, out: &mut String) {
    let c = &p["control"];
    let _ = writeln!(
        out,
        "  control: SeqNo {} AckNo {} RcvdAckNo {}, version {}/{}",
        c["seq"], c["ack"], c["rcvd_ack"], c["oper_version"], c["max_version"],
    );
    out.push_str(&feature_table(
        p,
        p,
        ["pg", "pfc", "app"],
        ("SYNCD", "syncd"),
    ));
    let mut t = Table::new(["FEATURE", "", "CONFIG"]);
    let nic = &p["nic"]["cee"];
    for f in ["pg", "pfc", "app"] {
        for which in ["desired", "peer", "oper"] {
            t.row([
                if which == "desired" { f } else { "" }.to_string(),
                which.to_string(),
                cee_cfg(f, &p[f][which]),
            ]);
        }
        // What the NIC holds, read back (PG and PFC; CEE's APP is not read).
        if !nic.is_null() && f != "app" {
            let cell = if f == "pfc" {
                if b(&nic["pfc_state"]) {
                    let on: Vec<String> = (0..8)
                        .filter(|i| nic["pfc"].as_u64().unwrap_or(0) & (1 << i) != 0)
                        .map(|i: u64| i.to_string())
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
                }
            } else {
                let list = |v: &Value| {
                    arr(v)
                        .iter()
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                };
                match &nic["pg"] {
                    Value::Array(pg) if pg.len() == 2 => {
                        format!("pgid {}  percent {}", list(&pg[0]), list(&pg[1]))
                    }
                    _ => "- (the driver does not report it)".into(),
                }
            };
            t.row([String::new(), "nic".into(), cell]);
        }
    }
    out.push_str(&t.render());
    if !p["nic"].is_null() {
        nic_lines(&p["nic"], out);
    }
    let dscp: Vec<String> = arr(&p["app_rules"]["entries"])
        .iter()
        .filter(|r| r["selector"] == "dscp")
        .map(|r| {
            let proto = r["protocol"].as_u64().and_then(|p| u16::try_from(p).ok());
            app_name::AppTarget(AppMatch::Dscp, proto.unwrap_or_default()).to_string()
        })
        .collect();
    if !dscp.is_empty() {
        let _ = writeln!(
            out,
            "  (the rules {} are sent in IEEE 802.1Qaz only: CEE DCBX has no DSCP selector)",
            dscp.join(", ")
        );
    }
}

/// A CEE feature configuration in one line.
fn cee_cfg(feature: &str, c: &Value) -> String {
    if c.is_null() {
        return "-".into();
    }
    let list = |v: &Value| {
        arr(v)
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match feature {
        "pfc" => {
            let p = list(&c["priorities"]);
            format!(
                "priorities {}  (tcs {})",
                if p.is_empty() { "none".into() } else { p },
                c["num_tcs"]
            )
        }
        "pg" => format!(
            "pgid {}  percent {}  (tcs {})",
            list(&c["pgid"]),
            list(&c["percent"]),
            c["num_tcs"]
        ),
        _ => {
            let entries: Vec<String> = arr(&c["entries"])
                .iter()
                .map(|e| {
                    let proto = e["protocol"]
                        .as_u64()
                        .and_then(|p| u16::try_from(p).ok())
                        .unwrap_or_default();
                    app_name::app_entry(app_match(&e["selector"]), proto, list(&e["priorities"]))
                })
                .collect();
            if entries.is_empty() {
                "(empty)".into()
            } else {
                entries.join("; ")
            }
        }
    }
}

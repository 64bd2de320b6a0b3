#![allow(clippy::unwrap_used)]
//! `lossless decode` of IEEE 802.1Qaz DCBX: the real lldpad's capture and frames
//! built here with every selector, field by field against tshark.

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

/// The tshark fields of the four IEEE TLVs.
fn ieee_fields() -> Vec<String> {
    let mut f: Vec<String> = [
        "lldp.ieee.802_1.subtype",
        "lldp.dcbx.ieee.willing",
        "lldp.dcbx.ieee.ets.cbs",
        "lldp.dcbx.ieee.ets.maxtcs",
        "lldp.dcbx.ieee.pfc.mbc",
        "lldp.dcbx.ieee.pfc.numtcs",
        "lldp.dcbx.ieee.app.prio",
        "lldp.dcbx.iee.app.sf",
        "lldp.dcbx.feature.app.proto",
    ]
    .map(String::from)
    .to_vec();
    for p in [
        "lldp.dcbx.feature.pg.pgid_prio",
        "lldp.dcbx.feature.pg.per",
        "lldp.dcbx.ieee.ets.tsa",
        "lldp.dcbx.feature.pfc.prio",
    ] {
        f.extend((0..8).map(|i| format!("{p}{i}")));
    }
    f
}

/// What tshark must show for the `ieee_dcbx` object `decode --json` printed.
fn ieee_as_tshark_shows_it(d: &Value) -> BTreeMap<String, String> {
    fn join(v: impl IntoIterator<Item = String>) -> String {
        v.into_iter().collect::<Vec<_>>().join(",")
    }
    let num = |v: &Value| {
        v.as_u64()
            .map(|n| n.to_string())
            .unwrap_or_else(|| format!("{v}"))
    };
    let flag = |v: &Value| {
        if v == &json!(true) {
            "1".to_string()
        } else {
            "0".to_string()
        }
    };
    let code = |v: &Value, names: &[&str]| match v.as_str() {
        Some(n) => names
            .iter()
            .position(|x| *x == n)
            .expect("known name")
            .to_string(),
        None => num(v),
    };
    let tsa = |v: &Value| match v.as_str() {
        Some("vendor") => "255".to_string(),
        _ => code(v, &["strict", "cbs", "ets"]),
    };
    let mut e = BTreeMap::new();
    let present: Vec<(&str, &Value)> = [
        ("0x09", &d["ets_config"]),
        ("0x0a", &d["ets_recommendation"]),
        ("0x0b", &d["pfc"]),
        ("0x0c", &d["app"]),
    ]
    .into_iter()
    .filter(|(_, v)| !v.is_null())
    .collect();
    e.insert(
        "lldp.ieee.802_1.subtype".to_string(),
        join(present.iter().map(|p| p.0.to_string())),
    );
    let (cfg, rec, pfc, app) = (
        &d["ets_config"],
        &d["ets_recommendation"],
        &d["pfc"],
        &d["app"],
    );
    let willing = [cfg, pfc]
        .into_iter()
        .filter(|v| !v.is_null())
        .map(|v| flag(&v["willing"]));
    e.insert("lldp.dcbx.ieee.willing".into(), join(willing));
    if !cfg.is_null() {
        e.insert("lldp.dcbx.ieee.ets.cbs".into(), flag(&cfg["cbs"]));
        let max = cfg["max_tcs"].as_u64().expect("max_tcs");
        e.insert("lldp.dcbx.ieee.ets.maxtcs".into(), (max % 8).to_string());
    }
    let tables: Vec<&Value> = [cfg, rec].into_iter().filter(|v| !v.is_null()).collect();
    for i in 0..8 {
        e.insert(
            format!("lldp.dcbx.feature.pg.pgid_prio{i}"),
            join(tables.iter().map(|t| num(&t["prio_tc"][i]))),
        );
        e.insert(
            format!("lldp.dcbx.feature.pg.per{i}"),
            join(tables.iter().map(|t| num(&t["tc_bw"][i]))),
        );
        e.insert(
            format!("lldp.dcbx.ieee.ets.tsa{i}"),
            join(tables.iter().map(|t| tsa(&t["tsa"][i]))),
        );
    }
    if !pfc.is_null() {
        e.insert("lldp.dcbx.ieee.pfc.mbc".into(), flag(&pfc["mbc"]));
        e.insert("lldp.dcbx.ieee.pfc.numtcs".into(), num(&pfc["cap"]));
        let on: Vec<u64> = pfc["priorities"]
            .as_array()
            .expect("list")
            .iter()
            .filter_map(Value::as_u64)
            .collect();
        for i in 0..8 {
            let v = if on.contains(&i) { "1" } else { "0" };
            e.insert(format!("lldp.dcbx.feature.pfc.prio{i}"), v.to_string());
        }
    }
    let entries = app["entries"].as_array().cloned().unwrap_or_default();
    let sel = ["", "ethertype", "tcp", "udp", "port", "dscp"];
    e.insert(
        "lldp.dcbx.ieee.app.prio".into(),
        join(entries.iter().map(|x| num(&x["priority"]))),
    );
    e.insert(
        "lldp.dcbx.iee.app.sf".into(),
        join(entries.iter().map(|x| code(&x["selector"], &sel))),
    );
    e.insert(
        "lldp.dcbx.feature.app.proto".into(),
        join(
            entries
                .iter()
                .map(|x| format!("{:#06x}", x["protocol"].as_u64().expect("protocol"))),
        ),
    );
    e
}

/// Every field of every IEEE TLV `decode --json` printed for `path`, against tshark.
fn assert_ieee_matches_tshark(path: &Path, recs: &[Value]) {
    let fields = ieee_fields();
    let Some(rows) = tshark(path, &fields) else {
        return;
    };
    assert_eq!(rows.len(), recs.len());
    for (r, row) in recs.iter().zip(&rows) {
        let want = ieee_as_tshark_shows_it(&r["ieee_dcbx"]);
        for f in &fields {
            assert_eq!(
                row.get(f).map(String::as_str).unwrap_or(""),
                want.get(f).map(String::as_str).unwrap_or(""),
                "frame {}: {f}",
                r["frame"]
            );
        }
    }
}

#[test]
fn lldpad_ieee_capture_decodes_every_field_as_tshark_does() {
    let path = data("lldpad-ieee.pcapng");
    let out = decode(&path, true);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let recs = json_lines(&out);
    assert_eq!(recs.len(), 6);
    for r in &recs {
        assert_eq!(r["type"], "lldp");
        assert!(r.get("error").is_none(), "{r}");
        assert!(r.get("dcbx").is_none(), "no CEE TLV in IEEE mode: {r}");
        assert!(r.get("org_specific").is_none(), "all four are decoded: {r}");
    }
    // Host A, not willing, sends all four; host B, willing, ETS-CFG and PFC.
    let a = &recs[2]["ieee_dcbx"];
    assert_eq!(
        a["ets_config"],
        json!({"willing": false, "cbs": false, "max_tcs": 8,
               "prio_tc": [0, 0, 0, 1, 1, 0, 0, 0], "tc_bw": [40, 60, 0, 0, 0, 0, 0, 0],
               "tsa": ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"]})
    );
    assert_eq!(
        a["ets_recommendation"]["tc_bw"],
        json!([40, 60, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(
        a["pfc"],
        json!({"willing": false, "mbc": false, "cap": 8, "priorities": [3, 4]})
    );
    assert_eq!(
        a["app"],
        json!({"entries": [{"priority": 3, "selector": "ethertype", "protocol": 0x8906, "name": "FCoE"}]})
    );
    assert_eq!(recs[0]["ieee_dcbx"]["app"], json!({"entries": []}));
    let b = &recs[1]["ieee_dcbx"];
    assert_eq!(keys(b), ["ets_config", "pfc"]);
    assert_eq!(b["ets_config"]["willing"], true);
    assert_ieee_matches_tshark(&path, &recs);
}

#[test]
fn lldpad_ieee_readable_output() {
    let out = decode(&data("lldpad-ieee.pcapng"), false);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    insta::assert_snapshot!("lldpad_ieee", stdout(&out));
}

/// ETS with every TSA, a recommendation, PFC with MBC, eight DSCP entries
/// and one entry of each other selector; then lldpad's all-strict default.
fn ieee_frames() -> Vec<Vec<u8>> {
    let ets = ieee_tlv(
        9,
        &[
            0xc4, 0x00, 0x12, 0x33, 0x33, 30, 70, 0, 0, 0, 0, 0, 0, 2, 2, 1, 255, 0, 0, 0, 0,
        ],
    );
    let rec = ieee_tlv(
        10,
        &[
            0, 0x11, 0x11, 0, 0, 50, 50, 0, 0, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0,
        ],
    );
    let pfc = ieee_tlv(11, &[0x44, 0x08]);
    let mut app = vec![0u8];
    for (prio, sel, proto) in [
        (3u8, 5u8, 26u16),
        (3, 5, 24),
        (5, 5, 46),
        (6, 5, 48),
        (0, 5, 0),
        (1, 5, 10),
        (2, 5, 18),
        (7, 5, 56),
        (3, 1, 0x8906),
        (4, 2, 3260),
        (3, 3, 4791),
        (2, 4, 445),
    ] {
        app.push((prio << 5) | sel);
        app.extend_from_slice(&proto.to_be_bytes());
    }
    let app = ieee_tlv(12, &app);
    let default = ieee_tlv(
        9,
        &[
            0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ],
    );
    vec![
        lldp_with(&[ets, rec, pfc, app]),
        lldp_with(&[default, ieee_tlv(11, &[0x88, 0x00])]),
    ]
}

#[test]
fn dscp_entries_decode_by_name_as_tshark_does() {
    let path = write_pcap("ieee.pcap", &ieee_frames());
    let out = decode(&path, true);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let recs = json_lines(&out);
    let d = &recs[0]["ieee_dcbx"];
    assert_eq!(d["ets_config"]["max_tcs"], 4);
    assert_eq!(d["ets_config"]["cbs"], true);
    assert_eq!(
        d["ets_config"]["tsa"],
        json!(["ets", "ets", "cbs", "vendor", "strict", "strict", "strict", "strict"])
    );
    assert_eq!(
        d["pfc"],
        json!({"willing": false, "mbc": true, "cap": 4, "priorities": [3]})
    );
    let entries = d["app"]["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 12);
    assert_eq!(
        entries[0],
        json!({"priority": 3, "selector": "dscp", "protocol": 26, "name": "AF31"})
    );
    assert_eq!(entries[2]["name"], "EF");
    assert_eq!(entries[7]["name"], "CS7");
    assert_eq!(
        entries[8..],
        [
            json!({"priority": 3, "selector": "ethertype", "protocol": 0x8906, "name": "FCoE"}),
            json!({"priority": 4, "selector": "tcp", "protocol": 3260, "name": "iSCSI"}),
            json!({"priority": 3, "selector": "udp", "protocol": 4791, "name": "RoCEv2"}),
            json!({"priority": 2, "selector": "port", "protocol": 445, "name": "SMB"}),
        ]
    );
    assert_ieee_matches_tshark(&path, &recs);

    // The same from lldpad itself: 8 DSCP entries among 12, every TSA kind.
    let lldpad = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../lossless-wire/tests/data/lldpad-ieee-dscp.pcapng");
    let out = decode(&lldpad, true);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let lldpad_recs = json_lines(&out);
    let last = &lldpad_recs.last().expect("frames")["ieee_dcbx"]["app"]["entries"];
    assert_eq!(
        last[9],
        json!({"priority": 5, "selector": "dscp", "protocol": 46, "name": "EF"})
    );
    assert_ieee_matches_tshark(&lldpad, &lldpad_recs);

    let text = stdout(&decode(&path, false));
    for want in [
        "IEEE DCBX     OUI 00-80-c2 (IEEE 802.1Qaz)",
        "ets config    willing yes, cbs yes, max_tcs 4",
        "prio_tc       by priority  0:0 1:0 2:1 3:2 4:3 5:3 6:3 7:3",
        "tc_bw         by tc        0:30% 1:70% 2:0%",
        "tsa           by tc        0:ets 1:ets 2:cbs 3:vendor 4:strict",
        "tcs           tc0 {0,1} ets 30%; tc1 {2} ets 70%; tc2 {3} cbs; tc3 {4,5,6,7} vendor",
        "ets reco      recommended to a willing peer",
        "pfc           willing no, mbc yes, cap 4",
        "priorities    [3]",
        "app           12 entries",
        "entry         dscp 26 (AF31) -> 3",
        "entry         dscp 46 (EF) -> 5",
        "entry         ethertype 0x8906 (FCoE) -> 3",
        "entry         tcp 3260 (iSCSI) -> 4",
        "entry         udp 4791 (RoCEv2) -> 3",
        "entry         port 445 (SMB) -> 2",
        "ets config    willing yes, cbs no, max_tcs 8",
        "tcs           tc0 {0,1,2,3,4,5,6,7} strict",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

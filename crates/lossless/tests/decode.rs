//! `lossless decode` end to end: the built binary on captures made here from
//! known frames, and on captures of the real lldpad.

mod common;

use common::*;
use lossless_wire::cee::{DCBX_OUI, SUBTYPE_CIN};
use lossless_wire::lldp::{Id, Lldpdu};
use lossless_wire::lldp::{ManagementAddress, OrgTlv, RawTlv, SystemCapabilities};
use lossless_wire::{emit_lldp_frame, emit_mac_control_frame, MacAddr, MacControl, VlanTag};
use serde_json::{json, Value};

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

// ---------------------------------------------------------------- lldpad

#[test]
fn lldpad_cee_capture_decodes_to_the_negotiation_lldpad_ran() {
    let out = decode(&data("lldpad-cee.pcapng"), true);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(out.stderr.is_empty());
    let recs = json_lines(&out);
    assert_eq!(recs.len(), 5);

    // (src, seq, ack) per frame: the Control handshake lldpad ran.
    let handshake: Vec<(String, u64, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["src"].as_str().unwrap_or_default().to_string(),
                r["dcbx"]["control"]["seq"].as_u64().unwrap_or(u64::MAX),
                r["dcbx"]["control"]["ack"].as_u64().unwrap_or(u64::MAX),
            )
        })
        .collect();
    let a = "02:00:00:00:00:0a".to_string();
    let b = "02:00:00:00:00:0b".to_string();
    assert_eq!(
        handshake,
        vec![
            (a.clone(), 1, 0),
            (b.clone(), 1, 1),
            (a.clone(), 2, 1),
            (b.clone(), 1, 2),
            (a.clone(), 2, 1),
        ]
    );

    let f1 = &recs[0];
    assert_eq!(f1["frame"], 1);
    assert_eq!(f1["type"], "lldp");
    assert_eq!(f1["ethertype"], "0x88cc");
    assert_eq!(f1["dst"], "01:80:c2:00:00:0e");
    assert!(f1.get("vlan").is_none());
    assert_eq!(
        f1["chassis_id"],
        json!({"subtype": 4, "value": "02:00:00:00:00:0a"})
    );
    assert_eq!(
        f1["port_id"],
        json!({"subtype": 3, "value": "02:00:00:00:00:0a"})
    );
    assert_eq!(f1["ttl"], 120);
    let t = f1["time"].as_f64().expect("time is a number");
    assert!((t - 1_795_253_797.183_091).abs() < 1e-5, "time {t}");
    assert_eq!(
        keys(f1),
        [
            "chassis_id",
            "dcbx",
            "dst",
            "ethertype",
            "frame",
            "len",
            "port_id",
            "src",
            "time",
            "ttl",
            "type"
        ]
    );

    let d = &f1["dcbx"];
    assert_eq!(
        keys(d),
        [
            "anomalies",
            "app",
            "control",
            "pfc",
            "pg",
            "unknown_subtlvs"
        ]
    );
    assert_eq!(
        d["control"],
        json!({"oper_version": 0, "max_version": 0, "seq": 1, "ack": 0})
    );
    assert_eq!(
        d["pg"],
        json!({
            "oper_version": 0, "max_version": 0, "enable": true, "willing": false,
            "error": false, "subtype": 0,
            "pgid": [0, 0, 0, 0, 1, 1, 1, 15],
            "percent": [25, 75, 0, 0, 0, 0, 0, 0],
            "num_tcs": 8
        })
    );
    assert_eq!(
        d["pfc"],
        json!({
            "oper_version": 0, "max_version": 0, "enable": true, "willing": false,
            "error": false, "subtype": 0, "priorities": [3, 4], "num_tcs": 8
        })
    );
    assert_eq!(d["app"]["willing"], true);
    assert_eq!(
        d["app"]["entries"],
        json!([
            {"selector": "ethertype", "protocol": 0x8906, "oui": [0, 0x1b, 0x21], "priorities": [3]},
            {"selector": "port", "protocol": 3260, "oui": [0, 0x1b, 0x21], "priorities": [4]},
            {"selector": "ethertype", "protocol": 0x8914, "oui": [0, 0x1b, 0x21], "priorities": [3]},
        ])
    );
    assert_eq!(d["anomalies"], json!([]));

    // The other end: lldpad defaults, all willing, PFC on no priority.
    let d2 = &recs[1]["dcbx"];
    assert_eq!(d2["pg"]["pgid"], json!([0, 1, 2, 3, 4, 5, 6, 7]));
    assert_eq!(d2["pg"]["percent"], json!([13, 13, 13, 13, 12, 12, 12, 12]));
    assert_eq!(d2["pg"]["willing"], true);
    assert_eq!(d2["pfc"]["priorities"], json!([]));
}

#[test]
fn lldpad_cee_readable_output() {
    let out = decode(&data("lldpad-cee.pcapng"), false);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    insta::assert_snapshot!("lldpad_cee", stdout(&out));
}

#[test]
fn malformed_ieee_tlvs_are_errors_in_place() {
    let recs = json_lines(&decode_test_frames(true));
    let r = &recs[11];
    assert!(r.get("error").is_none(), "the LLDPDU stands: {r}");
    let d = &r["ieee_dcbx"];
    // ETS-CFG at 36: TSA of TC 2 at 36 + 19 + 2.
    assert_eq!(
        d["ets_config"]["error"],
        json!({"offset": 57, "field": "ieee.ets_cfg.tsa", "kind": "bad_value", "value": 3,
               "detail": "TSA 3..254 is reserved (0 strict, 1 CBS, 2 ETS, 255 vendor)",
               "reason": "bad value 3: TSA 3..254 is reserved (0 strict, 1 CBS, 2 ETS, 255 vendor)"})
    );
    assert_eq!(d["pfc"]["priorities"], json!([3]));
    // APP at 36 + 27 + 8 = 71: entries from 78, the second's protocol at 82.
    assert_eq!(d["app"]["error"]["offset"], 82);
    assert_eq!(d["app"]["error"]["field"], "ieee.app.protocol");
    assert_eq!(d["app"]["error"]["value"], 64);
    let text = stdout(&decode_test_frames(false));
    assert!(
        text.contains("ets config    MALFORMED ieee.ets_cfg.tsa at offset 57: bad value 3"),
        "{text}"
    );
    assert!(
        text.contains(
            "app           MALFORMED ieee.app.protocol at offset 82: bad value 64: a DSCP is 0..63"
        ),
        "{text}"
    );
}

// ------------------------------------------------- frames built here

/// The capture every format test uses; see each frame's comment for what it checks.
fn test_frames() -> Vec<Vec<u8>> {
    let mut frames = Vec::new();

    // 1: the example CEE DCBX TLV (`reference_cee`) in a well-formed LLDPDU.
    frames.push(lldp_frame(Some(reference_cee())));

    // 2: a System Name TLV claiming 100 bytes with 3 left: truncated TLV at 36.
    let mut f = lldp_prefix();
    f.extend_from_slice(&[0x0a, 100, b'a', b'b', b'c']);
    frames.push(pad(f));

    // 3: Control, then a PG sub-TLV of length 0 at 36 + 6 + 12 = 54.
    let mut f = lldp_prefix();
    push_cee_header(&mut f, 12 + 2);
    f.extend(control_subtlv(1, 0));
    f.extend_from_slice(&[0x04, 0x00]);
    f.extend_from_slice(&[0, 0]);
    frames.push(pad(f));

    // 4: PFC whose class-enable vector has its reserved high byte set (at 14 + 2).
    let mut f = Vec::new();
    let pfc_bad = MacControl::Pfc {
        class_enable: 0x0108,
        quanta: [0; 8],
    };
    emit_mac_control_frame(SRC, MacAddr::MAC_CONTROL, None, &pfc_bad, &mut f);
    frames.push(f);

    // 5: a priority-tagged PFC frame pausing 3 and 4.
    let mut f = Vec::new();
    let pfc = MacControl::Pfc {
        class_enable: 0x0018,
        quanta: [0, 0, 0, 0xffff, 0x0100, 0, 0, 0],
    };
    let tag = VlanTag {
        pcp: 3,
        dei: false,
        vid: 0,
    };
    emit_mac_control_frame(SRC, MacAddr::MAC_CONTROL, Some(tag), &pfc, &mut f);
    frames.push(f);

    // 6: an 802.3x PAUSE.
    let mut f = Vec::new();
    let pause = MacControl::Pause { quanta: 0xffff };
    emit_mac_control_frame(SRC, MacAddr::MAC_CONTROL, None, &pause, &mut f);
    frames.push(f);

    // 7: IPv4: not ours.
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&SRC.0);
    f.extend_from_slice(&[0x08, 0x00, 0x45, 0x00]);
    frames.push(pad(f));

    // 8: PG with PGID 9 on priority 0 (value byte at 54 + 2 + 4 = 60), PFC
    // on 3 at 73, and a second PFC sub-TLV at 81.
    let mut f = lldp_prefix();
    push_cee_header(&mut f, 12 + 19 + 8 + 8);
    f.extend(control_subtlv(5, 4));
    f.extend_from_slice(&[0x04, 0x11, 0, 0, 0x80, 0, 0x90, 0, 0, 0]);
    f.extend_from_slice(&[100, 0, 0, 0, 0, 0, 0, 0, 8]);
    f.extend(pfc_subtlv(0x08));
    f.extend(pfc_subtlv(0x10));
    f.extend_from_slice(&[0, 0]);
    frames.push(pad(f));

    // 9: every optional TLV, a CIN DCBX TLV, an 802.1 TLV and a reserved-type TLV.
    let name = b"sw1";
    let ip = [10, 0, 0, 1];
    let (chassis, port): (Id<'_>, Id<'_>) = Lldpdu::mac_ids(&SRC);
    let mut pdu = Lldpdu::new(
        chassis,
        Id {
            subtype: 5,
            id: b"eth0",
        },
        120,
    );
    pdu.port_id.subtype = port.subtype + 2; // 5: interface name
    pdu.port_description = Some(b"uplink to spine");
    pdu.system_name = Some(name);
    pdu.system_description = Some(b"Debian");
    pdu.system_capabilities = Some(SystemCapabilities {
        capabilities: 0b1_0100,
        enabled: 0b1_0000,
    });
    pdu.management_addresses.push(ManagementAddress {
        address_subtype: 1,
        address: &ip,
        interface_subtype: 2,
        interface_number: 3,
        oid: &[],
    });
    pdu.cin_dcbx = Some(&[0x01, 0x02, 0x03]);
    pdu.org_specific.push(OrgTlv {
        oui: [0x00, 0x80, 0xc2],
        subtype: 1,
        info: &[0x00, 0x0a],
    });
    pdu.unknown.push(RawTlv {
        tlv_type: 9,
        value: &[0xde, 0xad],
    });
    let mut f = Vec::new();
    emit_lldp_frame(SRC, &pdu, &mut f).expect("emits");
    frames.push(f);

    // 10: a runt: not even an Ethernet header.
    frames.push(vec![0x01, 0x80, 0xc2, 0, 0, 0x0e, 0x02, 0, 0, 0]);

    // 11: a shutdown LLDPDU (TTL 0).
    let (chassis, port) = Lldpdu::mac_ids(&SRC);
    let mut f = Vec::new();
    emit_lldp_frame(SRC, &Lldpdu::new(chassis, port, 0), &mut f).expect("emits");
    frames.push(f);

    // 12: IEEE TLVs at 36: ETS-CFG with TSA 3 on TC 2, PFC on 3, APP whose
    // second entry is DSCP 64.
    frames.push(lldp_with(&[
        ieee_tlv(
            9,
            &[
                0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0,
            ],
        ),
        ieee_tlv(11, &[0x08, 0x08]),
        ieee_tlv(12, &[0, 0x65, 0, 46, 0x65, 0, 64]),
    ]));

    let _ = (DCBX_OUI, SUBTYPE_CIN);
    frames
}

fn decode_test_frames(json: bool) -> std::process::Output {
    let path = write_pcap("frames.pcap", &test_frames());
    let out = decode(&path, json);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert!(out.stderr.is_empty(), "stderr: {}", stderr(&out));
    out
}

#[test]
fn every_record_is_one_json_object_per_line() {
    let recs = json_lines(&decode_test_frames(true));
    assert_eq!(recs.len(), test_frames().len());
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r["frame"], i + 1);
        let t = r["time"].as_f64().expect("time");
        let want = 1_700_000_000.25 + i as f64;
        assert!((t - want).abs() < 1e-6, "frame {}: time {t}", i + 1);
        let ty = r["type"].as_str().expect("type");
        assert!(["lldp", "pfc", "pause", "other"].contains(&ty), "{r}");
    }
}

#[test]
fn reference_tlv_decodes_field_by_field() {
    let recs = json_lines(&decode_test_frames(true));
    let d = &recs[0]["dcbx"];
    assert_eq!(d["control"]["seq"], 7);
    assert_eq!(d["control"]["ack"], 6);
    assert_eq!(d["pg"]["pgid"], json!([0, 0, 0, 1, 1, 1, 15, 2]));
    assert_eq!(d["pg"]["percent"], json!([25, 75, 0, 0, 0, 0, 0, 0]));
    assert_eq!(d["pg"]["enable"], true);
    assert_eq!(d["pg"]["willing"], false);
    assert_eq!(d["pfc"]["priorities"], json!([3]));
    assert_eq!(d["pfc"]["willing"], true);
    assert_eq!(d["pfc"]["error"], false);
    assert_eq!(d["app"]["entries"][0]["protocol"], 0x8906);
    assert_eq!(d["app"]["entries"][0]["priorities"], json!([3]));
    assert_eq!(d["app"]["entries"][1]["selector"], "port");
    assert_eq!(d["app"]["entries"][1]["priorities"], json!([4]));
}

#[test]
fn truncated_tlv_is_an_error_object_at_its_offset() {
    let recs = json_lines(&decode_test_frames(true));
    let r = &recs[1];
    assert_eq!(r["type"], "lldp");
    assert_eq!(r["src"], "02:00:00:00:00:01");
    assert!(r.get("chassis_id").is_none(), "no partial decode: {r}");
    let e = &r["error"];
    assert_eq!(e["offset"], 36);
    assert_eq!(e["field"], "lldp.tlv.length");
    assert_eq!(e["kind"], "length_beyond_container");
    assert_eq!(e["length"], 100);
    assert_eq!(
        e["reason"],
        "length 100 exceeds the 22 bytes left in the enclosing TLV"
    );
}

#[test]
fn zero_length_subtlv_is_an_error_object_at_its_offset() {
    let recs = json_lines(&decode_test_frames(true));
    let e = &recs[2]["error"];
    assert_eq!(
        *e,
        json!({"offset": 54, "field": "dcbx.subtlv.length", "kind": "zero_length", "reason": "zero-length sub-TLV"})
    );
}

#[test]
fn pfc_with_reserved_high_byte_is_an_error_object() {
    let recs = json_lines(&decode_test_frames(true));
    let r = &recs[3];
    assert_eq!(r["type"], "pfc");
    assert_eq!(r["ethertype"], "0x8808");
    let e = &r["error"];
    assert_eq!(e["offset"], 16);
    assert_eq!(e["field"], "macc.cbfc.enbv");
    assert_eq!(e["kind"], "bad_value");
    assert_eq!(e["value"], 0x0108);
    assert!(e["reason"]
        .as_str()
        .unwrap_or_default()
        .contains("reserved high byte"));
}

#[test]
fn pfc_pause_and_other_frames() {
    let recs = json_lines(&decode_test_frames(true));
    let pfc = &recs[4];
    assert_eq!(pfc["type"], "pfc");
    assert_eq!(pfc["vlan"], json!({"id": 0, "pcp": 3, "dei": false}));
    assert_eq!(pfc["dst"], "01:80:c2:00:00:01");
    assert_eq!(pfc["class_enable"], 0x18);
    assert_eq!(pfc["priorities"], json!([3, 4]));
    assert_eq!(pfc["quanta"], json!([0, 0, 0, 65535, 256, 0, 0, 0]));
    assert!(pfc.get("error").is_none());

    let pause = &recs[5];
    assert_eq!(pause["type"], "pause");
    assert_eq!(pause["quanta"], 65535);

    let other = &recs[6];
    assert_eq!(other["type"], "other");
    assert_eq!(other["ethertype"], "0x0800");
    assert_eq!(
        keys(other),
        ["dst", "ethertype", "frame", "len", "src", "time", "type"]
    );
}

#[test]
fn malformed_feature_and_duplicates_stay_inside_dcbx() {
    let recs = json_lines(&decode_test_frames(true));
    let r = &recs[7];
    assert!(r.get("error").is_none(), "the frame itself is fine: {r}");
    let d = &r["dcbx"];
    assert_eq!(d["control"]["seq"], 5);
    assert_eq!(d["control"]["ack"], 4);
    assert_eq!(keys(&d["pg"]), ["error"]);
    let pg_err = &d["pg"]["error"];
    assert_eq!(pg_err["offset"], 60);
    assert_eq!(pg_err["field"], "dcbx.pg.pgid");
    assert_eq!(pg_err["value"], 9);
    assert_eq!(d["pfc"]["priorities"], json!([3]), "the first PFC is kept");
    let anomalies = d["anomalies"].as_array().expect("anomalies");
    assert!(anomalies.contains(pg_err));
    assert!(
        anomalies.contains(&json!({
            "offset": 81, "field": "dcbx.pfc", "kind": "duplicate", "first_offset": 73,
            "reason": "duplicate (first seen at offset 73)"
        })),
        "{anomalies:?}"
    );
}

#[test]
fn optional_tlvs_cin_and_unknown() {
    let recs = json_lines(&decode_test_frames(true));
    let r = &recs[8];
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(r["port_id"], json!({"subtype": 5, "value": "eth0"}));
    assert_eq!(r["port_description"], "uplink to spine");
    assert_eq!(r["system_name"], "sw1");
    assert_eq!(r["system_description"], "Debian");
    assert_eq!(
        r["system_capabilities"],
        json!({"capabilities": ["bridge", "router"], "enabled": ["router"]})
    );
    assert_eq!(
        r["management_addresses"],
        json!([{"family": 1, "address": "10.0.0.1", "interface_subtype": 2, "interface_number": 3}])
    );
    assert_eq!(r["cin_dcbx"], "010203");
    assert_eq!(r["org_specific"][0]["oui"], "00-80-c2");
    assert_eq!(r["unknown_tlvs"], json!([{"type": 9, "value": "dead"}]));

    let runt = &recs[9];
    assert_eq!(runt["type"], "other");
    assert!(runt.get("src").is_none());
    assert_eq!(runt["error"]["kind"], "truncated");

    assert_eq!(recs[10]["ttl"], 0);
}

#[test]
fn readable_output_names_every_part() {
    let text = stdout(&decode_test_frames(false));
    for want in [
        "frame 1  1700000000.250000  02:00:00:00:00:01 -> 01:80:c2:00:00:0e  LLDP (0x88cc)",
        "control       seq 7, ack 6",
        "pgid          by priority  0:0 1:0 2:0 3:1 4:1 5:1 6:strict 7:2",
        "percent       by pg        0:25% 1:75% 2:0%",
        "groups        pg 0 25% [0, 1, 2]; pg 1 75% [3, 4, 5]; pg 2 0% [7]; strict [6]",
        "priorities    [3]",
        "entry         ethertype 0x8906 (FCoE) -> 3",
        "MALFORMED     lldp.tlv.length at offset 36: length 100 exceeds",
        "MALFORMED     dcbx.subtlv.length at offset 54: zero-length sub-TLV",
        "MALFORMED     macc.cbfc.enbv at offset 16",
        "vlan 0 pcp 3  PFC (0x8808)",
        "priorities    [3, 4] (class-enable vector 0x0018)",
        "quanta        0:0- 1:0- 2:0- 3:65535 4:256 5:0- 6:0- 7:0-",
        "pause         65535 quanta",
        "other (0x0800)",
        "pg            MALFORMED dcbx.pg.pgid at offset 60",
        "anomaly       dcbx.pfc at offset 81: duplicate (first seen at offset 73)",
        "capabilities  bridge, router (enabled: router)",
        "mgmt address  ipv4 10.0.0.1, ifIndex 3",
        "CIN DCBX      OUI 00-1b-21 subtype 1",
        "org-specific  OUI 00-80-c2 subtype 1 (IEEE 802.1 Port VLAN ID): 00 0a",
        "unknown TLV   type 9: de ad",
        "ttl           0 s (shutdown",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}

#[test]
fn pcapng_and_pcap_decode_alike() {
    let frames = test_frames();
    let a = json_lines(&decode(&write_pcap("alike.pcap", &frames), true));
    let b = json_lines(&decode(&write_pcapng("alike.pcapng", &frames), true));
    assert_eq!(a.len(), frames.len());
    assert_eq!(a, b);
}

#[test]
fn non_ethernet_link_type_is_reported_per_frame() {
    let path = write_pcap_linktype("sll.pcap", &[lldp_frame(None)], DataLink::LINUX_SLL);
    let out = decode(&path, true);
    assert_eq!(out.status.code(), Some(0));
    let recs = json_lines(&out);
    assert_eq!(recs[0]["error"]["field"], "capture.linktype");
    assert_eq!(recs[0]["error"]["offset"], 0);
}

// ------------------------------------------------------ bad captures

#[test]
fn truncated_capture_prints_what_came_before_then_fails() {
    let frames = test_frames();
    let path = write_pcap("full.pcap", &frames[..3]);
    let mut bytes = std::fs::read(&path).expect("read back");
    bytes.truncate(bytes.len() - 10);
    let cut = tmp("cut.pcap");
    std::fs::write(&cut, &bytes).expect("write cut");
    let out = decode(&cut, true);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_lines(&out).len(), 2);
    let third_at = 24 + 16 + frames[0].len() + 16 + frames[1].len();
    // Asked for JSON: the failure in JSON on stderr.
    let err: serde_json::Value = serde_json::from_str(stderr(&out).trim()).expect("JSON error");
    assert_eq!(err["error"]["what"], cut.display().to_string());
    assert_eq!(err["error"]["exit"], 2);
    let out = decode(&cut, false);
    let err = stderr(&out);
    assert_eq!(
        err.trim_end(),
        format!(
            "lossless: {}: at byte {third_at}: truncated record of frame 3: it claims {} captured bytes, {} left (2 frame(s) before it decoded)",
            cut.display(),
            frames[2].len(),
            frames[2].len() - 10
        )
    );
}

#[test]
fn truncated_pcapng_names_the_block() {
    let bytes = std::fs::read(data("lldpad-cee.pcapng")).expect("read");
    let cut = tmp("cut.pcapng");
    // SHB (180) + IDB (92) + two EPBs (140 each) + 100 bytes of the third.
    std::fs::write(&cut, &bytes[..180 + 92 + 280 + 100]).expect("write");
    let out = decode(&cut, false);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out).matches("\nframe ").count() + 1, 2);
    assert!(
        stderr(&out).contains(
            "at byte 552: truncated enhanced packet block: it claims 140 bytes, 100 left in the file"
        ),
        "{}",
        stderr(&out)
    );
}

#[test]
fn not_a_capture_is_an_input_error() {
    let path = tmp("not.pcap");
    std::fs::write(&path, b"hello, world\n").expect("write");
    let out = decode(&path, false);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.starts_with(&format!(
            "lossless: {}: at byte 0: not a pcap or pcapng capture: starts with 68 65 6c 6c",
            path.display()
        )),
        "{err}"
    );

    let empty = tmp("empty.pcap");
    std::fs::write(&empty, b"").expect("write");
    let out = decode(&empty, false);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("the file has 0 bytes"));

    let out = run(&["decode", "/nonexistent/capture.pcap"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("lossless: /nonexistent/capture.pcap: cannot read: "));
}

/// Every prefix of a real capture and of the built one, and every single-byte
/// corruption of the built one: never a panic, exit 0 or 2, errors in house format.
#[test]
fn no_input_makes_it_panic() {
    let mut inputs = Vec::new();
    let real = std::fs::read(data("lldpad-cee.pcapng")).expect("read");
    for n in 0..real.len() {
        inputs.push(real[..n].to_vec());
    }
    let built = std::fs::read(write_pcap("fuzz.pcap", &test_frames())).expect("read");
    for n in (0..built.len()).step_by(7) {
        inputs.push(built[..n].to_vec());
    }
    for i in (0..built.len()).step_by(3) {
        let mut v = built.clone();
        v[i] ^= 0xff;
        inputs.push(v);
    }
    let path = tmp("fuzz-input");
    for (i, input) in inputs.iter().enumerate() {
        std::fs::write(&path, input).expect("write");
        let out = decode(&path, i % 2 == 0);
        let err = stderr(&out);
        assert!(
            matches!(out.status.code(), Some(0) | Some(2)),
            "input {i}: status {:?}, stderr {err}",
            out.status
        );
        assert!(!err.contains("panicked"), "input {i}: {err}");
        if out.status.code() == Some(2) {
            assert_eq!(err.lines().count(), 1, "input {i}: {err}");
            if i % 2 == 0 {
                // Asked for JSON: one JSON object.
                let v: serde_json::Value = serde_json::from_str(err.trim())
                    .unwrap_or_else(|e| panic!("input {i}: {e}: {err}"));
                assert_eq!(v["error"]["exit"], 2, "input {i}: {err}");
            } else {
                assert!(err.starts_with("lossless: "), "input {i}: {err}");
            }
        }
    }
}

// ------------------------------------------------------------ usage

#[test]
fn usage_errors_exit_2_in_house_format() {
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("lossless: usage: a command is required"));

    let out = run(&["decode"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("lossless: usage: "));

    let out = run(&["decode", "x.pcap", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("lossless: usage: unexpected argument '--bogus'"));
}

#[test]
fn help_teaches_with_examples() {
    let out = run(&["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("decode"));
    assert!(text.contains("Examples:"));

    let out = run(&["decode", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("Example: lossless decode"));
    assert!(text.contains("--json"));
    assert!(text.contains("docs/decode.md"));
}

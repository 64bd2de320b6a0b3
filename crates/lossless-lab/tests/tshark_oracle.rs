//! The frames of a simulated scenario, checked by an oracle we did not write:
//! tshark decodes every DCBX field as configured. tshark walks fixed offsets
//! and ignores sub-TLV lengths, so those are asserted here from the bytes.
//!
//! Needs tshark (CI installs it). Without it the test fails, unless
//! LOSSLESS_SKIP_ORACLES=1 says to skip on purpose.

mod common;
use common::*;

use lossless_dcbx::Duration;
use lossless_lab::pcap::write_pcap;

const FIELDS: &[&str] = &[
    "eth.src",
    "lldp.time_to_live",
    "lldp.dcbx.control.seq",
    "lldp.dcbx.control.ack",
    "lldp.dcbx.feature.enabled",
    "lldp.dcbx.feature.willing",
    "lldp.dcbx.feature.error",
    "lldp.dcbx.feature.pg.pgid_prio0",
    "lldp.dcbx.feature.pg.pgid_prio3",
    "lldp.dcbx.feature.pg.pgid_prio6",
    "lldp.dcbx.feature.pg.pgid_prio7",
    "lldp.dcbx.feature.pg.per0",
    "lldp.dcbx.feature.pg.per1",
    "lldp.dcbx.feature.pg.numtcs",
    "lldp.dcbx.feature.pfc.prio3",
    "lldp.dcbx.feature.pfc.prio4",
    "lldp.dcbx.feature.pfc.prio5",
    "lldp.dcbx.feature.pfc.numtcs",
    "lldp.dcbx.feature.app.proto",
    "lldp.dcbx.feature.app.sf",
    "lldp.dcbx.feature.app.prio",
    "lldp.dcbx.len",
];

/// Walks the CEE TLV of an LLDP frame and returns (sub-TLV type, declared
/// length, bytes actually up to the next sub-TLV or the TLV end).
fn sub_tlvs(frame: &[u8]) -> Vec<(u8, usize, usize)> {
    let mut out = Vec::new();
    let mut i = 14;
    while i + 2 <= frame.len() {
        let hdr = u16::from_be_bytes([frame[i], frame[i + 1]]);
        let (t, len) = ((hdr >> 9) as u8, (hdr & 0x1ff) as usize);
        if t == 0 {
            break;
        }
        let body = &frame[i + 2..i + 2 + len];
        if t == 127 && body[..4] == [0x00, 0x1b, 0x21, 0x02] {
            let tlv = &body[4..];
            let mut j = 0;
            while j + 2 <= tlv.len() {
                let h = u16::from_be_bytes([tlv[j], tlv[j + 1]]);
                let (st, sl) = ((h >> 9) as u8, (h & 0x1ff) as usize);
                let avail = tlv.len() - j - 2;
                out.push((st, sl, avail.min(sl)));
                j += 2 + sl;
            }
            assert_eq!(j, tlv.len(), "sub-TLVs exactly fill the CEE TLV");
        }
        i += 2 + len;
    }
    out
}

#[test]
fn tshark_decodes_what_was_configured() {
    if !lossless_testkit::require(
        "tshark_decodes_what_was_configured",
        &[lossless_testkit::Oracle::Tshark],
    ) {
        return;
    }
    let mut p = pair_with(switch(), host(), D, 0.0, 11);
    p.sim.set_link(p.seg, true);
    p.sim.run_for(Duration::from_secs(3));
    let frames = p.sim.capture().to_vec();
    assert!(frames.len() >= 6);

    // Our own check of what tshark cannot see: every sub-TLV length is the one lldpad requires.
    for f in &frames {
        let subs = sub_tlvs(&f.bytes);
        let types: Vec<u8> = subs.iter().map(|s| s.0).collect();
        assert_eq!(
            types,
            vec![1, 2, 3, 4],
            "Control, PG, PFC, APP in lldpad's order"
        );
        for (t, len, avail) in subs {
            assert_eq!(len, avail, "sub-TLV {t} length runs past its TLV");
            match t {
                1 => assert_eq!(len, 10),
                2 => assert_eq!(len, 17),
                3 => assert_eq!(len, 6),
                4 => assert_eq!((len - 4) % 6, 0),
                _ => unreachable!(),
            }
        }
    }

    let dir = std::env::temp_dir().join(format!("lossless-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("scenario.pcap");
    let file = std::fs::File::create(&path).expect("create pcap");
    write_pcap(file, &frames).expect("write pcap");
    let decoded = lossless_testkit::tshark_fields(&path, &[], FIELDS);
    std::fs::remove_dir_all(&dir).ok();
    let rows: Vec<Vec<&str>> = decoded
        .rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    assert_eq!(rows.len(), frames.len(), "tshark saw every frame");
    let col = |row: &Vec<&str>, name: &str| -> String {
        let i = FIELDS
            .iter()
            .position(|f| *f == name)
            .expect("field listed");
        row[i].to_string()
    };
    for (row, f) in rows.iter().zip(&frames) {
        let is_switch = f.from == p.a;
        assert_eq!(col(row, "lldp.time_to_live"), "120");
        let ours = lossless_lab::describe::describe_frame(&f.bytes);
        // Control: tshark's SeqNo/AckNo equal what our decoder read.
        let (seq, ack) = {
            let fr = lossless_wire::frame::Frame::parse(&f.bytes).expect("valid");
            let lossless_wire::frame::Payload::Lldp(pdu) = fr.payload else {
                panic!()
            };
            let c = pdu.cee_dcbx.and_then(|c| c.control).expect("control");
            (c.seq, c.ack)
        };
        assert_eq!(col(row, "lldp.dcbx.control.seq"), seq.to_string(), "{ours}");
        assert_eq!(col(row, "lldp.dcbx.control.ack"), ack.to_string(), "{ours}");
        // Feature flags, in sub-TLV order PG, PFC, APP.
        let willing = if is_switch { "0,0,0" } else { "1,1,1" };
        assert_eq!(col(row, "lldp.dcbx.feature.willing"), willing, "{ours}");
        assert_eq!(col(row, "lldp.dcbx.feature.enabled"), "1,1,1", "{ours}");
        assert_eq!(col(row, "lldp.dcbx.feature.error"), "0,0,0", "{ours}");
        if is_switch {
            // PG 0,0,0,1,1,1,15,2 at 25/75 %; PFC on 3 and 4; APP FCoE->3, RoCEv2 (4791)->4.
            assert_eq!(col(row, "lldp.dcbx.feature.pg.pgid_prio0"), "0");
            assert_eq!(col(row, "lldp.dcbx.feature.pg.pgid_prio3"), "1");
            assert_eq!(col(row, "lldp.dcbx.feature.pg.pgid_prio6"), "15");
            assert_eq!(col(row, "lldp.dcbx.feature.pg.pgid_prio7"), "2");
            assert_eq!(col(row, "lldp.dcbx.feature.pg.per0"), "25");
            assert_eq!(col(row, "lldp.dcbx.feature.pg.per1"), "75");
            assert_eq!(col(row, "lldp.dcbx.feature.pfc.prio3"), "1");
            assert_eq!(col(row, "lldp.dcbx.feature.pfc.prio4"), "1");
            assert_eq!(col(row, "lldp.dcbx.feature.pfc.prio5"), "0");
            assert_eq!(col(row, "lldp.dcbx.feature.app.proto"), "0x8906,0x12b7");
            assert_eq!(col(row, "lldp.dcbx.feature.app.sf"), "0,1");
            // tshark shows only the lowest set bit of the priority map.
            assert_eq!(col(row, "lldp.dcbx.feature.app.prio"), "3,4");
        } else {
            // Host defaults: one PG per priority, 13/13/13/13/12/12/12/12, PFC off, no APP entries.
            assert_eq!(col(row, "lldp.dcbx.feature.pg.pgid_prio3"), "3");
            assert_eq!(col(row, "lldp.dcbx.feature.pg.per0"), "13");
            assert_eq!(col(row, "lldp.dcbx.feature.pfc.prio3"), "0");
            assert_eq!(col(row, "lldp.dcbx.feature.app.proto"), "");
        }
        assert_eq!(col(row, "lldp.dcbx.feature.pg.numtcs"), "0x08");
        assert_eq!(col(row, "lldp.dcbx.feature.pfc.numtcs"), "0x08");
    }
}

/// (type, length) of every TLV of an LLDP frame, read from the bytes, End included;
/// asserts the TLVs exactly reach End.
fn tlvs(frame: &[u8]) -> Vec<(u8, usize, Vec<u8>)> {
    let mut out = Vec::new();
    let mut i = 14;
    loop {
        let hdr = u16::from_be_bytes([frame[i], frame[i + 1]]);
        let (t, len) = ((hdr >> 9) as u8, (hdr & 0x1ff) as usize);
        assert!(i + 2 + len <= frame.len(), "TLV {t} runs past the frame");
        out.push((t, len, frame[i + 2..i + 2 + len].to_vec()));
        if t == 0 {
            return out;
        }
        i += 2 + len;
    }
}

/// The `ieee` scenario's capture, read by tshark: every ETS, ETS recommendation,
/// PFC and APP field as the switch was configured (and, from the moment the host
/// runs the switch's recommendation and PFC, as the host advertises them). tshark
/// names ETS's tables after CEE's PG (`lldp.dcbx.feature.pg.*`) and PFC's bitmap
/// after CEE's; it does not check the TLV lengths, so they are asserted from the bytes.
#[test]
fn tshark_decodes_the_ieee_scenario_as_configured() {
    use lossless_lab::scenario::{ieee_host_config, ieee_switch_config};
    if !lossless_testkit::require(
        "tshark_decodes_the_ieee_scenario_as_configured",
        &[lossless_testkit::Oracle::Tshark],
    ) {
        return;
    }
    let report = lossless_lab::scenario::run("ieee", 1).expect("known scenario");
    let frames = report.captures[0].frames.clone();
    assert!(frames.len() >= 10);
    let sw = ieee_switch_config();
    let host = ieee_host_config();
    let sw_ets = sw.dcbx.ieee.ets.cfg.table;
    let sw_app = sw.dcbx.ieee.app.clone();
    let is_switch = |from: usize| report.agents[from].mac == sw.mac;
    // The host runs the recommendation from the switch's first LLDPDU on: D = 10 us.
    let host_adopted = |at: lossless_dcbx::Instant| at.since_epoch() >= Duration::from_micros(10);

    // Lengths and order from the bytes.
    for f in &frames {
        let t = tlvs(&f.bytes);
        let org: Vec<(u8, usize)> = t
            .iter()
            .filter(|(ty, _, v)| *ty == 127 && v[..3] == [0x00, 0x80, 0xc2])
            .map(|(_, len, v)| (v[3], *len))
            .collect();
        if is_switch(f.from) {
            assert_eq!(
                org,
                vec![(9, 25), (10, 25), (11, 6), (12, 5 + 3 * sw_app.len())],
                "ETS, REC, PFC, APP in lldpad's order, the standard's lengths"
            );
        } else {
            assert_eq!(org, vec![(9, 25), (11, 6), (12, 5)], "no REC, no APP entry");
        }
        assert_eq!(t.last().map(|x| (x.0, x.1)), Some((0, 0)), "End");
    }

    let mut fields: Vec<String> = [
        "eth.src",
        "lldp.time_to_live",
        "lldp.ieee.802_1.subtype",
        "lldp.dcbx.ieee.willing",
        "lldp.dcbx.ieee.ets.cbs",
        "lldp.dcbx.ieee.ets.maxtcs",
        "lldp.dcbx.ieee.pfc.mbc",
        "lldp.dcbx.ieee.pfc.numtcs",
        "lldp.dcbx.ieee.app.prio",
        // (sic: Wireshark's name for the APP selector field)
        "lldp.dcbx.iee.app.sf",
        "lldp.dcbx.feature.app.proto",
    ]
    .map(String::from)
    .to_vec();
    for prefix in [
        "lldp.dcbx.feature.pg.pgid_prio",
        "lldp.dcbx.feature.pg.per",
        "lldp.dcbx.ieee.ets.tsa",
        "lldp.dcbx.feature.pfc.prio",
    ] {
        for i in 0..8 {
            fields.push(format!("{prefix}{i}"));
        }
    }
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    let dir = std::env::temp_dir().join(format!("lossless-tshark-ieee-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("ieee.pcap");
    write_pcap(std::fs::File::create(&path).expect("create pcap"), &frames).expect("write pcap");
    let decoded = lossless_testkit::tshark_fields(&path, &[], &names);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(decoded.rows.len(), frames.len(), "tshark saw every frame");
    let col = |row: &Vec<String>, name: &str| -> String {
        row[names.iter().position(|f| *f == name).expect("field listed")].clone()
    };
    // One value per ETS TLV (configuration, then recommendation when sent).
    let per_tlv = |v: String, n: usize| vec![v; n].join(",");
    for (row, f) in decoded.rows.iter().zip(&frames) {
        let from_switch = is_switch(f.from);
        assert_eq!(col(row, "eth.src"), report.agents[f.from].mac.to_string());
        assert_eq!(col(row, "lldp.time_to_live"), "120");
        let (ets, ets_tlvs, willing) = if from_switch {
            (sw_ets, 2, "0,0")
        } else if host_adopted(f.at) {
            (sw_ets, 1, "1,1")
        } else {
            (host.dcbx.ieee.ets.cfg.table, 1, "1,1")
        };
        assert_eq!(
            col(row, "lldp.ieee.802_1.subtype"),
            if from_switch {
                "0x09,0x0a,0x0b,0x0c"
            } else {
                "0x09,0x0b,0x0c"
            }
        );
        // Willing of the ETS configuration and of PFC, in that order.
        assert_eq!(col(row, "lldp.dcbx.ieee.willing"), willing);
        assert_eq!(col(row, "lldp.dcbx.ieee.ets.cbs"), "0");
        // 8 traffic classes are sent as 0.
        assert_eq!(col(row, "lldp.dcbx.ieee.ets.maxtcs"), "0");
        for p in 0..8 {
            assert_eq!(
                col(row, &format!("lldp.dcbx.feature.pg.pgid_prio{p}")),
                per_tlv(ets.prio_tc[p].to_string(), ets_tlvs),
                "priority {p}"
            );
            assert_eq!(
                col(row, &format!("lldp.dcbx.feature.pg.per{p}")),
                per_tlv(ets.tc_bw[p].to_string(), ets_tlvs),
                "TC {p}"
            );
            assert_eq!(
                col(row, &format!("lldp.dcbx.ieee.ets.tsa{p}")),
                per_tlv(ets.tsa[p].0.to_string(), ets_tlvs),
                "TC {p}"
            );
            // PFC on 3 at the switch, and at the host once it runs the switch's.
            let on = p == 3 && (from_switch || host_adopted(f.at));
            assert_eq!(
                col(row, &format!("lldp.dcbx.feature.pfc.prio{p}")),
                if on { "1" } else { "0" },
                "PFC priority {p}"
            );
        }
        assert_eq!(col(row, "lldp.dcbx.ieee.pfc.mbc"), "0");
        assert_eq!(col(row, "lldp.dcbx.ieee.pfc.numtcs"), "8");
        if from_switch {
            // DSCP 26 and UDP 4791, both on priority 3.
            let prio: Vec<String> = sw_app.iter().map(|e| e.priority.to_string()).collect();
            let sel: Vec<String> = sw_app.iter().map(|e| e.selector.0.to_string()).collect();
            let proto: Vec<String> = sw_app
                .iter()
                .map(|e| format!("{:#06x}", e.protocol))
                .collect();
            assert_eq!(col(row, "lldp.dcbx.ieee.app.prio"), prio.join(","));
            assert_eq!(col(row, "lldp.dcbx.iee.app.sf"), sel.join(","));
            assert_eq!(col(row, "lldp.dcbx.feature.app.proto"), proto.join(","));
            assert_eq!(col(row, "lldp.dcbx.feature.app.proto"), "0x001a,0x12b7");
        } else {
            assert_eq!(col(row, "lldp.dcbx.ieee.app.prio"), "");
        }
    }
}

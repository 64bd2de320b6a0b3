//! The frames of a simulated scenario, checked by an oracle we did not write:
//! tshark decodes every DCBX field as configured. tshark walks fixed offsets
//! and ignores sub-TLV lengths, so those are asserted here from the bytes.
//!
//! Needs tshark (CI installs it). Without it the test fails, unless
//! LOSSLESS_SKIP_TSHARK=1 says to skip on purpose.

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
    if !lossless_testkit::tshark_available("tshark_decodes_what_was_configured") {
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

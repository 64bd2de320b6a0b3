//! tshark as the oracle of our IEEE 802.1Qaz TLVs, during a negotiation with lldpad.

use lossless_testkit::pcap::read_frames_so_far;
use lossless_testkit::tshark_fields;

use crate::common::*;
use crate::harness::*;

/// One TLV of an LLDPDU, read from the frame's bytes.
struct Tlv {
    tlv_type: u8,
    /// OUI and subtype of an organizationally specific TLV.
    org: Option<(u32, u8)>,
    /// The length field.
    len: usize,
}

/// The TLVs of an LLDPDU, End included.
fn tlvs_of(frame: &[u8]) -> Vec<Tlv> {
    assert_eq!(frame[12..14], [0x88, 0xcc], "not LLDP");
    let mut at = 14;
    let mut out = Vec::new();
    loop {
        let word = u16::from_be_bytes([frame[at], frame[at + 1]]);
        let (t, len) = ((word >> 9) as u8, usize::from(word & 0x1ff));
        let org = (t == 127).then(|| {
            let b = &frame[at + 2..at + 6];
            (u32::from_be_bytes([0, b[0], b[1], b[2]]), b[3])
        });
        out.push(Tlv {
            tlv_type: t,
            org,
            len,
        });
        at += 2 + len;
        if t == 0 || at >= frame.len() {
            return out;
        }
    }
}

#[test]
fn g_tshark_decodes_our_ieee_tlvs_as_configured() {
    if !require(
        "g_tshark_decodes_our_ieee_tlvs_as_configured",
        &[Oracle::Netns, Oracle::Lldpad, Oracle::Gcc, Oracle::Tshark],
    ) {
        return;
    }
    let tmp = TempDir::new();
    let pcap = tmp.path().join("vb.pcap");
    let mut i = Interop::with(
        AUTHORITY,
        LOW_MAC,
        Mode::Ieee,
        Extras {
            capture: Some(&pcap),
            ..Extras::default()
        },
    );
    lldpad_willing(&i);
    wait_every(LIMIT, EVERY, "lldpad to run our PFC", || {
        (i.driver()?.ieee_pfc_en() == 0x18).then_some(())
    });
    wait_for(LIMIT, "losslessd agreed", || {
        converged(&i.ours()).then_some(())
    });
    // tshark writes what it captured after a while, and what it has not written
    // when it is stopped is lost: wait until the file holds two frames of ours (the
    // first, and a fast transmission after it).
    let src = [2, 0, 0, 0, 0, 0x0b];
    wait_every(LIMIT, EVERY, "two frames of ours in the capture", || {
        let n = read_frames_so_far(&pcap)
            .iter()
            .filter(|f| f[6..12] == src)
            .count();
        (n >= 2).then_some(())
    });
    if let Some(mut c) = i.cap.take() {
        c.stop();
    }
    let ours = format!("eth.src == {OUR_MAC}");
    let mut fields: Vec<String> = [
        "frame.number",
        "lldp.tlv.type",
        "lldp.tlv.len",
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
        "_ws.expert",
    ]
    .map(String::from)
    .to_vec();
    for prefix in [
        "lldp.dcbx.feature.pg.pgid_prio",
        "lldp.dcbx.feature.pg.per",
        "lldp.dcbx.ieee.ets.tsa",
        "lldp.dcbx.feature.pfc.prio",
    ] {
        fields.extend((0..8).map(|n| format!("{prefix}{n}")));
    }
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    let rows = tshark_fields(&pcap, &["-Y", &ours], &names);
    assert!(!rows.is_empty(), "no frame of ours in {}", pcap.display());
    let all = read_frames_so_far(&pcap);
    // Every frame we sent, from the first: the same TLVs (nothing in them changes).
    for r in 0..rows.len() {
        let f = |k: &str| {
            rows.get(r, k)
                .split(',')
                .map(|x| match x {
                    "True" => "1",
                    "False" => "0",
                    o => o,
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        let n: usize = rows.get(r, "frame.number").parse().unwrap();
        let tlvs = tlvs_of(&all[n - 1]);
        let org: Vec<(u32, u8, usize)> = tlvs
            .iter()
            .filter_map(|t| t.org.map(|(oui, st)| (oui, st, t.len)))
            .collect();
        let end = tlvs.last().map(|t| (t.tlv_type, t.len));
        assert_eq!(end, Some((0, 0)), "frame {n} ends with End");
        // ETS Configuration and Recommendation 25 octets, PFC 6, APP 5 + 3 per entry;
        // nothing else of 802.1 (00-80-C2), no CEE TLV (00-1B-21).
        assert_eq!(
            org,
            [
                (0x0080c2, 9, 25),
                (0x0080c2, 10, 25),
                (0x0080c2, 11, 6),
                (0x0080c2, 12, 14)
            ],
            "frame {n}"
        );
        let join = |v: Vec<String>| v.join(",");
        assert_eq!(
            f("lldp.tlv.type"),
            join(tlvs.iter().map(|t| t.tlv_type.to_string()).collect())
        );
        assert_eq!(
            f("lldp.tlv.len"),
            join(tlvs.iter().map(|t| t.len.to_string()).collect())
        );
        assert_eq!(f("lldp.ieee.802_1.subtype"), "0x09,0x0a,0x0b,0x0c");
        assert_eq!(f("lldp.dcbx.ieee.willing"), "0,0", "ETS, PFC: frame {n}");
        assert_eq!(f("lldp.dcbx.ieee.ets.cbs"), "0");
        assert_eq!(f("lldp.dcbx.ieee.ets.maxtcs"), "0", "8, sent as 0");
        assert_eq!(f("lldp.dcbx.ieee.pfc.mbc"), "0");
        assert_eq!(f("lldp.dcbx.ieee.pfc.numtcs"), "8");
        // The configuration TLV, then the recommendation: the same table.
        for n in 0..8 {
            let twice = |v: String| format!("{v},{v}");
            assert_eq!(
                f(&format!("lldp.dcbx.feature.pg.pgid_prio{n}")),
                twice(PRIO_TC[n].to_string())
            );
            assert_eq!(
                f(&format!("lldp.dcbx.feature.pg.per{n}")),
                twice(TC_BW[n].to_string())
            );
            assert_eq!(
                f(&format!("lldp.dcbx.ieee.ets.tsa{n}")),
                twice(tsa_numbers(TSA)[n].to_string())
            );
            let on = if n == 3 || n == 4 { "1" } else { "0" };
            assert_eq!(f(&format!("lldp.dcbx.feature.pfc.prio{n}")), on);
        }
        // APP in the order configured.
        assert_eq!(f("lldp.dcbx.ieee.app.prio"), "3,3,4");
        assert_eq!(f("lldp.dcbx.iee.app.sf"), "5,3,1");
        assert_eq!(f("lldp.dcbx.feature.app.proto"), "0x001a,0x12b7,0x8906");
        assert_eq!(
            f("_ws.expert"),
            "",
            "tshark found something wrong: frame {n}"
        );
    }
}

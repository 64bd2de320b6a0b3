//! One test per way an IEEE 802.1Qaz TLV can be malformed: each asserts the
//! error kept in place of the TLV (kind, field, offset from the start of the
//! LLDPDU), and that the rest of the LLDPDU stands.
//!
//! Layout of the LLDPDUs here: 0 Chassis ID, 9 Port ID, 18 TTL, 22 the first
//! IEEE TLV. Inside an ETS TLV at 22: 28 flags, 29 priority->TC, 33 TC
//! bandwidth, 41 TSA. Inside an APP TLV at 22: 28 reserved, 29 first entry.

mod ieee_support;

use ieee_support::*;
use lossless_wire::ieee::{IeeeDcbx, PfcConfig, PriorityMap, Tsa};
use lossless_wire::{DecodeError, DecodeErrorKind as K, Frame, Lldpdu, Payload};

const STRICT: [u8; 8] = [0; 8];
const TWO_ETS: [u8; 8] = [2, 2, 0, 0, 0, 0, 0, 0];
const BW: [u8; 8] = [40, 60, 0, 0, 0, 0, 0, 0];
const PRIO: [u8; 8] = [0, 0, 0, 1, 1, 0, 0, 0];

fn parse(tlvs: &[Vec<u8>]) -> IeeeDcbx {
    let bytes = lldpdu(tlvs);
    let pdu = Lldpdu::parse(&bytes).expect("a malformed IEEE TLV keeps the LLDPDU");
    pdu.ieee_dcbx
}

fn de(offset: usize, field: &'static str, kind: K) -> DecodeError {
    DecodeError::new(offset, field, kind)
}

fn bad_value(offset: usize, field: &'static str, value: u64, reason: &'static str) -> DecodeError {
    de(offset, field, K::BadValue { value, reason })
}

fn good_pfc() -> Vec<u8> {
    pfc_tlv(0x08, 0x18)
}

fn ets_cfg_err(tlv: Vec<u8>) -> DecodeError {
    let ieee = parse(&[tlv, good_pfc()]);
    // The TLV after the bad one stands.
    assert!(matches!(ieee.pfc, Some(Ok(_))), "{ieee:?}");
    ieee.ets_config.expect("present").expect_err("malformed")
}

// ---- lengths ------------------------------------------------------------

#[test]
fn ets_config_of_wrong_length() {
    let mut short = ets_tlv(9, 0, PRIO, BW, TWO_ETS);
    short.pop();
    short[1] = 24;
    assert_eq!(
        ets_cfg_err(short),
        de(
            22,
            "ieee.ets_cfg",
            K::BadLength {
                length: 24,
                expected: 25
            }
        )
    );
    let mut long = ets_tlv(9, 0, PRIO, BW, TWO_ETS);
    long.push(0);
    long[1] = 26;
    assert_eq!(
        ets_cfg_err(long),
        de(
            22,
            "ieee.ets_cfg",
            K::BadLength {
                length: 26,
                expected: 25
            }
        )
    );
}

#[test]
fn ets_recommendation_of_wrong_length() {
    let mut t = ets_tlv(10, 0, PRIO, BW, TWO_ETS);
    t.truncate(6);
    t[1] = 4;
    let ieee = parse(&[t]);
    assert_eq!(
        ieee.ets_recommendation,
        Some(Err(de(
            22,
            "ieee.ets_rec",
            K::BadLength {
                length: 4,
                expected: 25
            }
        )))
    );
}

#[test]
fn pfc_of_wrong_length() {
    for (info, len) in [(&[0x08][..], 5), (&[0x08, 0x18, 0x00][..], 7)] {
        let ieee = parse(&[org_8021(11, info)]);
        assert_eq!(
            ieee.pfc,
            Some(Err(de(
                22,
                "ieee.pfc",
                K::BadLength {
                    length: len,
                    expected: 6
                }
            )))
        );
    }
}

#[test]
fn app_too_short_or_with_a_partial_entry() {
    let ieee = parse(&[org_8021(12, &[])]);
    assert_eq!(
        ieee.app,
        Some(Err(de(
            22,
            "ieee.app",
            K::TooShort {
                length: 4,
                minimum: 5
            }
        )))
    );
    // 5 + 3 + 1: one entry and a stray byte.
    let ieee = parse(&[org_8021(12, &[0, 0x61, 0x89, 0x06, 0x00])]);
    assert_eq!(
        ieee.app,
        Some(Err(de(
            22,
            "ieee.app",
            K::BadLength {
                length: 9,
                expected: 8
            }
        )))
    );
}

// ---- values -------------------------------------------------------------

#[test]
fn reserved_tsa() {
    let mut tsa = TWO_ETS;
    tsa[3] = 3;
    assert_eq!(
        ets_cfg_err(ets_tlv(9, 0, PRIO, BW, tsa)),
        bad_value(
            44,
            "ieee.ets_cfg.tsa",
            3,
            "TSA 3..254 is reserved (0 strict, 1 CBS, 2 ETS, 255 vendor)"
        )
    );
    tsa[3] = 254;
    let e = ets_cfg_err(ets_tlv(9, 0, PRIO, BW, tsa));
    assert_eq!((e.offset, e.field), (44, "ieee.ets_cfg.tsa"));
    // 255 is vendor-specific, not reserved.
    tsa[3] = 255;
    let ieee = parse(&[ets_tlv(9, 0, PRIO, BW, tsa)]);
    let cfg = ieee.ets_config.expect("present").expect("valid");
    assert_eq!(cfg.table.tsa[3], Tsa::VENDOR);
}

#[test]
fn reserved_tsa_in_a_recommendation_names_its_own_field() {
    let mut tsa = TWO_ETS;
    tsa[7] = 100;
    let ieee = parse(&[ets_tlv(10, 0, PRIO, BW, tsa)]);
    let e = ieee.ets_recommendation.expect("present").expect_err("bad");
    assert_eq!((e.offset, e.field), (48, "ieee.ets_rec.tsa"));
}

#[test]
fn priority_to_tc_entry_above_7() {
    // Priority 3 (low nibble of the second byte) on TC 8.
    let mut prio = PRIO;
    prio[3] = 8;
    assert_eq!(
        ets_cfg_err(ets_tlv(9, 0, prio, BW, TWO_ETS)),
        bad_value(30, "ieee.ets_cfg.prio_tc", 8, "a traffic class is 0..7")
    );
    prio[3] = 1;
    prio[6] = 15;
    assert_eq!(ets_cfg_err(ets_tlv(9, 0, prio, BW, TWO_ETS)).offset, 32);
}

#[test]
fn bandwidth_share_above_100() {
    let bw = [101, 0, 0, 0, 0, 0, 0, 0];
    assert_eq!(
        ets_cfg_err(ets_tlv(9, 0, PRIO, bw, TWO_ETS)),
        bad_value(
            33,
            "ieee.ets_cfg.tc_bw",
            101,
            "a percentage cannot exceed 100"
        )
    );
    let bw = [0, 0, 0, 0, 0, 0, 0, 200];
    assert_eq!(ets_cfg_err(ets_tlv(9, 0, PRIO, bw, TWO_ETS)).offset, 40);
}

#[test]
fn bandwidth_sum_not_100() {
    for (bw, sum) in [
        ([40, 59, 0, 0, 0, 0, 0, 0], 99),
        ([40, 60, 1, 0, 0, 0, 0, 0], 101),
        ([100, 100, 100, 100, 100, 100, 100, 100], 800),
    ] {
        assert_eq!(
            ets_cfg_err(ets_tlv(9, 0, PRIO, bw, TWO_ETS)),
            bad_value(
                33,
                "ieee.ets_cfg.tc_bw",
                sum,
                "the eight percentages must sum to 100 (or all be 0 when no traffic class uses ETS)"
            )
        );
    }
}

#[test]
fn bandwidth_sum_0_only_without_ets() {
    // lldpad's default table (never configured): all strict, all 0 %.
    let ieee = parse(&[ets_tlv(9, 0x80, [0; 8], [0; 8], STRICT)]);
    assert!(matches!(ieee.ets_config, Some(Ok(_))));
    // Strict, CBS and vendor classes with no shares: fine too.
    let ieee = parse(&[ets_tlv(10, 0, PRIO, [0; 8], [0, 1, 255, 0, 0, 0, 0, 0])]);
    assert!(matches!(ieee.ets_recommendation, Some(Ok(_))));
    // A class using ETS with nothing to share is refused.
    assert_eq!(
        ets_cfg_err(ets_tlv(9, 0, PRIO, [0; 8], TWO_ETS)),
        bad_value(
            33,
            "ieee.ets_cfg.tc_bw",
            0,
            "traffic classes use ETS but every share is 0; the percentages must sum to 100"
        )
    );
    // Only the total counts, as lldptool checks: strict classes may hold shares.
    let ieee = parse(&[ets_tlv(
        9,
        0,
        PRIO,
        [12, 12, 12, 12, 13, 13, 13, 13],
        STRICT,
    )]);
    assert!(matches!(ieee.ets_config, Some(Ok(_))));
}

#[test]
fn dscp_above_63() {
    let ieee = parse(&[app_tlv(&[(3, 5, 63), (3, 5, 64)])]);
    assert_eq!(
        ieee.app,
        Some(Err(bad_value(
            33,
            "ieee.app.protocol",
            64,
            "a DSCP is 0..63"
        )))
    );
    // The same protocol number with another selector is a port.
    let ieee = parse(&[app_tlv(&[(3, 3, 64)])]);
    assert!(matches!(ieee.app, Some(Ok(_))));
}

#[test]
fn reserved_selectors() {
    for sel in [0u8, 6, 7] {
        let ieee = parse(&[app_tlv(&[(3, 1, 0x8906), (4, sel, 3260)])]);
        assert_eq!(
            ieee.app,
            Some(Err(bad_value(
                32,
                "ieee.app.selector",
                sel.into(),
                "selector 0, 6 and 7 are reserved (1 ethertype, 2 tcp, 3 udp, 4 port, 5 dscp)"
            ))),
            "selector {sel}"
        );
    }
}

#[test]
fn pfc_capability_above_8() {
    let ieee = parse(&[pfc_tlv(0x09, 0x18)]);
    assert_eq!(
        ieee.pfc,
        Some(Err(bad_value(
            28,
            "ieee.pfc.cap",
            9,
            "PFC capability counts traffic classes: 0..8"
        )))
    );
}

// ---- duplicates ---------------------------------------------------------

/// lldpad keeps the first and ignores the rest; we believe neither (see
/// `IeeeDcbx`). The error sits at the second, names the first.
#[test]
fn duplicate_tlv_leaves_neither() {
    let ieee = parse(&[good_pfc(), pfc_tlv(0x88, 0x00)]);
    assert_eq!(
        ieee.pfc,
        Some(Err(de(30, "ieee.pfc", K::Duplicate { first_offset: 22 })))
    );
    // A third changes nothing more.
    let ieee = parse(&[good_pfc(), good_pfc(), good_pfc()]);
    assert_eq!(
        ieee.pfc,
        Some(Err(de(30, "ieee.pfc", K::Duplicate { first_offset: 22 })))
    );
    // A malformed first instance is replaced by the duplicate finding.
    let ieee = parse(&[org_8021(12, &[]), app_tlv(&[])]);
    assert_eq!(
        ieee.app,
        Some(Err(de(28, "ieee.app", K::Duplicate { first_offset: 22 })))
    );
    // Each kind counts on its own: 22 + 27 (ETS-CFG) + 27 (ETS-REC) + 8 (PFC) = 84.
    let ets = ets_tlv(9, 0, PRIO, BW, TWO_ETS);
    let rec = ets_tlv(10, 0, PRIO, BW, TWO_ETS);
    let ieee = parse(&[ets.clone(), rec, good_pfc(), ets]);
    assert_eq!(
        ieee.ets_config,
        Some(Err(de(
            84,
            "ieee.ets_cfg",
            K::Duplicate { first_offset: 22 }
        )))
    );
    assert!(matches!(ieee.ets_recommendation, Some(Ok(_))));
    assert!(matches!(ieee.pfc, Some(Ok(_))));
}

// ---- what is not an error ------------------------------------------------

/// Reserved bits are ignored on receipt and sent as 0 (bit 5 of the PFC flags,
/// which announces adaptive headroom measurement, aside: see the next test).
#[test]
fn reserved_bits_are_ignored_and_sent_as_zero() {
    let tlvs = [
        ets_tlv(9, 0x38 | 0x80 | 0x03, PRIO, BW, TWO_ETS),
        ets_tlv(10, 0xff, PRIO, BW, TWO_ETS),
        pfc_tlv(0x10 | 0x08, 0x18),
        org_8021(12, &[0xff, 0x61 | 0x18, 0x89, 0x06]),
    ];
    let bytes = lldpdu(&tlvs);
    let pdu = Lldpdu::parse(&bytes).expect("valid");
    let ieee = &pdu.ieee_dcbx;
    let cfg = ieee.ets_config.clone().expect("ETS").expect("valid");
    assert!(cfg.willing && !cfg.cbs);
    assert_eq!(cfg.max_tcs, 3);
    assert_eq!(
        ieee.pfc,
        Some(Ok(PfcConfig {
            willing: false,
            mbc: false,
            cap: 8,
            enabled: PriorityMap(0x18),
            headroom_measurement: false,
        }))
    );
    let app = ieee.app.clone().expect("APP").expect("valid");
    assert_eq!((app[0].priority, app[0].protocol), (3, 0x8906));
    let clean = lldpdu(&[
        ets_tlv(9, 0x80 | 0x03, PRIO, BW, TWO_ETS),
        ets_tlv(10, 0, PRIO, BW, TWO_ETS),
        pfc_tlv(0x08, 0x18),
        app_tlv(&[(3, 1, 0x8906)]),
    ]);
    let mut out = vec![0; pdu.buffer_len()];
    assert_eq!(pdu.emit(&mut out), Ok(clean.len()));
    assert_eq!(out, clean);
}

/// Bit 5 of the PFC flags is the adaptive headroom capability: read and sent back.
#[test]
fn pfc_bit_5_is_the_headroom_measurement_capability() {
    let bytes = lldpdu(&[pfc_tlv(0x20 | 0x08, 0x18)]);
    let pdu = Lldpdu::parse(&bytes).expect("valid");
    let pfc = pdu.ieee_dcbx.pfc.clone().expect("PFC").expect("valid");
    assert!(pfc.headroom_measurement && !pfc.willing && !pfc.mbc);
    assert_eq!((pfc.cap, pfc.enabled), (8, PriorityMap(0x18)));
    let mut out = vec![0; pdu.buffer_len()];
    assert_eq!(pdu.emit(&mut out), Ok(bytes.len()));
    assert_eq!(out, bytes);
}

#[test]
fn other_8021_tlvs_stay_org_specific() {
    // Port VLAN ID (1), Congestion Notification (8), EVB (13).
    let bytes = lldpdu(&[
        org_8021(1, &[0, 1]),
        org_8021(8, &[0x08, 0x08]),
        org_8021(13, &[0; 5]),
        good_pfc(),
    ]);
    let pdu = Lldpdu::parse(&bytes).expect("valid");
    let subtypes: Vec<u8> = pdu.org_specific.iter().map(|o| o.subtype).collect();
    assert_eq!(subtypes, [1, 8, 13]);
    assert!(matches!(pdu.ieee_dcbx.pfc, Some(Ok(_))));
    assert!(pdu.ieee_dcbx.ets_config.is_none());
}

#[test]
fn errors_in_a_frame_count_from_the_frame() {
    let mut frame = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x0e, 0x02, 0, 0, 0, 0, 1, 0x88, 0xcc,
    ];
    frame.extend(lldpdu(&[pfc_tlv(0x0f, 0)]));
    let Payload::Lldp(pdu) = Frame::parse(&frame).expect("valid").payload else {
        panic!("LLDP")
    };
    let e = pdu.ieee_dcbx.pfc.expect("PFC").expect_err("bad cap");
    assert_eq!(e.offset, 14 + 28);
}

#[test]
fn ieee_parse_refuses_what_is_not_one_of_the_four() {
    let e = IeeeDcbx::parse(&org_8021(1, &[0, 1])).expect_err("not DCBX");
    assert!(matches!(e.kind, K::NotThisProtocol { .. }), "{e}");
    assert_eq!(e.offset, 0);
    let mut data = good_pfc();
    data.extend_from_slice(&[0x0a, 0x01, b'x']); // a System Name TLV
    let e = IeeeDcbx::parse(&data).expect_err("not DCBX");
    assert_eq!((e.offset, e.field), (8, "lldp.org"));
    let e = IeeeDcbx::parse(&[0xfe, 0x06, 0x00, 0x80]).expect_err("runs past");
    assert_eq!(
        e,
        de(
            0,
            "lldp.tlv.length",
            K::LengthBeyondContainer {
                length: 6,
                available: 2
            }
        )
    );
}

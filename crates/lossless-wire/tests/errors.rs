//! One test per way an input can be malformed: each asserts the error kind,
//! the field it names and the offset (from the start of what was parsed).

mod common;

use common::*;
use lossless_wire::cee::{AppEntry, AppSelector, InvalidValue, PgConfig, PriorityMap, DCBX_OUI};
use lossless_wire::lldp::ManagementAddress;
use lossless_wire::{
    CeeDcbx, DecodeError, DecodeErrorKind as K, EthernetHeader, Frame, Lldpdu, Payload, VlanTag,
};

/// The LLDPDU (Ethernet payload) of lldpad's first frame. Layout:
/// 0 Chassis ID, 9 Port ID, 18 TTL, 22 CEE TLV (28 body: 28 Control, 40 PG
/// [46 PGIDs, 50 percentages, 58 num_tcs], 59 PFC [65 bitmap, 66 num_tcs],
/// 67 APP [73, 79, 85 entries]), 91 End; 93 bytes.
fn lldpad_pdu() -> Vec<u8> {
    hex(LLDPAD_1)[ETH_LEN..].to_vec()
}

/// Chassis ID, Port ID, TTL and nothing else: 22 bytes.
fn mandatory() -> Vec<u8> {
    hex("0207 04 020000000001 0407 03 020000000001 0602 0078")
}

fn with_end(mut v: Vec<u8>) -> Vec<u8> {
    v.extend_from_slice(&[0, 0]);
    v
}

fn err(data: &[u8]) -> DecodeError {
    Lldpdu::parse(data).expect_err("must be refused")
}

fn de(offset: usize, field: &'static str, kind: K) -> DecodeError {
    DecodeError::new(offset, field, kind)
}

// ---- LLDPDU structure -------------------------------------------------------

#[test]
fn truncated_tlv_header() {
    assert_eq!(
        err(&[0x02]),
        de(
            0,
            "lldp.tlv",
            K::Truncated {
                needed: 2,
                available: 1
            }
        )
    );
    // Cut inside the TTL TLV's header.
    assert_eq!(
        err(&lldpad_pdu()[..19]),
        de(
            18,
            "lldp.tlv",
            K::Truncated {
                needed: 2,
                available: 1
            }
        )
    );
}

#[test]
fn tlv_length_beyond_data() {
    let mut v = lldpad_pdu();
    v[1] = 0xff; // Chassis ID length 0x0ff = 255 > 91 left
    assert_eq!(
        err(&v),
        de(
            0,
            "lldp.tlv.length",
            K::LengthBeyondContainer {
                length: 255,
                available: 91
            }
        )
    );
    // The CEE TLV claims one byte more than there is before... the end of data.
    let mut v = lldpad_pdu();
    v.truncate(91); // drop End
    assert_eq!(
        err(&v),
        de(91, "lldp.end", K::MissingEnd),
        "without End the data simply runs out"
    );
    let mut v = lldpad_pdu();
    v[23] = 0x43 + 4; // CEE TLV length 71 > 69 left
    assert_eq!(
        err(&v),
        de(
            22,
            "lldp.tlv.length",
            K::LengthBeyondContainer {
                length: 71,
                available: 69
            }
        )
    );
}

#[test]
fn chassis_id_too_short() {
    let mut v = hex("0201 04");
    v.extend_from_slice(&mandatory()[9..]);
    assert_eq!(
        err(&with_end(v)),
        de(
            0,
            "lldp.chassis_id",
            K::TooShort {
                length: 1,
                minimum: 2
            }
        )
    );
}

#[test]
fn port_id_too_long() {
    let mut v = mandatory()[..9].to_vec();
    v.extend_from_slice(&[0x05, 0x01, 0x07]); // Port ID length 257
    v.extend_from_slice(&[b'x'; 256]);
    v.extend_from_slice(&mandatory()[18..]);
    let e = err(&with_end(v));
    assert_eq!((e.offset, e.field), (9, "lldp.port_id"));
    assert!(matches!(e.kind, K::BadValue { value: 257, .. }), "{e}");
}

#[test]
fn ttl_bad_length() {
    let mut v = mandatory()[..18].to_vec();
    v.extend_from_slice(&hex("0603 007800"));
    assert_eq!(
        err(&with_end(v)),
        de(
            18,
            "lldp.ttl",
            K::BadLength {
                length: 3,
                expected: 2
            }
        )
    );
}

#[test]
fn misordered_mandatory() {
    // Port ID first.
    let m = mandatory();
    let mut v = m[9..18].to_vec();
    v.extend_from_slice(&m[..9]);
    v.extend_from_slice(&m[18..]);
    assert_eq!(
        err(&with_end(v)),
        de(
            0,
            "lldp.tlv.type",
            K::Misordered {
                expected: "Chassis ID",
                found: 2
            }
        )
    );
    // System Name where the TTL belongs.
    let mut v = m[..18].to_vec();
    v.extend_from_slice(&hex("0a01 41"));
    assert_eq!(
        err(&with_end(v)),
        de(
            18,
            "lldp.tlv.type",
            K::Misordered {
                expected: "Time To Live",
                found: 5
            }
        )
    );
    // End where the Port ID belongs.
    let v = with_end(m[..9].to_vec());
    assert_eq!(
        err(&v),
        de(
            9,
            "lldp.tlv.type",
            K::Misordered {
                expected: "Port ID",
                found: 0
            }
        )
    );
}

#[test]
fn mandatory_tlv_repeated() {
    let m = mandatory();
    let mut v = m.clone();
    v.extend_from_slice(&m[18..22]); // a second TTL
    assert_eq!(
        err(&with_end(v)),
        de(
            22,
            "lldp.tlv.type",
            K::UnexpectedMandatory {
                tlv: "Time To Live"
            }
        )
    );
    let mut v = m.clone();
    v.extend_from_slice(&m[..9]); // a second Chassis ID
    assert_eq!(
        err(&with_end(v)),
        de(
            22,
            "lldp.tlv.type",
            K::UnexpectedMandatory { tlv: "Chassis ID" }
        )
    );
}

#[test]
fn end_with_length() {
    let mut v = mandatory();
    v.extend_from_slice(&hex("0001 00"));
    assert_eq!(
        err(&v),
        de(
            22,
            "lldp.end",
            K::BadLength {
                length: 1,
                expected: 0
            }
        )
    );
}

#[test]
fn missing_end() {
    assert_eq!(err(&mandatory()), de(22, "lldp.end", K::MissingEnd));
}

#[test]
fn tlv_after_end() {
    let mut v = with_end(mandatory());
    v.extend_from_slice(&[0, 0]); // padding is fine
    assert!(Lldpdu::parse(&v).is_ok());
    v.extend_from_slice(&hex("0a01 41")); // System Name after End
    assert_eq!(err(&v), de(26, "lldp.end", K::TlvAfterEnd { tlv_type: 5 }));
    // A stray low byte names the word it sits in.
    let mut v = with_end(mandatory());
    v.extend_from_slice(&[0, 0, 0, 1]);
    assert_eq!(err(&v), de(26, "lldp.end", K::TlvAfterEnd { tlv_type: 0 }));
}

#[test]
fn optional_tlv_duplicated() {
    let mut v = mandatory();
    v.extend_from_slice(&hex("0a01 41 0a01 42"));
    assert_eq!(
        err(&with_end(v)),
        de(25, "lldp.system_name", K::Duplicate { first_offset: 22 })
    );
}

#[test]
fn string_tlv_too_long() {
    let mut v = mandatory();
    v.extend_from_slice(&[0x09, 0x00]); // Port Description, 256 bytes
    v.extend_from_slice(&[b'p'; 256]);
    let e = err(&with_end(v));
    assert_eq!((e.offset, e.field), (22, "lldp.port_description"));
    assert!(matches!(e.kind, K::BadValue { value: 256, .. }));
}

#[test]
fn system_capabilities_bad_length() {
    let mut v = mandatory();
    v.extend_from_slice(&hex("0e03 001400"));
    assert_eq!(
        err(&with_end(v)),
        de(
            22,
            "lldp.system_capabilities",
            K::BadLength {
                length: 3,
                expected: 4
            }
        )
    );
}

#[test]
fn management_address() {
    // IPv4 192.0.2.1, ifIndex 3, no OID.
    let tlv = hex("100c 05 01 c0000201 02 00000003 00");
    let mut v = mandatory();
    v.extend_from_slice(&tlv);
    let v = with_end(v);
    let pdu = Lldpdu::parse(&v).expect("valid");
    assert_eq!(
        pdu.management_addresses,
        [ManagementAddress {
            address_subtype: 1,
            address: &[192, 0, 2, 1],
            interface_subtype: 2,
            interface_number: 3,
            oid: &[],
        }]
    );
    let mut out = vec![0; pdu.buffer_len()];
    pdu.emit(&mut out).expect("emits");
    assert_eq!(out, v);

    // Address string length 1 (no address octets).
    let mut bad = v.clone();
    bad[24] = 1;
    let e = err(&bad);
    assert_eq!((e.offset, e.field), (24, "lldp.mgmt_addr.addr_str_len"));
    assert!(matches!(e.kind, K::BadValue { value: 1, .. }));
    // OID length that does not fit the TLV exactly.
    let mut bad = v.clone();
    bad[35] = 1;
    assert_eq!(
        err(&bad),
        de(
            22,
            "lldp.mgmt_addr",
            K::BadLength {
                length: 12,
                expected: 13
            }
        )
    );
    // Too short for the fixed fields.
    let mut short = mandatory();
    short.extend_from_slice(&hex("1008 05 01 c0000201 02 00"));
    assert_eq!(
        err(&with_end(short)),
        de(
            22,
            "lldp.mgmt_addr",
            K::TooShort {
                length: 8,
                minimum: 9
            }
        )
    );
}

#[test]
fn org_tlv_too_short() {
    let mut v = mandatory();
    v.extend_from_slice(&hex("fe03 001b21"));
    assert_eq!(
        err(&with_end(v)),
        de(
            22,
            "lldp.org",
            K::TooShort {
                length: 3,
                minimum: 4
            }
        )
    );
}

#[test]
fn other_org_and_reserved_tlvs_are_kept() {
    let mut v = mandatory();
    // A CIN DCBX TLV, 802.1 Port VLAN ID, a reserved type 9 (in emission order).
    v.extend_from_slice(&hex("fe06 001b21 01 abcd  fe06 0080c2 01 0001  1202 beef"));
    let v = with_end(v);
    let pdu = Lldpdu::parse(&v).expect("valid");
    assert_eq!(pdu.org_specific.len(), 1);
    assert_eq!(pdu.org_specific[0].oui, [0x00, 0x80, 0xc2]);
    assert_eq!(pdu.cin_dcbx, Some(&[0xab, 0xcd][..]));
    assert_eq!(pdu.unknown.len(), 1);
    assert_eq!(pdu.unknown[0].tlv_type, 9);
    let mut out = vec![0; pdu.buffer_len()];
    pdu.emit(&mut out).expect("emits");
    assert_eq!(out, v);
}

#[test]
fn second_cee_tlv_is_fatal() {
    let pdu = lldpad_pdu();
    let mut v = pdu[..91].to_vec();
    v.extend_from_slice(&pdu[22..91]);
    assert_eq!(
        err(&with_end(v)),
        de(91, "lldp.dcbx", K::Duplicate { first_offset: 22 })
    );
}

// ---- CEE structure (fatal) ----------------------------------------------------

#[test]
fn cee_zero_length_subtlv_is_fatal() {
    let mut v = lldpad_pdu();
    v[40] = 0x04;
    v[41] = 0x00; // PG sub-TLV, length 0
    assert_eq!(err(&v), de(40, "dcbx.subtlv.length", K::ZeroLength));
}

#[test]
fn cee_subtlv_beyond_tlv_is_fatal() {
    let mut v = lldpad_pdu();
    v[68] = 23; // APP claims 23 bytes, 22 left in the CEE TLV
    assert_eq!(
        err(&v),
        de(
            67,
            "dcbx.subtlv.length",
            K::LengthBeyondContainer {
                length: 23,
                available: 22
            }
        )
    );
}

#[test]
fn cee_truncated_subtlv_header_is_fatal() {
    // Body: Control then a single stray byte.
    let body = hex("020a 0000 00000001 00000000 08");
    assert_eq!(
        CeeDcbx::parse(&body),
        Err(de(
            12,
            "dcbx.subtlv",
            K::Truncated {
                needed: 2,
                available: 1
            }
        ))
    );
}

#[test]
fn cee_control_bad_length_is_fatal() {
    let body = hex("0209 0000 00000001 000000");
    assert_eq!(
        CeeDcbx::parse(&body),
        Err(de(
            0,
            "dcbx.control",
            K::BadLength {
                length: 9,
                expected: 10
            }
        ))
    );
}

#[test]
fn cee_errors_count_from_the_frame_start() {
    let mut v = hex(LLDPAD_1);
    v[ETH_LEN + 40] = 0x04;
    v[ETH_LEN + 41] = 0x00;
    assert_eq!(
        Frame::parse(&v),
        Err(de(ETH_LEN + 40, "dcbx.subtlv.length", K::ZeroLength))
    );
}

// ---- CEE features (not fatal) ------------------------------------------------

fn cee_of(v: &[u8]) -> CeeDcbx {
    Lldpdu::parse(v)
        .expect("LLDPDU stands")
        .cee_dcbx
        .expect("CEE")
}

#[test]
fn bad_pgid_is_a_feature_error() {
    let mut v = lldpad_pdu();
    v[47] = 0x91; // priority 2 -> PGID 9
    let cee = cee_of(&v);
    let e = de(
        47,
        "dcbx.pg.pgid",
        K::BadValue {
            value: 9,
            reason: "PGID must be 0..7 or 15",
        },
    );
    assert_eq!(cee.pg, Some(Err(e.clone())));
    assert_eq!(cee.anomalies.as_slice(), [e]);
    // The rest of the TLV stands.
    assert!(matches!(cee.pfc, Some(Ok(_))));
    assert!(matches!(cee.app, Some(Ok(_))));
    assert!(cee.control.is_some());
    // Seen from the frame, the stored error counts from the frame start.
    let mut f = hex(LLDPAD_1);
    f[ETH_LEN + 47] = 0x91;
    let Payload::Lldp(pdu) = Frame::parse(&f).expect("parses").payload else {
        panic!("LLDP");
    };
    let stored = pdu
        .cee_dcbx
        .expect("CEE")
        .pg
        .expect("PG")
        .expect_err("invalid");
    assert_eq!(stored.offset, ETH_LEN + 47);
}

#[test]
fn percentages_must_sum_to_100() {
    let mut v = lldpad_pdu();
    v[51] = 74; // 25 + 74
    let e = cee_of(&v).pg.expect("PG").expect_err("invalid");
    assert_eq!((e.offset, e.field), (50, "dcbx.pg.percent"));
    assert!(matches!(e.kind, K::BadValue { value: 99, .. }));

    let mut v = lldpad_pdu();
    v[52] = 101;
    let e = cee_of(&v).pg.expect("PG").expect_err("invalid");
    assert_eq!((e.offset, e.field), (52, "dcbx.pg.percent"));
    assert!(matches!(e.kind, K::BadValue { value: 101, .. }));
}

#[test]
fn num_tcs_range() {
    for (bad, ok) in [(0u8, false), (1, true), (8, true), (9, false)] {
        let mut v = lldpad_pdu();
        v[58] = bad;
        v[66] = bad;
        let cee = cee_of(&v);
        assert_eq!(cee.pg.as_ref().expect("PG").is_ok(), ok, "PG num_tcs {bad}");
        assert_eq!(
            cee.pfc.as_ref().expect("PFC").is_ok(),
            ok,
            "PFC num_tcs {bad}"
        );
        if !ok {
            let e = cee.pfc.expect("PFC").expect_err("invalid");
            assert_eq!((e.offset, e.field), (66, "dcbx.pfc.num_tcs"));
            let e = cee.pg.expect("PG").expect_err("invalid");
            assert_eq!((e.offset, e.field), (58, "dcbx.pg.num_tcs"));
        }
    }
}

/// Builds a CEE body: Control, then the given sub-TLVs (hex).
fn body(subtlvs: &str) -> Vec<u8> {
    let mut b = hex("020a 0000 00000001 00000000");
    b.extend_from_slice(&hex(subtlvs));
    b
}

#[test]
fn feature_bad_lengths() {
    // PG of 16 bytes, PFC of 7, APP of 7 (not 4 + 6n), all non-fatal.
    let cee = CeeDcbx::parse(&body(
        "0410 0000c000 01234567 0d0d0d0d0c0c0c0c \
         0607 00008000 18 08 00 \
         0807 00008000 8906 00",
    ))
    .expect("parses");
    assert_eq!(
        cee.pg,
        Some(Err(de(
            12,
            "dcbx.pg",
            K::BadLength {
                length: 16,
                expected: 17
            }
        )))
    );
    assert_eq!(
        cee.pfc,
        Some(Err(de(
            30,
            "dcbx.pfc",
            K::BadLength {
                length: 7,
                expected: 6
            }
        )))
    );
    assert_eq!(
        cee.app,
        Some(Err(de(
            39,
            "dcbx.app",
            K::BadLength {
                length: 7,
                expected: 4
            }
        )))
    );
    assert_eq!(cee.anomalies.len(), 3);
    let cee = CeeDcbx::parse(&body("0803 000080")).expect("parses");
    assert_eq!(
        cee.app,
        Some(Err(de(
            12,
            "dcbx.app",
            K::TooShort {
                length: 3,
                minimum: 4
            }
        )))
    );
    // An empty APP table is valid.
    let cee = CeeDcbx::parse(&body("0804 00008000")).expect("parses");
    assert_eq!(cee.app.expect("APP").expect("valid").cfg.entries.len(), 0);
}

#[test]
fn duplicates_keep_the_first() {
    let cee = CeeDcbx::parse(&body(
        "0606 00008000 08 08 \
         0606 00008000 10 08 \
         020a 0000 00000009 00000009",
    ))
    .expect("parses");
    assert_eq!(
        cee.pfc.expect("PFC").expect("valid").cfg.priorities,
        PriorityMap(0x08)
    );
    assert!(cee.duplicates.pfc && cee.duplicates.control);
    assert!(!cee.duplicates.pg && !cee.duplicates.app);
    assert_eq!(cee.control.expect("control").seq, 1);
    assert_eq!(
        cee.anomalies.as_slice(),
        [
            de(20, "dcbx.pfc", K::Duplicate { first_offset: 12 }),
            de(28, "dcbx.control", K::Duplicate { first_offset: 0 }),
        ]
    );
}

#[test]
fn unknown_subtlvs_are_skipped() {
    let cee = CeeDcbx::parse(&body("0a02 abcd 0606 00008000 08 08 fe01 00")).expect("parses");
    assert_eq!(cee.unknown_subtlvs, 2);
    assert!(matches!(cee.pfc, Some(Ok(_))));
    assert!(cee.anomalies.is_empty());
}

#[test]
fn invalid_value_display_and_local_validation() {
    let mut pg = PgConfig::default();
    pg.pgid[3] = 9;
    let e = pg.validate().expect_err("PGID 9");
    assert_eq!(
        e,
        InvalidValue {
            field: "pg.pgid",
            index: Some(3),
            value: 9,
            reason: "PGID must be 0..7 or 15"
        }
    );
    assert_eq!(e.to_string(), "pg.pgid[3] = 9: PGID must be 0..7 or 15");
    assert_eq!(PgConfig::default().validate(), Ok(()));
    let pg = PgConfig {
        num_tcs: 0,
        ..PgConfig::default()
    };
    assert_eq!(pg.validate().expect_err("0 TCs").field, "pg.num_tcs");
    let pg = PgConfig {
        percent: [50, 50, 0, 0, 0, 0, 0, 1],
        ..PgConfig::default()
    };
    let e = pg.validate().expect_err("sum 101");
    assert_eq!(
        e.to_string(),
        "pg.percent = 101: the eight percentages must sum to 100"
    );

    let entry = AppEntry {
        selector: AppSelector(4),
        protocol: 0x8906,
        oui: DCBX_OUI,
        priorities: PriorityMap(8),
    };
    assert_eq!(
        entry.validate().expect_err("selector").field,
        "app.selector"
    );
    let entry = AppEntry {
        selector: AppSelector(1),
        oui: [0x01, 0x1b, 0x21],
        ..entry
    };
    assert_eq!(entry.validate().expect_err("oui").field, "app.oui");
    let cfg = lossless_wire::cee::AppConfig {
        entries: [
            AppEntry {
                oui: DCBX_OUI,
                ..entry
            },
            entry,
        ]
        .into_iter()
        .collect(),
    };
    let e = cfg.validate().expect_err("entry 1");
    assert_eq!((e.field, e.index), ("app.oui", Some(1)));
}

// ---- Ethernet ---------------------------------------------------------------

#[test]
fn ethernet_header() {
    let f = hex(LLDPAD_1);
    assert_eq!(
        EthernetHeader::parse(&f[..5]),
        Err(de(
            0,
            "eth.dst",
            K::Truncated {
                needed: 6,
                available: 5
            }
        ))
    );
    assert_eq!(
        EthernetHeader::parse(&f[..13]),
        Err(de(
            12,
            "eth.ethertype",
            K::Truncated {
                needed: 2,
                available: 1
            }
        ))
    );
    let (h, n) = EthernetHeader::parse(&f).expect("valid");
    assert_eq!((h.ethertype, n, h.buffer_len()), (0x88cc, 14, 14));

    let tagged = hex("0180c2000001 020000000001 8100 a005 8808");
    let (h, n) = EthernetHeader::parse(&tagged).expect("valid");
    assert_eq!(n, 18);
    assert_eq!(
        h.vlan,
        Some(VlanTag {
            pcp: 5,
            dei: false,
            vid: 5
        })
    );
    assert_eq!(h.ethertype, 0x8808);
    let mut out = [0u8; 18];
    h.emit(&mut out);
    assert_eq!(out[..], tagged[..]);
    assert_eq!(
        EthernetHeader::parse(&tagged[..15]),
        Err(de(
            14,
            "eth.vlan",
            K::Truncated {
                needed: 2,
                available: 1
            }
        ))
    );

    // An 802.3 length (here an STP BPDU's) is not an error: the frame is
    // someone else's traffic.
    let bpdu = hex("0180c2000000 020000000001 0026 424203 0000");
    let frame = Frame::parse(&bpdu).expect("passes through");
    assert_eq!(frame.header.ethertype, 0x0026);
    assert_eq!(frame.payload, Payload::Other(&bpdu[14..]));
}

#[test]
fn other_ethertypes_pass_through() {
    let f = hex("ffffffffffff 020000000001 0800 4500");
    let frame = Frame::parse(&f).expect("valid");
    assert_eq!(frame.payload, Payload::Other(&[0x45, 0x00]));
}

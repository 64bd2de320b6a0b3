//! Golden vectors: an example CEE DCBX TLV and the frames lldpad sent
//! (`cee.pcap`). Each must parse to the values tshark shows and emit back
//! byte for byte.

mod common;

use common::*;
use lossless_wire::cee::{
    AppConfig, AppEntry, AppSelector, Control, FeatureHeader, FeatureTlv, PfcConfig, PgConfig,
    PriorityMap, DCBX_OUI, PGID_STRICT,
};
use lossless_wire::lldp::{chassis_subtype, port_subtype, Id};
use lossless_wire::{emit_lldp_frame, CeeDcbx, Frame, Lldpdu, MacAddr, Payload};

fn app(selector: AppSelector, protocol: u16, prio: u8) -> AppEntry {
    AppEntry {
        selector,
        protocol,
        oui: DCBX_OUI,
        priorities: PriorityMap(1 << prio),
    }
}

fn header(enable: bool, willing: bool, error: bool) -> FeatureHeader {
    FeatureHeader {
        enable,
        willing,
        error,
        ..FeatureHeader::default()
    }
}

fn lldpdu(frame: &[u8]) -> Lldpdu<'_> {
    match Frame::parse(frame).expect("lldpad frame parses").payload {
        Payload::Lldp(pdu) => pdu,
        other => panic!("not LLDP: {other:?}"),
    }
}

#[test]
fn reference_example_round_trips() {
    let tlv = hex(REFERENCE_CEE_TLV);
    assert_eq!(tlv.len(), 63);
    let frame = lldpdu_with(&tlv);
    let pdu = Lldpdu::parse(&frame).expect("parses");
    let cee = pdu.cee_dcbx.clone().expect("CEE TLV");

    assert_eq!(
        cee.control,
        Some(Control {
            oper_version: 0,
            max_version: 0,
            seq: 7,
            ack: 6
        })
    );
    let pg = cee.pg.clone().expect("PG").expect("valid PG");
    // Flags 0xc0: Enable + Willing.
    assert_eq!(pg.header, header(true, true, false));
    assert_eq!(pg.cfg.pgid, [0, 0, 0, 1, 1, 1, PGID_STRICT, 2]);
    assert_eq!(pg.cfg.percent, [25, 75, 0, 0, 0, 0, 0, 0]);
    assert_eq!(pg.cfg.num_tcs, 8);
    let pfc = cee.pfc.clone().expect("PFC").expect("valid PFC");
    // Flags 0xa0: Enable + Error (not Willing) - see the note in the report.
    assert_eq!(pfc.header, header(true, false, true));
    assert_eq!(pfc.cfg.priorities, PriorityMap(0x08));
    assert_eq!(pfc.cfg.num_tcs, 8);
    let app_tlv = cee.app.clone().expect("APP").expect("valid APP");
    assert_eq!(app_tlv.header, header(true, false, false));
    let entries = &app_tlv.cfg.entries;
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0], app(AppSelector::ETHERTYPE, 0x8906, 3));
    // The text says "iSCSI->4" but the bitmap byte is 0x30: priorities 4 AND 5.
    assert_eq!(entries[1].selector, AppSelector::PORT);
    assert_eq!(entries[1].protocol, 3260);
    assert_eq!(entries[1].priorities, PriorityMap(0x30));
    assert_eq!(
        entries[1].priorities.priorities().collect::<Vec<_>>(),
        [4, 5]
    );
    assert!(cee.anomalies.is_empty());
    assert!(!cee.duplicates.any());

    // Byte for byte, at every level.
    assert_eq!(cee.tlv_len(), tlv.len());
    let mut body = vec![0u8; cee.buffer_len()];
    assert_eq!(cee.emit(&mut body), Ok(body.len()));
    assert_eq!(body, tlv[6..]);
    assert_eq!(CeeDcbx::parse(&tlv[6..]).expect("body parses"), cee);
    let mut out = vec![0u8; pdu.buffer_len()];
    assert_eq!(pdu.emit(&mut out), Ok(frame.len()));
    assert_eq!(out, frame);
}

#[test]
fn reference_example_built_from_values() {
    let cee = CeeDcbx::new(
        Control {
            oper_version: 0,
            max_version: 0,
            seq: 7,
            ack: 6,
        },
        Some(FeatureTlv::new(
            header(true, true, false),
            PgConfig {
                pgid: [0, 0, 0, 1, 1, 1, 15, 2],
                percent: [25, 75, 0, 0, 0, 0, 0, 0],
                num_tcs: 8,
            },
        )),
        Some(FeatureTlv::new(
            header(true, false, true),
            PfcConfig {
                priorities: PriorityMap(0x08),
                num_tcs: 8,
            },
        )),
        Some(FeatureTlv::new(
            header(true, false, false),
            AppConfig {
                entries: [
                    app(AppSelector::ETHERTYPE, 0x8906, 3),
                    AppEntry {
                        priorities: PriorityMap(0x30),
                        ..app(AppSelector::PORT, 3260, 4)
                    },
                ]
                .into_iter()
                .collect(),
            },
        )),
    );
    let mut body = vec![0u8; cee.buffer_len()];
    cee.emit(&mut body).expect("emits");
    assert_eq!(body, hex(REFERENCE_CEE_TLV)[6..]);
}

#[test]
fn lldpad_frames_round_trip_byte_for_byte() {
    for (i, h) in LLDPAD_FRAMES.iter().enumerate() {
        let frame = hex(h);
        let parsed = Frame::parse(&frame).expect("parses");
        let mut out = vec![0u8; parsed.buffer_len()];
        assert_eq!(parsed.emit(&mut out), Ok(frame.len()), "frame {}", i + 1);
        assert_eq!(out, frame, "frame {}", i + 1);

        let pdu = lldpdu(&frame);
        let mut built = Vec::new();
        emit_lldp_frame(parsed.header.src, &pdu, &mut built).expect("emits");
        assert_eq!(built, frame, "frame {} via emit_lldp_frame", i + 1);
    }
}

/// Values as `tshark -r cee.pcap -V` shows them for frame 1.
#[test]
fn lldpad_frame_1_matches_tshark() {
    let frame = hex(LLDPAD_1);
    let parsed = Frame::parse(&frame).expect("parses");
    let mac: MacAddr = "02:00:00:00:00:0a".parse().expect("mac");
    assert_eq!(parsed.header.src, mac);
    assert_eq!(parsed.header.dst, MacAddr::LLDP_NEAREST_BRIDGE);
    assert_eq!(parsed.header.vlan, None);
    let pdu = lldpdu(&frame);
    assert_eq!(
        pdu.chassis_id,
        Id {
            subtype: chassis_subtype::MAC_ADDRESS,
            id: &mac.0
        }
    );
    assert_eq!(
        pdu.port_id,
        Id {
            subtype: port_subtype::MAC_ADDRESS,
            id: &mac.0
        }
    );
    assert_eq!(pdu.ttl, 120);
    assert!(pdu.org_specific.is_empty() && pdu.unknown.is_empty());
    let cee = pdu.cee_dcbx.expect("CEE");
    // lldp.dcbx.control.seq / ack
    let control = cee.control.expect("control");
    assert_eq!((control.seq, control.ack), (1, 0));
    let pg = cee.pg.expect("PG").expect("valid");
    assert_eq!(pg.header, header(true, false, false));
    // lldp.dcbx.feature.pg.pgid_prio0..7, per0..7, numtcs
    assert_eq!(pg.cfg.pgid, [0, 0, 0, 0, 1, 1, 1, 15]);
    assert_eq!(pg.cfg.percent, [25, 75, 0, 0, 0, 0, 0, 0]);
    assert_eq!(pg.cfg.num_tcs, 8);
    let pfc = cee.pfc.expect("PFC").expect("valid");
    assert_eq!(pfc.header, header(true, false, false));
    // lldp.dcbx.feature.pfc.prio3 and prio4 enabled
    assert_eq!(pfc.cfg.priorities.priorities().collect::<Vec<_>>(), [3, 4]);
    assert_eq!(pfc.cfg.num_tcs, 8);
    let app_tlv = cee.app.expect("APP").expect("valid");
    assert_eq!(app_tlv.header, header(true, true, false));
    assert_eq!(
        app_tlv.cfg.entries.as_slice(),
        [
            app(AppSelector::ETHERTYPE, 0x8906, 3),
            app(AppSelector::PORT, 0x0cbc, 4),
            app(AppSelector::ETHERTYPE, 0x8914, 3),
        ]
    );
}

/// Frame 2 carries lldpad's defaults, which `PgConfig::default` mirrors.
#[test]
fn lldpad_frame_2_matches_tshark_and_defaults() {
    let frame = hex(LLDPAD_2);
    let cee = lldpdu(&frame).cee_dcbx.expect("CEE");
    let control = cee.control.expect("control");
    assert_eq!((control.seq, control.ack), (1, 1));
    let pg = cee.pg.expect("PG").expect("valid");
    assert_eq!(pg.header, header(true, true, false));
    assert_eq!(pg.cfg, PgConfig::default());
    let pfc = cee.pfc.expect("PFC").expect("valid");
    assert_eq!(pfc.header, header(true, true, false));
    assert_eq!(pfc.cfg, PfcConfig::default());
    let app_tlv = cee.app.expect("APP").expect("valid");
    assert_eq!(app_tlv.header, header(true, true, false));
    assert_eq!(app_tlv.cfg.entries.len(), 3);
}

#[test]
fn lldpad_sequence_numbers_match_tshark() {
    // (seq, ack) per frame, from `tshark -e lldp.dcbx.control.seq -e ...ack`.
    let expected = [(1, 0), (1, 1), (2, 1), (1, 2), (2, 1)];
    for (h, (seq, ack)) in LLDPAD_FRAMES.iter().zip(expected) {
        let frame = hex(h);
        let control = lldpdu(&frame).cee_dcbx.expect("CEE").control.expect("ctl");
        assert_eq!((control.seq, control.ack), (seq, ack));
    }
}

/// A frame shorter than 60 octets is padded with zeros, and the padding
/// parses as padding.
#[test]
fn short_lldp_frame_is_padded_to_60() {
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    let (chassis, port) = Lldpdu::mac_ids(&mac);
    let pdu = Lldpdu::new(chassis, port, 0);
    let mut out = Vec::new();
    emit_lldp_frame(mac, &pdu, &mut out).expect("emits");
    assert_eq!(out.len(), 60);
    assert_eq!(&out[..14], &hex("0180c200000e 020000000001 88cc")[..]);
    assert_eq!(out[14 + pdu.buffer_len()..], [0u8; 60 - 14 - 24]);
    assert_eq!(
        Frame::parse(&out).expect("parses").payload,
        Payload::Lldp(pdu)
    );
}

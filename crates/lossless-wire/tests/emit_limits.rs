//! Emission refuses what its TLV cannot carry instead of truncating a length
//! field: one limit per TLV, enforced by `validate()` on configuration and by
//! `emit` on whatever reaches it.

use lossless_wire::cee::{
    AppConfig, AppEntry, AppSelector, Control, FeatureHeader, FeatureTlv, PfcConfig, PgConfig,
    PriorityMap, DCBX_OUI, MAX_SENT_APP_ENTRIES,
};
use lossless_wire::ieee::{
    AppPriority, AppPriorityTable, EtsConfig, IeeeDcbx, Selector, Tsa, MAX_APP_ENTRIES,
};
use lossless_wire::lldp::{Id, ManagementAddress, OrgTlv, RawTlv};
use lossless_wire::{emit_lldp_frame, CeeDcbx, EmitError, InvalidValue, Lldpdu, MacAddr};

const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);

fn cee_with_app(entries: usize, all_features: bool) -> CeeDcbx {
    let on = FeatureHeader::new(true, false);
    let app = AppConfig {
        entries: (0..entries)
            .map(|i| AppEntry {
                selector: AppSelector::PORT,
                protocol: i as u16,
                oui: DCBX_OUI,
                priorities: PriorityMap(0x08),
            })
            .collect(),
    };
    let (pg, pfc) = if all_features {
        (
            Some(FeatureTlv::new(on, PgConfig::default())),
            Some(FeatureTlv::new(on, PfcConfig::default())),
        )
    } else {
        (None, None)
    };
    let mut cee = CeeDcbx::new(Control::default(), pg, pfc, Some(FeatureTlv::new(on, app)));
    if !all_features {
        cee.control = None;
    }
    cee
}

fn emit(pdu: &Lldpdu) -> Result<Vec<u8>, EmitError> {
    let mut out = vec![0u8; pdu.buffer_len()];
    pdu.emit(&mut out).map(|n| {
        assert_eq!(n, out.len());
        out
    })
}

fn length(field: &'static str, length: usize, min: usize, max: usize) -> EmitError {
    EmitError::Length {
        field,
        length,
        min,
        max,
    }
}

/// 78..=84 APP entries passed `AppConfig::validate` and overflowed the CEE
/// TLV's 9-bit length next to Control, PG and PFC: a malformed TLV went out.
#[test]
fn cee_app_table_that_does_not_fit_is_refused_by_validate_and_emit() {
    assert_eq!(MAX_SENT_APP_ENTRIES, 77);
    let (chassis, port) = Lldpdu::mac_ids(&MAC);
    for n in 78..=84 {
        let cee = cee_with_app(n, true);
        let Some(Ok(app)) = &cee.app else { panic!() };
        assert_eq!(
            app.cfg.validate(),
            Err(InvalidValue {
                field: "app.entries",
                index: None,
                value: n as u64,
                reason: "at most 77 APP entries fit in the CEE TLV next to Control, PG and PFC",
            })
        );
        let mut pdu = Lldpdu::new(chassis, port, 120);
        pdu.cee_dcbx = Some(cee);
        // OUI + subtype 4, Control 12, PG 19, PFC 8, APP 6 + 6n.
        let value = 4 + 12 + 19 + 8 + 6 + 6 * n;
        assert_eq!(emit(&pdu), Err(length("lldp.dcbx", value, 0, 511)));
        let mut frame = vec![1, 2, 3];
        assert!(emit_lldp_frame(MAC, &pdu, &mut frame).is_err());
        assert!(frame.is_empty(), "nothing half-built is left to send");
    }
    // 77 fit exactly, and come back.
    let cee = cee_with_app(77, true);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    pdu.cee_dcbx = Some(cee.clone());
    let bytes = emit(&pdu).expect("77 entries fit");
    assert_eq!(cee.tlv_len(), 2 + 511);
    assert_eq!(Lldpdu::parse(&bytes).expect("parses").cee_dcbx, Some(cee));
}

/// The APP table alone: 83 entries fit the TLV, 84 (the table's capacity,
/// what a sub-TLV length could hold) do not once OUI and subtype are counted.
#[test]
fn cee_app_alone_fits_83() {
    let (chassis, port) = Lldpdu::mac_ids(&MAC);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    pdu.cee_dcbx = Some(cee_with_app(83, false));
    let bytes = emit(&pdu).expect("fits");
    assert_eq!(
        Lldpdu::parse(&bytes).expect("parses").cee_dcbx,
        pdu.cee_dcbx
    );
    pdu.cee_dcbx = Some(cee_with_app(84, false));
    assert_eq!(
        emit(&pdu),
        Err(length("lldp.dcbx", 4 + 2 + 4 + 504, 0, 511))
    );
}

#[test]
fn lengths_the_parser_refuses_are_not_emitted() {
    let long = [b'x'; 600];
    let (chassis, port) = Lldpdu::mac_ids(&MAC);
    let ok = Lldpdu::new(chassis, port, 120);
    assert!(emit(&ok).is_ok());

    let mut pdu = ok.clone();
    pdu.chassis_id = Id {
        subtype: 7,
        id: &long[..256],
    };
    assert_eq!(emit(&pdu), Err(length("lldp.chassis_id", 256, 1, 255)));
    pdu.chassis_id.id = &[];
    assert_eq!(emit(&pdu), Err(length("lldp.chassis_id", 0, 1, 255)));
    pdu.chassis_id.id = &long[..255];
    assert!(emit(&pdu).is_ok());

    let mut pdu = ok.clone();
    pdu.port_id.id = &long[..300];
    assert_eq!(emit(&pdu), Err(length("lldp.port_id", 300, 1, 255)));

    let mut pdu = ok.clone();
    pdu.system_name = Some(&long[..256]);
    assert_eq!(emit(&pdu), Err(length("lldp.system_name", 256, 0, 255)));
    let mut pdu = ok.clone();
    pdu.port_description = Some(&long[..512]);
    assert_eq!(
        emit(&pdu),
        Err(length("lldp.port_description", 512, 0, 255))
    );

    let mut pdu = ok.clone();
    let mgmt = ManagementAddress {
        address_subtype: 1,
        address: &long[..32],
        interface_subtype: 2,
        interface_number: 1,
        oid: &[],
    };
    pdu.management_addresses.push(mgmt);
    assert_eq!(emit(&pdu), Err(length("lldp.mgmt_addr.addr", 32, 1, 31)));
    pdu.management_addresses[0].address = &long[..4];
    pdu.management_addresses[0].oid = &long[..129];
    assert_eq!(emit(&pdu), Err(length("lldp.mgmt_addr.oid", 129, 0, 128)));

    let mut pdu = ok.clone();
    pdu.org_specific.push(OrgTlv {
        oui: [0, 0x12, 0x0f],
        subtype: 1,
        info: &long[..508],
    });
    assert_eq!(emit(&pdu), Err(length("lldp.org", 512, 0, 511)));
    pdu.org_specific[0].info = &long[..507];
    let bytes = emit(&pdu).expect("507 octets of info fit");
    assert_eq!(Lldpdu::parse(&bytes).expect("parses"), pdu);

    let mut pdu = ok;
    pdu.unknown.push(RawTlv {
        tlv_type: 9,
        value: &long[..512],
    });
    assert_eq!(emit(&pdu), Err(length("lldp.tlv", 512, 0, 511)));
}

/// The IEEE APP table's capacity is what its TLV carries: a full table fits.
#[test]
fn ieee_app_table_at_capacity_fits_its_tlv() {
    assert_eq!(MAX_APP_ENTRIES, 168);
    let entries: Vec<AppPriority> = (0..168)
        .map(|i| AppPriority {
            priority: (i % 8) as u8,
            selector: Selector::UDP,
            protocol: i as u16,
        })
        .collect();
    let table = AppPriorityTable::try_from(&entries[..]).expect("168 fit");
    let mut one_more = entries.clone();
    one_more.push(entries[0]);
    assert_eq!(
        AppPriorityTable::try_from(&one_more[..]).map(|_| ()),
        Err(InvalidValue {
            field: "app.entries",
            index: None,
            value: 169,
            reason: "at most 168 entries fit in one Application Priority TLV",
        })
    );
    let (chassis, port) = Lldpdu::mac_ids(&MAC);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    pdu.ieee_dcbx = IeeeDcbx::new(None, None, None, Some(table));
    let bytes = emit(&pdu).expect("fits");
    // The APP TLV's length field: 5 + 3 * 168 = 509.
    assert_eq!(u16::from_be_bytes([bytes[22], bytes[23]]) & 0x1ff, 509);
    assert_eq!(Lldpdu::parse(&bytes).expect("parses"), pdu);
}

/// An IEEE value the parser would refuse is not written (not masked).
#[test]
fn invalid_ieee_values_are_refused() {
    let (chassis, port) = Lldpdu::mac_ids(&MAC);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    let mut ets = EtsConfig::default();
    ets.table.tsa[5] = Tsa(7);
    pdu.ieee_dcbx = IeeeDcbx::new(Some(ets), None, None, None);
    assert_eq!(
        emit(&pdu),
        Err(EmitError::Value(InvalidValue {
            field: "ets.tsa",
            index: Some(5),
            value: 7,
            reason: "TSA 3..254 is reserved (0 strict, 1 CBS, 2 ETS, 255 vendor)",
        }))
    );
    let ets = EtsConfig {
        max_tcs: 9,
        ..EtsConfig::default()
    };
    pdu.ieee_dcbx = IeeeDcbx::new(Some(ets), None, None, None);
    assert!(matches!(
        emit(&pdu),
        Err(EmitError::Value(InvalidValue {
            field: "ets.max_tcs",
            ..
        }))
    ));
    let mut app = AppPriorityTable::new();
    app.push(AppPriority {
        priority: 8,
        selector: Selector::DSCP,
        protocol: 1,
    })
    .expect("room");
    pdu.ieee_dcbx = IeeeDcbx::new(None, None, None, Some(app));
    assert!(matches!(
        emit(&pdu),
        Err(EmitError::Value(InvalidValue {
            field: "app.priority",
            index: Some(0),
            ..
        }))
    ));
}

/// An LLDPDU is one frame's MAC service data unit: 1500 octets on Ethernet.
/// Each TLV within its own limit could add up to more; emit refuses that
/// rather than sending a frame a peer would drop or cut.
#[test]
fn lldpdu_longer_than_1500_octets_is_refused() {
    use lossless_wire::lldp::MAX_LLDPDU_LEN;
    assert_eq!(MAX_LLDPDU_LEN, 1500);
    let long = [b'x'; 255];
    let id = Id {
        subtype: 7,
        id: &long,
    };
    let mut pdu = Lldpdu::new(id, Id { subtype: 5, ..id }, 120);
    pdu.port_description = Some(&long);
    pdu.system_name = Some(&long);
    pdu.system_description = Some(&long);
    // 258 + 258 + 4 + 3 * 257 + End 2 = 1293; an org TLV of 6 + 201 makes 1500.
    let info = [0u8; 202];
    pdu.org_specific.push(OrgTlv {
        oui: [0, 0x12, 0x0f],
        subtype: 1,
        info: &info[..201],
    });
    assert_eq!(pdu.buffer_len(), 1500);
    let bytes = emit(&pdu).expect("1500 octets fit");
    assert_eq!(Lldpdu::parse(&bytes).expect("parses"), pdu);
    pdu.org_specific[0].info = &info;
    assert_eq!(emit(&pdu), Err(length("lldpdu", 1501, 0, 1500)));
    let mut frame = vec![1, 2, 3];
    assert_eq!(
        emit_lldp_frame(MAC, &pdu, &mut frame),
        Err(length("lldpdu", 1501, 0, 1500))
    );
    assert!(frame.is_empty(), "nothing half-built is left to send");
}

/// Found by the `lldpdu` fuzz target: an LLDPDU longer than 1500 octets (a jumbo-frame
/// peer's) is read whole, but it is never sent on: emitting what was read is refused
/// with the length, as for one built here.
#[test]
fn a_longer_lldpdu_is_read_but_not_emitted() {
    let mut bytes = vec![0x02, 0x07, 4, 2, 0, 0, 0, 0, 1]; // Chassis ID, MAC
    bytes.extend([0x04, 0x07, 3, 2, 0, 0, 0, 0, 1]); // Port ID, MAC
    bytes.extend([0x06, 0x02, 0, 120]); // TTL 120
    for _ in 0..4 {
        // An organizationally specific TLV of 500 octets (an OUI nobody decodes).
        bytes.extend([
            0xfe | (500u16 >> 8) as u8,
            (500 & 0xff) as u8,
            0,
            0x12,
            0x34,
            1,
        ]);
        bytes.extend([0u8; 496]);
    }
    bytes.extend([0, 0]); // End
    assert_eq!(bytes.len(), 2032);
    let pdu = Lldpdu::parse(&bytes).expect("a long LLDPDU is read");
    assert_eq!(pdu.org_specific.len(), 4);
    assert_eq!(pdu.buffer_len(), 2032);
    assert_eq!(emit(&pdu), Err(length("lldpdu", 2032, 0, 1500)));
}

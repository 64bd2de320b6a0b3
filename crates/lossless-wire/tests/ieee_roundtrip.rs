//! Property tests for the IEEE 802.1Qaz TLVs: parse(emit(x)) == x for every
//! valid value; emit(parse(b)) == b for valid bytes assembled field by field
//! here; every prefix is refused; no input panics; serde names round-trip.

mod ieee_support;

use ieee_support::*;
use lossless_wire::ieee::{
    AppPriority, AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, PfcConfig,
    PriorityMap, Selector, Tsa,
};
use lossless_wire::{DecodeErrorKind, Frame, Lldpdu};
use proptest::collection::vec;
use proptest::prelude::*;

fn emit(ieee: &IeeeDcbx) -> Vec<u8> {
    let mut out = vec![0u8; ieee.buffer_len()];
    assert_eq!(ieee.emit(&mut out), Ok(out.len()));
    out
}

/// Raw field values of an ETS table that the rules accept, as bytes.
fn raw_table() -> impl Strategy<Value = ([u8; 8], [u8; 8], [u8; 8])> {
    ets_table().prop_map(|t| (t.prio_tc, t.tc_bw, t.tsa.map(|x| x.0)))
}

/// Valid TLV bytes, assembled here from raw fields with reserved bits zero.
fn valid_tlv_bytes() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let ets_cfg =
        (any::<u8>(), raw_table()).prop_map(|(flags, (p, b, t))| ets_tlv(9, flags & 0xc7, p, b, t));
    let ets_rec = raw_table().prop_map(|(p, b, t)| ets_tlv(10, 0, p, b, t));
    let pfc = (any::<bool>(), any::<bool>(), 0u8..=8, any::<u8>())
        .prop_map(|(w, m, cap, e)| pfc_tlv((u8::from(w) << 7) | (u8::from(m) << 6) | cap, e));
    let entry = (0u8..8, 1u8..=5, any::<u16>())
        .prop_map(|(p, s, proto)| (p, s, if s == 5 { proto & 63 } else { proto }));
    let app = vec(entry, 0..=168).prop_map(|e| app_tlv(&e));
    (
        proptest::option::of(ets_cfg),
        proptest::option::of(ets_rec),
        proptest::option::of(pfc),
        proptest::option::of(app),
    )
        .prop_map(|(a, b, c, d)| [a, b, c, d].into_iter().flatten().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn valid_values_survive_emit_and_parse(ieee in ieee(168)) {
        let bytes = emit(&ieee);
        let parsed = IeeeDcbx::parse(&bytes).expect("emitted TLVs parse");
        prop_assert_eq!(&parsed, &ieee);
        prop_assert_eq!(emit(&parsed), bytes);
    }

    #[test]
    fn valid_values_validate(ieee in ieee(168)) {
        if let Some(Ok(c)) = &ieee.ets_config { prop_assert_eq!(c.validate(), Ok(())); }
        if let Some(Ok(r)) = &ieee.ets_recommendation { prop_assert_eq!(r.validate(), Ok(())); }
        if let Some(Ok(p)) = &ieee.pfc { prop_assert_eq!(p.validate(), Ok(())); }
        if let Some(Ok(a)) = &ieee.app { prop_assert_eq!(a.validate(), Ok(())); }
    }

    /// Bytes not written by our emitter parse, and re-emit identically.
    #[test]
    fn valid_bytes_re_emit_identically(tlvs in valid_tlv_bytes()) {
        let bytes: Vec<u8> = tlvs.concat();
        let ieee = IeeeDcbx::parse(&bytes).expect("valid TLVs parse");
        prop_assert!(ieee.errors().next().is_none(), "{:?}", ieee);
        prop_assert_eq!(emit(&ieee), bytes.clone());
        // The same inside an LLDPDU.
        let pdu_bytes = lldpdu(&tlvs);
        let pdu = Lldpdu::parse(&pdu_bytes).expect("valid LLDPDU");
        prop_assert_eq!(&pdu.ieee_dcbx, &ieee);
        let mut out = vec![0u8; pdu.buffer_len()];
        prop_assert_eq!(pdu.emit(&mut out), Ok(pdu_bytes.len()));
        prop_assert_eq!(out, pdu_bytes);
    }

    /// Any bytes after the mandatory TLVs: no panic, and whatever parses
    /// re-emits to bytes that parse back to its normalized value.
    #[test]
    fn mutated_ieee_lldpdus_never_panic(
        edits in vec((any::<usize>(), any::<u8>()), 1..6),
        cut in any::<usize>(),
    ) {
        let mut bytes = lldpdu(&dscp_tlvs());
        for (at, byte) in edits {
            let i = 22 + at % (bytes.len() - 22);
            bytes[i] = byte;
        }
        bytes.truncate(22 + cut % (bytes.len() - 21));
        let _ = IeeeDcbx::parse(&bytes[22..]);
        if let Ok(pdu) = Lldpdu::parse(&bytes) {
            for e in pdu.ieee_dcbx.errors() {
                prop_assert!(e.offset < bytes.len(), "{}", e);
            }
            let mut out = vec![0u8; pdu.buffer_len()];
            prop_assert_eq!(pdu.emit(&mut out), Ok(out.len()));
            let again = Lldpdu::parse(&out).expect("re-emitted LLDPDU parses");
            prop_assert_eq!(again.ieee_dcbx, pdu.ieee_dcbx.normalized());
        }
    }

    #[test]
    fn serde_json_round_trips(ieee in ieee(20)) {
        if let Some(Ok(c)) = &ieee.ets_config {
            let s = serde_json::to_string(c).expect("serialises");
            prop_assert_eq!(&serde_json::from_str::<EtsConfig>(&s).expect("reads back"), c);
        }
        if let Some(Ok(r)) = &ieee.ets_recommendation {
            let s = serde_json::to_string(r).expect("serialises");
            prop_assert_eq!(&serde_json::from_str::<EtsRecommendation>(&s).expect("reads"), r);
        }
        if let Some(Ok(p)) = &ieee.pfc {
            let s = serde_json::to_string(p).expect("serialises");
            prop_assert_eq!(&serde_json::from_str::<PfcConfig>(&s).expect("reads back"), p);
        }
        if let Some(Ok(a)) = &ieee.app {
            let s = serde_json::to_string(a).expect("serialises");
            prop_assert_eq!(&serde_json::from_str::<AppPriorityTable>(&s).expect("reads"), a);
        }
    }
}

#[test]
fn every_prefix_is_refused() {
    let tlvs = dscp_tlvs();
    let pdu = lldpdu(&tlvs);
    assert!(Lldpdu::parse(&pdu).is_ok());
    for n in 0..pdu.len() {
        let e = Lldpdu::parse(&pdu[..n]).expect_err("a prefix must not parse");
        assert!(e.offset <= n, "prefix {n}: {e}");
        assert!(
            matches!(
                e.kind,
                DecodeErrorKind::Truncated { .. }
                    | DecodeErrorKind::LengthBeyondContainer { .. }
                    | DecodeErrorKind::MissingEnd
            ),
            "prefix {n}: {e}"
        );
    }
    let body: Vec<u8> = tlvs.concat();
    assert!(IeeeDcbx::parse(&body).is_ok());
    // A run of TLVs may end between two of them; anywhere else is an error.
    let ends: Vec<usize> = tlvs
        .iter()
        .scan(0, |at, t| {
            *at += t.len();
            Some(*at)
        })
        .collect();
    for n in 0..body.len() {
        let r = IeeeDcbx::parse(&body[..n]);
        assert_eq!(r.is_ok(), n == 0 || ends.contains(&n), "prefix {n}: {r:?}");
    }
}

#[test]
fn every_truncated_frame_is_refused() {
    let mut frame = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x0e, 0x02, 0, 0, 0, 0, 1, 0x88, 0xcc,
    ];
    frame.extend(lldpdu(&dscp_tlvs()));
    assert!(Frame::parse(&frame).is_ok());
    for n in 0..frame.len() {
        assert!(Frame::parse(&frame[..n]).is_err(), "prefix {n}");
    }
}

/// The names users write in TOML and JSON.
#[test]
fn configuration_reads_with_names() {
    let toml_text = r#"
        [ets]
        willing = false
        cbs = false
        max_tcs = 8
        prio_tc = [0, 0, 0, 1, 1, 0, 0, 0]
        tc_bw = [40, 60, 0, 0, 0, 0, 0, 0]
        tsa = ["ets", "ets", "strict", "cbs", "vendor", "strict", "strict", "strict"]

        [pfc]
        willing = true
        mbc = false
        cap = 8
        enabled = [3, 4]

        [[app]]
        priority = 3
        selector = "dscp"
        protocol = 26

        [[app]]
        priority = 3
        selector = "ethertype"
        protocol = 0x8906

        [[app]]
        priority = 4
        selector = "tcp"
        protocol = 3260
    "#;
    #[derive(serde::Deserialize)]
    struct Cfg {
        ets: EtsConfig,
        pfc: PfcConfig,
        app: AppPriorityTable,
    }
    let cfg: Cfg = toml::from_str(toml_text).expect("valid TOML");
    assert_eq!(
        cfg.ets,
        EtsConfig {
            willing: false,
            cbs: false,
            max_tcs: 8,
            table: EtsTable {
                prio_tc: [0, 0, 0, 1, 1, 0, 0, 0],
                tc_bw: [40, 60, 0, 0, 0, 0, 0, 0],
                tsa: [
                    Tsa::ETS,
                    Tsa::ETS,
                    Tsa::STRICT,
                    Tsa::CBS,
                    Tsa::VENDOR,
                    Tsa::STRICT,
                    Tsa::STRICT,
                    Tsa::STRICT
                ],
            },
        }
    );
    assert_eq!(cfg.ets.validate(), Ok(()));
    assert_eq!(cfg.pfc.enabled, PriorityMap(0x18));
    assert_eq!(
        &cfg.app[..],
        [
            AppPriority {
                priority: 3,
                selector: Selector::DSCP,
                protocol: 26
            },
            AppPriority {
                priority: 3,
                selector: Selector::ETHERTYPE,
                protocol: 0x8906
            },
            AppPriority {
                priority: 4,
                selector: Selector::TCP,
                protocol: 3260
            },
        ]
    );
    // And they are written back with the same names.
    let json = serde_json::to_value(cfg.ets).expect("serialises");
    assert_eq!(
        json,
        serde_json::json!({
            "willing": false, "cbs": false, "max_tcs": 8,
            "prio_tc": [0, 0, 0, 1, 1, 0, 0, 0],
            "tc_bw": [40, 60, 0, 0, 0, 0, 0, 0],
            "tsa": ["ets", "ets", "strict", "cbs", "vendor", "strict", "strict", "strict"]
        })
    );
    assert_eq!(
        serde_json::to_value(&cfg.app).expect("serialises"),
        serde_json::json!([
            {"priority": 3, "selector": "dscp", "protocol": 26},
            {"priority": 3, "selector": "ethertype", "protocol": 35078},
            {"priority": 4, "selector": "tcp", "protocol": 3260}
        ])
    );
    let udp: Selector = serde_json::from_str("\"udp\"").expect("name");
    let port: Selector = serde_json::from_str("\"port\"").expect("name");
    assert_eq!((udp, port), (Selector::UDP, Selector::PORT));
}

#[test]
fn configuration_errors_name_the_field_and_index() {
    let e = serde_json::from_str::<Selector>("\"sctp\"").expect_err("unknown name");
    assert!(
        e.to_string().contains("unknown APP selector \"sctp\""),
        "{e}"
    );
    let e = serde_json::from_str::<Tsa>("\"wrr\"").expect_err("unknown name");
    assert!(e.to_string().contains("unknown TSA \"wrr\""), "{e}");
    // Numbers are read, and validate() refuses the reserved ones.
    let app: AppPriorityTable = serde_json::from_str(
        r#"[{"priority": 1, "selector": "dscp", "protocol": 10},
            {"priority": 1, "selector": 6, "protocol": 10}]"#,
    )
    .expect("reads");
    let e = app.validate().expect_err("reserved selector");
    assert_eq!((e.field, e.index, e.value), ("app.selector", Some(1), 6));
    assert_eq!(
        e.to_string(),
        "app.selector[1] = 6: selector 0, 6 and 7 are reserved (1 ethertype, 2 tcp, 3 udp, 4 port, 5 dscp)"
    );
    let mut ets = EtsConfig::default();
    ets.table.tc_bw = [50, 50, 1, 0, 0, 0, 0, 0];
    let e = ets.validate().expect_err("sum 101");
    assert_eq!((e.field, e.index, e.value), ("ets.tc_bw", None, 101));
    let rec = EtsRecommendation {
        table: EtsTable {
            prio_tc: [0, 9, 0, 0, 0, 0, 0, 0],
            ..EtsTable::default()
        },
    };
    let e = rec.validate().expect_err("TC 9");
    assert_eq!(
        (e.field, e.index, e.value),
        ("ets_recommendation.prio_tc", Some(1), 9)
    );
    let pfc = PfcConfig {
        cap: 12,
        ..PfcConfig::default()
    };
    assert_eq!(pfc.validate().expect_err("cap").field, "pfc.cap");
    // Too many entries for one TLV: refused while reading.
    let many = format!(
        "[{}]",
        vec![r#"{"priority": 1, "selector": "udp", "protocol": 1}"#; 169].join(",")
    );
    assert!(serde_json::from_str::<AppPriorityTable>(&many).is_err());
}

#[test]
fn defaults_are_lldpads() {
    let ets = EtsConfig::default();
    assert!(ets.willing && !ets.cbs);
    assert_eq!(ets.max_tcs, 8);
    assert_eq!(ets.table.tsa, [Tsa::STRICT; 8]);
    assert_eq!(ets.validate(), Ok(()));
    let pfc = PfcConfig::default();
    assert!(pfc.willing && !pfc.mbc);
    assert_eq!((pfc.cap, pfc.enabled), (8, PriorityMap::NONE));
    // lldpad's default frame (host B of the capture, before configuration)
    // emits exactly these bytes for ETS-CFG: willing, 8 TCs as 0, zeros, strict.
    let bytes = emit(&IeeeDcbx::new(Some(ets), None, Some(pfc), None));
    assert_eq!(
        bytes,
        [
            ets_tlv(9, 0x80, [0; 8], [0; 8], [0; 8]),
            pfc_tlv(0x88, 0x00)
        ]
        .concat()
    );
}

//! Golden vectors: the IEEE 802.1Qaz frames lldpad sent, and every capture
//! added under `tests/data/`. Each frame must parse with its IEEE TLVs
//! well-formed and emit back byte for byte; the frames named below must give
//! the values tshark shows.
//!
//! The captures are of Debian lldpad 1.1 in IEEE mode on a veth pair (a
//! dcbnl shim standing in for the DCB driver veth lacks), configured with
//! lldptool as each test says: `lossless/tests/data/lldpad-ieee.pcapng` (two
//! agents negotiating), `lldpad-ieee-default.pcapng` (one agent before any
//! configuration), `lldpad-ieee-dscp.pcapng` (DSCP APP entries, every TSA).

mod ieee_support;

use ieee_support::*;
use lossless_wire::ieee::{
    AppPriority, EtsConfig, EtsRecommendation, EtsTable, PfcConfig, PriorityMap, Selector, Tsa,
};
use lossless_wire::{emit_lldp_frame, Frame, Lldpdu, MacAddr, Payload};

fn lldpdu(frame: &[u8]) -> Lldpdu<'_> {
    match Frame::parse(frame).expect("captured frame parses").payload {
        Payload::Lldp(pdu) => pdu,
        other => panic!("not LLDP: {other:?}"),
    }
}

#[test]
fn every_captured_lldp_frame_round_trips_byte_for_byte() {
    let mut ieee_tlvs = 0;
    let mut files = 0;
    for path in capture_files() {
        files += 1;
        let frames = read_capture(&path);
        assert!(!frames.is_empty(), "{}: no frames", path.display());
        for (i, frame) in frames.iter().enumerate() {
            let at = format!("{} frame {}", path.display(), i + 1);
            let parsed = Frame::parse(frame).unwrap_or_else(|e| panic!("{at}: {e}"));
            let Payload::Lldp(pdu) = &parsed.payload else {
                continue;
            };
            let ieee = &pdu.ieee_dcbx;
            if let Some(e) = ieee.errors().next() {
                panic!("{at}: IEEE TLV malformed: {e}");
            }
            ieee_tlvs += usize::from(ieee.ets_config.is_some())
                + usize::from(ieee.ets_recommendation.is_some())
                + usize::from(ieee.pfc.is_some())
                + usize::from(ieee.app.is_some());
            // Whatever parses also validates.
            if let Some(Ok(c)) = &ieee.ets_config {
                assert_eq!(c.validate(), Ok(()), "{at}");
            }
            if let Some(Ok(a)) = &ieee.app {
                assert_eq!(a.validate(), Ok(()), "{at}");
            }
            let mut built = Vec::new();
            emit_lldp_frame(parsed.header.src, pdu, &mut built).expect("emits");
            assert_eq!(built, *frame, "{at}: re-emitted frame differs");
        }
    }
    assert!(files >= 1);
    // The lldpad capture alone holds 6 frames: 4 TLVs in 3, 2 in the other 3.
    assert!(ieee_tlvs >= 18, "only {ieee_tlvs} IEEE TLVs found");
}

/// lldpad-ieee.pcapng frame 1, as `tshark -V` decodes it: host A, not willing.
#[test]
fn lldpad_frame_1_matches_tshark() {
    let frames = read_capture(&capture_files()[0]);
    assert_eq!(frames.len(), 6);
    let pdu = lldpdu(&frames[0]);
    let mac: MacAddr = "02:00:00:00:00:0a".parse().expect("mac");
    assert_eq!(pdu.chassis_id.id, mac.0);
    assert_eq!(pdu.ttl, 120);
    assert!(pdu.cee_dcbx.is_none() && pdu.org_specific.is_empty());
    let table = EtsTable {
        // PGID for Prio 0..7: 0 0 0 1 1 0 0 0
        prio_tc: [0, 0, 0, 1, 1, 0, 0, 0],
        // Bandwidth for PGID 0..7: 40 60 0 ...
        tc_bw: [40, 60, 0, 0, 0, 0, 0, 0],
        // TSA: ETS, ETS, then Strict Priority
        tsa: [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
        ],
    };
    let ieee = &pdu.ieee_dcbx;
    assert_eq!(
        ieee.ets_config,
        Some(Ok(EtsConfig {
            willing: false,
            cbs: false,
            // "Maximum Number of Traffic Classes: 8 (0x0)"
            max_tcs: 8,
            table,
        }))
    );
    assert_eq!(
        ieee.ets_recommendation,
        Some(Ok(EtsRecommendation { table }))
    );
    assert_eq!(
        ieee.pfc,
        Some(Ok(PfcConfig {
            willing: false,
            mbc: false,
            cap: 8,
            // PFC for Priority 3 and 4: Enabled
            enabled: PriorityMap(0x18),
            headroom_measurement: false,
        }))
    );
    // Application Protocol TLV of length 5: no entries.
    let app = ieee.app.clone().expect("APP").expect("valid");
    assert!(app.is_empty());
}

/// Frame 2: host B, lldpad's defaults but willing; ETS-CFG and PFC only.
#[test]
fn lldpad_frame_2_matches_tshark() {
    let frames = read_capture(&capture_files()[0]);
    let pdu = lldpdu(&frames[1]);
    let ieee = &pdu.ieee_dcbx;
    let cfg = ieee.ets_config.clone().expect("ETS-CFG").expect("valid");
    assert!(cfg.willing && !cfg.cbs);
    assert_eq!(cfg.max_tcs, 8);
    assert_eq!(cfg.table.tc_bw, [40, 60, 0, 0, 0, 0, 0, 0]);
    assert!(ieee.ets_recommendation.is_none() && ieee.app.is_none());
    let pfc = ieee.pfc.clone().expect("PFC").expect("valid");
    assert_eq!(
        pfc,
        PfcConfig {
            enabled: PriorityMap(0x18),
            ..PfcConfig::default()
        }
    );
}

/// Frame 3: the APP entry lldpad learnt: "Application Priority: 3",
/// "Application Selector: Default or Ethertype (1)", protocol 0x8906.
#[test]
fn lldpad_frame_3_carries_fcoe_on_priority_3() {
    let frames = read_capture(&capture_files()[0]);
    let app = lldpdu(&frames[2])
        .ieee_dcbx
        .app
        .expect("APP")
        .expect("valid");
    assert_eq!(
        &app[..],
        [AppPriority {
            priority: 3,
            selector: Selector::ETHERTYPE,
            protocol: 0x8906
        }]
    );
}

fn data(name: &str) -> Vec<Vec<u8>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    read_capture(&path)
}

/// `lldpad-ieee-default.pcapng`: lldpad before any configuration. Its ETS
/// table has every TC strict at 0 %: the bandwidth rule must accept a sum
/// of 0 when no TC uses ETS.
#[test]
fn lldpad_default_table_is_all_strict_at_zero() {
    let frames = data("lldpad-ieee-default.pcapng");
    assert!(!frames.is_empty());
    for f in &frames {
        let ieee = lldpdu(f).ieee_dcbx;
        assert_eq!(
            ieee.ets_config,
            Some(Ok(EtsConfig {
                willing: true,
                ..EtsConfig::default()
            }))
        );
        assert_eq!(ieee.pfc, Some(Ok(PfcConfig::default())));
        assert!(ieee.ets_recommendation.is_none() && ieee.app.is_none());
    }
}

/// `lldpad-ieee-dscp.pcapng`, last frame: lldpad configured with
/// `lldptool -T -V ETS-CFG tcbw=12,12,12,12,13,13,13,13` (TSA left strict),
/// an ETS-REC with every TSA kind, and 12 APP entries (`app=3,5,26` ...),
/// 8 of them DSCP; lldpad sends the APP table newest first.
#[test]
fn lldpad_dscp_frame_matches_tshark() {
    let frames = data("lldpad-ieee-dscp.pcapng");
    let ieee = lldpdu(frames.last().expect("frames")).ieee_dcbx;
    let cfg = ieee.ets_config.expect("ETS-CFG").expect("valid");
    // Strict classes with shares summing to 100: lldptool checks only the total.
    assert_eq!(cfg.table.tsa, [Tsa::STRICT; 8]);
    assert_eq!(cfg.table.tc_bw, [12, 12, 12, 12, 13, 13, 13, 13]);
    assert_eq!(cfg.table.prio_tc, [0, 1, 2, 3, 4, 5, 6, 7]);
    let rec = ieee.ets_recommendation.expect("ETS-REC").expect("valid");
    assert_eq!(
        rec.table.tsa,
        [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::CBS,
            Tsa::VENDOR,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT
        ]
    );
    let app = ieee.app.expect("APP").expect("valid");
    // tshark: lldp.dcbx.ieee.app.prio, lldp.dcbx.iee.app.sf, lldp.dcbx.feature.app.proto
    let got: Vec<(u8, u8, u16)> = app
        .iter()
        .map(|e| (e.priority, e.selector.0, e.protocol))
        .collect();
    assert_eq!(
        got,
        [
            (2, 4, 445),
            (3, 3, 4791),
            (4, 2, 3260),
            (3, 1, 0x8906),
            (7, 5, 56),
            (2, 5, 18),
            (1, 5, 10),
            (0, 5, 0),
            (6, 5, 48),
            (5, 5, 46),
            (3, 5, 24),
            (3, 5, 26),
        ]
    );
    let dscp = app.iter().filter(|e| e.selector == Selector::DSCP).count();
    assert_eq!(dscp, 8);
}

//! Parsing an LLDPDU without management, non-DCBX org-specific or reserved
//! TLVs does not touch the heap (the CEE and IEEE DCBX TLVs are held inline,
//! their APP tables up to `INLINE_APP_ENTRIES` entries: 4 CEE, 16 IEEE): the
//! receive path can run at line rate on a port that floods LLDP without
//! allocator pressure. A longer APP table costs one allocation, whatever its
//! length.
//!
//! A counting global allocator sees every allocation of this test binary, so
//! this file holds one test only (tests run on threads of one process).

mod common;
mod ieee_support;

use std::alloc::System;

use common::*;
use lossless_wire::cee::{
    self, AppConfig, AppEntry, AppSelector, FeatureHeader, FeatureTlv, PriorityMap,
};
use lossless_wire::ieee;
use lossless_wire::{CeeDcbx, Frame, Lldpdu, MacAddr, MacControl, Payload};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

// `stats_alloc` holds the one `unsafe impl GlobalAlloc`; the workspace forbids
// unsafe code in ours.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn parsing_lldpad_frames_does_not_allocate() {
    let frames: Vec<Vec<u8>> = LLDPAD_FRAMES.iter().map(|h| hex(h)).collect();
    let reference = lldpdu_with(&hex(REFERENCE_CEE_TLV));
    let pfc = hex("0101 0018 0000 0000 0000 ffff ffff 0000 0000 0000");
    let mut bad_pg = frames[0].clone();
    bad_pg[ETH_LEN + 47] = 0x91;
    let mut out = vec![0u8; 1500];
    // The four IEEE TLVs with 8 DSCP APP entries (and 4 others), in a frame;
    // and one whose TSA is reserved (kept as an error, not a heap string).
    let mut ieee_frame = hex("0180c200000e 020000000001 88cc");
    ieee_frame.extend(ieee_support::lldpdu(&ieee_support::dscp_tlvs()));
    let mut bad_tsa = ieee_frame.clone();
    bad_tsa[ETH_LEN + 22 + 19 + 3] = 3;

    let region = Region::new(GLOBAL);
    let mut checks = 0usize;
    for f in frames.iter().chain([&bad_pg]) {
        let frame = Frame::parse(f).expect("valid");
        if let Payload::Lldp(pdu) = &frame.payload {
            checks += usize::from(pdu.cee_dcbx.is_some());
            checks += pdu.emit(&mut out).unwrap_or(0);
        }
        let pdu = Lldpdu::parse(&f[ETH_LEN..]).expect("valid");
        checks += usize::from(pdu.ttl);
        checks += CeeDcbx::parse(&f[ETH_LEN + 28..ETH_LEN + 91])
            .expect("valid")
            .anomalies
            .len();
    }
    for f in [&ieee_frame, &bad_tsa] {
        let frame = Frame::parse(f).expect("valid");
        if let Payload::Lldp(pdu) = &frame.payload {
            let ieee = &pdu.ieee_dcbx;
            checks += ieee.errors().count();
            if let Some(Ok(app)) = &ieee.app {
                checks += app.len();
                checks += usize::from(app.validate().is_ok());
            }
            checks += pdu.emit(&mut out).unwrap_or(0);
        }
    }
    checks += Lldpdu::parse(&reference).expect("valid").buffer_len();
    checks += usize::from(MacControl::parse(&pfc).is_ok());
    // An error is a plain value too.
    checks += Lldpdu::parse(&frames[0][ETH_LEN..40])
        .expect_err("cut")
        .offset;
    let stats = region.change();

    assert!(checks > 0);
    assert_eq!(stats.allocations, 0, "parsing allocated: {stats:?}");
    assert_eq!(stats.reallocations, 0, "parsing reallocated: {stats:?}");

    // The counter does see the allocations there are: an org-specific TLV
    // goes into a Vec.
    let mut with_org = lldpdu_with(&hex("fe06 0080c2 01 0001"));
    with_org.extend_from_slice(&[0, 0]);
    let region = Region::new(GLOBAL);
    let pdu = Lldpdu::parse(&with_org).expect("valid");
    assert_eq!(pdu.org_specific.len(), 1);
    assert!(region.change().allocations > 0);

    // APP tables: in place up to the inline count, then one allocation of
    // the size the TLV says, never a reallocation.
    for (n, allocations) in [
        (ieee::INLINE_APP_ENTRIES, 0),
        (ieee::INLINE_APP_ENTRIES + 1, 1),
        (ieee::MAX_APP_ENTRIES, 1),
    ] {
        let entries: Vec<(u8, u8, u16)> = (0..n).map(|i| (3, 2, i as u16)).collect();
        let pdu = ieee_support::lldpdu(&[ieee_support::app_tlv(&entries)]);
        let region = Region::new(GLOBAL);
        let parsed = Lldpdu::parse(&pdu).expect("valid");
        let stats = region.change();
        assert!(matches!(&parsed.ieee_dcbx.app, Some(Ok(t)) if t.len() == n));
        assert_eq!(
            (stats.allocations, stats.reallocations),
            (allocations, 0),
            "an IEEE APP table of {n} entries"
        );
    }
    for (n, allocations) in [
        (cee::INLINE_APP_ENTRIES, 0),
        (cee::INLINE_APP_ENTRIES + 1, 1),
        (cee::MAX_SENT_APP_ENTRIES, 1),
    ] {
        let pdu = cee_app_lldpdu(n);
        let region = Region::new(GLOBAL);
        let parsed = Lldpdu::parse(&pdu).expect("valid");
        let stats = region.change();
        let app = parsed.cee_dcbx.as_ref().and_then(|c| c.app.as_ref());
        assert!(matches!(app, Some(Ok(t)) if t.cfg.entries.len() == n));
        assert_eq!(
            (stats.allocations, stats.reallocations),
            (allocations, 0),
            "a CEE APP table of {n} entries"
        );
    }
}

/// An LLDPDU whose CEE DCBX TLV has an APP sub-TLV of `n` entries.
fn cee_app_lldpdu(n: usize) -> Vec<u8> {
    let mac = MacAddr([2, 0, 0, 0, 0, 1]);
    let (chassis, port) = Lldpdu::mac_ids(&mac);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    let entries = (0..n)
        .map(|i| AppEntry {
            selector: AppSelector::PORT,
            protocol: i as u16,
            oui: cee::DCBX_OUI,
            priorities: PriorityMap(1 << 3),
        })
        .collect();
    let app = FeatureTlv::new(FeatureHeader::new(true, false), AppConfig { entries });
    let dcbx = CeeDcbx {
        control: Some(cee::Control {
            oper_version: 0,
            max_version: 0,
            seq: 1,
            ack: 0,
        }),
        app: Some(Ok(app)),
        ..CeeDcbx::default()
    };
    pdu.cee_dcbx = Some(dcbx);
    let mut out = vec![0u8; pdu.buffer_len()];
    pdu.emit(&mut out).expect("fits");
    out
}

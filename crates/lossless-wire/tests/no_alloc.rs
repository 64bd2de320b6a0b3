//! Parsing an LLDPDU without management, org-specific or reserved TLVs does
//! not touch the heap: the receive path can run at line rate on a port that
//! floods LLDP without allocator pressure.
//!
//! A counting global allocator sees every allocation of this test binary, so
//! this file holds one test only (tests run on threads of one process).

mod common;

use std::alloc::System;

use common::*;
use lossless_wire::{CeeDcbx, Frame, Lldpdu, MacControl, Payload};
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

    let region = Region::new(GLOBAL);
    let mut checks = 0usize;
    for f in frames.iter().chain([&bad_pg]) {
        let frame = Frame::parse(f).expect("valid");
        if let Payload::Lldp(pdu) = &frame.payload {
            checks += usize::from(pdu.cee_dcbx.is_some());
            checks += pdu.emit(&mut out);
        }
        let pdu = Lldpdu::parse(&f[ETH_LEN..]).expect("valid");
        checks += usize::from(pdu.ttl);
        checks += CeeDcbx::parse(&f[ETH_LEN + 28..ETH_LEN + 91])
            .expect("valid")
            .anomalies
            .len();
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
}

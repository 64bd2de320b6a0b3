//! Any bytes as a run of IEEE 802.1Qaz TLVs, alone and as the tail of an
//! LLDPDU: parse; on success emit, parse again and compare with the
//! normalized value (malformed TLVs are not re-emitted).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::{IeeeDcbx, Lldpdu};

#[path = "common/oversize.rs"]
mod oversize;

/// Chassis ID and Port ID (MAC subtype), TTL 120.
const MANDATORY: [u8; 22] = [
    0x02, 0x07, 0x04, 0x02, 0, 0, 0, 0, 0x01, 0x04, 0x07, 0x03, 0x02, 0, 0, 0, 0, 0x01, 0x06, 0x02,
    0x00, 0x78,
];

fn check(ieee: &IeeeDcbx, len: usize) {
    // Every stored error points inside the input.
    for e in ieee.errors() {
        assert!(e.offset < len, "{e}");
    }
    let mut out = vec![0u8; ieee.buffer_len()];
    assert_eq!(ieee.emit(&mut out), Ok(out.len()));
    let again = IeeeDcbx::parse(&out).expect("re-emitted TLVs parse");
    assert_eq!(again, ieee.normalized());
    // Whatever parses also validates.
    if let Some(Ok(c)) = &again.ets_config {
        assert!(c.validate().is_ok());
    }
    if let Some(Ok(r)) = &again.ets_recommendation {
        assert!(r.validate().is_ok());
    }
    if let Some(Ok(p)) = &again.pfc {
        assert!(p.validate().is_ok());
    }
    if let Some(Ok(a)) = &again.app {
        assert!(a.validate().is_ok());
    }
    // A second round changes nothing: the emitted bytes are a fixed point.
    let mut out2 = vec![0u8; again.buffer_len()];
    assert_eq!(again.emit(&mut out2), Ok(out2.len()));
    assert_eq!(out2, out);
}

fuzz_target!(|data: &[u8]| {
    if let Ok(ieee) = IeeeDcbx::parse(data) {
        check(&ieee, data.len());
    }
    let mut pdu = MANDATORY.to_vec();
    pdu.extend_from_slice(data);
    pdu.extend_from_slice(&[0, 0]);
    if let Ok(parsed) = Lldpdu::parse(&pdu) {
        check(&parsed.ieee_dcbx, pdu.len());
        let mut out = vec![0u8; parsed.buffer_len()];
        if oversize::refused(&parsed, || parsed.emit(&mut out)) {
            return;
        }
        assert_eq!(parsed.emit(&mut out), Ok(out.len()));
        let again = Lldpdu::parse(&out).expect("a re-emitted LLDPDU parses");
        assert_eq!(again.ieee_dcbx, parsed.ieee_dcbx.normalized());
    }
});

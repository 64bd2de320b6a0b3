//! Any bytes as an LLDPDU: parse (and read its IEEE 802.3 Maximum Frame Size); on
//! success emit, parse again and compare. We read LLDPDUs longer than a standard
//! frame's 1,500 octets (jumbo peers send them) but never emit one: emitting such a PDU
//! must be refused with a length error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::{CeeDcbx, Lldpdu};

#[path = "common/oversize.rs"]
mod oversize;

fuzz_target!(|data: &[u8]| {
    let Ok(pdu) = Lldpdu::parse(data) else {
        return;
    };
    // The IEEE 802.3 Maximum Frame Size, read from the org-specific TLVs: any, no panic.
    let _ = pdu.max_frame_size();
    let mut out = vec![0u8; pdu.buffer_len()];
    if oversize::refused(&pdu, || pdu.emit(&mut out)) {
        return;
    }
    assert_eq!(pdu.emit(&mut out), Ok(out.len()));
    let again = Lldpdu::parse(&out).expect("a re-emitted LLDPDU parses");
    let mut expected = pdu.clone();
    expected.cee_dcbx = pdu.cee_dcbx.as_ref().map(CeeDcbx::normalized);
    expected.ieee_dcbx = pdu.ieee_dcbx.normalized();
    assert_eq!(again, expected);
    // A second round changes nothing: the emitted bytes are a fixed point.
    let mut out2 = vec![0u8; again.buffer_len()];
    assert_eq!(again.emit(&mut out2), Ok(out2.len()));
    assert_eq!(out2, out);
});

//! Any bytes as an Ethernet frame: parse; on success emit, parse again and
//! compare (emission drops what parse flags as invalid, see `normalized`). An LLDPDU
//! longer than 1500 octets is read but never emitted: its emission must be refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::{CeeDcbx, Frame, Payload};

#[path = "common/oversize.rs"]
mod oversize;

fuzz_target!(|data: &[u8]| {
    let Ok(frame) = Frame::parse(data) else {
        return;
    };
    let mut out = vec![0u8; frame.buffer_len()];
    if let Payload::Lldp(pdu) = &frame.payload {
        if oversize::refused(pdu, || frame.emit(&mut out)) {
            return;
        }
    }
    assert_eq!(frame.emit(&mut out), Ok(out.len()));
    let again = Frame::parse(&out).expect("a re-emitted frame parses");
    let mut expected = frame.clone();
    if let Payload::Lldp(pdu) = &mut expected.payload {
        pdu.cee_dcbx = pdu.cee_dcbx.as_ref().map(CeeDcbx::normalized);
        pdu.ieee_dcbx = pdu.ieee_dcbx.normalized();
    }
    assert_eq!(again, expected);
});

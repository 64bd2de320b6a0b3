//! Any bytes as an Ethernet frame: parse; on success emit, parse again and
//! compare (emission drops what parse flags as invalid, see `normalized`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::{CeeDcbx, Frame, Payload};

fuzz_target!(|data: &[u8]| {
    let Ok(frame) = Frame::parse(data) else {
        return;
    };
    let mut out = vec![0u8; frame.buffer_len()];
    assert_eq!(frame.emit(&mut out), Ok(out.len()));
    let again = Frame::parse(&out).expect("a re-emitted frame parses");
    let mut expected = frame.clone();
    if let Payload::Lldp(pdu) = &mut expected.payload {
        pdu.cee_dcbx = pdu.cee_dcbx.as_ref().map(CeeDcbx::normalized);
        pdu.ieee_dcbx = pdu.ieee_dcbx.normalized();
    }
    assert_eq!(again, expected);
});

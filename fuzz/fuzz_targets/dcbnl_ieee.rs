//! Any bytes as the reply to `DCB_CMD_IEEE_GET`: decodes or is refused, never
//! panics; a DCB buffer that decodes can be written back (`IEEE_SET`), and
//! that request, read as the reply it mirrors (same nested layout), decodes
//! to the same buffer.
//!
//! Input: bytes 0..4 are the sequence number expected (little endian), the
//! rest is the datagram.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_sys::dcbnl::{decode_ieee_reply, encode_set_dcb_buffer, DcbCmd, RTM_GETDCB};

fuzz_target!(|data: &[u8]| {
    let Some((seq, buf)) = data.split_first_chunk::<4>() else {
        return;
    };
    let seq = u32::from_le_bytes(*seq);
    let Ok(Some(cfg)) = decode_ieee_reply(buf, seq, "va") else {
        return;
    };
    let Some(buffer) = cfg.buffer else {
        return;
    };
    // Every buffer index is 0..=7 once decoded, so the set request encodes.
    let mut msg = encode_set_dcb_buffer(seq, "va", &buffer).expect("a decoded buffer encodes");
    msg[4..6].copy_from_slice(&RTM_GETDCB.to_ne_bytes());
    msg[17] = DcbCmd::IeeeGet.code();
    let back = decode_ieee_reply(&msg, seq, "va").expect("own encoding decodes");
    assert_eq!(back.and_then(|c| c.buffer), Some(buffer));
});

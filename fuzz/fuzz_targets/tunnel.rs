//! Any bytes as a tunnel frame (the first byte picks the receiver's options:
//! VXLAN port 4789 or 8472, control word or not): parse; on success emit,
//! and the emitted bytes parse to the same frame and emit to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::tunnel::{ParseOptions, TunnelFrame};

fuzz_target!(|data: &[u8]| {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let opts = ParseOptions {
        vxlan_port: if sel & 1 == 0 { 4789 } else { 8472 },
        control_word: sel & 2 == 0,
    };
    let Ok(t) = TunnelFrame::parse(frame, &opts) else {
        return;
    };
    let mut out = vec![0u8; t.buffer_len()];
    assert_eq!(t.emit(&mut out), out.len());
    let again = TunnelFrame::parse(&out, &opts).expect("a re-emitted frame parses");
    assert_eq!(again, t);
    let mut out2 = vec![0u8; again.buffer_len()];
    again.emit(&mut out2);
    assert_eq!(out2, out);
    assert_eq!(t.inner.len(), out.len() - t.header_len());
});

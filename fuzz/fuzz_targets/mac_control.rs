//! Any bytes as a MAC Control payload: parse; on success emit, parse again
//! and compare.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_wire::MacControl;

fuzz_target!(|data: &[u8]| {
    let Ok(ctl) = MacControl::parse(data) else {
        return;
    };
    let mut out = vec![0u8; ctl.buffer_len()];
    ctl.emit(&mut out);
    assert_eq!(MacControl::parse(&out), Ok(ctl));
});

//! `sminfo`'s line as `lossless policy ... --sm` takes it (`sm lid 1 sm guid 0x...,
//! activity count ... SMINFO_MASTER`): any text in, the LID and GUID it names or
//! nothing, no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = lossless_policy::resolve::sminfo(text);
});

//! Policy, partitions and topology parsers: any bytes in, a value or an error out, no panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(p) = lossless_policy::parse_policy("fuzz", s) {
            let _ = lossless_policy::check::check("fuzz", &p, None);
        }
        let _ = lossless_policy::partitions::parse("fuzz", s);
        let _ = lossless_policy::fabric::topo::parse("fuzz", s);
    }
});

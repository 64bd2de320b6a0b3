//! The RoCE host settings' attribute files as the kernel (or NVIDIA's driver package)
//! shows them (`lossless-host`'s parsers: default_roce_tos and the other numbers, the ECN
//! enables, mlx5_ib's traffic_class, default_roce_mode): any text in, a value or a
//! precise error out, no panic; a value read back prints to what reads as it again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lossless_host::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = parse::u8_value(text) {
        assert_eq!(parse::u8_value(&format!("{v}\n")), Ok(v));
    }
    if let Ok(on) = parse::enable(text) {
        assert_eq!(parse::enable(if on { "1\n" } else { "0\n" }), Ok(on));
    }
    if let Ok(v) = parse::traffic_class(text) {
        assert_eq!(parse::traffic_class(&format!("Global tclass={v}\n")), Ok(v));
    }
    if let Ok(m) = parse::roce_mode(text) {
        assert_eq!(parse::roce_mode(&format!("{}\n", m.kernel_name())), Ok(m));
    }
});

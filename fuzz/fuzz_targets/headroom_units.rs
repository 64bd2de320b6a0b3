//! Any text through every headroom unit parser (lengths, durations, rates, bytes, delays,
//! frame sizes, media, higher-layer delays, the cell factor alpha): no panic; whatever
//! parses formats back to the same value; whatever parses as a link computes without
//! panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_headroom::cells::Alpha;
use lossless_headroom::dv::{parse_higher_layer, Inputs};
use lossless_headroom::medium::{parse_medium, FIBER};
use lossless_headroom::units::{
    parse_bytes, parse_delay, parse_duration, parse_frame, parse_length, parse_rate, Delay, Length,
    Rate,
};
use lossless_headroom::{calc, Request};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(v) = parse_length(s) {
        assert_eq!(parse_length(&v.to_string()), Ok(v));
    }
    if let Ok(v) = parse_duration(s) {
        assert_eq!(parse_duration(&v.to_string()), Ok(v));
    }
    if let Ok(v) = parse_rate(s) {
        assert_eq!(parse_rate(&v.to_string()), Ok(v));
    }
    if let Ok(v) = parse_bytes(s) {
        assert_eq!(parse_bytes(&v.to_string()), Ok(v));
    }
    let delay = parse_delay(s).ok();
    if let Some(Delay::Time(t)) = delay {
        assert_eq!(parse_delay(&t.to_string()), Ok(Delay::Time(t)));
    }
    if let Ok(a) = Alpha::parse(s) {
        assert!(a >= Alpha::ONE, "{s:?} gave alpha {a:?}, below 1");
        // Six decimals at most: the text of its value in millionths parses back to it.
        let text = format!("{}.{:06}", a.0 / 1_000_000, a.0 % 1_000_000);
        assert_eq!(Alpha::parse(&text), Ok(a), "{text}");
    }
    let frame = parse_frame(s).ok();
    let hd = parse_higher_layer(s).ok();
    let medium = parse_medium(s).ok();
    // Extreme values through the whole calculation: saturate, never panic.
    let mut i = Inputs::new(
        Rate(800_000_000_000),
        parse_length(s).unwrap_or(Length(u64::MAX)),
        medium.unwrap_or(FIBER),
    );
    i.max_frame = frame;
    i.interface_delay = delay;
    i.higher_layer_delay = hd;
    let mut r = Request::new(i);
    r.buffer = parse_bytes(s).ok();
    let _ = calc(&r);
});

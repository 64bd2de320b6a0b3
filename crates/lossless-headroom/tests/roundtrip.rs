//! Formatting a quantity then parsing it gives the same quantity, for every value.

use lossless_headroom::units::{
    parse_bytes, parse_delay, parse_duration, parse_length, parse_rate, Bytes, Delay, Duration,
    Length, Rate,
};
use proptest::prelude::*;

proptest! {
    #[test]
    fn length(v in any::<u64>()) {
        prop_assert_eq!(parse_length(&Length(v).to_string()), Ok(Length(v)));
    }

    #[test]
    fn duration(v in any::<u64>()) {
        prop_assert_eq!(parse_duration(&Duration(v).to_string()), Ok(Duration(v)));
        prop_assert_eq!(parse_delay(&Duration(v).to_string()), Ok(Delay::Time(Duration(v))));
    }

    #[test]
    fn rate(v in any::<u64>()) {
        prop_assert_eq!(parse_rate(&Rate(v).to_string()), Ok(Rate(v)));
    }

    #[test]
    fn bytes(v in any::<u64>()) {
        prop_assert_eq!(parse_bytes(&Bytes(v).to_string()), Ok(Bytes(v)));
    }

    #[test]
    fn bit_times(v in any::<u64>()) {
        prop_assert_eq!(parse_delay(&format!("{v}bt")), Ok(Delay::Bits(v)));
    }

    /// Arbitrary text never panics, and an error always carries the input.
    #[test]
    fn garbage_is_an_error_not_a_panic(s in "\\PC{0,24}") {
        if let Err(e) = parse_length(&s) {
            prop_assert_eq!(e.input, s.clone());
        }
        let _ = parse_rate(&s);
        let _ = parse_bytes(&s);
        let _ = parse_delay(&s);
        let _ = lossless_headroom::medium::parse_medium(&s);
        let _ = lossless_headroom::dv::parse_higher_layer(&s);
    }
}

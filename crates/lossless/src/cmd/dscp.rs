//! DSCP names: the class selectors (RFC 2474), assured forwarding (RFC 2597),
//! expedited forwarding (RFC 3246), VOICE-ADMIT (RFC 5865) and lower effort
//! (RFC 8622), read and shown beside the numbers.

/// Every named codepoint.
const NAMES: [(&str, u8); 23] = [
    ("CS0", 0),
    ("LE", 1),
    ("CS1", 8),
    ("AF11", 10),
    ("AF12", 12),
    ("AF13", 14),
    ("CS2", 16),
    ("AF21", 18),
    ("AF22", 20),
    ("AF23", 22),
    ("CS3", 24),
    ("AF31", 26),
    ("AF32", 28),
    ("AF33", 30),
    ("CS4", 32),
    ("AF41", 34),
    ("AF42", 36),
    ("AF43", 38),
    ("CS5", 40),
    ("VOICE-ADMIT", 44),
    ("EF", 46),
    ("CS6", 48),
    ("CS7", 56),
];

/// The name of a DSCP, if it has one.
pub fn name(dscp: u64) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(_, v)| u64::from(*v) == dscp)
        .map(|(n, _)| *n)
}

/// A DSCP by name (any case) or number; None for neither. The number is not
/// range-checked here: what is out of range is refused with the reason where it
/// is used.
pub fn parse(text: &str) -> Option<u64> {
    let t = text.trim();
    if let Some((_, v)) = NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(t)) {
        return Some(u64::from(*v));
    }
    parse_number(t)
}

/// A decimal or `0x` hexadecimal number.
pub fn parse_number(text: &str) -> Option<u64> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// `26 (AF31)`, or the bare number.
pub fn show(dscp: u64) -> String {
    match name(dscp) {
        Some(n) => format!("{dscp} ({n})"),
        None => dscp.to_string(),
    }
}

/// Every name, for help and errors.
pub fn names() -> String {
    NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(parse("af31"), Some(26));
        assert_eq!(parse("EF"), Some(46));
        assert_eq!(parse("cs6"), Some(48));
        assert_eq!(parse("0x1a"), Some(26));
        assert_eq!(parse("26"), Some(26));
        assert_eq!(parse("af99"), None);
        assert_eq!(show(26), "26 (AF31)");
        assert_eq!(show(27), "27");
        // Every class selector is its class times 8; AFxy is 8x + 2y.
        for (n, v) in NAMES {
            if let Some(c) = n.strip_prefix("CS") {
                assert_eq!(u64::from(v), c.parse::<u64>().unwrap_or(99) * 8, "{n}");
            }
            if let Some(xy) = n.strip_prefix("AF") {
                let d: Vec<u8> = xy.bytes().map(|b| b - b'0').collect();
                assert_eq!(v, 8 * d[0] + 2 * d[1], "{n}");
            }
        }
    }
}

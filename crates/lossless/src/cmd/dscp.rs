//! DSCPs read by name or number and shown with their names (the names are
//! `lossless_wire::app_name`'s, the one table every command uses).

use lossless_wire::app_name::{dscp_by_name, DSCP_NAMES as NAMES};

/// The name of a DSCP, if it has one.
pub fn name(dscp: u64) -> Option<&'static str> {
    u16::try_from(dscp)
        .ok()
        .and_then(lossless_wire::app_name::dscp_name)
}

/// A DSCP by name (any case) or number; None for neither. The number is not
/// range-checked here: what is out of range is refused with the reason where it
/// is used.
pub fn parse(text: &str) -> Option<u64> {
    let t = text.trim();
    if let Some(v) = dscp_by_name(t) {
        return Some(u64::from(v));
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

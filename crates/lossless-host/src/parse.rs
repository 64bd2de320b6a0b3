//! What the kernel's show functions print, back to values: pure functions over the
//! text of one attribute file (a fuzz target runs them: fuzz/fuzz_targets/host_attributes.rs).

use lossless_node::config::RoceMode;

/// An attribute file's text that is not what its show function prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttributeError {
    #[error("{text:?} is not a number 0..=255")]
    NotANumber { text: String },
    #[error("{value} is not 0 or 1")]
    NotZeroOrOne { value: u8 },
    #[error("{text:?} is not a traffic class (\"Global tclass=N\")")]
    NotATrafficClass { text: String },
    #[error("{text:?} is not a RoCE mode")]
    NotARoceMode { text: String },
}

/// A number 0..=255 as `%u\n` or `%d\n` prints it (`default_roce_tos`, `cnp_dscp`).
pub fn u8_value(text: &str) -> Result<u8, AttributeError> {
    let t = text.trim();
    t.parse::<u8>().map_err(|_| AttributeError::NotANumber {
        text: t.to_string(),
    })
}

/// An ECN enable file: `0` or `1`.
pub fn enable(text: &str) -> Result<bool, AttributeError> {
    match u8_value(text)? {
        0 => Ok(false),
        1 => Ok(true),
        value => Err(AttributeError::NotZeroOrOne { value }),
    }
}

/// mlx5_ib's `tc/N/traffic_class` (NVIDIA's driver package): empty while unset (the
/// applications' own traffic class, 0 unless they set one), `Global tclass=N` once
/// set.
pub fn traffic_class(text: &str) -> Result<u8, AttributeError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(0);
    }
    let v = t.strip_prefix("Global tclass=").unwrap_or(t);
    v.parse::<u8>()
        .map_err(|_| AttributeError::NotATrafficClass {
            text: t.to_string(),
        })
}

/// configfs's `default_roce_mode`: `IB/RoCE v1` or `RoCE v2`.
pub fn roce_mode(text: &str) -> Result<RoceMode, AttributeError> {
    RoceMode::from_kernel(text).ok_or_else(|| AttributeError::NotARoceMode {
        text: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_kernel_prints_reads_back() {
        assert_eq!(u8_value("106\n"), Ok(106));
        assert!(u8_value("256\n").is_err());
        assert!(u8_value("").is_err());
        assert_eq!(enable("1\n"), Ok(true));
        assert!(enable("2\n").is_err());
        assert_eq!(traffic_class(""), Ok(0));
        assert_eq!(traffic_class("Global tclass=106\n"), Ok(106));
        assert!(traffic_class("Global tclass=300\n").is_err());
        assert_eq!(roce_mode("RoCE v2\n"), Ok(RoceMode::V2));
        assert_eq!(roce_mode("IB/RoCE v1"), Ok(RoceMode::V1));
        assert!(roce_mode("RoCE v3\n").is_err());
    }
}

//! The relay's configuration errors: a value the relay cannot use, with its key below
//! `[relay]`. Apart from `config` so that the parts that read their own settings
//! (`delay`'s measurement) refuse them with the same type without reaching back into
//! `config`.

use std::net::IpAddr;

use lossless_wire::tunnel::srh::MAX_SEGMENTS;
use lossless_wire::MacAddr;

/// A configuration value the relay cannot use, with the key and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{key} = {value}: must be a unicast MAC address")]
    NotUnicast { key: &'static str, value: MacAddr },
    #[error("{key} = {value}: out of range, allowed {allowed}")]
    OutOfRange {
        key: &'static str,
        value: u64,
        allowed: &'static str,
    },
    #[error("tunnel.segments: {count} segments, allowed 1..={MAX_SEGMENTS}")]
    Segments { count: usize },
    #[error("tunnel.reduced: a reduced SRv6 encapsulation carries one segment, not {count}")]
    ReducedWithSegments { count: usize },
    #[error("tunnel.labels: the stack is empty")]
    NoLabels,
    #[error("tunnel: source {local} and destination {remote} are not of one address family")]
    MixedFamilies { local: IpAddr, remote: IpAddr },
    #[error("{key} = {value:?}: {reason}")]
    Unit {
        key: &'static str,
        value: String,
        reason: String,
    },
}

impl ConfigError {
    /// The key path (below `[relay]`) of the refused value.
    pub fn key(&self) -> &'static str {
        match self {
            ConfigError::NotUnicast { key, .. }
            | ConfigError::OutOfRange { key, .. }
            | ConfigError::Unit { key, .. } => key,
            ConfigError::Segments { .. } => "tunnel.segments",
            ConfigError::ReducedWithSegments { .. } => "tunnel.reduced",
            ConfigError::NoLabels => "tunnel.labels",
            ConfigError::MixedFamilies { .. } => "tunnel.destination",
        }
    }
}

//! Sans-IO LLDP agent and CEE DCBX machines (seed 000, 802.1AB-2016).
//!
//! [`Agent`] is one port: feed it link changes, received frames, timeouts and
//! configuration with the current time; drain the frames to send, the events
//! for the manager and the next deadline. The same agent runs in the daemon,
//! in the lab on a virtual clock and in tests that assert when things happen.

pub mod agent;
pub mod config;
pub mod control;
pub mod event;
pub mod feature;
pub mod lldp;
pub mod stats;
pub mod status;
pub mod time;

pub use agent::Agent;
pub use config::{AdminStatus, ConfigError, DcbxConfig, FeatureAdmin, LldpTimers, PortConfig};
pub use event::{Event, FeatureId, NeighborLoss};
pub use feature::Reason;
pub use status::{FeatureStatus, PortStatus};
pub use time::{Duration, Instant};

/// Formats a Chassis ID or Port ID for people: MAC subtypes as a MAC,
/// printable ids as text, anything else as hex.
pub(crate) fn display_id(
    subtype: u8,
    id: &[u8],
    f: &mut std::fmt::Formatter<'_>,
) -> std::fmt::Result {
    use lossless_wire::lldp::{chassis_subtype, port_subtype};
    let is_mac = (subtype == chassis_subtype::MAC_ADDRESS || subtype == port_subtype::MAC_ADDRESS)
        && id.len() == 6;
    if is_mac {
        let mut m = [0u8; 6];
        m.copy_from_slice(id);
        return write!(f, "{}", lossless_wire::MacAddr(m));
    }
    if !id.is_empty() && id.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        return f.write_str(&String::from_utf8_lossy(id));
    }
    for b in id {
        write!(f, "{b:02x}")?;
    }
    Ok(())
}

//! Sans-IO LLDP agent (IEEE 802.1AB-2016) and DCBX machines: IEEE 802.1Qaz and the
//! pre-standard CEE DCBX, with the choice between them made per port.
//!
//! [`Agent`] is one port: feed it link changes, received frames, timeouts and
//! configuration with the current time; drain the frames to send, the events
//! for the manager and the next deadline. The same agent runs in the daemon,
//! in the lab on a virtual clock and in tests that assert when things happen.

pub mod agent;
pub mod cee;
pub mod config;
pub mod event;
pub mod ieee;
pub mod lldp;
pub mod mode;
pub mod reason;
pub mod stats;
pub mod status;
pub mod time;

pub use agent::Agent;
pub use config::{
    AdminStatus, ConfigError, DcbxConfig, FeatureAdmin, LldpTimers, MgmtAddress, PortConfig,
};
pub use event::{Discarded, Event, EventKind, FeatureId, NeighborLoss};
pub use mode::{DcbxMode, ModeReason, Version};
pub use reason::Reason;
pub use status::{FeatureStatus, HeadroomCapability, IeeeFeatureStatus, PortStatus};
pub use time::{Duration, Instant};

/// A Chassis ID or Port ID (subtype, id) for people: MAC subtypes as a MAC,
/// printable ids as text, anything else as hex.
pub(crate) struct IdText<'a>(pub u8, pub &'a [u8]);

impl std::fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use lossless_wire::lldp::{chassis_subtype, port_subtype};
        let IdText(subtype, id) = *self;
        if let Ok(mac) = <[u8; 6]>::try_from(id) {
            if subtype == chassis_subtype::MAC_ADDRESS || subtype == port_subtype::MAC_ADDRESS {
                return write!(f, "{}", lossless_wire::MacAddr(mac));
            }
        }
        if !id.is_empty() && id.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
            return f.write_str(&String::from_utf8_lossy(id));
        }
        id.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

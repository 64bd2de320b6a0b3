//! What an agent tells its manager (CEE DCBX specification §2.4.4) plus the
//! LLDP neighbour changes the manager needs to explain them. Drained with `Agent::poll_event`.

use serde::Serialize;

use crate::mode::{ModeReason, Version};
use crate::reason::Reason;

/// The DCB features: CEE negotiates PG, PFC and APP; IEEE 802.1Qaz ETS, PFC and APP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureId {
    Pg,
    Pfc,
    App,
    Ets,
}

impl FeatureId {
    pub const ALL: [FeatureId; 4] = [
        FeatureId::Pg,
        FeatureId::Pfc,
        FeatureId::App,
        FeatureId::Ets,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FeatureId::Pg => "pg",
            FeatureId::Pfc => "pfc",
            FeatureId::App => "app",
            FeatureId::Ets => "ets",
        }
    }
}

impl std::fmt::Display for FeatureId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a neighbour's information went away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NeighborLoss {
    /// rxInfoTTL ran out ("the peer stops responding").
    TtlExpired,
    /// The neighbour sent a shutdown LLDPDU (TTL 0).
    Shutdown,
    /// Our link went down or LLDP receive was disabled.
    LocalDown,
}

/// A notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A new LLDP neighbour (MSAP) appeared on the port.
    NeighborAdded { chassis_id: String, port_id: String },
    /// A neighbour's information was deleted.
    NeighborRemoved {
        chassis_id: String,
        port_id: String,
        why: NeighborLoss,
    },
    /// More MSAPs than the port may hold, or more than one: DCBX treats the
    /// peer's TLVs as absent (CEE DCBX specification §2.3) until this
    /// clears.
    TooManyNeighbors { active: bool },
    /// A neighbour we never negotiated with kept the port without a DCBX peer for
    /// `max_neighbor_hold`: it stays a neighbour but no longer stands between the
    /// port and its peer.
    NeighborHoldExpired { chassis_id: String, port_id: String },
    /// The peer's DCBX TLV appeared (true) or went away (false).
    PeerDcbx { present: bool },
    /// Compatible failed for a feature (CEE DCBX specification §2.4.4, first
    /// bullet).
    Incompatible { feature: FeatureId },
    /// The peer does not send this feature (not supported, or its Advertise is off).
    FeatureNotPresentOnPeer { feature: FeatureId },
    /// The feature's Error flag went from false to true.
    ErrorSet { feature: FeatureId, reason: Reason },
    /// The feature's Error flag went back to false.
    ErrorCleared { feature: FeatureId },
    /// OperMode or OperCfg changed: what the hardware should now run.
    OperChanged { feature: FeatureId, oper_mode: bool },
    /// Syncd became true: the peer acknowledged our current DesiredCfg.
    Syncd { feature: FeatureId },
    /// A received frame was discarded as malformed.
    FrameDiscarded {
        /// The field at fault, in the standard's terms (`lldp.ttl`).
        field: &'static str,
        /// What was wrong with it (`truncated`, `bad_length`, ...).
        kind: &'static str,
        /// The whole error, with the offset, for a person.
        error: String,
    },
    /// The DCBX version the port runs changed (`mode = "auto"`).
    ModeChanged {
        from: Version,
        to: Version,
        reason: ModeReason,
    },
}

//! What an agent tells its manager (CEE DCBX specification §2.4.4) plus the
//! LLDP neighbour changes the manager needs to explain them. Drained with `Agent::poll_event`.

use serde::Serialize;

use crate::mode::{ModeReason, Version};
use crate::reason::Reason;

/// The DCB features: CEE negotiates PG, PFC and APP; IEEE 802.1Qaz ETS, PFC and APP.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NeighborLoss {
    /// rxInfoTTL ran out ("the peer stops responding").
    TtlExpired,
    /// The neighbour sent a shutdown LLDPDU (TTL 0).
    Shutdown,
    /// Our link went down or LLDP receive was disabled.
    LocalDown,
}

/// The kind of a notification: its one name, which the JSON (`"event"`), the log
/// (`event=`) and the metrics (`lossless_dcbx_events_total{kind}`) all use. Declared in
/// the order of the names, so `kind as usize` indexes [`EventKind::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventKind {
    ErrorCleared,
    ErrorSet,
    FeatureNotPresentOnPeer,
    FrameDiscarded,
    Incompatible,
    ModeChanged,
    NeighborAdded,
    NeighborHoldExpired,
    NeighborRemoved,
    OperChanged,
    PeerDcbx,
    Syncd,
    TooManyNeighbors,
}

impl EventKind {
    /// Every kind, by name.
    pub const ALL: [EventKind; 13] = [
        EventKind::ErrorCleared,
        EventKind::ErrorSet,
        EventKind::FeatureNotPresentOnPeer,
        EventKind::FrameDiscarded,
        EventKind::Incompatible,
        EventKind::ModeChanged,
        EventKind::NeighborAdded,
        EventKind::NeighborHoldExpired,
        EventKind::NeighborRemoved,
        EventKind::OperChanged,
        EventKind::PeerDcbx,
        EventKind::Syncd,
        EventKind::TooManyNeighbors,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EventKind::ErrorCleared => "error_cleared",
            EventKind::ErrorSet => "error_set",
            EventKind::FeatureNotPresentOnPeer => "feature_not_present_on_peer",
            EventKind::FrameDiscarded => "frame_discarded",
            EventKind::Incompatible => "incompatible",
            EventKind::ModeChanged => "mode_changed",
            EventKind::NeighborAdded => "neighbor_added",
            EventKind::NeighborHoldExpired => "neighbor_hold_expired",
            EventKind::NeighborRemoved => "neighbor_removed",
            EventKind::OperChanged => "oper_changed",
            EventKind::PeerDcbx => "peer_dcbx",
            EventKind::Syncd => "syncd",
            EventKind::TooManyNeighbors => "too_many_neighbors",
        }
    }
}

impl Event {
    pub fn kind(&self) -> EventKind {
        match self {
            Event::NeighborAdded { .. } => EventKind::NeighborAdded,
            Event::NeighborRemoved { .. } => EventKind::NeighborRemoved,
            Event::TooManyNeighbors { .. } => EventKind::TooManyNeighbors,
            Event::NeighborHoldExpired { .. } => EventKind::NeighborHoldExpired,
            Event::PeerDcbx { .. } => EventKind::PeerDcbx,
            Event::Incompatible { .. } => EventKind::Incompatible,
            Event::FeatureNotPresentOnPeer { .. } => EventKind::FeatureNotPresentOnPeer,
            Event::ErrorSet { .. } => EventKind::ErrorSet,
            Event::ErrorCleared { .. } => EventKind::ErrorCleared,
            Event::OperChanged { .. } => EventKind::OperChanged,
            Event::Syncd { .. } => EventKind::Syncd,
            Event::FrameDiscarded { .. } => EventKind::FrameDiscarded,
            Event::ModeChanged { .. } => EventKind::ModeChanged,
        }
    }
}

/// A notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
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
    /// A received frame was discarded as malformed (boxed: an event stays small, and
    /// every port keeps a queue of them).
    FrameDiscarded(Box<Discarded>),
    /// The DCBX version the port runs changed (`mode = "auto"`).
    ModeChanged {
        from: Version,
        to: Version,
        reason: ModeReason,
    },
}

/// What [`Event::FrameDiscarded`] says of the frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Discarded {
    /// The field at fault, in the standard's terms (`lldp.ttl`).
    pub field: std::borrow::Cow<'static, str>,
    /// What was wrong with it (`truncated`, `bad_length`, ...).
    pub kind: std::borrow::Cow<'static, str>,
    /// The whole error, with the offset, for a person.
    pub error: String,
}

#[cfg(test)]
mod kind_tests {
    use super::*;
    use crate::mode::{ModeReason, Version};
    use crate::reason::Reason;

    /// The JSON's `"event"` is the kind's name, for one event of every kind.
    #[test]
    fn each_kind_is_named_once_for_json_logs_and_metrics() {
        let f = FeatureId::Pfc;
        let events = [
            Event::NeighborAdded {
                chassis_id: "c".into(),
                port_id: "p".into(),
            },
            Event::NeighborRemoved {
                chassis_id: "c".into(),
                port_id: "p".into(),
                why: NeighborLoss::Shutdown,
            },
            Event::TooManyNeighbors { active: true },
            Event::NeighborHoldExpired {
                chassis_id: "c".into(),
                port_id: "p".into(),
            },
            Event::PeerDcbx { present: true },
            Event::Incompatible { feature: f },
            Event::FeatureNotPresentOnPeer { feature: f },
            Event::ErrorSet {
                feature: f,
                reason: Reason::Incompatible,
            },
            Event::ErrorCleared { feature: f },
            Event::OperChanged {
                feature: f,
                oper_mode: true,
            },
            Event::Syncd { feature: f },
            Event::FrameDiscarded(Box::new(Discarded {
                field: "lldp.ttl".into(),
                kind: "truncated".into(),
                error: "e".into(),
            })),
            Event::ModeChanged {
                from: Version::Ieee,
                to: Version::Cee,
                reason: ModeReason::Configured,
            },
        ];
        let mut kinds: Vec<EventKind> = events.iter().map(Event::kind).collect();
        kinds.sort();
        assert_eq!(kinds, EventKind::ALL, "one event of each kind");
        for e in &events {
            let v = serde_json::to_value(e).expect("serializes");
            assert_eq!(v["event"], e.kind().name(), "{e:?}");
        }
    }
}

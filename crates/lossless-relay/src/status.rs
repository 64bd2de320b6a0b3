//! Counters and status: what `lossless relay show [--json]` prints and what
//! the metrics export. Everything serializes; everything but the rendered
//! error text deserializes back, so a CLI can read the daemon's JSON.

use serde::{Deserialize, Serialize};

use crate::buffer::GatewayBuffer;
use crate::storm::PriorityStatus;
use crate::DropCounts;

/// Frames from the DC gateway (egress PE role).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressCounters {
    /// Frames handed to the relay on the DC port.
    pub received: u64,
    /// Tunnel frames sent toward the far PE for them (each legal frame is
    /// relayed, suppressed or dropped, so received = relayed + suppressed +
    /// dropped).
    pub relayed: u64,
    /// Of `relayed`: frames sent with some priorities cleared by the storm
    /// ceiling.
    pub masked: u64,
    /// Legal frames not sent at all: every priority they carry was held back.
    pub suppressed: u64,
    /// Frames the storm ceiling built later from held-back values (not
    /// counted in `relayed`).
    pub flushed: u64,
    /// Illegal frames, by reason.
    pub dropped: DropCounts,
    /// WAN delay measurement frames put in the tunnel (not counted above).
    #[serde(default)]
    pub measurement: u64,
}

/// Frames from the WAN (ingress PE role).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IngressCounters {
    /// Frames handed to the relay on the WAN port.
    pub received: u64,
    /// PFC frames delivered to the DC gateway.
    pub delivered: u64,
    /// Refused frames, by reason (tunnel reasons and the inner frame's).
    pub dropped: DropCounts,
    /// WAN delay measurement frames from the far PE (received = delivered +
    /// dropped + measurement).
    #[serde(default)]
    pub measurement: u64,
}

/// The storm ceiling's settings and per-priority state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StormStatus {
    pub max_per_second: u32,
    pub burst: u32,
    pub episode_gap_ns: u64,
    /// The far gateway's link speed pauses are timed by.
    #[serde(default)]
    pub link_speed_bps: u64,
    /// The margin before a relayed pause lapses at which it is refreshed.
    #[serde(default)]
    pub refresh_before_ns: u64,
    /// Priority instances held back, all priorities.
    pub suppressed: u64,
    pub priorities: Vec<PriorityStatus>,
}

/// A PE relay's whole status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RelayStatus {
    /// `srv6`, `vxlan` or `sr-mpls`.
    pub tunnel: String,
    /// The far end as configured: SIDs, VTEP address or label stack.
    pub remote: String,
    /// What we accept from the WAN: our SID, VTEP and VNI, or label.
    pub local: String,
    pub egress: EgressCounters,
    pub ingress: IngressCounters,
    /// `None` when no ceiling is configured.
    pub storm: Option<StormStatus>,
    /// The last tunnel frame from the WAN that did not decode, as text.
    pub last_malformed: Option<String>,
    /// draft-he-rtgwg-wan-pfc-00's buffer condition, when configured.
    pub gateway_buffer: Option<GatewayBuffer>,
    /// The WAN delay measured to the far PE, when `[relay.measure]` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wan_delay: Option<crate::delay::WanDelayStatus>,
}

/// A DC gateway's check of forwarded PFC.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayCounters {
    pub received: u64,
    pub accepted: u64,
    pub dropped: DropCounts,
}

impl GatewayCounters {
    /// Adds what `other` counted (an XDP program's counts to the socket
    /// path's, a reloaded program's to its predecessors').
    pub fn add(&mut self, other: &GatewayCounters) {
        self.received += other.received;
        self.accepted += other.accepted;
        self.dropped.add_all(&other.dropped);
    }
}

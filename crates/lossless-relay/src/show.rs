//! What `lossless relay show [--json]` gets from the daemon: the relay core's
//! status plus the data path's own counters per interface, as
//! [`crate::host::Host::show`] builds it. Serializes both ways, so the CLI
//! reads the daemon's JSON into these types.

use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

use crate::buffer::GatewayBuffer;
use crate::{Datapath, GatewayCounters, RelayStatus};

/// The whole answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayShow {
    /// `pe` or `gateway`.
    pub role: String,
    /// Seconds since this relay (re)started: counters count from then.
    pub uptime_s: f64,
    pub datapath: Datapath,
    /// The interfaces: `dc` and `wan` for a PE, `pe` for a gateway.
    pub ports: Vec<PortIo>,
    /// A PE's core status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe: Option<RelayStatus>,
    /// A gateway's check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway: Option<GatewayShow>,
    /// Which data path runs and why (a PE, or a gateway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xdp: Option<XdpShow>,
}

/// The XDP fast path: whether it runs, how, or why not; what a PE's program
/// decided itself (already counted in `pe`'s counters; a gateway's counts are
/// in `gateway`'s, and the fields below stay 0).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct XdpShow {
    pub running: bool,
    /// `native` or `generic` when running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Why it is not running (or what it leaves to the AF_PACKET path).
    pub why: String,
    pub egress_relayed: u64,
    pub egress_dropped: u64,
    /// Legal PFC frames handed to the core (the storm ceiling is on).
    pub egress_passed: u64,
    pub ingress_delivered: u64,
    pub ingress_dropped: u64,
    /// WAN frames handed to the core (not exactly our tunnel for us, or a
    /// WAN delay measurement frame).
    pub ingress_passed: u64,
    pub redirect_failed: u64,
}

/// One interface of the data path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortIo {
    /// `dc`, `wan` or `pe`.
    pub side: String,
    pub interface: String,
    /// Whether the socket is open (the interface exists and is usable).
    pub open: bool,
    /// Why it is not open, or the last receive/send error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Frames read from the socket.
    pub received: u64,
    /// Frames the kernel took for sending.
    pub sent: u64,
    /// Frames not sent: the kernel refused them, or the interface was not
    /// open.
    pub send_errors: u64,
    /// Frames the kernel dropped because our receive buffer was full
    /// (`PACKET_STATISTICS`): a legal frame lost before the relay saw it.
    pub socket_drops: u64,
    /// `recvmmsg` calls that returned frames, and the most frames one returned.
    pub batches: u64,
    pub largest_batch: u64,
}

/// A DC gateway's check of the PFC its PE forwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayShow {
    pub pe_port_mac: MacAddr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe_system_mac: Option<MacAddr>,
    pub counters: GatewayCounters,
    /// The last accepted frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_accepted: Option<AcceptedPfc>,
    /// draft-he-rtgwg-wan-pfc-00's buffer condition, when configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<GatewayBuffer>,
}

/// What a forwarded PFC frame asked for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AcceptedPfc {
    pub src: MacAddr,
    /// Bit n: priority n.
    pub class_enable: u8,
    pub quanta: [u16; 8],
    /// Seconds after the relay started.
    pub at_s: f64,
}

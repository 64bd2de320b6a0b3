//! Pieces of the port views (`dcbx show`, `counters`): where settings come from, the
//! local IEEE settings, the CEE Control machine as shown, the socket's counters.

use std::collections::BTreeMap;

use lossless_dcbx::lldp::rx::NeighborSummary;
use lossless_dcbx::stats::{DcbxStats, LldpStats};
use serde::{Deserialize, Serialize};

/// The answer of a request about ports (`neighbors`, `dcbx show`, `pfc show`,
/// `headroom show`, ...): one view per port, the one asked for or every one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ports<T> {
    pub ports: Vec<T>,
}

/// The answer of a change (`dcbx set`, `dcbx reset`, `roce set`, `roce reset`): the
/// port's view after it, and `warning` when the change runs but its persistence is
/// not durable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Changed<T> {
    #[serde(flatten)]
    pub view: T,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// `neighbors`: one port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortNeighbors {
    pub port: String,
    pub neighbors: Vec<NeighborSummary>,
    /// MSAPs whose LLDPDUs were discarded (the remote MIB was full) and have not
    /// aged out: they count as neighbours for the multiple-neighbour rule.
    pub discarded_msaps: usize,
}

/// `counters`: every port asked for, and the packet sockets they share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountersResult {
    pub ports: Vec<PortCounters>,
    /// Absent from a daemon before the shared sockets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_socket: Option<SharedSocketCounters>,
}

/// `counters`: one port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortCounters {
    pub port: String,
    pub lldp: LldpStats,
    pub dcbx: DcbxStats,
    pub io: IoCounters,
    /// Failed dcbnl operations by kind (`not_supported`, `refused`, ...).
    pub hardware_errors: BTreeMap<String, u64>,
}

/// `dcbx show`'s `control`: the CEE DCBX Control machine's sequence numbers and
/// versions, as a view (the machine's own state, such as where a restarted daemon
/// starts SeqNo, stays in the agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ControlView {
    /// SeqNo: changes each time an exchanged feature parameter changes.
    pub seq: u32,
    /// AckNo: the SeqNo of the most recent peer DCBX TLV handled.
    pub ack: u32,
    /// RcvdAckNo: the AckNo of the most recent peer DCBX TLV handled.
    pub rcvd_ack: u32,
    /// Oper_Version: the highest version both ends support.
    pub oper_version: u8,
    /// Max_Version.
    pub max_version: u8,
}

/// Where every setting `dcbx set` changes comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sources {
    pub pg: Source,
    pub pfc: Source,
    pub app: Source,
    pub ets: Source,
    pub mode: Source,
}

/// Local IEEE 802.1Qaz settings that the feature status leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct IeeeAdmin {
    /// PFC: MACsec bypass capability.
    pub pfc_mbc: bool,
    /// PFC capability: traffic classes that may have PFC at once (`pfc.num_tcs`).
    pub pfc_cap: u8,
    /// ETS: traffic classes the station supports.
    pub ets_max_tcs: u8,
    /// ETS: credit-based shaper support.
    pub ets_cbs: bool,
    /// ETS Recommendation as configured: true, false, or null (when not willing).
    pub ets_recommend: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FeatureSources {
    pub pg: Source,
    pub pfc: Source,
    pub app: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    #[default]
    Config,
    Runtime,
}

/// What the daemon saw at the socket, below the agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounters {
    pub rx_frames: u64,
    pub rx_errors: u64,
    pub tx_frames: u64,
    pub tx_errors: u64,
    /// MAC control frames (PAUSE/PFC, 0x8808) seen on the port.
    pub mac_control_rx: u64,
    /// Frames the kernel dropped before the daemon read them, the packet socket's
    /// receive buffer full (`PACKET_STATISTICS`, read every 10 s and before each answer
    /// that shows it).
    #[serde(default)]
    pub kernel_drops: u64,
    /// Of `kernel_drops`, those of the port's own LLDP socket: LLDPDUs the kernel
    /// dropped. The port's own sockets are one per EtherType (LLDP, MAC Control), so
    /// a PFC storm fills the MAC Control one's buffer, not this one's.
    #[serde(default)]
    pub kernel_drops_lldp: u64,
    /// The packet socket's receive buffer as the kernel granted it, bytes; null until
    /// the socket is open.
    #[serde(default)]
    pub rcvbuf_bytes: Option<u64>,
    /// Frames dropped unread, the port's receive budget spent (`rx_budget_per_s`,
    /// `rx_budget_burst`): from anyone, the DCBX peer included.
    #[serde(default)]
    pub rx_over_budget: u64,
    /// Of `rx_over_budget`, those from the DCBX peer (its MSAP, or its MAC): its own
    /// allowance spent (a flood that copies the peer's identity, or a PFC storm).
    #[serde(default)]
    pub rx_peer_over_budget: u64,
    /// Whether the port reads a packet socket of its own (since its receive budget was
    /// first spent) rather than the shared ones (its own are two: LLDP, MAC Control);
    /// `kernel_drops` counts only what its own sockets dropped, the shared sockets'
    /// drops are in [`SharedSocketCounters`].
    #[serde(default)]
    pub own_socket: bool,
    /// Times the port's own socket could not be opened (it stayed on the shared
    /// ones; asked again 10 s later, if its budget is still spent).
    #[serde(default)]
    pub own_socket_failures: u64,
    /// LLDPDUs received that this host sent (the MSAP of one of its ports): a loop;
    /// discarded.
    #[serde(default)]
    pub rx_own_lldpdus: u64,
    /// Frames read from both the shared sockets and the port's own one as it switched
    /// (the kernel gave both a copy for the few microseconds until the shared sockets
    /// excluded the port), delivered once: the copies skipped. Matched by the
    /// kernel's receive stamps, never by the daemon's clock.
    #[serde(default)]
    pub own_socket_skipped: u64,
}

/// The packet sockets every port reads until it gets its own (one per EtherType:
/// LLDP, MAC Control), as `counters` shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedSocketCounters {
    /// Frames the kernel dropped on the shared sockets, their receive buffers full
    /// (for no port in particular).
    pub kernel_drops: u64,
    /// The receive buffer the kernel granted each shared socket, bytes.
    pub rcvbuf_bytes: Option<u64>,
}

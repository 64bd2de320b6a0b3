//! `pfc show` and the PFC events: per port and priority the frames each way, their
//! rates, the share of time paused, the watchdog's state and the drops, the RDMA
//! device's counters; the watchdog's actions and storm sides, the counters' sources and
//! discontinuities, as the daemon reports them.
//!
//! The node (`lossless-node`'s `pfc` module) counts, watches and builds these; they are
//! here so clients read them as the same types.

use serde::{Deserialize, Serialize};

/// What the watchdog does about a storm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchdogAction {
    /// An event, a metric and a log line; nothing else changes.
    #[default]
    Alert,
    /// As `alert`, and PFC off on the priority (through dcbnl, `apply = "dcbnl"` only)
    /// until the storm is over: the class goes lossy and stops spreading the pauses.
    Forward,
}

impl WatchdogAction {
    pub fn name(self) -> &'static str {
        match self {
            WatchdogAction::Alert => "alert",
            WatchdogAction::Forward => "forward",
        }
    }
}

/// Which side storms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The peer keeps pausing us (PFC frames received).
    Rx,
    /// We keep pausing the peer (PFC frames sent): our NIC or host cannot drain.
    Tx,
    /// The driver's own storm counter rose.
    Driver,
}

/// Why a counter's delta is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Discontinuity {
    /// Went backwards (a driver or device reset): counted again from `after`.
    Reset { before: u64, after: u64 },
    /// Went past the top of its 32- or 64-bit range: `delta` frames were added.
    Wrap { before: u64, after: u64, delta: u64 },
    /// Was reported, now is not (a driver reload); `before` was its last value.
    Vanished { before: u64 },
}

impl Discontinuity {
    pub fn kind(&self) -> &'static str {
        match self {
            Discontinuity::Reset { .. } => "reset",
            Discontinuity::Wrap { .. } => "wrap",
            Discontinuity::Vanished { .. } => "vanished",
        }
    }
}

/// Where a reading's counters came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PfcSource {
    /// dcbnl's IEEE PFC object only.
    #[default]
    #[serde(rename = "dcbnl")]
    Dcbnl,
    /// The driver's ethtool statistics only.
    #[serde(rename = "ethtool")]
    Ethtool,
    /// dcbnl's, and the driver's ethtool statistics for what dcbnl does not report.
    #[serde(rename = "dcbnl+ethtool")]
    DcbnlEthtool,
    /// No counter from the driver: the PFC frames the host received, counted from the
    /// packet socket (the host's own count); received pauses only.
    #[serde(rename = "host")]
    Host,
}

impl PfcSource {
    /// As `pfc show` and the events name it.
    pub fn name(self) -> &'static str {
        match self {
            PfcSource::Dcbnl => "dcbnl",
            PfcSource::Ethtool => "ethtool",
            PfcSource::DcbnlEthtool => "dcbnl+ethtool",
            PfcSource::Host => "host",
        }
    }
}

/// A watchdog transition as it is published, with the action taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum PfcEvent {
    /// A priority storms.
    PfcStorm {
        priority: u8,
        direction: Direction,
        /// How long every reading showed new pauses, ms (0 for `driver`).
        window_ms: f64,
        readings: u32,
        /// Pause frames over the window.
        frames: u64,
        detection_ms: u32,
        action: WatchdogAction,
        /// PFC was turned off on the priority (`forward` on a port that programs it).
        pfc_off: bool,
        /// Why `forward` did not turn PFC off, when it did not.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A storm is over.
    PfcStormOver {
        priority: u8,
        direction: Direction,
        stormed_ms: f64,
        /// How long no pause was seen either way, ms.
        quiet_ms: f64,
        /// Pause frames received and sent during the storm.
        rx_frames: u64,
        tx_frames: u64,
        /// `quiet`, `unwatched`.
        reason: std::borrow::Cow<'static, str>,
        /// PFC was put back on the priority.
        pfc_restored: bool,
    },
    /// A counter did not continue from its last value: no evidence either way.
    PfcCounterDiscontinuity {
        counter: std::borrow::Cow<'static, str>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        priority: Option<u8>,
        #[serde(flatten)]
        what: Discontinuity,
    },
    /// The counters became unavailable (`reason`) or available again (`source`).
    PfcCounters {
        available: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<PfcSource>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// One port of `pfc show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortPfcView {
    pub port: String,
    /// Whether the driver reports PFC counters (false: see `reason`).
    pub available: bool,
    /// Where they come from: `dcbnl`, `ethtool`, `dcbnl+ethtool`, or `host` (the
    /// driver has none: the PFC frames the host received, counted from the packet socket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Why they are not available (the driver's answer), or null; with `source`
    /// `host`, why the driver's are not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The PFC and PAUSE frames the host received on the port, counted from the
    /// packet socket whatever the driver reports (absent: none yet). With `source`
    /// `host` they are the watchdog's counters: pauses received only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostCounts>,
    pub interval_ms: u32,
    /// Readings taken, and readings that failed.
    pub samples: u64,
    pub failures: u64,
    pub discontinuities: DiscontinuityCounts,
    /// The driver's storm counter (mlx5 `tx_pause_storm_error_events`), where reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_storm_events: Option<u64>,
    pub watchdog: WatchdogView,
    pub priorities: Vec<PriorityView>,
    /// The RDMA device's congestion and retransmission counters (absent: the port has
    /// no RDMA device, or none was read yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roce: Option<RoceView>,
}

/// The RDMA device's hw counters on a port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoceView {
    /// The RDMA device and its port, from the last reading that had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma_port: Option<u32>,
    /// What could not be read, or why there is no device now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub discontinuities: DiscontinuityCounts,
    pub counters: Vec<RoceCounterView>,
}

/// One hw counter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoceCounterView {
    /// What it counts (`cnp_sent`, `cnp_handled`, `cnp_ignored`, `ecn_marked`,
    /// `out_of_buffer`, or a retransmission's reason).
    pub counter: RoceCounter,
    /// True for the counters of `lossless_roce_retransmissions_total`.
    pub retransmission: bool,
    /// The driver's name for it.
    pub name: String,
    /// Since the port was added (null: never reported).
    pub total: Option<u64>,
    /// Per second over the last interval.
    pub rate: Option<f64>,
    /// Reported by the last reading.
    pub present: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchdogView {
    pub enabled: bool,
    pub action: WatchdogAction,
    pub detection_ms: u32,
    pub restoration_ms: u32,
    /// The priorities watched.
    pub priorities: Vec<u8>,
}

/// One priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorityView {
    pub priority: u8,
    /// PFC runs on it now (negotiated, and not turned off by the watchdog).
    pub pfc: bool,
    /// Frames received (we were paused) and sent (we paused the peer), since the port
    /// was added; null where the driver does not report them.
    pub rx_frames: Option<u64>,
    pub tx_frames: Option<u64>,
    /// Frames per second over the last interval.
    pub rx_rate: Option<f64>,
    pub tx_rate: Option<f64>,
    /// Share of the last interval paused, 0..1, where the driver reports pause time.
    pub rx_paused: Option<f64>,
    pub tx_paused: Option<f64>,
    /// `off` (not watched), `ok`, or `storm`.
    pub state: String,
    /// The storm's side and since how long, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storm_ms: Option<f64>,
    /// PFC turned off by the watchdog (`forward`).
    pub forced_off: bool,
    pub storms: u64,
    pub restorations: u64,
    /// Packets received on the priority and dropped, by kind (`no_buffer`,
    /// `host_buffer`, `host_congestion`), where the driver counts them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discards: Vec<DiscardView>,
}

/// One kind of drop on a priority.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscardView {
    pub kind: String,
    /// Since the port was added.
    pub total: u64,
    /// Per second over the last interval.
    pub rate: Option<f64>,
}

impl PriorityView {
    /// Every kind of drop together (None: the driver counts none).
    pub fn discards_total(&self) -> Option<u64> {
        (!self.discards.is_empty()).then(|| self.discards.iter().map(|d| d.total).sum())
    }

    /// Their rate together, when every kind's is known.
    pub fn discard_rate(&self) -> Option<f64> {
        if self.discards.is_empty() {
            return None;
        }
        self.discards.iter().map(|d| d.rate).sum()
    }
}

/// The counts, as `pfc show` gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCounts {
    /// PFC frames (well formed), whatever priorities they name.
    pub pfc_frames: u64,
    /// PFC frames asking to pause each priority (its bit set, pause time not 0).
    pub xoff: [u64; 8],
    /// PFC frames resuming each priority (its bit set, pause time 0).
    pub xon: [u64; 8],
    /// The pause times asked for each priority, summed, in quanta (512 bit times).
    pub quanta: [u64; 8],
    /// 802.3x PAUSE frames (every priority), asking to pause and to resume.
    pub pause_xoff: u64,
    pub pause_xon: u64,
    /// MAC Control frames too short for their opcode, with another opcode, or with
    /// the class-enable vector's reserved byte set.
    pub malformed: u64,
}

/// Discontinuities seen on a port, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiscontinuityCounts {
    pub resets: u64,
    pub wraps: u64,
    pub vanished: u64,
}

impl DiscontinuityCounts {
    pub fn count(&mut self, d: &Discontinuity) {
        match d {
            Discontinuity::Reset { .. } => self.resets += 1,
            Discontinuity::Wrap { .. } => self.wraps += 1,
            Discontinuity::Vanished { .. } => self.vanished += 1,
        }
    }
}

/// What a RoCE hw counter counts, whichever driver names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoceCounter {
    /// CNPs sent by the notification point for ECN-marked packets received.
    CnpSent,
    /// CNPs received that slowed a QP down (the reaction point); bnxt_re and
    /// hns_roce count the CNPs received.
    CnpHandled,
    /// CNPs received and ignored (no congestion control on the QP).
    CnpIgnored,
    /// RoCE packets received with ECN CE set (the switch marked them).
    EcnMarked,
    /// Packets dropped for lack of a receive WQE (the application's receive queue).
    OutOfBuffer,
    /// The responder received a packet out of sequence (one before it was lost).
    OutOfSequence,
    /// The requester received a sequence error NAK and retransmits.
    SequenceErrorNak,
    /// The requester inferred a lost packet from a later ACK or read response.
    ImpliedNak,
    /// The requester's ACK timer expired and it retransmits.
    AckTimeout,
    /// The responder received a request it had executed (a retransmission).
    DuplicateRequest,
    /// Receiver-not-ready NAKs received: the peer had no receive posted; retried.
    RnrNak,
    /// mlx5's adaptive retransmissions.
    AdaptiveRetransmission,
    /// mlx5's adaptive retransmission timeouts.
    AdaptiveRetransmissionTimeout,
}

/// Each driver's hw counter names (the descriptor tables of
/// `drivers/infiniband/hw/mlx5/counters.c`, `irdma/verbs.c` irdma_hw_stat_descs,
/// `bnxt_re/hw_counters.c` bnxt_re_stat_descs, `hns/hns_roce_main.c`
/// hns_roce_port_stats_descs): (RDMA driver, name, what it counts).
pub const HW_COUNTERS: &[(&str, &str, RoceCounter)] = &[
    // mlx5_ib
    ("mlx5_ib", "np_cnp_sent", RoceCounter::CnpSent),
    ("mlx5_ib", "rp_cnp_handled", RoceCounter::CnpHandled),
    ("mlx5_ib", "rp_cnp_ignored", RoceCounter::CnpIgnored),
    (
        "mlx5_ib",
        "np_ecn_marked_roce_packets",
        RoceCounter::EcnMarked,
    ),
    ("mlx5_ib", "out_of_buffer", RoceCounter::OutOfBuffer),
    ("mlx5_ib", "out_of_sequence", RoceCounter::OutOfSequence),
    ("mlx5_ib", "packet_seq_err", RoceCounter::SequenceErrorNak),
    ("mlx5_ib", "implied_nak_seq_err", RoceCounter::ImpliedNak),
    ("mlx5_ib", "local_ack_timeout_err", RoceCounter::AckTimeout),
    (
        "mlx5_ib",
        "duplicate_request",
        RoceCounter::DuplicateRequest,
    ),
    ("mlx5_ib", "rnr_nak_retry_err", RoceCounter::RnrNak),
    (
        "mlx5_ib",
        "roce_adp_retrans",
        RoceCounter::AdaptiveRetransmission,
    ),
    (
        "mlx5_ib",
        "roce_adp_retrans_to",
        RoceCounter::AdaptiveRetransmissionTimeout,
    ),
    // irdma (E810)
    ("irdma", "cnpSent", RoceCounter::CnpSent),
    ("irdma", "cnpHandled", RoceCounter::CnpHandled),
    ("irdma", "cnpIgnored", RoceCounter::CnpIgnored),
    ("irdma", "RxECNMrkd", RoceCounter::EcnMarked),
    // bnxt_re
    ("bnxt_re", "tx_cnp_pkts", RoceCounter::CnpSent),
    ("bnxt_re", "rx_cnp_pkts", RoceCounter::CnpHandled),
    ("bnxt_re", "rx_ecn_marked_pkts", RoceCounter::EcnMarked),
    ("bnxt_re", "rx_out_of_buffer", RoceCounter::OutOfBuffer),
    ("bnxt_re", "oos_drop_count", RoceCounter::OutOfSequence),
    (
        "bnxt_re",
        "seq_err_naks_rcvd",
        RoceCounter::SequenceErrorNak,
    ),
    ("bnxt_re", "to_retransmits", RoceCounter::AckTimeout),
    ("bnxt_re", "dup_req", RoceCounter::DuplicateRequest),
    ("bnxt_re", "rnr_naks_rcvd", RoceCounter::RnrNak),
    // hns_roce (HIP09)
    ("hns_roce", "tx_cnp_pkt", RoceCounter::CnpSent),
    ("hns_roce", "rx_cnp_pkt", RoceCounter::CnpHandled),
];

impl RoceCounter {
    /// What a driver's hw counter counts; None for the counters not followed.
    pub fn of(driver_name: &str) -> Option<RoceCounter> {
        HW_COUNTERS
            .iter()
            .find(|(_, n, _)| *n == driver_name)
            .map(|(_, _, c)| *c)
    }

    /// As events and `pfc show --json` name it.
    pub fn name(self) -> &'static str {
        match self {
            RoceCounter::CnpSent => "cnp_sent",
            RoceCounter::CnpHandled => "cnp_handled",
            RoceCounter::CnpIgnored => "cnp_ignored",
            RoceCounter::EcnMarked => "ecn_marked",
            RoceCounter::OutOfBuffer => "out_of_buffer",
            RoceCounter::OutOfSequence => "out_of_sequence",
            RoceCounter::SequenceErrorNak => "sequence_error_nak",
            RoceCounter::ImpliedNak => "implied_nak",
            RoceCounter::AckTimeout => "ack_timeout",
            RoceCounter::DuplicateRequest => "duplicate_request",
            RoceCounter::RnrNak => "rnr_nak",
            RoceCounter::AdaptiveRetransmission => "adaptive",
            RoceCounter::AdaptiveRetransmissionTimeout => "adaptive_timeout",
        }
    }
}

//! The control-socket protocol: JSON lines over a Unix stream socket.
//!
//! The client writes one request object on one line; the daemon answers with
//! one response line, `{"ok":true,"result":...}` or
//! `{"ok":false,"error":{"kind":...,"message":...}}`. An `events` request
//! with `follow` keeps the connection open and streams one [`EventRecord`]
//! per line after the response. Field names are a stable interface, documented
//! in docs/daemon.md; additions are allowed, renames and removals are not.

use lossless_dcbx::cee::control::ControlMachine;
use lossless_dcbx::lldp::rx::NeighborSummary;
use lossless_dcbx::stats::{DcbxStats, LldpStats};
use lossless_dcbx::{AdminStatus, Event, FeatureStatus};
use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig};
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

/// Protocol version, in every response.
pub const PROTOCOL_VERSION: u32 = 1;

/// Where the daemon listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/run/lossless/losslessd.sock";

/// A request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    Status,
    Neighbors {
        #[serde(default)]
        port: Option<String>,
    },
    DcbxShow {
        #[serde(default)]
        port: Option<String>,
    },
    DcbxSet {
        port: String,
        change: FeatureChange,
    },
    Counters {
        #[serde(default)]
        port: Option<String>,
    },
    Events {
        /// Keep the connection open and stream events as they happen.
        #[serde(default)]
        follow: bool,
    },
    Reload,
    /// Adaptive headroom per port: the last measurement, its sizing, what is applied.
    HeadroomShow {
        #[serde(default)]
        port: Option<String>,
    },
    /// Seed 002's PFC relay: the core's counters and the data path's.
    RelayShow,
}

/// One feature's administrative change; absent fields stay as they are.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeatureChange {
    pub feature: FeatureName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub willing: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertise: Option<bool>,
    /// PFC: the priorities with PFC on (replaces the set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priorities: Option<Vec<u8>>,
    /// PG: PGID of priorities 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pgid: Option<Vec<u8>>,
    /// PG: bandwidth percentage of PGs 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<Vec<u8>>,
    /// APP: the whole list of rules (replaces it; the CEE table's shape reads too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<crate::config::AppRules>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureName {
    Pg,
    #[default]
    Pfc,
    App,
}

/// A response line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    pub protocol: u32,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request line is not valid JSON or not a known request.
    BadRequest,
    /// No such port is managed by the daemon.
    NoSuchPort,
    /// The requested configuration is invalid; nothing changed.
    InvalidConfig,
    /// The new configuration could not be persisted; nothing changed.
    Persist,
    /// The daemon is shutting down or otherwise cannot serve the request.
    Unavailable,
    /// The configuration has no such section (e.g. no `[relay]`).
    NotConfigured,
}

impl Response {
    pub fn ok(result: serde_json::Value) -> Self {
        Response {
            protocol: PROTOCOL_VERSION,
            ok: true,
            result: Some(result),
            error: None,
        }
    }

    pub fn err(kind: ErrorKind, message: impl Into<String>) -> Self {
        Response {
            protocol: PROTOCOL_VERSION,
            ok: false,
            result: None,
            error: Some(ErrorBody {
                kind,
                message: message.into(),
            }),
        }
    }
}

/// `status`: the daemon and a line per port.
#[derive(Debug, Clone, Serialize)]
pub struct StatusResult {
    pub daemon: DaemonInfo,
    pub ports: Vec<PortSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DaemonInfo {
    pub version: String,
    pub pid: u32,
    pub uptime_s: f64,
    pub config: Option<String>,
    pub state_dir: String,
    pub socket: String,
    pub metrics: Option<String>,
    pub boots: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct PortSummary {
    pub port: String,
    pub ifindex: u32,
    pub mac: MacAddr,
    pub link_up: bool,
    pub admin_status: AdminStatus,
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    pub peer_present: bool,
    pub all_syncd: bool,
    pub neighbors: usize,
    /// The last negotiation, link-up or change to every feature Syncd, in
    /// milliseconds as the daemon measured it; null before the first.
    pub last_convergence_ms: Option<f64>,
    /// What happens to the operational configuration: see [`Hardware`].
    pub hardware: Hardware,
}

/// Whether the negotiated configuration reaches the NIC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Hardware {
    /// `apply = "none"`: negotiate and report only; no dcbnl request is ever sent.
    ReportOnly,
    /// `apply = "dcbnl"`, the NIC's answer to the dcbnl probe not in yet:
    /// nothing is programmed until it is.
    Probing,
    /// `apply = "dcbnl"` and the NIC answers dcbnl: operational PFC/PG are programmed.
    Dcbnl {
        /// The last programming attempt failed: why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Successful programming rounds.
        applied: u64,
    },
    /// `apply = "dcbnl"` but the NIC has no dcbnl (veth, most virtual NICs):
    /// DCBX still runs; the result is reported, not programmed.
    Unsupported { reason: String },
}

impl Hardware {
    /// A port's state before (or without) the dcbnl probe.
    pub fn before_probe(apply: crate::config::Apply) -> Hardware {
        match apply {
            crate::config::Apply::None => Hardware::ReportOnly,
            crate::config::Apply::Dcbnl => Hardware::Probing,
        }
    }
}

/// `neighbors`.
#[derive(Debug, Clone, Serialize)]
pub struct PortNeighbors {
    pub port: String,
    pub neighbors: Vec<NeighborSummary>,
}

/// `dcbx show`: one port.
#[derive(Debug, Clone, Serialize)]
pub struct PortDcbx {
    pub port: String,
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    /// Which DCBX version runs and why.
    pub mode: lossless_dcbx::status::ModeStatus,
    pub peer_present: bool,
    /// Every feature of the running version agrees with the peer, a peer present.
    pub all_syncd: bool,
    /// Some feature of the running version is in error.
    pub any_error: bool,
    pub control: ControlMachine,
    pub pg: FeatureStatus<PgConfig>,
    pub pfc: FeatureStatus<PfcConfig>,
    pub app: FeatureStatus<AppConfig>,
    /// The IEEE 802.1Qaz features (ETS, PFC, APP) and the peer's TLVs.
    pub ieee: lossless_dcbx::status::IeeeStatus,
    /// Where each feature's admin settings come from: "config" or "runtime"
    /// (a `dcbx set` persisted in the state directory).
    pub source: FeatureSources,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureSources {
    pub pg: Source,
    pub pfc: Source,
    pub app: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Config,
    Runtime,
}

/// `counters`: one port.
#[derive(Debug, Clone, Serialize)]
pub struct PortCounters {
    pub port: String,
    pub lldp: LldpStats,
    pub dcbx: DcbxStats,
    pub io: IoCounters,
    /// Failed dcbnl operations by kind (`not_supported`, `refused`, ...).
    pub hardware_errors: std::collections::BTreeMap<&'static str, u64>,
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
}

/// `reload`: what changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReloadResult {
    pub config: Option<String>,
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: usize,
    /// What became of the relay's data path: none, unchanged, started, restarted,
    /// stopped or failed.
    pub relay: &'static str,
}

/// One streamed event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRecord {
    /// Seconds since the Unix epoch.
    pub time: f64,
    pub port: String,
    #[serde(flatten)]
    pub event: EventBody,
}

/// The agent's notifications plus the daemon's own.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EventBody {
    Agent(Event),
    Daemon(DaemonEvent),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum DaemonEvent {
    PortAdded {
        ifindex: u32,
    },
    PortRemoved {
        ifindex: u32,
    },
    LinkChanged {
        up: bool,
    },
    ConfigChanged {
        source: Source,
    },
    /// Operational PFC and PG were programmed through dcbnl.
    HardwareApplied,
    HardwareError {
        error: String,
        /// What went wrong, by kind (absent in events of older daemons).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<crate::hardware::HardwareErrorKind>,
    },
    /// A link-delay measurement round ended (`measured` with its result, or `failed`).
    HeadroomMeasured {
        result: lossless_headroom::session::MeasureEvent,
    },
    /// The headroom the port holds changed (first result, growth, or a shrink the
    /// hysteresis let through).
    HeadroomChanged {
        bytes: u64,
        cells: u64,
        decision: lossless_headroom::sizing::Decision,
    },
    /// What reached the NIC for the headroom: the IEEE PFC delay (`pfc_delay`, as
    /// `hardware` in `headroom show`) and the DCB buffer (`buffer`, each with its
    /// `state` and, when it was not programmed, the `reason`).
    HeadroomHardware {
        pfc_delay: serde_json::Value,
        buffer: serde_json::Value,
    },
}

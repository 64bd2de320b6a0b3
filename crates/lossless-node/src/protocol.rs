//! The control-socket protocol: JSON lines over a Unix stream socket.
//!
//! The requests, the responses and the views both ends read are in `lossless-proto`
//! (re-exported here, so `lossless_node::protocol::X` keeps naming them); what is left
//! here are the views the node still builds from its own types.

use lossless_dcbx::lldp::rx::NeighborSummary;
use lossless_dcbx::stats::{DcbxStats, LldpStats};
use lossless_dcbx::{Event, FeatureStatus};
use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig};
use serde::Serialize;

pub use lossless_proto::request::*;
pub use lossless_proto::response::*;
pub use lossless_proto::status::{DaemonInfo, PortStatusLine, PortSummary, StatusResult};
pub use lossless_proto::views::*;
pub use lossless_proto::Hardware;

/// `neighbors`.
#[derive(Debug, Clone, Serialize)]
pub struct PortNeighbors {
    pub port: String,
    pub neighbors: Vec<NeighborSummary>,
    /// MSAPs whose LLDPDUs were discarded (the remote MIB was full) and have not
    /// aged out: they count as neighbours for the multiple-neighbour rule.
    pub discarded_msaps: usize,
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
    /// The CEE Control machine as a view (`seq_base`, where a restarted daemon
    /// starts SeqNo, is the agent's own and not shown).
    pub control: ControlView,
    pub pg: FeatureStatus<PgConfig>,
    pub pfc: FeatureStatus<PfcConfig>,
    pub app: FeatureStatus<AppConfig>,
    /// The IEEE 802.1Qaz features (ETS, PFC, APP) and the peer's TLVs.
    pub ieee: lossless_dcbx::status::IeeeStatus,
    /// Where pg, pfc and app come from; [`DcbxView::source`] is what the protocol
    /// sends (every feature and the mode).
    #[serde(skip)]
    pub source: FeatureSources,
}

/// `dcbx show` (and `dcbx set`/`dcbx reset`'s answer): one port, with where each
/// setting comes from and the local settings the feature views do not show.
#[derive(Debug, Clone, Serialize)]
pub struct DcbxView {
    #[serde(flatten)]
    pub dcbx: PortDcbx,
    /// Where each feature's admin settings come from: "config" or "runtime"
    /// (a `dcbx set` persisted in the state directory).
    pub source: Sources,
    /// The local IEEE 802.1Qaz settings beside the features' tables.
    pub ieee_admin: IeeeAdmin,
    /// The port's APP rules, one list for both versions (what `ieee.app.admin` and
    /// `app.desired` are made of).
    pub app_rules: crate::config::AppRules,
    /// What the NIC holds, read back, beside admin / peer / oper; absent where the
    /// daemon does not program the NIC (`apply = "none"`, no dcbnl).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic: Option<NicView>,
}

/// `dcbx show`'s `nic`: the last read-back and what it says.
#[derive(Debug, Clone, Serialize)]
pub struct NicView {
    /// Seconds since the read-back (None: not read yet).
    pub read_s_ago: Option<f64>,
    /// Why the last read-back failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_error: Option<String>,
    /// ETS as the NIC holds it (`prio_tc`, `tc_bw`, `tsa`; None: not reported).
    pub ets: Option<lossless_wire::ieee::EtsTable>,
    /// The PFC priorities the NIC runs.
    pub pfc: Option<lossless_wire::cee::PriorityMap>,
    /// The PFC delay allowance the NIC holds, bit times.
    pub pfc_delay: Option<u16>,
    /// The NIC's whole APP table, whoever set each entry.
    pub apps: Vec<lossless_wire::ieee::AppPriority>,
    /// The selector trust order: `dscp`, `pcp`, ... (None: no trust table to read).
    pub trust: Option<Vec<String>>,
    /// CEE DCBX's objects, where the port runs CEE (`pfc`: bit p = priority p).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cee: Option<crate::hardware::CeeNic>,
    /// Each part the driver refused, with its answer; `covered`: no problem for the
    /// traffic (see `status`).
    pub refused: Vec<RefusedView>,
    /// Where the NIC differs from what was programmed.
    pub differences: Vec<String>,
    /// The driver took DSCP entries and refused every other selector.
    pub dscp_only: bool,
    /// `nic_drift`, and the drift found and repaired so far.
    pub drift_policy: crate::nic::DriftPolicy,
    pub drift_detected: u64,
    pub drift_repaired: u64,
}

/// One refused part.
#[derive(Debug, Clone, Serialize)]
pub struct RefusedView {
    #[serde(flatten)]
    pub refusal: crate::nic::Refusal,
    pub text: String,
    pub covered: bool,
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
    /// Runtime changes (`dcbx set`) that run instead of a different value in the file.
    pub shadowed: Vec<Shadowed>,
}

/// A port's feature whose runtime change runs instead of the file's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shadowed {
    pub port: String,
    pub feature: FeatureName,
    /// This reload changed the file's value, which therefore does not run.
    pub file_changed: bool,
    /// The same for a person, with the command that gives the file's value back.
    pub message: String,
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
    /// The PFC counters and the storm watchdog.
    Pfc(crate::pfc::PfcEvent),
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
    /// A read-back found the NIC changed behind the daemon's back (`dcb`,
    /// `mlnx_qos`, lldpad, a firmware reset): what differs now, and whether it is
    /// being programmed back (`nic_drift = "repair"`).
    NicDrift {
        differences: Vec<String>,
        repairing: bool,
    },
    /// RoCE host settings were written where the host did not hold the configured
    /// value (each `roce.KEY = value`).
    RoceApplied {
        settings: Vec<String>,
    },
    /// The host refused a RoCE host setting, or took the write and did not keep it:
    /// each `roce.KEY: why`. Not written again until the configuration changes or
    /// the device comes back.
    RoceRefused {
        refusals: Vec<String>,
    },
    /// A RoCE host setting that held changed behind the daemon's back (an operator's
    /// script, a driver reload): what it became, and whether it is written back
    /// (`nic_drift = "repair"`).
    RoceDrift {
        settings: Vec<String>,
        repairing: bool,
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
    /// The DCBX peer flaps: more than `damping::FLAP_CHANGES` changes of what the
    /// port runs in a window of `window_s` seconds (`active`, at the start and at the
    /// end of each such window, with its `changes` and the DCBX events of the churn
    /// `suppressed`: neither logged nor kept), or no longer (`active: false`, after
    /// three windows without a change).
    Flapping {
        active: bool,
        changes: u32,
        window_s: u64,
        suppressed: u32,
    },
    /// The state directory's problem began or changed (`problem`), or ended (absent).
    StateDir {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        problem: Option<crate::state::StateDirProblem>,
    },
    /// The state file was refused at start; the daemon runs without it.
    StateSetAside {
        #[serde(flatten)]
        set_aside: crate::state::StateSetAside,
    },
}

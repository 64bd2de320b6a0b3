//! `status`: the daemon, its health as a whole, and a line per port.

use lossless_dcbx::status::ModeStatus;
use lossless_dcbx::AdminStatus;
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

use crate::hardware::Hardware;

/// `status`: the daemon, its health as a whole, and a line per port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusResult {
    pub daemon: DaemonInfo,
    /// Every port's problems after its name (and interfaces named on the command line
    /// that do not exist): `healthy` is false when there is any.
    #[serde(flatten)]
    pub health: Health,
    pub ports: Vec<PortStatusLine>,
}

/// One port of `status`: its summary, which DCBX version runs, whether a feature is
/// in error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortStatusLine {
    #[serde(flatten)]
    pub summary: PortSummary,
    /// Which DCBX version runs and why (as in `dcbx_show`).
    pub mode: ModeStatus,
    /// Some feature of the running version is in error.
    pub any_error: bool,
    /// `healthy`, `health` ("ok" or the problems in words), `problems`: see
    /// [`Health`].
    #[serde(flatten)]
    pub health: Health,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaemonInfo {
    pub version: String,
    pub pid: u32,
    pub uptime_s: f64,
    pub config: Option<String>,
    pub state_dir: String,
    pub socket: String,
    pub metrics: Option<String>,
    pub boots: u32,
    /// Why the configuration file was refused at the last reload (`reload`, SIGHUP, or
    /// the file changing under a watching daemon); absent when it was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_refused: Option<String>,
    /// What is wrong with the state directory (absent: nothing); while its `reason`
    /// is not `not_durable`, runtime changes are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_problem: Option<StateDirProblem>,
    /// The state file refused at start and set aside (absent: none), until a runtime
    /// change is persisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_set_aside: Option<StateSetAside>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Priorities the PFC watchdog holds in storm (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pfc_storm: Vec<u8>,
    /// The RoCE host settings beyond DCB: each configured or held value and how it
    /// stands.
    #[serde(default)]
    pub roce: RoceView,
}

/// A port's (or the node's) health: `healthy`, the problems in words, and the two
/// together as one line (`health`: "ok", or the problems joined with "; ").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub healthy: bool,
    pub health: String,
    pub problems: Vec<String>,
}

impl Default for Health {
    /// Nothing wrong.
    fn default() -> Self {
        Health::of(Vec::new())
    }
}

impl Health {
    /// The health of these problems (none: healthy).
    pub fn of(problems: Vec<String>) -> Health {
        Health {
            healthy: problems.is_empty(),
            health: if problems.is_empty() {
                "ok".to_string()
            } else {
                problems.join("; ")
            },
            problems,
        }
    }
}

/// Why the state directory cannot be used as it should: what the daemon reports (status,
/// health, metrics, events) and answers runtime changes with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateDirReason {
    /// The directory or the file (or a directory above) belongs to a user other than
    /// the daemon's (or root): state there could be forged. Its state is ignored.
    NotOwned,
    /// Group or others may write the directory or the file (or a directory above,
    /// without the sticky bit). Its state is ignored.
    OpenMode,
    /// Not a directory, or a state file that is not a regular file (a symbolic link).
    NotUsable,
    /// Nothing can be written there: read-only, full, an I/O error.
    NotWritable,
    /// The state file was replaced but the directory could not be flushed: the change
    /// runs and a restart reads it, a power loss may lose it.
    NotDurable,
}

impl StateDirReason {
    pub const ALL: [StateDirReason; 5] = [
        StateDirReason::NotOwned,
        StateDirReason::OpenMode,
        StateDirReason::NotUsable,
        StateDirReason::NotWritable,
        StateDirReason::NotDurable,
    ];

    /// Whether runtime changes are refused while it lasts (all but `not_durable`).
    pub fn refuses_changes(self) -> bool {
        !matches!(self, StateDirReason::NotDurable)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            StateDirReason::NotOwned => "not_owned",
            StateDirReason::OpenMode => "open_mode",
            StateDirReason::NotUsable => "not_usable",
            StateDirReason::NotWritable => "not_writable",
            StateDirReason::NotDurable => "not_durable",
        }
    }
}

/// A problem of the state directory: its kind, the path it is about, and the whole
/// sentence (which names the path, and the owner and expected uid where they matter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct StateDirProblem {
    pub reason: StateDirReason,
    pub path: String,
    pub message: String,
}

/// A state file that was refused at start (damaged, not understood, or not trusted):
/// the daemon started on the configuration file without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateSetAside {
    /// The state file.
    pub path: String,
    /// Where it was moved (`state.json.damaged-<unix time>`); None: left where it was
    /// (the directory could not be written, or was not trusted).
    pub moved_to: Option<String>,
    /// Why it was refused.
    pub why: String,
}

/// One setting as `status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoceSettingView {
    pub key: String,
    /// What the configuration asks, in words (None: left alone).
    pub configured: Option<String>,
    /// What the host holds, in words; or why it is not exposed or not read.
    pub held: Option<String>,
    /// `ok`, `differs`, `refused`, `not_exposed`, `unreadable`, `unmanaged` (not
    /// configured: shown only), `not_read`.
    pub state: String,
    pub refused: Option<String>,
}

/// A port's RoCE host settings as `status` shows them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct RoceView {
    pub driver: Option<String>,
    pub rdma_device: Option<String>,
    pub rdma_port: Option<u32>,
    pub settings: Vec<RoceSettingView>,
    pub writes: u64,
    pub write_failures: u64,
    pub drift_detected: u64,
    pub drift_repaired: u64,
}

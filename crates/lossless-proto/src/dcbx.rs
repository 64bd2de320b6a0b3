//! `dcbx show` (and `dcbx set`/`dcbx reset`'s answer): a port's DCBX, where each setting
//! comes from, and what the NIC holds.

use lossless_dcbx::status::{FeatureStatus, IeeeStatus, ModeStatus};
use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig};
use serde::{Deserialize, Serialize};

use crate::views::{ControlView, FeatureSources, IeeeAdmin, Sources};

/// `dcbx show`: one port.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortDcbx {
    pub port: String,
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    /// Which DCBX version runs and why.
    pub mode: ModeStatus,
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
    pub ieee: IeeeStatus,
    /// Where pg, pfc and app come from; [`DcbxView::source`] is what the protocol
    /// sends (every feature and the mode).
    #[serde(skip)]
    pub source: FeatureSources,
}

/// `dcbx show` (and `dcbx set`/`dcbx reset`'s answer): one port, with where each
/// setting comes from and the local settings the feature views do not show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub app_rules: crate::app::AppRules,
    /// What the NIC holds, read back, beside admin / peer / oper; absent where the
    /// daemon does not program the NIC (`apply = "none"`, no dcbnl).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic: Option<NicView>,
}

/// `dcbx show`'s `nic`: the last read-back and what it says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefusedView {
    #[serde(flatten)]
    pub refusal: crate::nic::Refusal,
    pub text: String,
    pub covered: bool,
}

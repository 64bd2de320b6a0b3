//! Read-only views of an agent, serialisable with stable field names (the same
//! names `lossless decode`, `lossless lab` and the daemon's CLI use).

use serde::Serialize;

use crate::config::AdminStatus;
use crate::control::ControlMachine;
use crate::feature::Reason;
use crate::lldp::rx::NeighborSummary;
use crate::stats::{DcbxStats, LldpStats};
use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig};

/// One feature: admin, peer and operational configuration and the flags.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureStatus<C> {
    pub enable: bool,
    pub willing: bool,
    pub advertise: bool,
    /// DesiredCfg.
    pub desired: C,
    /// PeerCfg (None: the peer does not send this feature).
    pub peer: Option<C>,
    pub peer_enable: Option<bool>,
    pub peer_willing: Option<bool>,
    pub peer_error: Option<bool>,
    /// OperCfg.
    pub oper: C,
    pub oper_mode: bool,
    pub syncd: bool,
    pub error: bool,
    pub feature_seq: u32,
    pub oper_version: u8,
    /// What the hardware runs: SetCfg(OperCfg, OperMode); None = feature off.
    pub applied: Option<C>,
    pub reason: Reason,
    pub reason_text: &'static str,
}

/// One port.
#[derive(Debug, Clone, Serialize)]
pub struct PortStatus {
    pub link_up: bool,
    pub admin_status: AdminStatus,
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    pub peer_present: bool,
    pub control: ControlMachine,
    pub pg: FeatureStatus<PgConfig>,
    pub pfc: FeatureStatus<PfcConfig>,
    pub app: FeatureStatus<AppConfig>,
    pub neighbors: Vec<NeighborSummary>,
    pub lldp: LldpStats,
    pub dcbx: DcbxStats,
    pub headroom_measurement: HeadroomCapability,
}

/// The adaptive-headroom capability bit of the PFC sub-TLV, ours and the peer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HeadroomCapability {
    pub local: bool,
    pub peer: bool,
}

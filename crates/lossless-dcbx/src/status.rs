//! Read-only views of an agent, serialisable with stable field names (the same
//! names `lossless decode`, `lossless lab` and the daemon's CLI use).

use serde::Serialize;

use crate::cee::control::ControlMachine;
use crate::config::AdminStatus;
use crate::ieee::PeerTlvs;
use crate::lldp::rx::NeighborSummary;
use crate::mode::{DcbxMode, ModeReason, Version};
use crate::reason::Reason;
use crate::stats::{DcbxStats, LldpStats};
use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig};
use lossless_wire::ieee::{AppPriorityTable, EtsTable, PriorityMap};

/// One feature: admin, peer and operational configuration and the flags.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
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
    pub reason_text: std::borrow::Cow<'static, str>,
}

/// One IEEE 802.1Qaz feature: what we want, what the peer sends, what runs and why.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct IeeeFeatureStatus<C> {
    pub enable: bool,
    pub willing: bool,
    pub advertise: bool,
    /// Our configuration.
    pub admin: C,
    /// The peer's (None: it does not send this TLV, or it was malformed).
    pub peer: Option<C>,
    pub peer_willing: Option<bool>,
    /// What the port runs.
    pub oper: C,
    pub oper_mode: bool,
    /// The peer shows what the decision expects of it (IEEE's counterpart of Syncd).
    pub agreed: bool,
    pub error: bool,
    pub reason: Reason,
    pub reason_text: std::borrow::Cow<'static, str>,
}

/// The IEEE 802.1Qaz features of a port, and the peer's TLVs as last received.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct IeeeStatus {
    pub ets: IeeeFeatureStatus<EtsTable>,
    pub pfc: IeeeFeatureStatus<PriorityMap>,
    pub app: IeeeFeatureStatus<AppPriorityTable>,
    /// Whether we send the ETS Recommendation TLV.
    pub ets_recommend: bool,
    pub peer_tlvs: PeerTlvs,
}

/// Which DCBX version the port runs, and why. Read back (a client of the daemon),
/// `reason_text` is this version's words for `reason`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ModeStatus {
    pub configured: DcbxMode,
    pub running: Version,
    pub reason: ModeReason,
    pub reason_text: &'static str,
}

/// One port.
#[derive(Debug, Clone, Serialize)]
pub struct PortStatus {
    pub link_up: bool,
    pub admin_status: AdminStatus,
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    pub mode: ModeStatus,
    pub peer_present: bool,
    /// Every feature of the running version agrees with the peer (CEE: Syncd;
    /// IEEE: agreed), a peer present.
    pub all_syncd: bool,
    /// Some feature of the running version is in error (CEE: the Error flag; IEEE:
    /// a malformed TLV, more than one neighbour, two PFC configurations on the link).
    pub any_error: bool,
    pub control: ControlMachine,
    pub pg: FeatureStatus<PgConfig>,
    pub pfc: FeatureStatus<PfcConfig>,
    pub app: FeatureStatus<AppConfig>,
    pub ieee: IeeeStatus,
    pub neighbors: Vec<NeighborSummary>,
    /// MSAPs whose LLDPDUs tooManyNeighbors discarded and that have not aged out.
    pub discarded_msaps: usize,
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

/// [`ModeStatus`] as read: `reason_text` is [`ModeReason::describe`]'s.
#[derive(serde::Deserialize)]
struct ModeStatusWire {
    configured: DcbxMode,
    running: Version,
    reason: ModeReason,
    #[allow(dead_code)] // read so that it is known; the words are this version's
    reason_text: String,
}

impl<'de> serde::Deserialize<'de> for ModeStatus {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = ModeStatusWire::deserialize(d)?;
        Ok(ModeStatus {
            configured: w.configured,
            running: w.running,
            reason: w.reason,
            reason_text: w.reason.describe(),
        })
    }
}

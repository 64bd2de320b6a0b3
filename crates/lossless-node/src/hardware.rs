//! The NIC as the node core models it: what it asks the runtime to program through
//! dcbnl, what the driver reports back, and why programming failed, by kind.
//!
//! These are plain values: losslessd maps them to and from `lossless-sys`'s dcbnl
//! messages, the lab answers them from a modelled driver.

use serde::{Deserialize, Serialize};

pub use lossless_proto::hardware::{CeeNic, Hardware, HardwareError, HardwareErrorKind};

/// A port's state before (or without) the dcbnl probe.
pub fn before_probe(apply: crate::config::Apply) -> Hardware {
    match apply {
        crate::config::Apply::None => Hardware::ReportOnly,
        crate::config::Apply::Dcbnl => Hardware::Probing,
    }
}

pub use lossless_proto::headroom::MAX_BUFFERS;

/// The IEEE PFC object as the driver reports it (`struct ieee_pfc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IeeePfc {
    /// Traffic classes that may be PFC-enabled at once (`pfc_cap`).
    pub cap: u8,
    /// Bit `p` set: PFC on priority `p` (`pfc_en`).
    pub enabled: u8,
    /// MACsec bypass capability (`mbc`).
    pub mbc: u8,
    /// The delay allowance, bit times (`delay`).
    pub delay: u16,
    /// PFC frames sent per priority (`requests`).
    pub requests: [u64; 8],
    /// PFC frames received per priority (`indications`).
    pub indications: [u64; 8],
}

/// The NIC's receive buffers and which priority each holds (`struct dcbnl_buffer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DcbBuffer {
    /// The buffer (0..8) each priority is received into.
    pub prio2buffer: [u8; 8],
    /// Size of each buffer, bytes.
    pub buffer_size: [u32; MAX_BUFFERS],
    /// The port's whole buffer, bytes (reported by the driver; ignored on set).
    pub total_size: u32,
}

impl DcbBuffer {
    /// The buffers that hold at least one priority of `priorities` (bit `p` =
    /// priority `p`), as a bit mask of buffer indices.
    pub fn buffers_of(&self, priorities: u8) -> u8 {
        let mut mask = 0u8;
        for (p, &b) in self.prio2buffer.iter().enumerate() {
            if priorities & (1 << p) != 0 && usize::from(b) < MAX_BUFFERS {
                mask |= 1 << b;
            }
        }
        mask
    }
}

/// What the driver's IEEE objects say (`DCB_CMD_IEEE_GET`): each is absent when the
/// driver lacks the op that reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IeeeReadback {
    pub pfc: Option<IeeePfc>,
    pub buffer: Option<DcbBuffer>,
}

/// Counts of failed operations by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HardwareErrorCounts(pub [u64; 8]);

impl HardwareErrorCounts {
    pub fn count(&mut self, kind: HardwareErrorKind) {
        let i = HardwareErrorKind::ALL
            .iter()
            .position(|k| *k == kind)
            .unwrap_or(HardwareErrorKind::ALL.len() - 1);
        self.0[i] += 1;
    }

    /// Each kind with its count, in [`HardwareErrorKind::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (HardwareErrorKind, u64)> + '_ {
        HardwareErrorKind::ALL.into_iter().zip(self.0)
    }
}

/// IEEE ETS as the NIC is to run it (`struct ieee_ets`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EtsProgram {
    pub willing: bool,
    pub cbs: bool,
    pub max_tcs: u8,
    /// What the port runs (priority to class, bandwidth, selection algorithm).
    pub table: lossless_wire::ieee::EtsTable,
    /// What it recommends to its peer, when it sends a recommendation.
    pub recommendation: Option<lossless_wire::ieee::EtsTable>,
}

/// The order the NIC trusts a packet's markings in, to pick its priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// DSCP first, then the VLAN tag's PCP: for DSCP APP entries (RoCEv2).
    DscpThenPcp,
    /// The VLAN tag's PCP only (what drivers start with).
    Pcp,
}

/// What to program through `DCB_CMD_IEEE_SET`/`IEEE_DEL` when IEEE 802.1Qaz runs: the
/// operational ETS and PFC, and the change to the APP entries this daemon installed
/// (entries another tool set are never touched: only ours are deleted, one by one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IeeeProgram {
    /// None: ETS is disabled here, the driver's is left alone.
    pub ets: Option<EtsProgram>,
    /// PFC priorities (the delay allowance the headroom set is kept).
    pub pfc_enabled: u8,
    pub app_add: Vec<lossless_wire::ieee::AppPriority>,
    pub app_del: Vec<lossless_wire::ieee::AppPriority>,
    /// A new trust order, when the APP entries call for one.
    pub trust: Option<Trust>,
}

impl IeeeProgram {
    /// Only APP entries to withdraw (the port left IEEE).
    pub fn is_withdrawal(&self) -> bool {
        self.ets.is_none() && self.app_add.is_empty()
    }
}

/// What the NIC holds for IEEE 802.1Qaz, as `DCB_CMD_IEEE_GET` reports it: the
/// read-back that `dcbx show`'s `nic` row shows and drift is judged on. Each object is
/// absent when the driver lacks the op that reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NicState {
    /// ETS as the driver holds it (`ieee_getets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ets: Option<lossless_wire::ieee::EtsTable>,
    /// PFC as the driver holds it (`ieee_getpfc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<IeeePfc>,
    /// The kernel's APP table for the device: every entry, whoever set it.
    pub apps: Vec<lossless_wire::ieee::AppPriority>,
    /// The selector trust order, first trusted first (`dcbnl_getapptrust`; Linux 6.2+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<Vec<u8>>,
    /// The DCB buffer (`dcbnl_getbuffer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<DcbBuffer>,
    /// The DCBX mode bits (`getdcbx`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcbx: Option<u8>,
    /// CEE DCBX's objects, read where the port runs CEE (`PFC_GCFG`, `PFC_GSTATE`,
    /// `PGTX_GCFG`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cee: Option<CeeNic>,
}

impl NicState {
    /// The priorities the NIC runs PFC on, when it reports PFC.
    pub fn pfc_enabled(&self) -> Option<u8> {
        self.pfc.map(|p| p.enabled)
    }

    /// The NIC trusts DSCP before anything else (or, without a trust table to read,
    /// `None`: unknown).
    pub fn trusts_dscp(&self) -> Option<bool> {
        self.trust
            .as_ref()
            .map(|t| t.first() == Some(&lossless_wire::ieee::Selector::DSCP.0))
    }
}

/// The driver's answer to one part of an IEEE programming.
pub type PartResult = Result<(), HardwareError>;

/// What the driver answered to each part of an [`IeeeProgram`], each sent in a
/// request of its own (`dcbnl_ieee_set` stops at the first object or APP entry the
/// driver refuses, and a positive answer counts as one: everything after it in the
/// same request would be left unset, without a word), and what the NIC holds after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IeeeOutcome {
    /// ETS, when the program had one.
    pub ets: Option<PartResult>,
    pub pfc: PartResult,
    /// Each APP entry added, with the driver's answer.
    pub apps_added: Vec<(lossless_wire::ieee::AppPriority, PartResult)>,
    /// Each APP entry withdrawn (one `IEEE_DEL` each), with the answer.
    pub apps_deleted: Vec<(lossless_wire::ieee::AppPriority, PartResult)>,
    pub trust: Result<TrustOutcome, HardwareError>,
    /// `DCB_CMD_IEEE_GET` right after: what the NIC holds now.
    pub nic: Option<Result<NicState, HardwareError>>,
}

impl IeeeOutcome {
    /// Every part the driver refused, in the order sent.
    pub fn refusals(&self) -> impl Iterator<Item = &HardwareError> {
        let parts = self
            .ets
            .iter()
            .chain(std::iter::once(&self.pfc))
            .chain(self.apps_added.iter().map(|(_, r)| r))
            .chain(self.apps_deleted.iter().map(|(_, r)| r));
        parts
            .filter_map(|r| r.as_ref().err())
            .chain(self.trust.as_ref().err())
    }

    /// An outcome in which every part failed the same way (the socket, the device).
    pub fn failed(program: &IeeeProgram, e: &HardwareError) -> IeeeOutcome {
        IeeeOutcome {
            ets: program.ets.map(|_| Err(e.clone())),
            pfc: Err(e.clone()),
            apps_added: program
                .app_add
                .iter()
                .map(|a| (*a, Err(e.clone())))
                .collect(),
            apps_deleted: program
                .app_del
                .iter()
                .map(|a| (*a, Err(e.clone())))
                .collect(),
            trust: Err(e.clone()),
            nic: None,
        }
    }
}

/// How programming the trust order went: drivers without a trust table (most, and
/// every kernel before Linux 6.2) leave the choice to their default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustOutcome {
    Set,
    Unsupported,
    Untouched,
}

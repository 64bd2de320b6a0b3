//! One definition of health, for a port and for the node as a whole: what `status`
//! shows (HEALTH, `healthy`), what the lab reports per agent and what the gauge
//! `lossless_port_healthy` exports all come from here.
//!
//! A port is healthy when nothing runs other than what its configuration asks for:
//!
//! * its link is up;
//! * where DCBX is meant to run (enabled, LLDP both ways), a DCBX peer is in view and
//!   every feature of the running version that is enabled and advertised is
//!   operational, in sync with the peer (CEE DCBX: Syncd and acknowledged; IEEE
//!   802.1Qaz: agreed) and not in error;
//! * with `apply = "dcbnl"`, the NIC answered the probe and took the last programming;
//! * the PFC storm watchdog sees no storm on any of its priorities (a storm, and PFC
//!   turned off by `forward`, are problems until the storm is over).
//!
//! What the configuration turns off (DCBX disabled, LLDP not both ways, a feature
//! disabled or not advertised, `apply = "none"`) is not judged: it is what was asked.
//! Each problem is one phrase a person reads in `status`; the node's problems are its
//! ports', each after the port's name.

use lossless_dcbx::{FeatureId, PortStatus, Reason, Version};
use lossless_wire::app_name;
use lossless_wire::ieee::{AppPriority, PriorityMap, Selector, Tsa};

use crate::hardware::Hardware;
use crate::hardware::{NicState, Trust};
use crate::headroom::BufferState;
use crate::nic::{app_text, priorities_text, Difference, NicWatch, Part, Refusal};
use crate::pfc::{Direction, PortPfc};

pub use lossless_proto::status::Health;

/// What is wrong with a port, one phrase each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    LinkDown,
    /// DCBX should run and no peer of the running version is in view: why (no
    /// DCBX TLV heard since link up, the peer went away, more than one neighbour...).
    NoPeer(Reason),
    /// A feature of the running version in error, not operational, or not in sync.
    Feature {
        feature: FeatureId,
        fault: Fault,
        reason: Reason,
    },
    /// `apply = "dcbnl"`: the NIC has not answered the probe yet.
    Probing,
    /// `apply = "dcbnl"` and the NIC has no dcbnl: nothing is programmed.
    NoDcbnl(String),
    /// The last dcbnl programming failed.
    Programming(String),
    /// The driver refused a part of the IEEE programming (an APP entry, ETS, PFC,
    /// the trust order): it is not in the NIC.
    Refused(Refusal),
    /// The read-back shows the NIC holding something else than was programmed.
    NicDiffers(Difference),
    /// The NIC could not be read back: what it holds is not known.
    ReadBackFailed(String),
    /// A programming waits (at most a few seconds after a link-up) for the
    /// negotiation to settle: the NIC does not run it yet.
    Held,
    /// An APP entry of a class the configuration makes lossless maps, in operation,
    /// to a priority without PFC: its traffic is lossy.
    LossyClass {
        entry: AppPriority,
        pfc: PriorityMap,
        why: Reason,
    },
    /// `mode = "static"`, and the neighbour's DCBX TLVs say otherwise than the
    /// configuration: PFC on other priorities, or an APP entry to another priority.
    StaticPeerDiffers(String),
    /// CEE DCBX: an APP entry of a lossless class maps, in operation, to priorities
    /// of which some have no PFC.
    LossyCeeClass {
        entry: lossless_wire::cee::AppEntry,
        pfc: PriorityMap,
        why: Reason,
    },
    /// The configuration's CNP class (DSCP 48, what ConnectX marks congestion
    /// notifications with by default) runs on a priority with PFC.
    CnpWithPfc {
        entry: AppPriority,
    },
    /// A PFC priority sits in an ETS traffic class with 0 % of the bandwidth.
    PfcInStarvedClass {
        priority: u8,
        tc: u8,
    },
    /// The PFC watchdog is on, and the port gives it no counters to watch.
    BlindWatchdog(String),
    /// The PFC watchdog is on and the driver has no counters (`why`): it counts the
    /// PFC frames the host receives (`frames` so far), blind to the pauses this NIC
    /// sends ([`crate::pfc::host`]).
    WatchdogRxOnly {
        why: String,
        frames: u64,
    },
    /// The headroom the link needs does not fit the port's buffer.
    HeadroomDoesNotFit(String),
    /// The PFC watchdog declared a storm on a priority (`pfc_off`: and `forward`
    /// turned PFC off on it).
    PfcStorm {
        priority: u8,
        direction: Direction,
        pfc_off: bool,
    },
    /// A RoCE host setting beyond DCB ([`crate::roce`]): not held, a firmware LLDP
    /// agent competing, a ToS that leaves lossy.
    Roce(crate::roce::RoceProblem),
    /// LLDPDUs this host sent (from the named port) come back: a loop.
    Looped(String),
    /// The DCBX peer keeps changing what the port runs ([`crate::damping`]): the
    /// changes counted in the window now open, and `nic_hold_ms` where the NIC is
    /// programmed (`apply = "dcbnl"`).
    Flapping {
        changes: u32,
        nic_hold_ms: Option<u32>,
    },
}

impl Problem {
    /// A stable name of the kind of problem, for metrics labels
    /// (`lossless_port_problem{problem="..."}`) and alert rules.
    pub fn kind(&self) -> &'static str {
        match self {
            Problem::LinkDown => "link_down",
            Problem::NoPeer(_) => "no_peer",
            Problem::Feature { .. } => "feature",
            Problem::Probing => "probing",
            Problem::NoDcbnl(_) => "no_dcbnl",
            Problem::Programming(_) => "programming",
            Problem::Refused(_) => "refused",
            Problem::NicDiffers(_) => "nic_differs",
            Problem::ReadBackFailed(_) => "read_back_failed",
            Problem::Held => "held",
            Problem::LossyClass { .. } | Problem::LossyCeeClass { .. } => "lossy_class",
            Problem::StaticPeerDiffers(_) => "static_peer_differs",
            Problem::CnpWithPfc { .. } => "cnp_with_pfc",
            Problem::PfcInStarvedClass { .. } => "pfc_in_starved_class",
            Problem::BlindWatchdog(_) => "blind_watchdog",
            Problem::WatchdogRxOnly { .. } => "watchdog_rx_only",
            Problem::HeadroomDoesNotFit(_) => "headroom_does_not_fit",
            Problem::PfcStorm { .. } => "pfc_storm",
            Problem::Roce(r) => r.kind(),
            Problem::Looped(_) => "looped",
            Problem::Flapping { .. } => "flapping",
        }
    }
}

/// How a feature falls short, the worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    Error,
    NotOperational,
    NotInSync,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Problem::LinkDown => f.write_str("link down"),
            Problem::NoPeer(r) => f.write_str(r.describe()),
            Problem::Feature {
                feature,
                fault,
                reason,
            } => {
                let fault = match fault {
                    Fault::Error => "error",
                    Fault::NotOperational => "not operational",
                    Fault::NotInSync => "not in sync",
                };
                write!(f, "{feature}: {fault}, {}", reason.describe())
            }
            Problem::Probing => {
                f.write_str("dcbnl: the NIC has not answered the probe yet: nothing is programmed")
            }
            Problem::NoDcbnl(why) => write!(f, "dcbnl: {why}: nothing is programmed"),
            Problem::Programming(e) => write!(f, "dcbnl programming failed: {e}"),
            Problem::Refused(r) => write!(f, "{r}: not in the NIC"),
            Problem::NicDiffers(d) => write!(f, "read back: {d}"),
            Problem::Held => f.write_str(
                "dcbnl: the programming waits for the DCBX peer (at most 3 s after link-up): \
                 the NIC does not run it yet",
            ),
            Problem::ReadBackFailed(e) => write!(
                f,
                "the NIC could not be read back ({e}): what it holds is not known"
            ),
            Problem::LossyClass { entry, pfc, why } => write!(
                f,
                "APP {} carries a class the configuration makes lossless, but priority {} \
                 has no PFC in operation (PFC on {}: {}): that traffic is lossy",
                app_text(entry),
                entry.priority,
                priorities_text(pfc.0),
                why.describe()
            ),
            Problem::StaticPeerDiffers(what) => write!(
                f,
                "static mode: the neighbour's DCBX TLVs differ from the configuration \
                 ({what}): one end is not configured like the other"
            ),
            Problem::LossyCeeClass { entry, pfc, why } => write!(
                f,
                "APP {} carries a class the configuration makes lossless, but not every one of \
                 its priorities has PFC in operation (PFC on {}: {}): that traffic is lossy",
                app_name::app_entry(
                    entry.selector.into(),
                    entry.protocol,
                    priorities_text(entry.priorities.0)
                ),
                priorities_text(pfc.0),
                why.describe()
            ),
            Problem::CnpWithPfc { entry } => write!(
                f,
                "CNPs (APP {}) run on a priority with PFC: congestion notifications can be \
                 paused behind the data they are about; give them a priority without PFC",
                app_text(entry)
            ),
            Problem::PfcInStarvedClass { priority, tc } => write!(
                f,
                "PFC priority {priority} is in traffic class {tc}, an ETS class with 0 % of \
                 the bandwidth: it may never be sent"
            ),
            Problem::BlindWatchdog(why) => write!(
                f,
                "the PFC watchdog is on but sees no counters ({why}): a storm would go unseen"
            ),
            Problem::WatchdogRxOnly { why, frames: 0 } => write!(
                f,
                "the PFC watchdog counts the PFC frames the host receives, the driver having \
                 no counters ({why}), and none has come yet: a NIC that handles PFC in \
                 hardware passes none up, so a storm from the peer may go unseen too; pauses \
                 this NIC sends are never seen"
            ),
            Problem::WatchdogRxOnly { why, frames } => write!(
                f,
                "the PFC watchdog counts the PFC frames the host receives ({frames} so far), \
                 the driver having no counters ({why}): it sees storms from the peer, not the \
                 pauses this NIC sends (a storm from this host would go unseen)"
            ),
            Problem::HeadroomDoesNotFit(why) => write!(f, "headroom: {why}"),
            Problem::Roce(r) => r.fmt(f),
            Problem::Looped(from) => write!(
                f,
                "loop: LLDPDUs with the Chassis ID and Port ID of {from} (this host's) \
                 arrive on this port (a looped cable, a port joined to another of this \
                 host, a device reflecting frames, or a neighbour given this host's MAC); \
                 they are discarded"
            ),
            Problem::Flapping {
                changes,
                nic_hold_ms,
            } => {
                write!(
                    f,
                    "the DCBX peer flaps: more than {} changes in {} s ({changes} in this \
                     window)",
                    crate::damping::FLAP_CHANGES,
                    crate::damping::FLAP_WINDOW.as_secs()
                )?;
                if let Some(ms) = nic_hold_ms {
                    write!(f, "; the NIC is programmed at most every {ms} ms")?;
                }
                f.write_str("; its events are summarised")
            }
            Problem::PfcStorm {
                priority,
                direction,
                pfc_off,
            } => {
                let who = match direction {
                    Direction::Rx => "the peer keeps pausing it",
                    Direction::Tx => "this host keeps pausing the peer",
                    Direction::Driver => "the NIC's storm counter rose",
                };
                write!(f, "PFC storm on priority {priority} ({who})")?;
                if *pfc_off {
                    f.write_str(": PFC turned off on it by the watchdog until the storm is over")?;
                }
                Ok(())
            }
        }
    }
}

/// One feature as health reads it, whichever the DCBX version.
struct FeatureView {
    id: FeatureId,
    judged: bool,
    error: bool,
    oper: bool,
    in_sync: bool,
    reason: Reason,
}

/// The features of the running version.
fn features(s: &PortStatus) -> [FeatureView; 3] {
    match s.mode.running {
        Version::Cee => [
            cee_view(FeatureId::Pg, &s.pg),
            cee_view(FeatureId::Pfc, &s.pfc),
            cee_view(FeatureId::App, &s.app),
        ],
        Version::Ieee => {
            let i = &s.ieee;
            [
                ieee_view(FeatureId::Ets, &i.ets),
                ieee_view(FeatureId::Pfc, &i.pfc),
                ieee_view(FeatureId::App, &i.app),
            ]
        }
    }
}

fn cee_view<C>(id: FeatureId, f: &lossless_dcbx::FeatureStatus<C>) -> FeatureView {
    FeatureView {
        id,
        judged: f.enable && f.advertise,
        error: f.error,
        oper: f.oper_mode,
        // Syncd, and the feature versions settled.
        in_sync: f.syncd && !matches!(f.reason, Reason::WaitingForAck | Reason::VersionMismatch),
        reason: f.reason,
    }
}

fn ieee_view<C>(id: FeatureId, f: &lossless_dcbx::status::IeeeFeatureStatus<C>) -> FeatureView {
    FeatureView {
        id,
        judged: f.enable && f.advertise,
        error: f.error,
        oper: f.oper_mode,
        in_sync: f.agreed,
        reason: f.reason,
    }
}

/// What health reads of a port.
pub struct Facts<'a> {
    pub status: &'a PortStatus,
    pub hardware: &'a Hardware,
    pub pfc: &'a PortPfc,
    /// What the driver refused, and the read-back.
    pub nic: &'a NicWatch,
    /// The headroom's buffer, where the port sizes one.
    pub buffer: Option<BufferState>,
    /// A programming waits for the negotiation to settle after a link-up.
    pub held: bool,
    /// The RoCE host settings beyond DCB.
    pub roce: &'a crate::roce::RoceWatch,
    /// LLDPDUs this host sent (from this port) come back.
    pub looped: Option<&'a str>,
    /// The DCBX peer flaps: the changes counted in this window, and `nic_hold_ms`
    /// where the NIC is programmed.
    pub flapping: Option<(u32, Option<u32>)>,
}

/// A port's problems: the link, then DCBX, then the NIC, then what makes lossless
/// traffic lossy, then PFC storms.
pub fn problems(f: &Facts<'_>) -> Vec<Problem> {
    let s = f.status;
    if !s.link_up {
        return vec![Problem::LinkDown];
    }
    let mut out = Vec::new();
    if let Some(from) = f.looped {
        out.push(Problem::Looped(from.to_string()));
    }
    if let Some((changes, nic_hold_ms)) = f.flapping {
        out.push(Problem::Flapping {
            changes,
            nic_hold_ms,
        });
    }
    // DCBX runs only where the configuration lets it: enabled, LLDP both ways.
    if s.dcbx_active {
        let judged: Vec<FeatureView> = features(s).into_iter().filter(|f| f.judged).collect();
        match judged.first() {
            Some(f) if !s.peer_present => out.push(Problem::NoPeer(f.reason)),
            _ => out.extend(judged.iter().filter_map(feature_problem)),
        }
    }
    let ieee = s.mode.running == Version::Ieee;
    match f.hardware {
        Hardware::ReportOnly => {}
        Hardware::Probing => out.push(Problem::Probing),
        Hardware::Unsupported { reason } => out.push(Problem::NoDcbnl(reason.clone())),
        Hardware::Dcbnl { error, .. } => {
            if ieee && !f.nic.refused.is_empty() {
                out.extend(refusals(f.nic));
            } else if let Some(e) = error {
                out.push(Problem::Programming(e.to_string()));
            }
            if f.held {
                out.push(Problem::Held);
            }
            // "Cannot see" is not "ok".
            if let Some(e) = &f.nic.read_error {
                out.push(Problem::ReadBackFailed(e.clone()));
            }
            if ieee {
                out.extend(
                    f.nic
                        .problem_differences()
                        .into_iter()
                        .map(Problem::NicDiffers),
                );
            }
        }
    }
    if s.mode.configured == lossless_dcbx::DcbxMode::Static && s.link_up {
        out.extend(static_peer(s));
    }
    if ieee {
        out.extend(lossy_classes(s));
        out.extend(cnp_with_pfc(s));
        out.extend(starved_pfc(s));
    } else {
        out.extend(lossy_cee_classes(s));
    }
    if let Some(BufferState::DoesNotFit { reason, .. }) = &f.buffer {
        out.push(Problem::HeadroomDoesNotFit(reason.clone()));
    }
    // A firmware LLDP agent competes where this daemon sends LLDP (not in static mode,
    // where nothing is negotiated).
    let runs_lldp = s.dcbx_active && s.mode.configured != lossless_dcbx::DcbxMode::Static;
    out.extend(f.roce.problems(runs_lldp).into_iter().map(Problem::Roce));
    out.extend(blind(f.pfc));
    out.extend(storms(f.pfc));
    out
}

/// The refusals that leave traffic unclassified. An entry other than DSCP that the
/// driver refused is no problem where the NIC classifies by DSCP (trusted first) and
/// holds a DSCP entry to the same priority: RoCEv2 is classified by its DSCP, which
/// mlx5, ice and hns3 (DSCP entries only) expect. Such a refusal is still listed in
/// `dcbx show`'s `nic` row.
fn refusals(nic: &NicWatch) -> impl Iterator<Item = Problem> + '_ {
    nic.refused
        .iter()
        .filter(|r| !covered(nic, r))
        .cloned()
        .map(Problem::Refused)
}

/// See [`refusals`].
pub fn covered(nic: &NicWatch, r: &Refusal) -> bool {
    let Part::App(e) = r.part else {
        return false;
    };
    let held = nic.meant.as_ref().map_or(&[][..], |m| &m.apps[..]);
    // The trust order as read back; without a trust table to read (kernels before
    // 6.2, drivers without `dcbnl_getapptrust`), the one set, or a driver that takes
    // DSCP entries only: mlx5 (`mlx5e_dcbnl_ieee_setapp`) and ice switch the port to
    // DSCP trust at its first DSCP entry.
    let dscp_trusted = match nic.state.as_deref().and_then(NicState::trusts_dscp) {
        Some(t) => t,
        None => {
            nic.meant
                .as_ref()
                .is_some_and(|m| m.trust == Some(Trust::DscpThenPcp))
                || crate::nic::dscp_only(&nic.refused, held)
        }
    };
    e.selector != Selector::DSCP
        && dscp_trusted
        && held
            .iter()
            .any(|h| h.selector == Selector::DSCP && h.priority == e.priority)
}

/// `mode = "static"`: what the neighbour's IEEE DCBX TLVs, when it sends any, say
/// differently from what this port runs (PFC, and APP entries for the same selector
/// and protocol to another priority; ETS may differ between the ends).
fn static_peer(s: &PortStatus) -> Vec<Problem> {
    let i = &s.ieee;
    let mut out = Vec::new();
    if let Some(peer) = i.pfc.peer {
        let ours = if i.pfc.oper_mode {
            i.pfc.oper
        } else {
            PriorityMap::NONE
        };
        if peer != ours {
            out.push(Problem::StaticPeerDiffers(format!(
                "PFC on {} there, on {} here",
                priorities_text(peer.0),
                priorities_text(ours.0)
            )));
        }
    }
    if let Some(peer) = &i.app.peer {
        for theirs in peer.iter() {
            let ours = i
                .app
                .oper
                .iter()
                .find(|o| o.selector == theirs.selector && o.protocol == theirs.protocol);
            if let Some(ours) = ours.filter(|o| o.priority != theirs.priority) {
                out.push(Problem::StaticPeerDiffers(format!(
                    "APP {} there, {} here",
                    app_text(theirs),
                    app_text(ours)
                )));
            }
        }
    }
    out
}

/// RoCEv2's UDP port.
const ROCE_V2_PORT: u16 = 4791;

/// The APP entries of the configuration's lossless classes that run on a priority
/// without PFC. A class is lossless when its entry maps to a priority the
/// configuration gives PFC, or when it is RoCEv2 (UDP 4791) or another entry to
/// RoCEv2's priority (its DSCP), while the configuration runs PFC at all.
fn lossy_classes(s: &PortStatus) -> Vec<Problem> {
    let i = &s.ieee;
    let admin_pfc = if i.pfc.enable {
        i.pfc.admin
    } else {
        PriorityMap::NONE
    };
    if admin_pfc.0 == 0 || !i.app.oper_mode || !i.pfc.oper_mode {
        return Vec::new();
    }
    let oper_pfc = i.pfc.oper;
    let roce = |e: &AppPriority| {
        matches!(e.selector, Selector::UDP | Selector::PORT) && e.protocol == ROCE_V2_PORT
    };
    let roce_prios: Vec<u8> = i
        .app
        .admin
        .iter()
        .filter(|e| roce(e))
        .map(|e| e.priority)
        .collect();
    let mut out = Vec::new();
    for ours in i.app.admin.iter() {
        let lossless =
            admin_pfc.contains(ours.priority) || roce(ours) || roce_prios.contains(&ours.priority);
        if !lossless {
            continue;
        }
        let running = i
            .app
            .oper
            .iter()
            .find(|o| o.selector == ours.selector && o.protocol == ours.protocol)
            .copied()
            .unwrap_or(*ours);
        if !oper_pfc.contains(running.priority) {
            out.push(Problem::LossyClass {
                entry: running,
                pfc: oper_pfc,
                why: i.pfc.reason,
            });
        }
    }
    out
}

/// CEE DCBX's counterpart of [`lossy_classes`]: an entry (ethertype or port) maps to
/// a set of priorities; it is lossless when one of its configured priorities has PFC
/// in the configuration, or it is RoCEv2's port; in operation every priority it maps
/// to must have PFC.
fn lossy_cee_classes(s: &PortStatus) -> Vec<Problem> {
    let admin_pfc = if s.pfc.enable {
        s.pfc.desired.priorities
    } else {
        PriorityMap::NONE
    };
    if admin_pfc.0 == 0 || !s.app.oper_mode {
        return Vec::new();
    }
    // PFC off for an error (a mismatch, a peer gone) is that feature's problem,
    // reported as such; this rule is for PFC that runs, on other priorities.
    if !s.pfc.oper_mode {
        return Vec::new();
    }
    let oper_pfc = s.pfc.oper.priorities;
    let mut out = Vec::new();
    for ours in s.app.desired.entries.iter() {
        let roce =
            ours.selector == lossless_wire::cee::AppSelector::PORT && ours.protocol == ROCE_V2_PORT;
        if !roce && ours.priorities.0 & admin_pfc.0 == 0 {
            continue;
        }
        let running = s
            .app
            .oper
            .entries
            .iter()
            .find(|o| o.selector == ours.selector && o.protocol == ours.protocol)
            .unwrap_or(ours);
        if running.priorities.0 & !oper_pfc.0 != 0 {
            out.push(Problem::LossyCeeClass {
                entry: *running,
                pfc: oper_pfc,
                why: s.pfc.reason,
            });
        }
    }
    out
}

/// The DSCP ConnectX marks CNPs with by default (`cnp_dscp` 48, CS6), which
/// `lossless profile roce` maps to the CNP priority.
const CNP_DSCP: u16 = 48;

/// The configuration's CNP entry (DSCP 48) runs, in operation, on a priority with PFC
/// that is not RoCEv2's own: congestion notifications paused behind data. Judged only
/// where RoCEv2 is configured (a UDP 4791 entry) and PFC runs.
fn cnp_with_pfc(s: &PortStatus) -> Option<Problem> {
    let i = &s.ieee;
    if !i.pfc.oper_mode || !i.app.oper_mode {
        return None;
    }
    let configured = |sel: Selector, proto: u16| {
        i.app
            .admin
            .iter()
            .any(|e| e.selector == sel && e.protocol == proto)
    };
    if !configured(Selector::DSCP, CNP_DSCP) || !configured(Selector::UDP, ROCE_V2_PORT) {
        return None;
    }
    let running = |sel: Selector, proto: u16| {
        i.app
            .oper
            .iter()
            .find(|e| e.selector == sel && e.protocol == proto)
            .copied()
    };
    let cnp = running(Selector::DSCP, CNP_DSCP)?;
    let data = running(Selector::UDP, ROCE_V2_PORT).map(|e| e.priority);
    (i.pfc.oper.contains(cnp.priority) && data != Some(cnp.priority))
        .then_some(Problem::CnpWithPfc { entry: cnp })
}

/// PFC priorities in an ETS class with no bandwidth.
fn starved_pfc(s: &PortStatus) -> Vec<Problem> {
    let i = &s.ieee;
    if !i.ets.oper_mode || !i.pfc.oper_mode {
        return Vec::new();
    }
    let ets = &i.ets.oper;
    (0..8u8)
        .filter(|&p| i.pfc.oper.contains(p))
        .filter_map(|p| {
            let tc = ets.prio_tc[usize::from(p)] & 7;
            let t = usize::from(tc);
            (ets.tsa[t] == Tsa::ETS && ets.tc_bw[t] == 0)
                .then_some(Problem::PfcInStarvedClass { priority: p, tc })
        })
        .collect()
}

/// What the watchdog cannot see, when it is on: everything, when the port has given it
/// no counters (after the first attempt to read them); the pauses this NIC sends, when
/// the PFC frames the host receives stand in for a driver without counters.
fn blind(pfc: &PortPfc) -> Option<Problem> {
    let c = &pfc.counters;
    if !pfc.settings.enabled {
        return None;
    }
    if let Some(h) = pfc.host_source() {
        let frames = h.counts.pfc_frames + h.counts.pause_xoff + h.counts.pause_xon;
        let why = h
            .standing_in
            .as_ref()
            .map(|(_, w)| w.clone())
            .unwrap_or_default();
        return Some(Problem::WatchdogRxOnly { why, frames });
    }
    if c.available() || (c.samples == 0 && c.failures == 0) {
        return None;
    }
    Some(Problem::BlindWatchdog(
        c.unavailable
            .clone()
            .unwrap_or_else(|| "the driver reports no PFC counters".to_string()),
    ))
}

/// The watchdog's storms, each priority once.
fn storms(pfc: &PortPfc) -> impl Iterator<Item = Problem> + '_ {
    let off = pfc.forced_off();
    pfc.watchdog.stormed().priorities().filter_map(move |p| {
        let storm = pfc.watchdog.storm(p)?;
        Some(Problem::PfcStorm {
            priority: p,
            direction: storm.direction,
            pfc_off: off.contains(p),
        })
    })
}

fn feature_problem(f: &FeatureView) -> Option<Problem> {
    let fault = if f.error {
        Fault::Error
    } else if !f.oper {
        Fault::NotOperational
    } else if !f.in_sync {
        Fault::NotInSync
    } else {
        return None;
    };
    Some(Problem::Feature {
        feature: f.id,
        fault,
        reason: f.reason,
    })
}

/// A port's health.
pub fn port(f: &Facts<'_>) -> Health {
    Health::of(problems(f).iter().map(Problem::to_string).collect())
}

/// The node's health: the state directory's problem and a state file set aside,
/// every port's problems after its name, each interface named
/// on the command line that does not exist, each `[ports."..."]` section that matches
/// no interface here, and no port at all ("nothing managed" is not "ok").
pub fn node<'a>(
    ports: impl IntoIterator<Item = (&'a str, &'a Health)>,
    missing: &[&str],
    unmatched: &[crate::config::unmatched::Unmatched],
    config_refused: Option<&str>,
    state_dir: &crate::state::StateDirHealth,
) -> Health {
    let mut problems = Vec::new();
    if let Some(why) = config_refused {
        problems.push(format!(
            "the configuration file was refused at its last reload ({why}): the \
             configuration before it runs"
        ));
    }
    if let Some(p) = &state_dir.problem {
        problems.push(if p.reason.refuses_changes() {
            format!(
                "state directory ({}): {p}: runtime changes are refused",
                p.reason.as_str()
            )
        } else {
            format!("state directory ({}): {p}", p.reason.as_str())
        });
    }
    if let Some(s) = &state_dir.set_aside {
        let whereto = match &s.moved_to {
            Some(to) => format!("moved to {to}"),
            None => "left in place".to_string(),
        };
        problems.push(format!(
            "state file refused at start ({}), {whereto}: the runtime changes it held do \
             not run",
            s.why
        ));
    }
    let mut managed = 0usize;
    for (name, h) in ports {
        managed += 1;
        problems.extend(h.problems.iter().map(|p| format!("{name}: {p}")));
    }
    problems.extend(
        missing
            .iter()
            .map(|n| format!("{n}: no such interface (named with --interface)")),
    );
    problems.extend(
        unmatched
            .iter()
            .map(|u| format!("{u}: matches no interface on this host")),
    );
    if managed == 0 {
        problems.push(
            "no port managed: no interface here matches the configuration or --interface"
                .to_string(),
        );
    }
    Health::of(problems)
}

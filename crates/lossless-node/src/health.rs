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
use serde::Serialize;

use crate::pfc::{Direction, PortPfc};
use crate::protocol::Hardware;

/// A port's (or the node's) health: `healthy`, the problems in words, and the two
/// together as one line (`health`: "ok", or the problems joined with "; ").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
    fn of(problems: Vec<String>) -> Health {
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
    /// The PFC watchdog declared a storm on a priority (`pfc_off`: and `forward`
    /// turned PFC off on it).
    PfcStorm {
        priority: u8,
        direction: Direction,
        pfc_off: bool,
    },
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

/// A port's problems: the link, then DCBX, then the NIC, then PFC storms.
pub fn problems(s: &PortStatus, hardware: &Hardware, pfc: &PortPfc) -> Vec<Problem> {
    if !s.link_up {
        return vec![Problem::LinkDown];
    }
    let mut out = Vec::new();
    // DCBX runs only where the configuration lets it: enabled, LLDP both ways.
    if s.dcbx_active {
        let judged: Vec<FeatureView> = features(s).into_iter().filter(|f| f.judged).collect();
        match judged.first() {
            Some(f) if !s.peer_present => out.push(Problem::NoPeer(f.reason)),
            _ => out.extend(judged.iter().filter_map(feature_problem)),
        }
    }
    match hardware {
        Hardware::ReportOnly => {}
        Hardware::Probing => out.push(Problem::Probing),
        Hardware::Unsupported { reason } => out.push(Problem::NoDcbnl(reason.clone())),
        Hardware::Dcbnl { error, .. } => {
            if let Some(e) = error {
                out.push(Problem::Programming(e.clone()));
            }
        }
    }
    out.extend(storms(pfc));
    out
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
pub fn port(s: &PortStatus, hardware: &Hardware, pfc: &PortPfc) -> Health {
    Health::of(
        problems(s, hardware, pfc)
            .iter()
            .map(Problem::to_string)
            .collect(),
    )
}

/// The node's health: every port's problems after its name, and each interface named
/// on the command line that does not exist.
pub fn node<'a>(
    ports: impl IntoIterator<Item = (&'a str, &'a Health)>,
    missing: &[&str],
) -> Health {
    let mut problems = Vec::new();
    for (name, h) in ports {
        problems.extend(h.problems.iter().map(|p| format!("{name}: {p}")));
    }
    problems.extend(
        missing
            .iter()
            .map(|n| format!("{n}: no such interface (named with --interface)")),
    );
    Health::of(problems)
}

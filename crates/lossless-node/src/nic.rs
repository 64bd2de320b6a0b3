//! What the NIC holds against what this daemon meant it to hold: the parts of a
//! programming the driver refused, and the differences a read-back
//! (`DCB_CMD_IEEE_GET`) shows, each in words a person reads in `status` and
//! `dcbx show`.
//!
//! Two kinds of difference are told apart. Right after a programming, the NIC is read
//! back: what it holds then is the *baseline*, and where it differs from what was
//! meant, the driver did not keep what it was given (a normalisation, a firmware
//! agent): reported, never programmed again in a loop. A later read that differs from
//! the baseline is *drift*: someone changed the NIC behind the daemon's back (`dcb`,
//! `mlnx_qos`, lldpad, a firmware reset). Drift is counted and, with
//! `nic_drift = "repair"` (the default), programmed back once; with `"report"`, only
//! reported.

use lossless_wire::ieee::{AppPriority, EtsTable, Selector, Tsa};
use serde::{Deserialize, Serialize};

use crate::hardware::{HardwareError, NicState, Trust};

/// How often a port with `apply = "dcbnl"` reads its NIC back when nothing else
/// made it (a programming, `dcbx show`).
pub const READ_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);

pub use lossless_proto::nic::{app_text, DriftPolicy, Part, Refusal};

/// The driver took DSCP entries and refused every other selector with `EINVAL`, as
/// mlx5 (`mlx5e_dcbnl_ieee_setapp`), ice (`ice_dcbnl_setapp`) and hns3 do: said once
/// beside the refusals, so the reader knows why.
pub fn dscp_only(refused: &[Refusal], held: &[AppPriority]) -> bool {
    let mut any = false;
    for r in refused {
        if let Part::App(e) = r.part {
            if e.selector == Selector::DSCP || r.error.code.as_deref() != Some("EINVAL") {
                return false;
            }
            any = true;
        }
    }
    any && held.iter().any(|e| e.selector == Selector::DSCP)
}

pub use lossless_proto::hardware::CeePg;

/// What this daemon meant the NIC to hold after its last programming.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Meant {
    /// ETS, when this daemon programs it (`None`: the driver's own is left).
    pub ets: Option<EtsTable>,
    /// PFC priorities, bit p = priority p.
    pub pfc: Option<u8>,
    /// Our APP entries the driver took.
    pub apps: Vec<AppPriority>,
    /// The trust order we set.
    pub trust: Option<Trust>,
    /// ETS as it was last programmed (willing, recommendation and all): a program
    /// that asks for nothing else is not sent again.
    #[serde(default, skip_serializing)]
    pub ets_program: Option<crate::hardware::EtsProgram>,
    /// CEE DCBX, when the port runs it: the PFC priorities and the priority groups
    /// (PGIDs, shares) last programmed.
    #[serde(default)]
    pub cee_pfc: Option<u8>,
    #[serde(default)]
    pub cee_pg: Option<CeePg>,
}

/// One way the NIC differs from what was meant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Difference {
    /// The NIC runs PFC on other priorities.
    Pfc { nic: u8, meant: u8 },
    /// The NIC's ETS differs in a priority's class, or a used class's algorithm or
    /// share.
    Ets { nic: EtsTable, meant: EtsTable },
    /// An APP entry of ours the NIC's table no longer holds.
    AppMissing { entry: AppPriority },
    /// An entry someone else put in the table for a selector and protocol of ours,
    /// to another priority.
    AppConflict {
        theirs: AppPriority,
        ours: AppPriority,
    },
    /// DSCP trust was set and the NIC trusts something else first.
    Trust { nic: Vec<u8> },
    /// CEE DCBX: the NIC's priority groups differ (PGID per priority, or a used
    /// group's share).
    Pg { nic: [u8; 8], meant: [u8; 8] },
}

/// `3,4` or `none`.
pub fn priorities_text(bits: u8) -> String {
    let list: Vec<String> = (0..8u8)
        .filter(|p| bits & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect();
    if list.is_empty() {
        "none".into()
    } else {
        list.join(",")
    }
}

fn selector_word(s: u8) -> String {
    match s {
        255 => "pcp".into(),
        s => Selector(s)
            .name()
            .map_or_else(|| format!("selector {s}"), str::to_string),
    }
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Pfc { nic, meant } => write!(
                f,
                "the NIC runs PFC on {}, not on {} as programmed",
                priorities_text(*nic),
                priorities_text(*meant)
            ),
            Difference::Ets { nic, meant } => {
                let moved: Vec<String> = (0..8)
                    .filter(|&p| nic.prio_tc[p] != meant.prio_tc[p])
                    .map(|p| {
                        format!(
                            "priority {p} in TC {} not {}",
                            nic.prio_tc[p], meant.prio_tc[p]
                        )
                    })
                    .collect();
                if moved.is_empty() {
                    f.write_str(
                        "the NIC's ETS bandwidth or algorithms differ from what was programmed",
                    )
                } else {
                    write!(f, "the NIC's ETS differs: {}", moved.join(", "))
                }
            }
            Difference::AppMissing { entry } => {
                write!(f, "APP {}: no longer in the NIC's table", app_text(entry))
            }
            Difference::AppConflict { theirs, ours } => write!(
                f,
                "APP {} in the NIC's table (not set by losslessd) conflicts with {}",
                app_text(theirs),
                app_text(ours)
            ),
            Difference::Pg { nic, meant } => {
                let list = |v: &[u8; 8]| v.iter().map(u8::to_string).collect::<Vec<_>>().join(",");
                write!(
                    f,
                    "the NIC's priority groups differ: PGIDs {} (shares aside), not {}",
                    list(nic),
                    list(meant)
                )
            }
            Difference::Trust { nic } => {
                let words: Vec<String> = nic.iter().map(|s| selector_word(*s)).collect();
                let order = if words.is_empty() {
                    "nothing".to_string()
                } else {
                    words.join(" then ")
                };
                write!(
                    f,
                    "the NIC trusts {order} first, not DSCP: the DSCP entries do not classify"
                )
            }
        }
    }
}

impl Difference {
    /// The same thing differs (the values aside): a PFC, ETS or trust difference, or
    /// one about the same APP entry. Drift is a difference of another kind than the
    /// read-back after the last programming had: a driver that keeps ETS its own way
    /// may report other bandwidths from one read to the next.
    pub fn same_kind(&self, other: &Difference) -> bool {
        match (self, other) {
            (Difference::Pfc { .. }, Difference::Pfc { .. })
            | (Difference::Ets { .. }, Difference::Ets { .. })
            | (Difference::Trust { .. }, Difference::Trust { .. })
            | (Difference::Pg { .. }, Difference::Pg { .. }) => true,
            (Difference::AppMissing { entry: a }, Difference::AppMissing { entry: b }) => a == b,
            (
                Difference::AppConflict { theirs: a, .. },
                Difference::AppConflict { theirs: b, .. },
            ) => a == b,
            _ => false,
        }
    }

    /// Whether this difference, in the NIC as read (`nic`), can make lossless
    /// traffic lossy: PFC elsewhere, a missing or conflicting APP entry, trust other
    /// than DSCP, or an ETS that leaves a PFC priority in an ETS class with 0 %.
    pub fn risks_loss(&self, nic: &NicState) -> bool {
        match self {
            Difference::Ets { nic: t, .. } => {
                let pfc = nic.pfc_enabled().unwrap_or(0);
                (0..8).filter(|p| pfc & (1 << p) != 0).any(|p| {
                    let tc = usize::from(t.prio_tc[p] & 7);
                    t.tsa[tc] == Tsa::ETS && t.tc_bw[tc] == 0
                })
            }
            _ => true,
        }
    }
}

/// The classes that carry a priority (every class a priority maps to).
fn used_tcs(t: &EtsTable) -> u8 {
    t.prio_tc.iter().fold(0u8, |m, &tc| m | (1u8 << (tc & 7)))
}

fn ets_differs(nic: &EtsTable, meant: &EtsTable) -> bool {
    if nic.prio_tc != meant.prio_tc {
        return true;
    }
    let used = used_tcs(meant);
    (0..8).filter(|tc| used & (1 << tc) != 0).any(|tc| {
        nic.tsa[tc] != meant.tsa[tc]
            || (meant.tsa[tc] == Tsa::ETS && nic.tc_bw[tc] != meant.tc_bw[tc])
    })
}

/// Where the NIC differs from what was meant, from a read-back.
pub fn differences(meant: &Meant, nic: &NicState) -> Vec<Difference> {
    let mut out = Vec::new();
    if let (Some(m), Some(n)) = (meant.pfc, nic.pfc_enabled()) {
        if m != n {
            out.push(Difference::Pfc { nic: n, meant: m });
        }
    }
    if let (Some(m), Some(n)) = (meant.ets, nic.ets) {
        if ets_differs(&n, &m) {
            out.push(Difference::Ets { nic: n, meant: m });
        }
    }
    for ours in &meant.apps {
        if !nic.apps.contains(ours) {
            out.push(Difference::AppMissing { entry: *ours });
        }
        for theirs in &nic.apps {
            let same_key = theirs.selector == ours.selector && theirs.protocol == ours.protocol;
            if same_key && theirs.priority != ours.priority && !meant.apps.contains(theirs) {
                out.push(Difference::AppConflict {
                    theirs: *theirs,
                    ours: *ours,
                });
            }
        }
    }
    if let Some(c) = nic.cee {
        if let Some(m) = meant.cee_pfc.filter(|m| *m != c.pfc_running()) {
            out.push(Difference::Pfc {
                nic: c.pfc_running(),
                meant: m,
            });
        }
        if let (Some((pgid, percent)), Some((nic_pgid, nic_percent))) = (meant.cee_pg, c.pg) {
            let used = |g: u8| pgid.contains(&g);
            let shares = (0..8u8)
                .filter(|g| used(*g))
                .any(|g| nic_percent[usize::from(g)] != percent[usize::from(g)]);
            if nic_pgid != pgid || shares {
                out.push(Difference::Pg {
                    nic: nic_pgid,
                    meant: pgid,
                });
            }
        }
    }
    if meant.trust == Some(Trust::DscpThenPcp) && nic.trusts_dscp() == Some(false) {
        out.push(Difference::Trust {
            nic: nic.trust.clone().unwrap_or_default(),
        });
    }
    out
}

/// What a port knows of its NIC: refusals, the last read, the baseline, drift.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NicWatch {
    /// Parts of the programming the driver refused (not sent again until what is
    /// wanted changes, the link comes back or the configuration is reloaded).
    pub refused: Vec<Refusal>,
    /// What the last programming meant the NIC to hold (boxed, as are the
    /// read-backs: a port that programs no NIC pays a pointer for each, not the
    /// tables; see tests/port_memory.rs).
    pub meant: Option<Box<Meant>>,
    /// The last read-back.
    pub state: Option<Box<NicState>>,
    /// When it was taken (the node's monotonic clock).
    #[serde(skip)]
    pub read_at: Option<lossless_dcbx::Instant>,
    /// Why the last read-back failed.
    pub read_error: Option<String>,
    /// What the NIC held right after the last programming.
    #[serde(skip)]
    pub baseline: Option<Box<NicState>>,
    /// Reads that found drift, and the programmings that repaired it.
    pub drift_detected: u64,
    pub drift_repaired: u64,
    /// The next periodic read.
    #[serde(skip)]
    pub next_read: Option<lossless_dcbx::Instant>,
    /// The next read is the baseline (a CEE programming, which reads nothing back
    /// itself, asked for it).
    #[serde(skip)]
    pub baseline_next: bool,
}

impl NicWatch {
    /// Where the NIC differs from what was meant, by the last read.
    pub fn differences(&self) -> Vec<Difference> {
        match (&self.meant, &self.state) {
            (Some(m), Some(s)) => differences(m, s),
            _ => Vec::new(),
        }
    }

    /// Where the NIC differed from what was meant right after the last programming:
    /// what the driver did not keep of it.
    pub fn baseline_differences(&self) -> Vec<Difference> {
        match (&self.meant, &self.baseline) {
            (Some(m), Some(b)) => differences(m, b),
            _ => Vec::new(),
        }
    }

    /// The differences that are health problems: every drift (what changed since
    /// the last programming), and of what the driver never kept, what can make
    /// lossless traffic lossy (ETS the driver keeps its own way is reported in `dcbx
    /// show`, and a problem only where it leaves a PFC priority in a class with no
    /// bandwidth: ice, in DSCP mode, keeps priority n on class n whatever it is told).
    pub fn problem_differences(&self) -> Vec<Difference> {
        let baseline = self.baseline_differences();
        self.differences()
            .into_iter()
            .filter(|d| {
                !baseline.iter().any(|b| b.same_kind(d))
                    || match &self.state {
                        Some(s) => d.risks_loss(s),
                        None => true,
                    }
            })
            .collect()
    }

    /// The NIC holds all of `program` already, by what was last programmed and the
    /// last read-back: sending it again would change nothing (and on ice, whose
    /// driver closes and reopens the netdev for a change, would flap the link for
    /// nothing).
    pub fn holds(&self, program: &crate::hardware::IeeeProgram) -> bool {
        let Some(m) = &self.meant else {
            return false;
        };
        let ets_same = match &program.ets {
            None => true,
            Some(e) => m.ets_program.as_ref() == Some(e),
        };
        ets_same
            && m.pfc == Some(program.pfc_enabled)
            && program.app_add.is_empty()
            && program.app_del.is_empty()
            && program.trust.is_none()
            && self.drifted_differences().is_empty()
    }

    /// The differences the last programming's read-back did not have: drift. What
    /// the driver never kept (ice keeps priority n on class n in DSCP mode) is not
    /// programmed again: each time would be the same answer, and on ice a link flap.
    pub fn drifted_differences(&self) -> Vec<Difference> {
        let baseline = self.baseline_differences();
        self.differences()
            .into_iter()
            .filter(|d| !baseline.iter().any(|b| b.same_kind(d)))
            .collect()
    }

    /// The refusal of `part`, if the driver refused it.
    pub fn refusal(&self, part: &Part) -> Option<&Refusal> {
        self.refused.iter().find(|r| &r.part == part)
    }

    /// Records the driver's answer to `part`: a refusal replaces an older one.
    pub fn answer(&mut self, part: Part, result: &Result<(), HardwareError>) {
        self.refused.retain(|r| r.part != part);
        if let Err(e) = result {
            self.refused.push(Refusal {
                part,
                error: e.clone(),
            });
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::hardware::{HardwareErrorKind, IeeePfc};

    fn app(selector: Selector, protocol: u16, priority: u8) -> AppPriority {
        AppPriority {
            priority,
            selector,
            protocol,
        }
    }

    fn einval() -> HardwareError {
        HardwareError::new(HardwareErrorKind::Refused, "refused").with_code("EINVAL")
    }

    #[test]
    fn a_refused_entry_says_which_and_the_drivers_answer() {
        let r = Refusal {
            part: Part::App(app(Selector::UDP, 4791, 3)),
            error: einval(),
        };
        assert_eq!(
            r.to_string(),
            "APP udp 4791 (RoCEv2) -> 3: refused by the driver (EINVAL)"
        );
        assert!(dscp_only(
            std::slice::from_ref(&r),
            &[app(Selector::DSCP, 26, 3)]
        ));
        assert!(
            !dscp_only(&[r], &[]),
            "no DSCP entry held: nothing to conclude"
        );
    }

    #[test]
    fn someone_elses_entry_for_our_dscp_is_a_conflict_and_a_missing_one_is_named() {
        let ours = app(Selector::DSCP, 26, 3);
        let meant = Meant {
            apps: vec![ours, app(Selector::DSCP, 48, 6)],
            pfc: Some(0x08),
            ..Meant::default()
        };
        let nic = NicState {
            apps: vec![ours, app(Selector::DSCP, 26, 5)],
            pfc: Some(IeeePfc {
                enabled: 0x10,
                ..IeeePfc::default()
            }),
            ..NicState::default()
        };
        let d = differences(&meant, &nic);
        let text: Vec<String> = d.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "the NIC runs PFC on 4, not on 3 as programmed",
                "APP dscp 26 (AF31) -> 5 in the NIC's table (not set by losslessd) conflicts with dscp 26 (AF31) -> 3",
                "APP dscp 48 (CS6) -> 6: no longer in the NIC's table",
            ]
        );
    }

    #[test]
    fn the_same_ets_in_unused_classes_is_no_difference() {
        let strict = Tsa::STRICT;
        let meant = EtsTable {
            prio_tc: [0, 0, 0, 1, 0, 0, 2, 0],
            tsa: [
                Tsa::ETS,
                Tsa::ETS,
                strict,
                strict,
                strict,
                strict,
                strict,
                strict,
            ],
            tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
        };
        let mut nic = meant;
        nic.tc_bw[5] = 7; // a class no priority uses
        assert!(!ets_differs(&nic, &meant));
        nic.tc_bw[1] = 40;
        assert!(ets_differs(&nic, &meant));
    }

    #[test]
    fn trust_other_than_dscp_is_named() {
        let meant = Meant {
            trust: Some(Trust::DscpThenPcp),
            ..Meant::default()
        };
        let nic = NicState {
            trust: Some(vec![255]),
            ..NicState::default()
        };
        assert_eq!(
            differences(&meant, &nic)[0].to_string(),
            "the NIC trusts pcp first, not DSCP: the DSCP entries do not classify"
        );
    }
}

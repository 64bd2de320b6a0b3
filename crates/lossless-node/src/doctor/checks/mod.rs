//! The checks, one function each: facts in, a verdict with its evidence and fix out.

use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, Selector};

use super::class::{self, RoceClass, Source, ROCE_UDP};
use super::facts::{discard_priority, Classes, DaemonPort, PortFacts, DISCARD_STATS_HELP};
use super::{Check, Status, CHECKS};
use crate::config::RoceMode;
use crate::nic::app_text;
use crate::protocol::Hardware;
use crate::roce::{tos_text, Reading};

mod dcb;
mod host;
mod link;

/// dcbnl's DCBX mode bit: the device's firmware runs the DCBX agent
/// (`DCB_CAP_DCBX_LLD_MANAGED`).
const DCBX_LLD_MANAGED: u8 = 0x02;
/// Ethernet header and FCS around an MTU-sized payload: 802.3's basic frame (1518 for
/// an MTU of 1500), what the Maximum Frame Size TLV counts.
const FRAME_OVERHEAD: u32 = 18;
/// One 802.1Q tag more.
const VLAN_TAG: u32 = 4;
/// The drivers that take DSCP entries only and trust DSCP from their first one on
/// (mlx5e_dcbnl_ieee_setapp, ice_dcbnl_setapp, hns3_dcbnl_ieee_setapp).
const DSCP_TRUSTING_DRIVERS: [&str; 3] = ["mlx5_core", "ice", "hns3"];

struct Verdict {
    status: Status,
    evidence: String,
    fix: Option<String>,
}

fn ok(evidence: impl Into<String>) -> Verdict {
    Verdict {
        status: Status::Ok,
        evidence: evidence.into(),
        fix: None,
    }
}

fn problem(evidence: impl Into<String>, fix: impl Into<String>) -> Verdict {
    Verdict {
        status: Status::Problem,
        evidence: evidence.into(),
        fix: Some(fix.into()),
    }
}

fn unknown(evidence: impl Into<String>, fix: impl Into<String>) -> Verdict {
    Verdict {
        status: Status::Unknown,
        evidence: evidence.into(),
        fix: Some(fix.into()),
    }
}

/// Parts of one check, combined: any problem makes a problem, else any unknown an
/// unknown; the evidence of every part, the fixes of the parts that are not ok.
#[derive(Default)]
struct Parts {
    status: Option<Status>,
    evidence: Vec<String>,
    fixes: Vec<String>,
}

impl Parts {
    fn ok(&mut self, e: impl Into<String>) {
        self.add(Status::Ok, e.into(), None);
    }
    fn problem(&mut self, e: impl Into<String>, fix: impl Into<String>) {
        self.add(Status::Problem, e.into(), Some(fix.into()));
    }
    fn unknown(&mut self, e: impl Into<String>, fix: impl Into<String>) {
        self.add(Status::Unknown, e.into(), Some(fix.into()));
    }
    fn add(&mut self, s: Status, e: String, fix: Option<String>) {
        // Problem > Unknown > Ok.
        let rank = |s: Status| match s {
            Status::Ok => 0,
            Status::Unknown => 1,
            Status::Problem => 2,
        };
        if self.status.is_none_or(|cur| rank(s) > rank(cur)) {
            self.status = Some(s);
        }
        self.evidence.push(e);
        if let Some(f) = fix {
            if !self.fixes.contains(&f) {
                self.fixes.push(f);
            }
        }
    }
    fn verdict(self) -> Verdict {
        let status = self.status.unwrap_or(Status::Unknown);
        Verdict {
            status,
            evidence: self.evidence.join("; "),
            fix: (status != Status::Ok && !self.fixes.is_empty()).then(|| self.fixes.join("; ")),
        }
    }
}

/// Every check of one port, in the order of [`CHECKS`].
pub fn check_port(f: &PortFacts) -> Vec<Check> {
    let c = Ctx::new(f);
    let verdicts = [
        c.roce_class(),
        c.dcbx(),
        c.pfc(),
        c.app(),
        c.nic(),
        c.trust(),
        c.tos(),
        c.roce_mode(),
        c.ecn(),
        c.cnp(),
        c.global_pause(),
        c.fw_agent(),
        c.mtu(),
        c.headroom(),
        c.watchdog(),
        c.discards(),
    ];
    CHECKS
        .iter()
        .zip(verdicts)
        .map(|(name, v)| Check {
            port: f.port.clone(),
            check: (*name).to_string(),
            status: v.status,
            evidence: v.evidence,
            fix: v.fix,
        })
        .collect()
}

struct Ctx<'a> {
    f: &'a PortFacts,
    d: Option<&'a DaemonPort>,
    class: Option<RoceClass>,
    /// Why the class is not known (when it is not).
    no_class: String,
}

fn priorities(m: PriorityMap) -> String {
    let list: Vec<String> = m.priorities().map(|p| p.to_string()).collect();
    if list.is_empty() {
        "no priority".into()
    } else {
        list.join(",")
    }
}

fn entries_text(apps: &[AppPriority]) -> String {
    if apps.is_empty() {
        return "none".into();
    }
    apps.iter().map(app_text).collect::<Vec<_>>().join(", ")
}

fn reading_why<T>(r: &Reading<T>) -> String {
    match r {
        Reading::Value(_) => String::new(),
        Reading::NotExposed(w) => format!("is not exposed: {w}"),
        Reading::Failed(e) => format!("could not be read: {e}"),
    }
}

impl<'a> Ctx<'a> {
    fn new(f: &'a PortFacts) -> Ctx<'a> {
        let d = f.daemon.port();
        let tos_dscp = f.host.tos.value().map(|t| t >> 2);
        let cnp = f.host.cnp_dscp.value().copied();
        let mut ctx = Ctx {
            f,
            d,
            class: None,
            no_class: String::new(),
        };
        let pfc = ctx.ours_pfc().map(|(m, _)| m);
        ctx.class = if let Some(g) = f.given {
            Some(RoceClass {
                priority: g.priority,
                dscp: g.dscp,
                source: Source::Given,
                entries: Vec::new(),
            })
        } else if let Some(d) = d {
            let apps = class::rule_entries(&d.dcbx.app_rules);
            class::decide(&apps, pfc, tos_dscp, cnp, Source::Daemon)
        } else if let Reading::Value(n) = &f.nic {
            class::decide(&n.state.apps, pfc, tos_dscp, cnp, Source::Nic)
        } else {
            None
        };
        if ctx.class.is_none() {
            ctx.no_class = "RoCE's priority is not known (see roce_class)".into();
        }
        ctx
    }

    fn port(&self) -> &str {
        &self.f.port
    }

    /// `set KEY in [ports."PORT"] ..., then lossless reload`.
    fn config(&self, keys: &str) -> String {
        format!(
            "set {keys} in [ports.\"{}\"] of losslessd's configuration, then `lossless reload`",
            self.port()
        )
    }

    /// `lossless roce set PORT KEY=VALUE` (a runtime change losslessd writes at once
    /// and keeps).
    fn roce_set(&self, kv: &str) -> String {
        format!("lossless roce set {} {kv}", self.port())
    }

    /// What lets the NIC be read: a driver with dcbnl, or the rights to ask.
    fn nic_fix(&self) -> String {
        match &self.f.nic {
            Reading::NotExposed(_) => "a NIC with DCB (dcbnl) is needed for lossless RoCE".into(),
            _ => "run as root (CAP_NET_ADMIN) in the port's network namespace".into(),
        }
    }

    /// A path under the sysfs root.
    fn path(&self, rel: &str) -> String {
        format!("{}/{rel}", self.f.sysfs.trim_end_matches('/'))
    }

    fn daemon_missing(&self) -> (String, String) {
        match &self.f.daemon {
            crate::doctor::Daemon::Without { why, fix } => (why.clone(), fix.clone()),
            crate::doctor::Daemon::Port(_) => (String::new(), String::new()),
        }
    }

    /// The PFC priorities this end runs, and where that was read: the daemon's
    /// operational PFC, else the NIC's.
    fn ours_pfc(&self) -> Option<(PriorityMap, String)> {
        if let Some(d) = self.d {
            let (m, why) = d.oper_pfc();
            return Some((m, format!("in operation ({why})")));
        }
        match &self.f.nic {
            Reading::Value(n) => n
                .state
                .pfc
                .map(|p| (PriorityMap(p.enabled), "in the NIC".to_string())),
            _ => None,
        }
    }

    /// The transmission classes: as the NIC holds them, else as the daemon runs them.
    fn classes(&self) -> Option<(Classes, &'static str)> {
        if let Reading::Value(n) = &self.f.nic {
            if let Some(e) = n.state.ets {
                return Some((Classes::Ets(e), "as the NIC holds it"));
            }
        }
        self.d
            .and_then(DaemonPort::oper_classes)
            .map(|c| (c, "as losslessd runs it"))
    }

    /// The APP entries this end runs: the daemon's in operation, else the NIC's.
    fn oper_apps(&self) -> Option<(Vec<AppPriority>, &'static str)> {
        if let Some(d) = self.d {
            return Some((d.oper_app(), "in operation"));
        }
        match &self.f.nic {
            Reading::Value(n) => Some((n.state.apps.clone(), "in the NIC")),
            _ => None,
        }
    }
}

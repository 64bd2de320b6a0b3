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

    fn roce_class(&self) -> Verdict {
        if let Some(c) = &self.class {
            return ok(format!("RoCE runs on {}", c.words()));
        }
        let cnp = self.f.host.cnp_dscp.value().copied().unwrap_or(48);
        if let Some(d) = self.d {
            let apps = class::rule_entries(&d.dcbx.app_rules);
            return problem(
                format!(
                    "the APP entries of the configuration losslessd runs send neither udp 4791 \
                     nor a DSCP other than the CNPs' ({cnp}) to a PFC priority: RoCE traffic is \
                     not classified (entries: {})",
                    entries_text(&apps)
                ),
                format!(
                    "lossless profile roce --port {} --apply-to-daemon (RoCEv2 on priority 3, \
                     DSCP 26), or lossless dcbx set {} app add dscp 26 3",
                    self.port(),
                    self.port()
                ),
            );
        }
        let (why, fix) = self.daemon_missing();
        match &self.f.nic {
            Reading::Value(n) => problem(
                format!(
                    "{why}; the NIC's APP table sends neither udp 4791 nor a DSCP other than \
                     the CNPs' ({cnp}) to a PFC priority (entries: {}): RoCE traffic is not \
                     classified",
                    entries_text(&n.state.apps)
                ),
                format!(
                    "dcb app add dev {p} dscp-prio 26:3 and dcb pfc set dev {p} prio-pfc 3:on \
                     (RoCEv2 on priority 3, DSCP 26), or run losslessd with `lossless profile \
                     roce --port {p}`; --priority and --dscp name the class if it is set \
                     elsewhere",
                    p = self.port()
                ),
            ),
            r => unknown(
                format!(
                    "{why}; the NIC's APP table {}: RoCE's priority is not known",
                    reading_why(r)
                ),
                format!("{fix}, or give the class with --priority and --dscp"),
            ),
        }
    }

    fn dcbx(&self) -> Verdict {
        let Some(d) = self.d else {
            let (why, fix) = self.daemon_missing();
            let mut e = format!("{why}: what DCBX agreed with the peer is known to losslessd");
            if let Reading::Value(n) = &self.f.nic {
                if n.state.dcbx.is_some_and(|m| m & DCBX_LLD_MANAGED != 0) {
                    e.push_str("; the NIC's firmware runs DCBX (dcbnl DCBX mode LLD_MANAGED)");
                }
            }
            return unknown(e, fix);
        };
        let port = self.port();
        let version = if d.ieee() {
            "IEEE 802.1Qaz"
        } else {
            "CEE DCBX"
        };
        if !d.link_up {
            return problem(
                "the link is down",
                format!("ip link set {port} up, and check the cable and the switch port"),
            );
        }
        if !d.dcbx.dcbx_enabled {
            return problem(
                "DCBX is off on the port (dcbx.enabled = false)",
                self.config(
                    "dcbx.enabled = true (or dcbx.mode = \"static\" facing a switch without DCBX)",
                ),
            );
        }
        if d.is_static() {
            // Nothing negotiated: the neighbour's PFC, when it sends a TLV, must match.
            let (ours, _) = d.oper_pfc();
            return match d.peer_pfc() {
                Some(peer) if peer != ours => problem(
                    format!(
                        "static mode (dcbx.mode = \"static\"), and the neighbour's DCBX TLVs say \
                         PFC on {}, this port runs PFC on {}",
                        priorities(peer),
                        priorities(ours)
                    ),
                    format!(
                        "configure the same PFC at both ends: lossless dcbx set {port} pfc \
                         --priorities {}, or the switch's",
                        ours.priorities()
                            .map(|p| p.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                ),
                _ => ok(format!(
                    "static mode (dcbx.mode = \"static\"): nothing negotiated, the configuration \
                     runs as written; {} LLDP neighbour{}",
                    d.neighbors,
                    if d.neighbors == 1 { "" } else { "s" }
                )),
            };
        }
        if !d.dcbx.dcbx_active {
            return problem(
                format!(
                    "DCBX does not run on the port (LLDP admin status {})",
                    d.admin_status
                ),
                self.config("lldp admin status rxtx (the default)"),
            );
        }
        if !d.dcbx.peer_present {
            let silent = !d.neighbor_dcbx.is_empty() && d.neighbor_dcbx.iter().all(|k| k == "none");
            let why = if silent {
                "the LLDP neighbour sends no DCBX TLV".to_string()
            } else if d.ieee() {
                d.dcbx.ieee.pfc.reason_text.clone()
            } else {
                d.dcbx.pfc.reason_text.clone()
            };
            let fix = if silent {
                format!(
                    "facing a switch that sends LLDP without DCBX (SONiC): lossless dcbx set \
                     {port} mode static; or turn DCBX (IEEE 802.1Qaz) on for the switch port"
                )
            } else {
                format!(
                    "turn DCBX (IEEE 802.1Qaz) on for the switch port facing {port}; facing a \
                     switch that sends LLDP without DCBX (SONiC): lossless dcbx set {port} mode \
                     static"
                )
            };
            return problem(format!("no DCBX peer: {why}"), fix);
        }
        let mut bad: Vec<String> = if d.ieee() {
            let i = &d.dcbx.ieee;
            [i.ets.fault("ets"), i.pfc.fault("pfc"), i.app.fault("app")]
                .into_iter()
                .flatten()
                .collect()
        } else {
            let c = &d.dcbx;
            [c.pg.fault("pg"), c.pfc.fault("pfc"), c.app.fault("app")]
                .into_iter()
                .flatten()
                .collect()
        };
        if d.dcbx.any_error && bad.is_empty() {
            bad.push("a feature is in error".into());
        }
        if bad.is_empty() {
            let features = if d.ieee() {
                "ETS, PFC and APP agreed"
            } else {
                "PG, PFC and APP in sync"
            };
            ok(format!(
                "{version} with the peer (mode {}): {features}",
                d.dcbx.mode.configured
            ))
        } else {
            problem(
                format!("{version} with the peer: {}", bad.join("; ")),
                format!(
                    "make the two ends' configurations agree: `lossless dcbx show {port}` says \
                     each feature's admin, peer and oper values; take the switch's with \
                     lossless dcbx set {port} pfc --willing yes (likewise ets, app), or change \
                     the switch's"
                ),
            )
        }
    }

    fn pfc(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let p = c.priority;
        let port = self.port();
        let mut parts = Parts::default();
        match self.ours_pfc() {
            Some((m, whence)) if m.contains(p) => {
                parts.ok(format!("PFC on {} here, {whence}", priorities(m)))
            }
            Some((m, whence)) => {
                let fix = match self.d {
                    Some(_) if whence.contains("peer") => format!(
                        "the peer's PFC runs here (willing): turn PFC on for priority {p} on \
                         the switch port, or impose it: lossless dcbx set {port} pfc --willing \
                         no --priorities {p}"
                    ),
                    Some(_) => format!("lossless dcbx set {port} pfc --priorities {p}"),
                    None => format!("dcb pfc set dev {port} prio-pfc {p}:on"),
                };
                parts.problem(
                    format!(
                        "PFC on {} here, {whence}: not on RoCE's priority {p}",
                        priorities(m)
                    ),
                    fix,
                );
            }
            None => {
                let why = match (&self.f.nic, self.d) {
                    (Reading::Value(_), _) => "the driver reports no PFC (ieee_getpfc)".into(),
                    (r, _) => format!("the NIC's PFC {}", reading_why(r)),
                };
                parts.unknown(
                    format!("PFC here is not known: {why}"),
                    self.daemon_missing().1,
                );
            }
        }
        let peer = match self.d {
            Some(d) => d.peer_pfc().ok_or_else(|| {
                if d.is_static() {
                    "the neighbour sends no IEEE 802.1Qaz PFC TLV (static mode)".to_string()
                } else {
                    "the peer sends no PFC TLV".to_string()
                }
            }),
            None => match &self.f.nic {
                Reading::Value(n) if n.peer_pfc.is_some() => n.peer_pfc.ok_or_else(String::new),
                _ => Err(format!(
                    "{}: the peer's PFC TLV is known to losslessd",
                    self.daemon_missing().0
                )),
            },
        };
        match peer {
            Ok(m) if m.contains(p) => parts.ok(format!("the peer's PFC on {}", priorities(m))),
            Ok(m) => parts.problem(
                format!("the peer's PFC on {}: not on {p}", priorities(m)),
                format!("turn PFC on for priority {p} on the peer's port (the switch port facing {port})"),
            ),
            Err(why) => parts.unknown(
                format!("the peer's PFC is not known: {why}"),
                format!(
                    "check PFC on priority {p} in the switch's configuration for the port facing \
                     {port}"
                ),
            ),
        }
        parts.verdict()
    }

    fn app(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let p = c.priority;
        let port = self.port();
        let Some((apps, whence)) = self.oper_apps() else {
            let (why, fix) = self.daemon_missing();
            return unknown(
                format!("{why}; the NIC's APP table {}", reading_why(&self.f.nic)),
                fix,
            );
        };
        let mut parts = Parts::default();
        let find = |sel: &[Selector], proto: u16| -> Vec<AppPriority> {
            apps.iter()
                .filter(|e| sel.contains(&e.selector) && e.protocol == proto)
                .copied()
                .collect()
        };
        let add_fix = |what: &str| match self.d {
            Some(_) => format!("lossless dcbx set {port} app add {what} {p}"),
            None => match what.split_once(' ') {
                Some(("dscp", d)) => format!("dcb app add dev {port} dscp-prio {d}:{p}"),
                _ => format!("dcb app add dev {port} dgram-port-prio {ROCE_UDP}:{p}"),
            },
        };
        match c.dscp {
            Some(dscp) => {
                let got = find(&[Selector::DSCP], u16::from(dscp));
                if got.iter().any(|e| e.priority == p) {
                    parts.ok(format!("{} {whence}", entries_text(&got)));
                } else if got.is_empty() {
                    parts.problem(
                        format!("no APP entry for DSCP {dscp} {whence}"),
                        add_fix(&format!("dscp {dscp}")),
                    );
                } else {
                    parts.problem(
                        format!("{} {whence}: not to {p}", entries_text(&got)),
                        add_fix(&format!("dscp {dscp}")),
                    );
                }
            }
            None => parts.problem(
                format!("no DSCP entry sends RoCE to priority {p}: a NIC trusting DSCP classifies RoCEv2 by its DSCP"),
                add_fix("dscp 26"),
            ),
        }
        let udp = find(&[Selector::UDP, Selector::PORT], ROCE_UDP);
        if udp.iter().any(|e| e.priority == p) {
            parts.ok(format!("{} {whence}", entries_text(&udp)));
        } else if !udp.is_empty() {
            parts.problem(
                format!("{} {whence}: not to {p}", entries_text(&udp)),
                add_fix(&format!("udp {ROCE_UDP}")),
            );
        } else if self.d.is_some() {
            parts.problem(
                format!("no APP entry for udp {ROCE_UDP} (RoCEv2) {whence}"),
                add_fix(&format!("udp {ROCE_UDP}")),
            );
        } else {
            parts.ok(format!(
                "no udp {ROCE_UDP} entry in the NIC (drivers that take DSCP entries only refuse \
                 it; RoCEv2 is classified by its DSCP)"
            ));
        }
        // The peer classifying RoCE elsewhere.
        if let Some(peer) = self.d.and_then(DaemonPort::peer_app) {
            let other: Vec<AppPriority> = peer
                .iter()
                .filter(|e| e.priority != p)
                .filter(|e| {
                    (e.selector == Selector::DSCP
                        && c.dscp.is_some_and(|d| e.protocol == u16::from(d)))
                        || (matches!(e.selector, Selector::UDP | Selector::PORT)
                            && e.protocol == ROCE_UDP)
                })
                .copied()
                .collect();
            if !other.is_empty() {
                parts.problem(
                    format!("the peer sends {}", entries_text(&other)),
                    format!("map RoCE to priority {p} on the switch port facing {port} as well"),
                );
            }
        }
        parts.verdict()
    }

    fn nic(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let p = c.priority;
        let port = self.port();
        let fix = match self.d.map(|d| &d.hardware) {
            Some(Hardware::ReportOnly) => self.config(
                "apply = \"dcbnl\" (losslessd then programs the NIC with what it negotiates)",
            ),
            Some(_) => format!(
                "`lossless dcbx show {port}`: its nic row says what the driver holds and refused"
            ),
            None => {
                let mut s = format!("dcb pfc set dev {port} prio-pfc {p}:on");
                if let Some(d) = c.dscp {
                    s.push_str(&format!("; dcb app add dev {port} dscp-prio {d}:{p}"));
                }
                s
            }
        };
        let n = match &self.f.nic {
            Reading::Value(n) => n,
            Reading::NotExposed(why) => {
                return problem(
                    format!("the NIC has no DCB netlink ({why}): it runs no PFC the kernel set"),
                    "a NIC with DCB (dcbnl) is needed for lossless RoCE".to_string(),
                )
            }
            Reading::Failed(e) => {
                return unknown(
                    format!("the NIC could not be read back: {e}"),
                    "run as root (CAP_NET_ADMIN) in the port's network namespace".to_string(),
                )
            }
        };
        let mut parts = Parts::default();
        match n.state.pfc {
            Some(pfc) if PriorityMap(pfc.enabled).contains(p) => parts.ok(format!(
                "the NIC runs PFC on {}",
                priorities(PriorityMap(pfc.enabled))
            )),
            Some(pfc) => parts.problem(
                format!(
                    "the NIC runs PFC on {}, not on {p}",
                    priorities(PriorityMap(pfc.enabled))
                ),
                fix.clone(),
            ),
            None => parts.unknown(
                "the driver reports no PFC (ieee_getpfc)",
                "read it with the vendor's tool (mlnx_qos -i PORT)".replace("PORT", port),
            ),
        }
        if let Some(d) = self.d {
            let (oper, _) = d.oper_pfc();
            if let Some(pfc) = n.state.pfc {
                if PriorityMap(pfc.enabled) != oper {
                    parts.problem(
                        format!(
                            "losslessd runs PFC on {} in operation, the NIC on {}",
                            priorities(oper),
                            priorities(PriorityMap(pfc.enabled))
                        ),
                        fix.clone(),
                    );
                }
            }
        }
        if let Some(dscp) = c.dscp {
            let held: Vec<AppPriority> = n
                .state
                .apps
                .iter()
                .filter(|e| e.selector == Selector::DSCP && e.protocol == u16::from(dscp))
                .copied()
                .collect();
            if held.iter().any(|e| e.priority == p) {
                parts.ok(format!("it holds {}", entries_text(&held)));
            } else if held.is_empty() {
                parts.problem(format!("it holds no entry for DSCP {dscp}"), fix.clone());
            } else {
                parts.problem(format!("it holds {}, not to {p}", entries_text(&held)), fix);
            }
        }
        parts.verdict()
    }

    fn trust(&self) -> Verdict {
        let port = self.port();
        let fix = format!("dcb apptrust set dev {port} order dscp pcp");
        let n = match &self.f.nic {
            Reading::Value(n) => n,
            r => {
                return unknown(
                    format!("the NIC's trust order {}", reading_why(r)),
                    self.nic_fix(),
                )
            }
        };
        let words = |t: &[u8]| {
            t.iter()
                .map(|s| match *s {
                    255 => "pcp".to_string(),
                    s => Selector(s)
                        .name()
                        .map_or_else(|| format!("selector {s}"), str::to_string),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(t) = &n.state.trust {
            return if t.first() == Some(&Selector::DSCP.0) {
                ok(format!(
                    "the NIC trusts DSCP first (trust order: {})",
                    words(t)
                ))
            } else if t.is_empty() {
                problem("the NIC's trust order is empty: it trusts no marking", fix)
            } else {
                problem(
                    format!(
                        "the NIC trusts {} first (trust order: {}): RoCE's DSCP is not what picks \
                         its priority",
                        words(&t[..1]),
                        words(t)
                    ),
                    fix,
                )
            };
        }
        let driver = self.f.host.driver.clone().unwrap_or_else(|| "?".into());
        let dscp_held: Vec<AppPriority> = n
            .state
            .apps
            .iter()
            .filter(|e| e.selector == Selector::DSCP)
            .copied()
            .collect();
        if DSCP_TRUSTING_DRIVERS.contains(&driver.as_str()) {
            if dscp_held.is_empty() {
                problem(
                    format!(
                        "{driver} reports no trust order, and trusts PCP until it holds a DSCP \
                         APP entry: it holds none"
                    ),
                    match c_dscp(&self.class) {
                        Some((d, p)) => format!("dcb app add dev {port} dscp-prio {d}:{p}"),
                        None => format!("dcb app add dev {port} dscp-prio 26:3"),
                    },
                )
            } else {
                ok(format!(
                    "{driver} reports no trust order (no dcbnl getapptrust); it trusts DSCP from \
                     its first DSCP APP entry on, and holds {}",
                    entries_text(&dscp_held)
                ))
            }
        } else {
            unknown(
                format!(
                    "the driver ({driver}) reports no trust order (dcbnl getapptrust, Linux 6.2 \
                     and later): whether it classifies by DSCP is not known"
                ),
                format!("{fix} (where the driver takes it), or the vendor's tool"),
            )
        }
    }

    /// The RDMA device's words (`mlx5_0 port 1`), or why there is none.
    fn rdma(&self) -> Result<(String, u32), Verdict> {
        match &self.f.host.rdma {
            Some(r) => Ok((r.device.clone(), r.port)),
            None => Err(unknown(
                format!(
                    "{} has no RDMA device ({} has no entry): no RoCE on this port",
                    self.port(),
                    self.path(&format!("class/net/{}/device/infiniband", self.port()))
                ),
                "load the RDMA driver (mlx5_ib, irdma, bnxt_re, hns_roce)",
            )),
        }
    }

    fn tos(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        let Some(dscp) = c.dscp else {
            return unknown(
                format!(
                    "no DSCP maps to RoCE's priority {}: no ToS to compare",
                    c.priority
                ),
                "see app",
            );
        };
        let (dev, n) = match self.rdma() {
            Ok(r) => r,
            Err(v) => return v,
        };
        let want = (dscp << 2) | 2;
        let cm = self.path(&format!("kernel/config/rdma_cm/{dev}"));
        let mut parts = Parts::default();
        match &self.f.host.tos {
            Reading::Value(t) if t >> 2 == dscp => {
                parts.ok(format!("RDMA CM's default ToS on {dev} port {n} is {}", tos_text(*t)))
            }
            Reading::Value(t) => parts.problem(
                format!(
                    "RDMA CM's default ToS on {dev} port {n} is {}, not DSCP {dscp}: RDMA CM's \
                     connections leave lossy",
                    tos_text(*t)
                ),
                match self.d {
                    Some(_) => self.roce_set(&format!("tos={want}")),
                    None => format!(
                        "mkdir -p {cm} && echo {want} > {cm}/ports/{n}/default_roce_tos"
                    ),
                },
            ),
            r => parts.unknown(
                format!("RDMA CM's default ToS {}", reading_why(r)),
                format!("mount configfs (mount -t configfs none {}) and load rdma_cm (modprobe rdma_cm)", self.path("kernel/config")),
            ),
        }
        match &self.f.host.traffic_class {
            Reading::Value(t) if t >> 2 == dscp => {
                parts.ok(format!("the verbs traffic class is {}", tos_text(*t)))
            }
            Reading::Value(t) => parts.problem(
                format!(
                    "the verbs traffic class (mlx5_ib's tc/{n}/traffic_class) is {}, not DSCP \
                     {dscp}",
                    tos_text(*t)
                ),
                match self.d {
                    Some(_) => self.roce_set(&format!("traffic_class={want}")),
                    None => format!(
                        "echo {want} > {}",
                        self.path(&format!("class/infiniband/{dev}/tc/{n}/traffic_class"))
                    ),
                },
            ),
            // The inbox driver has none: verbs applications set their own.
            Reading::NotExposed(_) => {}
            Reading::Failed(e) => parts.unknown(
                format!("the verbs traffic class could not be read: {e}"),
                "run as root",
            ),
        }
        parts.verdict()
    }

    fn roce_mode(&self) -> Verdict {
        let (dev, n) = match self.rdma() {
            Ok(r) => r,
            Err(v) => return v,
        };
        let cm = self.path(&format!("kernel/config/rdma_cm/{dev}"));
        match &self.f.host.roce_mode {
            Reading::Value(RoceMode::V2) => ok(format!(
                "RDMA CM's default RoCE mode on {dev} port {n} is RoCE v2"
            )),
            Reading::Value(m) => problem(
                format!(
                    "RDMA CM's default RoCE mode on {dev} port {n} is {}: not routable, not \
                     classified by DSCP",
                    m.kernel_name()
                ),
                match self.d {
                    Some(_) => self.roce_set("roce_mode=v2"),
                    None => format!(
                        "mkdir -p {cm} && echo 'RoCE v2' > {cm}/ports/{n}/default_roce_mode"
                    ),
                },
            ),
            r => unknown(
                format!("RDMA CM's default RoCE mode {}", reading_why(r)),
                format!(
                    "mount configfs (mount -t configfs none {}) and load rdma_cm (modprobe \
                     rdma_cm)",
                    self.path("kernel/config")
                ),
            ),
        }
    }

    fn ecn(&self) -> Verdict {
        let Some(c) = &self.class else {
            return unknown(self.no_class.clone(), "see roce_class");
        };
        if let Err(v) = self.rdma() {
            return v;
        }
        let p = c.priority;
        let port = self.port();
        let mut parts = Parts::default();
        for (point, words, r) in [
            (
                "roce_rp",
                "reaction point (rate limiting)",
                &self.f.host.ecn_rp,
            ),
            ("roce_np", "notification point (CNPs)", &self.f.host.ecn_np),
        ] {
            let key = if point == "roce_rp" {
                "ecn_rp"
            } else {
                "ecn_np"
            };
            match r {
                Reading::Value(m) if m.contains(p) => {
                    parts.ok(format!("ECN {words} on {}", priorities(*m)))
                }
                Reading::Value(m) => parts.problem(
                    format!("ECN {words} on {}: not on {p}", priorities(*m)),
                    match self.d {
                        Some(_) => self.roce_set(&format!("{key}={p}")),
                        None => format!(
                            "echo 1 > {}",
                            self.path(&format!("class/net/{port}/ecn/{point}/enable/{p}"))
                        ),
                    },
                ),
                Reading::NotExposed(w) => parts.unknown(
                    format!("ECN {words} per priority is not exposed: {w}"),
                    "with the inbox mlx5 driver DCQCN follows the firmware (mlxconfig's \
                     ROCE_CC_PRIO_MASK_P1); NVIDIA's driver package exposes it per priority",
                ),
                Reading::Failed(e) => {
                    parts.unknown(format!("ECN {words} could not be read: {e}"), "run as root")
                }
            }
        }
        parts.verdict()
    }

    fn cnp(&self) -> Verdict {
        let port = self.port();
        let (dscp, prio) = match (&self.f.host.cnp_dscp, &self.f.host.cnp_priority) {
            (Reading::Value(d), Reading::Value(p)) => (*d, *p),
            (d, p) => {
                let r = if d.value().is_none() {
                    reading_why(d)
                } else {
                    reading_why(p)
                };
                return unknown(
                    format!("the CNPs' marking {r}"),
                    "NVIDIA's driver package (ecn/roce_np/cnp_dscp, cnp_802p_prio) or inbox \
                     mlx5's debugfs cc_params expose it; other drivers do not",
                );
            }
        };
        let mut parts = Parts::default();
        parts.ok(format!("CNPs leave with DSCP {dscp} on priority {prio}"));
        match self.ours_pfc() {
            Some((m, _)) if m.contains(prio) => {
                // A priority without PFC: 6 as `lossless profile roce` has it, else the
                // highest free one.
                let free = [6u8, 7, 5, 4, 2, 1, 0, 3]
                    .into_iter()
                    .find(|p| !m.contains(*p))
                    .unwrap_or(6);
                parts.problem(
                    format!(
                        "priority {prio} has PFC (PFC on {}): a CNP waits behind the data PFC \
                         paused",
                        priorities(m)
                    ),
                    match self.d {
                        Some(_) => self.roce_set(&format!("cnp_priority={free}")),
                        None => format!(
                            "echo {free} > {}",
                            self.path(&format!("class/net/{port}/ecn/roce_np/cnp_802p_prio"))
                        ),
                    },
                )
            }
            Some(_) => parts.ok(format!("no PFC on {prio}")),
            None => parts.unknown(
                format!("whether priority {prio} has PFC is not known"),
                "see pfc",
            ),
        }
        match self.classes() {
            Some((cl, whence)) => {
                let (strict, words) = cl.strict(prio);
                if strict {
                    parts.ok(format!("{words} ({whence})"));
                } else {
                    parts.problem(
                        format!("{words} ({whence}): not a strict class"),
                        self.ets_fix(prio),
                    );
                }
            }
            None => parts.unknown(
                format!("priority {prio}'s class is not known: the NIC reports no ETS"),
                "see nic",
            ),
        }
        // The DSCP the CNPs carry, as the APP entries map it (a receiving NIC and the
        // switch classify it so).
        let entries = match self.d {
            Some(d) => Some(class::rule_entries(&d.dcbx.app_rules)),
            None => match &self.f.nic {
                Reading::Value(n) => Some(n.state.apps.clone()),
                _ => None,
            },
        };
        if let Some(entries) = entries {
            let to: Vec<AppPriority> = entries
                .iter()
                .filter(|e| e.selector == Selector::DSCP && e.protocol == u16::from(dscp))
                .copied()
                .collect();
            let pfc = self.ours_pfc().map(|(m, _)| m);
            for e in &to {
                if e.priority != prio {
                    parts.problem(
                        format!(
                            "the APP entries send the CNPs' DSCP elsewhere: {}",
                            app_text(e)
                        ),
                        match self.d {
                            Some(_) => {
                                format!("lossless dcbx set {port} app add dscp {dscp} {prio}")
                            }
                            None => format!("dcb app add dev {port} dscp-prio {dscp}:{prio}"),
                        },
                    );
                } else if pfc.is_some_and(|m| m.contains(e.priority)) {
                    // Named above.
                } else {
                    parts.ok(app_text(e));
                }
            }
        }
        parts.verdict()
    }

    /// The ETS of `lossless profile roce`: RoCE's priority alone in class 1 (ETS 50 %),
    /// the CNPs' `cnp` in class 2 (strict), the others in class 0 (ETS 50 %).
    fn ets_fix(&self, cnp: u8) -> String {
        let port = self.port();
        let roce = self.class.as_ref().map_or(3, |c| c.priority).min(7);
        if roce == cnp {
            return "give the CNPs a priority of their own (see the first part), in a strict \
                    class"
                .to_string();
        }
        let tc = |p: u8| match p {
            p if p == roce => 1,
            p if p == cnp => 2,
            _ => 0,
        };
        if self.d.is_some() {
            let others: Vec<String> = (0..8u8)
                .filter(|p| tc(*p) == 0)
                .map(|p| p.to_string())
                .collect();
            format!(
                "lossless dcbx set {port} ets --tc 0:{}:50 --tc 1:{roce}:50 --tc 2:{cnp}:strict",
                others.join(",")
            )
        } else {
            let prio_tc: Vec<String> = (0..8u8).map(|p| format!("{p}:{}", tc(p))).collect();
            let tsa: Vec<String> = (0..8u8)
                .map(|t| format!("{t}:{}", if t < 2 { "ets" } else { "strict" }))
                .collect();
            let bw: Vec<String> = (0..8u8)
                .map(|t| format!("{t}:{}", if t < 2 { 50 } else { 0 }))
                .collect();
            format!(
                "dcb ets set dev {port} prio-tc {} tc-tsa {} tc-bw {}",
                prio_tc.join(" "),
                tsa.join(" "),
                bw.join(" ")
            )
        }
    }

    fn global_pause(&self) -> Verdict {
        let port = self.port();
        match &self.f.host.pause {
            Reading::Value(p) if !p.rx && !p.tx => ok("802.3x link pause off both ways"),
            Reading::Value(p) => {
                let on: Vec<&str> = [("rx", p.rx), ("tx", p.tx)]
                    .iter()
                    .filter(|(_, on)| *on)
                    .map(|(w, _)| *w)
                    .collect();
                problem(
                    format!(
                        "802.3x link pause is on ({}): a pause stops every priority, the \
                         lossy ones too, and defeats PFC",
                        on.join(", ")
                    ),
                    match self.d {
                        Some(_) => self.roce_set("global_pause=off"),
                        None => format!("ethtool -A {port} rx off tx off"),
                    },
                )
            }
            r => unknown(
                format!("802.3x link pause {}", reading_why(r)),
                format!("ethtool -a {port}"),
            ),
        }
    }

    fn fw_agent(&self) -> Verdict {
        let port = self.port();
        let mut parts = Parts::default();
        match &self.f.host.fw_agent {
            Reading::Value(None) => parts.ok(format!(
                "the driver ({}) has no firmware LLDP agent flag",
                self.f.host.driver.as_deref().unwrap_or("?")
            )),
            Reading::Value(Some(a)) if !a.on => parts.ok(format!(
                "the firmware LLDP agent is off (private flag {})",
                a.flag
            )),
            Reading::Value(Some(a)) => {
                let flag_fix = if a.flag == "disable-fw-lldp" {
                    format!("ethtool --set-priv-flags {port} disable-fw-lldp on")
                } else {
                    format!("ethtool --set-priv-flags {port} {} off", a.flag)
                };
                parts.problem(
                    format!(
                        "the NIC firmware's LLDP agent is on (private flag {}): it takes the \
                         LLDP frames, so the host's DCBX (losslessd, lldpad) never reaches the \
                         switch",
                        a.flag
                    ),
                    match self.d {
                        Some(_) => {
                            format!("{} (or {flag_fix})", self.roce_set("fw_lldp_agent=off"))
                        }
                        None => flag_fix,
                    },
                );
            }
            r => parts.unknown(
                format!("the firmware LLDP agent's flag {}", reading_why(r)),
                format!("ethtool --show-priv-flags {port}"),
            ),
        }
        if let Reading::Value(n) = &self.f.nic {
            match n.state.dcbx {
                Some(m) if m & DCBX_LLD_MANAGED != 0 => parts.problem(
                    format!(
                        "the NIC's firmware runs DCBX (dcbnl DCBX mode {m:#04x}, LLD_MANAGED): \
                         what it negotiates competes with the host's DCBX"
                    ),
                    format!("dcb dcbx set dev {port} host ieee"),
                ),
                Some(m) => parts.ok(format!("the host runs DCBX (dcbnl DCBX mode {m:#04x})")),
                None => {}
            }
        }
        parts.verdict()
    }

    fn mtu(&self) -> Verdict {
        let port = self.port();
        let mtu = match &self.f.mtu {
            Reading::Value(m) => *m,
            r => {
                return unknown(
                    format!("the MTU {}", reading_why(r)),
                    format!("ip link show {port}"),
                )
            }
        };
        let frame = mtu + FRAME_OVERHEAD;
        let tagged = frame + VLAN_TAG;
        let mut parts = Parts::default();
        parts.ok(format!(
            "MTU {mtu}: frames up to {frame} octets ({tagged} with a VLAN tag)"
        ));
        match self.d.and_then(|d| d.headroom.as_ref()) {
            Some(h) if !h.off => match h.max_frame_octets {
                Some(m) if m < u64::from(tagged) => parts.problem(
                    format!("the headroom is sized for {m}-octet frames"),
                    self.config(&format!("headroom.max_frame = {tagged}")),
                ),
                Some(m) => parts.ok(format!("the headroom is sized for {m}-octet frames")),
                None => {}
            },
            _ => {}
        }
        // A peer that counts the tag (or not) is within one tag of this end.
        match self.d {
            Some(d) => match d.peer_max_frame.map(u32::from) {
                Some(pm) if pm + VLAN_TAG < frame => parts.problem(
                    format!(
                        "the peer takes frames up to {pm} octets (its LLDP Maximum Frame Size): \
                         larger ones from here are dropped"
                    ),
                    format!(
                        "ip link set {port} mtu {} (or raise the switch port's MTU)",
                        pm.saturating_sub(FRAME_OVERHEAD)
                    ),
                ),
                Some(pm) if pm > tagged => parts.problem(
                    format!(
                        "the peer sends frames up to {pm} octets (its LLDP Maximum Frame Size): \
                         larger than MTU {mtu} takes"
                    ),
                    format!(
                        "ip link set {port} mtu {} (or lower the switch port's MTU)",
                        pm.saturating_sub(FRAME_OVERHEAD)
                    ),
                ),
                Some(pm) => parts.ok(format!("the peer takes frames up to {pm} octets")),
                None => parts.unknown(
                    "the peer's maximum frame size is not known: its LLDPDUs carry no IEEE \
                     802.3 Maximum Frame Size TLV",
                    format!("compare with the MTU of the switch port facing {port}"),
                ),
            },
            None => {
                let (why, fix) = self.daemon_missing();
                parts.unknown(
                    format!("{why}: the peer's maximum frame size (LLDP) is known to losslessd"),
                    fix,
                )
            }
        }
        parts.verdict()
    }

    fn headroom(&self) -> Verdict {
        let port = self.port();
        let Some(d) = self.d else {
            let (why, fix) = self.daemon_missing();
            return unknown(
                format!("{why}: the link's headroom need is measured by losslessd"),
                fix,
            );
        };
        let Some(h) = &d.headroom else {
            return unknown(
                "losslessd gave no headroom answer for the port",
                format!("lossless headroom show {port}"),
            );
        };
        let measure = self
            .config("headroom.measure = true (the peer must answer the measurement: losslessd)");
        if h.off {
            return unknown(
                format!(
                    "the link's need is not measured: {}",
                    h.reason.as_deref().unwrap_or("measurement off")
                ),
                measure,
            );
        }
        let Some(need) = &h.need else {
            let why = match (&h.socket_error, h.running) {
                (Some(e), _) => format!("the measurement socket failed: {e}"),
                (None, false) => "the peer does not advertise the measurement".to_string(),
                (None, true) => format!("no measurement yet ({} failed)", h.failures),
            };
            return unknown(
                format!("the link's need is not known: {why}"),
                format!("lossless headroom show {port}"),
            );
        };
        let need_bytes = need.headroom.bytes;
        let mut parts = Parts::default();
        parts.ok(format!("the link needs {need_bytes} bytes of headroom"));
        if let Some(a) = h.applied {
            if a.bytes < need_bytes {
                parts.problem(
                    format!("the port holds {} bytes", a.bytes),
                    format!("lossless headroom show {port}"),
                );
            }
        }
        match h.buffer.as_ref().map(|b| b.state.as_str()) {
            Some("sized") => {
                let held = h
                    .buffer
                    .as_ref()
                    .and_then(|b| b.headroom_bytes)
                    .unwrap_or(0);
                if held >= need_bytes {
                    parts.ok(format!(
                        "every NIC buffer holding a PFC priority holds at least {held} bytes"
                    ));
                } else {
                    parts.problem(
                        format!("the NIC's lossless buffers hold {held} bytes"),
                        format!("lossless headroom show {port}"),
                    );
                }
                return parts.verdict();
            }
            Some("does_not_fit") => {
                let why = h
                    .buffer
                    .as_ref()
                    .and_then(|b| b.reason.clone())
                    .unwrap_or_default();
                parts.problem(
                    format!("it does not fit the port's buffer: {why}"),
                    "a shorter link, fewer PFC priorities, or a NIC with more buffer".to_string(),
                );
                return parts.verdict();
            }
            _ => {}
        }
        // The daemon does not size the buffer: what the NIC holds.
        let pfc = self.ours_pfc().map_or(0, |(m, _)| m.0);
        match (&self.f.nic, pfc) {
            (Reading::Value(n), pfc) if pfc != 0 => match n.state.buffer {
                Some(b) => {
                    let mask = b.buffers_of(pfc);
                    let smallest = (0..8)
                        .filter(|i| mask & (1 << i) != 0)
                        .filter_map(|i| b.buffer_size.get(i).copied())
                        .min();
                    match smallest {
                        Some(s) if u64::from(s) >= need_bytes => parts.ok(format!(
                            "the NIC's buffers holding PFC priorities are {s} bytes or more"
                        )),
                        Some(s) => parts.problem(
                            format!("the NIC's smallest buffer holding a PFC priority is {s} bytes"),
                            self.config("headroom.buffer = true and apply = \"dcbnl\" (losslessd sizes the buffers)"),
                        ),
                        None => parts.unknown(
                            "no NIC buffer holds a PFC priority",
                            format!("lossless headroom show {port}"),
                        ),
                    }
                }
                None => parts.unknown(
                    format!(
                        "the NIC reports no DCB buffer (dcbnl getbuffer) and losslessd does not \
                         size it ({}): whether it holds {need_bytes} bytes is not known",
                        h.buffer
                            .as_ref()
                            .and_then(|b| b.reason.clone().or(b.error.clone()))
                            .unwrap_or_else(|| "buffer state not given".into())
                    ),
                    "the vendor's tool (mlnx_qos -i PORT --buffer_size)".replace("PORT", port),
                ),
            },
            (Reading::Value(_), _) => {
                parts.unknown("no PFC priority: no lossless buffer to size", "see pfc")
            }
            (r, _) => parts.unknown(
                format!("the NIC's buffers {}", reading_why(r)),
                self.nic_fix(),
            ),
        }
        parts.verdict()
    }

    fn watchdog(&self) -> Verdict {
        let port = self.port();
        let Some(d) = self.d else {
            let (why, fix) = self.daemon_missing();
            return unknown(
                format!("{why}: the PFC storm watchdog runs in losslessd"),
                fix,
            );
        };
        let Some(v) = &d.pfc else {
            return unknown(
                "losslessd gave no pfc show answer for the port",
                format!("lossless pfc show {port}"),
            );
        };
        let on = format!(
            "[ports.\"{port}\".pfc_watchdog] enabled = true in losslessd's configuration, then \
             `lossless reload`"
        );
        if !v.watchdog.enabled {
            return problem("the PFC storm watchdog is off: a storm would go unseen", on);
        }
        if !v.available {
            let why = v.reason.clone().unwrap_or_default();
            if why == "not read yet" {
                return unknown(
                    "the watchdog is on and has not read the counters yet",
                    format!("lossless pfc show {port}"),
                );
            }
            return problem(
                format!("the watchdog is on and sees no counters ({why}): a storm would go unseen"),
                "a driver that reports PFC counters (dcbnl ieee_getpfc, or ethtool statistics)",
            );
        }
        let watched = PriorityMap::from_priorities(&v.watchdog.priorities).unwrap_or_default();
        if let Some(c) = &self.class {
            if !watched.contains(c.priority) {
                return problem(
                    format!(
                        "the watchdog watches {}, not RoCE's priority {}",
                        priorities(watched),
                        c.priority
                    ),
                    format!(
                        "pfc_watchdog.priorities = [{}] in [ports.\"{port}\"] (or leave it out: \
                         the port's PFC priorities), then `lossless reload`",
                        c.priority
                    ),
                );
            }
        }
        ok(format!(
            "the PFC storm watchdog is on ({}), watching {}, counters from {} every {} ms ({} \
             readings)",
            v.watchdog.action.name(),
            priorities(watched),
            v.source.as_deref().unwrap_or("?"),
            v.interval_ms,
            v.samples
        ))
    }

    fn discards(&self) -> Verdict {
        let port = self.port();
        let pfc = match (self.ours_pfc(), &self.class) {
            (Some((m, _)), _) if m != PriorityMap::NONE => m,
            (_, Some(c)) => PriorityMap(1 << c.priority),
            _ => return unknown("no PFC priority known to look at", "see pfc and roce_class"),
        };
        let fix = format!(
            "the headroom is too small for the link (lossless headroom show {port}; \
             headroom.measure = true) or the peer does not honour PFC (lossless pfc show \
             {port}: is the peer paused?)"
        );
        // The driver's counters since it loaded, by name.
        let lifetime: Option<Vec<(String, u64)>> = match &self.f.stats {
            Reading::Value(s) => Some(
                s.iter()
                    .filter(|(n, _)| discard_priority(n).is_some_and(|p| pfc.contains(p)))
                    .cloned()
                    .collect(),
            ),
            _ => None,
        };
        let text = |v: &[(String, u64)]| {
            v.iter()
                .map(|(n, x)| format!("{n} = {x}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // With the daemon: what it saw since it watches the port, and now.
        if let Some(v) = self.d.and_then(|d| d.pfc.as_ref()).filter(|v| v.available) {
            let watched: Vec<&crate::pfc::view::PriorityView> = v
                .priorities
                .iter()
                .filter(|q| pfc.contains(q.priority) && !q.discards.is_empty())
                .collect();
            if !watched.is_empty() {
                let total: u64 = watched.iter().filter_map(|q| q.discards_total()).sum();
                let rate: f64 = watched.iter().filter_map(|q| q.discard_rate()).sum();
                let kinds: Vec<String> = watched
                    .iter()
                    .flat_map(|q| {
                        q.discards
                            .iter()
                            .map(move |d| format!("priority {} {} {}", q.priority, d.kind, d.total))
                    })
                    .collect();
                let since = format!(
                    "since losslessd watches the port ({} readings every {} ms)",
                    v.samples, v.interval_ms
                );
                if total > 0 {
                    return problem(
                        format!(
                            "frames discarded on PFC priority {} {since}: {}; {rate:.0}/s now: \
                             the lossless guarantee was broken",
                            priorities(pfc),
                            kinds.join(", ")
                        ),
                        fix,
                    );
                }
                let before = lifetime
                    .as_deref()
                    .map(|l| {
                        l.iter()
                            .filter(|(_, x)| *x > 0)
                            .cloned()
                            .collect::<Vec<_>>()
                    })
                    .filter(|l| !l.is_empty())
                    .map(|l| {
                        format!(
                            " (the driver's counters since it loaded hold earlier ones: {})",
                            text(&l)
                        )
                    })
                    .unwrap_or_default();
                return ok(format!(
                    "no discards on PFC priority {} {since}{before}",
                    priorities(pfc)
                ));
            }
        }
        let counted = match lifetime {
            Some(c) => c,
            None => {
                return unknown(
                    format!("the driver's statistics {}", reading_why(&self.f.stats)),
                    format!("ethtool -S {port}"),
                )
            }
        };
        if counted.is_empty() {
            return unknown(
                format!(
                    "the driver ({}) reports no per-priority discard statistic for PFC priority \
                     {} (looked for {DISCARD_STATS_HELP})",
                    self.f.host.driver.as_deref().unwrap_or("?"),
                    priorities(pfc)
                ),
                format!("ethtool -S {port}"),
            );
        }
        let nonzero: Vec<(String, u64)> = counted.iter().filter(|(_, v)| *v > 0).cloned().collect();
        if nonzero.is_empty() {
            ok(format!(
                "no discards on PFC priority {}: {}",
                priorities(pfc),
                text(&counted)
            ))
        } else {
            problem(
                format!(
                    "frames were discarded on PFC priority {} since the driver's counters \
                     started: {}: the lossless guarantee was broken",
                    priorities(pfc),
                    text(&nonzero)
                ),
                fix,
            )
        }
    }
}

/// RoCE's DSCP and priority, when both are known.
fn c_dscp(c: &Option<RoceClass>) -> Option<(u8, u8)> {
    c.as_ref().and_then(|c| c.dscp.map(|d| (d, c.priority)))
}

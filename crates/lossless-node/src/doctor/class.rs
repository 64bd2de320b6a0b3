//! Which priority and DSCP RoCE runs on, and where that was read: the APP entries of the
//! configuration the daemon runs, the NIC's APP table, or the command line.

use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, Selector};

use crate::config::{AppRules, RuleSelector};
use crate::nic::app_text;

/// The UDP port of RoCEv2.
pub const ROCE_UDP: u16 = 4791;
/// What ConnectX marks congestion notifications with unless told otherwise (CS6).
pub const DEFAULT_CNP_DSCP: u8 = 48;

/// Where the RoCE class was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--priority` / `--dscp`.
    Given,
    /// The APP entries of the configuration the daemon runs.
    Daemon,
    /// The NIC's APP table (dcbnl), without a daemon.
    Nic,
}

impl Source {
    pub fn words(self) -> &'static str {
        match self {
            Source::Given => "given on the command line (--priority, --dscp)",
            Source::Daemon => "from the APP entries of the configuration losslessd runs",
            Source::Nic => "from the NIC's APP table (dcbnl), no daemon to ask",
        }
    }
}

/// RoCE's priority and DSCP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoceClass {
    pub priority: u8,
    /// The DSCP RoCE is marked with (None: no DSCP entry to that priority).
    pub dscp: Option<u8>,
    pub source: Source,
    /// The entries it was read from, in words (`udp 4791 (RoCEv2) -> 3`).
    pub entries: Vec<String>,
}

impl RoceClass {
    /// `priority 3, DSCP 26 (udp 4791 (RoCEv2) -> 3, dscp 26 (AF31) -> 3), from ...`.
    pub fn words(&self) -> String {
        let dscp = match self.dscp {
            Some(d) => format!("DSCP {d}"),
            None => "no DSCP".into(),
        };
        let from = if self.entries.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.entries.join(", "))
        };
        format!(
            "priority {}, {dscp}{from}, {}",
            self.priority,
            self.source.words()
        )
    }
}

/// An APP entry reduced to what the class is decided on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// Matches RoCEv2 by its UDP port (`udp`/`port` 4791).
    roce_udp: bool,
    dscp: Option<u8>,
    priority: u8,
    app: AppPriority,
}

fn from_ieee(e: &AppPriority) -> Entry {
    Entry {
        roce_udp: matches!(e.selector, Selector::UDP | Selector::PORT) && e.protocol == ROCE_UDP,
        dscp: (e.selector == Selector::DSCP)
            .then(|| u8::try_from(e.protocol).ok())
            .flatten(),
        priority: e.priority,
        app: *e,
    }
}

/// The configuration's rules as IEEE entries (one per priority).
pub fn rule_entries(rules: &AppRules) -> Vec<AppPriority> {
    let mut out = Vec::new();
    for r in &rules.entries {
        let selector = match r.selector {
            RuleSelector::Ethertype => Selector::ETHERTYPE,
            RuleSelector::Tcp => Selector::TCP,
            RuleSelector::Udp => Selector::UDP,
            RuleSelector::Port | RuleSelector::Cee(1) => Selector::PORT,
            RuleSelector::Dscp => Selector::DSCP,
            RuleSelector::Cee(_) => continue,
        };
        for priority in r.priorities.priorities() {
            out.push(AppPriority {
                priority,
                selector,
                protocol: r.protocol,
            });
        }
    }
    out
}

/// RoCE's class from APP entries: the priority of `udp 4791`; else of the DSCP the
/// RDMA CM's ToS carries (`tos_dscp`), when an entry maps it; else the one priority
/// with PFC (`pfc`) that DSCP entries other than the CNP's map to. The DSCP: the ToS's
/// when it maps to that priority, else the lowest other than the CNP's that does.
pub fn decide(
    apps: &[AppPriority],
    pfc: Option<PriorityMap>,
    tos_dscp: Option<u8>,
    cnp_dscp: Option<u8>,
    source: Source,
) -> Option<RoceClass> {
    let entries: Vec<Entry> = apps.iter().map(from_ieee).collect();
    let cnp = cnp_dscp.unwrap_or(DEFAULT_CNP_DSCP);
    let udp = entries.iter().find(|e| e.roce_udp);
    let by_tos = tos_dscp.and_then(|d| entries.iter().find(|e| e.dscp == Some(d) && d != cnp));
    let priority = match (udp, by_tos) {
        (Some(u), _) => u.priority,
        (None, Some(t)) => t.priority,
        (None, None) => {
            let pfc = pfc?;
            let mut ps: Vec<u8> = entries
                .iter()
                .filter(|e| e.dscp.is_some_and(|d| d != cnp) && pfc.contains(e.priority))
                .map(|e| e.priority)
                .collect();
            ps.sort_unstable();
            ps.dedup();
            match ps[..] {
                [p] => p,
                _ => return None,
            }
        }
    };
    let to_p: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.priority == priority && e.dscp.is_some_and(|d| d != cnp))
        .collect();
    let dscp = tos_dscp
        .filter(|d| to_p.iter().any(|e| e.dscp == Some(*d)))
        .or_else(|| to_p.iter().filter_map(|e| e.dscp).min());
    let mut words: Vec<String> = Vec::new();
    if let Some(u) = udp.filter(|u| u.priority == priority) {
        words.push(app_text(&u.app));
    }
    if let Some(e) = to_p.iter().find(|e| e.dscp == dscp && dscp.is_some()) {
        words.push(app_text(&e.app));
    }
    Some(RoceClass {
        priority,
        dscp,
        source,
        entries: words,
    })
}

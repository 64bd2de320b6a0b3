//! `qos-class` rules as IEEE 802.1Qaz APP entries: the traffic class of a RoCEv2
//! packet is its IPv4 TOS / IPv6 Traffic Class byte, whose upper six bits are the DSCP,
//! so a rule sending TClass T to a level becomes the entry DSCP (T >> 2) -> the
//! level's priority.
//!
//! An APP entry classifies every packet with that DSCP leaving the port, so only a rule
//! that says nothing but the class can become one: a rule that also names a
//! destination, a service ID or a P_Key would apply more widely as an entry, and is
//! left out with a warning. Its `source` groups choose the ports (every port without
//! one). Rules are taken in order and the first that gives a DSCP on a port wins, as
//! OpenSM's first matching rule does; a later rule giving the same DSCP another
//! priority is reported.

use serde::Serialize;

use super::ports::{in_groups, Interface};
use super::EthLevel;
use crate::ast::{Loc, MatchRule, NameIndex, Policy};
use crate::check::{Emit, Severity};

/// One APP entry of a port: DSCP -> priority, and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthApp {
    pub dscp: u8,
    pub priority: u8,
    pub level: String,
    /// The `qos-class` values of the rule that give this DSCP.
    pub tclass: Vec<u8>,
    /// The rule.
    pub rule: Loc,
}

/// The largest traffic class: an 8-bit field.
const MAX_TCLASS: u64 = 255;

/// The APP entries of each interface of `ifaces`, in rule order; findings go to `d`.
pub(super) fn entries(
    policy: &Policy,
    names: &NameIndex,
    levels: &[EthLevel],
    ifaces: &[Interface],
    d: &mut Emit<'_>,
) -> Vec<Vec<EthApp>> {
    let mut out: Vec<Vec<EthApp>> = vec![Vec::new(); ifaces.len()];
    for r in policy.rules.iter().filter(|r| !r.qos_class.is_empty()) {
        let Some(level) = rule_level(r, levels, d) else {
            continue;
        };
        let tclasses = tclasses(r, d);
        let chosen = rule_ports(policy, names, ifaces, r);
        if chosen.is_empty() {
            no_port(r, d);
            continue;
        }
        let dscps = by_dscp(tclasses);
        for i in chosen {
            add(&ifaces[i].name, &mut out[i], &dscps, level, r.loc, d);
        }
    }
    out
}

/// The level of a rule that can give APP entries: not narrower than its DSCP, and sending
/// to a level that has a priority.
fn rule_level<'l>(r: &MatchRule, levels: &'l [EthLevel], d: &mut Emit<'_>) -> Option<&'l EthLevel> {
    if narrower(r, d) {
        return None;
    }
    // An unknown level is check's error; a level without a priority has its own.
    levels
        .iter()
        .find(|l| l.name.eq_ignore_ascii_case(&r.level.value))
}

fn no_port(r: &MatchRule, d: &mut Emit<'_>) {
    d(
        Severity::Warning,
        "app-no-port",
        r.loc,
        "qos-match-rule: its source groups name no Ethernet interface, so its \
         qos-class gives no APP entry"
            .to_string(),
    );
}

/// A rule that also names a destination, a service ID or a P_Key cannot be an entry: the
/// entry would classify more than the rule does. Reported; true when so.
fn narrower(r: &MatchRule, d: &mut Emit<'_>) -> bool {
    let wider: Vec<&str> = [
        (!r.destination.is_empty(), "destination"),
        (!r.service_id.is_empty(), "service-id"),
        (!r.pkey.is_empty(), "pkey"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, w)| *w)
    .collect();
    if wider.is_empty() {
        return false;
    }
    d(
        Severity::Warning,
        "app-narrower",
        r.loc,
        format!(
            "qos-match-rule: qos-class with {} cannot be an APP entry (a DSCP entry \
             classifies all of the port's traffic with that DSCP); left out",
            wider.join(", ")
        ),
    );
    true
}

/// The rule's traffic classes, in order, once each; a range beyond a byte is an error
/// and left out.
fn tclasses(r: &MatchRule, d: &mut Emit<'_>) -> Vec<u8> {
    let mut tclasses: Vec<u8> = Vec::new();
    for range in &r.qos_class {
        if range.hi > MAX_TCLASS {
            d(
                Severity::Error,
                "tclass-range",
                range.loc,
                format!(
                    "qos-class {}: a traffic class is 0..{MAX_TCLASS} (the IP TOS / \
                     Traffic Class byte)",
                    range.hi
                ),
            );
            continue;
        }
        for t in range.lo..=range.hi {
            if let Ok(t) = u8::try_from(t) {
                if !tclasses.contains(&t) {
                    tclasses.push(t);
                }
            }
        }
    }
    tclasses
}

/// The interfaces the rule applies to (indexes into `ifaces`): those of its source groups,
/// or all without one.
fn rule_ports(
    policy: &Policy,
    names: &NameIndex,
    ifaces: &[Interface],
    r: &MatchRule,
) -> Vec<usize> {
    (0..ifaces.len())
        .filter(|&i| r.source.is_empty() || in_groups(policy, names, &ifaces[i].name, &r.source))
        .collect()
}

/// The traffic classes grouped by their DSCP (TClass >> 2), in order of first appearance.
fn by_dscp(tclasses: Vec<u8>) -> Vec<(u8, Vec<u8>)> {
    let mut dscps: Vec<(u8, Vec<u8>)> = Vec::new();
    for t in tclasses {
        let dscp = t >> 2;
        match dscps.iter_mut().find(|(x, _)| *x == dscp) {
            Some((_, ts)) => ts.push(t),
            None => dscps.push((dscp, vec![t])),
        }
    }
    dscps
}

/// The rule's entries on the interface `name`, whose entries so far are `entries`: a DSCP
/// already there stays (the first rule wins); reported when it goes to another priority.
fn add(
    name: &str,
    entries: &mut Vec<EthApp>,
    dscps: &[(u8, Vec<u8>)],
    level: &EthLevel,
    rule: Loc,
    d: &mut Emit<'_>,
) {
    for (dscp, ts) in dscps {
        match entries.iter().find(|e| e.dscp == *dscp) {
            Some(first) if first.priority != level.priority => d(
                Severity::Warning,
                "app-shadowed",
                rule,
                format!(
                    "{name}: qos-class {} is DSCP {dscp}, which the rule at {} already sends \
                     to priority {} (level {}); the first rule wins, not priority {} (level {})",
                    list(ts),
                    first.rule,
                    first.priority,
                    first.level,
                    level.priority,
                    level.name
                ),
            ),
            Some(_) => {}
            None => entries.push(EthApp {
                dscp: *dscp,
                priority: level.priority,
                level: level.name.clone(),
                tclass: ts.clone(),
                rule,
            }),
        }
    }
}

fn list(v: &[u8]) -> String {
    v.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

/// The `app.entries` line of a port section, one rule a line with where it came from.
pub(super) fn to_toml(entries: &[EthApp]) -> String {
    if entries.is_empty() {
        return String::new();
    }
    let mut s = String::from("app.entries = [\n");
    for e in entries {
        s.push_str(&format!(
            "    {{ selector = \"dscp\", protocol = {}, priority = {} }},  # qos-class {} at {} -> level {}\n",
            e.dscp,
            e.priority,
            list(&e.tclass),
            e.rule,
            e.level
        ));
    }
    s.push_str("]\n");
    s
}

//! `policy check`: everything wrong with a policy, with and without a fabric.
//!
//! Errors are what makes OpenSM reject the file (or what we refuse where OpenSM is silently
//! wrong); warnings are what OpenSM accepts but almost certainly is not what was meant.

use crate::ast::{Loc, NameIndex, NumRange, Policy, PortGroup, Spanned, UlpKind};
use crate::bind::{bind, Bound};
use crate::compile::{compile, OsmQos};
use crate::fabric::{Fabric, PortRef};
use crate::partitions::Partitions;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub file: String,
    pub loc: Loc,
    pub message: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(
            f,
            "{}:{}: {s}[{}]: {}",
            self.file, self.loc, self.code, self.message
        )
    }
}

/// A rule's list of ranges, sorted and merged (adjacent and overlapping ranges joined), so
/// that the pairwise shadowing test does not sort inside its O(rules^2) loop.
struct Merged {
    /// The rule tests this field at all.
    tested: bool,
    ranges: Vec<(u64, u64)>,
}

impl Merged {
    fn new(v: &[NumRange]) -> Merged {
        let mut o: Vec<(u64, u64)> = v.iter().map(|r| (r.lo, r.hi)).collect();
        o.sort_unstable();
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        for (lo, hi) in o {
            match ranges.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => ranges.push((lo, hi)),
            }
        }
        Merged {
            tested: !v.is_empty(),
            ranges,
        }
    }

    /// Every value `later` lets through, `self` (an earlier rule's field) lets through too.
    fn covers(&self, later: &Merged) -> bool {
        if !self.tested {
            return true;
        }
        later.tested
            && later.ranges.iter().all(|(lo, hi)| {
                let k = self.ranges.partition_point(|(_, h)| h < lo);
                self.ranges
                    .get(k)
                    .is_some_and(|(a, b)| *a <= *lo && *hi <= *b)
            })
    }
}

/// The three value fields of each rule, merged.
fn merged_fields<'a>(rules: impl Iterator<Item = [&'a [NumRange]; 3]>) -> Vec<[Merged; 3]> {
    rules
        .map(|[a, b, c]| [Merged::new(a), Merged::new(b), Merged::new(c)])
        .collect()
}

fn fields_cover(earlier: &[Merged; 3], later: &[Merged; 3]) -> bool {
    earlier.iter().zip(later).all(|(e, l)| e.covers(l))
}

/// Check a parsed policy. `fabric` enables the fabric-dependent checks.
pub fn check(
    file: &str,
    policy: &Policy,
    fabric: Option<(&Fabric, &Partitions, &OsmQos)>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut d = |severity: Severity, code: &'static str, loc: Loc, message: String| {
        out.push(Diagnostic {
            severity,
            code,
            file: file.to_string(),
            loc,
            message,
        })
    };
    duplicate_names(policy, &mut d);
    if policy.level("default").is_some() {
        if let Some(u) = &policy.ulp_default {
            d(Severity::Warning, "ulp-default-ignored", u.loc, "qos-ulps `default` is ignored: a QoS level named DEFAULT exists and takes precedence".into());
        }
    }
    parser_notes(policy, &mut d);
    port_name_blanks(policy, &mut d);
    source_target_both(policy, &mut d);
    reversed_ranges(policy, &mut d);
    unknown_names(policy, &mut d);
    vlarb_scopes(policy, &mut d);
    no_default_level(policy, &mut d);
    unused_levels(policy, &mut d);
    unused_groups(policy, &mut d);
    match fabric {
        Some((fabric, parts, osm)) => {
            with_fabric(file, policy, fabric, parts, osm, &mut d);
        }
        None => shadowing_without_fabric(policy, &mut d),
    }
    out
}

/// Names defined twice: OpenSM silently uses the first.
fn duplicate_names(policy: &Policy, d: &mut Emit<'_>) {
    let mut seen: HashMap<String, Loc> = HashMap::new();
    for g in &policy.port_groups {
        let k = g.name.value.to_ascii_lowercase();
        if let Some(first) = seen.get(&k) {
            d(Severity::Warning, "duplicate-group", g.name.loc, format!("port group `{}` is already defined at {first}; OpenSM uses the first and ignores this one (names are case-insensitive)", g.name.value));
        } else {
            seen.insert(k, g.name.loc);
        }
    }
    let mut seen: HashMap<String, Loc> = HashMap::new();
    for l in &policy.levels {
        let k = l.name.value.to_ascii_lowercase();
        if let Some(first) = seen.get(&k) {
            d(Severity::Warning, "duplicate-level", l.name.loc, format!("QoS level `{}` is already defined at {first}; OpenSM uses the first and ignores this one", l.name.value));
        } else {
            seen.insert(k, l.name.loc);
        }
    }
}

/// What the parser noted: octal numbers and this tool's extensions.
fn parser_notes(policy: &Policy, d: &mut Emit<'_>) {
    for o in &policy.octal_numbers {
        d(
            Severity::Warning,
            "octal-number",
            o.loc,
            format!(
                "`{}` has a leading zero: OpenSM reads it as octal; write it in decimal or with 0x",
                o.value
            ),
        );
    }
    for x in &policy.extensions {
        d(
            Severity::Warning,
            "extension",
            x.loc,
            format!(
                "`{}` is an extension of this tool: OpenSM rejects a file that uses it (and then \
                 runs with no policy at all); to keep one file for both, leave it out and pass \
                 `compile --ethernet --lossless LEVEL`",
                x.value
            ),
        );
    }
}

fn port_name_blanks(policy: &Policy, d: &mut Emit<'_>) {
    for pn in policy.port_groups.iter().flat_map(|g| &g.port_names) {
        if pn.value.had_blank {
            d(Severity::Warning, "port-name-blank", pn.loc, format!("OpenSM drops unquoted blanks, so it looks up node `{}`; put the port name in double quotes to keep them", pn.value.node_desc));
        }
    }
}

fn source_target_both(policy: &Policy, d: &mut Emit<'_>) {
    for u in &policy.ulps {
        if u.kind == UlpKind::AnySourceTargetGuid {
            d(Severity::Warning, "source-target-both", u.loc, "`any, source-target-port-guid` matches only when BOTH source and destination are in the list (OpenSM's code, despite its documentation saying either)".into());
        }
    }
}

/// Ranges written high-low, in file order of the items that hold them.
fn reversed_ranges(policy: &Policy, d: &mut Emit<'_>) {
    let mut ranges: Vec<&NumRange> = Vec::new();
    for g in &policy.port_groups {
        ranges.extend(g.port_guids.iter().chain(&g.pkeys));
    }
    for l in &policy.levels {
        ranges.extend(l.pkeys.iter().chain(&l.path_bits));
    }
    for r in &policy.rules {
        ranges.extend(r.qos_class.iter().chain(&r.service_id).chain(&r.pkey));
    }
    for u in &policy.ulps {
        ranges.extend(
            u.service_id
                .iter()
                .chain(&u.pkey)
                .chain(&u.source_guids)
                .chain(&u.dest_guids),
        );
    }
    for s in &policy.sl2vl_scopes {
        for set in [&s.from, &s.to] {
            if let crate::ast::PortSet::List(v) = set {
                ranges.extend(v.iter());
            }
        }
    }
    for r in ranges {
        if r.reversed {
            d(
                Severity::Warning,
                "reversed-range",
                r.loc,
                format!("range written high-low; read as {:#x}-{:#x}", r.lo, r.hi),
            );
        }
    }
}

/// Levels and groups that rules and SL2VL scopes name but nobody defines.
fn unknown_names(policy: &Policy, d: &mut Emit<'_>) {
    let names = policy.names();
    for r in &policy.rules {
        if names.level(&r.level.value).is_none() {
            d(
                Severity::Error,
                "unknown-level",
                r.level.loc,
                format!(
                    "no QoS level named `{}` (OpenSM rejects the whole policy)",
                    r.level.value
                ),
            );
        }
        for g in r.source.iter().chain(&r.destination) {
            if names.group(&g.value).is_none() {
                d(
                    Severity::Error,
                    "unknown-group",
                    g.loc,
                    format!(
                        "no port group named `{}` (OpenSM rejects the whole policy)",
                        g.value
                    ),
                );
            }
        }
    }
    for s in &policy.sl2vl_scopes {
        unknown_scope_groups(
            &names,
            s.groups.iter().chain(&s.across_from).chain(&s.across_to),
            d,
        );
    }
}

fn unknown_scope_groups<'p>(
    names: &NameIndex,
    groups: impl Iterator<Item = &'p Spanned<String>>,
    d: &mut Emit<'_>,
) {
    for g in groups {
        if names.group(&g.value).is_none() {
            d(
                Severity::Error,
                "unknown-group",
                g.loc,
                format!("no port group named `{}`", g.value),
            );
        }
    }
}

/// Each VLArb scope: the groups it names, then its VL:weight pairs.
fn vlarb_scopes(policy: &Policy, d: &mut Emit<'_>) {
    let names = policy.names();
    for s in &policy.vlarb_scopes {
        unknown_scope_groups(&names, s.groups.iter().chain(&s.across), d);
        for w in s.high.iter().chain(&s.low).flatten() {
            if w.vl > 15 || w.weight > 255 {
                d(
                    Severity::Error,
                    "vlarb-value",
                    w.loc,
                    format!("`{}:{}`: VL must be 0-15 and weight 0-255", w.vl, w.weight),
                );
            } else if w.vl == 15 {
                d(
                    Severity::Warning,
                    "vlarb-vl15",
                    w.loc,
                    "VL15 in a VLArb table is never arbitrated (management traffic)".into(),
                );
            }
        }
    }
}

fn no_default_level(policy: &Policy, d: &mut Emit<'_>) {
    if policy.level("default").is_none() && policy.ulp_default.is_none() {
        let loc = policy
            .sections
            .first()
            .map_or(Loc { line: 1, col: 1 }, |s| s.1);
        d(Severity::Error, "no-default-level", loc, "no QoS level named DEFAULT and no `default` in qos-ulps (OpenSM rejects the whole policy)".into());
    }
}

fn unused_levels(policy: &Policy, d: &mut Emit<'_>) {
    let mut used_levels: HashSet<String> = policy
        .rules
        .iter()
        .map(|r| r.level.value.to_ascii_lowercase())
        .collect();
    used_levels.insert("default".into());
    for l in &policy.levels {
        if !used_levels.contains(&l.name.value.to_ascii_lowercase()) {
            d(
                Severity::Warning,
                "unused-level",
                l.name.loc,
                format!("QoS level `{}` is not used by any rule", l.name.value),
            );
        }
    }
}

fn unused_groups(policy: &Policy, d: &mut Emit<'_>) {
    let used_groups: HashSet<String> = policy
        .rules
        .iter()
        .flat_map(|r| r.source.iter().chain(&r.destination))
        .chain(
            policy
                .sl2vl_scopes
                .iter()
                .flat_map(|s| s.groups.iter().chain(&s.across_from).chain(&s.across_to)),
        )
        .chain(
            policy
                .vlarb_scopes
                .iter()
                .flat_map(|s| s.groups.iter().chain(&s.across)),
        )
        .map(|g| g.value.to_ascii_lowercase())
        .collect();
    for g in &policy.port_groups {
        if !used_groups.contains(&g.name.value.to_ascii_lowercase()) {
            d(
                Severity::Warning,
                "unused-group",
                g.name.loc,
                format!(
                    "port group `{}` is not used by any rule or scope",
                    g.name.value
                ),
            );
        }
    }
}

/// The checks that need the fabric: binding, lookups of what groups name, then (when the
/// policy binds) empty groups, shadowed rules and the compiled tables' own checks.
fn with_fabric(
    file: &str,
    policy: &Policy,
    fabric: &Fabric,
    parts: &Partitions,
    osm: &OsmQos,
    d: &mut Emit<'_>,
) {
    let bound = bind_errors(file, policy, fabric, parts, d);
    let ends = fabric.end_ports();
    let by_guid = fabric.end_ports_by_guid();
    for g in &policy.port_groups {
        group_lookups(g, fabric, &by_guid, parts, d);
    }
    rule_pkeys(policy, parts, d);
    let Some(b) = bound else { return };
    for (gi, g) in policy.port_groups.iter().enumerate() {
        if let Some(bg) = b.groups.get(gi) {
            if bg.is_empty_in(fabric, &ends) {
                d(
                    Severity::Warning,
                    "empty-group",
                    g.name.loc,
                    format!(
                        "port group `{}` matches no port of the fabric",
                        g.name.value
                    ),
                );
            }
        }
    }
    shadowing(&b, fabric, &ends, d);
    let (_, diags) = compile(fabric, osm, Some(policy), Some(&b));
    for x in diags {
        let severity = if x.warning {
            Severity::Warning
        } else {
            Severity::Error
        };
        d(severity, "fabric-setup", x.loc, x.message);
    }
}

/// Bind the policy; a failure is reported unless an earlier check already said the same.
fn bind_errors(
    file: &str,
    policy: &Policy,
    fabric: &Fabric,
    parts: &Partitions,
    d: &mut Emit<'_>,
) -> Option<Bound> {
    use crate::bind::BindError;
    let e = match bind(file, policy, fabric, parts) {
        Ok(b) => return Some(b),
        Err(e) => e,
    };
    let loc = match &e {
        BindError::NoDefaultLevel { loc, .. }
        | BindError::UnknownLevel { loc, .. }
        | BindError::UnknownGroup { loc, .. }
        | BindError::PortOutOfRange { loc, .. }
        | BindError::IpoibPartition { loc, .. } => *loc,
    };
    let dup = matches!(
        e,
        BindError::NoDefaultLevel { .. }
            | BindError::UnknownLevel { .. }
            | BindError::UnknownGroup { .. }
    );
    if !dup {
        // The message without its `file:loc: ` prefix.
        let msg = e.to_string();
        let msg = msg.split_once(": ").map_or(msg.clone(), |(_, m)| {
            m.split_once(": ")
                .map_or(m.to_string(), |(_, m)| m.to_string())
        });
        d(Severity::Error, "fabric", loc, msg);
    }
    None
}

/// What one port group names that the fabric or the partitions do not have.
fn group_lookups(
    g: &PortGroup,
    fabric: &Fabric,
    by_guid: &[(u64, PortRef)],
    parts: &Partitions,
    d: &mut Emit<'_>,
) {
    for r in &g.port_guids {
        if crate::bind::guids_in(by_guid, r).next().is_none() {
            d(
                Severity::Warning,
                "guid-not-found",
                r.loc,
                format!(
                    "no port of the fabric has GUID {:#x}{}",
                    r.lo,
                    if r.hi != r.lo {
                        format!("-{:#x}", r.hi)
                    } else {
                        String::new()
                    }
                ),
            );
        }
    }
    for pn in &g.port_names {
        if fabric.by_desc(&pn.value.node_desc).is_none() {
            d(Severity::Warning, "node-not-found", pn.loc, format!("no node described `{}` in the fabric; OpenSM ignores this port name without a word", pn.value.node_desc));
        }
    }
    for i in &g.interfaces {
        d(
            Severity::Warning,
            "interface-name",
            i.loc,
            format!(
                "port name `{}` has no `/P<port>`: OpenSM finds no InfiniBand port by it and \
                 ignores it; `compile --ethernet` reads it as an interface name",
                i.value
            ),
        );
    }
    for p in &g.partitions {
        if parts.by_name(&p.value).is_none() {
            d(
                Severity::Warning,
                "partition-not-found",
                p.loc,
                format!(
                    "no partition named `{}` (partition names are case-sensitive)",
                    p.value
                ),
            );
        }
    }
    for r in &g.pkeys {
        if !parts.by_pkey.keys().any(|k| r.contains(u64::from(*k))) {
            d(
                Severity::Warning,
                "pkey-not-found",
                r.loc,
                format!("no partition with P_Key {:#06x} (OpenSM ERR AC02)", r.lo),
            );
        }
    }
}

/// P_Keys rules test that no partition has.
fn rule_pkeys(policy: &Policy, parts: &Partitions, d: &mut Emit<'_>) {
    for pk in policy.rules.iter().flat_map(|r| &r.pkey) {
        if !parts
            .by_pkey
            .keys()
            .any(|k| pk.contains(u64::from(*k & 0x7fff)))
        {
            d(
                Severity::Warning,
                "pkey-not-found",
                pk.loc,
                format!(
                    "no partition with P_Key {:#06x} (OpenSM ERR AC14)",
                    pk.lo & 0x7fff
                ),
            );
        }
    }
}

/// A set of end ports, `None` meaning any port.
type PortSetOpt = Option<HashSet<crate::fabric::PortRef>>;

/// Where a step reports a finding: severity, code, place, message (the caller adds the file).
pub(crate) type Emit<'a> = dyn FnMut(Severity, &'static str, Loc, String) + 'a;

fn shadowing_without_fabric(policy: &Policy, d: &mut Emit<'_>) {
    // Without a fabric, group contents are unknown: compare group names only.
    let names = |v: &[crate::ast::Spanned<String>]| {
        v.iter()
            .map(|s| s.value.to_ascii_lowercase())
            .collect::<HashSet<_>>()
    };
    let sets: Vec<(HashSet<String>, HashSet<String>)> = policy
        .rules
        .iter()
        .map(|r| (names(&r.source), names(&r.destination)))
        .collect();
    let fields = merged_fields(
        policy
            .rules
            .iter()
            .map(|r| [&r.qos_class[..], &r.service_id[..], &r.pkey[..]]),
    );
    for (j, rj) in policy.rules.iter().enumerate() {
        for (i, ri) in policy.rules[..j].iter().enumerate() {
            // Cheap field tests first: most pairs fail there.
            if !fields_cover(&fields[i], &fields[j]) {
                continue;
            }
            let s_ok =
                ri.source.is_empty() || (!rj.source.is_empty() && sets[j].0.is_subset(&sets[i].0));
            let d_ok = ri.destination.is_empty()
                || (!rj.destination.is_empty() && sets[j].1.is_subset(&sets[i].1));
            if s_ok && d_ok {
                d(Severity::Warning, "shadowed-rule", rj.loc, format!("qos-match-rule {} can never match: rule at {} matches every request it does", j + 1, ri.loc));
                break;
            }
        }
    }
}

fn shadowing(b: &Bound, fabric: &Fabric, ends: &[crate::fabric::PortRef], d: &mut Emit<'_>) {
    let set = |groups: &[usize]| -> Option<HashSet<crate::fabric::PortRef>> {
        if groups.is_empty() {
            return None; // any port
        }
        let gs: Vec<&crate::bind::Group> = groups.iter().filter_map(|g| b.groups.get(*g)).collect();
        if gs.iter().any(|g| !g.node_types.is_empty()) {
            return Some(
                ends.iter()
                    .copied()
                    .filter(|e| gs.iter().any(|g| g.contains(fabric, *e)))
                    .collect(),
            );
        }
        Some(gs.iter().flat_map(|g| g.members.iter().copied()).collect())
    };
    let sets: Vec<(PortSetOpt, PortSetOpt)> = b
        .rules
        .iter()
        .map(|r| (set(&r.source), set(&r.destination)))
        .collect();
    let fields = merged_fields(
        b.rules
            .iter()
            .map(|r| [&r.qos_class[..], &r.service_id[..], &r.pkey[..]]),
    );
    let loc_of = |r: &crate::bind::Rule| match r.origin {
        crate::bind::Origin::MatchRule { loc, .. } | crate::bind::Origin::QosUlps { loc, .. } => {
            loc
        }
    };
    for (j, rj) in b.rules.iter().enumerate() {
        let (sj, dj) = &sets[j];
        if sj.as_ref().is_some_and(|s| s.is_empty()) || dj.as_ref().is_some_and(|s| s.is_empty()) {
            d(Severity::Warning, "never-matches", loc_of(rj), "rule can never match: its source or destination groups hold no port of this fabric".into());
            continue;
        }
        for (i, ri) in b.rules[..j].iter().enumerate() {
            let (si, di) = &sets[i];
            let sub = |inner: &Option<HashSet<crate::fabric::PortRef>>,
                       outer: &Option<HashSet<crate::fabric::PortRef>>| match (
                inner, outer,
            ) {
                (_, None) => true,
                (None, Some(_)) => false,
                (Some(a), Some(o)) => a.is_subset(o),
            };
            if fields_cover(&fields[i], &fields[j]) && sub(sj, si) && sub(dj, di) {
                d(
                    Severity::Warning,
                    "shadowed-rule",
                    loc_of(rj),
                    format!(
                        "rule can never match: the rule at {} matches every request it does first",
                        loc_of(ri)
                    ),
                );
                break;
            }
        }
    }
}

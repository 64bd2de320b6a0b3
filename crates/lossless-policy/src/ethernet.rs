//! The Ethernet profile: the same policy drives DCB on Ethernet ports, as CEE DCBX
//! configuration for `losslessd`.
//!
//! The mapping (docs/policy.md, "Ethernet profile"):
//!
//! * a QoS level's SL is its 802.1p priority, so levels use SL 0-7;
//! * ports are interface names: the `port-name` entries of port groups that have no
//!   `/P<port>` (`port-name: enp65s0f0`), plus `--ports`;
//! * the priority group of priority P on a port is the VL the port's SL2VL table gives SL P
//!   (the last `sl2vl-scope` whose `group` holds the port, as for IB; identity without one),
//!   so those VLs must be 0-7;
//! * a priority group's bandwidth share is the VLArb weight of its VL (the last matching
//!   `vlarb-scope`; `vlarb-high` and `vlarb-low` weights added, since CEE has one weighted
//!   table), split over the groups that carry a priority; without a scope, equal shares;
//! * levels marked lossless (`lossless: yes`, `<lossless/>`, or `--lossless LEVEL`) put PFC on
//!   their priority, on every port;
//! * `qos-class` rules become IEEE 802.1Qaz APP entries, DSCP (TClass >> 2) -> the level's
//!   priority ([`app`]).
//!
//! Criteria that only mean something on an InfiniBand fabric (GUIDs, node types, partitions,
//! `across`, port numbers in `from`/`to`) are left out, each with a note.

mod app;

use crate::ast::{Loc, Policy, PortSet, Spanned};
use crate::check::{Diagnostic, Severity};
use serde::Serialize;

pub use app::EthApp;

/// One level as Ethernet sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthLevel {
    pub name: String,
    pub priority: u8,
    pub lossless: bool,
    pub loc: Loc,
}

/// The DCBX configuration of one interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthPort {
    pub name: String,
    /// PGID of priority 0..7.
    pub pgid: [u8; 8],
    /// Bandwidth percentage of PG 0..7; sums to 100.
    pub percent: [u8; 8],
    /// Priorities with PFC on, ascending.
    pub pfc: Vec<u8>,
    /// IEEE 802.1Qaz APP entries from the `qos-class` rules: DSCP -> priority.
    pub app: Vec<EthApp>,
    /// Port groups holding this interface.
    pub groups: Vec<String>,
    /// The scopes that set its tables (None: the defaults).
    pub sl2vl_scope: Option<Loc>,
    pub vlarb_scope: Option<Loc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthConfig {
    pub levels: Vec<EthLevel>,
    pub ports: Vec<EthPort>,
}

/// What to compile besides the policy.
#[derive(Debug, Clone, Default)]
pub struct EthOptions {
    /// Interfaces to configure besides those the policy names.
    pub ports: Vec<String>,
    /// Levels to treat as lossless besides those the policy marks.
    pub lossless: Vec<String>,
}

/// Why an interface name cannot be a losslessd port section (the kernel's rules).
fn bad_ifname(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 15 {
        Some("an interface name is 1 to 15 bytes")
    } else if name == "." || name == ".." {
        Some("`.` and `..` are not interface names")
    } else if name.contains(['*', '?', '[']) {
        Some("a single interface name (globs would make the emitted sections overlap)")
    } else if name
        .chars()
        .any(|c| c == '/' || c == ':' || c.is_whitespace() || c.is_control())
    {
        Some("an interface name has no `/`, `:`, blanks or control characters")
    } else {
        None
    }
}

/// Largest-remainder split of 100 % by `weights` (all zero: nothing).
fn percentages(weights: &[u64; 8]) -> [u8; 8] {
    let total: u64 = weights.iter().sum();
    let mut out = [0u8; 8];
    if total == 0 {
        return out;
    }
    let mut rem: Vec<(u64, usize)> = Vec::new();
    let mut given = 0u64;
    for (i, w) in weights.iter().enumerate() {
        let exact = w * 100;
        out[i] = u8::try_from(exact / total).unwrap_or(100);
        given += exact / total;
        rem.push((exact % total, i));
    }
    // Largest remainders first; on a tie the lower PG.
    rem.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in rem
        .into_iter()
        .take(usize::try_from(100 - given).unwrap_or(0))
    {
        out[i] += 1;
    }
    out
}

/// Compile the policy for Ethernet. `Err` holds the errors; notes come with either.
pub fn compile_ethernet(
    file: &str,
    policy: &Policy,
    opts: &EthOptions,
) -> (Option<EthConfig>, Vec<Diagnostic>) {
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut d = |severity, code, loc, message: String| {
        diags.push(Diagnostic {
            severity,
            code,
            file: file.to_string(),
            loc,
            message,
        })
    };
    use Severity::{Error, Warning};
    let names = policy.names();
    let top = Loc { line: 1, col: 1 };

    // Levels -> priorities.
    let mut lossless = vec![false; policy.levels.len()];
    for (i, l) in policy.levels.iter().enumerate() {
        lossless[i] = l.lossless;
    }
    for n in &opts.lossless {
        match names.level(n) {
            Some(i) => lossless[i] = true,
            None => {
                let known: Vec<&str> = policy
                    .levels
                    .iter()
                    .map(|l| l.name.value.as_str())
                    .collect();
                d(
                    Error,
                    "unknown-level",
                    top,
                    format!(
                        "--lossless {n}: no QoS level of that name, expected one of: {}",
                        if known.is_empty() {
                            "(no levels defined)".to_string()
                        } else {
                            known.join(", ")
                        }
                    ),
                );
            }
        }
    }
    let mut levels = Vec::new();
    for (i, l) in policy.levels.iter().enumerate() {
        match u8::try_from(l.sl.value).ok().filter(|s| *s < 8) {
            Some(p) => levels.push(EthLevel {
                name: l.name.value.clone(),
                priority: p,
                lossless: lossless[i],
                loc: l.loc,
            }),
            None => d(
                Error,
                "sl-not-priority",
                l.sl.loc,
                format!(
                    "level `{}` has SL {}: on Ethernet the SL is the 802.1p priority, 0-7",
                    l.name.value, l.sl.value
                ),
            ),
        }
    }
    for u in policy
        .ulps
        .iter()
        .map(|u| (&u.sl, u.text.as_str()))
        .chain(policy.ulp_default.iter().map(|s| (s, "default")))
    {
        if u.0.value >= 8 {
            d(
                Error,
                "sl-not-priority",
                u.0.loc,
                format!(
                    "qos-ulps `{}` gives SL {}: on Ethernet the SL is the 802.1p priority, 0-7",
                    u.1, u.0.value
                ),
            );
        }
    }
    let mut pfc: Vec<u8> = levels
        .iter()
        .filter(|l| l.lossless)
        .map(|l| l.priority)
        .collect();
    pfc.sort_unstable();
    pfc.dedup();
    // Priorities some level or qos-ulps line uses.
    let mut used = [false; 8];
    for l in &levels {
        used[usize::from(l.priority)] = true;
    }
    for s in policy
        .ulps
        .iter()
        .map(|u| &u.sl)
        .chain(policy.ulp_default.iter())
    {
        if let Some(u) = used.get_mut(usize::try_from(s.value).unwrap_or(8)) {
            *u = true;
        }
    }

    // Ports: interface names in groups, then --ports.
    let mut ports: Vec<(String, Loc)> = Vec::new();
    for g in &policy.port_groups {
        for i in &g.interfaces {
            if !ports.iter().any(|(n, _)| *n == i.value) {
                ports.push((i.value.clone(), i.loc));
            }
        }
        let ib: Vec<&str> = [
            (!g.port_guids.is_empty(), "port-guid"),
            (!g.port_names.is_empty(), "IB port names (`<node>/P<port>`)"),
            (!g.pkeys.is_empty(), "pkey"),
            (!g.partitions.is_empty(), "partition"),
            (!g.node_types.is_empty(), "node-type"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, w)| *w)
        .collect();
        if !ib.is_empty() {
            d(
                Warning,
                "ib-only",
                g.name.loc,
                format!(
                    "port group `{}`: {} select InfiniBand ports; on Ethernet only interface \
                     names (`port-name: enp65s0f0`) select ports",
                    g.name.value,
                    ib.join(", ")
                ),
            );
        }
    }
    for p in &opts.ports {
        if !ports.iter().any(|(n, _)| n == p) {
            ports.push((p.clone(), top));
        }
    }
    for (n, loc) in &ports {
        if let Some(why) = bad_ifname(n) {
            d(
                Error,
                "interface-name",
                *loc,
                format!("`{n}` cannot be configured: {why}"),
            );
        }
    }
    if ports.is_empty() {
        d(
            Error,
            "no-ports",
            policy.port_groups.first().map_or(top, |g| g.loc),
            "no Ethernet port to configure: name interfaces in a port group \
             (`port-name: enp65s0f0`) or with --ports"
                .to_string(),
        );
    }

    // Which groups hold an interface (by name, case-insensitively as groups are found).
    let in_groups = |iface: &str, groups: &[Spanned<String>]| {
        groups.iter().any(|g| {
            names
                .group(&g.value)
                .and_then(|gi| policy.port_groups.get(gi))
                .is_some_and(|pg| pg.interfaces.iter().any(|i| i.value == iface))
        })
    };
    for s in &policy.sl2vl_scopes {
        if !s.across_from.is_empty() || !s.across_to.is_empty() {
            d(
                Warning,
                "ib-only",
                s.loc,
                "sl2vl-scope: `across` needs an InfiniBand fabric; ignored on Ethernet".to_string(),
            );
        }
        if matches!(s.from, PortSet::List(_)) || matches!(s.to, PortSet::List(_)) {
            d(Warning, "ib-only", s.loc, "sl2vl-scope: port numbers in `from`/`to` mean nothing for interfaces; the scope applies to every interface of its groups".to_string());
        }
        for (sl, vl) in s.table.iter().enumerate().take(8) {
            if *vl >= 8 && ports.iter().any(|(n, _)| in_groups(n, &s.groups)) {
                d(
                    Error,
                    "vl-not-pg",
                    s.table_loc,
                    format!(
                        "sl2vl-table maps SL {sl} to VL {vl}: on Ethernet VLs are priority groups \
                         0-7{}",
                        if *vl == 15 {
                            " (VL15, dropped, has no DCBX equivalent)"
                        } else {
                            ""
                        }
                    ),
                );
            }
        }
    }
    for s in &policy.vlarb_scopes {
        if !s.across.is_empty() {
            d(
                Warning,
                "ib-only",
                s.loc,
                "vlarb-scope: `across` needs an InfiniBand fabric; ignored on Ethernet".to_string(),
            );
        }
        if s.high.is_some() || s.high_limit.is_some() {
            d(Warning, "vlarb-high", s.loc, "vlarb-high and vl-high-limit have no CEE equivalent: high and low weights are added into one bandwidth table".to_string());
        }
    }

    let mut apps = app::entries(policy, &names, &levels, &ports, &mut d).into_iter();
    let mut out_ports = Vec::new();
    for (name, _) in &ports {
        let groups: Vec<String> = policy
            .port_groups
            .iter()
            .filter(|g| g.interfaces.iter().any(|i| i.value == *name))
            .map(|g| g.name.value.clone())
            .collect();
        // Last matching scope wins, as for IB.
        let sl2vl = policy
            .sl2vl_scopes
            .iter()
            .rev()
            .find(|s| !s.groups.is_empty() && in_groups(name, &s.groups));
        let vlarb = policy
            .vlarb_scopes
            .iter()
            .rev()
            .find(|s| !s.groups.is_empty() && in_groups(name, &s.groups));
        let mut pgid = [0u8; 8];
        for (p, slot) in pgid.iter_mut().enumerate() {
            *slot = sl2vl.map_or(p as u8, |s| s.table[p].min(7));
        }
        // Bandwidth goes to the groups some priority is in.
        let mut carries = [false; 8];
        for g in &pgid {
            carries[usize::from(*g)] = true;
        }
        let mut weights = [0u64; 8];
        match vlarb {
            Some(s) => {
                for w in s.high.iter().chain(&s.low).flatten() {
                    if let Some(slot) = usize::try_from(w.vl).ok().and_then(|v| weights.get_mut(v))
                    {
                        *slot += w.weight;
                    }
                }
                for (g, c) in carries.iter().enumerate() {
                    if !*c {
                        weights[g] = 0;
                    }
                }
                if weights.iter().all(|w| *w == 0) {
                    d(
                        Error,
                        "no-bandwidth",
                        s.loc,
                        format!(
                            "{name}: the vlarb-scope gives no weight to any VL its priorities \
                             use (PGs {:?}), so no priority group would get bandwidth",
                            carries
                                .iter()
                                .enumerate()
                                .filter(|(_, c)| **c)
                                .map(|(g, _)| g)
                                .collect::<Vec<_>>()
                        ),
                    );
                }
                for (p, g) in pgid.iter().enumerate() {
                    if used[p] && weights[usize::from(*g)] == 0 {
                        d(
                            Warning,
                            "zero-bandwidth",
                            s.loc,
                            format!("{name}: priority {p} is in PG {g}, which gets 0 % (no weight for VL {g})"),
                        );
                    }
                }
            }
            None => {
                for (g, c) in carries.iter().enumerate() {
                    weights[g] = u64::from(*c);
                }
            }
        }
        out_ports.push(EthPort {
            name: name.clone(),
            pgid,
            percent: percentages(&weights),
            pfc: pfc.clone(),
            app: apps.next().unwrap_or_default(),
            groups,
            sl2vl_scope: sl2vl.map(|s| s.loc),
            vlarb_scope: vlarb.map(|s| s.loc),
        });
    }
    let failed = diags.iter().any(|x| x.severity == Severity::Error);
    let cfg = (!failed).then_some(EthConfig {
        levels,
        ports: out_ports,
    });
    (cfg, diags)
}

/// A TOML basic string.
fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list<T: std::fmt::Display>(v: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    format!("[{}]", v.join(", "))
}

impl EthConfig {
    /// The `[ports."NAME"]` sections of a losslessd configuration file (docs/config.md),
    /// with comments saying where each value came from.
    pub fn to_toml(&self, source: &str, notes: &[Diagnostic]) -> String {
        let mut s = String::new();
        s.push_str(&format!(
            "# losslessd port configuration compiled from the QoS policy {source}\n\
             # by `lossless policy compile --ethernet` (docs/policy.md, \"Ethernet profile\").\n\
             # Priority = the level's SL; PFC on the lossless levels' priorities; priority\n\
             # group = the VL of the port's SL2VL table; PG bandwidth = the VLArb weights;\n\
             # APP (IEEE 802.1Qaz): a qos-class rule's DSCP (TClass >> 2) -> its level's priority.\n#\n"
        ));
        for l in &self.levels {
            s.push_str(&format!(
                "#   level {} ({}): priority {}{}\n",
                l.name,
                l.loc,
                l.priority,
                if l.lossless { ", lossless (PFC)" } else { "" }
            ));
        }
        for n in notes {
            s.push_str(&format!("# note: {n}\n"));
        }
        for p in &self.ports {
            s.push_str(&format!("\n[ports.{}]\n", toml_str(&p.name)));
            let from = |what: &str, l: Option<Loc>| match l {
                Some(l) => format!("{what} at {l}"),
                None => format!("no {what}: defaults"),
            };
            s.push_str(&format!(
                "# groups: {}; {}; {}\n",
                if p.groups.is_empty() {
                    "none (--ports)".to_string()
                } else {
                    p.groups.join(", ")
                },
                from("sl2vl-scope", p.sl2vl_scope),
                from("vlarb-scope", p.vlarb_scope)
            ));
            s.push_str(&format!("pg.pgid = {}\n", list(p.pgid)));
            s.push_str(&format!("pg.percent = {}\n", list(p.percent)));
            s.push_str(&format!("pfc.priorities = {}\n", list(&p.pfc)));
            s.push_str(&app::to_toml(&p.app));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::percentages;

    #[test]
    fn percentages_sum_to_100() {
        assert_eq!(percentages(&[1; 8]), [13, 13, 13, 13, 12, 12, 12, 12]);
        assert_eq!(
            percentages(&[1, 1, 1, 0, 0, 0, 0, 0]),
            [34, 33, 33, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            percentages(&[255, 127, 63, 0, 0, 0, 0, 0]),
            [57, 29, 14, 0, 0, 0, 0, 0]
        );
        assert_eq!(percentages(&[0; 8]), [0; 8]);
        for w in [[7u64, 3, 0, 9, 1, 1, 0, 200], [1, 0, 0, 0, 0, 0, 0, 0]] {
            assert_eq!(
                percentages(&w).iter().map(|x| u32::from(*x)).sum::<u32>(),
                100
            );
        }
    }
}

//! A policy applied to a fabric: port groups become port sets, rules point at levels, the
//! qos-ulps lines become rules after the match rules. This is what OpenSM does while it
//! parses and validates (`osm_qos_policy_validate`); the errors here are the ones that make
//! OpenSM drop the whole policy.

use crate::ast::{Loc, NumRange, Policy, PortGroup, PortName, QosLevel, Spanned, UlpKind, UlpRule};
use crate::fabric::{Fabric, NodeKind, PortRef};
use crate::partitions::Partitions;
use serde::Serialize;
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum BindError {
    #[error("{file}:{loc}: no QoS level named `default` and no `default` line in qos-ulps, expected one of them (OpenSM ERR AC10)")]
    NoDefaultLevel { file: String, loc: Loc },
    #[error("{file}:{loc}: qos-match-rule {rule}: unknown qos-level `{found}`, expected one of: {expected} (OpenSM ERR AC11)")]
    UnknownLevel {
        file: String,
        loc: Loc,
        rule: usize,
        found: String,
        expected: String,
    },
    #[error("{file}:{loc}: qos-match-rule {rule}: unknown {role} port-group `{found}`, expected one of: {expected} (OpenSM ERR AC12/AC13)")]
    UnknownGroup {
        file: String,
        loc: Loc,
        rule: usize,
        role: &'static str,
        found: String,
        expected: String,
    },
    #[error("{file}:{loc}: port name `{found}`: node exists but has no port {port}, expected {expected}")]
    PortOutOfRange {
        file: String,
        loc: Loc,
        found: String,
        port: u64,
        expected: String,
    },
    #[error("{file}:{loc}: IPoIB rule for P_Key {pkey:#06x}: {found}, expected a partition with at least two full members (OpenSM rejects the policy)")]
    IpoibPartition {
        file: String,
        loc: Loc,
        pkey: u64,
        found: String,
    },
}

/// A QoS level as resolution uses it (policy levels plus OpenSM's generated simple levels).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Level {
    pub name: String,
    pub use_: Option<String>,
    pub sl: u8,
    pub mtu_limit: Option<u8>,
    pub rate_limit: Option<u8>,
    pub packet_life: Option<u8>,
    pub path_bits: Vec<NumRange>,
    pub pkeys: Vec<NumRange>,
    pub lossless: bool,
    pub loc: Option<Loc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "section", rename_all = "kebab-case")]
pub enum Origin {
    /// `qos-match-rules`, 1-based rule number as OpenSM counts them.
    MatchRule {
        number: usize,
        loc: Loc,
    },
    QosUlps {
        kind: UlpKind,
        loc: Loc,
    },
}

/// A rule with its groups resolved to port sets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub origin: Origin,
    pub use_: Option<String>,
    /// Indices into [`Bound::groups`].
    pub source: Vec<usize>,
    pub destination: Vec<usize>,
    pub qos_class: Vec<NumRange>,
    pub service_id: Vec<NumRange>,
    pub pkey: Vec<NumRange>,
    pub level: usize,
}

/// A port group as a set of end ports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    pub name: String,
    pub members: HashSet<PortRef>,
    #[serde(skip)]
    pub node_types: crate::ast::NodeTypes,
}

impl Group {
    /// No end port of the fabric is in the group.
    pub fn is_empty_in(&self, fabric: &Fabric, ends: &[PortRef]) -> bool {
        if !self.members.is_empty() {
            return false;
        }
        let t = &self.node_types;
        !(t.ca || t.switch || t.router) || !ends.iter().any(|e| self.contains(fabric, *e))
    }

    pub fn contains(&self, fabric: &Fabric, p: PortRef) -> bool {
        let kind = fabric.node(p).map(|n| n.kind);
        let t = &self.node_types;
        (t.ca && kind == Some(NodeKind::Ca))
            || (t.switch && kind == Some(NodeKind::Switch))
            || (t.router && kind == Some(NodeKind::Router))
            || self.members.contains(&p)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Bound {
    pub groups: Vec<Group>,
    pub levels: Vec<Level>,
    pub rules: Vec<Rule>,
    pub default_level: usize,
}

/// Bind a policy to a fabric and its partitions.
pub fn bind(
    file: &str,
    policy: &Policy,
    fabric: &Fabric,
    parts: &Partitions,
) -> Result<Bound, BindError> {
    let by_guid = fabric.end_ports_by_guid();
    let mut groups = policy
        .port_groups
        .iter()
        .map(|g| bind_group(file, g, fabric, &by_guid, parts))
        .collect::<Result<Vec<Group>, BindError>>()?;
    let mut levels: Vec<Level> = policy.levels.iter().map(bind_level).collect();
    let default_level = default_level(file, policy, &mut levels)?;
    let mut rules = match_rules(file, policy)?;
    // qos-ulps rules, after all match rules, each with a simple level carrying only the SL.
    let mut ulps = UlpRules {
        groups: &mut groups,
        levels: &mut levels,
        by_guid: &by_guid,
        simple: [None; 16],
    };
    for u in &policy.ulps {
        check_ipoib_partitions(file, u, parts)?;
        rules.push(ulps.rule(u));
    }
    Ok(Bound {
        groups,
        levels,
        rules,
        default_level,
    })
}

/// A port group as the set of end ports its GUIDs, port names, P_Keys, partitions and
/// `SELF` name; node types stay a test (CA, SWITCH, ROUTER are checked per port).
fn bind_group(
    file: &str,
    g: &PortGroup,
    fabric: &Fabric,
    by_guid: &[(u64, PortRef)],
    parts: &Partitions,
) -> Result<Group, BindError> {
    let mut members = HashSet::new();
    for r in &g.port_guids {
        members.extend(guids_in(by_guid, r));
    }
    for pn in &g.port_names {
        if let Some(r) = named_port(file, pn, fabric)? {
            members.insert(r);
        }
    }
    for r in &crate::parse::values::pkey_ranges(g.pkeys.clone()) {
        for p in parts.by_pkey.values() {
            if r.contains(u64::from(p.pkey)) {
                members.extend(p.members.keys().copied());
            }
        }
    }
    for name in &g.partitions {
        if let Some(p) = parts.by_name(&name.value) {
            members.extend(p.members.keys().copied());
        }
    }
    if g.node_types.self_port {
        if let Some(sm) = fabric.sm_port {
            members.insert(sm);
        }
    }
    let mut node_types = g.node_types;
    node_types.self_port = false;
    Ok(Group {
        name: g.name.value.clone(),
        members,
        node_types,
    })
}

/// The end port a `<node description>/P<port>` names; `None` when no node has that
/// description (OpenSM ignores it), an error when the node lacks the port.
fn named_port(
    file: &str,
    pn: &Spanned<PortName>,
    fabric: &Fabric,
) -> Result<Option<PortRef>, BindError> {
    let Some(ni) = fabric.by_desc(&pn.value.node_desc) else {
        return Ok(None);
    };
    let port = u8::try_from(pn.value.port).ok().and_then(|p| {
        let n = fabric.nodes.get(ni)?;
        // OpenSM knows every port of a switch, linked or not (all name its port 0), but
        // only the linked ports of a CA or router.
        match n.kind {
            NodeKind::Switch => (1..=n.nports).contains(&p).then_some(()),
            _ => n.port(p).map(|_| ()),
        }
    });
    if port.is_none() {
        let expected = match fabric.nodes.get(ni) {
            Some(n) if n.kind == NodeKind::Switch => format!(
                "a port from 1 to {} (OpenSM reads past the switch's port table for this: \
                 undefined behaviour)",
                n.nports
            ),
            Some(n) => format!(
                "a linked port ({}; OpenSM rejects the policy)",
                n.ports
                    .iter()
                    .filter(|p| p.peer.is_some())
                    .map(|p| format!("P{}", p.num))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "a port of the node".into(),
        };
        return Err(BindError::PortOutOfRange {
            file: file.into(),
            loc: pn.loc,
            found: format!("{}/P{}", pn.value.node_desc, pn.value.port),
            port: pn.value.port,
            expected,
        });
    }
    Ok(Some(fabric.base_port(PortRef {
        node: ni,
        port: u8::try_from(pn.value.port).unwrap_or(0),
    })))
}

fn bind_level(l: &QosLevel) -> Level {
    Level {
        name: l.name.value.clone(),
        use_: l.use_.clone(),
        sl: u8::try_from(l.sl.value).unwrap_or(15),
        mtu_limit: l
            .mtu_limit
            .as_ref()
            .and_then(|v| u8::try_from(v.value).ok()),
        rate_limit: l
            .rate_limit
            .as_ref()
            .and_then(|v| u8::try_from(v.value).ok()),
        packet_life: l
            .packet_life
            .as_ref()
            .and_then(|v| u8::try_from(v.value).ok()),
        path_bits: l.path_bits.clone(),
        pkeys: crate::parse::values::pkey_ranges(l.pkeys.clone()),
        lossless: l.lossless,
        loc: Some(l.loc),
    }
}

/// Default level: a level named "default", else the qos-ulps default as a simple level.
fn default_level(file: &str, policy: &Policy, levels: &mut Vec<Level>) -> Result<usize, BindError> {
    if let Some((i, _)) = policy.level("default") {
        return Ok(i);
    }
    let Some(sl) = &policy.ulp_default else {
        let loc = policy
            .sections
            .first()
            .map(|s| s.1)
            .unwrap_or(Loc { line: 1, col: 1 });
        return Err(BindError::NoDefaultLevel {
            file: file.into(),
            loc,
        });
    };
    levels.push(simple_level("SimpleQoSLevel_DEFAULT", sl.value));
    Ok(levels.len() - 1)
}

/// The qos-match-rules, their level and groups looked up by name.
fn match_rules(file: &str, policy: &Policy) -> Result<Vec<Rule>, BindError> {
    let ix = policy.names();
    let mut rules = Vec::new();
    for (i, r) in policy.rules.iter().enumerate() {
        let number = i + 1;
        let Some(level) = ix.level(&r.level.value) else {
            return Err(BindError::UnknownLevel {
                file: file.into(),
                loc: r.level.loc,
                rule: number,
                found: r.level.value.clone(),
                expected: level_names(policy),
            });
        };
        let lookup = |names: &[Spanned<String>], role: &'static str| {
            names
                .iter()
                .map(|n| {
                    ix.group(&n.value).ok_or_else(|| BindError::UnknownGroup {
                        file: file.into(),
                        loc: n.loc,
                        rule: number,
                        role,
                        found: n.value.clone(),
                        expected: group_names(policy),
                    })
                })
                .collect::<Result<Vec<usize>, BindError>>()
        };
        let source = lookup(&r.source, "source")?;
        let destination = lookup(&r.destination, "destination")?;
        rules.push(Rule {
            origin: Origin::MatchRule { number, loc: r.loc },
            use_: r.use_.clone(),
            source,
            destination,
            qos_class: r.qos_class.clone(),
            service_id: r.service_id.clone(),
            pkey: crate::parse::values::pkey_ranges(r.pkey.clone()),
            level,
        });
    }
    Ok(rules)
}

/// The defined level names, for "expected one of".
fn level_names(policy: &Policy) -> String {
    let mut v: Vec<&str> = policy
        .levels
        .iter()
        .map(|l| l.name.value.as_str())
        .collect();
    v.dedup();
    if v.is_empty() {
        "(no levels defined)".to_string()
    } else {
        v.join(", ")
    }
}

/// The defined port group names, for "expected one of".
fn group_names(policy: &Policy) -> String {
    let v: Vec<&str> = policy
        .port_groups
        .iter()
        .map(|g| g.name.value.as_str())
        .collect();
    if v.is_empty() {
        "(no port groups defined)".to_string()
    } else {
        v.join(", ")
    }
}

/// OpenSM rejects an IPoIB line whose partition does not exist or has fewer than two full
/// members.
fn check_ipoib_partitions(file: &str, u: &UlpRule, parts: &Partitions) -> Result<(), BindError> {
    if !matches!(u.kind, UlpKind::Ipoib | UlpKind::IpoibPkey) {
        return Ok(());
    }
    for r in &u.pkey {
        for pk in r.lo..=r.hi.min(r.lo + 0x7fff) {
            let p = parts.by_pkey.get(&((pk & 0x7fff) as u16));
            let found = match p {
                None => Some("no such partition".to_string()),
                Some(p) if p.members.values().filter(|f| **f).count() < 2 => Some(format!(
                    "partition `{}` has fewer than two full members",
                    p.name
                )),
                Some(_) => None,
            };
            if let Some(found) = found {
                return Err(BindError::IpoibPartition {
                    file: file.into(),
                    loc: u.loc,
                    pkey: pk,
                    found,
                });
            }
        }
    }
    Ok(())
}

/// qos-ulps lines becoming rules: each gets the simple level of its SL (one per SL, made on
/// first use) and, for GUID criteria, a group of its own.
struct UlpRules<'b> {
    groups: &'b mut Vec<Group>,
    levels: &'b mut Vec<Level>,
    by_guid: &'b [(u64, PortRef)],
    /// The simple level made for each SL so far.
    simple: [Option<usize>; 16],
}

impl UlpRules<'_> {
    fn rule(&mut self, u: &UlpRule) -> Rule {
        let sl = usize::try_from(u.sl.value).unwrap_or(0).min(15);
        let level = match self.simple[sl] {
            Some(l) => l,
            None => {
                self.levels
                    .push(simple_level(&format!("SimpleQoSLevel_SL{sl}"), sl as u64));
                self.simple[sl] = Some(self.levels.len() - 1);
                self.levels.len() - 1
            }
        };
        let (mut source, mut destination) = (vec![], vec![]);
        match u.kind {
            UlpKind::SrpTargetGuid => destination.push(self.group("_SRP_Targets_", &u.dest_guids)),
            UlpKind::AnyTargetGuid => destination.push(self.group("_ULP_Targets_", &u.dest_guids)),
            UlpKind::AnySourceGuid => source.push(self.group("_ULP_Sources_", &u.source_guids)),
            UlpKind::AnySourceTargetGuid => {
                let g = self.group("_ULP_Sources_Targets_", &u.source_guids);
                source.push(g);
                destination.push(g);
            }
            _ => {}
        }
        Rule {
            origin: Origin::QosUlps {
                kind: u.kind,
                loc: u.loc,
            },
            use_: Some(u.text.clone()),
            source,
            destination,
            qos_class: vec![],
            service_id: u.service_id.clone(),
            pkey: u.pkey.clone(),
            level,
        }
    }

    /// A group of the end ports with these GUIDs; its index.
    fn group(&mut self, name: &str, guids: &[NumRange]) -> usize {
        let members = guids
            .iter()
            .flat_map(|r| guids_in(self.by_guid, r))
            .collect();
        self.groups.push(Group {
            name: name.to_string(),
            members,
            node_types: Default::default(),
        });
        self.groups.len() - 1
    }
}

/// End ports whose GUID is in `r`; `by_guid` is [`Fabric::end_ports_by_guid`].
pub fn guids_in<'a>(
    by_guid: &'a [(u64, PortRef)],
    r: &NumRange,
) -> impl Iterator<Item = PortRef> + 'a {
    let from = by_guid.partition_point(|(g, _)| *g < r.lo);
    let hi = r.hi;
    by_guid
        .get(from..)
        .unwrap_or(&[])
        .iter()
        .take_while(move |(g, _)| *g <= hi)
        .map(|(_, p)| *p)
}

fn simple_level(name: &str, sl: u64) -> Level {
    Level {
        name: name.to_string(),
        use_: None,
        sl: u8::try_from(sl).unwrap_or(0),
        mtu_limit: None,
        rate_limit: None,
        packet_life: None,
        path_bits: vec![],
        pkeys: vec![],
        lossless: false,
        loc: None,
    }
}

//! OpenSM's `partitions.conf`, and the P_Key tables it gives the fabric's ports.
//!
//! Statements end with `;`: `Name[=PKey][,flag[=value]]* : member[,member]* ;` where a member
//! is `ALL`, `ALL_CAS`, `ALL_SWITCHES`, `ALL_ROUTERS`, `SELF` or a port GUID, optionally
//! `=full`, `=limited` or `=both`. Flags that matter here: `sl=` (the partition's SL, used
//! when no QoS level applies), `ipoib` and `defmember=`.

use crate::ast::Loc;
use crate::fabric::{Fabric, NodeKind, PortRef};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PartitionsError {
    #[error("{file}:{loc}: unexpected {found}, expected {expected}")]
    Unexpected {
        file: String,
        loc: Loc,
        found: String,
        expected: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Membership {
    Limited,
    Full,
    Both,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum MemberSpec {
    All,
    AllCas,
    AllSwitches,
    AllRouters,
    SelfPort,
    Guid(u64),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Member {
    pub spec: MemberSpec,
    pub membership: Membership,
    pub loc: Loc,
}

/// One statement of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartitionDef {
    pub name: Option<String>,
    /// Low 15 bits; `None` when the file lets OpenSM generate it.
    pub pkey: Option<u16>,
    pub sl: Option<u8>,
    pub ipoib: bool,
    pub members: Vec<Member>,
    pub loc: Loc,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PartitionsConf {
    pub defs: Vec<PartitionDef>,
}

fn loc_of(src: &str, byte: usize) -> Loc {
    let before = src.get(..byte).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Loc {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        col: u32::try_from(col).unwrap_or(u32::MAX),
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// OpenSM compares flags and keywords by prefix (`strncmp(flag, "full", strlen(flag))`).
fn abbrev(word: &str, full: &str) -> bool {
    !word.is_empty() && full.starts_with(word)
}

pub fn parse(file: &str, src: &str) -> Result<PartitionsConf, PartitionsError> {
    // Blank out comments but keep byte offsets, so locations stay right.
    let mut text = String::with_capacity(src.len());
    for line in src.split_inclusive('\n') {
        match line.find('#') {
            Some(i) => {
                text.push_str(&line[..i]);
                text.extend(
                    line[i..]
                        .chars()
                        .map(|c| if c == '\n' { '\n' } else { ' ' }),
                );
            }
            None => text.push_str(line),
        }
    }
    let err = |at: usize, found: &str, expected: &str| PartitionsError::Unexpected {
        file: file.to_string(),
        loc: loc_of(&text, at),
        found: if found.is_empty() {
            "end of statement".into()
        } else {
            format!("`{}`", found.trim())
        },
        expected: expected.to_string(),
    };
    let mut defs = Vec::new();
    let mut start = 0usize;
    for stmt in text.split_inclusive(';') {
        let at = start;
        start += stmt.len();
        let body = stmt.strip_suffix(';');
        if body.is_none() {
            if stmt.trim().is_empty() {
                continue;
            }
            let lead = stmt.len() - stmt.trim_start().len();
            return Err(err(
                at + lead,
                "end of file",
                "`;` to end the partition definition",
            ));
        }
        let body = body.unwrap_or("");
        if body.trim().is_empty() {
            continue;
        }
        let lead = body.len() - body.trim_start().len();
        let Some((header, members)) = body.split_once(':') else {
            return Err(err(
                at + lead,
                body.trim(),
                "`Name[=PKey][,flags] : members ;` (no `:` found)",
            ));
        };
        let members_at = at + header.len() + 1;
        let mut def = PartitionDef {
            name: None,
            pkey: None,
            sl: None,
            ipoib: false,
            members: vec![],
            loc: loc_of(&text, at + lead),
        };
        let mut defmember = Membership::Limited;
        let mut off = at;
        for (i, part) in header.split(',').enumerate() {
            let p_at = off + (part.len() - part.trim_start().len());
            off += part.len() + 1;
            let (k, v) = match part.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (part.trim(), None),
            };
            if i == 0 {
                if !k.is_empty() {
                    def.name = Some(k.to_string());
                }
                if let Some(v) = v {
                    let n = parse_u64(v)
                        .filter(|n| *n <= 0xffff)
                        .ok_or_else(|| err(p_at, v, "a P_Key (0x0001-0x7fff)"))?;
                    def.pkey = Some((n & 0x7fff) as u16);
                } else if k.starts_with(|c: char| c.is_ascii_digit()) {
                    let n = parse_u64(k)
                        .filter(|n| *n <= 0xffff)
                        .ok_or_else(|| err(p_at, k, "a P_Key"))?;
                    def.name = None;
                    def.pkey = Some((n & 0x7fff) as u16);
                }
                continue;
            }
            if k.is_empty() {
                return Err(err(p_at, part, "a partition flag"));
            }
            if abbrev(k, "sl") {
                let n = v
                    .and_then(parse_u64)
                    .filter(|n| *n <= 15)
                    .ok_or_else(|| err(p_at, part, "sl=<0-15>"))?;
                def.sl = Some(n as u8);
            } else if abbrev(k, "ipoib") {
                def.ipoib = true;
            } else if abbrev(k, "defmember") {
                defmember = match v {
                    Some(v) if abbrev(v, "full") => Membership::Full,
                    Some(v) if abbrev(v, "both") => Membership::Both,
                    Some(v) if abbrev(v, "limited") => Membership::Limited,
                    _ => return Err(err(p_at, part, "defmember=full, limited or both")),
                };
            }
            // mtu, rate, scope, Q_Key, TClass, FlowLabel, indx0: multicast settings that do not
            // affect PathRecords; accepted and ignored.
        }
        let mut m_off = members_at;
        for m in members.split(',') {
            let m_at = m_off + (m.len() - m.trim_start().len());
            m_off += m.len() + 1;
            let m = m.trim();
            if m.is_empty() {
                continue;
            }
            if m.starts_with("mgid")
                || ["rate", "mtu", "sl", "scope", "Q_Key", "TClass", "FlowLabel"]
                    .iter()
                    .any(|f| m.starts_with(&format!("{f}=")))
            {
                continue; // multicast group definitions
            }
            let (name, flag) = match m.split_once('=') {
                Some((n, f)) => (n.trim(), Some(f.trim())),
                None => (m, None),
            };
            let membership = match flag {
                None => defmember,
                Some(f) if abbrev(f, "full") => Membership::Full,
                Some(f) if abbrev(f, "both") => Membership::Both,
                Some(_) => Membership::Limited,
            };
            let spec = if name == "ALL" {
                MemberSpec::All
            } else if name == "ALL_CAS" {
                MemberSpec::AllCas
            } else if name == "ALL_SWITCHES" {
                MemberSpec::AllSwitches
            } else if name == "ALL_ROUTERS" {
                MemberSpec::AllRouters
            } else if name == "SELF" {
                MemberSpec::SelfPort
            } else if name == "NONE" {
                continue;
            } else {
                match parse_u64(name).filter(|g| *g != 0) {
                    Some(g) => MemberSpec::Guid(g),
                    None => {
                        return Err(err(
                            m_at,
                            name,
                            "a port GUID, ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS or SELF",
                        ))
                    }
                }
            };
            def.members.push(Member {
                spec,
                membership,
                loc: loc_of(&text, m_at),
            });
        }
        defs.push(def);
    }
    Ok(PartitionsConf { defs })
}

/// A partition after applying the file to a fabric.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partition {
    pub name: String,
    pub pkey: u16,
    pub sl: u8,
    pub ipoib: bool,
    /// Member end ports and whether each is a full member.
    pub members: BTreeMap<PortRef, bool>,
}

/// All partitions of the subnet, keyed by P_Key (low 15 bits).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Partitions {
    pub by_pkey: BTreeMap<u16, Partition>,
}

impl Partitions {
    /// What OpenSM builds: the default partition 0x7fff first (every end port full when there
    /// is no file, limited plus the SM port full when there is one), then each statement.
    pub fn build(conf: Option<&PartitionsConf>, fabric: &Fabric) -> Partitions {
        let ends = fabric.end_ports();
        let mut out = Partitions::default();
        let mut default = Partition {
            name: "Default".into(),
            pkey: 0x7fff,
            sl: 0,
            ipoib: conf.is_none(),
            members: BTreeMap::new(),
        };
        for e in &ends {
            default.members.insert(*e, conf.is_none());
        }
        if let Some(sm) = fabric.sm_port {
            default.members.insert(sm, true);
        }
        out.by_pkey.insert(0x7fff, default);
        let Some(conf) = conf else { return out };
        let mut counter: u16 = 0;
        for def in &conf.defs {
            let pkey = match def.pkey.filter(|p| *p != 0) {
                Some(p) => p,
                None => {
                    if let Some(p) = def
                        .name
                        .as_ref()
                        .and_then(|n| out.by_pkey.values().find(|p| &p.name == n))
                        .map(|p| p.pkey)
                    {
                        p
                    } else {
                        loop {
                            counter = counter.wrapping_add(1);
                            if counter >= 0x7fff {
                                break 0;
                            }
                            if !out.by_pkey.contains_key(&counter) {
                                break counter;
                            }
                        }
                    }
                }
            };
            if pkey == 0 {
                continue;
            }
            let p = out.by_pkey.entry(pkey).or_insert_with(|| Partition {
                name: def.name.clone().unwrap_or_else(|| format!("{pkey:04x}")),
                pkey,
                sl: 0,
                ipoib: false,
                members: BTreeMap::new(),
            });
            // The last statement for a P_Key sets its SL (OpenSM overwrites on every create).
            p.sl = def.sl.unwrap_or(0);
            p.ipoib |= def.ipoib;
            for m in &def.members {
                let full = m.membership != Membership::Limited;
                let add = |p: &mut Partition, r: PortRef| {
                    p.members.insert(r, full);
                };
                match &m.spec {
                    MemberSpec::Guid(g) => {
                        if let Some(r) = fabric
                            .end_ports()
                            .into_iter()
                            .find(|r| fabric.port(*r).is_some_and(|x| x.guid == *g))
                        {
                            add(p, r);
                        }
                    }
                    MemberSpec::SelfPort => {
                        if let Some(sm) = fabric.sm_port {
                            add(p, sm);
                        }
                    }
                    spec => {
                        for e in &ends {
                            let kind = fabric.node(*e).map(|n| n.kind);
                            let ok = match spec {
                                MemberSpec::All => true,
                                MemberSpec::AllCas => kind == Some(NodeKind::Ca),
                                MemberSpec::AllSwitches => kind == Some(NodeKind::Switch),
                                MemberSpec::AllRouters => kind == Some(NodeKind::Router),
                                _ => false,
                            };
                            if ok {
                                add(p, *e);
                            }
                        }
                    }
                }
            }
        }
        out
    }

    pub fn by_name(&self, name: &str) -> Option<&Partition> {
        self.by_pkey.values().find(|p| p.name == name)
    }

    /// The P_Key table of a port: base P_Key -> full membership. Sorted the way OpenSM's map
    /// is (by the P_Key in network byte order read as a little-endian integer).
    pub fn port_table(&self, port: PortRef) -> Vec<(u16, bool)> {
        let mut v: Vec<(u16, bool)> = self
            .by_pkey
            .values()
            .filter_map(|p| p.members.get(&port).map(|full| (p.pkey, *full)))
            .collect();
        v.sort_by_key(|(k, _)| k.swap_bytes());
        v
    }
}

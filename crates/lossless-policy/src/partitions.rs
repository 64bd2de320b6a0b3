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

/// A number as OpenSM reads it here (`strtoul(s, &end, 0)` that must read it all): decimal,
/// `0x` hex or `0` octal.
fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    let (n, used) = crate::opensm_conf::c_strtoul(s.as_bytes());
    (!s.is_empty() && used == s.len() && !s.starts_with(['-', '+'])).then_some(n)
}

/// OpenSM compares flags and keywords by prefix (`strncmp(flag, "full", strlen(flag))`).
fn abbrev(word: &str, full: &str) -> bool {
    !word.is_empty() && full.starts_with(word)
}

pub fn parse(file: &str, src: &str) -> Result<PartitionsConf, PartitionsError> {
    let text = blank_comments(src);
    let r = Reader { file, text: &text };
    let mut defs = Vec::new();
    let mut start = 0usize;
    for stmt in text.split_inclusive(';') {
        let at = start;
        start += stmt.len();
        if let Some(def) = r.statement(at, stmt)? {
            defs.push(def);
        }
    }
    Ok(PartitionsConf { defs })
}

/// The source with comments blanked out, byte offsets kept, so locations stay right.
fn blank_comments(src: &str) -> String {
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
    text
}

/// The file (comments blanked) and its name, for errors.
struct Reader<'a> {
    file: &'a str,
    text: &'a str,
}

impl Reader<'_> {
    fn err(&self, at: usize, found: &str, expected: &str) -> PartitionsError {
        PartitionsError::Unexpected {
            file: self.file.to_string(),
            loc: loc_of(self.text, at),
            found: if found.is_empty() {
                "end of statement".into()
            } else {
                format!("`{}`", found.trim())
            },
            expected: expected.to_string(),
        }
    }

    /// One statement (`stmt`, at byte `at`, with its `;`); `None` for an empty one.
    fn statement(&self, at: usize, stmt: &str) -> Result<Option<PartitionDef>, PartitionsError> {
        let Some(body) = stmt.strip_suffix(';') else {
            if stmt.trim().is_empty() {
                return Ok(None);
            }
            let lead = stmt.len() - stmt.trim_start().len();
            return Err(self.err(
                at + lead,
                "end of file",
                "`;` to end the partition definition",
            ));
        };
        if body.trim().is_empty() {
            return Ok(None);
        }
        let lead = body.len() - body.trim_start().len();
        let Some((header, members)) = body.split_once(':') else {
            return Err(self.err(
                at + lead,
                body.trim(),
                "`Name[=PKey][,flags] : members ;` (no `:` found)",
            ));
        };
        let mut def = PartitionDef {
            name: None,
            pkey: None,
            sl: None,
            ipoib: false,
            members: vec![],
            loc: loc_of(self.text, at + lead),
        };
        let defmember = self.header(&mut def, header, at)?;
        self.members(&mut def, members, at + header.len() + 1, defmember)?;
        Ok(Some(def))
    }

    /// `Name[=PKey][,flag[=value]]*` at byte `at`; the membership members get by default.
    fn header(
        &self,
        def: &mut PartitionDef,
        header: &str,
        at: usize,
    ) -> Result<Membership, PartitionsError> {
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
                self.name_and_pkey(def, k, v, p_at)?;
                continue;
            }
            if k.is_empty() {
                return Err(self.err(p_at, part, "a partition flag"));
            }
            if abbrev(k, "sl") {
                let n = v
                    .and_then(parse_u64)
                    .filter(|n| *n <= 15)
                    .ok_or_else(|| self.err(p_at, part, "sl=<0-15>"))?;
                def.sl = Some(n as u8);
            } else if abbrev(k, "ipoib") {
                def.ipoib = true;
            } else if abbrev(k, "defmember") {
                defmember = match v {
                    Some(v) if abbrev(v, "full") => Membership::Full,
                    Some(v) if abbrev(v, "both") => Membership::Both,
                    Some(v) if abbrev(v, "limited") => Membership::Limited,
                    _ => return Err(self.err(p_at, part, "defmember=full, limited or both")),
                };
            }
            // mtu, rate, scope, Q_Key, TClass, FlowLabel, indx0: multicast settings that do not
            // affect PathRecords; accepted and ignored.
        }
        Ok(defmember)
    }

    /// The first part of the header: `Name`, `Name=PKey` or a bare P_Key.
    fn name_and_pkey(
        &self,
        def: &mut PartitionDef,
        k: &str,
        v: Option<&str>,
        p_at: usize,
    ) -> Result<(), PartitionsError> {
        if !k.is_empty() {
            def.name = Some(k.to_string());
        }
        if let Some(v) = v {
            let n = parse_u64(v)
                .filter(|n| *n <= 0xffff)
                .ok_or_else(|| self.err(p_at, v, "a P_Key (0x0001-0x7fff)"))?;
            def.pkey = Some((n & 0x7fff) as u16);
        } else if k.starts_with(|c: char| c.is_ascii_digit()) {
            let n = parse_u64(k)
                .filter(|n| *n <= 0xffff)
                .ok_or_else(|| self.err(p_at, k, "a P_Key"))?;
            def.name = None;
            def.pkey = Some((n & 0x7fff) as u16);
        }
        Ok(())
    }

    /// The members after the `:` (at byte `at`).
    fn members(
        &self,
        def: &mut PartitionDef,
        members: &str,
        at: usize,
        defmember: Membership,
    ) -> Result<(), PartitionsError> {
        let mut m_off = at;
        for m in members.split(',') {
            let m_at = m_off + (m.len() - m.trim_start().len());
            m_off += m.len() + 1;
            if let Some(member) = self.member(m.trim(), m_at, defmember)? {
                def.members.push(member);
            }
        }
        Ok(())
    }

    /// One member (`m`, trimmed, at byte `m_at`); `None` for nothing, `NONE` and the
    /// multicast group definitions that may stand among members.
    fn member(
        &self,
        m: &str,
        m_at: usize,
        defmember: Membership,
    ) -> Result<Option<Member>, PartitionsError> {
        if m.is_empty() {
            return Ok(None);
        }
        if m.starts_with("mgid")
            || ["rate", "mtu", "sl", "scope", "Q_Key", "TClass", "FlowLabel"]
                .iter()
                .any(|f| m.starts_with(&format!("{f}=")))
        {
            return Ok(None); // multicast group definitions
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
        let spec = match name {
            "ALL" => MemberSpec::All,
            "ALL_CAS" => MemberSpec::AllCas,
            "ALL_SWITCHES" => MemberSpec::AllSwitches,
            "ALL_ROUTERS" => MemberSpec::AllRouters,
            "SELF" => MemberSpec::SelfPort,
            "NONE" => return Ok(None),
            _ => match parse_u64(name).filter(|g| *g != 0) {
                Some(g) => MemberSpec::Guid(g),
                None => {
                    return Err(self.err(
                        m_at,
                        name,
                        "a port GUID, ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS or SELF",
                    ))
                }
            },
        };
        Ok(Some(Member {
            spec,
            membership,
            loc: loc_of(self.text, m_at),
        }))
    }
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
            let pkey = out.pkey_for(def, &mut counter);
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
                p.add_member(m, fabric, &ends);
            }
        }
        out
    }

    /// The P_Key of a statement: its own, else that of the partition of the same name,
    /// else the next free one OpenSM generates (0: none left).
    fn pkey_for(&self, def: &PartitionDef, counter: &mut u16) -> u16 {
        if let Some(p) = def.pkey.filter(|p| *p != 0) {
            return p;
        }
        if let Some(p) = def
            .name
            .as_ref()
            .and_then(|n| self.by_pkey.values().find(|p| &p.name == n))
        {
            return p.pkey;
        }
        loop {
            *counter = counter.wrapping_add(1);
            if *counter >= 0x7fff {
                return 0;
            }
            if !self.by_pkey.contains_key(counter) {
                return *counter;
            }
        }
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

impl Partition {
    /// The end ports a member line names, with its membership.
    fn add_member(&mut self, m: &Member, fabric: &Fabric, ends: &[PortRef]) {
        let full = m.membership != Membership::Limited;
        match &m.spec {
            MemberSpec::Guid(g) => {
                if let Some(r) = fabric
                    .end_ports()
                    .into_iter()
                    .find(|r| fabric.port(*r).is_some_and(|x| x.guid == *g))
                {
                    self.members.insert(r, full);
                }
            }
            MemberSpec::SelfPort => {
                if let Some(sm) = fabric.sm_port {
                    self.members.insert(sm, full);
                }
            }
            spec => {
                for e in ends {
                    let kind = fabric.node(*e).map(|n| n.kind);
                    let ok = match spec {
                        MemberSpec::All => true,
                        MemberSpec::AllCas => kind == Some(NodeKind::Ca),
                        MemberSpec::AllSwitches => kind == Some(NodeKind::Switch),
                        MemberSpec::AllRouters => kind == Some(NodeKind::Router),
                        _ => false,
                    };
                    if ok {
                        self.members.insert(*e, full);
                    }
                }
            }
        }
    }
}

//! Linear forwarding tables: the routes the subnet manager actually programmed.
//!
//! Three printers, one shape (infiniband-diags `ibroute` and `dump_lfts`/`dump_fts`, and
//! OpenSM's own `opensm-lfts.dump`):
//!
//! ```text
//! Unicast lids [0x0-0x6] of switch Lid 1 guid 0x0000000000200000 (Switch1):
//!   Lid  Out   Destination
//!        Port     Info
//! 0x0002 001 : (Channel Adapter portguid 0x0000000000100001: 'Hca1')
//! 0x0006 005 : (Channel Adapter portguid 0x000000000010000a: 'Hca4')
//! 6 valid lids dumped
//! ```
//!
//! `dump_lfts` names the switch by a directed route instead of a LID, `-n` drops the
//! destination column, and OpenSM's dump writes `# ...` for `: (...)`. Switches are matched
//! to the fabric by GUID; a LID is matched to its port by the GUID in the destination column,
//! or by the fabric's LIDs (ibnetdiscover output) when the dump has none.

use super::{Fabric, NodeKind, PortRef};
use crate::ast::Loc;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum LftError {
    #[error("{file}:{loc}: unexpected {found}, expected {expected}")]
    Unexpected {
        file: String,
        loc: Loc,
        found: String,
        expected: String,
    },
    /// The dump and the fabric disagree (another subnet, or a stale dump).
    #[error("{file}:{loc}: {found}: {expected}")]
    Fabric {
        file: String,
        loc: Loc,
        found: String,
        expected: String,
    },
    #[error("{file}: no table for {missing}, expected one per switch of the fabric (dump every switch: `dump_lfts`, or leave --lfts out for min-hop routes)")]
    Missing { file: String, missing: String },
}

/// The forwarding tables of every switch, mapped onto a [`Fabric`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lfts {
    /// The file they came from (named in every answer that uses them).
    pub file: String,
    /// Per switch (node index): destination LID -> egress port. Port 255 (no route) is left out.
    pub tables: HashMap<usize, BTreeMap<u16, u8>>,
    /// LID -> the end port it addresses.
    pub lids: HashMap<u16, PortRef>,
    /// End port -> its lowest (base) LID.
    #[serde(skip)]
    pub base_lids: HashMap<PortRef, u16>,
}

impl Lfts {
    /// The LID a path to `dst` is routed by (its base LID; LMC is not modelled).
    pub fn lid_of(&self, dst: PortRef) -> Option<u16> {
        self.base_lids.get(&dst).copied()
    }

    /// Egress port of switch `node` for `dlid`, as programmed.
    pub fn egress(&self, node: usize, dlid: u16) -> Option<u8> {
        self.tables.get(&node)?.get(&dlid).copied()
    }
}

fn hex(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(h, 16).ok()
}

/// The GUID after `key` (`guid 0x...`, `portguid 0x...`) in `s`.
fn guid_after(s: &str, key: &str) -> Option<u64> {
    let mut words = s.split(|c: char| c.is_whitespace() || c == ':' || c == '(' || c == ')');
    while let Some(w) = words.next() {
        if w == key {
            return words.find(|w| !w.is_empty()).and_then(hex);
        }
    }
    None
}

/// Parse a dump and map it onto `fabric`.
pub fn parse(file: &str, src: &str, fabric: &Fabric) -> Result<Lfts, LftError> {
    let mut r = Reader::new(file, fabric);
    for (i, raw) in src.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let t = line.trim_start();
        r.line(&Line {
            no: i + 1,
            indent: line.len() - t.len(),
            text: t.trim_end(),
        })?;
    }
    r.fabric_lids()?;
    r.every_switch()?;
    Ok(r.finish())
}

/// One line of the dump: its number, where its text starts, the text without blanks
/// around it.
struct Line<'s> {
    no: usize,
    indent: usize,
    text: &'s str,
}

/// The dump read so far, and the fabric it is mapped onto.
struct Reader<'a> {
    file: &'a str,
    fabric: &'a Fabric,
    switch_by_guid: HashMap<u64, usize>,
    /// Port GUIDs, then node GUIDs (which name a CA in some dumps), as `by_guid`.
    port_by_guid: HashMap<u64, PortRef>,
    tables: HashMap<usize, BTreeMap<u16, u8>>,
    /// LID -> (port, line) from destination columns and switch headers.
    lids: HashMap<u16, (PortRef, usize)>,
    /// The switch whose table is being read.
    current: Option<usize>,
}

fn at(line: usize, col: usize) -> Loc {
    Loc {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        col: u32::try_from(col + 1).unwrap_or(u32::MAX),
    }
}

impl<'a> Reader<'a> {
    fn new(file: &'a str, fabric: &'a Fabric) -> Self {
        let switch_by_guid: HashMap<u64, usize> = fabric
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.kind == NodeKind::Switch)
            .map(|(i, n)| (n.guid, i))
            .collect();
        let mut port_by_guid: HashMap<u64, PortRef> =
            fabric.end_ports_by_guid().into_iter().collect();
        for e in fabric.end_ports() {
            if let Some(n) = fabric.node(e) {
                port_by_guid.entry(n.guid).or_insert(e);
            }
        }
        Reader {
            file,
            fabric,
            switch_by_guid,
            port_by_guid,
            tables: HashMap::new(),
            lids: HashMap::new(),
            current: None,
        }
    }

    fn unexpected(&self, line: usize, col: usize, found: &str, expected: &str) -> LftError {
        LftError::Unexpected {
            file: self.file.to_string(),
            loc: at(line, col),
            found: if found.is_empty() {
                "end of line".to_string()
            } else {
                format!("`{}`", found.chars().take(60).collect::<String>())
            },
            expected: expected.to_string(),
        }
    }

    fn mismatch(&self, line: usize, col: usize, found: String, expected: String) -> LftError {
        LftError::Fabric {
            file: self.file.to_string(),
            loc: at(line, col),
            found,
            expected,
        }
    }

    fn line(&mut self, l: &Line<'_>) -> Result<(), LftError> {
        let t = l.text;
        if t.is_empty()
            || t.starts_with("***")
            || t.starts_with("Lid ")
            || t.starts_with("Port ")
            || t == "Port"
            || t.ends_with("lids dumped")
        {
            return Ok(());
        }
        if t.starts_with("Multicast") {
            return Err(self.unexpected(
                l.no,
                l.indent,
                t,
                "unicast tables (`Unicast lids ...`): multicast tables do not route PathRecords; \
                 dump without -M",
            ));
        }
        if let Some(rest) = t.strip_prefix("Unicast lids") {
            return self.header(l, rest);
        }
        if t.starts_with("0x") || t.starts_with("0X") {
            return self.entry(l);
        }
        Err(self.unexpected(
            l.no,
            l.indent,
            t,
            "output of ibroute, dump_lfts or OpenSM's opensm-lfts.dump: `Unicast lids ...` \
             headers and `0x<LID> <port>` entries",
        ))
    }

    /// `Unicast lids [...] of switch ... guid 0x<GUID> (<description>):` starts a switch's
    /// table; `rest` follows `Unicast lids`.
    fn header(&mut self, l: &Line<'_>, rest: &str) -> Result<(), LftError> {
        let Some(guid) = guid_after(rest, "guid") else {
            return Err(self.unexpected(
                l.no,
                l.indent,
                l.text,
                "`Unicast lids [...] of switch ... guid 0x<GUID> (<description>):`",
            ));
        };
        let desc = rest
            .rfind('(')
            .and_then(|a| rest.get(a + 1..))
            .and_then(|r| r.rfind(')').and_then(|b| r.get(..b)))
            .unwrap_or("")
            .trim_matches('\'');
        let Some(&node) = self.switch_by_guid.get(&guid) else {
            return Err(self.mismatch(
                l.no,
                l.indent,
                format!("switch {guid:#018x} ({desc})"),
                "a switch of the fabric: the LFT dump and the fabric dump must come from \
                 the same subnet"
                    .to_string(),
            ));
        };
        if self.tables.insert(node, BTreeMap::new()).is_some() {
            return Err(self.mismatch(
                l.no,
                l.indent,
                format!("a second table for switch {guid:#018x} ({desc})"),
                "one table per switch".to_string(),
            ));
        }
        // ibroute's header names the switch's own LID.
        if let Some(lid) = rest
            .split_once("Lid ")
            .and_then(|(_, r)| r.split_whitespace().next())
            .and_then(|w| w.parse::<u16>().ok())
        {
            self.lids.insert(lid, (PortRef { node, port: 0 }, l.no));
        }
        self.current = Some(node);
        Ok(())
    }

    /// `0x<LID> <port> ...`: one route of the current switch, and the port the LID is when
    /// the destination column says.
    fn entry(&mut self, l: &Line<'_>) -> Result<(), LftError> {
        let t = l.text;
        let Some(node) = self.current else {
            return Err(self.unexpected(
                l.no,
                l.indent,
                t,
                "a `Unicast lids ... of switch ...` header before the first entry",
            ));
        };
        let mut words = t.split_whitespace();
        let lid_word = words.next().unwrap_or("");
        let Some(lid) = hex(lid_word).and_then(|l| u16::try_from(l).ok()) else {
            return Err(self.unexpected(l.no, l.indent, lid_word, "a LID such as `0x0004`"));
        };
        let port_word = words.next().unwrap_or("");
        let port_col = t.find(port_word).map_or(l.indent, |c| l.indent + c);
        let Some(port) = port_word.parse::<u8>().ok() else {
            return Err(self.unexpected(
                l.no,
                port_col,
                port_word,
                "an egress port number (000-254, or 255 for no route)",
            ));
        };
        if port == 255 {
            return Ok(());
        }
        let sw = &self.fabric.nodes[node];
        if port != 0 && sw.port(port).and_then(|p| p.peer).is_none() {
            return Err(self.mismatch(
                l.no,
                port_col,
                format!("{} routes LID {lid:#06x} to port {port}", sw.desc),
                format!(
                    "a connected port of {} ({}): the LFT dump does not match the fabric",
                    sw.desc,
                    sw.ports
                        .iter()
                        .filter(|p| p.peer.is_some())
                        .map(|p| p.num.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        if let Some(table) = self.tables.get_mut(&node) {
            table.insert(lid, port);
        }
        match guid_after(t, "portguid") {
            Some(guid) => self.destination(l, lid, guid),
            None => Ok(()),
        }
    }

    /// The destination column: LID `lid` is the port with GUID `guid`, and must stay so.
    fn destination(&mut self, l: &Line<'_>, lid: u16, guid: u64) -> Result<(), LftError> {
        let Some(&p) = self.port_by_guid.get(&guid) else {
            return Err(self.mismatch(
                l.no,
                l.indent,
                format!("LID {lid:#06x} is port {guid:#018x}"),
                "a port of the fabric: the LFT dump and the fabric dump must come from \
                 the same subnet"
                    .to_string(),
            ));
        };
        if let Some((q, first)) = self.lids.get(&lid) {
            if *q != p {
                return Err(self.mismatch(
                    l.no,
                    l.indent,
                    format!("LID {lid:#06x} is {} here", self.fabric.label(p)),
                    format!("{} as on line {first}", self.fabric.label(*q)),
                ));
            }
        }
        self.lids.insert(lid, (p, l.no));
        Ok(())
    }

    /// The fabric's own LIDs (ibnetdiscover output) fill in and must agree.
    fn fabric_lids(&mut self) -> Result<(), LftError> {
        let fabric = self.fabric;
        for e in fabric.end_ports() {
            let Some(lid) = fabric.port(e).and_then(|p| p.lid) else {
                continue;
            };
            match self.lids.get(&lid) {
                Some((q, line)) if *q != e => {
                    return Err(self.mismatch(
                        *line,
                        0,
                        format!("LID {lid:#06x} is {} in the LFT dump", fabric.label(*q)),
                        format!(
                            "{} as the fabric dump says: the two dumps are from different sweeps",
                            fabric.label(e)
                        ),
                    ))
                }
                Some(_) => {}
                None => {
                    self.lids.insert(lid, (e, 0));
                }
            }
        }
        Ok(())
    }

    /// Every switch of the fabric has a table.
    fn every_switch(&self) -> Result<(), LftError> {
        let missing: Vec<String> = self
            .fabric
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| n.kind == NodeKind::Switch && !self.tables.contains_key(i))
            .map(|(_, n)| format!("{} ({:#018x})", n.desc, n.guid))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(LftError::Missing {
            file: self.file.to_string(),
            missing: missing.join(", "),
        })
    }

    fn finish(self) -> Lfts {
        let lids: HashMap<u16, PortRef> = self.lids.into_iter().map(|(l, (p, _))| (l, p)).collect();
        let mut base_lids: HashMap<PortRef, u16> = HashMap::new();
        for (l, p) in &lids {
            let e = base_lids.entry(*p).or_insert(*l);
            *e = (*e).min(*l);
        }
        Lfts {
            file: self.file.to_string(),
            tables: self.tables,
            lids,
            base_lids,
        }
    }
}

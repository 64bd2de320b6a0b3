//! Parser for `ibnetdiscover` output and ibsim `net` files.
//!
//! Both describe one node per record: a header (`Switch 8 "id"`, `Ca 2 "id"`, `Hca ...`,
//! `Rt ...`) followed by one line per connected port (`[1] "remote-id"[2] ...`). ibnetdiscover
//! adds GUID lines (`switchguid=`, `caguid=`), port GUIDs in parentheses and a comment with the
//! description, LIDs and the active width and speed. ibsim `net` files have none of that:
//! GUIDs come from ibsim's counters (CAs from 0x100000, switches from 0x200000), the
//! description is the id, and `w=`/`s=`/`e=` options set the enabled widths and speeds.

use super::{Fabric, Flavor, Node, NodeKind, Port, PortRef, SmSource, Speed};
use crate::ast::Loc;
use serde::Serialize;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TopoError {
    #[error("{file}:{loc}: unexpected {found}, expected {expected}")]
    Unexpected {
        file: String,
        loc: Loc,
        found: String,
        expected: String,
    },
    #[error("{file}:{loc}: {found}: {expected}")]
    BadLink {
        file: String,
        loc: Loc,
        found: String,
        expected: String,
    },
}

struct RawPort {
    num: u8,
    guid: Option<u64>,
    lid: Option<u16>,
    remote: String,
    remote_port: u8,
    /// Enabled width mask / speed mask / extended speed mask (ibsim options).
    width_ena: Option<u32>,
    speed_ena: Option<u32>,
    ext_ena: Option<u32>,
    /// Active width and speed as ibnetdiscover reports them (`4xQDR`).
    active: Option<(u8, Speed)>,
    loc: Loc,
}

struct RawNode {
    kind: NodeKind,
    id: String,
    desc: String,
    guid: u64,
    nports: u8,
    lid: Option<u16>,
    enhanced_port0: bool,
    ports: Vec<RawPort>,
    defaults: (u32, u32, u32),
}

// ibsim link width enable masks: 1=1x 2=4x 4=8x 8=12x 16=2x.
const W1: u32 = 1;
const W4: u32 = 2;
const W8: u32 = 4;
const W12: u32 = 8;
const W2: u32 = 16;

fn width_mask_for(w: u8) -> u32 {
    match w {
        12 => W1 | W4 | W12,
        8 => W8,
        4 => W1 | W4,
        2 => W2,
        _ => W1,
    }
}

fn speed_masks_for(s: Speed) -> (u32, u32) {
    // (speed enable SDR=1 DDR=2 QDR=4, ext enable FDR=1 EDR=2 HDR=4 NDR=8)
    match s {
        Speed::Sdr => (1, 0),
        Speed::Ddr => (3, 0),
        Speed::Qdr | Speed::Fdr10 => (7, 0),
        Speed::Fdr => (7, 1),
        Speed::Edr => (7, 3),
        Speed::Hdr => (7, 7),
        Speed::Ndr => (7, 15),
    }
}

fn active_width(mask: u32) -> Option<u8> {
    [(W12, 12), (W8, 8), (W4, 4), (W2, 2), (W1, 1)]
        .iter()
        .find(|(m, _)| mask & m != 0)
        .map(|(_, w)| *w)
}

fn active_speed(speed: u32, ext: u32) -> Option<Speed> {
    if ext & 8 != 0 {
        return Some(Speed::Ndr);
    }
    if ext & 4 != 0 {
        return Some(Speed::Hdr);
    }
    if ext & 2 != 0 {
        return Some(Speed::Edr);
    }
    if ext & 1 != 0 {
        return Some(Speed::Fdr);
    }
    [(4, Speed::Qdr), (2, Speed::Ddr), (1, Speed::Sdr)]
        .iter()
        .find(|(m, _)| speed & m != 0)
        .map(|(_, s)| *s)
}

fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn loc(line: usize, col: usize) -> Loc {
    Loc {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        col: u32::try_from(col + 1).unwrap_or(u32::MAX),
    }
}

/// `"id"` at the start of `s` (after blanks): the id and the rest.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    let body = s.strip_prefix('"')?;
    let end = body.find('"')?;
    Some((&body[..end], &body[end + 1..]))
}

/// A parse error at `line`:`col`: what was found there (quoted, or `end of line`) and what
/// was expected.
fn unexpected(file: &str, line: usize, col: usize, found: &str, expected: &str) -> TopoError {
    TopoError::Unexpected {
        file: file.to_string(),
        loc: loc(line, col),
        found: if found.is_empty() {
            "end of line".to_string()
        } else {
            format!("`{}`", found.chars().take(40).collect::<String>())
        },
        expected: expected.to_string(),
    }
}

/// Parse a topology file of either flavour.
pub fn parse(file: &str, src: &str) -> Result<Fabric, TopoError> {
    let flavor = flavor_of(src);
    let mut r = Reader {
        file,
        // ibsim's GUID counters per node type and its global enable masks.
        next_guid: [("ca", 0x10_0000u64), ("switch", 0x20_0000), ("router", 0)]
            .into_iter()
            .collect(),
        defaults: (W4, 1u32, 0u32),
        nodes: Vec::new(),
        cur: None,
    };
    for (i, raw) in src.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let t = line.trim_start();
        r.line(i + 1, line.len() - t.len(), t)?;
    }
    if let Some(n) = r.cur.take() {
        r.nodes.push(n);
    }
    link(file, flavor, r.nodes)
}

/// ibnetdiscover writes a `# Topology file` header and `vendid=`/`devid=` before every node;
/// ibsim net files may carry `switchguid=`/`caguid=`/`rtguid=` lines too, so those decide
/// nothing.
fn flavor_of(src: &str) -> Flavor {
    let discover = src.contains("# Topology file")
        || src.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("vendid=") || l.starts_with("devid=")
        });
    if discover {
        Flavor::Ibnetdiscover
    } else {
        Flavor::Ibsim
    }
}

/// The records read so far, the one being read, and ibsim's running settings.
struct Reader<'a> {
    file: &'a str,
    /// ibsim's next GUID per node type (`ca`, `switch`, `router`).
    next_guid: HashMap<&'static str, u64>,
    /// ibsim's global width, speed and extended speed enable masks.
    defaults: (u32, u32, u32),
    nodes: Vec<RawNode>,
    cur: Option<RawNode>,
}

impl Reader<'_> {
    /// One line (`t`, starting at column `indent`): a port of the current node, a node
    /// header, or a setting.
    fn line(&mut self, lineno: usize, indent: usize, t: &str) -> Result<(), TopoError> {
        if t.starts_with('[') {
            let Some(node) = self.cur.as_mut() else {
                return Err(unexpected(
                    self.file,
                    lineno,
                    indent,
                    t,
                    "a node header (Switch, Ca, Hca, Rt) before port lines",
                ));
            };
            node.ports
                .push(parse_port(self.file, lineno, indent, t, node.kind)?);
            return Ok(());
        }
        if let Some(n) = self.cur.take() {
            self.nodes.push(n);
        }
        if t.is_empty() || t.starts_with('#') {
            return Ok(());
        }
        let kind = if t.starts_with("Switch") {
            Some(NodeKind::Switch)
        } else if t.starts_with("Hca") || t.starts_with("Ca") {
            Some(NodeKind::Ca)
        } else if t.starts_with("Rt") {
            Some(NodeKind::Router)
        } else {
            None
        };
        match kind {
            Some(kind) => {
                self.cur = Some(self.node_header(lineno, indent, t, kind)?);
                Ok(())
            }
            None => self.setting(lineno, indent, t),
        }
    }

    /// `Switch 8 "id" # "description" lid 4 ...` (or `Ca`, `Hca`, `Rt`).
    fn node_header(
        &mut self,
        lineno: usize,
        indent: usize,
        t: &str,
        kind: NodeKind,
    ) -> Result<RawNode, TopoError> {
        let after_kw = t.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let digits: String = after_kw
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let nports = digits
            .parse::<u8>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                unexpected(
                    self.file,
                    lineno,
                    indent + (t.len() - after_kw.len()),
                    after_kw.trim(),
                    "a port count from 1 to 255",
                )
            })?;
        let rest = after_kw.trim_start().get(digits.len()..).unwrap_or("");
        let Some((id, rest)) = quoted(rest) else {
            return Err(unexpected(
                self.file,
                lineno,
                indent,
                t,
                "a quoted node id after the port count",
            ));
        };
        // Description: the quoted text in the comment, else the id (ibsim).
        let comment = rest.split_once('#').map(|(_, c)| c.trim());
        let desc = match comment.and_then(quoted) {
            Some((d, _)) => d.to_string(),
            None => id.to_string(),
        };
        let lid = comment
            .and_then(|c| word_after(c, "lid"))
            .and_then(|v| v.parse().ok());
        Ok(RawNode {
            kind,
            id: id.to_string(),
            desc,
            guid: self.next_node_guid(kind, nports),
            nports,
            lid,
            // ibsim looks for it anywhere after the id; ibnetdiscover writes it after the
            // description.
            enhanced_port0: kind == NodeKind::Switch && rest.contains("enhanced port 0"),
            ports: vec![],
            defaults: self.defaults,
        })
    }

    /// ibsim's GUID for the next node of this kind: switches take one, CAs and routers one
    /// per port plus the node's.
    fn next_node_guid(&mut self, kind: NodeKind, nports: u8) -> u64 {
        let key = match kind {
            NodeKind::Ca => "ca",
            NodeKind::Switch => "switch",
            NodeKind::Router => "router",
        };
        let guid = self.next_guid.get(key).copied().unwrap_or(0);
        let step = if kind == NodeKind::Switch {
            1
        } else {
            u64::from(nports) + 1
        };
        self.next_guid.insert(key, guid.wrapping_add(step));
        guid
    }

    /// Assignments: GUID bases and ibsim's global width/speed. `vendid=`, `devid=`,
    /// `sysimgguid=` and anything else: ignored, as ibsim does.
    fn setting(&mut self, lineno: usize, indent: usize, t: &str) -> Result<(), TopoError> {
        if t.starts_with("switchguid") {
            self.guid_base("switch", lineno, indent, t)?;
        } else if t.starts_with("hcaguids") || t.starts_with("caguid") {
            self.guid_base("ca", lineno, indent, t)?;
        } else if t.starts_with("rtguid") {
            self.guid_base("router", lineno, indent, t)?;
        } else if t.starts_with("width") || t.starts_with("speed") || t.starts_with("extspeed") {
            let v = t.split_once('=').map(|(_, v)| v.trim()).unwrap_or("");
            let n = parse_num(v)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| unexpected(self.file, lineno, indent, v, "a number"))?;
            if t.starts_with("width") {
                self.defaults.0 = n;
            } else if t.starts_with("speed") {
                self.defaults.1 = n;
            } else {
                self.defaults.2 = n;
            }
        } else if t.starts_with("include") || t.starts_with("module") || t.starts_with("do") {
            return Err(unexpected(
                self.file,
                lineno,
                indent,
                t,
                "a self-contained topology (include, module and do are not supported)",
            ));
        }
        Ok(())
    }

    /// `<kind>guid=N` sets the next GUID of a node type; `<kind>guid+N` adds to it.
    fn guid_base(
        &mut self,
        key: &'static str,
        lineno: usize,
        indent: usize,
        t: &str,
    ) -> Result<(), TopoError> {
        let v = t.split_once(['=', '+']).map(|(_, v)| v).unwrap_or("");
        let num: String = v
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let n =
            parse_num(&num).ok_or_else(|| unexpected(self.file, lineno, indent, v, "a GUID"))?;
        if t.contains('+') && !t.contains('=') {
            let base = self.next_guid.get(key).copied().unwrap_or(0);
            self.next_guid.insert(key, base.wrapping_add(n));
        } else {
            self.next_guid.insert(key, n);
        }
        Ok(())
    }
}

fn word_after<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let mut it = s.split_whitespace();
    while let Some(w) = it.next() {
        if w == key {
            return it.next();
        }
    }
    None
}

fn paren_guid(s: &str) -> (Option<u64>, &str) {
    let t = s.trim_start();
    if let Some(body) = t.strip_prefix('(') {
        if let Some(end) = body.find(')') {
            return (
                u64::from_str_radix(body[..end].trim_start_matches("0x"), 16).ok(),
                &body[end + 1..],
            );
        }
    }
    (None, s)
}

/// `[1](guid) "remote-id"[2](guid) options # comment`: one connected port.
fn parse_port(
    file: &str,
    lineno: usize,
    indent: usize,
    t: &str,
    kind: NodeKind,
) -> Result<RawPort, TopoError> {
    let bad = |col: usize, found: &str, expected: &str| {
        unexpected(file, lineno, indent + col, found, expected)
    };
    let close = t.find(']').ok_or_else(|| bad(0, t, "`[port]`"))?;
    let num = t[1..close]
        .trim()
        .parse::<u8>()
        .map_err(|_| bad(1, &t[1..close], "a port number from 0 to 255"))?;
    if num == 0 && kind != NodeKind::Switch {
        return Err(bad(
            1,
            "0",
            "a port number from 1 (only switches have port 0)",
        ));
    }
    let (guid, rest) = paren_guid(&t[close + 1..]);
    let (body, comment) = match rest.split_once('#') {
        Some((b, c)) => (b, Some(c)),
        None => (rest, None),
    };
    let Some((remote, after)) = quoted(body) else {
        let col = t.len() - rest.len();
        return Err(bad(col, rest.trim(), "a quoted remote node id"));
    };
    let mut remote_port = 1u8;
    let mut after = after;
    if let Some(r) = after.strip_prefix('[') {
        let end = r
            .find(']')
            .ok_or_else(|| bad(0, after, "`]` after the remote port"))?;
        remote_port = r[..end]
            .trim()
            .parse()
            .map_err(|_| bad(0, &r[..end], "a remote port number"))?;
        after = &r[end + 1..];
    }
    let (_, after) = paren_guid(after);
    let mut p = RawPort {
        num,
        guid,
        lid: None,
        remote: remote.to_string(),
        remote_port,
        width_ena: None,
        speed_ena: None,
        ext_ena: None,
        active: None,
        loc: loc(lineno, indent),
    };
    port_options(&mut p, after);
    if let Some(c) = comment {
        port_comment(&mut p, c, kind);
    }
    Ok(p)
}

/// ibsim's `w=`, `s=`, `e=` enable masks after the remote end.
fn port_options(p: &mut RawPort, after: &str) {
    for opt in after.split_whitespace() {
        if let Some((k, v)) = opt.split_once('=') {
            let n = parse_num(v).and_then(|n| u32::try_from(n).ok());
            match (k, n) {
                ("w", Some(n)) => p.width_ena = Some(n),
                ("s", Some(n)) => p.speed_ena = Some(if n == 0 { 4 } else { n }),
                ("e", Some(n)) => p.ext_ena = Some(n),
                _ => {}
            }
        }
    }
}

/// ibnetdiscover's comment: the LID of a CA or router port, and the active width and speed
/// (the last `NxSPEED` token).
fn port_comment(p: &mut RawPort, c: &str, kind: NodeKind) {
    if kind != NodeKind::Switch {
        p.lid = word_after(c, "lid").and_then(|v| v.parse().ok());
    }
    for w in c.split_whitespace().rev() {
        if let Some((n, s)) = w.split_once('x') {
            if let (Ok(n), Some(s)) = (n.parse::<u8>(), Speed::parse(s)) {
                p.active = Some((n, s));
                break;
            }
        }
    }
}

/// Mellanox-style capability defaults ibsim gives every port.
fn default_port(num: u8, guid: u64, kind: NodeKind, flavor: Flavor) -> Port {
    let mtu_cap = match (flavor, kind, num) {
        (Flavor::Ibsim, NodeKind::Switch, 0) => 3,
        (Flavor::Ibsim, _, _) => 4,
        (Flavor::Ibnetdiscover, _, _) => 5,
    };
    Port {
        num,
        guid,
        lid: None,
        peer: None,
        width: 4,
        speed: Speed::Sdr,
        mtu_cap,
        data_vls: 8,
        vlarb_high_cap: 8,
        vlarb_low_cap: 8,
    }
}

/// The records as a fabric: every port line becomes a link, checked against the other
/// end's line when it has one.
fn link(file: &str, flavor: Flavor, raw: Vec<RawNode>) -> Result<Fabric, TopoError> {
    let l = Linker {
        file,
        flavor,
        raw: &raw,
        index: raw
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect(),
    };
    let mut nodes: Vec<Node> = raw.iter().map(|n| bare_node(n, flavor)).collect();
    for (ni, n) in raw.iter().enumerate() {
        for rp in &n.ports {
            let port = l.port(n, rp)?;
            if let Some(node) = nodes.get_mut(ni) {
                node.ports.push(port);
            }
        }
    }
    add_missing_ends(&mut nodes, flavor);
    for n in &mut nodes {
        n.ports.sort_by_key(|p| p.num);
        n.ports.dedup_by_key(|p| p.num);
    }
    let sm_port = sm_port(&nodes, flavor);
    let _ = width_mask_for;
    let _ = speed_masks_for;
    Ok(Fabric {
        flavor,
        nodes,
        sm_port,
        sm_source: match flavor {
            Flavor::Ibsim => SmSource::IbsimFirstNode,
            Flavor::Ibnetdiscover => SmSource::Unknown,
        },
    })
}

/// A node without links; a switch has its port 0 already.
fn bare_node(n: &RawNode, flavor: Flavor) -> Node {
    let mut ports = Vec::new();
    if n.kind == NodeKind::Switch {
        let mut p0 = default_port(0, n.guid, n.kind, flavor);
        p0.lid = n.lid;
        ports.push(p0);
    }
    Node {
        kind: n.kind,
        id: n.id.clone(),
        desc: n.desc.clone(),
        guid: n.guid,
        nports: n.nports,
        enhanced_port0: n.enhanced_port0,
        ports,
    }
}

/// The records, and node ids to their index.
struct Linker<'r> {
    file: &'r str,
    flavor: Flavor,
    raw: &'r [RawNode],
    index: HashMap<&'r str, usize>,
}

impl Linker<'_> {
    fn bad(&self, l: Loc, found: String, expected: String) -> TopoError {
        TopoError::BadLink {
            file: self.file.to_string(),
            loc: l,
            found,
            expected,
        }
    }

    /// Port `rp` of node `n`, linked to its remote end.
    fn port(&self, n: &RawNode, rp: &RawPort) -> Result<Port, TopoError> {
        let (ri, remote) = self.remote(n, rp)?;
        let guid = match (rp.guid, n.kind) {
            (Some(g), _) => g,
            (None, NodeKind::Switch) => n.guid,
            (None, _) => n.guid.wrapping_add(u64::from(rp.num)),
        };
        let (width, speed) = self.width_speed(n, rp, remote)?;
        let mut port = default_port(rp.num, guid, n.kind, self.flavor);
        port.lid = rp.lid.or(if n.kind == NodeKind::Switch {
            n.lid
        } else {
            None
        });
        port.peer = Some((ri, rp.remote_port));
        port.width = width;
        port.speed = speed;
        Ok(port)
    }

    /// The remote node of `rp`, with its index; both ends' port numbers must exist, and the
    /// other end, if it lists this link, must agree.
    fn remote(&self, n: &RawNode, rp: &RawPort) -> Result<(usize, &RawNode), TopoError> {
        if rp.num > n.nports {
            return Err(self.bad(
                rp.loc,
                format!("port {} of \"{}\"", rp.num, n.id),
                format!("a port number up to {}", n.nports),
            ));
        }
        let Some(&ri) = self.index.get(rp.remote.as_str()) else {
            return Err(self.bad(
                rp.loc,
                format!("remote node \"{}\"", rp.remote),
                "a node defined in this file".into(),
            ));
        };
        let remote = &self.raw[ri];
        if rp.remote_port > remote.nports
            || (rp.remote_port == 0 && remote.kind != NodeKind::Switch)
        {
            return Err(self.bad(
                rp.loc,
                format!("remote port {} of \"{}\"", rp.remote_port, remote.id),
                format!("a port number up to {}", remote.nports),
            ));
        }
        if let Some(back) = remote.ports.iter().find(|p| p.num == rp.remote_port) {
            if back.remote != n.id || back.remote_port != rp.num {
                return Err(self.bad(
                    rp.loc,
                    format!(
                        "\"{}\"[{}] -> \"{}\"[{}]",
                        n.id, rp.num, rp.remote, rp.remote_port
                    ),
                    format!(
                        "the link listed by \"{}\"[{}], which points to \"{}\"[{}]",
                        remote.id, back.num, back.remote, back.remote_port
                    ),
                ));
            }
        }
        Ok((ri, remote))
    }

    /// The link's width and speed: as ibnetdiscover reports either end, else the best both
    /// ends enable (ibsim).
    fn width_speed(
        &self,
        n: &RawNode,
        rp: &RawPort,
        remote: &RawNode,
    ) -> Result<(u8, Speed), TopoError> {
        let back = remote.ports.iter().find(|p| p.num == rp.remote_port);
        if let Some(a) = rp.active.or(back.and_then(|b| b.active)) {
            return Ok(a);
        }
        let (bw, bs, be) = back.map_or(remote.defaults, |b| {
            (
                b.width_ena.unwrap_or(remote.defaults.0),
                b.speed_ena.unwrap_or(remote.defaults.1),
                b.ext_ena.unwrap_or(remote.defaults.2),
            )
        });
        let w = rp.width_ena.unwrap_or(n.defaults.0) & bw;
        let s = rp.speed_ena.unwrap_or(n.defaults.1) & bs;
        let e = rp.ext_ena.unwrap_or(n.defaults.2) & be;
        match (active_width(w), active_speed(s, e)) {
            (Some(w), Some(s)) => Ok((w, s)),
            _ => Err(self.bad(
                rp.loc,
                format!(
                    "link \"{}\"[{}] - \"{}\"[{}]",
                    n.id, rp.num, remote.id, rp.remote_port
                ),
                "enabled widths and speeds the two ends share".into(),
            )),
        }
    }
}

/// Links listed on one side only: add the missing end.
fn add_missing_ends(nodes: &mut [Node], flavor: Flavor) {
    for ni in 0..nodes.len() {
        let peers: Vec<(u8, usize, u8, u8, Speed)> = nodes[ni]
            .ports
            .iter()
            .filter_map(|p| p.peer.map(|(r, rp)| (p.num, r, rp, p.width, p.speed)))
            .collect();
        for (num, r, rp, w, s) in peers {
            if nodes[r].port(rp).is_none() {
                let kind = nodes[r].kind;
                let g = if kind == NodeKind::Switch {
                    nodes[r].guid
                } else {
                    nodes[r].guid.wrapping_add(u64::from(rp))
                };
                let mut port = default_port(rp, g, kind, flavor);
                port.peer = Some((ni, num));
                port.width = w;
                port.speed = s;
                nodes[r].ports.push(port);
            }
        }
    }
}

/// The SM's port when nobody says where it runs: ibsim attaches a client that names no node
/// (OpenSM started without `SIM_HOST`) to the file's first node, its port 0 (a switch) or
/// first port (a CA or router); ibnetdiscover output does not tell.
fn sm_port(nodes: &[Node], flavor: Flavor) -> Option<PortRef> {
    match flavor {
        Flavor::Ibsim => nodes.first().and_then(|n| {
            let port = if n.kind == NodeKind::Switch {
                Some(0)
            } else {
                n.ports.first().map(|p| p.num)
            };
            port.map(|port| PortRef { node: 0, port })
        }),
        Flavor::Ibnetdiscover => None,
    }
}

//! PathRecord resolution as OpenSM's SA answers it (`pr_rcv_get_path_parms`): walk the route,
//! take the most restrictive MTU and rate, drop SLs that hit VL15, apply the QoS level the
//! request matches, pick the P_Key and the SL.

use crate::ast::NumRange;
use crate::bind::{Bound, Level, Origin};
use crate::compile::{OsmQos, Sl2Vl, TableSource};
use crate::fabric::lft::Lfts;
use crate::fabric::{compare_rates, mtu_bytes, rate_gbps, Fabric, NodeKind, Port, PortRef};
use crate::matcher::{scan, test_rule, Engine, Miss, Request};
use crate::partitions::Partitions;
use crate::route::Router;
use serde::Serialize;
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NodeError {
    #[error("no node matches `{found}`, expected {expected}")]
    NotFound { found: String, expected: String },
    #[error("node `{found}` has no port {port}, expected one of: {expected}")]
    NoPort {
        found: String,
        port: String,
        expected: String,
    },
}

/// Find an end port from a GUID (`0x...`), a LID (decimal) or a node description with an
/// optional `/P<port>`.
pub fn find_node(fabric: &Fabric, s: &str) -> Result<PortRef, NodeError> {
    let s = s.trim();
    if let Some(found) = by_number(fabric, s) {
        return found;
    }
    let (desc, port) = split_port(s);
    let Some(ni) = fabric.by_desc(desc) else {
        let names: Vec<&str> = fabric
            .nodes
            .iter()
            .take(8)
            .map(|n| n.desc.as_str())
            .collect();
        return Err(NodeError::NotFound {
            found: s.into(),
            expected: format!(
                "a GUID, a LID or a node description such as {}",
                names.join(", ")
            ),
        });
    };
    port_of(fabric, ni, desc, port)
}

/// The subnet manager's port, from what `--sm` takes: what [`find_node`] takes, or the line
/// `sminfo` prints (`sminfo: sm lid 1 sm guid 0x100005, activity count 128 priority 0 state
/// 3 SMINFO_MASTER`), by its GUID (which every fabric dump has), else its LID.
pub fn find_sm(fabric: &Fabric, s: &str) -> Result<PortRef, NodeError> {
    match sminfo(s) {
        Some((_, Some(guid))) => find_node(fabric, &format!("{guid:#x}")),
        Some((Some(lid), None)) => find_node(fabric, &lid.to_string()),
        _ => find_node(fabric, s),
    }
}

/// The SM's LID and GUID from `sminfo`'s output (`sm lid 1 sm guid 0x100005, ...`); `None`
/// when `s` says neither.
pub fn sminfo(s: &str) -> Option<(Option<u16>, Option<u64>)> {
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let after = |key: &str| {
        words
            .windows(3)
            .find(|w| w[0] == "sm" && w[1] == key)
            .map(|w| w[2])
    };
    let lid = after("lid").and_then(|v| v.parse::<u16>().ok());
    let guid = after("guid").and_then(|v| {
        let h = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X"))?;
        u64::from_str_radix(h, 16).ok()
    });
    (lid.is_some() || guid.is_some()).then_some((lid, guid))
}

/// `s` as a GUID (`0x...`) or a LID (all digits); `None` when it is neither, or is digits
/// that are no LID but a node's description.
fn by_number(fabric: &Fabric, s: &str) -> Option<Result<PortRef, NodeError>> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if let Ok(g) = u64::from_str_radix(h, 16) {
            return Some(fabric.by_guid(g).ok_or_else(|| NodeError::NotFound {
                found: s.into(),
                expected: "a port or node GUID of the fabric".into(),
            }));
        }
    }
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
        if let Some(r) = s.parse::<u16>().ok().and_then(|l| fabric.by_lid(l)) {
            return Some(Ok(r));
        }
        if fabric.by_desc(s).is_none() {
            return Some(Err(NodeError::NotFound {
                found: s.into(),
                expected:
                    "a LID the fabric dump lists (ibsim net files have none: use the node name)"
                        .into(),
            }));
        }
    }
    None
}

/// `<description>/P<port>` split in two; no port when there is no `/P<digits>` suffix.
fn split_port(s: &str) -> (&str, Option<u8>) {
    match s.rsplit_once('/') {
        Some((d, p))
            if (p.starts_with('P') || p.starts_with('p'))
                && p.len() > 1
                && p[1..].chars().all(|c| c.is_ascii_digit()) =>
        {
            (d, p[1..].parse::<u8>().ok())
        }
        _ => (s, None),
    }
}

/// The end port of node `ni` a query means: port 0 of a switch, else the given port or the
/// first connected one.
fn port_of(fabric: &Fabric, ni: usize, desc: &str, port: Option<u8>) -> Result<PortRef, NodeError> {
    let node = &fabric.nodes[ni];
    let ports = || {
        node.ports
            .iter()
            .map(|p| format!("P{}", p.num))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (node.kind, port) {
        (NodeKind::Switch, None) => Ok(PortRef { node: ni, port: 0 }),
        (NodeKind::Switch, Some(p)) if node.port(p).is_some() => Ok(PortRef { node: ni, port: 0 }),
        (_, None) => node
            .ports
            .iter()
            .find(|p| p.peer.is_some())
            .map(|p| PortRef {
                node: ni,
                port: p.num,
            })
            .ok_or_else(|| NodeError::NoPort {
                found: desc.into(),
                port: "(any connected)".into(),
                expected: ports(),
            }),
        (_, Some(p)) if node.port(p).is_some_and(|x| x.peer.is_some()) => {
            Ok(PortRef { node: ni, port: p })
        }
        (_, Some(p)) => Err(NodeError::NoPort {
            found: desc.into(),
            port: p.to_string(),
            expected: ports(),
        }),
    }
}

/// A PathRecord query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Query {
    pub src: PortRef,
    pub dst: PortRef,
    pub request: Request,
    pub sl: Option<u8>,
    /// The port that sends the query, when it is not `src`: OpenSM answers only when it
    /// shares a P_Key with both ends.
    pub requester: Option<PortRef>,
}

/// How the level was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", rename_all = "kebab-case")]
pub enum Matched {
    Rule {
        index: usize,
        origin: Origin,
        use_: Option<String>,
    },
    Default,
    /// No policy applied: none loaded (OpenSM after a rejected policy file), or QoS off in
    /// opensm.conf.
    NoPolicy,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hop {
    pub node: String,
    pub in_port: u8,
    pub out_port: u8,
    pub sl2vl: [u8; 16],
    pub sl2vl_source: TableSource,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Path {
    pub level: Option<String>,
    pub matched: Matched,
    pub sl: u8,
    pub mtu: u8,
    pub rate: u8,
    pub mtu_limit: Option<u8>,
    pub rate_limit: Option<u8>,
    pub packet_life: u8,
    pub path_bits: Vec<(u64, u64)>,
    pub pkey: u16,
    pub hops: Vec<Hop>,
    /// Which routes: `LFT from FILE` or `min-hop (...)`.
    pub routing: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoPath {
    pub reason: String,
    /// OpenSM's log code for the same refusal, when it has one.
    pub opensm_code: Option<&'static str>,
    pub level: Option<String>,
    pub matched: Option<Matched>,
}

/// Everything a resolution needs.
pub struct Resolver<'a> {
    pub fabric: &'a Fabric,
    pub parts: &'a Partitions,
    pub osm: &'a OsmQos,
    pub policy: Option<(&'a crate::ast::Policy, &'a Bound)>,
    /// Programmed routes; `None`: min-hop over the fabric dump.
    pub lfts: Option<&'a Lfts>,
    engine: Option<Engine>,
}

fn common_pkey(a: &[(u16, bool)], b: &[(u16, bool)]) -> Option<u16> {
    // OpenSM walks both sorted maps together and returns the first base both hold with at
    // least one full member, with the first port's membership bit.
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (ka, fa) = a[i];
        let (kb, fb) = b[j];
        if ka == kb && (fa || fb) {
            return Some(ka | if fa { 0x8000 } else { 0 });
        }
        match kb.swap_bytes().cmp(&ka.swap_bytes()) {
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
            Ordering::Less => j += 1,
            Ordering::Greater => i += 1,
        }
    }
    None
}

fn share_this(a: &[(u16, bool)], b: &[(u16, bool)], pkey: u16) -> bool {
    let base = pkey & 0x7fff;
    match (
        a.iter().find(|(k, _)| *k == base),
        b.iter().find(|(k, _)| *k == base),
    ) {
        (Some((_, fa)), Some((_, fb))) => *fa || *fb,
        _ => false,
    }
}

impl<'a> Resolver<'a> {
    pub fn new(
        fabric: &'a Fabric,
        parts: &'a Partitions,
        osm: &'a OsmQos,
        policy: Option<(&'a crate::ast::Policy, &'a Bound)>,
    ) -> Self {
        let engine = policy.map(|(_, b)| Engine::new(b, fabric));
        Resolver {
            fabric,
            parts,
            osm,
            policy,
            lfts: None,
            engine,
        }
    }

    /// Route by these LFTs (as dumped from the running subnet manager) instead of min-hop.
    pub fn with_lfts(mut self, lfts: &'a Lfts) -> Self {
        self.lfts = Some(lfts);
        self
    }

    /// How routes are found, as answers say it.
    pub fn routing(&self) -> String {
        match self.lfts {
            Some(l) => format!("LFT from {}", l.file),
            None => "min-hop (no LFT dump given)".to_string(),
        }
    }

    /// The rule a request matches (bitset engine; same answer as OpenSM's scan).
    pub fn matched(&self, q: &Query) -> Matched {
        let Some((_, b)) = self.policy.filter(|_| self.osm.qos) else {
            return Matched::NoPolicy;
        };
        let src = self.fabric.base_port(q.src);
        let dst = self.fabric.base_port(q.dst);
        let idx = match &self.engine {
            Some(e) => e.first_match(src, dst, &q.request),
            None => scan(b, self.fabric, src, dst, &q.request),
        };
        match idx.and_then(|i| b.rules.get(i).map(|r| (i, r))) {
            Some((index, r)) => Matched::Rule {
                index,
                origin: r.origin,
                use_: r.use_.clone(),
            },
            None => Matched::Default,
        }
    }

    /// For `explain`: each rule up to the match, with the criterion that failed.
    pub fn explain(&self, q: &Query) -> Vec<(usize, Option<Miss>)> {
        let Some((_, b)) = self.policy else {
            return vec![];
        };
        let src = self.fabric.base_port(q.src);
        let dst = self.fabric.base_port(q.dst);
        let mut out = Vec::new();
        for (i, r) in b.rules.iter().enumerate() {
            match test_rule(b, self.fabric, r, src, dst, &q.request) {
                Ok(()) => {
                    out.push((i, None));
                    break;
                }
                Err(m) => out.push((i, Some(m))),
            }
        }
        out
    }

    pub fn resolve(&self, q: &Query) -> Result<Path, NoPath> {
        let f = self.fabric;
        let src = f.base_port(q.src);
        let dst = f.base_port(q.dst);
        let src_tbl = self.parts.port_table(src);
        let dst_tbl = self.parts.port_table(dst);
        // osm_physp_share_pkey: the same port, or a port without a P_Key table, shares.
        let share = |a: PortRef, at: &[(u16, bool)], b: PortRef, bt: &[(u16, bool)]| {
            a == b || at.is_empty() || bt.is_empty() || common_pkey(at, bt).is_some()
        };
        if !share(src, &src_tbl, dst, &dst_tbl) {
            return Err(refused(
                format!("{} and {} share no partition", f.label(src), f.label(dst)),
                None,
            ));
        }
        if let Some(req) = q.requester.map(|r| f.base_port(r)) {
            let req_tbl = self.parts.port_table(req);
            for (end, tbl) in [(src, &src_tbl), (dst, &dst_tbl)] {
                if !share(req, &req_tbl, end, tbl) {
                    return Err(refused(
                        format!(
                            "the requester {} and {} share no partition",
                            f.label(req),
                            f.label(end)
                        ),
                        None,
                    ));
                }
            }
        }
        let mut route = self.walk(src, dst)?;
        // QoS level.
        let matched = self.matched(q);
        let level = self.level_of(&matched);
        let choice = Choice { level, matched };
        route.apply_level(&choice)?;
        let packet_life = if src == dst {
            0
        } else {
            level
                .and_then(|l| l.packet_life)
                .unwrap_or(self.osm.subnet_timeout)
        };
        let ends = Ends {
            src,
            dst,
            src_tbl: &src_tbl,
            dst_tbl: &dst_tbl,
        };
        let pkey = self.choose_pkey(q, &ends, &choice)?;
        let sl = self.choose_sl(q, pkey, &route, &choice)?;
        Ok(Path {
            level: level.map(|l| l.name.clone()),
            matched: choice.matched,
            sl,
            mtu: route.mtu,
            rate: route.rate,
            mtu_limit: level.and_then(|l| l.mtu_limit),
            rate_limit: level.and_then(|l| l.rate_limit),
            packet_life,
            path_bits: level
                .map(|l| l.path_bits.iter().map(|r| (r.lo, r.hi)).collect())
                .unwrap_or_default(),
            pkey,
            hops: route.hops,
            routing: self.routing(),
        })
    }

    /// The route from `src` to `dst`, hop by hop, as OpenSM's SA walks it: the MTU and rate
    /// every port on it allows, and the SLs no SL2VL table on it sends to VL15.
    fn walk(&self, src: PortRef, dst: PortRef) -> Result<Route, NoPath> {
        let f = self.fabric;
        let policy = self.policy.map(|(p, _)| p);
        let bound = self.policy.map(|(_, b)| b);
        let sl2vl = Sl2Vl::new(f, self.osm, policy, bound);
        let router = match self.lfts {
            Some(l) => Router::with_lfts(f, dst, l),
            None => Router::new(f, dst),
        };
        if let Some((l, None)) = router.lft() {
            return Err(refused(
                format!(
                    "no LID known for {}: {} has no destination column (dumped with -n?) and the \
                     fabric dump no LIDs; dump without -n or use ibnetdiscover output",
                    f.label(dst),
                    l.file
                ),
                None,
            ));
        }
        let src_node = f
            .node(src)
            .ok_or_else(|| refused("unknown source".into(), None))?;
        let src_port = f
            .port(src)
            .ok_or_else(|| refused("unknown source port".into(), None))?;
        let mut route = Route {
            mtu: src_port.mtu_cap,
            rate: src_port.rate(),
            valid: 0xffff,
            hops: Vec::new(),
        };
        let mut p = src;
        if src_node.kind == NodeKind::Switch {
            let e = router.egress(src.node).ok_or_else(|| {
                let why = match router.lft() {
                    Some(_) => dead_end(f, &router, &src_node.desc, dst),
                    None => format!("no route from {} to {}", f.label(src), f.label(dst)),
                };
                refused(why, Some("1F02"))
            })?;
            p = PortRef {
                node: src.node,
                port: e,
            };
        }
        route.hop(f, &sl2vl, p.node, 0, p.port);
        if !self.osm.qos {
            // Without QoS OpenSM's SA looks at no SL2VL table.
            route.valid = 0xffff;
        }
        if route.valid == 0 {
            return Err(refused(
                format!("every SL leads to VL15 leaving {}", f.label(p)),
                None,
            ));
        }
        let mut count = 0;
        while p != dst {
            let Some(next) = self.through_switch(&router, &sl2vl, &mut route, p, dst)? else {
                p = dst;
                break;
            };
            p = next;
            count += 1;
            if count > 64 {
                return Err(refused(
                    "route needs more than 64 hops".into(),
                    Some("1F25"),
                ));
            }
        }
        if let Some(dp) = f.port(p) {
            route.narrow(dp);
        }
        Ok(route)
    }

    /// From the egress port `p` across its link and through the switch at the other end:
    /// that switch's egress port, or `None` when the link reaches `dst`.
    fn through_switch(
        &self,
        router: &Router<'_>,
        sl2vl: &Sl2Vl<'_>,
        route: &mut Route,
        p: PortRef,
        dst: PortRef,
    ) -> Result<Option<PortRef>, NoPath> {
        let f = self.fabric;
        let Some((rn, rp)) = f.port(p).and_then(|x| x.peer) else {
            return Err(refused(format!("{} has no link", f.label(p)), Some("1F05")));
        };
        let remote = PortRef { node: rn, port: rp };
        if remote == dst {
            return Ok(None);
        }
        let node = f
            .nodes
            .get(rn)
            .ok_or_else(|| refused("bad link".into(), Some("1F05")))?;
        if node.kind != NodeKind::Switch {
            return Err(refused(
                format!(
                    "route ends at {} instead of {}",
                    f.label(remote),
                    f.label(dst)
                ),
                Some("1F06"),
            ));
        }
        if let Some(ip) = f.port(remote) {
            route.narrow(ip);
        }
        let e = router
            .egress(rn)
            .ok_or_else(|| refused(dead_end(f, router, &node.desc, dst), Some("1F07")))?;
        let out = PortRef { node: rn, port: e };
        if let Some(ep) = f.port(out) {
            route.narrow(ep);
        }
        route.hop(f, sl2vl, rn, rp, e);
        if !self.osm.qos {
            route.valid = 0xffff;
        }
        if route.valid == 0 {
            return Err(refused(
                format!(
                    "every SL leads to VL15 at {} (in P{rp}, out P{e})",
                    node.desc
                ),
                None,
            ));
        }
        Ok(Some(out))
    }

    /// The level of the rule that matched, or the default level.
    fn level_of(&self, matched: &Matched) -> Option<&'a Level> {
        let bound = self.policy.map(|(_, b)| b);
        match (matched, bound) {
            (Matched::Rule { index, .. }, Some(b)) => {
                b.rules.get(*index).and_then(|r| b.levels.get(r.level))
            }
            (Matched::Default, Some(b)) => b.levels.get(b.default_level),
            _ => None,
        }
    }

    /// The P_Key: the requested one (both ends must share it and the level list it), else
    /// the first of the level's that both ends share, else the first both share at all.
    fn choose_pkey(&self, q: &Query, ends: &Ends<'_>, choice: &Choice<'_>) -> Result<u16, NoPath> {
        let f = self.fabric;
        let level_pkeys = choice.level.map(|l| l.pkeys.as_slice()).unwrap_or(&[]);
        let level_name = || choice.level.map_or("", |l| l.name.as_str());
        if let Some(pk) = q.request.pkey {
            if !share_this(ends.src_tbl, ends.dst_tbl, pk) {
                return Err(choice.refuse(
                    format!(
                        "{} and {} do not share P_Key {pk:#06x}",
                        f.label(ends.src),
                        f.label(ends.dst)
                    ),
                    Some("1F1A"),
                ));
            }
            if !level_pkeys.is_empty()
                && !crate::ast::in_ranges(level_pkeys, u64::from(pk & 0x7fff))
            {
                return Err(choice.refuse(
                    format!("level {} does not list P_Key {pk:#06x}", level_name()),
                    Some("1F1D"),
                ));
            }
            return Ok(pk);
        }
        if !level_pkeys.is_empty() {
            return first_shared(level_pkeys, ends.src_tbl, ends.dst_tbl).ok_or_else(|| {
                choice.refuse(
                    format!(
                        "{} and {} share none of level {}'s P_Keys",
                        f.label(ends.src),
                        f.label(ends.dst),
                        level_name()
                    ),
                    Some("1F1E"),
                )
            });
        }
        common_pkey(ends.src_tbl, ends.dst_tbl).ok_or_else(|| {
            choice.refuse(
                format!(
                    "{} and {} share no P_Key",
                    f.label(ends.src),
                    f.label(ends.dst)
                ),
                Some("1F1B"),
            )
        })
    }

    /// The SL: the requested one (the level's must agree), else the level's, else the
    /// partition's; it must not lead to VL15 on the route.
    fn choose_sl(
        &self,
        q: &Query,
        pkey: u16,
        route: &Route,
        choice: &Choice<'_>,
    ) -> Result<u8, NoPath> {
        let prtn = self.parts.by_pkey.get(&(pkey & 0x7fff));
        let sl = if let Some(want) = q.sl {
            if let Some(l) = choice.level {
                if l.sl != want {
                    return Err(choice.refuse(
                        format!("requested SL{want} but level {} gives SL{}", l.name, l.sl),
                        Some("1F1F"),
                    ));
                }
            }
            want
        } else if let Some(l) = choice.level {
            l.sl
        } else if self.osm.qos {
            prtn.map_or(0, |p| p.sl)
        } else {
            // Without QoS OpenSM sets every partition's SL to 0 when it reads them.
            0
        };
        if route.valid & (1 << sl) == 0 {
            return Err(choice.refuse(
                format!("selected SL{sl} leads to VL15: {}", route.vl15_hop(sl)),
                Some("1F24"),
            ));
        }
        Ok(sl)
    }
}

/// A refusal before a level is chosen.
fn refused(reason: String, code: Option<&'static str>) -> NoPath {
    NoPath {
        reason,
        opensm_code: code,
        level: None,
        matched: None,
    }
}

/// Why a route stops at switch `sw`.
fn dead_end(f: &Fabric, router: &Router<'_>, sw: &str, dst: PortRef) -> String {
    match router.lft() {
        Some((l, Some(lid))) => format!(
            "the LFT of {sw} in {} has no route for LID {lid:#06x} ({})",
            l.file,
            f.label(dst)
        ),
        _ => format!("dead end at {sw} towards {}", f.label(dst)),
    }
}

/// The first P_Key of `ranges` (low 15 bits) both ends share.
fn first_shared(ranges: &[NumRange], a: &[(u16, bool)], b: &[(u16, bool)]) -> Option<u16> {
    for r in ranges {
        for k in r.lo..=r.hi.min(0x7fff) {
            if share_this(a, b, k as u16) {
                return Some(k as u16);
            }
        }
    }
    None
}

/// The two end ports of a query and their P_Key tables.
struct Ends<'t> {
    src: PortRef,
    dst: PortRef,
    src_tbl: &'t [(u16, bool)],
    dst_tbl: &'t [(u16, bool)],
}

/// The level a request gets and how it was chosen; refusals from here on name them.
struct Choice<'b> {
    level: Option<&'b Level>,
    matched: Matched,
}

impl Choice<'_> {
    fn refuse(&self, reason: String, code: Option<&'static str>) -> NoPath {
        NoPath {
            reason,
            opensm_code: code,
            level: self.level.map(|l| l.name.clone()),
            matched: Some(self.matched.clone()),
        }
    }
}

/// What the route allows so far.
struct Route {
    mtu: u8,
    rate: u8,
    /// Bit n: SL n reaches the destination without being mapped to VL15.
    valid: u16,
    hops: Vec<Hop>,
}

impl Route {
    /// Take the port's MTU and rate when they are lower.
    fn narrow(&mut self, port: &Port) {
        self.mtu = self.mtu.min(port.mtu_cap);
        if compare_rates(self.rate, port.rate()) == Ordering::Greater {
            self.rate = port.rate();
        }
    }

    /// Record the hop through `node` from `inp` to `out`, and the SLs its table drops.
    fn hop(&mut self, f: &Fabric, sl2vl: &Sl2Vl<'_>, node: usize, inp: u8, out: u8) {
        let (t, source, _) = sl2vl.table(node, inp, out);
        for (sl, vl) in t.iter().enumerate() {
            if *vl == 15 {
                self.valid &= !(1 << sl);
            }
        }
        self.hops.push(Hop {
            node: f.nodes.get(node).map_or(String::new(), |n| n.desc.clone()),
            in_port: inp,
            out_port: out,
            sl2vl: t,
            sl2vl_source: source,
        });
    }

    /// The level's MTU and rate limits; its SL must survive the route.
    fn apply_level(&mut self, choice: &Choice<'_>) -> Result<(), NoPath> {
        let Some(l) = choice.level else {
            return Ok(());
        };
        if let Some(m) = l.mtu_limit {
            self.mtu = self.mtu.min(m);
        }
        if let Some(r) = l.rate_limit {
            if compare_rates(self.rate, r) == Ordering::Greater {
                self.rate = r;
            }
        }
        if self.valid & (1 << l.sl) == 0 {
            return Err(choice.refuse(
                format!("level {} has SL{}: {}", l.name, l.sl, self.vl15_hop(l.sl)),
                None,
            ));
        }
        Ok(())
    }

    /// Where `sl` is mapped to VL15, for messages.
    fn vl15_hop(&self, sl: u8) -> String {
        self.hops
            .iter()
            .find(|h| h.sl2vl.get(usize::from(sl)) == Some(&15))
            .map(|h| {
                format!(
                    "{} (in P{}, out P{}) maps SL{sl} to VL15",
                    h.node, h.in_port, h.out_port
                )
            })
            .unwrap_or_else(|| format!("SL{sl} is dropped on the route"))
    }
}

/// Decoded values for humans and JSON.
pub fn describe_mtu(m: u8) -> String {
    mtu_bytes(m).map_or_else(|| format!("enum {m}"), |b| b.to_string())
}

pub fn describe_rate(r: u8) -> String {
    rate_gbps(r).map_or_else(|| format!("enum {r}"), |g| format!("{g} Gb/s"))
}

/// Packet life enum: 4.096 us * 2^value.
pub fn describe_packet_life(v: u8) -> String {
    let us = 4.096 * 2f64.powi(i32::from(v.min(63)));
    if us >= 1_000_000.0 {
        format!("{:.3} s", us / 1_000_000.0)
    } else if us >= 1000.0 {
        format!("{:.3} ms", us / 1000.0)
    } else {
        format!("{us:.3} us")
    }
}

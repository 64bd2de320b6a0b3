//! PathRecord resolution as OpenSM's SA answers it (`pr_rcv_get_path_parms`): walk the route,
//! take the most restrictive MTU and rate, drop SLs that hit VL15, apply the QoS level the
//! request matches, pick the P_Key and the SL.

use crate::bind::{Bound, Origin};
use crate::compile::{OsmQos, Sl2Vl, TableSource};
use crate::fabric::lft::Lfts;
use crate::fabric::{compare_rates, mtu_bytes, rate_gbps, Fabric, NodeKind, PortRef};
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
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        if let Ok(g) = u64::from_str_radix(h, 16) {
            return fabric.by_guid(g).ok_or_else(|| NodeError::NotFound {
                found: s.into(),
                expected: "a port or node GUID of the fabric".into(),
            });
        }
    }
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()) {
        if let Some(r) = s.parse::<u16>().ok().and_then(|l| fabric.by_lid(l)) {
            return Ok(r);
        }
        if fabric.by_desc(s).is_none() {
            return Err(NodeError::NotFound {
                found: s.into(),
                expected:
                    "a LID the fabric dump lists (ibsim net files have none: use the node name)"
                        .into(),
            });
        }
    }
    let (desc, port) = match s.rsplit_once('/') {
        Some((d, p))
            if (p.starts_with('P') || p.starts_with('p'))
                && p.len() > 1
                && p[1..].chars().all(|c| c.is_ascii_digit()) =>
        {
            (d, p[1..].parse::<u8>().ok())
        }
        _ => (s, None),
    };
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
    /// No policy loaded (OpenSM after a rejected policy file).
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
        let Some((_, b)) = self.policy else {
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
        let no = |reason: String, code: Option<&'static str>| NoPath {
            reason,
            opensm_code: code,
            level: None,
            matched: None,
        };
        let src_tbl = self.parts.port_table(src);
        let dst_tbl = self.parts.port_table(dst);
        if src != dst
            && !src_tbl.is_empty()
            && !dst_tbl.is_empty()
            && common_pkey(&src_tbl, &dst_tbl).is_none()
        {
            return Err(no(
                format!("{} and {} share no partition", f.label(src), f.label(dst)),
                None,
            ));
        }
        let policy = self.policy.map(|(p, _)| p);
        let bound = self.policy.map(|(_, b)| b);
        let sl2vl = Sl2Vl::new(f, self.osm, policy, bound);
        let router = match self.lfts {
            Some(l) => Router::with_lfts(f, dst, l),
            None => Router::new(f, dst),
        };
        if let Some((l, None)) = router.lft() {
            return Err(no(
                format!(
                    "no LID known for {}: {} has no destination column (dumped with -n?) and the \
                     fabric dump no LIDs; dump without -n or use ibnetdiscover output",
                    f.label(dst),
                    l.file
                ),
                None,
            ));
        }
        let dead_end = |sw: &str| match router.lft() {
            Some((l, Some(lid))) => format!(
                "the LFT of {sw} in {} has no route for LID {lid:#06x} ({})",
                l.file,
                f.label(dst)
            ),
            _ => format!("dead end at {sw} towards {}", f.label(dst)),
        };
        let src_node = f
            .node(src)
            .ok_or_else(|| no("unknown source".into(), None))?;
        let src_port = f
            .port(src)
            .ok_or_else(|| no("unknown source port".into(), None))?;
        let mut mtu = src_port.mtu_cap;
        let mut rate = src_port.rate();
        let mut valid: u16 = 0xffff;
        let mut hops: Vec<Hop> = Vec::new();
        let mut p = src;
        if src_node.kind == NodeKind::Switch {
            let e = router.egress(src.node).ok_or_else(|| {
                let why = match router.lft() {
                    Some(_) => dead_end(&src_node.desc),
                    None => format!("no route from {} to {}", f.label(src), f.label(dst)),
                };
                no(why, Some("1F02"))
            })?;
            p = PortRef {
                node: src.node,
                port: e,
            };
        }
        let apply = |valid: &mut u16, hops: &mut Vec<Hop>, node: usize, inp: u8, out: u8| {
            let (t, source, _) = sl2vl.table(node, inp, out);
            for (sl, vl) in t.iter().enumerate() {
                if *vl == 15 {
                    *valid &= !(1 << sl);
                }
            }
            hops.push(Hop {
                node: f.nodes.get(node).map_or(String::new(), |n| n.desc.clone()),
                in_port: inp,
                out_port: out,
                sl2vl: t,
                sl2vl_source: source,
            });
        };
        apply(&mut valid, &mut hops, p.node, 0, p.port);
        if valid == 0 {
            return Err(no(
                format!("every SL leads to VL15 leaving {}", f.label(p)),
                None,
            ));
        }
        let dest_phys = dst;
        let mut count = 0;
        while p != dest_phys {
            let Some((rn, rp)) = f.port(p).and_then(|x| x.peer) else {
                return Err(no(format!("{} has no link", f.label(p)), Some("1F05")));
            };
            let remote = PortRef { node: rn, port: rp };
            if remote == dest_phys {
                p = remote;
                break;
            }
            let node = f
                .nodes
                .get(rn)
                .ok_or_else(|| no("bad link".into(), Some("1F05")))?;
            if node.kind != NodeKind::Switch {
                return Err(no(
                    format!(
                        "route ends at {} instead of {}",
                        f.label(remote),
                        f.label(dst)
                    ),
                    Some("1F06"),
                ));
            }
            if let Some(ip) = f.port(remote) {
                mtu = mtu.min(ip.mtu_cap);
                if compare_rates(rate, ip.rate()) == Ordering::Greater {
                    rate = ip.rate();
                }
            }
            let e = router
                .egress(rn)
                .ok_or_else(|| no(dead_end(&node.desc), Some("1F07")))?;
            p = PortRef { node: rn, port: e };
            if let Some(ep) = f.port(p) {
                mtu = mtu.min(ep.mtu_cap);
                if compare_rates(rate, ep.rate()) == Ordering::Greater {
                    rate = ep.rate();
                }
            }
            apply(&mut valid, &mut hops, rn, rp, e);
            if valid == 0 {
                return Err(no(
                    format!(
                        "every SL leads to VL15 at {} (in P{rp}, out P{e})",
                        node.desc
                    ),
                    None,
                ));
            }
            count += 1;
            if count > 64 {
                return Err(no("route needs more than 64 hops".into(), Some("1F25")));
            }
        }
        if let Some(dp) = f.port(p) {
            mtu = mtu.min(dp.mtu_cap);
            if compare_rates(rate, dp.rate()) == Ordering::Greater {
                rate = dp.rate();
            }
        }
        // QoS level.
        let matched = self.matched(q);
        let level = match (&matched, bound) {
            (Matched::Rule { index, .. }, Some(b)) => {
                b.rules.get(*index).and_then(|r| b.levels.get(r.level))
            }
            (Matched::Default, Some(b)) => b.levels.get(b.default_level),
            _ => None,
        };
        let with = |mut e: NoPath| {
            e.level = level.map(|l| l.name.clone());
            e.matched = Some(matched.clone());
            e
        };
        let vl15_hop = |sl: u8| -> String {
            hops.iter()
                .find(|h| h.sl2vl.get(usize::from(sl)) == Some(&15))
                .map(|h| {
                    format!(
                        "{} (in P{}, out P{}) maps SL{sl} to VL15",
                        h.node, h.in_port, h.out_port
                    )
                })
                .unwrap_or_else(|| format!("SL{sl} is dropped on the route"))
        };
        if let Some(l) = level {
            if let Some(m) = l.mtu_limit {
                mtu = mtu.min(m);
            }
            if let Some(r) = l.rate_limit {
                if compare_rates(rate, r) == Ordering::Greater {
                    rate = r;
                }
            }
            if valid & (1 << l.sl) == 0 {
                return Err(with(no(
                    format!("level {} has SL{}: {}", l.name, l.sl, vl15_hop(l.sl)),
                    None,
                )));
            }
        }
        let packet_life = if src == dst {
            0
        } else {
            level
                .and_then(|l| l.packet_life)
                .unwrap_or(self.osm.subnet_timeout)
        };
        // P_Key.
        let level_pkeys = level.map(|l| l.pkeys.as_slice()).unwrap_or(&[]);
        let pkey: u16 = if let Some(pk) = q.request.pkey {
            if !share_this(&src_tbl, &dst_tbl, pk) {
                return Err(with(no(
                    format!(
                        "{} and {} do not share P_Key {pk:#06x}",
                        f.label(src),
                        f.label(dst)
                    ),
                    Some("1F1A"),
                )));
            }
            if !level_pkeys.is_empty()
                && !crate::ast::in_ranges(level_pkeys, u64::from(pk & 0x7fff))
            {
                return Err(with(no(
                    format!(
                        "level {} does not list P_Key {pk:#06x}",
                        level.map_or("", |l| l.name.as_str())
                    ),
                    Some("1F1D"),
                )));
            }
            pk
        } else if !level_pkeys.is_empty() {
            let mut found = None;
            'outer: for r in level_pkeys {
                for k in r.lo..=r.hi.min(0x7fff) {
                    if share_this(&src_tbl, &dst_tbl, k as u16) {
                        found = Some(k as u16);
                        break 'outer;
                    }
                }
            }
            found.ok_or_else(|| {
                with(no(
                    format!(
                        "{} and {} share none of level {}'s P_Keys",
                        f.label(src),
                        f.label(dst),
                        level.map_or("", |l| l.name.as_str())
                    ),
                    Some("1F1E"),
                ))
            })?
        } else {
            common_pkey(&src_tbl, &dst_tbl).ok_or_else(|| {
                with(no(
                    format!("{} and {} share no P_Key", f.label(src), f.label(dst)),
                    Some("1F1B"),
                ))
            })?
        };
        let prtn = self.parts.by_pkey.get(&(pkey & 0x7fff));
        // SL.
        let sl = if let Some(want) = q.sl {
            if let Some(l) = level {
                if l.sl != want {
                    return Err(with(no(
                        format!("requested SL{want} but level {} gives SL{}", l.name, l.sl),
                        Some("1F1F"),
                    )));
                }
            }
            want
        } else if let Some(l) = level {
            l.sl
        } else {
            prtn.map_or(0, |p| p.sl)
        };
        if valid & (1 << sl) == 0 {
            return Err(with(no(
                format!("selected SL{sl} leads to VL15: {}", vl15_hop(sl)),
                Some("1F24"),
            )));
        }
        Ok(Path {
            level: level.map(|l| l.name.clone()),
            matched,
            sl,
            mtu,
            rate,
            mtu_limit: level.and_then(|l| l.mtu_limit),
            rate_limit: level.and_then(|l| l.rate_limit),
            packet_life,
            path_bits: level
                .map(|l| l.path_bits.iter().map(|r| (r.lo, r.hi)).collect())
                .unwrap_or_default(),
            pkey,
            hops,
            routing: self.routing(),
        })
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

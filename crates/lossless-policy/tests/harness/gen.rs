//! The differential tester's generator: from a seed, a random but valid case (an ibsim
//! fabric, partitions.conf, qos-policy.conf, opensm.conf and the saquery option sets to ask),
//! kept as a structure the minimiser can take apart, rendered into a [`Scenario`].
//!
//! Fabrics: 1-6 switches (some with an enhanced port 0) on a random tree plus extra and
//! parallel links, CAs and IB routers on their free ports, 1x/2x/4x links at SDR to HDR; the
//! SM on every kind of node: the first node (a switch or a CA, where OpenSM runs when no node
//! is named, and where we assume it), or a node named (a CA that is not first, a switch with
//! an enhanced and with a base port 0, a router): OpenSM runs there (`SIM_HOST`) and we are
//! told (`--sm`). GUIDs are written out (`caguid=`, ...) so that
//! removing a node keeps the others'. Policies use every group criterion (port-guid lists and
//! ranges, port-name, pkey, partition, node-type incl. ALL and SELF), levels with SL, limits,
//! packet life and P_Keys (membership bit and reversed ranges included), match rules on
//! groups, QoS class, service ID and P_Key, and qos-ulps lines of every kind. opensm.conf
//! sets generic and per-kind qos_* options, some short, long or out of range.

use super::scenario::Scenario;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Switch,
    Ca,
    Router,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GNode {
    pub kind: Kind,
    pub name: String,
    pub nports: u8,
    pub guid: u64,
    pub enhanced: bool,
}

/// A link and the options written on both of its ends (`w=`, `s=`, `e=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GLink {
    pub a: (usize, u8),
    pub b: (usize, u8),
    pub opts: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub seed: u64,
    pub nodes: Vec<GNode>,
    pub links: Vec<GLink>,
    /// partitions.conf lines.
    pub partitions: Vec<String>,
    pub groups: Vec<Vec<String>>,
    /// Each level's lines (`name: DEFAULT` first when there is one).
    pub levels: Vec<Vec<String>>,
    pub rules: Vec<Vec<String>>,
    pub ulps: Vec<String>,
    /// opensm.conf lines.
    pub conf: Vec<String>,
    pub optsets: Vec<String>,
    /// Pairs to ask (labels); empty: every pair.
    pub only: Vec<(String, String)>,
    pub tables: bool,
    /// For testing the tester: opensm.conf lines we read instead of `conf`.
    pub plant: Option<Vec<String>>,
    /// The node OpenSM runs on, by name (and we are told so); `None`: the first node, where
    /// it runs when none is named (and we assume it).
    pub sm: Option<String>,
}

/// How many places [`Case::place_sm`] chooses from.
pub const SM_PLACES: u32 = 6;

/// Between `lo` and `hi` distinct elements of `v`.
fn sample<T: Clone>(r: &mut SmallRng, v: &[T], lo: usize, hi: usize) -> Vec<T> {
    let k = r.gen_range(lo..=hi.max(lo));
    v.choose_multiple(r, k).cloned().collect()
}

fn pick<'a, T>(r: &mut SmallRng, v: &'a [T]) -> &'a T {
    &v[r.gen_range(0..v.len())]
}

/// A number written as OpenSM reads it: decimal, hex, sometimes octal.
fn num(r: &mut SmallRng, n: u64) -> String {
    match r.gen_range(0..10) {
        0 if n > 0 => format!("0{n:o}"),
        1..=3 => format!("{n:#x}"),
        _ => n.to_string(),
    }
}

/// ibsim's link options for a random width and speed (both ends get the same).
fn link_opts(r: &mut SmallRng) -> String {
    let mut o = Vec::new();
    match r.gen_range(0..10) {
        0..=1 => o.push("w=1".to_string()),
        2 => o.push("w=16".to_string()),
        _ => {}
    }
    match r.gen_range(0..8) {
        0 => o.push("s=1".to_string()),
        1 => o.push("s=2".to_string()),
        2..=3 => o.push("s=4".to_string()),
        _ => {}
    }
    match r.gen_range(0..8) {
        0 => o.push("e=1".to_string()),
        1 => o.push("e=2".to_string()),
        2 => o.push("e=4".to_string()),
        _ => {}
    }
    o.join(" ")
}

impl Case {
    pub fn generate(seed: u64) -> Case {
        let mut r = SmallRng::seed_from_u64(seed);
        let mut c = Case {
            seed,
            nodes: vec![],
            links: vec![],
            partitions: vec![],
            groups: vec![],
            levels: vec![],
            rules: vec![],
            ulps: vec![],
            conf: vec![],
            optsets: vec![],
            only: vec![],
            tables: true,
            plant: None,
            sm: None,
        };
        c.gen_fabric(&mut r);
        c.gen_partitions(&mut r);
        c.gen_policy(&mut r);
        c.gen_conf(&mut r);
        c.gen_queries(&mut r);
        c
    }

    fn free_port(&self, n: usize) -> Option<u8> {
        (1..=self.nodes[n].nports)
            .find(|p| !self.links.iter().any(|l| l.a == (n, *p) || l.b == (n, *p)))
    }

    fn link(&mut self, r: &mut SmallRng, a: usize, b: usize) -> bool {
        let (Some(pa), Some(pb)) = (self.free_port(a), self.free_port(b)) else {
            return false;
        };
        let opts = link_opts(r);
        self.links.push(GLink {
            a: (a, pa),
            b: (b, pb),
            opts,
        });
        true
    }

    fn gen_fabric(&mut self, r: &mut SmallRng) {
        let nsw = r.gen_range(1..=6usize);
        let nca = r.gen_range(2..=(4 + 5 * nsw).min(40));
        let sm_at = r.gen_range(0..SM_PLACES);
        // A router when the SM is to run on one.
        let nrt = if sm_at == 5 || r.gen_bool(0.3) {
            r.gen_range(1..=2)
        } else {
            0
        };
        let mut ca_guid = 0x10_0000u64;
        let mut rt_guid = 0x30_0000u64;
        let mut switches = Vec::new();
        for (i, guid) in (0..nsw).zip(0x20_0000u64..) {
            self.nodes.push(GNode {
                kind: Kind::Switch,
                name: format!("S{}", i + 1),
                nports: *pick(r, &[8u8, 12, 16, 24]),
                guid,
                enhanced: r.gen_bool(0.3),
            });
            switches.push(self.nodes.len() - 1);
        }
        // A random tree, then extra links (loops, parallel links).
        for i in 1..nsw {
            let j = r.gen_range(0..i);
            self.link(r, switches[i], switches[j]);
        }
        for _ in 0..r.gen_range(0..=nsw / 2 + 1) {
            if nsw > 1 {
                let (a, b) = (r.gen_range(0..nsw), r.gen_range(0..nsw));
                if a != b {
                    self.link(r, switches[a], switches[b]);
                }
            }
        }
        for i in 0..nca {
            let ports = if r.gen_bool(0.1) { 2 } else { 1 };
            self.nodes.push(GNode {
                kind: Kind::Ca,
                name: format!("H{}", i + 1),
                nports: ports,
                guid: ca_guid,
                enhanced: false,
            });
            ca_guid += u64::from(ports) + 1;
            let me = self.nodes.len() - 1;
            let sw = switches[r.gen_range(0..nsw)];
            if !self.link(r, me, sw) {
                self.nodes.pop();
                continue;
            }
            // A dual-port CA with both ports linked (queries from its port 2 are sent
            // from its port 1).
            if ports == 2 && r.gen_bool(0.6) {
                let sw = switches[r.gen_range(0..nsw)];
                self.link(r, me, sw);
            }
        }
        for i in 0..nrt {
            self.nodes.push(GNode {
                kind: Kind::Router,
                name: format!("R{}", i + 1),
                nports: 2,
                guid: rt_guid,
                enhanced: false,
            });
            rt_guid += 3;
            let me = self.nodes.len() - 1;
            for _ in 0..r.gen_range(1..=2) {
                let sw = switches[r.gen_range(0..nsw)];
                self.link(r, me, sw);
            }
            if self.free_port(me) == Some(1) {
                self.nodes.pop();
            }
        }
        self.place_sm(r, sm_at);
    }

    /// Where OpenSM runs, by `at` (0..SM_PLACES): on the file's first node, a switch (0) or a
    /// CA put first (1), where it runs when nobody names a node and we assume it; or named
    /// (OpenSM under `SIM_HOST`, we are given `--sm`) on a CA that is not first (2), a switch
    /// with an enhanced port 0 (3) or a base one (4), another than the first when there is
    /// one, or a router (5; a CA when there is none).
    fn place_sm(&mut self, r: &mut SmallRng, at: u32) {
        let of_kind = |c: &Case, k: Kind| -> Vec<usize> {
            (0..c.nodes.len())
                .filter(|i| c.nodes[*i].kind == k)
                .collect()
        };
        let switches = of_kind(self, Kind::Switch);
        let later_switch = |r: &mut SmallRng| match switches.len() {
            0 | 1 => switches.first().copied(),
            n => Some(switches[r.gen_range(1..n)]),
        };
        let cas = of_kind(self, Kind::Ca);
        let routers = of_kind(self, Kind::Router);
        let node = match at {
            0 => None,
            1 => {
                if let Some(ca) = cas.first() {
                    self.move_first(*ca);
                }
                None
            }
            3 | 4 => {
                let sw = later_switch(r);
                if let Some(sw) = sw {
                    self.nodes[sw].enhanced = at == 3;
                }
                sw
            }
            5 if !routers.is_empty() => Some(*pick(r, &routers)),
            _ => cas.get(r.gen_range(0..cas.len().max(1))).copied(),
        };
        self.sm = node.map(|i| self.nodes[i].name.clone());
    }

    /// The node OpenSM runs on: the one named, else the first.
    pub fn sm_node(&self) -> Option<&GNode> {
        match &self.sm {
            Some(name) => self.nodes.iter().find(|n| &n.name == name),
            None => self.nodes.first(),
        }
    }

    /// What kind of node the SM runs on, for the report: `CA, named`, `switch, enhanced
    /// port 0, first node`, ...
    pub fn sm_kind(&self) -> String {
        let Some(n) = self.sm_node() else {
            return "no node".into();
        };
        let kind = match n.kind {
            Kind::Ca => "CA",
            Kind::Router => "router",
            Kind::Switch if n.enhanced => "switch, enhanced port 0",
            Kind::Switch => "switch, base port 0",
        };
        let first = self.nodes.first().is_some_and(|f| f.name == n.name);
        let how = match (&self.sm, first) {
            (None, _) => "first node, assumed",
            (Some(_), true) => "first node, named",
            (Some(_), false) => "not first, named",
        };
        format!("{kind} ({how})")
    }

    /// Put node `i` first (links renumbered).
    fn move_first(&mut self, i: usize) {
        let n = self.nodes.remove(i);
        self.nodes.insert(0, n);
        let map = |x: usize| {
            if x == i {
                0
            } else if x < i {
                x + 1
            } else {
                x
            }
        };
        for l in &mut self.links {
            l.a.0 = map(l.a.0);
            l.b.0 = map(l.b.0);
        }
    }

    /// Every node reachable from the first (the SM's): OpenSM never comes up otherwise.
    pub fn connected(&self) -> bool {
        if self.nodes.is_empty() {
            return false;
        }
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![0usize];
        seen[0] = true;
        while let Some(n) = stack.pop() {
            for l in &self.links {
                for (a, b) in [(l.a.0, l.b.0), (l.b.0, l.a.0)] {
                    if a == n && !seen[b] {
                        seen[b] = true;
                        stack.push(b);
                    }
                }
            }
        }
        seen.iter().all(|s| *s)
    }

    /// Port GUIDs of linked end ports (CA and router ports; a switch's port 0).
    pub fn port_guids(&self) -> Vec<u64> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            match n.kind {
                Kind::Switch => v.push(n.guid),
                _ => {
                    for p in 1..=n.nports {
                        if self.links.iter().any(|l| l.a == (i, p) || l.b == (i, p)) {
                            v.push(n.guid + u64::from(p));
                        }
                    }
                }
            }
        }
        v
    }

    /// `Node/Pn` names of ports OpenSM finds: linked CA and router ports, any switch port.
    fn port_names(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for p in 1..=n.nports {
                let linked = self.links.iter().any(|l| l.a == (i, p) || l.b == (i, p));
                if linked || n.kind == Kind::Switch {
                    v.push(format!("{}/P{p}", n.name));
                }
            }
        }
        v
    }

    fn gen_partitions(&mut self, r: &mut SmallRng) {
        let guids = self.port_guids();
        self.partitions.push(
            pick(
                r,
                &[
                    "Default=0x7fff, ipoib : ALL=full ;",
                    "Default=0x7fff, ipoib : ALL=full ;",
                    "Default=0x7fff : ALL, SELF=full ;",
                    "Default=0x7fff, ipoib, sl=1 : ALL=full ;",
                ],
            )
            .to_string(),
        );
        let mut pkeys: Vec<u16> = vec![];
        for i in 0..r.gen_range(0..=4) {
            let pk = loop {
                let p = r.gen_range(1..0x7fffu16);
                if !pkeys.contains(&p) {
                    break p;
                }
            };
            pkeys.push(pk);
            let mut head = format!("P{i}={}", num(r, u64::from(pk)));
            if r.gen_bool(0.2) {
                head.push_str(", ipoib");
            }
            if r.gen_bool(0.6) {
                head.push_str(&format!(", sl={}", r.gen_range(0..16)));
            }
            if r.gen_bool(0.15) {
                // No P_Key: OpenSM picks one (the lowest free from 0x0001 on).
                pkeys.pop();
                head = format!("N{i}");
                if r.gen_bool(0.5) {
                    head.push_str(&format!(", sl={}", r.gen_range(0..16)));
                }
            }
            let mut members = Vec::new();
            for g in sample(r, &guids, 1, guids.len().min(8)) {
                let full = if r.gen_bool(0.6) { "=full" } else { "" };
                members.push(format!("{g:#x}{full}"));
            }
            if r.gen_bool(0.2) {
                members.push(
                    pick(
                        r,
                        &[
                            "ALL_SWITCHES=full",
                            "ALL_CAS",
                            "ALL_ROUTERS=full",
                            "SELF=full",
                        ],
                    )
                    .to_string(),
                );
            }
            self.partitions
                .push(format!("{head} : {} ;", members.join(", ")));
        }
    }

    /// Group `g`'s name: `G<g>`, or (in every third case) `"Group <g>"` with a blank; a
    /// reference may change its case (OpenSM compares names case-insensitively).
    fn group_name(&self, g: usize, other_case: bool) -> String {
        let quoted = matches!(self.seed % 3, 0);
        match (quoted, other_case) {
            (true, false) => format!("\"Group {g}\""),
            (true, true) => format!("\"GROUP {g}\""),
            (false, false) => format!("G{g}"),
            (false, true) => format!("g{g}"),
        }
    }

    fn pkeys(&self) -> Vec<u64> {
        let mut v = vec![0x7fff];
        for l in &self.partitions {
            if let Some(k) = l
                .split(['=', ',', ':'])
                .nth(1)
                .map(str::trim)
                .and_then(super::compare::parse_num)
            {
                v.push(k);
            }
        }
        v
    }

    fn pkey_value(&self, r: &mut SmallRng) -> String {
        let pk = *pick(r, &self.pkeys());
        let pk = if r.gen_bool(0.3) { pk | 0x8000 } else { pk };
        num(r, pk)
    }

    fn gen_policy(&mut self, r: &mut SmallRng) {
        let guids = self.port_guids();
        let names = self.port_names();
        let ngroups = r.gen_range(0..=5);
        for g in 0..ngroups {
            let mut lines = vec![format!("name: {}", self.group_name(g, false))];
            if r.gen_bool(0.2) {
                lines.push(format!("use: group {g}"));
            }
            for _ in 0..r.gen_range(1..=2) {
                lines.push(match r.gen_range(0..7) {
                    0 => {
                        let v: Vec<String> = sample(r, &guids, 1, 3)
                            .iter()
                            .map(|g| format!("{g:#x}"))
                            .collect();
                        format!("port-guid: {}", v.join(", "))
                    }
                    1 => {
                        let a = *pick(r, &guids);
                        let b = *pick(r, &guids);
                        // Either order: OpenSM swaps reversed ends.
                        format!("port-guid: {a:#x}-{b:#x}")
                    }
                    2 => {
                        let v: Vec<String> = sample(r, &names, 1, 3);
                        format!("port-name: {}", v.join(", "))
                    }
                    3 => format!("pkey: {}", self.pkey_value(r)),
                    4 if self.partitions.len() > 1 => {
                        let p = r.gen_range(0..self.partitions.len() - 1);
                        format!("partition: P{p}")
                    }
                    _ => {
                        let t: Vec<&str> =
                            sample(r, &["CA", "SWITCH", "ROUTER", "ALL", "SELF"], 1, 2);
                        format!("node-type: {}", t.join(", "))
                    }
                });
            }
            self.groups.push(lines);
        }
        let default_in_ulps = r.gen_bool(0.15);
        if !default_in_ulps {
            self.levels.push(vec![
                "name: DEFAULT".into(),
                format!("sl: {}", r.gen_range(0..16)),
            ]);
        }
        for l in 0..r.gen_range(0..=5) {
            // Now and then an SL OpenSM accepts and we refuse (it then drops every path of
            // the level): an explained disagreement.
            let sl = if r.gen_bool(0.02) {
                r.gen_range(16..32)
            } else {
                r.gen_range(0..16)
            };
            let mut lines = vec![format!("name: L{l}"), format!("sl: {}", num(r, sl))];
            if r.gen_bool(0.3) {
                lines.push(format!("mtu-limit: {}", r.gen_range(1..=5)));
            }
            if r.gen_bool(0.3) {
                lines.push(format!("rate-limit: {}", r.gen_range(2..=20)));
            }
            if r.gen_bool(0.3) {
                let v = r.gen_range(0..=20);
                lines.push(format!("packet-life: {}", num(r, v)));
            }
            if r.gen_bool(0.3) {
                let a = self.pkey_value(r);
                lines.push(if r.gen_bool(0.3) {
                    let b = self.pkey_value(r);
                    format!("pkey: {a}-{b}")
                } else {
                    format!("pkey: {a}")
                });
            }
            self.levels.push(lines);
        }
        let nlevels = self.levels.len();
        let level_names: Vec<String> = self
            .levels
            .iter()
            .map(|l| l[0].trim_start_matches("name: ").to_string())
            .collect();
        if nlevels > 0 {
            for _ in 0..r.gen_range(0..=6) {
                let mut lines = vec![];
                if ngroups > 0 && r.gen_bool(0.6) {
                    let mut v = vec![self.group_name(r.gen_range(0..ngroups), r.gen_bool(0.3))];
                    if r.gen_bool(0.2) {
                        v.push(self.group_name(r.gen_range(0..ngroups), false));
                    }
                    lines.push(format!("source: {}", v.join(", ")));
                }
                if ngroups > 0 && r.gen_bool(0.5) {
                    let g = self.group_name(r.gen_range(0..ngroups), r.gen_bool(0.3));
                    lines.push(format!("destination: {g}"));
                }
                if r.gen_bool(0.25) {
                    let a = r.gen_range(0..8u64);
                    let b = a + r.gen_range(0..3);
                    lines.push(match r.gen_range(0..4) {
                        // Reversed (OpenSM swaps the ends), a list, a plain range.
                        0 => format!("qos-class: {b}-{a}"),
                        1 => format!("qos-class: {a}, {}", b + 2),
                        _ => format!("qos-class: {a}-{b}"),
                    });
                }
                if r.gen_bool(0.2) {
                    let a = 0x10000 + r.gen_range(0..4u64);
                    let b = a + r.gen_range(0..3);
                    lines.push(if r.gen_bool(0.2) {
                        format!("service-id: {b:#x}-{a:#x}")
                    } else {
                        format!("service-id: {a:#x}-{b:#x}")
                    });
                }
                if r.gen_bool(0.2) {
                    lines.push(format!("pkey: {}", self.pkey_value(r)));
                }
                lines.push(format!("qos-level-name: {}", pick(r, &level_names)));
                self.rules.push(lines);
            }
        }
        if default_in_ulps {
            self.ulps.push(format!("default : {}", r.gen_range(0..16)));
        }
        for _ in 0..r.gen_range(0..=4) {
            let sl = r.gen_range(0..16);
            let g = format!("{:#x}", pick(r, &guids));
            let line = match r.gen_range(0..9) {
                0 => "sdp".to_string(),
                1 => format!("sdp, port-num {}", 10000 + r.gen_range(0..3)),
                2 => format!("rds, port-num {}", 18634 + r.gen_range(0..2)),
                3 => format!("srp, target-port-guid {g}"),
                4 => format!("iser, port-num {}", 3260 + r.gen_range(0..2)),
                5 => {
                    let a = 0x10000 + r.gen_range(0..4);
                    if r.gen_bool(0.5) {
                        format!("any, service-id {a:#x}-{:#x}", a + r.gen_range(0..3))
                    } else {
                        format!("any, service-id {a:#x}")
                    }
                }
                6 => format!("any, pkey {}", self.pkey_value(r)),
                7 => format!("any, target-port-guid {g}"),
                _ => format!("any, source-port-guid {g}"),
            };
            self.ulps.push(format!("{line} : {sl}"));
        }
    }

    fn sl2vl(r: &mut SmallRng) -> String {
        let n = match r.gen_range(0..10) {
            0 => r.gen_range(1..16),
            1 => r.gen_range(17..22),
            _ => 16,
        };
        let v: Vec<String> = (0..n)
            .map(|_| match r.gen_range(0..20) {
                0 => {
                    let v = r.gen_range(16..32);
                    num(r, v)
                }
                1..=2 => "15".to_string(),
                _ => {
                    let v = r.gen_range(0..8);
                    num(r, v)
                }
            })
            .collect();
        v.join(",")
    }

    fn vlarb(r: &mut SmallRng) -> String {
        let n = r.gen_range(1..=18);
        let v: Vec<String> = (0..n)
            .map(|_| {
                let vl = if r.gen_bool(0.15) {
                    r.gen_range(8..40)
                } else {
                    r.gen_range(0..8)
                };
                let w = if r.gen_bool(0.1) {
                    r.gen_range(256..1000)
                } else {
                    r.gen_range(0..256)
                };
                format!("{}:{}", num(r, vl), num(r, w))
            })
            .collect();
        v.join(",")
    }

    fn gen_conf(&mut self, r: &mut SmallRng) {
        if r.gen_bool(0.95) {
            self.conf.push("qos TRUE".into());
        }
        if r.gen_bool(0.3) {
            self.conf
                .push(format!("subnet_timeout {}", r.gen_range(0..=31)));
        }
        if r.gen_bool(0.2) {
            self.conf.push(format!("max_op_vls {}", r.gen_range(1..=5)));
        }
        for prefix in ["qos_", "qos_ca_", "qos_sw0_", "qos_swe_", "qos_rtr_"] {
            if r.gen_bool(0.4) {
                let mut v = Self::sl2vl(r);
                if r.gen_bool(0.15) {
                    v = v.replace(',', ", ");
                }
                if r.gen_bool(0.1) {
                    v = format!("\"{v}\"");
                }
                self.conf.push(format!("{prefix}sl2vl {v}"));
            }
            if r.gen_bool(0.3) {
                self.conf
                    .push(format!("{prefix}vlarb_high {}", Self::vlarb(r)));
            }
            if r.gen_bool(0.3) {
                self.conf
                    .push(format!("{prefix}vlarb_low {}", Self::vlarb(r)));
            }
            if r.gen_bool(0.2) {
                self.conf
                    .push(format!("{prefix}high_limit {}", r.gen_range(0..300)));
            }
        }
    }

    /// Labels of the end ports OpenSM answers for.
    pub fn end_labels(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            match n.kind {
                Kind::Switch => v.push(format!("{}/P0", n.name)),
                _ => {
                    for p in 1..=n.nports {
                        if self.links.iter().any(|l| l.a == (i, p) || l.b == (i, p)) {
                            v.push(format!("{}/P{p}", n.name));
                        }
                    }
                }
            }
        }
        v
    }

    fn gen_queries(&mut self, r: &mut SmallRng) {
        // At most 120 ordered pairs a fabric (every pair on small ones): more fabrics a run.
        let ends = self.end_labels();
        if ends.len() * ends.len() > 120 {
            let mut pairs: Vec<(String, String)> = Vec::new();
            while pairs.len() < 120 {
                let p = (pick(r, &ends).clone(), pick(r, &ends).clone());
                if !pairs.contains(&p) {
                    pairs.push(p);
                }
            }
            self.only = pairs;
        }
        self.optsets.push("none".into());
        for _ in 0..r.gen_range(1..=3) {
            let o = match r.gen_range(0..5) {
                0 => format!("--sl {}", r.gen_range(0..16)),
                1 => format!("--pkey {}", self.pkey_value(r)),
                2 => format!("--qos_class {}", r.gen_range(0..9)),
                3 => format!("--service_id {:#x}", 0x10000 + r.gen_range(0..5)),
                _ => format!(
                    "--service_id {:#x}",
                    *pick(
                        r,
                        &[0x1060000 + 18634u64, 0x10000 + 10001, 0x1060000 + 3260]
                    )
                ),
            };
            if !self.optsets.contains(&o) {
                self.optsets.push(o);
            }
        }
    }

    pub fn render_net(&self) -> String {
        let mut t = String::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let (guid_key, head) = match n.kind {
                Kind::Switch => ("switchguid", "Switch"),
                Kind::Ca => ("caguid", "Hca"),
                Kind::Router => ("rtguid", "Rt"),
            };
            t.push_str(&format!("{guid_key}={:#x}\n", n.guid));
            let esp0 = if n.enhanced { " enhanced port 0" } else { "" };
            t.push_str(&format!("{head}\t{} \"{}\"{esp0}\n", n.nports, n.name));
            for l in &self.links {
                for (me, other) in [(l.a, l.b), (l.b, l.a)] {
                    if me.0 == i {
                        t.push_str(&format!(
                            "[{}]\t\"{}\"[{}] {}\n",
                            me.1, self.nodes[other.0].name, other.1, l.opts
                        ));
                    }
                }
            }
            t.push('\n');
        }
        t
    }

    pub fn render_policy(&self) -> String {
        let mut t = String::new();
        let section = |t: &mut String, name: &str, item: &str, items: &[Vec<String>]| {
            if items.is_empty() {
                return;
            }
            t.push_str(&format!("{name}\n"));
            for it in items {
                t.push_str(&format!("    {item}\n"));
                for l in it {
                    t.push_str(&format!("        {l}\n"));
                }
                t.push_str(&format!("    end-{item}\n"));
            }
            t.push_str(&format!("end-{name}\n\n"));
        };
        section(&mut t, "port-groups", "port-group", &self.groups);
        section(&mut t, "qos-levels", "qos-level", &self.levels);
        section(&mut t, "qos-match-rules", "qos-match-rule", &self.rules);
        if !self.ulps.is_empty() {
            t.push_str("qos-ulps\n");
            for u in &self.ulps {
                t.push_str(&format!("    {u}\n"));
            }
            t.push_str("end-qos-ulps\n");
        }
        t
    }

    pub fn scenario(&self) -> Scenario {
        let mut conf = self.conf.join("\n");
        conf.push('\n');
        Scenario {
            name: format!("seed-{}", self.seed),
            about: vec![format!(
                "Found by the differential tester (crates/lossless-policy/examples/difftest.rs), seed {}.",
                self.seed
            )],
            net: self.render_net(),
            opensm_conf: conf,
            policy: Some(self.render_policy()),
            partitions: Some(self.partitions.join("\n") + "\n"),
            optsets: self.optsets.clone(),
            tables: self.tables,
            min_hop: false,
            policy_rejected: false,
            only: self.only.clone(),
            plant: self.plant.as_ref().map(|p| p.join("\n") + "\n"),
            sm: self.sm.clone(),
        }
    }
}

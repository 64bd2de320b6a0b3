//! SL2VL and VLArb tables per port.
//!
//! Two layers. The base is what OpenSM programs from its options file (`qos_sl2vl`,
//! `qos_ca_sl2vl`, `qos_swe_*`, ... in `opensm.conf`, with OpenSM's built-in defaults when
//! absent); VLs above what a port operates are masked as OpenSM does. On top, the policy's
//! `qos-setup` scopes, which OpenSM parses and ignores and the OFA QoS RFC specifies: when several
//! scopes match a port the last one applies, and a VL the port does not support becomes VL15
//! (dropped) with a warning, as the OFA QoS RFC says.

use crate::ast::{Loc, NameIndex, Policy, PortSet, VlArbScope, VlWeight};
use crate::bind::Bound;
use crate::fabric::{Fabric, Node, NodeKind, Port, PortRef};
use serde::Serialize;

use crate::opensm_conf::{vl_mask, vls_enum};
pub use crate::opensm_conf::{OsmQos, PortKind, QosConfig, TypeOptions};

/// The kind of port OpenSM programs with which options: a switch's port 0 from `qos_sw0_*`
/// (SL2VL: only the in-port 0 row, the others come from `qos_swe_*`), its other ports from
/// `qos_swe_*`, CAs from `qos_ca_*`, routers from `qos_rtr_*`.
pub fn port_kind(kind: NodeKind, inp: u8, out: u8) -> PortKind {
    match kind {
        NodeKind::Switch if out == 0 && inp == 0 => PortKind::Sw0,
        NodeKind::Switch => PortKind::Swe,
        NodeKind::Ca => PortKind::Ca,
        NodeKind::Router => PortKind::Router,
    }
}

/// The OperationalVLs a port has when OpenSM programs its tables, whose VLs it masks to
/// them. OpenSM's first sweep sets a CA's or router's OperationalVLs (its VL capability,
/// the link peer's when lower, capped at `max_op_vls`) before it programs the tables, but a
/// switch's ports only after: their tables are masked with the VLs they operate already
/// (ibsim's: their capability). A later heavy sweep masks them with `max_op_vls` too;
/// `compile` warns when that would change a table.
pub fn op_vls(fabric: &Fabric, osm: &OsmQos, r: PortRef) -> u8 {
    let Some(n) = fabric.nodes.get(r.node) else {
        return 1;
    };
    let Some(p) = n.port(r.port) else {
        return 1;
    };
    let mut v = vls_enum(p.data_vls);
    if n.kind == NodeKind::Switch {
        return v;
    }
    if let Some(peer) = p.peer.and_then(|(rn, rp)| fabric.nodes.get(rn)?.port(rp)) {
        v = v.min(vls_enum(peer.data_vls));
    }
    v.max(1).min(osm.max_op_vls)
}

/// OpenSM's tables per kind of port, built once.
#[derive(Debug, Clone)]
pub struct Configs([QosConfig; 4]);

impl Configs {
    pub fn new(osm: &OsmQos) -> Configs {
        Configs([
            osm.config(PortKind::Ca),
            osm.config(PortKind::Sw0),
            osm.config(PortKind::Swe),
            osm.config(PortKind::Router),
        ])
    }

    pub fn get(&self, k: PortKind) -> &QosConfig {
        &self.0[match k {
            PortKind::Ca => 0,
            PortKind::Sw0 => 1,
            PortKind::Swe => 2,
            PortKind::Router => 3,
        }]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diag {
    pub warning: bool,
    pub loc: Loc,
    pub message: String,
}

/// Where a port's table came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum TableSource {
    /// OpenSM options (opensm.conf or its built-in defaults).
    Opensm,
    /// The policy's sl2vl-scope at this place.
    Scope { loc: Loc },
}

/// SL2VL tables for the fabric: `table(node, in, out)`.
pub struct Sl2Vl<'a> {
    fabric: &'a Fabric,
    osm: &'a OsmQos,
    policy: Option<&'a Policy>,
    bound: Option<&'a Bound>,
    /// Per sl2vl-scope, the bound groups named by `group`, `across-from` and `across-to`
    /// (looked up once: names are matched case-insensitively, first definition wins).
    scope_groups: Vec<[Vec<usize>; 3]>,
    /// Some scope looks at the input port (`across-from`, or a `from` list).
    input_dependent: bool,
    configs: Configs,
}

/// Bound group indices of the names (unknown names are left out; `check` reports them).
pub fn group_indices(ix: &NameIndex, names: &[crate::ast::Spanned<String>]) -> Vec<usize> {
    names.iter().filter_map(|n| ix.group(&n.value)).collect()
}

impl<'a> Sl2Vl<'a> {
    pub fn new(
        fabric: &'a Fabric,
        osm: &'a OsmQos,
        policy: Option<&'a Policy>,
        bound: Option<&'a Bound>,
    ) -> Self {
        let scopes = policy.map_or(&[][..], |p| p.sl2vl_scopes.as_slice());
        let scope_groups = match policy {
            Some(p) => {
                let ix = p.names();
                scopes
                    .iter()
                    .map(|s| {
                        [
                            group_indices(&ix, &s.groups),
                            group_indices(&ix, &s.across_from),
                            group_indices(&ix, &s.across_to),
                        ]
                    })
                    .collect()
            }
            None => vec![],
        };
        let input_dependent = scopes
            .iter()
            .any(|s| !s.across_from.is_empty() || matches!(s.from, PortSet::List(_)));
        Sl2Vl {
            fabric,
            osm,
            policy,
            bound,
            scope_groups,
            input_dependent,
            configs: Configs::new(osm),
        }
    }

    /// Whether tables differ by input port (else `table(node, i, out)` is the same for all i).
    pub fn input_dependent(&self) -> bool {
        self.input_dependent
    }

    fn in_groups(&self, groups: &[usize], p: PortRef) -> bool {
        let Some(b) = self.bound else {
            return false;
        };
        let base = self.fabric.base_port(p);
        groups.iter().any(|gi| {
            b.groups
                .get(*gi)
                .is_some_and(|g| g.contains(self.fabric, base))
        })
    }

    /// The table a node applies to packets entering at `inp` and leaving at `out`, with
    /// where it came from and VLs replaced by VL15 because the port lacks them.
    pub fn table(&self, node: usize, inp: u8, out: u8) -> ([u8; 16], TableSource, Vec<u8>) {
        let Some(n) = self.fabric.nodes.get(node) else {
            return ([15; 16], TableSource::Opensm, vec![]);
        };
        if n.kind == NodeKind::Switch && out == 0 && !n.enhanced_port0 {
            // OpenSM programs no base port 0; the table OpenSM's SA holds for it is all
            // zeroes (every SL on VL0).
            return ([0; 16], TableSource::Opensm, vec![]);
        }
        let out_port = n.port(out);
        let data_vls = out_port.map_or(8, |p| p.data_vls);
        let mut chosen: Option<(&crate::ast::Sl2VlScope, Loc)> = None;
        if let Some(policy) = self.policy {
            for (s, [groups, across_from, across_to]) in
                policy.sl2vl_scopes.iter().zip(&self.scope_groups)
            {
                let me = PortRef { node, port: out };
                if !s.groups.is_empty() && !self.in_groups(groups, me) {
                    continue;
                }
                let peer = |p: u8| {
                    n.port(p)
                        .and_then(|p| p.peer)
                        .map(|(rn, rp)| PortRef { node: rn, port: rp })
                };
                if !s.across_from.is_empty()
                    && !peer(inp).is_some_and(|r| self.in_groups(across_from, r))
                {
                    continue;
                }
                if !s.across_to.is_empty()
                    && !peer(out).is_some_and(|r| self.in_groups(across_to, r))
                {
                    continue;
                }
                if n.kind == NodeKind::Switch
                    && (!s.from.contains(u64::from(inp)) || !s.to.contains(u64::from(out)))
                {
                    continue;
                }
                if n.kind != NodeKind::Switch
                    && !matches!(s.to, PortSet::Unspecified | PortSet::All)
                    && !s.to.contains(u64::from(out))
                {
                    continue;
                }
                chosen = Some((s, s.loc));
            }
        }
        match chosen {
            Some((s, loc)) => {
                let mut t = s.table;
                let mut dropped = vec![];
                for (sl, vl) in t.iter_mut().enumerate() {
                    if *vl != 15 && *vl >= data_vls {
                        *vl = 15;
                        dropped.push(sl as u8);
                    }
                }
                (t, TableSource::Scope { loc }, dropped)
            }
            None => (
                self.opensm_table(node, n.kind, inp, out),
                TableSource::Opensm,
                vec![],
            ),
        }
    }

    /// The table OpenSM programs from its options: the kind's SL2VL with every VL but 15
    /// masked to the output port's operational VLs.
    pub fn opensm_table(&self, node: usize, kind: NodeKind, inp: u8, out: u8) -> [u8; 16] {
        let mut t = self.configs.get(port_kind(kind, inp, out)).sl2vl;
        let m = vl_mask(op_vls(self.fabric, self.osm, PortRef { node, port: out }));
        for vl in t.iter_mut() {
            if *vl != 15 {
                *vl &= m;
            }
        }
        t
    }

    /// OpenSM's tables per kind of port.
    pub fn configs(&self) -> &Configs {
        &self.configs
    }
}

/// One port's compiled SL2VL (per input port on switches) and VLArb configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PortTables {
    pub port: String,
    pub guid: String,
    /// (input port, table) pairs; CAs have one entry with input 0.
    pub sl2vl: Vec<(u8, [u8; 16])>,
    pub vlarb_high: Vec<(u8, u8)>,
    pub vlarb_low: Vec<(u8, u8)>,
    pub vl_high_limit: u8,
    pub vlarb_source: TableSource,
}

/// Compile every port's tables, with diagnostics for the OFA QoS RFC's fabric-setup checks.
pub fn compile(
    fabric: &Fabric,
    osm: &OsmQos,
    policy: Option<&Policy>,
    bound: Option<&Bound>,
) -> (Vec<PortTables>, Vec<Diag>) {
    let mut c = Compiler {
        fabric,
        osm,
        policy,
        bound,
        s: Sl2Vl::new(fabric, osm, policy, bound),
        scope_used: vec![false; policy.map_or(0, |p| p.sl2vl_scopes.len() + p.vlarb_scopes.len())],
        vlarb_groups: vlarb_group_indices(policy),
        diags: Vec::new(),
    };
    let mut out = Vec::new();
    // Without `qos TRUE` OpenSM programs nothing (opensm.conf's diagnostics say so).
    for (ni, n) in fabric.nodes.iter().enumerate().filter(|_| osm.qos) {
        for p in &n.ports {
            let programmed = match n.kind {
                // Every linked port, and port 0 when it is an enhanced one.
                NodeKind::Switch => p.num != 0 || n.enhanced_port0,
                _ => p.peer.is_some(),
            };
            if programmed {
                out.push(c.port_tables(ni, n, p));
            }
        }
    }
    if let Some(pol) = policy {
        c.unused_scopes(pol);
        c.missing_ports(pol);
    }
    (out, c.diags)
}

/// Per vlarb-scope, the bound groups named by `group` and `across`.
fn vlarb_group_indices(policy: Option<&Policy>) -> Vec<[Vec<usize>; 2]> {
    policy.map_or(vec![], |pol| {
        let ix = pol.names();
        pol.vlarb_scopes
            .iter()
            .map(|sc| {
                [
                    group_indices(&ix, &sc.groups),
                    group_indices(&ix, &sc.across),
                ]
            })
            .collect()
    })
}

/// What compiling the fabric's ports needs, and what it finds along the way.
struct Compiler<'a> {
    fabric: &'a Fabric,
    osm: &'a OsmQos,
    policy: Option<&'a Policy>,
    bound: Option<&'a Bound>,
    s: Sl2Vl<'a>,
    /// Per sl2vl-scope, then per vlarb-scope: some port uses it.
    scope_used: Vec<bool>,
    vlarb_groups: Vec<[Vec<usize>; 2]>,
    diags: Vec<Diag>,
}

/// A port's VLArb configuration.
struct VlArb {
    high: Vec<(u8, u8)>,
    low: Vec<(u8, u8)>,
    limit: u8,
    source: TableSource,
}

impl<'a> Compiler<'a> {
    fn port_tables(&mut self, ni: usize, n: &Node, p: &Port) -> PortTables {
        let sl2vl = self.port_sl2vl(ni, n, p);
        // VLArb: last matching vlarb-scope, else OpenSM options.
        let me = PortRef {
            node: ni,
            port: p.num,
        };
        let vlarb = match self.vlarb_scope(me, p) {
            Some(sc) => {
                self.check_vlarb(sc, me, p);
                scope_vlarb(sc)
            }
            None => self.opensm_vlarb(ni, n, p),
        };
        PortTables {
            port: self.fabric.label(me),
            guid: format!("{:#018x}", p.guid),
            sl2vl,
            vlarb_high: vlarb.high,
            vlarb_low: vlarb.low,
            vl_high_limit: vlarb.limit,
            vlarb_source: vlarb.source,
        }
    }

    /// The port's SL2VL table per input port: on a switch every port, linked or not, as
    /// OpenSM writes them (one, input 0, on CAs and routers).
    fn port_sl2vl(&mut self, ni: usize, n: &Node, p: &Port) -> Vec<(u8, [u8; 16])> {
        let ins: Vec<u8> = if n.kind == NodeKind::Switch {
            (0..=n.nports).collect()
        } else {
            vec![0]
        };
        let mut sl2vl = Vec::new();
        // Tables that do not depend on the input port are computed once per output port
        // (a switch's port 0 takes in-port 0's from qos_sw0_*, the others' from qos_swe_*).
        let by_input = self.s.input_dependent() || (n.kind == NodeKind::Switch && p.num == 0);
        let shared = (!by_input).then(|| self.s.table(ni, 0, p.num));
        for i in ins {
            let (t, src, dropped) = match &shared {
                Some(x) => x.clone(),
                None => self.s.table(ni, i, p.num),
            };
            if let TableSource::Scope { loc } = src {
                self.sl2vl_scope_used(ni, n, p, i, loc, &dropped);
            }
            sl2vl.push((i, t));
        }
        sl2vl
    }

    /// The sl2vl-scope at `loc` gave the table for input `i`; the VLs it named that the port
    /// lacks (`dropped`) are reported once per port.
    fn sl2vl_scope_used(&mut self, ni: usize, n: &Node, p: &Port, i: u8, loc: Loc, dropped: &[u8]) {
        let Some(pol) = self.policy else {
            return;
        };
        if let Some(k) = pol.sl2vl_scopes.iter().position(|x| x.loc == loc) {
            if let Some(u) = self.scope_used.get_mut(k) {
                *u = true;
            }
        }
        if !dropped.is_empty() && i == 0
            || (!dropped.is_empty()
                && n.kind == NodeKind::Switch
                && i == n.ports.first().map_or(0, |q| q.num))
        {
            self.diags.push(Diag {
                warning: true,
                loc,
                message: format!(
                    "{}: supports {} data VLs; SL {:?} mapped to VL15 (dropped)",
                    self.fabric.label(PortRef {
                        node: ni,
                        port: p.num
                    }),
                    p.data_vls,
                    dropped
                ),
            });
        }
    }

    /// The last vlarb-scope that matches the port (every matching one is marked used).
    fn vlarb_scope(&mut self, me: PortRef, p: &Port) -> Option<&'a VlArbScope> {
        let (Some(pol), Some(_)) = (self.policy, self.bound) else {
            return None;
        };
        let mut found = None;
        for (k, (sc, [groups, across])) in
            pol.vlarb_scopes.iter().zip(&self.vlarb_groups).enumerate()
        {
            let g_ok = sc.groups.is_empty() || self.s.in_groups(groups, me);
            let a_ok = sc.across.is_empty()
                || p.peer.is_some_and(|(rn, rp)| {
                    self.s.in_groups(across, PortRef { node: rn, port: rp })
                });
            if g_ok && a_ok && sc.to.contains(u64::from(p.num)) {
                found = Some(sc);
                if let Some(u) = self.scope_used.get_mut(pol.sl2vl_scopes.len() + k) {
                    *u = true;
                }
            }
        }
        found
    }

    /// A scope's VLArb tables against what the port supports: more entries than it holds
    /// (an error), VLs above its data VLs (a warning).
    fn check_vlarb(&mut self, sc: &VlArbScope, me: PortRef, p: &Port) {
        for (name, tbl, cap) in [
            ("vlarb-high", &sc.high, p.vlarb_high_cap),
            ("vlarb-low", &sc.low, p.vlarb_low_cap),
        ] {
            let Some(tbl) = tbl else {
                continue;
            };
            if tbl.len() > usize::from(cap) {
                self.diags.push(Diag {
                    warning: false,
                    loc: sc.loc,
                    message: format!(
                        "{}: {name} has {} entries, the port supports {cap}",
                        self.fabric.label(me),
                        tbl.len()
                    ),
                });
            }
            for w in tbl {
                if w.vl >= u64::from(p.data_vls) {
                    self.diags.push(Diag {
                        warning: true,
                        loc: w.loc,
                        message: format!(
                            "{}: {name} names VL{}, the port supports VL0-{}",
                            self.fabric.label(me),
                            w.vl,
                            p.data_vls.saturating_sub(1)
                        ),
                    });
                }
            }
        }
    }

    /// Scopes no port uses.
    fn unused_scopes(&mut self, pol: &Policy) {
        for (k, used) in self.scope_used.iter().enumerate() {
            if !used {
                let (loc, what) = if k < pol.sl2vl_scopes.len() {
                    (pol.sl2vl_scopes[k].loc, "sl2vl-scope")
                } else {
                    (
                        pol.vlarb_scopes[k - pol.sl2vl_scopes.len()].loc,
                        "vlarb-scope",
                    )
                };
                self.diags.push(Diag {
                    warning: true,
                    loc,
                    message: format!("{what} matches no port of the fabric"),
                });
            }
        }
    }

    /// sl2vl-scope port numbers above every device's port count.
    fn missing_ports(&mut self, pol: &Policy) {
        let max = self
            .fabric
            .nodes
            .iter()
            .map(|n| u64::from(n.nports))
            .max()
            .unwrap_or(0);
        for s in &pol.sl2vl_scopes {
            for set in [&s.from, &s.to] {
                let PortSet::List(rs) = set else {
                    continue;
                };
                for r in rs {
                    if r.hi > max {
                        self.diags.push(Diag { warning: false, loc: r.loc, message: format!("port {} does not exist on any device of the fabric (largest has {max} ports)", r.hi) });
                    }
                }
            }
        }
    }
}

/// A vlarb-scope's tables as the port gets them.
fn scope_vlarb(sc: &VlArbScope) -> VlArb {
    let pairs = |v: &Option<Vec<VlWeight>>| {
        v.as_ref().map(|v| {
            v.iter()
                .map(|w| {
                    (
                        u8::try_from(w.vl).unwrap_or(15),
                        u8::try_from(w.weight).unwrap_or(255),
                    )
                })
                .collect::<Vec<_>>()
        })
    };
    VlArb {
        high: pairs(&sc.high).unwrap_or_default(),
        low: pairs(&sc.low).unwrap_or_default(),
        limit: sc
            .high_limit
            .as_ref()
            .map_or(0, |h| u8::try_from(h.value).unwrap_or(255)),
        source: TableSource::Scope { loc: sc.loc },
    }
}

/// One VLArb table as OpenSM writes it on a port whose table holds `cap` entries: blocks
/// of 8, the first with entries 0-7 (those past `cap` zeroed), a second only when `cap` is
/// above 8, with `cap % 8` entries from 8 on; VLs masked to the port's operational VLs.
pub fn vlarb_blocks(entries: &[(u8, u8); 16], cap: u8, mask: u8) -> Vec<(u8, u8)> {
    let mut out = Vec::new();
    let mut block = |from: usize, len: usize| {
        for i in 0..8 {
            out.push(if i < len {
                let (vl, w) = entries[from + i];
                (vl & mask, w)
            } else {
                (0, 0)
            });
        }
    };
    if cap > 0 {
        block(0, usize::from(cap.min(8)));
    }
    if cap > 8 {
        block(8, usize::from(cap % 8));
    }
    out
}

impl Compiler<'_> {
    /// The VLArb tables OpenSM programs on a port (none on a port with one data VL).
    fn opensm_vlarb(&self, ni: usize, n: &Node, p: &Port) -> VlArb {
        let me = PortRef {
            node: ni,
            port: p.num,
        };
        let cfg = self.s.configs().get(port_kind(n.kind, 0, p.num));
        if vls_enum(p.data_vls) == 1 {
            return VlArb {
                high: vec![],
                low: vec![],
                limit: 0,
                source: TableSource::Opensm,
            };
        }
        let mask = vl_mask(op_vls(self.fabric, self.osm, me));
        VlArb {
            high: vlarb_blocks(&cfg.vlarb_high, p.vlarb_high_cap, mask),
            low: vlarb_blocks(&cfg.vlarb_low, p.vlarb_low_cap, mask),
            limit: cfg.high_limit,
            source: TableSource::Opensm,
        }
    }
}

//! What the real OpenSM answers and programs on a scenario: every PathRecord asked for, and
//! (with `tables`) every port's SL2VL rows and VL arbitration tables as `smpquery` reads them
//! back from ibsim. Not VLHighLimit: ibsim does not keep what a PortInfo Set writes there.

use super::scenario::Scenario;
use lossless_policy::fabric::{topo, Fabric, NodeKind};
use lossless_testkit::opensm::{OpenSm, PathRecord, SimInput, VlArbRead};
use std::collections::BTreeMap;
use std::time::Duration;

/// An end port OpenSM answers PathRecords for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    /// `Node/Pn` (switches: `Node/P0`).
    pub label: String,
    /// The node id ibsim knows it by (SIM_HOST).
    pub host: String,
    pub lid: u16,
}

/// One port's tables as read back.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortRead {
    /// (input port, VL per SL) for this output port.
    pub sl2vl: Vec<(u8, [u8; 16])>,
    pub vlarb: Option<VlArbRead>,
}

pub type PathKey = (String, String, String);

#[derive(Debug, Default)]
pub struct Observed {
    pub ends: Vec<End>,
    pub paths: BTreeMap<PathKey, Option<PathRecord>>,
    /// By port label `Node/Pn`.
    pub tables: BTreeMap<String, PortRead>,
    pub lfts: String,
    pub ibnetdiscover: String,
    pub startup: Duration,
    pub queries: usize,
    /// OpenSM refused the policy file and runs without one: its log's first ERR AC03 or
    /// AC04 line.
    pub policy_error: Option<String>,
    /// What `sminfo` says of the master SM (`sminfo: sm lid 1 sm guid 0x..., ...`).
    pub sminfo: String,
}

/// The SIM_HOST the SM runs on: the node the scenario names, else the first node of the net
/// file.
fn sm_host(s: &Scenario, f: &Fabric) -> String {
    match &s.sm {
        Some(n) => n.clone(),
        None => f.nodes.first().map(|n| n.id.clone()).unwrap_or_default(),
    }
}

/// Start OpenSM on the scenario, on the node it names (the caller keeps it running to ask
/// more).
pub fn start(s: &Scenario) -> Result<OpenSm, String> {
    OpenSm::start_on(
        &SimInput {
            net: s.net.clone(),
            opensm_conf: s.opensm_conf.clone(),
            policy: s.policy.clone(),
            partitions: s.partitions.clone(),
        },
        s.sm.as_deref(),
    )
}

/// End ports with their LIDs as ibnetdiscover reports them.
pub fn ends(fabric: &Fabric, disc: &Fabric) -> Vec<End> {
    let mut out = Vec::new();
    for r in fabric.end_ports() {
        let n = &fabric.nodes[r.node];
        let lid = disc
            .by_desc(&n.desc)
            .and_then(|di| disc.nodes[di].port(r.port))
            .and_then(|p| p.lid);
        if let Some(lid) = lid {
            out.push(End {
                label: fabric.label(r),
                host: n.id.clone(),
                lid,
            });
        }
    }
    out
}

/// Run OpenSM on the scenario and ask it everything the scenario asks.
pub fn observe(s: &Scenario) -> Result<Observed, String> {
    let sim = start(s)?;
    observe_with(&sim, s)
}

pub fn observe_with(sim: &OpenSm, s: &Scenario) -> Result<Observed, String> {
    let fabric = topo::parse("net", &s.net).map_err(|e| e.to_string())?;
    let host = sm_host(s, &fabric);
    let mut o = Observed {
        startup: sim.startup,
        ibnetdiscover: sim.ibnetdiscover(&host),
        lfts: sim.dump_lfts(&host),
        sminfo: sim.sminfo(&host),
        ..Observed::default()
    };
    let disc = topo::parse("ibnetdiscover.out", &o.ibnetdiscover)
        .map_err(|e| format!("{}: ibnetdiscover output: {e}\n{}", s.name, o.ibnetdiscover))?;
    o.ends = ends(&fabric, &disc);
    let log = sim.osm_log();
    o.policy_error = log
        .lines()
        .find(|l| l.contains("ERR AC03") || l.contains("ERR AC04"))
        .map(|l| l.trim().to_string());
    let optsets: Vec<String> = if s.optsets.is_empty() {
        vec!["none".into()]
    } else {
        s.optsets.clone()
    };
    for a in &o.ends {
        // ibsim attaches a tool to a CA's or router's port 1: from a node whose port 1 is not
        // linked no query gets an answer, whatever OpenSM would say.
        if !a.label.ends_with("/P0")
            && !o
                .ends
                .iter()
                .any(|e| e.host == a.host && e.label.ends_with("/P1"))
        {
            continue;
        }
        for b in &o.ends {
            if !s.only.is_empty() && !s.only.iter().any(|(x, y)| *x == a.label && *y == b.label) {
                continue;
            }
            for opt in &optsets {
                let args: Vec<&str> = if opt == "none" {
                    vec![]
                } else {
                    opt.split_whitespace().collect()
                };
                let pr = sim.path_record(&a.host, a.lid, b.lid, &args);
                o.queries += 1;
                o.paths
                    .insert((a.label.clone(), b.label.clone(), opt.clone()), pr);
            }
        }
    }
    if s.tables {
        read_tables(sim, &fabric, &disc, &host, &mut o);
    }
    Ok(o)
}

/// Every port OpenSM may program: each switch's port 0 and connected ports, each connected
/// CA and router port.
fn read_tables(sim: &OpenSm, fabric: &Fabric, disc: &Fabric, host: &str, o: &mut Observed) {
    for n in &fabric.nodes {
        let Some(dn) = disc.by_desc(&n.desc).map(|i| &disc.nodes[i]) else {
            continue;
        };
        for p in &n.ports {
            let (lid, port) = match n.kind {
                NodeKind::Switch => (dn.port(0).and_then(|q| q.lid), Some(p.num)),
                _ => (dn.port(p.num).and_then(|q| q.lid), None),
            };
            let Some(lid) = lid else {
                continue;
            };
            let rows = sim.sl2vl(host, lid, port);
            let read = PortRead {
                sl2vl: rows
                    .into_iter()
                    .filter(|(_, out, _)| port.is_none_or(|q| *out == q))
                    .map(|(i, _, t)| (i, t))
                    .collect(),
                vlarb: sim.vlarb(host, lid, port),
            };
            o.queries += 2;
            o.tables.insert(format!("{}/P{}", n.desc, p.num), read);
        }
    }
}

//! Our answers and tables against what OpenSM answered and programmed, each disagreement with
//! a class (what differs, between which kinds of port) so that a run can count them.

use super::observe::{Observed, PortRead};
use super::scenario::Scenario;
use lossless_policy::bind::{bind, Bound};
use lossless_policy::compile::{compile, OsmQos, PortTables};
use lossless_policy::fabric::{lft, topo, Fabric, NodeKind, PortRef};
use lossless_policy::matcher::Request;
use lossless_policy::partitions::{self, Partitions};
use lossless_policy::resolve::{find_sm, Query, Resolver};
use lossless_policy::Policy;
use lossless_testkit::opensm::PathRecord;
use std::collections::BTreeMap;

/// ibsim's tables before anything programs them (SL2VL identity with SL15 on VL7; VLArb
/// high VL0 weight 4, low VL1-7 weight 4).
pub const IBSIM_SL2VL: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disagreement {
    /// `path sl CA->SW`, `table vlarb-low SW/P0`, ...
    pub class: String,
    pub text: String,
    /// For a path: (src, dst, optset); for a table: (port, "", "").
    pub key: (String, String, String),
}

/// Our side of a scenario: everything parsed, bound and ready.
pub struct Ours {
    pub fabric: Fabric,
    pub parts: Partitions,
    pub osm: OsmQos,
    pub policy: Option<Policy>,
    pub bound: Option<Bound>,
}

impl Ours {
    pub fn load(s: &Scenario) -> Result<Ours, String> {
        let mut fabric = topo::parse("net", &s.net).map_err(|e| e.to_string())?;
        // Told where OpenSM runs, as `--sm NODE` tells the CLI; else the first node, assumed.
        if let Some(n) = &s.sm {
            let port = find_sm(&fabric, n).map_err(|e| format!("sm {n}: {e}"))?;
            fabric.set_sm_port(port);
        }
        let conf = match &s.partitions {
            Some(p) => Some(partitions::parse("partitions.conf", p).map_err(|e| e.to_string())?),
            None => None,
        };
        let parts = Partitions::build(conf.as_ref(), &fabric);
        let osm = OsmQos::parse(s.plant.as_ref().unwrap_or(&s.opensm_conf));
        let policy = match (&s.policy, s.policy_rejected) {
            (Some(p), false) => Some(
                lossless_policy::parse_policy("qos-policy.conf", p).map_err(|e| e.to_string())?,
            ),
            _ => None,
        };
        let bound = match &policy {
            Some(p) => {
                Some(bind("qos-policy.conf", p, &fabric, &parts).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        Ok(Ours {
            fabric,
            parts,
            osm,
            policy,
            bound,
        })
    }

    fn kind(&self, label: &str) -> &'static str {
        let desc = label.rsplit_once('/').map_or(label, |(d, _)| d);
        match self.fabric.by_desc(desc).map(|i| self.fabric.nodes[i].kind) {
            Some(NodeKind::Switch) => "SW",
            Some(NodeKind::Router) => "RT",
            _ => "CA",
        }
    }

    fn port_ref(&self, label: &str) -> Option<PortRef> {
        let (desc, p) = label.rsplit_once("/P")?;
        Some(PortRef {
            node: self.fabric.by_desc(desc)?,
            port: p.parse().ok()?,
        })
    }
}

/// A number as OpenSM's config files write it: `0x` hex, else decimal.
pub fn parse_num(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None if s.len() > 1 && s.starts_with('0') => u64::from_str_radix(&s[1..], 8).ok(),
        None => s.parse().ok(),
    }
}

/// `--sl 3 --pkey 0x8001` as our request.
pub fn parse_optset(o: &str) -> (Request, Option<u8>) {
    let mut r = Request::default();
    let mut sl = None;
    let toks: Vec<&str> = o.split_whitespace().collect();
    // saquery reads them with strtoul(s, NULL, 0).
    let num = |s: &str| parse_num(s).unwrap_or(0);
    for w in toks.windows(2) {
        match w[0] {
            "--service_id" => r.service_id = Some(num(w[1])),
            "--pkey" => r.pkey = Some(num(w[1]) as u16),
            "--qos_class" => r.qos_class = Some(num(w[1]) as u16),
            "--sl" => sl = Some(num(w[1]) as u8),
            _ => {}
        }
    }
    (r, sl)
}

fn first_field(a: &PathRecord, b: &PathRecord) -> &'static str {
    if a.sl != b.sl {
        "sl"
    } else if a.pkey != b.pkey {
        "pkey"
    } else if a.mtu != b.mtu {
        "mtu"
    } else if a.rate != b.rate {
        "rate"
    } else {
        "pkt_life"
    }
}

/// Every path answer compared; `lfts`: route by OpenSM's LFTs (else min-hop).
pub fn compare_paths(
    s: &Scenario,
    ours: &Ours,
    obs: &Observed,
    use_lfts: bool,
) -> Vec<Disagreement> {
    let lfts = if use_lfts {
        match lft::parse("lfts.txt", &obs.lfts, &ours.fabric) {
            Ok(l) => Some(l),
            Err(e) => {
                return vec![Disagreement {
                    class: "harness lfts".into(),
                    text: format!("{}: dump_lfts output does not parse: {e}", s.name),
                    key: Default::default(),
                }]
            }
        }
    } else {
        None
    };
    let mut r = Resolver::new(
        &ours.fabric,
        &ours.parts,
        &ours.osm,
        ours.policy.as_ref().zip(ours.bound.as_ref()),
    );
    if let Some(l) = &lfts {
        r = r.with_lfts(l);
    }
    let mut out = Vec::new();
    for ((src, dst, opts), want) in &obs.paths {
        let (Some(a), Some(b)) = (ours.port_ref(src), ours.port_ref(dst)) else {
            continue;
        };
        let (request, sl) = parse_optset(if opts == "none" { "" } else { opts });
        // saquery asks from port 1 of a CA or router (ibsim attaches it there), port 0 of a
        // switch.
        let requester = Some(PortRef {
            node: a.node,
            port: u8::from(ours.fabric.nodes[a.node].kind != NodeKind::Switch),
        });
        let q = Query {
            requester,
            src: a,
            dst: b,
            request,
            sl,
        };
        let res = r.resolve(&q);
        let got = res.as_ref().ok().map(|p| PathRecord {
            sl: p.sl,
            mtu: p.mtu,
            rate: p.rate,
            pkt_life: p.packet_life,
            pkey: p.pkey,
        });
        if got == *want {
            continue;
        }
        let field = match (want, &got) {
            (Some(w), Some(g)) => first_field(w, g),
            (None, _) => "path-where-none",
            (_, None) => "none-where-path",
        };
        let why = match &res {
            Err(n) => format!(" ({})", n.reason),
            Ok(p) => format!(" (level {:?})", p.level),
        };
        out.push(Disagreement {
            class: format!("path {field} {}->{}", ours.kind(src), ours.kind(dst)),
            text: format!(
                "{}: {src} -> {dst} [{opts}]: OpenSM {want:?}, ours {got:?}{why} ({})",
                s.name,
                r.routing()
            ),
            key: (src.clone(), dst.clone(), opts.clone()),
        });
    }
    out
}

/// Every port table compared entry by entry with what smpquery read back.
pub fn compare_tables(s: &Scenario, ours: &Ours, obs: &Observed) -> Vec<Disagreement> {
    let (tables, _) = compile(&ours.fabric, &ours.osm, None, None);
    let by_port: BTreeMap<&str, &PortTables> =
        tables.iter().map(|t| (t.port.as_str(), t)).collect();
    let mut out = Vec::new();
    for (port, read) in &obs.tables {
        let kind = match ours.kind(port) {
            "SW" if port.ends_with("/P0") => "SW/P0",
            k => k,
        };
        let mut diff = |what: &str, text: String| {
            out.push(Disagreement {
                class: format!("table {what} {kind}"),
                text: format!("{}: {port}: {text}", s.name),
                key: (port.clone(), String::new(), String::new()),
            })
        };
        let Some(t) = by_port.get(port.as_str()) else {
            if !untouched(read) {
                diff(
                    "missing",
                    format!("OpenSM programmed {read:?}, we compile no table"),
                );
            }
            continue;
        };
        let ours_sl: BTreeMap<u8, [u8; 16]> = t.sl2vl.iter().copied().collect();
        let theirs_sl: BTreeMap<u8, [u8; 16]> = read.sl2vl.iter().copied().collect();
        if ours_sl != theirs_sl {
            let first = theirs_sl
                .iter()
                .find(|(i, v)| ours_sl.get(i) != Some(v))
                .map(|(i, v)| format!("in-port {i}: OpenSM {v:?}, ours {:?}", ours_sl.get(i)))
                .unwrap_or_else(|| {
                    format!(
                        "in-ports: OpenSM {:?}, ours {:?}",
                        theirs_sl.keys().collect::<Vec<_>>(),
                        ours_sl.keys().collect::<Vec<_>>()
                    )
                });
            diff("sl2vl", first);
        }
        if let Some(v) = &read.vlarb {
            if v.low != t.vlarb_low {
                diff(
                    "vlarb-low",
                    format!("OpenSM {:?}, ours {:?}", v.low, t.vlarb_low),
                );
            }
            if v.high != t.vlarb_high {
                diff(
                    "vlarb-high",
                    format!("OpenSM {:?}, ours {:?}", v.high, t.vlarb_high),
                );
            }
        }
    }
    out
}

/// A port OpenSM left as ibsim made it (a base switch port 0).
fn untouched(r: &PortRead) -> bool {
    r.sl2vl.iter().all(|(_, t)| *t == IBSIM_SL2VL)
        && r.vlarb.as_ref().is_none_or(|v| {
            v.high.first() == Some(&(0, 4))
                && v.high.iter().skip(1).all(|e| e.1 == 0)
                && v.low.first() == Some(&(0, 0))
                && v.low.iter().skip(1).all(|e| e.1 == 4)
        })
}

/// The SM's port as `sminfo` reports it (its GUID, read as `--sm` reads sminfo's line) must
/// be the one we take: the node the scenario names, or the first node we assume.
pub fn compare_sm(s: &Scenario, ours: &Ours, obs: &Observed) -> Vec<Disagreement> {
    let theirs = find_sm(&ours.fabric, &obs.sminfo);
    if theirs.as_ref().ok() == ours.fabric.sm_port.as_ref() {
        return vec![];
    }
    let label = |r: Option<PortRef>| r.map_or("none".to_string(), |r| ours.fabric.label(r));
    vec![Disagreement {
        class: "sm port".into(),
        text: format!(
            "{}: OpenSM runs on {} (`{}`), we take {}",
            s.name,
            theirs
                .as_ref()
                .map_or_else(|e| e.to_string(), |r| label(Some(*r))),
            obs.sminfo,
            ours.fabric.sm_text()
        ),
        key: Default::default(),
    }]
}

/// Everything the scenario asks compared: where the SM runs, paths by OpenSM's LFTs, by
/// min-hop when the scenario says its routes are min-hop's, and the tables when it asks for
/// them.
pub fn compare(s: &Scenario, obs: &Observed) -> Result<(usize, Vec<Disagreement>), String> {
    let ours = Ours::load(s)?;
    let mut d = compare_sm(s, &ours, obs);
    d.extend(compare_paths(s, &ours, obs, true));
    let mut n = 1 + obs.paths.len();
    if s.min_hop {
        d.extend(compare_paths(s, &ours, obs, false));
        n += obs.paths.len();
    }
    if s.tables {
        d.extend(compare_tables(s, &ours, obs));
        n += obs.tables.len();
    }
    Ok((n, d))
}

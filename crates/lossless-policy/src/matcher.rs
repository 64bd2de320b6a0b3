//! Which rule a PathRecord request matches: OpenSM's sequential scan (kept as the reference
//! and for `explain`), and a bitset engine that answers the same in a few dozen word
//! operations whatever the number of rules.

use crate::ast::{in_ranges, NumRange};
use crate::bind::{Bound, Rule};
use crate::fabric::{Fabric, PortRef};
use serde::Serialize;
use std::collections::HashMap;

/// The matching part of a PathRecord request. `None` = component mask bit clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Request {
    pub service_id: Option<u64>,
    pub qos_class: Option<u16>,
    pub pkey: Option<u16>,
}

/// Why a rule did not match, in the order OpenSM tests its criteria.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "failed", rename_all = "kebab-case")]
pub enum Miss {
    Source {
        groups: Vec<String>,
    },
    Destination {
        groups: Vec<String>,
    },
    /// Rule has both: the pair must be source-in-source and destination-in-destination.
    SourceAndDestination {
        source_ok: bool,
        destination_ok: bool,
    },
    QosClassAbsent,
    QosClass {
        value: u16,
    },
    ServiceIdAbsent,
    ServiceId {
        value: u64,
    },
    PkeyAbsent,
    Pkey {
        value: u16,
    },
}

impl std::fmt::Display for Miss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Miss::Source { groups } => write!(f, "source is not in {}", groups.join(", ")),
            Miss::Destination { groups } => {
                write!(f, "destination is not in {}", groups.join(", "))
            }
            Miss::SourceAndDestination {
                source_ok,
                destination_ok,
            } => write!(
                f,
                "source {} its groups, destination {} its groups (both must be)",
                if *source_ok { "is in" } else { "is not in" },
                if *destination_ok {
                    "is in"
                } else {
                    "is not in"
                }
            ),
            Miss::QosClassAbsent => write!(f, "rule needs a QoS class and the request has none"),
            Miss::QosClass { value } => write!(f, "QoS class {value} is not in the rule's list"),
            Miss::ServiceIdAbsent => write!(f, "rule needs a service ID and the request has none"),
            Miss::ServiceId { value } => {
                write!(f, "service ID {value:#018x} is not in the rule's list")
            }
            Miss::PkeyAbsent => write!(f, "rule needs a P_Key and the request has none"),
            Miss::Pkey { value } => write!(f, "P_Key {value:#06x} is not in the rule's list"),
        }
    }
}

fn in_any(b: &Bound, fabric: &Fabric, groups: &[usize], p: PortRef) -> bool {
    groups
        .iter()
        .any(|g| b.groups.get(*g).is_some_and(|g| g.contains(fabric, p)))
}

/// Test one rule exactly as `__qos_policy_get_match_rule_by_params` does.
pub fn test_rule(
    b: &Bound,
    fabric: &Fabric,
    r: &Rule,
    src: PortRef,
    dst: PortRef,
    q: &Request,
) -> Result<(), Miss> {
    let names = |g: &[usize]| {
        g.iter()
            .filter_map(|i| b.groups.get(*i))
            .map(|g| g.name.clone())
            .collect()
    };
    match (r.source.is_empty(), r.destination.is_empty()) {
        (false, true) if !in_any(b, fabric, &r.source, src) => {
            return Err(Miss::Source {
                groups: names(&r.source),
            })
        }
        (true, false) if !in_any(b, fabric, &r.destination, dst) => {
            return Err(Miss::Destination {
                groups: names(&r.destination),
            })
        }
        (false, false) => {
            let s = in_any(b, fabric, &r.source, src);
            let d = in_any(b, fabric, &r.destination, dst);
            if !(s && d) {
                return Err(Miss::SourceAndDestination {
                    source_ok: s,
                    destination_ok: d,
                });
            }
        }
        _ => {}
    }
    if !r.qos_class.is_empty() {
        match q.qos_class {
            None => return Err(Miss::QosClassAbsent),
            Some(v) if !in_ranges(&r.qos_class, u64::from(v)) => {
                return Err(Miss::QosClass { value: v })
            }
            _ => {}
        }
    }
    if !r.service_id.is_empty() {
        match q.service_id {
            None => return Err(Miss::ServiceIdAbsent),
            Some(v) if !in_ranges(&r.service_id, v) => return Err(Miss::ServiceId { value: v }),
            _ => {}
        }
    }
    if !r.pkey.is_empty() {
        match q.pkey {
            None => return Err(Miss::PkeyAbsent),
            Some(v) if !in_ranges(&r.pkey, u64::from(v & 0x7fff)) => {
                return Err(Miss::Pkey { value: v })
            }
            _ => {}
        }
    }
    Ok(())
}

/// OpenSM's algorithm: first rule in order whose criteria all hold.
pub fn scan(b: &Bound, fabric: &Fabric, src: PortRef, dst: PortRef, q: &Request) -> Option<usize> {
    b.rules
        .iter()
        .position(|r| test_rule(b, fabric, r, src, dst, q).is_ok())
}

/// Sorted interval boundaries with, per interval, the rules a value there lets through.
struct FieldIndex {
    starts: Vec<u64>,
    /// `starts.len()` masks of `words` words each.
    masks: Vec<u64>,
    /// Rules that do not test this field (what passes when the request lacks it).
    absent: Vec<u64>,
}

impl FieldIndex {
    fn build(words: usize, rules: &[&[NumRange]]) -> FieldIndex {
        let mut absent = vec![0u64; words];
        let mut points = vec![0u64];
        for (i, rs) in rules.iter().enumerate() {
            if rs.is_empty() {
                absent[i / 64] |= 1 << (i % 64);
            }
            for r in rs.iter() {
                points.push(r.lo);
                if let Some(n) = r.hi.checked_add(1) {
                    points.push(n);
                }
            }
        }
        points.sort_unstable();
        points.dedup();
        let mut masks = Vec::with_capacity(points.len() * words);
        for _ in &points {
            masks.extend_from_slice(&absent);
        }
        for (i, rs) in rules.iter().enumerate() {
            for r in rs.iter() {
                let a = points.partition_point(|p| *p < r.lo);
                let z = points.partition_point(|p| *p <= r.hi);
                for k in a..z {
                    if let Some(w) = masks.get_mut(k * words + i / 64) {
                        *w |= 1 << (i % 64);
                    }
                }
            }
        }
        FieldIndex {
            starts: points,
            masks,
            absent,
        }
    }

    fn mask(&self, words: usize, v: Option<u64>) -> &[u64] {
        match v {
            None => &self.absent,
            Some(v) => {
                let k = self.starts.partition_point(|p| *p <= v).saturating_sub(1);
                self.masks
                    .get(k * words..(k + 1) * words)
                    .unwrap_or(&self.absent)
            }
        }
    }
}

/// The bitset engine. Build once per bound policy; `first_match` is allocation-free.
pub struct Engine {
    words: usize,
    port_index: HashMap<PortRef, usize>,
    /// Per end port: rules whose source criterion it passes.
    src_ok: Vec<u64>,
    dst_ok: Vec<u64>,
    /// Mask of rules, for a port that is not an end port of the fabric.
    no_port: Vec<u64>,
    class: FieldIndex,
    sid: FieldIndex,
    pkey: FieldIndex,
}

impl Engine {
    pub fn new(b: &Bound, fabric: &Fabric) -> Engine {
        let n = b.rules.len();
        let words = n.div_ceil(64).max(1);
        let ends = fabric.end_ports();
        let port_index: HashMap<PortRef, usize> =
            ends.iter().enumerate().map(|(i, p)| (*p, i)).collect();
        let mut src_ok = vec![0u64; ends.len() * words];
        let mut dst_ok = vec![0u64; ends.len() * words];
        let mut no_port = vec![0u64; words];
        // Group membership per port, computed once per group.
        let member: Vec<Vec<bool>> = b
            .groups
            .iter()
            .map(|g| ends.iter().map(|e| g.contains(fabric, *e)).collect())
            .collect();
        for (ri, r) in b.rules.iter().enumerate() {
            let bit = 1u64 << (ri % 64);
            let w = ri / 64;
            if r.source.is_empty() && r.destination.is_empty() {
                no_port[w] |= bit;
            }
            for (pi, _) in ends.iter().enumerate() {
                let in_list = |gs: &[usize]| {
                    gs.iter().any(|g| {
                        member
                            .get(*g)
                            .and_then(|m| m.get(pi))
                            .copied()
                            .unwrap_or(false)
                    })
                };
                if r.source.is_empty() || in_list(&r.source) {
                    src_ok[pi * words + w] |= bit;
                }
                if r.destination.is_empty() || in_list(&r.destination) {
                    dst_ok[pi * words + w] |= bit;
                }
            }
        }
        let class: Vec<&[NumRange]> = b.rules.iter().map(|r| r.qos_class.as_slice()).collect();
        let sid: Vec<&[NumRange]> = b.rules.iter().map(|r| r.service_id.as_slice()).collect();
        let pkey: Vec<&[NumRange]> = b.rules.iter().map(|r| r.pkey.as_slice()).collect();
        Engine {
            words,
            port_index,
            src_ok,
            dst_ok,
            no_port,
            class: FieldIndex::build(words, &class),
            sid: FieldIndex::build(words, &sid),
            pkey: FieldIndex::build(words, &pkey),
        }
    }

    /// Dense index of an end port, to skip the hash lookup in hot loops.
    pub fn port_index(&self, p: PortRef) -> Option<usize> {
        self.port_index.get(&p).copied()
    }

    pub fn first_match(&self, src: PortRef, dst: PortRef, q: &Request) -> Option<usize> {
        self.first_match_idx(self.port_index(src), self.port_index(dst), q)
    }

    pub fn first_match_idx(
        &self,
        src: Option<usize>,
        dst: Option<usize>,
        q: &Request,
    ) -> Option<usize> {
        let w = self.words;
        let s = match src {
            Some(i) => self.src_ok.get(i * w..(i + 1) * w)?,
            None => &self.no_port,
        };
        let d = match dst {
            Some(i) => self.dst_ok.get(i * w..(i + 1) * w)?,
            None => &self.no_port,
        };
        let c = self.class.mask(w, q.qos_class.map(u64::from));
        let si = self.sid.mask(w, q.service_id);
        let p = self.pkey.mask(w, q.pkey.map(|v| u64::from(v & 0x7fff)));
        for k in 0..w {
            let m = s[k] & d[k] & c[k] & si[k] & p[k];
            if m != 0 {
                return Some(k * 64 + m.trailing_zeros() as usize);
            }
        }
        None
    }
}

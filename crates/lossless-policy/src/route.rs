//! Unicast routes. With an LFT dump (`--lfts`), the routes the subnet manager programmed:
//! at each switch the egress port its table gives for the destination's LID. Without one,
//! min-hop over the fabric dump: at each switch the egress port on a shortest path to the
//! destination's switch, lowest port number on a tie. OpenSM's min-hop also balances
//! equal-cost ports, so on fabrics with parallel paths of different capability min-hop's
//! choice can differ from the real one; every answer says which routing it used.

use crate::fabric::lft::Lfts;
use crate::fabric::{Fabric, NodeKind, PortRef};
use std::collections::VecDeque;

/// Hop distances from every switch to `target` switch (None = unreachable).
pub fn switch_distances(fabric: &Fabric, target: usize) -> Vec<Option<u32>> {
    let mut d = vec![None; fabric.nodes.len()];
    let mut q = VecDeque::new();
    if let Some(slot) = d.get_mut(target) {
        *slot = Some(0);
        q.push_back(target);
    }
    while let Some(n) = q.pop_front() {
        let here = d.get(n).copied().flatten().unwrap_or(0);
        let Some(node) = fabric.nodes.get(n) else {
            continue;
        };
        for p in &node.ports {
            if let Some((r, _)) = p.peer {
                let is_sw = fabric
                    .nodes
                    .get(r)
                    .is_some_and(|x| x.kind == NodeKind::Switch);
                if is_sw && d.get(r).is_some_and(|x| x.is_none()) {
                    if let Some(slot) = d.get_mut(r) {
                        *slot = Some(here + 1);
                    }
                    q.push_back(r);
                }
            }
        }
    }
    d
}

/// Routing state for one destination end port.
pub struct Router<'a> {
    fabric: &'a Fabric,
    dst: PortRef,
    /// The switch the destination hangs off (itself when it is a switch).
    dst_switch: Option<usize>,
    dist: Vec<Option<u32>>,
    /// The programmed tables and the destination's LID, when routing by LFT.
    lft: Option<(&'a Lfts, Option<u16>)>,
}

impl<'a> Router<'a> {
    pub fn new(fabric: &'a Fabric, dst: PortRef) -> Router<'a> {
        let dst_switch = match fabric.node(dst).map(|n| n.kind) {
            Some(NodeKind::Switch) => Some(dst.node),
            _ => fabric
                .port(dst)
                .and_then(|p| p.peer)
                .map(|(n, _)| n)
                .filter(|n| {
                    fabric
                        .nodes
                        .get(*n)
                        .is_some_and(|x| x.kind == NodeKind::Switch)
                }),
        };
        let dist = dst_switch
            .map(|s| switch_distances(fabric, s))
            .unwrap_or_default();
        Router {
            fabric,
            dst,
            dst_switch,
            dist,
            lft: None,
        }
    }

    /// Route by the programmed tables instead of min-hop.
    pub fn with_lfts(fabric: &'a Fabric, dst: PortRef, lfts: &'a Lfts) -> Router<'a> {
        Router {
            fabric,
            dst,
            dst_switch: None,
            dist: vec![],
            lft: Some((lfts, lfts.lid_of(dst))),
        }
    }

    /// The LFT routing state: the tables and the destination LID (`None`: no LID known).
    pub fn lft(&self) -> Option<(&'a Lfts, Option<u16>)> {
        self.lft
    }

    /// Egress port on switch `sw` towards the destination (port 0 when `sw` is it).
    pub fn egress(&self, sw: usize) -> Option<u8> {
        if let Some((lfts, dlid)) = self.lft {
            return lfts.egress(sw, dlid?);
        }
        if sw == self.dst.node {
            return Some(0);
        }
        let node = self.fabric.nodes.get(sw)?;
        if Some(sw) == self.dst_switch {
            // The destination CA or router is attached here.
            return node
                .ports
                .iter()
                .find(|p| p.peer == Some((self.dst.node, self.dst.port)))
                .map(|p| p.num);
        }
        let here = self.dist.get(sw).copied().flatten()?;
        node.ports
            .iter()
            .filter(|p| p.num != 0)
            .find(|p| {
                p.peer.is_some_and(|(r, _)| {
                    self.dist.get(r).copied().flatten() == Some(here.wrapping_sub(1))
                        && self
                            .fabric
                            .nodes
                            .get(r)
                            .is_some_and(|x| x.kind == NodeKind::Switch)
                })
            })
            .map(|p| p.num)
    }
}

#![allow(clippy::unwrap_used)]
//! What a port costs in memory: the heap a node holds for each of its ports once
//! they have negotiated with a peer and settled (the fast transmissions over), as
//! losslessd's does at steady state. losslessd with 4,096 ports must fit in 64 MB
//! of RSS, runtime included: every byte here is multiplied by the ports.
//!
//! A counting global allocator sees every allocation of this test binary, so
//! this file holds one test only (tests run on threads of one process).

use std::alloc::System;
use std::path::Path;

use lossless_dcbx::Instant;
use lossless_node::config::DaemonConfig;
use lossless_node::link::Link;
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::state::PersistedState;
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

// `stats_alloc` holds the one `unsafe impl GlobalAlloc`; the workspace forbids
// unsafe code in ours.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The scale bench's two daemons: a hub that is not willing and enables PFC
/// on 3 and 4, a leaf with the defaults (auto mode, willing), `n` links each.
const HUB: &str = "[ports.\"p*\"]\npfc = { willing = false, priorities = [3, 4] }\n";
const LEAF: &str = "[ports.\"q*\"]\n";

fn now(secs: f64) -> Now {
    Now {
        mono: Instant::from_secs_f64(secs),
        unix: 1.7e9 + secs,
    }
}

fn links(prefix: &str, n: usize, mac_byte: u8) -> Vec<Link> {
    (0..n)
        .map(|i| Link {
            ifindex: 10 + i as u32,
            name: format!("{prefix}{i}"),
            mac: Some([2, mac_byte, 0, 0, (i >> 8) as u8, i as u8]),
            admin_up: true,
            oper_up: true,
            carrier: true,
            alias: None,
        })
        .collect()
}

fn node(text: &str) -> Node {
    let config = DaemonConfig::parse(text, Path::new("memory.toml")).unwrap();
    Node::new(
        config,
        Identity::default(),
        PersistedState::default(),
        now(0.0),
    )
}

/// Carries each node's frames to the other (same ifindex on both) until
/// neither sends any more.
fn exchange(t: Now, nodes: &mut [Node; 2]) {
    loop {
        let mut moved = false;
        for from in 0..2 {
            let mut frames = Vec::new();
            while let Some(out) = nodes[from].poll_output() {
                if let Output::Send { ifindex, frame } = out {
                    frames.push((ifindex, frame));
                }
            }
            moved |= !frames.is_empty();
            for (ifindex, frame) in frames {
                nodes[1 - from].handle_frame(t, ifindex, &frame);
            }
        }
        if !moved {
            return;
        }
    }
}

/// A hub and a leaf with `n` linked ports, converged and run for 40 s of
/// virtual time (past the fast transmissions, two regular ones more); the
/// heap the hub holds then, as the bytes its drop gives back.
fn hub_heap(n: usize) -> usize {
    let mut nodes = [node(HUB), node(LEAF)];
    nodes[0].handle_links(now(0.0), links("p", n, 0x0a));
    nodes[1].handle_links(now(0.0), links("q", n, 0x0b));
    exchange(now(0.0), &mut nodes);
    let mut t = 0.0;
    while t < 40.0 {
        let next = nodes
            .iter_mut()
            .filter_map(|d| d.poll_timeout())
            .min()
            .unwrap_or(Instant::from_secs_f64(40.0));
        t = next.since_epoch().as_secs_f64().max(t);
        for d in &mut nodes {
            d.handle_timeout(now(t));
        }
        exchange(now(t), &mut nodes);
    }
    let converged = nodes[0].ports().filter(|p| p.converged()).count();
    assert_eq!(converged, n, "every hub port converged");
    let [hub, leaf] = nodes;
    drop(leaf);
    let region = Region::new(GLOBAL);
    drop(hub);
    region.change().bytes_deallocated
}

/// What one more port costs: the difference between two hubs, both past the
/// node's fixed costs (its event history is full at 160 ports), 256 ports apart (a
/// narrower span lands on or between the steps of the maps' and vectors' growth and
/// reads up to 100 B per port low).
#[test]
fn a_settled_port_holds_little_heap() {
    let small = hub_heap(160);
    let large = hub_heap(416);
    let per_port = (large - small) / 256;
    println!(
        "hub heap: {small} B with 160 ports, {large} B with 416: {per_port} B per port \
         ({} KiB for 4,096 ports)",
        per_port * 4096 / 1024
    );
    // 4.25 KB when this was written (16.1 KB before the APP tables were
    // sized by their entries and the PFC state made lazy); 5.6 KB by the time the
    // NIC's read-backs were kept, 4.8 KB with them boxed (a port whose NIC is not
    // programmed holds none): 5.5 KB is 22 MB of heap at 4,096 ports, with the
    // runtime's own memory still under 64 MB.
    assert!(
        per_port <= 5_500,
        "{per_port} B of heap per settled port, more than 5.5 KB"
    );
}

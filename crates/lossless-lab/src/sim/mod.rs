//! A discrete-event simulator of nodes joined by links, on a virtual clock: the
//! one engine under the lab's scenarios, its tests, the daemon-core tests, the
//! headroom measurement tests and the relay's WAN path.
//!
//! The shape is quinn-proto's test `Pair` generalised to N nodes: the simulator
//! owns every node, carries out its outputs as losslessd's runtime would
//! (`execute`), delivers frames at `now + delay` (or drops them with the
//! path's loss), after their serialization when the link has a rate
//! (`link`), and wakes each node at its own `poll_timeout()` (`queue`).
//! Nothing reads the wall clock, so a run is exactly repeatable from its seed.
//!
//! What runs on a node (`node`): losslessd's node core, configured by a file
//! the lab writes (DCBX on its first port, [`PORT`], and/or a `[relay]` section
//! whose data path starts as in the daemon, `datapath`); a transit router;
//! a bare measurement session. Nodes have one or more named ports; a frame the
//! lab builds can be sent from any of them ([`Sim::send_frame_on`]).
//!
//! - `log`: the timeline, captures and counters a run records.
//! - `build`: adding nodes; `control`: operator actions on them.

mod build;
mod control;
mod datapath;
mod execute;
mod link;
mod log;
mod node;
mod queue;
mod relay_host;

use std::collections::HashMap;

use lossless_dcbx::{Agent, Duration, Instant};
use lossless_headroom::session::{MeasureEvent, Session};
use lossless_node::config::PortSettings;
use lossless_node::node::{Node, Now, RequestId};
use lossless_node::port::Port;
use lossless_node::state::PersistedState;
use lossless_relay::{GatewayCheck, Relay};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::describe::describe_frame;
use crate::nic::Nic;
use crate::transit::Transit;
use node::{ifindex, Kind, SimNode};
use queue::{Delivery, Due, Queue};

pub use link::{bits_time, serialization, PathProps};
pub use log::{Captured, Cause, LogEntry, SimStats};

/// Index of a node in the simulator.
pub type NodeId = usize;
/// Index of a segment (a link, or a shared medium with more than two nodes).
pub type SegmentId = usize;

/// The interface name of an agent's port.
pub const PORT: &str = "p0";

/// The simulator.
pub struct Sim {
    now: Instant,
    nodes: Vec<SimNode>,
    segments: Vec<link::Segment>,
    paths: HashMap<(NodeId, NodeId), link::PathState>,
    default_path: PathProps,
    queue: Queue,
    next_request: RequestId,
    rng: SmallRng,
    log: Option<Vec<LogEntry>>,
    capture: Option<Vec<Captured>>,
    describe: fn(&[u8]) -> String,
    stats: SimStats,
}

impl Sim {
    /// A simulator whose random choices (loss) follow `seed`.
    pub fn new(seed: u64) -> Self {
        Sim {
            now: Instant::ZERO,
            nodes: Vec::new(),
            segments: Vec::new(),
            paths: HashMap::new(),
            default_path: PathProps::default(),
            queue: Queue::default(),
            next_request: 0,
            rng: SmallRng::seed_from_u64(seed),
            log: Some(Vec::new()),
            capture: None,
            describe: describe_frame,
            stats: SimStats::default(),
        }
    }

    /// Stops recording the timeline (large runs).
    pub fn without_log(mut self) -> Self {
        self.log = None;
        self
    }

    /// Records every frame sent, for a pcap.
    pub fn with_capture(mut self) -> Self {
        self.capture = Some(Vec::new());
        self
    }

    /// Describes the frames of the timeline with `describe` (default:
    /// [`describe_frame`], LLDP and DCBX).
    pub fn with_describer(mut self, describe: fn(&[u8]) -> String) -> Self {
        self.describe = describe;
        self
    }

    pub fn now(&self) -> Instant {
        self.now
    }

    fn clock(&self) -> Now {
        Now {
            mono: self.now,
            unix: self.now.since_epoch().as_secs_f64(),
        }
    }

    pub fn stats(&self) -> SimStats {
        self.stats
    }

    pub fn log(&self) -> &[LogEntry] {
        self.log.as_deref().unwrap_or(&[])
    }

    pub fn capture(&self) -> &[Captured] {
        self.capture.as_deref().unwrap_or(&[])
    }

    fn push_log(&mut self, entry: LogEntry) {
        if let Some(log) = &mut self.log {
            log.push(entry);
        }
    }

    /// Writes what the operator (or a scenario) did into the timeline.
    pub fn note(&mut self, what: String) {
        let at = self.now;
        self.push_log(LogEntry::Action { at, what });
    }

    pub fn name(&self, node: NodeId) -> &str {
        &self.nodes[node].name
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The index of a node's port named `name`.
    pub fn port_index(&self, node: NodeId, name: &str) -> Option<usize> {
        self.nodes[node].ports.iter().position(|p| p.name == name)
    }

    /// Frames a node sent so far.
    pub fn frames_sent_by(&self, node: NodeId) -> u64 {
        self.nodes[node].frames_sent
    }

    fn core(&self, node: NodeId) -> &node::CoreNode {
        match self.nodes[node].core() {
            Some(c) => c,
            None => panic!("node {} runs no node core", self.nodes[node].name),
        }
    }

    fn core_mut(&mut self, node: NodeId) -> &mut node::CoreNode {
        let name = self.nodes[node].name.clone();
        match self.nodes[node].core_mut() {
            Some(c) => c,
            None => panic!("node {name} runs no node core"),
        }
    }

    /// The node core itself. Panics for a transit router or a station.
    pub fn node(&self, node: NodeId) -> &Node {
        &self.core(node).node
    }

    /// The node's first port. Panics if the node refused its configuration (the
    /// lab only writes configurations it validated) or runs no DCBX.
    pub fn port(&self, node: NodeId) -> &Port {
        let name = &self.nodes[node].ports[0].name;
        match self.core(node).node.port(name) {
            Some(p) => p,
            None => panic!("node {} has no port {name}", self.nodes[node].name),
        }
    }

    /// The DCBX agent of the node's first port.
    pub fn agent(&self, node: NodeId) -> &Agent {
        &self.port(node).agent
    }

    /// The node's NIC: its driver and what it was asked to program.
    pub fn nic(&self, node: NodeId) -> &Nic {
        &self.core(node).nic
    }

    /// The node's NIC, to set it up as another tool would have (entries, no trust
    /// table).
    pub fn nic_mut(&mut self, node: NodeId) -> &mut Nic {
        &mut self.core_mut(node).nic
    }

    /// What the node's state directory holds.
    pub fn persisted(&self, node: NodeId) -> &PersistedState {
        &self.core(node).store
    }

    /// The node's Prometheus metrics now.
    pub fn metrics(&self, node: NodeId) -> String {
        self.core(node).node.render_metrics(self.clock(), None)
    }

    /// The settings of the node's first port as written into its file. Panics
    /// for a node without DCBX.
    pub fn settings(&self, node: NodeId) -> &PortSettings {
        match &self.core(node).settings {
            Some(s) => s,
            None => panic!("node {} runs no DCBX", self.nodes[node].name),
        }
    }

    /// The measurement session of the node's first port: the node core's, if it
    /// runs one, or a station's.
    pub fn measurement(&self, node: NodeId) -> Option<&Session> {
        match &self.nodes[node].kind {
            Kind::Core(c) => c
                .node
                .port(&self.nodes[node].ports[0].name)?
                .headroom
                .as_ref()
                .map(|h| &h.session),
            Kind::Station(s) => Some(&s.session),
            Kind::Transit(_) => None,
        }
    }

    /// What a station's session reported, in order (empty for other nodes).
    pub fn station_events(&self, node: NodeId) -> &[MeasureEvent] {
        match &self.nodes[node].kind {
            Kind::Station(s) => &s.events,
            _ => &[],
        }
    }

    /// Acts on a station's session now (`f` gets the session and the time), then
    /// carries out what it yields. Does nothing for other nodes.
    pub fn with_station(&mut self, node: NodeId, f: impl FnOnce(&mut Session, Instant)) {
        let now = self.now;
        if let Kind::Station(s) = &mut self.nodes[node].kind {
            f(&mut s.session, now);
            self.after(node);
        }
    }

    /// The relay core of a PE node whose data path runs.
    pub fn relay(&self, node: NodeId) -> Option<&Relay> {
        self.nodes[node].core()?.datapath.as_ref()?.relay()
    }

    /// The check of a DC gateway node whose data path runs.
    pub fn gateway(&self, node: NodeId) -> Option<&GatewayCheck> {
        self.nodes[node].core()?.datapath.as_ref()?.gateway()
    }

    /// A transit router.
    pub fn transit(&self, node: NodeId) -> Option<&Transit> {
        match &self.nodes[node].kind {
            Kind::Transit(t) => Some(t),
            _ => None,
        }
    }

    /// Where the node's timestamp clock stands when the virtual clock is 0
    /// (picoseconds; its clock wraps at 2^64 like a NIC's).
    pub fn set_clock_offset(&mut self, node: NodeId, ps: u64) {
        self.nodes[node].clock_offset = ps;
    }

    /// Transmit timestamps reach the node's core `d` after the frame left (the
    /// error queue's latency).
    pub fn set_tx_report_delay(&mut self, node: NodeId, d: Duration) {
        self.nodes[node].tx_report_delay = d;
    }

    /// The node answers a measurement request `d` after it came in (its
    /// response leaves, and is timestamped, then).
    pub fn set_turnaround(&mut self, node: NodeId, d: Duration) {
        self.nodes[node].turnaround = d;
    }

    /// Puts a frame the lab built onto the segment of `from`'s first port now, as
    /// if `from` had sent it (logged, captured, delayed and lost like any
    /// other): a scripted peer's LLDPDU or a crafted one ([`crate::scripted`]).
    /// The node core is not asked.
    pub fn send_frame(&mut self, from: NodeId, bytes: Vec<u8>) {
        self.send_frame_on(from, 0, bytes);
    }

    /// [`Sim::send_frame`] from port `port` of `from` (e.g. a DC gateway's PFC).
    pub fn send_frame_on(&mut self, from: NodeId, port: usize, bytes: Vec<u8>) {
        let now = self.now;
        self.transmit(from, port, bytes, Delivery::Frame, Cause::Originated, now);
    }

    /// A frame's last bit reaches `port` of `to`.
    fn arrive(&mut self, to: NodeId, port: usize, bytes: &[u8], kind: Delivery) {
        self.stats.frames_delivered += 1;
        let now = self.clock();
        let rx = self.stamp(to, self.now);
        if self.datapath_receive(to, port, bytes) {
            return;
        }
        match &mut self.nodes[to].kind {
            Kind::Core(c) => match kind {
                Delivery::Frame => c.node.handle_frame(now, ifindex(port), bytes),
                Delivery::Measure => {
                    c.node
                        .handle_measure_frame(now, ifindex(port), bytes, Some(rx))
                }
            },
            Kind::Station(s) => s.session.handle_frame(now.mono, bytes, rx),
            Kind::Transit(_) => return self.route(to, port, bytes),
        }
        self.after(to);
    }

    /// A transit router forwards a frame that came in on `port`, or drops it.
    fn route(&mut self, node: NodeId, port: usize, bytes: &[u8]) {
        let Kind::Transit(t) = &mut self.nodes[node].kind else {
            return;
        };
        let at = self.now;
        match t.forward(port, bytes) {
            Ok(f) => {
                self.push_log(LogEntry::Routed {
                    at,
                    node,
                    lookup: f.lookup,
                });
                let cause = Cause::Forwarded;
                self.transmit(node, f.interface, f.frame, Delivery::Frame, cause, at);
            }
            Err(why) => self.push_log(LogEntry::Unrouted { at, node, why }),
        }
    }

    /// Handles everything due at the next instant, if it is not after `limit`.
    /// Returns false when nothing is left before `limit` (the clock then stands at `limit`).
    pub fn step(&mut self, limit: Instant) -> bool {
        let nodes = &self.nodes;
        let next = self
            .queue
            .next_instant(|n, t| nodes[n].scheduled == Some(t));
        let Some(t) = next.filter(|t| *t <= limit) else {
            self.now = self.now.max(limit);
            return false;
        };
        self.now = t;
        // Things in flight first: a frame and a timer at the same instant see the
        // frame delivered.
        if let Some(due) = self.queue.pop_due(t) {
            match due {
                Due::Arrive {
                    to,
                    port,
                    bytes,
                    kind,
                } => self.arrive(to, port, &bytes, kind),
                Due::TxStamp {
                    node,
                    port,
                    bytes,
                    ts,
                } => {
                    self.tx_stamp(node, port, &bytes, ts);
                    self.after(node);
                }
                Due::Wake(node) => self.datapath_wake(node),
            }
            return true;
        }
        if let Some((tt, node)) = self.queue.pop_timer() {
            if self.nodes[node].scheduled == Some(tt) {
                self.nodes[node].scheduled = None;
                let now = self.clock();
                match &mut self.nodes[node].kind {
                    Kind::Core(c) => c.node.handle_timeout(now),
                    Kind::Station(s) => s.session.handle_timeout(now.mono),
                    Kind::Transit(_) => {}
                }
                self.after(node);
            }
        }
        true
    }

    /// Runs until the clock reaches `until`.
    pub fn run_until(&mut self, until: Instant) {
        while self.step(until) {}
    }

    /// Runs for `d` of simulated time.
    pub fn run_for(&mut self, d: Duration) {
        let until = self.now + d;
        self.run_until(until);
    }

    /// Runs until `done` holds (checked after every step) or `limit` passes.
    /// Returns the instant `done` first held.
    pub fn run_until_true(
        &mut self,
        limit: Instant,
        mut done: impl FnMut(&Sim) -> bool,
    ) -> Option<Instant> {
        if done(self) {
            return Some(self.now);
        }
        while self.step(limit) {
            if done(self) {
                return Some(self.now);
            }
        }
        None
    }

    /// Runs until nothing is in flight and no timer is set; returns when the
    /// last thing happened (the clock stays there). Agents running LLDP always
    /// have a timer: this is for fabrics of relays, routers and scripted senders.
    pub fn run_until_idle(&mut self) -> Instant {
        loop {
            let nodes = &self.nodes;
            let next = self
                .queue
                .next_instant(|n, t| nodes[n].scheduled == Some(t));
            let Some(t) = next else {
                return self.now;
            };
            self.step(t);
        }
    }
}

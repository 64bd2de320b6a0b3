//! A discrete-event link simulator: agents joined by segments, a virtual
//! clock, per-direction delay and loss, a seeded random source.
//!
//! The shape is quinn-proto's test `Pair` generalised to N agents: the
//! simulator owns every agent, delivers frames at `now + delay` (or drops
//! them with the path's loss probability) and wakes each agent at its own
//! `poll_timeout()`. Nothing reads the wall clock, so a run is exactly
//! repeatable from its seed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use lossless_dcbx::{Agent, ConfigError, Duration, Event, Instant, PortConfig};
use lossless_headroom::session::{MeasureEvent, Session, SessionConfig, SessionConfigError};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::describe::describe_frame;

/// Index of an agent in the simulator.
pub type NodeId = usize;
/// Index of a segment (a link, or a shared medium with more than two agents).
pub type SegmentId = usize;

/// Delay and loss of one direction between two agents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathProps {
    pub delay: Duration,
    /// Probability in 0..=1 that a frame is lost.
    pub loss: f64,
}

impl Default for PathProps {
    fn default() -> Self {
        PathProps {
            delay: Duration::ZERO,
            loss: 0.0,
        }
    }
}

/// What happened, when: the timeline of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    /// An agent sent a frame (described for people).
    Sent {
        at: Instant,
        from: NodeId,
        summary: String,
    },
    /// A frame was lost on the way to `to`.
    Lost {
        at: Instant,
        from: NodeId,
        to: NodeId,
    },
    /// An agent reported an event.
    Event {
        at: Instant,
        node: NodeId,
        event: Event,
    },
    /// The operator did something (link up, config change, restart).
    Action { at: Instant, what: String },
    /// A node's link-delay measurement ended a round.
    Measure {
        at: Instant,
        node: NodeId,
        event: MeasureEvent,
    },
}

/// A frame as it crossed the wire, for captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub at: Instant,
    pub from: NodeId,
    pub bytes: Vec<u8>,
}

struct Node {
    name: String,
    agent: Agent,
    /// The adaptive-headroom measurement session, on nodes that run one.
    measure: Option<Session>,
    segment: Option<SegmentId>,
    /// The deadline queued for this agent in `timers` (older entries are stale).
    scheduled: Option<Instant>,
}

struct InFlight {
    to: NodeId,
    bytes: Vec<u8>,
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    pub frames_sent: u64,
    pub frames_delivered: u64,
    pub frames_lost: u64,
}

/// The simulator.
pub struct Sim {
    now: Instant,
    nodes: Vec<Node>,
    segments: Vec<Vec<NodeId>>,
    paths: HashMap<(NodeId, NodeId), PathProps>,
    default_path: PathProps,
    frames: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    frame_slots: Vec<Option<InFlight>>,
    free_slots: Vec<usize>,
    timers: BinaryHeap<Reverse<(Instant, NodeId)>>,
    seq: u64,
    rng: SmallRng,
    log: Option<Vec<LogEntry>>,
    capture: Option<Vec<Captured>>,
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
            frames: BinaryHeap::new(),
            frame_slots: Vec::new(),
            free_slots: Vec::new(),
            timers: BinaryHeap::new(),
            seq: 0,
            rng: SmallRng::seed_from_u64(seed),
            log: Some(Vec::new()),
            capture: None,
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

    pub fn now(&self) -> Instant {
        self.now
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

    pub fn name(&self, node: NodeId) -> &str {
        &self.nodes[node].name
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn agent(&self, node: NodeId) -> &Agent {
        &self.nodes[node].agent
    }

    /// Adds an agent (link down, not on any segment).
    pub fn add_agent(&mut self, name: &str, cfg: PortConfig) -> Result<NodeId, ConfigError> {
        let agent = Agent::new(cfg, self.now)?;
        self.nodes.push(Node {
            name: name.to_string(),
            agent,
            measure: None,
            segment: None,
            scheduled: None,
        });
        Ok(self.nodes.len() - 1)
    }

    /// Runs a link-delay measurement session on `node` (it starts measuring once its
    /// agent and the peer's both advertise the capability). Timestamps are the virtual
    /// clock, so what it measures is exactly the paths' delays.
    pub fn enable_measurement(
        &mut self,
        node: NodeId,
        cfg: SessionConfig,
    ) -> Result<(), SessionConfigError> {
        let mac = self.nodes[node].agent.mac();
        let first_id = (node as u16).wrapping_mul(1000);
        self.nodes[node].measure = Some(Session::new(cfg, mac, first_id)?);
        self.after(node);
        Ok(())
    }

    /// The node's measurement session, if it runs one.
    pub fn measurement(&self, node: NodeId) -> Option<&Session> {
        self.nodes[node].measure.as_ref()
    }

    /// A point-to-point link between two agents (links stay down until `link_up`).
    pub fn connect(&mut self, a: NodeId, b: NodeId) -> SegmentId {
        let seg = self.segments.len();
        self.segments.push(vec![a, b]);
        self.nodes[a].segment = Some(seg);
        self.nodes[b].segment = Some(seg);
        seg
    }

    /// Puts another agent on a segment: a shared medium (e.g. a hub, or a
    /// misconfigured bridge that forwards LLDP), i.e. a second neighbour.
    pub fn attach(&mut self, seg: SegmentId, node: NodeId) {
        if !self.segments[seg].contains(&node) {
            self.segments[seg].push(node);
        }
        self.nodes[node].segment = Some(seg);
    }

    /// Takes an agent off its segment (its link goes down).
    pub fn detach(&mut self, node: NodeId) {
        self.set_node_link(node, false);
        if let Some(seg) = self.nodes[node].segment.take() {
            self.segments[seg].retain(|n| *n != node);
        }
    }

    /// Delay and loss from `from` to `to`.
    pub fn set_path(&mut self, from: NodeId, to: NodeId, props: PathProps) {
        self.paths.insert((from, to), props);
    }

    /// Delay and loss in both directions between two agents.
    pub fn set_link_props(&mut self, a: NodeId, b: NodeId, props: PathProps) {
        self.set_path(a, b, props);
        self.set_path(b, a, props);
    }

    /// Delay and loss on every path without its own setting.
    pub fn set_default_path(&mut self, props: PathProps) {
        self.default_path = props;
    }

    fn note(&mut self, what: String) {
        let at = self.now;
        if let Some(log) = &mut self.log {
            log.push(LogEntry::Action { at, what });
        }
    }

    /// Brings every agent on a segment up (or down) at the current instant.
    pub fn set_link(&mut self, seg: SegmentId, up: bool) {
        self.note(format!(
            "link {} {}",
            self.segment_name(seg),
            if up { "up" } else { "down" }
        ));
        for node in self.segments[seg].clone() {
            let now = self.now;
            self.nodes[node].agent.handle_link(now, up);
            self.after(node);
        }
    }

    /// One agent's view of its link (e.g. it was unplugged, or restarted).
    pub fn set_node_link(&mut self, node: NodeId, up: bool) {
        let now = self.now;
        self.nodes[node].agent.handle_link(now, up);
        self.after(node);
    }

    /// Changes an agent's configuration now.
    pub fn set_config(&mut self, node: NodeId, cfg: PortConfig) -> Result<(), ConfigError> {
        let now = self.now;
        self.nodes[node].agent.set_config(now, cfg)?;
        self.note(format!("config change on {}", self.nodes[node].name));
        self.after(node);
        Ok(())
    }

    /// Replaces an agent by a fresh one with `cfg` (a crash and restart: no
    /// shutdown frame, all state lost) and brings its link up.
    pub fn restart(&mut self, node: NodeId, cfg: PortConfig) -> Result<(), ConfigError> {
        self.nodes[node].agent = Agent::new(cfg, self.now)?;
        let mac = self.nodes[node].agent.mac();
        if let Some(m) = &mut self.nodes[node].measure {
            // All state lost: a new session, whose rounds are numbered afresh.
            let first_id = m.next_round_id().wrapping_add(0x8000);
            if let Ok(fresh) = Session::new(*m.config(), mac, first_id) {
                *m = fresh;
            }
        }
        self.nodes[node].scheduled = None;
        self.note(format!("{} restarted", self.nodes[node].name));
        self.set_node_link(node, true);
        Ok(())
    }

    fn segment_name(&self, seg: SegmentId) -> String {
        let names: Vec<&str> = self.segments[seg]
            .iter()
            .map(|n| self.nodes[*n].name.as_str())
            .collect();
        names.join("-")
    }

    /// Drains an agent's output: frames onto the wire, events into the log,
    /// its next deadline into the timer queue.
    fn after(&mut self, node: NodeId) {
        let now = self.now;
        let n = &mut self.nodes[node];
        if let Some(m) = &mut n.measure {
            m.follow(now, &n.agent);
        }
        while let Some(bytes) = self.next_frame(node) {
            self.stats.frames_sent += 1;
            if let Some(log) = &mut self.log {
                log.push(LogEntry::Sent {
                    at: now,
                    from: node,
                    summary: describe_frame(&bytes),
                });
            }
            if let Some(cap) = &mut self.capture {
                cap.push(Captured {
                    at: now,
                    from: node,
                    bytes: bytes.clone(),
                });
            }
            let Some(seg) = self.nodes[node].segment else {
                continue;
            };
            let peers: Vec<NodeId> = self.segments[seg]
                .iter()
                .copied()
                .filter(|n| *n != node)
                .collect();
            for to in peers {
                let path = self
                    .paths
                    .get(&(node, to))
                    .copied()
                    .unwrap_or(self.default_path);
                if path.loss > 0.0 && self.rng.gen::<f64>() < path.loss {
                    self.stats.frames_lost += 1;
                    if let Some(log) = &mut self.log {
                        log.push(LogEntry::Lost {
                            at: now,
                            from: node,
                            to,
                        });
                    }
                    continue;
                }
                let slot = InFlight {
                    to,
                    bytes: bytes.clone(),
                };
                let idx = match self.free_slots.pop() {
                    Some(i) => {
                        self.frame_slots[i] = Some(slot);
                        i
                    }
                    None => {
                        self.frame_slots.push(Some(slot));
                        self.frame_slots.len() - 1
                    }
                };
                self.seq += 1;
                self.frames.push(Reverse((now + path.delay, self.seq, idx)));
            }
        }
        while let Some(event) = self.nodes[node].agent.poll_event() {
            if let Some(log) = &mut self.log {
                log.push(LogEntry::Event {
                    at: now,
                    node,
                    event,
                });
            }
        }
        while let Some(event) = self.nodes[node]
            .measure
            .as_mut()
            .and_then(Session::poll_event)
        {
            if let Some(log) = &mut self.log {
                log.push(LogEntry::Measure {
                    at: now,
                    node,
                    event,
                });
            }
        }
        let agent_next = self.nodes[node].agent.poll_timeout();
        let measure_next = self.nodes[node]
            .measure
            .as_ref()
            .and_then(Session::poll_timeout);
        let next = match (agent_next, measure_next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
        .map(|t| t.max(now));
        if next != self.nodes[node].scheduled {
            self.nodes[node].scheduled = next;
            if let Some(t) = next {
                self.timers.push(Reverse((t, node)));
            }
        }
    }

    /// The node's next frame to send: the agent's, then the measurement session's. A
    /// measurement frame's transmit timestamp is the virtual clock, handed back at once
    /// (which may queue a follow-up).
    fn next_frame(&mut self, node: NodeId) -> Option<Vec<u8>> {
        let now = self.now;
        let n = &mut self.nodes[node];
        if let Some(bytes) = n.agent.poll_transmit() {
            return Some(bytes);
        }
        let m = n.measure.as_mut()?;
        let bytes = m.poll_transmit()?;
        m.handle_tx_timestamp(now, &bytes, picoseconds(now));
        Some(bytes)
    }

    /// The instant of the next thing to happen.
    fn next_instant(&mut self) -> Option<Instant> {
        // Drop stale timer entries so the peek is meaningful.
        while let Some(Reverse((t, node))) = self.timers.peek().copied() {
            if self.nodes[node].scheduled == Some(t) {
                break;
            }
            self.timers.pop();
        }
        let f = self.frames.peek().map(|Reverse((t, _, _))| *t);
        let t = self.timers.peek().map(|Reverse((t, _))| *t);
        match (f, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles everything due at the next instant, if it is not after `limit`.
    /// Returns false when nothing is left before `limit` (the clock then stands at `limit`).
    pub fn step(&mut self, limit: Instant) -> bool {
        let Some(t) = self.next_instant() else {
            self.now = self.now.max(limit);
            return false;
        };
        if t > limit {
            self.now = self.now.max(limit);
            return false;
        }
        self.now = t;
        // Frames first: a frame and a timer at the same instant see the frame delivered.
        if let Some(Reverse((ft, _, idx))) = self.frames.peek().copied() {
            if ft == t {
                self.frames.pop();
                if let Some(f) = self.frame_slots[idx].take() {
                    self.free_slots.push(idx);
                    self.stats.frames_delivered += 1;
                    let n = &mut self.nodes[f.to];
                    n.agent.handle_frame(t, &f.bytes);
                    if let Some(m) = &mut n.measure {
                        m.handle_frame(t, &f.bytes, picoseconds(t));
                    }
                    self.after(f.to);
                }
                return true;
            }
        }
        if let Some(Reverse((tt, node))) = self.timers.pop() {
            if self.nodes[node].scheduled == Some(tt) {
                self.nodes[node].scheduled = None;
                self.nodes[node].agent.handle_timeout(tt);
                if let Some(m) = &mut self.nodes[node].measure {
                    m.handle_timeout(tt);
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
}

/// The virtual clock as a measurement timestamp (picoseconds, modulo 2^64).
fn picoseconds(t: Instant) -> u64 {
    (t.since_epoch().as_nanos() as u64).wrapping_mul(1000)
}

//! A discrete-event simulator of nodes joined by links: the real node core
//! ([`lossless_node::Node`], what losslessd runs) on every node, a virtual clock,
//! per-direction delay and loss, a seeded random source.
//!
//! The shape is quinn-proto's test `Pair` generalised to N nodes: the simulator owns
//! every node, carries out its outputs as losslessd's runtime would (frames onto the
//! simulated wire, measurement frames timestamped with the virtual clock, the NIC
//! answered by a modelled driver ([`crate::nic`]), the state directory kept in
//! memory, the configuration file read from the text the lab wrote), delivers frames at
//! `now + delay` (or drops them with the path's loss probability) and wakes each node
//! at its own `poll_timeout()`. Nothing reads the wall clock, so a run is exactly
//! repeatable from its seed.
//!
//! Each node has one port, [`PORT`]; its settings are rendered into a configuration
//! file the node parses, so a change of configuration is a reload, as on a host.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::PathBuf;

use lossless_dcbx::{Agent, ConfigError, Duration, Event, Instant, PortConfig};
use lossless_headroom::session::{MeasureEvent, Session};
use lossless_node::config::{DaemonConfig, HeadroomSettings, PortSettings};
use lossless_node::link::{Link, LinkChange};
use lossless_node::node::{Identity, Node, Now, Output, PersistError, RequestId};
use lossless_node::port::Port;
use lossless_node::protocol::{DaemonEvent, ErrorKind, EventBody, Request, Response};
use lossless_node::state::PersistedState;
use lossless_node::timestamps::{Clock, Clocks};
use lossless_wire::MacAddr;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::describe::describe_frame;
use crate::nic::{Driver, Nic};

/// Index of a node in the simulator.
pub type NodeId = usize;
/// Index of a segment (a link, or a shared medium with more than two nodes).
pub type SegmentId = usize;

/// The interface name of every node's port.
pub const PORT: &str = "p0";
const IFINDEX: u32 = 1;

/// Delay and loss of one direction between two nodes.
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
    /// A node sent a frame (described for people).
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
    /// A node's DCBX agent reported an event.
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
    /// A node's own event (port, link, configuration, hardware, headroom).
    Node {
        at: Instant,
        node: NodeId,
        event: DaemonEvent,
    },
}

/// A frame as it crossed the wire, for captures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub at: Instant,
    pub from: NodeId,
    pub bytes: Vec<u8>,
}

struct SimNode {
    name: String,
    node: Node,
    mac: MacAddr,
    /// The port's settings as the lab last wrote them into the node's file.
    settings: PortSettings,
    /// The node's state directory.
    store: PersistedState,
    /// Persisting fails (a full disk) while set.
    persist_fails: bool,
    nic: Nic,
    /// The line rate the "kernel" reports, Mb/s.
    speed_mbps: Option<u64>,
    link_up: bool,
    segment: Option<SegmentId>,
    /// The deadline queued for this node in `timers` (older entries are stale).
    scheduled: Option<Instant>,
    /// Replies to requests, by id.
    replies: Vec<(RequestId, Response)>,
}

/// What travels on a segment.
#[derive(Debug, Clone, Copy)]
enum Delivery {
    /// An LLDPDU (or any frame of the port's packet socket).
    Frame,
    /// A measurement frame, sent at this virtual instant.
    Measure,
}

struct InFlight {
    to: NodeId,
    bytes: Vec<u8>,
    kind: Delivery,
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
    nodes: Vec<SimNode>,
    segments: Vec<Vec<NodeId>>,
    paths: HashMap<(NodeId, NodeId), PathProps>,
    default_path: PathProps,
    frames: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    frame_slots: Vec<Option<InFlight>>,
    free_slots: Vec<usize>,
    timers: BinaryHeap<Reverse<(Instant, NodeId)>>,
    seq: u64,
    next_request: RequestId,
    rng: SmallRng,
    log: Option<Vec<LogEntry>>,
    capture: Option<Vec<Captured>>,
    stats: SimStats,
}

/// The configuration file of a node whose port has `settings`.
fn config_text(settings: &PortSettings) -> String {
    format!("[ports.\"{PORT}\"]\n{}", settings.to_toml())
}

fn config_path(name: &str) -> PathBuf {
    PathBuf::from(format!("lab/{name}.toml"))
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
            next_request: 0,
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

    pub fn name(&self, node: NodeId) -> &str {
        &self.nodes[node].name
    }

    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The node core itself.
    pub fn node(&self, node: NodeId) -> &Node {
        &self.nodes[node].node
    }

    /// The node's port. Panics if the node refused its configuration (the lab only
    /// writes configurations it validated).
    pub fn port(&self, node: NodeId) -> &Port {
        match self.nodes[node].node.port(PORT) {
            Some(p) => p,
            None => panic!("node {} has no port {PORT}", self.nodes[node].name),
        }
    }

    /// The DCBX agent of the node's port.
    pub fn agent(&self, node: NodeId) -> &Agent {
        &self.port(node).agent
    }

    /// The node's NIC: its driver and what it was asked to program.
    pub fn nic(&self, node: NodeId) -> &Nic {
        &self.nodes[node].nic
    }

    /// The node's NIC, to set it up as another tool would have (entries, no trust
    /// table).
    pub fn nic_mut(&mut self, node: NodeId) -> &mut Nic {
        &mut self.nodes[node].nic
    }

    /// What the node's state directory holds.
    pub fn persisted(&self, node: NodeId) -> &PersistedState {
        &self.nodes[node].store
    }

    /// The node's Prometheus metrics now.
    pub fn metrics(&self, node: NodeId) -> String {
        self.nodes[node].node.render_metrics(self.clock(), None)
    }

    /// The settings of the node's port as written into its file.
    pub fn settings(&self, node: NodeId) -> &PortSettings {
        &self.nodes[node].settings
    }

    /// Adds a node whose one port runs `cfg` (link down, not on any segment). The port
    /// takes `cfg.mac`; nothing is programmed into its NIC (`apply = "none"`).
    pub fn add_agent(&mut self, name: &str, cfg: PortConfig) -> Result<NodeId, ConfigError> {
        let settings = PortSettings::from_port_config(&cfg);
        self.add_node(name, cfg.mac, settings, Driver::NoDcbnl)
    }

    /// Adds a node whose one port has `settings`, the MAC `mac` and a NIC with this
    /// driver (which the node programs when the port has `apply = "dcbnl"`).
    pub fn add_node(
        &mut self,
        name: &str,
        mac: MacAddr,
        settings: PortSettings,
        driver: Driver,
    ) -> Result<NodeId, ConfigError> {
        let config = Self::parse(name, mac, &settings)?;
        let store = PersistedState {
            boots: 0,
            ..PersistedState::default()
        };
        let node = Node::new(config, Self::identity(name), store.clone(), self.clock());
        self.nodes.push(SimNode {
            name: name.to_string(),
            node,
            mac,
            settings,
            store,
            persist_fails: false,
            nic: Nic::new(driver),
            speed_mbps: None,
            link_up: false,
            segment: None,
            scheduled: None,
            replies: Vec::new(),
        });
        let id = self.nodes.len() - 1;
        let now = self.clock();
        let link = self.link(id);
        self.nodes[id].node.handle_links(now, vec![link]);
        self.after(id);
        Ok(id)
    }

    fn identity(name: &str) -> Identity {
        Identity {
            config_path: Some(config_path(name)),
            cli_ports: Vec::new(),
            pid: 0,
        }
    }

    /// Checks the settings as the agent would, then parses the file they render to.
    fn parse(
        name: &str,
        mac: MacAddr,
        settings: &PortSettings,
    ) -> Result<DaemonConfig, ConfigError> {
        settings.port_config(mac).validate()?;
        DaemonConfig::parse(&config_text(settings), &config_path(name)).map_err(|e| {
            ConfigError::Value {
                path: "(rendered configuration)".into(),
                reason: e.to_string(),
            }
        })
    }

    fn link(&self, node: NodeId) -> Link {
        let n = &self.nodes[node];
        Link {
            ifindex: IFINDEX,
            name: PORT.to_string(),
            mac: Some(n.mac.0),
            admin_up: true,
            oper_up: n.link_up,
            carrier: n.link_up,
        }
    }

    /// The line rate the node's "kernel" reports for its port.
    pub fn set_speed(&mut self, node: NodeId, mbps: Option<u64>) {
        self.nodes[node].speed_mbps = mbps;
        let now = self.clock();
        self.nodes[node].node.handle_speed(now, IFINDEX, mbps);
        self.after(node);
    }

    /// Makes the node's state directory fail writes (true) or work again.
    pub fn set_persist_fails(&mut self, node: NodeId, fails: bool) {
        self.nodes[node].persist_fails = fails;
    }

    /// The node's adaptive-headroom settings (`[ports."p0".headroom]`); whether it
    /// measures is the port's `dcbx.headroom_measurement`, advertised in DCBX: it
    /// measures its link once the peer advertises it too. Timestamps are the virtual
    /// clock, so what it measures is exactly the paths' delays.
    pub fn set_headroom(
        &mut self,
        node: NodeId,
        settings: HeadroomSettings,
    ) -> Result<(), ConfigError> {
        let mut s = self.nodes[node].settings.clone();
        s.headroom = settings;
        self.write_settings(node, s)
    }

    /// The node's measurement session, if it runs one.
    pub fn measurement(&self, node: NodeId) -> Option<&Session> {
        self.nodes[node]
            .node
            .port(PORT)?
            .headroom
            .as_ref()
            .map(|h| &h.session)
    }

    /// A point-to-point link between two nodes (links stay down until `set_link`).
    pub fn connect(&mut self, a: NodeId, b: NodeId) -> SegmentId {
        let seg = self.segments.len();
        self.segments.push(vec![a, b]);
        self.nodes[a].segment = Some(seg);
        self.nodes[b].segment = Some(seg);
        seg
    }

    /// Puts another node on a segment: a shared medium (e.g. a hub, or a
    /// misconfigured bridge that forwards LLDP), i.e. a second neighbour.
    pub fn attach(&mut self, seg: SegmentId, node: NodeId) {
        if !self.segments[seg].contains(&node) {
            self.segments[seg].push(node);
        }
        self.nodes[node].segment = Some(seg);
    }

    /// Takes a node off its segment (its link goes down).
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

    /// Delay and loss in both directions between two nodes.
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

    /// Brings every node on a segment up (or down) at the current instant.
    pub fn set_link(&mut self, seg: SegmentId, up: bool) {
        self.note(format!(
            "link {} {}",
            self.segment_name(seg),
            if up { "up" } else { "down" }
        ));
        for node in self.segments[seg].clone() {
            self.set_node_link(node, up);
        }
    }

    /// One node's view of its link (e.g. it was unplugged).
    pub fn set_node_link(&mut self, node: NodeId, up: bool) {
        self.nodes[node].link_up = up;
        let now = self.clock();
        let link = self.link(node);
        self.nodes[node]
            .node
            .handle_link_change(now, LinkChange::New(link));
        self.after(node);
    }

    /// Changes the configuration of a node's port now: the lab rewrites the node's
    /// file and the node reloads it (as on SIGHUP). A bad one is refused and nothing
    /// changes.
    pub fn set_config(&mut self, node: NodeId, cfg: PortConfig) -> Result<(), ConfigError> {
        let mut s = PortSettings::from_port_config(&cfg);
        let old = &self.nodes[node].settings;
        s.apply = old.apply;
        s.headroom = old.headroom;
        if cfg.mac != self.nodes[node].mac {
            self.nodes[node].mac = cfg.mac;
            let now = self.clock();
            let link = self.link(node);
            self.nodes[node]
                .node
                .handle_link_change(now, LinkChange::New(link));
        }
        self.write_settings(node, s)?;
        self.note(format!("config change on {}", self.nodes[node].name));
        Ok(())
    }

    /// Writes `settings` into the node's file and has it reloaded.
    pub fn write_settings(
        &mut self,
        node: NodeId,
        settings: PortSettings,
    ) -> Result<(), ConfigError> {
        let mac = self.nodes[node].mac;
        Self::parse(&self.nodes[node].name, mac, &settings)?;
        self.nodes[node].settings = settings;
        let now = self.clock();
        self.nodes[node].node.handle_reload_signal(now);
        self.after(node);
        Ok(())
    }

    /// Sends a control request to a node, as `lossless` would, and returns its answer
    /// (what it waited for, such as persisting, is carried out meanwhile).
    pub fn request(&mut self, node: NodeId, req: Request) -> Response {
        self.next_request += 1;
        let id = self.next_request;
        let now = self.clock();
        self.nodes[node].node.handle_request(now, id, req);
        self.after(node);
        let replies = &mut self.nodes[node].replies;
        match replies.iter().position(|(r, _)| *r == id) {
            Some(i) => replies.remove(i).1,
            None => Response::err(ErrorKind::Unavailable, "no reply"),
        }
    }

    /// Replaces a node by a fresh one with `cfg` (a crash and restart: no shutdown
    /// frame, all memory lost, the state directory kept and the start counted) and
    /// brings its link up.
    pub fn restart(&mut self, node: NodeId, cfg: PortConfig) -> Result<(), ConfigError> {
        let mut settings = PortSettings::from_port_config(&cfg);
        let old = &self.nodes[node].settings;
        settings.apply = old.apply;
        settings.headroom = old.headroom;
        let config = Self::parse(&self.nodes[node].name, cfg.mac, &settings)?;
        let n = &mut self.nodes[node];
        n.store.boots = n.store.boots.wrapping_add(1);
        n.mac = cfg.mac;
        n.settings = settings;
        n.node = Node::new(
            config,
            Self::identity(&n.name),
            n.store.clone(),
            Now {
                mono: self.now,
                unix: self.now.since_epoch().as_secs_f64(),
            },
        );
        n.scheduled = None;
        n.link_up = true;
        let now = self.clock();
        let link = self.link(node);
        self.nodes[node].node.handle_links(now, vec![link]);
        self.note(format!("{} restarted", self.nodes[node].name));
        self.after(node);
        Ok(())
    }

    /// Puts a frame the lab built onto `from`'s segment now, as if `from` had sent
    /// it (logged, captured, delayed and lost like any other): a scripted peer's
    /// LLDPDU or a crafted one ([`crate::scripted`]). The node core is not asked.
    pub fn send_frame(&mut self, from: NodeId, bytes: Vec<u8>) {
        self.transmit(from, bytes, Delivery::Frame);
    }

    fn segment_name(&self, seg: SegmentId) -> String {
        let names: Vec<&str> = self.segments[seg]
            .iter()
            .map(|n| self.nodes[*n].name.as_str())
            .collect();
        names.join("-")
    }

    /// Carries out a node's outputs (frames onto the wire, the NIC, the state
    /// directory, its file), logs its events, queues its next deadline.
    fn after(&mut self, node: NodeId) {
        while let Some(out) = self.nodes[node].node.poll_output() {
            self.execute(node, out);
        }
        let now = self.now;
        let next = self.nodes[node].node.poll_timeout().map(|t| t.max(now));
        if next != self.nodes[node].scheduled {
            self.nodes[node].scheduled = next;
            if let Some(t) = next {
                self.timers.push(Reverse((t, node)));
            }
        }
    }

    fn execute(&mut self, node: NodeId, out: Output) {
        let now = self.clock();
        let out = match out {
            Output::Send { frame, .. } => return self.transmit(node, frame, Delivery::Frame),
            Output::SendMeasure { frame, .. } => {
                // The kernel's transmit timestamp: now, on the virtual clock.
                let ts = picoseconds(now.mono);
                self.nodes[node]
                    .node
                    .handle_measure_tx_timestamp(now, IFINDEX, &frame, ts);
                return self.transmit(node, frame, Delivery::Measure);
            }
            Output::ReadLink { frame, .. } => {
                let link = self.link(node);
                self.nodes[node]
                    .node
                    .handle_link_read(now, Some(link), &frame);
                return;
            }
            Output::Event(record) => return self.log_event(node, record.event),
            other => other,
        };
        let n = &mut self.nodes[node];
        match out {
            Output::OpenMeasure { .. } => n.node.handle_measure_opened(
                IFINDEX,
                Ok(Clocks {
                    rx: Clock::Software,
                    tx: Clock::Software,
                }),
            ),
            Output::ReadSpeed { .. } => {
                let mbps = n.speed_mbps;
                n.node.handle_speed(now, IFINDEX, mbps);
            }
            Output::Probe { .. } => {
                let r = n.nic.probe();
                n.node.handle_probe(IFINDEX, r);
            }
            Output::ProgramCee { pfc, pg, .. } => {
                let r = n.nic.program_cee(pfc, pg);
                n.node.handle_programmed(now, IFINDEX, r);
            }
            Output::ProgramIeee { program, .. } => {
                let r = n.nic.program_ieee(&program);
                n.node.handle_ieee_programmed(now, IFINDEX, r);
            }
            Output::SetDcbxMode { version, .. } => {
                let r = n.nic.set_dcbx(version);
                n.node.handle_dcbx_mode_set(now, IFINDEX, version, r);
            }
            Output::ApplyHeadroom {
                pfc_enabled,
                pfc_delay_bits,
                read_buffer,
                ..
            } => {
                let r = n.nic.set_pfc_delay(pfc_enabled, pfc_delay_bits);
                let ieee = read_buffer.then(|| n.nic.read());
                n.node
                    .handle_headroom_applied(now, IFINDEX, pfc_delay_bits, r, ieee);
            }
            Output::SetBuffer { buffer, .. } => {
                let r = n.nic.set_buffer(buffer).and_then(|()| n.nic.read());
                n.node.handle_buffer_written(now, IFINDEX, r);
            }
            Output::Persist { state } => {
                let r = if n.persist_fails {
                    Err(PersistError(
                        "lab: the state directory refuses writes".into(),
                    ))
                } else {
                    n.store = state;
                    Ok(())
                };
                n.node.handle_persisted(now, r);
            }
            Output::ReadConfig => {
                let text = config_text(&n.settings);
                n.node.handle_config(now, Ok(Some(text)));
            }
            Output::StartRelay(_) => n.node.handle_relay_started(now, Ok(())),
            Output::ReadRelay { id } => n.node.handle_relay_status(now, id, None),
            Output::Reply { id, response } => n.replies.push((id, response)),
            Output::Send { .. }
            | Output::SendMeasure { .. }
            | Output::ReadLink { .. }
            | Output::Event(_)
            | Output::Open { .. }
            | Output::Close { .. }
            | Output::CloseMeasure { .. }
            | Output::StopRelay => {}
        }
    }

    fn log_event(&mut self, node: NodeId, event: EventBody) {
        let at = self.now;
        let entry = match event {
            EventBody::Agent(event) => LogEntry::Event { at, node, event },
            EventBody::Daemon(DaemonEvent::HeadroomMeasured { result }) => LogEntry::Measure {
                at,
                node,
                event: result,
            },
            EventBody::Daemon(event) => LogEntry::Node { at, node, event },
        };
        if let Some(log) = &mut self.log {
            log.push(entry);
        }
    }

    /// Puts a node's frame on its segment: to every other node there, with the path's
    /// delay, or lost.
    fn transmit(&mut self, node: NodeId, bytes: Vec<u8>, kind: Delivery) {
        let now = self.now;
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
            return;
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
                kind,
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
        let now = self.clock();
        // Frames first: a frame and a timer at the same instant see the frame delivered.
        if let Some(Reverse((ft, _, idx))) = self.frames.peek().copied() {
            if ft == t {
                self.frames.pop();
                if let Some(f) = self.frame_slots[idx].take() {
                    self.free_slots.push(idx);
                    self.stats.frames_delivered += 1;
                    let n = &mut self.nodes[f.to].node;
                    match f.kind {
                        Delivery::Frame => n.handle_frame(now, IFINDEX, &f.bytes),
                        Delivery::Measure => {
                            n.handle_measure_frame(now, IFINDEX, &f.bytes, Some(picoseconds(t)))
                        }
                    }
                    self.after(f.to);
                }
                return true;
            }
        }
        if let Some(Reverse((tt, node))) = self.timers.pop() {
            if self.nodes[node].scheduled == Some(tt) {
                self.nodes[node].scheduled = None;
                self.nodes[node].node.handle_timeout(now);
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

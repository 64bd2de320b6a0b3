//! The node core: which interfaces are ports, their agents and measurements, runtime
//! changes, the relay's settings, events. It owns no socket, reads no clock and touches
//! no file: the caller feeds it link changes, frames, timeouts, requests and the
//! answers to what it asked for, with the current time, and carries out its
//! [`Output`]s.
//!
//! One input, one path: a frame goes [`Node::handle_frame`] → the port's agent →
//! [`Node::after`] (frames out, events published, hardware programmed); a link change
//! [`Node::handle_link_change`] → add, update or remove the port → `after`; a timer
//! [`Node::handle_timeout`] → the due ports → `after`; a control request
//! [`Node::handle_request`] → [`requests`] → a [`Output::Reply`] (at once, or after
//! the persistence or the configuration read it waits for). Hardware, measurement and
//! relay answers come back through the `handle_*` methods of [`hardware`],
//! [`measure`] and [`relay`].

mod errors;
pub use errors::{
    ChangeError, MeasureOpenError, NoSuchPort, RelayStartError, ReloadError, SetError,
};
mod frames;
pub use frames::OWN_SOCKET_RETRY;
mod hardware;
mod host;
mod links;
mod log;
mod looped;
mod measure;
mod nic;
mod pfc;
mod ports;
pub use ports::PortId;
mod program;
pub use crate::port::PROGRAM_SETTLE;
mod relay;
mod reload;
mod requests;
mod roce;
mod shadow;
mod shutdown;
mod state_dir;
pub use crate::state::StateDirHealth;
pub use state_dir::STATE_RECHECK;
mod timers;

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;

use lossless_dcbx::{Event, FeatureId, Instant};
use lossless_relay::RelaySection;
use tracing::{info, warn};

use crate::config::{DaemonConfig, PortSettings};
use crate::hardware::{DcbBuffer, IeeeProgram};
use crate::link::Link;
use crate::metrics::Metrics;
use crate::port::Port;
use crate::protocol::{DaemonEvent, EventBody, EventRecord, Request, Response};
use crate::state::{PersistedState, PortOverrides};
use crate::timestamps::TimestampMode;
use lossless_wire::cee::{PfcConfig, PgConfig};

pub use crate::state::PersistError;

/// The current time on both clocks: the monotonic timeline the agents run
/// on, and wall-clock seconds for event records.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    pub mono: Instant,
    pub unix: f64,
}

/// Who asked: the caller's handle for a control request, echoed in its reply.
pub type RequestId = u64;

/// Work for the caller.
#[derive(Debug, Clone)]
pub enum Output {
    /// Start receiving and sending on a new port. The runtime reads every port's
    /// frames from one shared packet socket per EtherType (the kernel's cost of a
    /// link event grows with the packet sockets of the namespace) until
    /// [`Output::ReceiveAlone`].
    Open { ifindex: u32, name: String },
    /// A port's receive budget was spent (a flood on the link?): from now on read
    /// its frames from a packet socket of its own, so what the kernel holds or drops
    /// for it is its own and the shared socket stays free for the other ports. Once
    /// per port, for as long as the port exists.
    ReceiveAlone { ifindex: u32 },
    /// A frame arrived on a port whose link looks down: read the link's state from
    /// the kernel now and answer with [`Node::handle_link_read`], handing the frame back.
    ReadLink { ifindex: u32, frame: Vec<u8> },
    /// Close a port's sockets (after its last frame was sent).
    Close { ifindex: u32 },
    /// Send a frame on a port.
    Send { ifindex: u32, frame: Vec<u8> },
    /// Probe dcbnl on a port configured with `apply = "dcbnl"`; answer with
    /// [`Node::handle_probe`].
    Probe { ifindex: u32, name: String },
    /// Program the operational CEE configuration through dcbnl (only for ports with
    /// `apply = "dcbnl"` whose NIC answered the probe); None = feature off. Answer with
    /// [`Node::handle_programmed`].
    ProgramCee {
        ifindex: u32,
        name: String,
        pfc: Option<PfcConfig>,
        pg: Option<PgConfig>,
    },
    /// Program IEEE 802.1Qaz (ETS, PFC keeping the delay allowance, the APP entries'
    /// change, the trust order); answer with [`Node::handle_ieee_programmed`].
    ProgramIeee {
        ifindex: u32,
        name: String,
        program: Box<IeeeProgram>,
    },
    /// Read what the NIC holds (`DCB_CMD_IEEE_GET`: ETS, PFC, the APP table, the
    /// trust order, the buffer); answer with [`Node::handle_nic_read`].
    ReadNic {
        ifindex: u32,
        name: String,
        /// The port runs CEE DCBX: read its objects too.
        cee: bool,
    },
    /// Tell the NIC which DCBX version the host runs (`DCB_CMD_SDCBX`, HOST and
    /// VER_IEEE or VER_CEE); answer with [`Node::handle_dcbx_mode_set`].
    SetDcbxMode {
        ifindex: u32,
        name: String,
        version: lossless_dcbx::Version,
    },
    /// Open the timestamping measurement socket of a port that measures its link;
    /// answer with [`Node::handle_measure_opened`].
    OpenMeasure {
        ifindex: u32,
        name: String,
        timestamps: TimestampMode,
    },
    /// Close it (measurement turned off; `Close` closes it too).
    CloseMeasure { ifindex: u32 },
    /// Send a measurement frame; its transmit timestamp comes back through
    /// [`Node::handle_measure_tx_timestamp`].
    SendMeasure { ifindex: u32, frame: Vec<u8> },
    /// Read the line rate the kernel reports; answer with [`Node::handle_speed`].
    ReadSpeed { ifindex: u32, name: String },
    /// Program the headroom through dcbnl: IEEE PFC with the delay allowance; then,
    /// when `read_buffer`, read the IEEE configuration (`DCB_CMD_IEEE_GET`) for the DCB
    /// buffer. Answer with [`Node::handle_headroom_applied`].
    ApplyHeadroom {
        ifindex: u32,
        name: String,
        pfc_enabled: u8,
        pfc_delay_bits: u16,
        read_buffer: bool,
    },
    /// Write the DCB buffer (`DCB_CMD_IEEE_SET`), then read the IEEE configuration
    /// back; answer with [`Node::handle_buffer_written`].
    SetBuffer {
        ifindex: u32,
        name: String,
        buffer: DcbBuffer,
    },
    /// Replace the persisted state (atomically and durably); answer with
    /// [`Node::handle_persisted`]. Nothing it stands for runs before the answer.
    Persist { state: PersistedState },
    /// Read the configuration file again; answer with [`Node::handle_config`].
    ReadConfig,
    /// Start the relay's data path for this section (stopping any running one first);
    /// answer with [`Node::handle_relay_started`].
    StartRelay(Box<RelaySection>),
    /// Stop the relay's data path.
    StopRelay,
    /// Read the running relay's status; answer with [`Node::handle_relay_status`].
    ReadRelay { id: RequestId },
    /// Read the port's PFC counters (dcbnl's IEEE PFC object, and the driver's
    /// ethtool statistics where it has them); answer with [`Node::handle_pfc_counters`].
    ReadPfc { ifindex: u32, name: String },
    /// Write these RoCE host settings (each in its own request, none when empty), then
    /// read the port's RoCE host settings; answer with [`Node::handle_roce_host`].
    RoceHost {
        ifindex: u32,
        name: String,
        write: Vec<crate::config::RoceSetting>,
    },
    /// The answer to a control request.
    Reply { id: RequestId, response: Response },
    /// An event, for `events --follow` subscribers (one JSON line each).
    Event(EventRecord),
}

/// Events kept for `events` without `--follow`.
const HISTORY: usize = 1024;

/// The room for outputs kept once they are all out (a turn of the loop with a
/// few ports' work fits; a burst's room is given back).
const OUTPUTS_KEPT: usize = 256;

/// Who the node is, for `status`.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// The configuration file (None: running on the built-in defaults).
    pub config_path: Option<PathBuf>,
    /// Interfaces named on the command line: ports whatever the file says.
    pub cli_ports: Vec<String>,
    pub pid: u32,
}

pub struct Node {
    config: DaemonConfig,
    identity: Identity,
    persisted: PersistedState,
    /// Every link the kernel reported, by ifindex.
    links: BTreeMap<u32, Link>,
    ports: ports::Ports,
    by_index: HashMap<u32, PortId>,
    outputs: VecDeque<Output>,
    history: VecDeque<EventRecord>,
    metrics: Metrics,
    started: Instant,
    requests: requests::Requests,
    relay: relay::RelayControl,
    /// What the runtime said the host is (nothing until it does).
    host: crate::identity::Host,
    /// The kernel's counters of the packet sockets shared by the ports.
    shared_socket: crate::protocol::SharedSocketCounters,
    /// Every port's MSAP, to discard our own LLDPDUs coming back.
    own_msaps: looped::OwnMsaps,
    /// How the state directory stands.
    state_dir: StateDirHealth,
}

impl Node {
    /// A node with no port yet. `persisted` is what the state directory holds, with
    /// this start already counted in `boots`. The relay's data path is asked for at
    /// once when the configuration has a `[relay]` section.
    pub fn new(
        config: DaemonConfig,
        identity: Identity,
        persisted: PersistedState,
        now: Now,
    ) -> Node {
        let mut node = Node {
            config,
            identity,
            persisted,
            links: BTreeMap::new(),
            ports: ports::Ports::default(),
            by_index: HashMap::new(),
            outputs: VecDeque::new(),
            history: VecDeque::new(),
            metrics: Metrics::default(),
            started: now.mono,
            requests: requests::Requests::default(),
            relay: relay::RelayControl::default(),
            host: crate::identity::Host::default(),
            shared_socket: Default::default(),
            own_msaps: looped::OwnMsaps::default(),
            state_dir: StateDirHealth::default(),
        };
        node.sync_relay();
        node
    }

    pub fn config(&self) -> &DaemonConfig {
        &self.config
    }

    pub fn ports(&self) -> impl Iterator<Item = &Port> {
        self.ports.values()
    }

    pub fn port(&self, name: &str) -> Option<&Port> {
        self.ports.by_name(name)
    }

    pub fn boots(&self) -> u32 {
        self.persisted.boots
    }

    pub fn persisted(&self) -> &PersistedState {
        &self.persisted
    }

    /// Each life of the daemon runs its SeqNos in its own range of 65,536, so
    /// a restarted daemon's first SeqNo is new to a peer that remembers the
    /// previous life (see docs/daemon.md, "Restarts").
    fn seq_base(&self) -> u32 {
        (self.persisted.boots & 0xffff) << 16
    }

    /// The next output; None once they are all out, and then the room a burst took
    /// (every port's link-up at once: thousands of outputs) is given back.
    pub fn poll_output(&mut self) -> Option<Output> {
        let out = self.outputs.pop_front();
        if out.is_none() && self.outputs.capacity() > OUTPUTS_KEPT {
            self.outputs.shrink_to(OUTPUTS_KEPT);
        }
        out
    }

    /// When [`Node::handle_timeout`] is due next.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        let ports = self.ports.poll_timeout();
        match (ports, self.sighup_due()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn selected(&self, name: &str) -> bool {
        self.identity.cli_ports.iter().any(|p| p == name) || self.config.selects(name)
    }

    /// The `[ports."..."]` sections that select no port: they match no interface
    /// here (every interface a section matches is a port).
    pub fn unmatched_patterns(&self) -> Vec<crate::config::unmatched::Unmatched> {
        let names: Vec<&str> = self.ports.keys().map(String::as_str).collect();
        crate::config::unmatched::unmatched_patterns(&self.config, &names)
    }

    /// The interfaces named on the command line that do not exist (yet).
    pub fn missing_cli_ports(&self) -> Vec<&str> {
        self.identity
            .cli_ports
            .iter()
            .filter(|n| !self.links.values().any(|l| &l.name == *n))
            .map(String::as_str)
            .collect()
    }

    /// A port's settings: the file's, with its persisted runtime overrides on top.
    fn effective(&self, name: &str) -> (PortSettings, Option<&PortOverrides>) {
        let mut settings = self.config.port(name);
        let overrides = self.persisted.ports.get(name);
        if let Some(o) = overrides {
            o.apply(&mut settings);
        }
        (settings, overrides)
    }

    /// The port on `ifindex` (where an answer of the runtime comes in).
    fn id_of(&self, ifindex: u32) -> Option<PortId> {
        self.by_index.get(&ifindex).copied()
    }

    /// A control request; its answer is an [`Output::Reply`] with `id`.
    pub fn handle_request(&mut self, now: Now, id: RequestId, req: Request) {
        requests::handle(self, now, id, req);
    }

    fn reply(&mut self, id: RequestId, response: Response) {
        self.outputs.push_back(Output::Reply { id, response });
    }

    /// Publishes an event: kept for `events`, streamed to `events --follow`.
    fn publish(&mut self, now: Now, port: &str, event: EventBody) {
        let record = EventRecord {
            time: now.unix,
            port: port.to_string(),
            event,
        };
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(record.clone());
        self.outputs.push_back(Output::Event(record));
    }

    /// Drains what a port's agent produced after an input: its frames go out, its
    /// events are published, a changed operational configuration is programmed.
    fn after(&mut self, now: Now, id: PortId) {
        self.sync_pfc(now, id);
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let ifindex = port.ifindex;
        // Whatever changed the port may have changed its MSAP (a new MAC, a reload).
        self.own_msaps.set(ifindex, port.agent.config());
        let drained = port.drain_agent(now.mono);
        for frame in drained.frames {
            self.outputs.push_back(Output::Send { ifindex, frame });
        }
        // A peer that keeps changing what the port runs: counted, and summarised
        // rather than logged and kept event by event while it flaps.
        let mut notes = Vec::new();
        let hold = port.nic_hold();
        port.damping.roll(now.mono, hold, &mut notes);
        if drained.events.iter().any(crate::damping::is_change) {
            port.damping.change(now.mono, hold, &mut notes);
        }
        let flapping = port.damping.flapping();
        let hold_ms = port.settings.nic_hold_ms;
        // The name, for what goes out: logs, events, metrics.
        let name = port.name.clone();
        let name = name.as_str();
        for note in notes {
            self.flap_note(now, name, hold_ms, note);
        }
        if let Some(took) = drained.converged_in {
            let ms = log::round2(took.as_secs_f64() * 1e3);
            if !flapping {
                info!(port = %name, ms, "negotiation converged");
            }
            self.metrics.observe_convergence(took);
        }
        for e in &drained.events {
            self.metrics.count_event(name, e);
            if flapping && crate::damping::is_churn(e) {
                if let Some(port) = self.ports.get_mut(id) {
                    port.damping.suppress();
                }
                continue;
            }
            log::event(name, &drained.peer, e);
            self.publish(now, name, EventBody::Agent(e.clone()));
        }
        // Other PFC priorities: other buffers hold lossless traffic.
        let pfc_changed = drained
            .events
            .iter()
            .any(|e| matches!(e, Event::OperChanged { feature, .. } if *feature == FeatureId::Pfc));
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        // Only a NIC that answered the dcbnl probe is programmed.
        let outs = program::outputs(port, now.mono, &drained.events, false);
        self.outputs.extend(outs);
        if pfc_changed {
            if let Some(out) = measure::apply_headroom(port) {
                self.outputs.push_back(out);
            }
        }
        self.after_headroom(now, id);
    }

    /// Logs and publishes what the flapping watch noted on a port.
    fn flap_note(&mut self, now: Now, name: &str, hold_ms: u32, note: crate::damping::FlapNote) {
        use crate::damping::{FlapNote, FLAP_WINDOW};
        let window_s = FLAP_WINDOW.as_secs();
        let ev = match note {
            FlapNote::Started { changes } => {
                warn!(port = %name, changes, window_s, nic_hold_ms = hold_ms,
                    "the DCBX peer is flapping: {changes} changes in the last {window_s} s; \
                     the NIC is programmed at most every {hold_ms} ms and its events are \
                     summarised");
                DaemonEvent::Flapping {
                    active: true,
                    changes,
                    window_s,
                    suppressed: 0,
                }
            }
            FlapNote::Summary {
                changes,
                suppressed,
            } => {
                warn!(port = %name, changes, window_s, suppressed,
                    "the DCBX peer is flapping: {changes} changes in the last {window_s} s \
                     ({suppressed} events not logged)");
                DaemonEvent::Flapping {
                    active: true,
                    changes,
                    window_s,
                    suppressed,
                }
            }
            FlapNote::Cleared => {
                info!(port = %name, window_s, "the DCBX peer no longer flaps: no change for \
                    {} s", window_s * u64::from(crate::damping::FLAP_QUIET_WINDOWS));
                DaemonEvent::Flapping {
                    active: false,
                    changes: 0,
                    window_s,
                    suppressed: 0,
                }
            }
        };
        self.publish(now, name, EventBody::Daemon(ev));
    }

    /// Prometheus text for every port, and the relay's series when `relay` is its
    /// current status.
    pub fn render_metrics(&self, now: Now, relay: Option<&crate::relay::RelayShow>) -> String {
        let mut text = self
            .metrics
            .render(self.ports.values(), now.mono - self.started);
        crate::metrics::shared_socket(&mut text, &self.shared_socket);
        let pfc: Vec<(&str, &crate::pfc::PortPfc)> = self
            .ports
            .values()
            .map(|p| (p.name.as_str(), &p.pfc))
            .collect();
        crate::pfc::metrics::render(&mut text, &pfc);
        crate::exposition::header(
            &mut text,
            "lossless_config_refused",
            "1 when the configuration file was refused at its last reload (the one before \
             it runs), else 0.",
            "gauge",
        );
        text.push_str(&format!(
            "lossless_config_refused {}\n",
            u8::from(self.requests.config_refused.is_some())
        ));
        state_dir::render_metrics(&self.state_dir, &mut text);
        if let Some(r) = relay {
            crate::relay_metrics::render(r, &mut text);
        }
        text
    }
}

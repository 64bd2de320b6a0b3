//! The daemon's core: which interfaces are ports, their agents, runtime
//! changes, persistence, events. It owns no socket and reads no clock: the
//! runtime feeds it link changes, frames, timeouts and requests with the
//! current time and carries out the [`Output`]s (open a port's socket, send a
//! frame, program the NIC, publish an event).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use lossless_dcbx::{Event, FeatureAdmin, FeatureId, Instant};
use lossless_sys::link::{LinkEvent, LinkInfo};
use lossless_wire::cee::{PfcConfig, PgConfig, PriorityMap};
use lossless_wire::MacAddr;
use serde_json::json;
use tracing::{info, warn};

use crate::config::{Apply, DaemonConfig, DaemonSettings, PortSettings};
use crate::headroom::{pfc_delay_bits, Change, HeadroomHardware, PortHeadroom};
use crate::metrics::Metrics;
use crate::port::{sources, Port};
use crate::protocol::{
    DaemonEvent, DaemonInfo, ErrorKind, EventBody, EventRecord, FeatureChange, FeatureName,
    Hardware, ReloadResult, Request, Response, Source, StatusResult,
};
use crate::state::{PersistedState, PortOverrides, StateDir};
use lossless_sys::dcbnl::{DcbBuffer, IeeeConfig};
use lossless_sys::timestamp::{Clocks, TimestampMode};

/// The current time on both clocks: the monotonic timeline the agents run
/// on, and wall-clock seconds for event records.
#[derive(Debug, Clone, Copy)]
pub struct Now {
    pub mono: Instant,
    pub unix: f64,
}

/// Work for the runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Open the packet socket of a new port.
    Open {
        ifindex: u32,
        name: String,
    },
    /// A frame arrived on a port whose link looks down: read the link's
    /// state from the kernel now and call [`Daemon::link_checked`].
    CheckLink {
        ifindex: u32,
        frame: Vec<u8>,
    },
    /// Close a port's socket (after its last frame was sent).
    Close {
        ifindex: u32,
    },
    Send {
        ifindex: u32,
        frame: Vec<u8>,
    },
    /// Probe dcbnl on a port configured with `apply = "dcbnl"`.
    Probe {
        ifindex: u32,
        name: String,
    },
    /// Program the operational configuration through dcbnl (only for ports
    /// with `apply = "dcbnl"` whose NIC answered the probe). None = feature off.
    Apply {
        ifindex: u32,
        name: String,
        pfc: Option<PfcConfig>,
        pg: Option<PgConfig>,
    },
    /// Open the timestamping measurement socket of a port that measures its link.
    OpenMeasure {
        ifindex: u32,
        name: String,
        timestamps: TimestampMode,
    },
    /// Close it (measurement turned off; `Close` closes it too).
    CloseMeasure {
        ifindex: u32,
    },
    /// Send a measurement frame; its transmit timestamp comes back through
    /// [`Daemon::measure_tx_timestamp`].
    SendMeasure {
        ifindex: u32,
        frame: Vec<u8>,
    },
    /// Read the line rate the kernel reports and call [`Daemon::speed_read`].
    ReadSpeed {
        ifindex: u32,
        name: String,
    },
    /// Program the headroom through dcbnl: IEEE PFC with the delay allowance; then,
    /// when `read_buffer`, read the IEEE configuration (`DCB_CMD_IEEE_GET`) for the
    /// DCB buffer. Answer with [`Daemon::headroom_applied`].
    ApplyHeadroom {
        ifindex: u32,
        name: String,
        pfc_enabled: u8,
        pfc_delay_bits: u16,
        read_buffer: bool,
    },
    /// Write the DCB buffer (`DCB_CMD_IEEE_SET`), then read the IEEE configuration
    /// back; answer with [`Daemon::buffer_written`].
    SetBuffer {
        ifindex: u32,
        name: String,
        buffer: DcbBuffer,
    },
    /// An event line for `events --follow` subscribers.
    Event(String),
}

/// Events kept for `events` without `--follow`.
const HISTORY: usize = 1024;

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("state directory {path}: {source}")]
    StateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    State(#[from] crate::state::StateError),
}

pub struct Daemon {
    config: DaemonConfig,
    config_path: Option<PathBuf>,
    /// Interfaces named on the command line: ports whatever the file says.
    cli_ports: Vec<String>,
    state: StateDir,
    persisted: PersistedState,
    /// Every link the kernel reported, by ifindex.
    links: BTreeMap<u32, LinkInfo>,
    ports: BTreeMap<String, Port>,
    by_index: HashMap<u32, String>,
    outputs: VecDeque<Output>,
    history: VecDeque<String>,
    metrics: Metrics,
    started: Instant,
    pid: u32,
}

impl Daemon {
    /// Opens the state directory and counts this start.
    pub fn new(
        config: DaemonConfig,
        config_path: Option<PathBuf>,
        cli_ports: Vec<String>,
        pid: u32,
        now: Now,
    ) -> Result<Daemon, StartError> {
        let dir = &config.daemon.state_dir;
        let state = StateDir::open(dir).map_err(|source| StartError::StateDir {
            path: dir.clone(),
            source,
        })?;
        let mut persisted = state.load()?;
        persisted.boots = persisted.boots.wrapping_add(1);
        state.save(&persisted)?;
        Ok(Daemon {
            config,
            config_path,
            cli_ports,
            state,
            persisted,
            links: BTreeMap::new(),
            ports: BTreeMap::new(),
            by_index: HashMap::new(),
            outputs: VecDeque::new(),
            history: VecDeque::new(),
            metrics: Metrics::default(),
            started: now.mono,
            pid,
        })
    }

    pub fn config(&self) -> &DaemonConfig {
        &self.config
    }

    pub fn ports(&self) -> impl Iterator<Item = &Port> {
        self.ports.values()
    }

    pub fn boots(&self) -> u32 {
        self.persisted.boots
    }

    /// Each life of the daemon runs its SeqNos in its own range of 65,536, so
    /// a restarted daemon's first SeqNo is new to a peer that remembers the
    /// previous life (see docs/daemon.md, "Restarts").
    fn seq_base(&self) -> u32 {
        (self.persisted.boots & 0xffff) << 16
    }

    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When `timeout` is due next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.ports.values().filter_map(port_timeout).min()
    }

    fn selected(&self, name: &str) -> bool {
        self.cli_ports.iter().any(|p| p == name) || self.config.selects(name)
    }

    /// The interfaces named on the command line that do not exist (yet).
    pub fn missing_cli_ports(&self) -> Vec<&str> {
        self.cli_ports
            .iter()
            .filter(|n| !self.links.values().any(|l| &l.name == *n))
            .map(String::as_str)
            .collect()
    }

    fn effective(&self, name: &str) -> (PortSettings, Option<&PortOverrides>) {
        let mut settings = self.config.port(name);
        let overrides = self.persisted.ports.get(name);
        if let Some(o) = overrides {
            o.apply(&mut settings);
        }
        (settings, overrides)
    }

    // ---- links ----------------------------------------------------------

    /// A full link dump (at start, or after a netlink overrun).
    pub fn links(&mut self, now: Now, links: Vec<LinkInfo>) {
        let present: HashMap<u32, ()> = links.iter().map(|l| (l.ifindex, ())).collect();
        let gone: Vec<u32> = self
            .links
            .keys()
            .filter(|i| !present.contains_key(i))
            .copied()
            .collect();
        for ifindex in gone {
            let name = self.links.get(&ifindex).map(|l| l.name.clone());
            self.link_event(
                now,
                LinkEvent::Del {
                    ifindex,
                    name: name.unwrap_or_default(),
                },
            );
        }
        for l in links {
            self.link_event(now, LinkEvent::New(l));
        }
    }

    pub fn link_event(&mut self, now: Now, ev: LinkEvent) {
        match ev {
            LinkEvent::New(info) => {
                // A rename looks like a new link with a known ifindex.
                if let Some(old) = self.by_index.get(&info.ifindex) {
                    if *old != info.name {
                        let old = old.clone();
                        self.remove_port(now, &old, false);
                    }
                }
                self.links.insert(info.ifindex, info.clone());
                if self.ports.contains_key(&info.name) {
                    self.update_port_link(now, &info);
                } else if self.selected(&info.name) {
                    self.add_port(now, &info);
                }
            }
            LinkEvent::Del { ifindex, .. } => {
                self.links.remove(&ifindex);
                if let Some(name) = self.by_index.get(&ifindex).cloned() {
                    // The interface is gone: nothing can be sent on it.
                    self.remove_port(now, &name, false);
                }
            }
        }
    }

    fn add_port(&mut self, now: Now, info: &LinkInfo) {
        let Some(mac) = info.mac else {
            warn!(port = %info.name, "no MAC address: not an Ethernet interface, skipped");
            return;
        };
        let (settings, overrides) = self.effective(&info.name);
        let apply = settings.apply;
        let port = match Port::new(
            &info.name,
            info.ifindex,
            MacAddr(mac),
            settings,
            overrides,
            self.seq_base(),
            now.mono,
        ) {
            Ok(p) => p,
            Err(e) => {
                // The file was validated as a whole; this is an override gone bad.
                warn!(port = %info.name, error = %e, "configuration refused: port not started");
                return;
            }
        };
        info!(port = %info.name, ifindex = info.ifindex, mac = %MacAddr(mac), "port added");
        self.ports.insert(info.name.clone(), port);
        self.by_index.insert(info.ifindex, info.name.clone());
        self.outputs.push_back(Output::Open {
            ifindex: info.ifindex,
            name: info.name.clone(),
        });
        self.open_measure(&info.name);
        if apply == Apply::Dcbnl {
            self.outputs.push_back(Output::Probe {
                ifindex: info.ifindex,
                name: info.name.clone(),
            });
        }
        self.publish(
            now,
            &info.name,
            EventBody::Daemon(DaemonEvent::PortAdded {
                ifindex: info.ifindex,
            }),
        );
        self.update_port_link(now, info);
    }

    fn update_port_link(&mut self, now: Now, info: &LinkInfo) {
        // The carrier (IFF_LOWER_UP) rather than IFF_RUNNING: the kernel
        // updates operstate from its linkwatch worker, up to a second later.
        let up = info.admin_up && (info.carrier || info.oper_up);
        let Some(port) = self.ports.get_mut(&info.name) else {
            return;
        };
        if let Some(mac) = info.mac {
            if MacAddr(mac) != port.mac() {
                let cfg = port.settings.port_config(MacAddr(mac));
                if let Err(e) = port.agent.set_config(now.mono, cfg) {
                    warn!(port = %info.name, error = %e, "new MAC refused");
                }
            }
        }
        let changed = port.agent.link_up() != up;
        if changed {
            info!(port = %info.name, up, "link");
            port.agent.handle_link(now.mono, up);
            port.negotiating_since = up.then_some(now.mono);
        }
        // Frames kept while the link came up are for this link-up only; a link
        // reported down forgets them (they could be from another peer by the
        // time it comes up again).
        let held = if up {
            std::mem::take(&mut port.held)
        } else {
            port.held.clear();
            Vec::new()
        };
        if let Some(h) = &mut port.headroom {
            // Any link message may come with a new speed (autonegotiation): re-read it.
            if up {
                self.outputs.push_back(Output::ReadSpeed {
                    ifindex: info.ifindex,
                    name: info.name.clone(),
                });
            } else {
                h.set_kernel_speed(now.mono, None);
            }
        }
        if changed {
            let name = info.name.clone();
            self.publish(
                now,
                &name,
                EventBody::Daemon(DaemonEvent::LinkChanged { up }),
            );
        }
        let name = info.name.clone();
        self.after(now, &name);
        for frame in held {
            self.frame(now, info.ifindex, &frame);
        }
    }

    fn remove_port(&mut self, now: Now, name: &str, shutdown: bool) {
        let Some(mut port) = self.ports.remove(name) else {
            return;
        };
        self.by_index.remove(&port.ifindex);
        if shutdown {
            port.agent.shutdown(now.mono);
            while let Some(frame) = port.agent.poll_transmit() {
                self.outputs.push_back(Output::Send {
                    ifindex: port.ifindex,
                    frame,
                });
            }
        }
        self.outputs.push_back(Output::Close {
            ifindex: port.ifindex,
        });
        info!(port = %name, "port removed");
        self.publish(
            now,
            name,
            EventBody::Daemon(DaemonEvent::PortRemoved {
                ifindex: port.ifindex,
            }),
        );
    }

    // ---- frames and time ------------------------------------------------

    pub fn frame(&mut self, now: Now, ifindex: u32, frame: &[u8]) {
        let Some(name) = self.by_index.get(&ifindex).cloned() else {
            return;
        };
        if let Some(port) = self.ports.get_mut(&name) {
            if !port.agent.link_up() {
                // A frame on a port we believe down: the netlink notification
                // of the carrier can lag (linkwatch) behind the peer's first
                // LLDPDU. Ask the runtime to read the link now; the frame is
                // handed back with the answer.
                self.outputs.push_back(Output::CheckLink {
                    ifindex,
                    frame: frame.to_vec(),
                });
                return;
            }
            port.io.rx_frames += 1;
            if frame.len() >= 14 && frame[12..14] == [0x88, 0x08] {
                port.io.mac_control_rx += 1;
            }
            port.agent.handle_frame(now.mono, frame);
        }
        self.after(now, &name);
    }

    /// The answer to [`Output::CheckLink`]: the link as the kernel sees it
    /// now (None: it could not be read). The frame is processed if the link
    /// turned out to be up, dropped otherwise (a late frame of a link that
    /// went down).
    ///
    /// Read this way, the carrier alone does not make the link up: the kernel
    /// turns it on before its linkwatch worker has activated the device's
    /// queue, and until then whatever is sent is dropped (the `noop` qdisc),
    /// so answering the frame at once could lose the answer (for an LLDPDU, a
    /// second until the next fast transmission). Linkwatch marks the device
    /// running, activates it and then notifies; a notification with the
    /// carrier therefore always comes after the device can send. So with the
    /// carrier on and the device not yet running, the frame is kept for the
    /// notification ([`crate::port::MAX_HELD`] at most).
    pub fn link_checked(&mut self, now: Now, info: Option<LinkInfo>, frame: &[u8]) {
        let Some(info) = info else {
            return;
        };
        let Some(port) = self.ports.get_mut(&info.name) else {
            return;
        };
        tracing::debug!(port = %info.name, admin_up = info.admin_up, carrier = info.carrier,
            running = info.oper_up, "frame before the link notification: link read");
        if info.admin_up && info.carrier && !info.oper_up && !port.agent.link_up() {
            if port.held.len() < crate::port::MAX_HELD {
                port.held.push(frame.to_vec());
            }
            return;
        }
        self.links.insert(info.ifindex, info.clone());
        self.update_port_link(now, &info);
        if self
            .ports
            .get(&info.name)
            .is_some_and(|p| p.agent.link_up())
        {
            self.frame(now, info.ifindex, frame);
        }
    }

    /// A frame could not be read or sent on a port.
    pub fn io_error(&mut self, ifindex: u32, tx: bool) {
        if let Some(port) = self
            .by_index
            .get(&ifindex)
            .and_then(|n| self.ports.get_mut(n))
        {
            if tx {
                port.io.tx_errors += 1;
            } else {
                port.io.rx_errors += 1;
            }
        }
    }

    pub fn timeout(&mut self, now: Now) {
        let due: Vec<String> = self
            .ports
            .iter()
            .filter(|(_, p)| port_timeout(p).is_some_and(|t| t <= now.mono))
            .map(|(n, _)| n.clone())
            .collect();
        for name in due {
            if let Some(p) = self.ports.get_mut(&name) {
                if p.agent.poll_timeout().is_some_and(|t| t <= now.mono) {
                    p.agent.handle_timeout(now.mono);
                }
                if let Some(h) = &mut p.headroom {
                    h.session.handle_timeout(now.mono);
                }
            }
            self.after(now, &name);
        }
    }

    /// Stop: a shutdown LLDPDU on every port, then close them all.
    pub fn shutdown(&mut self, now: Now) {
        let names: Vec<String> = self.ports.keys().cloned().collect();
        for name in names {
            self.remove_port(now, &name, true);
        }
    }

    /// Drains what the agent produced after an input.
    fn after(&mut self, now: Now, name: &str) {
        let Some(port) = self.ports.get_mut(name) else {
            return;
        };
        let ifindex = port.ifindex;
        let mut frames = Vec::new();
        while let Some(frame) = port.agent.poll_transmit() {
            frames.push(frame);
        }
        port.io.tx_frames += frames.len() as u64;
        let mut events = Vec::new();
        while let Some(e) = port.agent.poll_event() {
            events.push(e);
        }
        let took = port.check_convergence(now.mono);
        let peer = port
            .agent
            .neighbors()
            .first()
            .map(|n| n.mac.to_string())
            .unwrap_or_default();
        // Only a NIC that answered the dcbnl probe is programmed.
        let apply = matches!(port.hardware, Hardware::Dcbnl { .. })
            && events.iter().any(
                |e| matches!(e, Event::OperChanged { feature, .. } if *feature != FeatureId::App),
            );
        let status = apply.then(|| port.agent.status());
        // Other PFC priorities: other buffers hold lossless traffic.
        let pfc_changed = events
            .iter()
            .any(|e| matches!(e, Event::OperChanged { feature, .. } if *feature == FeatureId::Pfc));
        let headroom = if pfc_changed {
            apply_headroom(port)
        } else {
            None
        };
        for frame in frames {
            self.outputs.push_back(Output::Send { ifindex, frame });
        }
        if let Some(took) = took {
            info!(port = %name, ms = took.as_secs_f64() * 1e3, "negotiation converged");
            self.metrics.observe_convergence(took);
        }
        for e in &events {
            info!(port = %name, peer = %peer, event = ?e, "dcbx");
            self.metrics.count_event(e);
            self.publish(now, name, EventBody::agent(e));
        }
        if let Some(s) = status {
            self.outputs.push_back(Output::Apply {
                ifindex,
                name: name.to_string(),
                pfc: s.pfc.applied,
                pg: s.pg.applied,
            });
        }
        if let Some(out) = headroom {
            self.outputs.push_back(out);
        }
        self.after_headroom(now, name);
    }

    /// The measurement follows the agent (link, both ends capable); its frames go out,
    /// its results are sized and, through the hysteresis, programmed.
    fn after_headroom(&mut self, now: Now, name: &str) {
        let Some(port) = self.ports.get_mut(name) else {
            return;
        };
        let ifindex = port.ifindex;
        let dcbnl = matches!(port.hardware, Hardware::Dcbnl { .. });
        let Some(h) = &mut port.headroom else {
            return;
        };
        h.session.follow(now.mono, &port.agent);
        let mut changes: Vec<Change> = Vec::new();
        let mut events = Vec::new();
        while let Some(frame) = h.session.poll_transmit() {
            self.outputs
                .push_back(Output::SendMeasure { ifindex, frame });
        }
        while let Some(ev) = h.session.poll_event() {
            if let Some(c) = h.on_event(now.mono, &ev) {
                changes.push(c);
            }
            events.push(ev);
        }
        let (speed, _) = h.speed();
        let mut reported = None;
        if !changes.is_empty() {
            if dcbnl {
                if let Some(out) = apply_headroom(port) {
                    self.outputs.push_back(out);
                }
            } else if let Some(h) = &mut port.headroom {
                h.hardware = match &port.hardware {
                    Hardware::Unsupported { reason } => HeadroomHardware::Unsupported {
                        reason: reason.clone(),
                    },
                    Hardware::Probing => HeadroomHardware::Pending,
                    _ => HeadroomHardware::ReportOnly,
                };
                reported = Some(hardware_event(port));
            }
        }
        for ev in &events {
            match ev {
                lossless_headroom::session::MeasureEvent::Measured(m) => {
                    info!(port = %name, round_trip_ns = m.round_trip.0 as f64 / 1e3,
                        valid = m.valid, "link delay measured");
                    if speed.is_none() {
                        warn!(port = %name, "line rate unknown: set headroom.speed to size the headroom");
                    }
                }
                lossless_headroom::session::MeasureEvent::Failed {
                    valid,
                    sent,
                    missing_t1,
                    missing_response,
                    missing_follow_up,
                    ..
                } => {
                    warn!(port = %name, valid, sent, missing_t1, missing_response, missing_follow_up,
                        "link delay measurement failed: too few complete exchanges");
                }
            }
            let body = EventBody::Daemon(DaemonEvent::HeadroomMeasured {
                result: serde_json::to_value(ev).unwrap_or_default(),
            });
            self.publish(now, name, body);
        }
        for c in changes {
            info!(port = %name, headroom_bytes = c.need.headroom.bytes, cells = c.need.headroom.cells,
                decision = ?c.decision, "headroom sized");
            let body = EventBody::Daemon(DaemonEvent::HeadroomChanged {
                bytes: c.need.headroom.bytes,
                cells: c.need.headroom.cells,
                decision: c.decision,
            });
            self.publish(now, name, body);
        }
        if let Some(body) = reported {
            self.publish(now, name, body);
        }
    }

    /// Starts or stops a port's measurement to match its settings, or hands the
    /// session its new settings.
    fn sync_headroom(&mut self, now: Now, name: &str) {
        let seq_base = self.seq_base();
        let Some(port) = self.ports.get_mut(name) else {
            return;
        };
        let want = port.settings.dcbx.headroom_measurement;
        match (&mut port.headroom, want) {
            (None, true) => {
                port.headroom = PortHeadroom::new(
                    port.settings.headroom,
                    port.agent.mac(),
                    crate::port::round_ids(seq_base),
                );
                let (ifindex, up) = (port.ifindex, port.agent.link_up());
                self.open_measure(name);
                if up {
                    self.outputs.push_back(Output::ReadSpeed {
                        ifindex,
                        name: name.to_string(),
                    });
                }
            }
            (Some(_), false) => {
                port.headroom = None;
                self.outputs.push_back(Output::CloseMeasure {
                    ifindex: port.ifindex,
                });
            }
            (Some(h), true) => {
                let reopen = h.settings.timestamps != port.settings.headroom.timestamps;
                h.set_settings(now.mono, port.settings.headroom);
                if reopen {
                    self.open_measure(name);
                }
            }
            (None, false) => {}
        }
    }

    /// Asks the runtime for the measurement socket of a port that measures.
    fn open_measure(&mut self, name: &str) {
        if let Some(p) = self.ports.get(name) {
            if let Some(h) = &p.headroom {
                self.outputs.push_back(Output::OpenMeasure {
                    ifindex: p.ifindex,
                    name: name.to_string(),
                    timestamps: h.settings.timestamps,
                });
            }
        }
    }

    fn headroom_mut(&mut self, ifindex: u32) -> Option<(String, &mut PortHeadroom)> {
        let name = self.by_index.get(&ifindex)?.clone();
        let h = self.ports.get_mut(&name)?.headroom.as_mut()?;
        Some((name, h))
    }

    /// The answer to [`Output::OpenMeasure`].
    pub fn measure_opened(&mut self, ifindex: u32, result: Result<Clocks, String>) {
        let Some((name, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        match result {
            Ok(c) => {
                info!(port = %name, rx = ?c.rx, tx = ?c.tx, "measurement socket open");
                h.clocks = Some(c);
                h.socket_error = None;
                h.session
                    .set_hardware_timestamps(c.rx == lossless_sys::timestamp::Clock::Hardware);
            }
            Err(e) => {
                warn!(port = %name, error = %e, "cannot open the measurement socket");
                h.socket_error = Some(e);
            }
        }
    }

    /// A measurement frame with its receive timestamp (None: the kernel gave none, and
    /// the frame cannot be used as a sample).
    pub fn measure_frame(&mut self, now: Now, ifindex: u32, frame: &[u8], rx: Option<u64>) {
        let Some((name, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        match rx {
            Some(rx) => h.session.handle_frame(now.mono, frame, rx),
            None => {
                h.frames_without_timestamp += 1;
                warn!(port = %name, "measurement frame without a receive timestamp: not used");
            }
        }
        self.after_headroom(now, &name);
    }

    /// The transmit timestamp of a measurement frame we sent.
    pub fn measure_tx_timestamp(&mut self, now: Now, ifindex: u32, frame: &[u8], tx: u64) {
        let Some((name, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        h.session.handle_tx_timestamp(now.mono, frame, tx);
        self.after_headroom(now, &name);
    }

    /// The answer to [`Output::ReadSpeed`]: Mb/s, None when the kernel does not know.
    pub fn speed_read(&mut self, now: Now, ifindex: u32, mbps: Option<u64>) {
        let Some((name, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        if h.set_kernel_speed(now.mono, mbps) {
            info!(port = %name, mbps, "line rate changed: measuring again");
        }
        self.after_headroom(now, &name);
    }

    /// The answer to [`Output::ApplyHeadroom`]: how setting the PFC delay went and,
    /// when asked for, the IEEE configuration read after it (for the DCB buffer).
    pub fn headroom_applied(
        &mut self,
        now: Now,
        ifindex: u32,
        delay: u16,
        result: Result<(), String>,
        ieee: Option<Result<IeeeConfig, String>>,
    ) {
        let Some(name) = self.by_index.get(&ifindex).cloned() else {
            return;
        };
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
        let pfc_enabled = oper_pfc(port);
        let Some(h) = &mut port.headroom else {
            return;
        };
        h.hardware = match result {
            Ok(()) => HeadroomHardware::Applied {
                pfc_delay_bits: delay,
                saturated: h
                    .applied_need()
                    .is_some_and(|n| n.x_bit_times > u64::from(u16::MAX)),
            },
            Err(error) => {
                warn!(port = %name, %error, "programming the headroom failed");
                HeadroomHardware::Error { error }
            }
        };
        if let Some(ieee) = ieee {
            if let Some(buffer) = h.buffer_read(pfc_enabled, ieee) {
                info!(port = %name, sizes = ?buffer.buffer_size, "writing the DCB buffer");
                self.outputs.push_back(Output::SetBuffer {
                    ifindex,
                    name,
                    buffer,
                });
                return;
            }
        }
        let body = hardware_event(port);
        self.publish(now, &name, body);
    }

    /// The answer to [`Output::SetBuffer`]: the IEEE configuration read back after the
    /// write, or why the write or the read failed.
    pub fn buffer_written(&mut self, now: Now, ifindex: u32, readback: Result<IeeeConfig, String>) {
        let Some(name) = self.by_index.get(&ifindex).cloned() else {
            return;
        };
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
        let Some(h) = &mut port.headroom else {
            return;
        };
        h.buffer_written(readback);
        let body = hardware_event(port);
        self.publish(now, &name, body);
    }

    fn publish(&mut self, now: Now, port: &str, event: EventBody) {
        let record = EventRecord {
            time: now.unix,
            port: port.to_string(),
            event,
        };
        let Ok(line) = serde_json::to_string(&record) else {
            return;
        };
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(line.clone());
        self.outputs.push_back(Output::Event(line));
    }

    // ---- hardware -------------------------------------------------------

    /// The answer to a [`Output::Probe`]: Ok(()) when the NIC speaks dcbnl.
    pub fn probe_result(&mut self, ifindex: u32, result: Result<(), String>) {
        let Some(name) = self.by_index.get(&ifindex).cloned() else {
            return;
        };
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
        match result {
            Ok(()) => {
                port.hardware = Hardware::Dcbnl {
                    error: None,
                    applied: 0,
                };
                let s = port.agent.status();
                self.outputs.push_back(Output::Apply {
                    ifindex,
                    name: name.clone(),
                    pfc: s.pfc.applied,
                    pg: s.pg.applied,
                });
                // A headroom sized while the probe was out is programmed now.
                if let Some(out) = apply_headroom(port) {
                    self.outputs.push_back(out);
                }
            }
            Err(reason) => {
                info!(port = %name, %reason, "no dcbnl: negotiating and reporting only");
                port.hardware = Hardware::Unsupported { reason };
            }
        }
    }

    /// The answer to an [`Output::Apply`].
    pub fn apply_result(&mut self, now: Now, ifindex: u32, result: Result<(), String>) {
        let Some(name) = self.by_index.get(&ifindex).cloned() else {
            return;
        };
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
        if let Hardware::Dcbnl { error, applied } = &mut port.hardware {
            match &result {
                Ok(()) => {
                    *error = None;
                    *applied += 1;
                }
                Err(e) => *error = Some(e.clone()),
            }
        }
        let ev = match result {
            Ok(()) => DaemonEvent::HardwareApplied,
            Err(error) => {
                warn!(port = %name, %error, "dcbnl programming failed");
                DaemonEvent::HardwareError { error }
            }
        };
        self.publish(now, &name, EventBody::Daemon(ev));
    }

    // ---- requests -------------------------------------------------------

    pub fn request(&mut self, now: Now, req: Request) -> Response {
        match req {
            Request::Status => Response::ok(self.status(now)),
            Request::Neighbors { port } => self.per_port(port.as_deref(), |p| {
                serde_json::to_value(p.neighbors(now.mono))
            }),
            Request::DcbxShow { port } => {
                self.per_port(port.as_deref(), |p| serde_json::to_value(p.dcbx()))
            }
            Request::Counters { port } => {
                self.per_port(port.as_deref(), |p| serde_json::to_value(p.counters()))
            }
            Request::DcbxSet { port, change } => match self.dcbx_set(now, &port, &change) {
                Ok(v) => Response::ok(v),
                Err((kind, msg)) => Response::err(kind, msg),
            },
            Request::Events { .. } => {
                let events: Vec<serde_json::Value> = self
                    .history
                    .iter()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect();
                Response::ok(json!({ "events": events }))
            }
            Request::HeadroomShow { port } => self.per_port(port.as_deref(), |p| {
                serde_json::to_value(match &p.headroom {
                    Some(h) => serde_json::to_value(h.view(
                        &p.name,
                        p.settings.apply,
                        &p.hardware,
                        now.mono,
                    ))?,
                    None => json!({ "port": p.name, "off": true,
                        "reason": "headroom.measure is off for this port" }),
                })
            }),
            Request::Reload => match self.reload(now) {
                Ok(r) => Response::ok(serde_json::to_value(r).unwrap_or_default()),
                Err(msg) => Response::err(ErrorKind::InvalidConfig, msg),
            },
            // The runtime answers it while a relay runs.
            Request::RelayShow => Response::err(
                ErrorKind::NotConfigured,
                "no [relay] section in the configuration",
            ),
        }
    }

    fn status(&self, now: Now) -> serde_json::Value {
        let d = &self.config.daemon;
        let result = StatusResult {
            daemon: DaemonInfo {
                version: env!("CARGO_PKG_VERSION").to_string(),
                pid: self.pid,
                uptime_s: (now.mono - self.started).as_secs_f64(),
                config: self.config_path.as_ref().map(|p| p.display().to_string()),
                state_dir: d.state_dir.display().to_string(),
                socket: d.socket.display().to_string(),
                metrics: d.metrics.map(|a| a.to_string()),
                boots: self.persisted.boots,
            },
            ports: self.ports.values().map(Port::summary).collect(),
        };
        serde_json::to_value(result).unwrap_or_default()
    }

    fn per_port(
        &self,
        port: Option<&str>,
        f: impl Fn(&Port) -> serde_json::Result<serde_json::Value>,
    ) -> Response {
        let selected: Vec<&Port> = match port {
            None => self.ports.values().collect(),
            Some(name) => match self.ports.get(name) {
                Some(p) => vec![p],
                None => return Response::err(ErrorKind::NoSuchPort, self.no_such_port(name)),
            },
        };
        let ports: Result<Vec<_>, _> = selected.into_iter().map(f).collect();
        match ports {
            Ok(ports) => Response::ok(json!({ "ports": ports })),
            Err(e) => Response::err(ErrorKind::Unavailable, e.to_string()),
        }
    }

    fn no_such_port(&self, name: &str) -> String {
        let known: Vec<&str> = self.ports.keys().map(String::as_str).collect();
        let known = if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        };
        format!("no port {name:?}; managed ports: {known}")
    }

    /// `dcbx set`: validate, persist, then apply. Any failure changes nothing.
    fn dcbx_set(
        &mut self,
        now: Now,
        name: &str,
        change: &FeatureChange,
    ) -> Result<serde_json::Value, (ErrorKind, String)> {
        let Some(port) = self.ports.get(name) else {
            return Err((ErrorKind::NoSuchPort, self.no_such_port(name)));
        };
        let mut overrides = self.persisted.ports.get(name).cloned().unwrap_or_default();
        let current = port.settings.dcbx().clone();
        let invalid = |m: String| (ErrorKind::InvalidConfig, m);
        match change.feature {
            FeatureName::Pfc => {
                let mut a = current.pfc.clone();
                set_flags(&mut a, change);
                if let Some(p) = &change.priorities {
                    a.cfg.priorities = PriorityMap::from_priorities(p)
                        .map_err(|p| invalid(format!("pfc priority {p} is out of range 0..=7")))?;
                }
                reject(
                    change.pgid.is_some() || change.percent.is_some(),
                    "pfc",
                    "pgid/percent",
                )
                .map_err(invalid)?;
                reject(change.app.is_some(), "pfc", "app").map_err(invalid)?;
                overrides.pfc = Some(a);
            }
            FeatureName::Pg => {
                let mut a = current.pg.clone();
                set_flags(&mut a, change);
                if let Some(v) = &change.pgid {
                    a.cfg.pgid = eight("pg pgid", v).map_err(invalid)?;
                }
                if let Some(v) = &change.percent {
                    a.cfg.percent = eight("pg percent", v).map_err(invalid)?;
                }
                reject(change.priorities.is_some(), "pg", "priorities").map_err(invalid)?;
                reject(change.app.is_some(), "pg", "app").map_err(invalid)?;
                overrides.pg = Some(a);
            }
            FeatureName::App => {
                let mut a = current.app.clone();
                set_flags(&mut a, change);
                if let Some(t) = &change.app {
                    a.cfg = (**t).clone();
                }
                reject(
                    change.priorities.is_some()
                        || change.pgid.is_some()
                        || change.percent.is_some(),
                    "app",
                    "priorities/pgid/percent",
                )
                .map_err(invalid)?;
                overrides.app = Some(a);
            }
        }
        let mut settings = self.config.port(name);
        overrides.apply(&mut settings);
        let cfg = port.port_config(&settings);
        cfg.validate()
            .map_err(|e| invalid(format!("{name}: {e}; nothing changed")))?;
        // Persist first: what the daemon runs is always what a restart runs.
        let mut persisted = self.persisted.clone();
        persisted.ports.insert(name.to_string(), overrides.clone());
        self.state.save(&persisted).map_err(|e| {
            (
                ErrorKind::Persist,
                format!("cannot persist the change, nothing changed: {e}"),
            )
        })?;
        self.persisted = persisted;
        let port = self.ports.get_mut(name).expect("checked above");
        port.agent
            .set_config(now.mono, cfg)
            .map_err(|e| invalid(format!("{name}: {e}; nothing changed")))?;
        port.settings = settings;
        port.sources = sources(Some(&overrides));
        port.negotiating_since = Some(now.mono);
        let dcbx = port.dcbx();
        self.publish(
            now,
            name,
            EventBody::Daemon(DaemonEvent::ConfigChanged {
                source: Source::Runtime,
            }),
        );
        self.after(now, name);
        serde_json::to_value(dcbx).map_err(|e| (ErrorKind::Unavailable, e.to_string()))
    }

    /// Re-reads the configuration file. A bad file changes nothing.
    pub fn reload(&mut self, now: Now) -> Result<ReloadResult, String> {
        let config = match &self.config_path {
            Some(path) => DaemonConfig::load(path).map_err(|e| e.to_string())?,
            None => DaemonConfig::default(),
        };
        // Check every port's new configuration before touching any.
        let mut planned = Vec::new();
        for (name, port) in &self.ports {
            let mut settings = config.port(name);
            if let Some(o) = self.persisted.ports.get(name) {
                o.apply(&mut settings);
            }
            let cfg = port.port_config(&settings);
            cfg.validate().map_err(|e| format!("{name}: {e}"))?;
            planned.push((name.clone(), settings, cfg));
        }
        // Socket, state directory and metrics address are bound at start and
        // stay (documented); the rest of [daemon] follows the file.
        let kept = std::mem::replace(&mut self.config, config).daemon;
        self.config.daemon = DaemonSettings {
            log: self.config.daemon.log.clone(),
            ..kept
        };
        let mut result = ReloadResult {
            config: self.config_path.as_ref().map(|p| p.display().to_string()),
            ..ReloadResult::default()
        };
        for (name, settings, cfg) in planned {
            let port = self.ports.get_mut(&name).expect("planned from ports");
            let apply_changed = port.settings.apply != settings.apply;
            let headroom_changed = port.settings.headroom != settings.headroom;
            if *port.agent.config() == cfg && !apply_changed && !headroom_changed {
                port.settings = settings;
                result.unchanged += 1;
                continue;
            }
            if let Err(e) = port.agent.set_config(now.mono, cfg) {
                warn!(port = %name, error = %e, "reload refused for this port");
                continue;
            }
            port.settings = settings;
            self.sync_headroom(now, &name);
            let port = self.ports.get_mut(&name).expect("planned from ports");
            port.negotiating_since = Some(now.mono);
            if apply_changed {
                port.hardware = Hardware::before_probe(port.settings.apply);
                if port.settings.apply == Apply::Dcbnl {
                    self.outputs.push_back(Output::Probe {
                        ifindex: port.ifindex,
                        name: name.clone(),
                    });
                }
            }
            result.changed.push(name.clone());
            self.publish(
                now,
                &name,
                EventBody::Daemon(DaemonEvent::ConfigChanged {
                    source: Source::Config,
                }),
            );
            self.after(now, &name);
        }
        // Ports the new file no longer selects go; newly selected links come.
        let going: Vec<String> = self
            .ports
            .keys()
            .filter(|n| !self.selected(n))
            .cloned()
            .collect();
        for name in going {
            self.remove_port(now, &name, true);
            result.removed.push(name);
        }
        let coming: Vec<LinkInfo> = self
            .links
            .values()
            .filter(|l| !self.ports.contains_key(&l.name) && self.selected(&l.name))
            .cloned()
            .collect();
        for l in coming {
            self.add_port(now, &l);
            if self.ports.contains_key(&l.name) {
                result.added.push(l.name.clone());
            }
        }
        info!(
            changed = result.changed.len(),
            added = result.added.len(),
            removed = result.removed.len(),
            unchanged = result.unchanged,
            "configuration reloaded"
        );
        Ok(result)
    }

    pub fn render_metrics(&self, now: Now) -> String {
        self.metrics
            .render(self.ports.values(), now.mono - self.started)
    }

    pub fn state_dir(&self) -> &Path {
        self.state.path()
    }
}

/// The PFC priorities the NIC runs now: the operational ones, if PFC is on.
fn oper_pfc(port: &Port) -> u8 {
    port.agent
        .pfc()
        .applied(&port.agent.config().dcbx.pfc)
        .map_or(0, |p| p.priorities.0)
}

/// Programming of the headroom the port holds, on a port whose NIC answered dcbnl.
fn apply_headroom(port: &Port) -> Option<Output> {
    if !matches!(port.hardware, Hardware::Dcbnl { .. }) {
        return None;
    }
    let h = port.headroom.as_ref()?;
    let need = h.applied_need()?;
    Some(Output::ApplyHeadroom {
        ifindex: port.ifindex,
        name: port.name.clone(),
        pfc_enabled: oper_pfc(port),
        pfc_delay_bits: pfc_delay_bits(need),
        read_buffer: h.settings.buffer,
    })
}

/// What reached the NIC for the port's headroom, as an event.
fn hardware_event(port: &Port) -> EventBody {
    let (pfc_delay, buffer) = match &port.headroom {
        Some(h) => (
            serde_json::to_value(&h.hardware).unwrap_or_default(),
            serde_json::to_value(h.buffer_state(port.settings.apply, &port.hardware))
                .unwrap_or_default(),
        ),
        None => Default::default(),
    };
    EventBody::Daemon(DaemonEvent::HeadroomHardware { pfc_delay, buffer })
}

/// The earliest deadline of a port: its agent's or its measurement's.
fn port_timeout(p: &Port) -> Option<Instant> {
    let m = p.headroom.as_ref().and_then(|h| h.session.poll_timeout());
    match (p.agent.poll_timeout(), m) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn set_flags<C>(a: &mut FeatureAdmin<C>, c: &FeatureChange) {
    if let Some(v) = c.enable {
        a.enable = v;
    }
    if let Some(v) = c.willing {
        a.willing = v;
    }
    if let Some(v) = c.advertise {
        a.advertise = v;
    }
}

fn eight(what: &str, v: &[u8]) -> Result<[u8; 8], String> {
    <[u8; 8]>::try_from(v).map_err(|_| format!("{what} needs 8 values, got {}", v.len()))
}

fn reject(present: bool, feature: &str, field: &str) -> Result<(), String> {
    if present {
        Err(format!("{field} does not apply to {feature}"))
    } else {
        Ok(())
    }
}

//! One managed interface: its DCBX agent, its adaptive headroom, where its settings
//! came from, what reached the hardware, and the node's own counters for it.

use lossless_dcbx::{Agent, Duration, Event, Instant, PortConfig};
use lossless_wire::mac_control::ETHERTYPE_MAC_CONTROL;
use lossless_wire::{EthernetFrame, MacAddr};
use tracing::warn;

use crate::config::PortSettings;
use crate::hardware::{HardwareErrorCounts, IeeeProgram, Trust};
use crate::headroom::PortHeadroom;
use crate::health::Health;
use crate::identity::LocalInfo;
use crate::protocol::{
    FeatureSources, Hardware, IoCounters, PortCounters, PortDcbx, PortNeighbors, PortSummary,
    Source,
};
use crate::rx_budget::{RxBudget, RxBudgetLimits, Sender, Traffic};
use crate::state::PortOverrides;

/// After a link-up, how long an IEEE port without a DCBX peer waits before its NIC is
/// programmed: the peer's first LLDPDUs come within it, and programming our own
/// configuration first, then the peer's a moment later, is two reconfigurations
/// where one does (on ice each is a link flap, which would start it all over).
pub const PROGRAM_SETTLE: Duration = Duration::from_secs(3);

/// A port the daemon runs DCBX on.
#[derive(Debug)]
pub struct Port {
    pub name: String,
    pub ifindex: u32,
    pub agent: Agent,
    /// Effective settings: the file's, with the persisted runtime overrides on top.
    pub settings: PortSettings,
    /// What the host says for this port's identity TLVs.
    pub local: LocalInfo,
    /// Which features carry a runtime override.
    pub sources: FeatureSources,
    pub hardware: Hardware,
    /// Failed dcbnl operations, by kind.
    pub hw_errors: HardwareErrorCounts,
    /// What this daemon programmed for IEEE 802.1Qaz.
    pub ieee_hw: IeeeHardware,
    pub io: IoCounters,
    /// Since when the port has been negotiating (link up or a change), until
    /// every feature is in sync with a DCBX peer.
    pub negotiating_since: Option<Instant>,
    /// When the link last came up (None while it is down).
    pub link_up_at: Option<Instant>,
    /// The last negotiation time, link-up (or change) to all features Syncd.
    pub last_convergence: Option<Duration>,
    /// Adaptive headroom, on ports that advertise the measurement capability
    /// (boxed: most ports have none, and a port without it is 1 KB smaller).
    pub headroom: Option<Box<PortHeadroom>>,
    /// Frames that arrived while the link was coming up (carrier on, the kernel not
    /// running the device yet): handed to the agent when the link is up.
    pub held: Vec<Vec<u8>>,
    /// PFC counters per priority and the storm watchdog.
    pub pfc: crate::pfc::PortPfc,
    /// What frames may cost, the DCBX peer's and everyone else's ([`crate::rx_budget`]).
    pub rx_budget: RxBudget,
    /// `io.rx_over_budget` when it was last logged.
    pub rx_over_budget_logged: u64,
    /// When the runtime could not open the port's own packet socket: not asked
    /// again before this.
    pub own_socket_retry: Option<Instant>,
    /// The RoCE host settings beyond DCB: read, compared, written where configured.
    pub roce: crate::roce::RoceWatch,
    /// LLDPDUs this host sent come back on this port ([`crate::node`]'s loop check).
    pub looped: Option<Box<Looped>>,
    /// The NIC's hold-down and the flapping peer's watch ([`crate::damping`]).
    pub damping: crate::damping::Damping,
}

/// A port that receives LLDPDUs this host sent: a loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looped {
    /// The port of this host that sent them (this one, or another joined to it).
    pub from: String,
    /// Until when the loop holds without another such LLDPDU (their TTL).
    pub until: Instant,
}

/// The most frames [`Port::held`] keeps; later ones are dropped.
pub const MAX_HELD: usize = 16;

impl Port {
    /// A port with its link down. `settings` must already carry the overrides.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &str,
        ifindex: u32,
        mac: MacAddr,
        settings: PortSettings,
        local: LocalInfo,
        overrides: Option<&PortOverrides>,
        seq_base: u32,
        now: Instant,
    ) -> Result<Port, lossless_dcbx::ConfigError> {
        let mut agent = Agent::new(settings.port_config(mac, &local), now)?;
        agent.set_seq_base(seq_base);
        let hardware = crate::hardware::before_probe(settings.apply);
        let roce = crate::roce::RoceWatch::new(&settings, now);
        let pfc = crate::pfc::PortPfc::new(
            &settings.pfc_watchdog,
            settings.dcbx.pfc.cfg.priorities,
            now,
        );
        let headroom = settings
            .dcbx
            .headroom_measurement
            .then(|| PortHeadroom::new(settings.headroom, mac, round_ids(seq_base)))
            .flatten()
            .map(Box::new);
        Ok(Port {
            name: name.to_string(),
            ifindex,
            agent,
            settings,
            local,
            sources: sources(overrides),
            hardware,
            hw_errors: HardwareErrorCounts::default(),
            ieee_hw: IeeeHardware::default(),
            io: IoCounters::default(),
            negotiating_since: None,
            link_up_at: None,
            last_convergence: None,
            headroom,
            held: Vec::new(),
            pfc,
            rx_budget: RxBudget::new(RxBudgetLimits::default(), now),
            rx_over_budget_logged: 0,
            own_socket_retry: None,
            roce,
            looped: None,
            damping: Default::default(),
        })
    }

    pub fn mac(&self) -> MacAddr {
        self.agent.mac()
    }

    /// The agent's configuration for these settings on this port's MAC, with what the
    /// host says for it.
    pub fn port_config(&self, settings: &PortSettings) -> PortConfig {
        settings.port_config(self.mac(), &self.local)
    }

    /// The interface's MAC changed: the agent takes it (Chassis and Port ID, source).
    pub fn set_mac(&mut self, now: Instant, mac: MacAddr) {
        if mac == self.mac() {
            return;
        }
        let cfg = self.settings.port_config(mac, &self.local);
        if let Err(e) = self.agent.set_config(now, cfg) {
            warn!(port = %self.name, error = %e, "new MAC refused");
        }
    }

    /// What the host says for this port changed (host name, addresses, the interface's
    /// alias): the agent sends it at once. True when the agent's configuration changed.
    pub fn set_local(&mut self, now: Instant, local: LocalInfo) -> bool {
        if local == self.local {
            return false;
        }
        let cfg = self.settings.port_config(self.mac(), &local);
        if cfg == *self.agent.config() {
            self.local = local;
            return false;
        }
        match self.agent.set_config(now, cfg) {
            Ok(()) => {
                self.local = local;
                true
            }
            Err(e) => {
                // The file was checked against the longest values a host can give.
                warn!(port = %self.name, error = %e, "host identity refused");
                false
            }
        }
    }

    /// The link went up or down; true when that is a change. A link coming up starts
    /// a negotiation whose length is measured.
    pub fn set_link(&mut self, now: Instant, up: bool) -> bool {
        if self.agent.link_up() == up {
            return false;
        }
        self.agent.handle_link(now, up);
        // A cable pulled is a loop undone.
        self.looped = None;
        self.negotiating_since = up.then_some(now);
        self.link_up_at = up.then_some(now);
        true
    }

    /// Whether a frame that arrived at `now` is processed: while the receive budget
    /// of its sender (the DCBX peer, or anyone else) and kind (LLDPDUs, or the rest)
    /// lasts. A frame refused is counted (`io.rx_over_budget`, and
    /// `io.rx_peer_over_budget` when it is from the peer) and goes no further.
    pub fn admits(&mut self, now: Instant, frame: &[u8]) -> bool {
        let sender = if self.agent.from_peer(frame) {
            Sender::Peer
        } else {
            Sender::Other
        };
        if self.rx_budget.take(now, sender, Traffic::of(frame)) {
            return true;
        }
        self.io.rx_over_budget += 1;
        if sender == Sender::Peer {
            self.io.rx_peer_over_budget += 1;
        }
        false
    }

    /// A frame for the agent, on a port whose link is up.
    pub fn receive(&mut self, now: Instant, frame: &[u8]) {
        self.io.rx_frames += 1;
        let ethertype = EthernetFrame::new_checked(frame).map(|f| f.ethertype());
        if ethertype == Ok(ETHERTYPE_MAC_CONTROL) {
            self.io.mac_control_rx += 1;
        }
        self.agent.handle_frame(now, frame);
    }

    /// The earliest deadline of the port: its agent's, its measurement's or its next
    /// PFC counter reading.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let m = self
            .headroom
            .as_ref()
            .and_then(|h| h.session.poll_timeout());
        let dcbnl = matches!(self.hardware, Hardware::Dcbnl { .. }) && self.agent.link_up();
        let nic = self.ieee_hw.nic.next_read.filter(|_| dcbnl);
        let settle = self
            .link_up_at
            .map(|t| t + PROGRAM_SETTLE)
            .filter(|_| dcbnl && self.ieee_hw.held);
        [
            self.agent.poll_timeout(),
            m,
            self.pfc.poll_timeout(),
            nic,
            settle,
            self.roce.next_read.filter(|_| !self.roce.in_flight),
            self.looped.as_ref().map(|l| l.until),
            self.damping.poll_timeout(self.nic_hold(), dcbnl),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The least time between two programmings of the NIC (`nic_hold_ms`).
    pub fn nic_hold(&self) -> Duration {
        crate::damping::hold(self.settings.nic_hold_ms)
    }

    /// Runs whatever of the port is due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.agent.poll_timeout().is_some_and(|t| t <= now) {
            self.agent.handle_timeout(now);
        }
        if let Some(h) = &mut self.headroom {
            h.session.handle_timeout(now);
        }
        if self.looped.as_ref().is_some_and(|l| l.until <= now) {
            tracing::info!(port = %self.name, "no LLDPDU of this host received for their TTL: the loop is gone");
            self.looped = None;
        }
    }

    /// What the agent produced since the last drain.
    pub fn drain_agent(&mut self, now: Instant) -> Drained {
        let frames = self.take_frames();
        self.io.tx_frames += frames.len() as u64;
        let mut events = Vec::new();
        while let Some(e) = self.agent.poll_event() {
            events.push(e);
        }
        Drained {
            frames,
            events,
            converged_in: self.check_convergence(now),
            peer: self
                .agent
                .neighbors()
                .first()
                .map(|n| n.mac.to_string())
                .unwrap_or_default(),
        }
    }

    /// The port goes away: its shutdown LLDPDU (TTL 0), if LLDP transmission ran.
    pub fn shutdown(&mut self, now: Instant) -> Vec<Vec<u8>> {
        self.agent.shutdown(now);
        self.take_frames()
    }

    /// The agent's frames, each in a buffer of its own (they leave as outputs).
    fn take_frames(&mut self) -> Vec<Vec<u8>> {
        let mut frames = Vec::new();
        let mut buf = Vec::with_capacity(256);
        while self.agent.poll_transmit(&mut buf) {
            frames.push(std::mem::replace(&mut buf, Vec::with_capacity(256)));
        }
        frames
    }

    /// Negotiation finished: every feature Syncd with a DCBX peer present.
    pub fn converged(&self) -> bool {
        self.agent.peer_present() && self.agent.all_syncd()
    }

    /// Notes the end of a negotiation; returns its duration once.
    pub fn check_convergence(&mut self, now: Instant) -> Option<Duration> {
        let since = self.negotiating_since?;
        if !self.converged() {
            return None;
        }
        let took = now - since;
        self.negotiating_since = None;
        self.last_convergence = Some(took);
        Some(took)
    }

    pub fn summary(&self) -> PortSummary {
        let a = &self.agent;
        PortSummary {
            port: self.name.clone(),
            ifindex: self.ifindex,
            mac: self.mac(),
            link_up: a.link_up(),
            admin_status: a.config().admin_status,
            dcbx_enabled: a.config().dcbx.enabled,
            dcbx_active: a.dcbx_active(),
            peer_present: a.peer_present(),
            all_syncd: self.converged(),
            neighbors: a.neighbors().len(),
            last_convergence_ms: self.last_convergence.map(|d| d.as_secs_f64() * 1e3),
            hardware: self.hardware.clone(),
            pfc_storm: self.pfc.watchdog.stormed().priorities().collect(),
            roce: self.roce.view(),
        }
    }

    /// The port's health ([`crate::health`]): its link, DCBX, NIC and PFC storms.
    pub fn health(&self) -> Health {
        let status = self.agent.status();
        crate::health::port(&self.facts(&status))
    }

    /// What health reads of the port, around its agent's `status`.
    pub fn facts<'a>(&'a self, status: &'a lossless_dcbx::PortStatus) -> crate::health::Facts<'a> {
        crate::health::Facts {
            status,
            hardware: &self.hardware,
            pfc: &self.pfc,
            nic: &self.ieee_hw.nic,
            buffer: self
                .headroom
                .as_ref()
                .map(|h| h.buffer_state(self.settings.apply, &self.hardware)),
            held: self.ieee_hw.held,
            roce: &self.roce,
            looped: self.looped.as_ref().map(|l| l.from.as_str()),
            flapping: self.damping.flapping().then(|| {
                let dcbnl = matches!(self.hardware, Hardware::Dcbnl { .. });
                let hold = dcbnl.then_some(self.settings.nic_hold_ms);
                (self.damping.changes_in_window(), hold)
            }),
        }
    }

    pub fn neighbors(&self, now: Instant) -> PortNeighbors {
        PortNeighbors {
            port: self.name.clone(),
            neighbors: self
                .agent
                .neighbors()
                .iter()
                .map(|n| n.summary(now, self.agent.config().neighbor_hold()))
                .collect(),
            discarded_msaps: self.agent.discarded_msaps(),
        }
    }

    pub fn dcbx(&self) -> PortDcbx {
        let s = self.agent.status();
        PortDcbx {
            port: self.name.clone(),
            dcbx_enabled: s.dcbx_enabled,
            dcbx_active: s.dcbx_active,
            mode: s.mode,
            peer_present: s.peer_present,
            all_syncd: s.all_syncd,
            any_error: s.any_error,
            control: crate::protocol::ControlView {
                seq: s.control.seq,
                ack: s.control.ack,
                rcvd_ack: s.control.rcvd_ack,
                oper_version: s.control.oper_version,
                max_version: s.control.max_version,
            },
            pg: s.pg,
            pfc: s.pfc,
            app: s.app,
            ieee: s.ieee,
            source: self.sources,
        }
    }

    pub fn counters(&self) -> PortCounters {
        PortCounters {
            port: self.name.clone(),
            lldp: *self.agent.lldp_stats(),
            dcbx: *self.agent.dcbx_stats(),
            io: self.io,
            hardware_errors: self
                .hw_errors
                .iter()
                .map(|(k, n)| (k.name().to_string(), n))
                .collect(),
        }
    }
}

/// What this daemon programmed into the NIC for IEEE 802.1Qaz, as the NIC took it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IeeeHardware {
    /// The APP entries we installed: the only ones we ever delete.
    pub apps: Vec<lossless_wire::ieee::AppPriority>,
    /// The trust order we set, if any.
    pub trust: Option<Trust>,
    /// Whether the driver has a trust table (None: not asked yet).
    pub trust_supported: Option<bool>,
    /// The DCBX version the NIC was told through SDCBX.
    pub dcbx_mode: Option<lossless_dcbx::Version>,
    /// What the driver refused, what it holds, and drift.
    pub nic: crate::nic::NicWatch,
    /// A programming waits for the negotiation to settle after a link-up.
    pub held: bool,
    /// The CEE programming out: PFC priorities and the priority groups.
    #[serde(skip)]
    pub cee_sent: Option<(u8, Option<crate::nic::CeePg>)>,
    /// The program sent and not answered yet.
    #[serde(skip)]
    pub pending: Option<IeeeProgram>,
}

/// What a port's agent produced after an input.
#[derive(Debug, Default)]
pub struct Drained {
    pub frames: Vec<Vec<u8>>,
    pub events: Vec<Event>,
    /// A negotiation that just finished, and how long it took.
    pub converged_in: Option<Duration>,
    /// The MAC of the port's first neighbour (for log lines), or empty.
    pub peer: String,
}

/// Which features a port's persisted overrides replace.
pub fn sources(overrides: Option<&PortOverrides>) -> FeatureSources {
    let src = |set: bool| if set { Source::Runtime } else { Source::Config };
    match overrides {
        None => FeatureSources {
            pg: Source::Config,
            pfc: Source::Config,
            app: Source::Config,
        },
        Some(o) => FeatureSources {
            pg: src(o.pg.is_some()),
            pfc: src(o.pfc.is_some()),
            app: src(o.app.is_some()),
        },
    }
}

/// The first measurement round id of this daemon's life: each life starts elsewhere in
/// the 16-bit space, so a peer's answers to a previous life's round are not taken.
pub fn round_ids(seq_base: u32) -> u16 {
    ((seq_base >> 16) as u16).wrapping_mul(0x9e37)
}

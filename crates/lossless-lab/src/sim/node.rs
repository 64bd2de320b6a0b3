//! A simulated node: its named ports, and what runs on it ([`Kind`]).
//!
//! - [`Kind::Core`]: the node core losslessd runs ([`lossless_node::Node`]),
//!   configured by a file the lab writes: DCBX on its first port (`[ports."p0"]`)
//!   and/or a `[relay]` section, whose data path the simulator starts when the
//!   core asks for it (`Output::StartRelay`), as losslessd's runtime starts its
//!   relay thread ([`super::datapath`]).
//! - [`Kind::Transit`]: a WAN router that forwards by outer headers
//!   ([`crate::transit::Transit`]), one port per interface.
//! - [`Kind::Station`]: a bare link-delay measurement session
//!   ([`lossless_headroom::session::Session`]) on one port, driven by the test.

use lossless_dcbx::{Duration, Instant};
use lossless_headroom::session::{MeasureEvent, Session};
use lossless_node::config::PortSettings;
use lossless_node::link::Link;
use lossless_node::node::{Node, RequestId};
use lossless_node::protocol::Response;
use lossless_node::state::PersistedState;
use lossless_wire::MacAddr;

use super::relay_host::Datapath;
use super::SegmentId;
use crate::nic::Nic;
use crate::transit::Transit;

/// One port of a node.
pub(super) struct SimPort {
    pub(super) name: String,
    pub(super) mac: MacAddr,
    pub(super) link_up: bool,
    /// The line rate the "kernel" reports, Mb/s.
    pub(super) speed_mbps: Option<u64>,
    pub(super) segment: Option<SegmentId>,
    /// When the port's transmitter is free (segments with a rate).
    pub(super) free_at: Instant,
}

impl SimPort {
    pub(super) fn new(name: &str, mac: MacAddr) -> SimPort {
        SimPort {
            name: name.to_string(),
            mac,
            link_up: false,
            speed_mbps: None,
            segment: None,
            free_at: Instant::ZERO,
        }
    }
}

/// The ifindex of port `i`.
pub(super) fn ifindex(i: usize) -> u32 {
    i as u32 + 1
}

/// The port of an ifindex.
pub(super) fn port_of(ifindex: u32) -> usize {
    (ifindex as usize).saturating_sub(1)
}

/// A node running losslessd's core.
pub(super) struct CoreNode {
    pub(super) node: Node,
    /// The settings of its first port as the lab last wrote them into its file
    /// (None: the node runs no DCBX, e.g. a relay PE).
    pub(super) settings: Option<PortSettings>,
    /// The `[relay]` section of its file, as TOML.
    pub(super) relay: Option<String>,
    /// Its state directory.
    pub(super) store: PersistedState,
    /// Persisting fails (a full disk) while set.
    pub(super) persist_fails: bool,
    /// The NIC of its first port.
    pub(super) nic: Nic,
    /// Replies to requests, by id.
    pub(super) replies: Vec<(RequestId, Response)>,
    /// The relay data path it started, if any.
    pub(super) datapath: Option<Datapath>,
}

impl CoreNode {
    /// The node's configuration file.
    pub(super) fn config_text(&self, port0: &str) -> String {
        let mut text = String::new();
        if let Some(s) = &self.settings {
            text.push_str(&format!("[ports.\"{port0}\"]\n{}", s.to_toml()));
        }
        if let Some(relay) = &self.relay {
            text.push_str(relay);
        }
        text
    }
}

/// A bare measurement session and what it reported.
pub(super) struct Station {
    pub(super) session: Session,
    pub(super) events: Vec<MeasureEvent>,
}

/// What runs on a node.
pub(super) enum Kind {
    Core(Box<CoreNode>),
    Transit(Transit),
    Station(Box<Station>),
}

/// A node of the simulator.
pub(super) struct SimNode {
    pub(super) name: String,
    pub(super) ports: Vec<SimPort>,
    pub(super) kind: Kind,
    /// The deadline queued for this node's core (older entries are stale).
    pub(super) scheduled: Option<Instant>,
    /// Where its timestamp clock stands when the virtual clock is 0 (ps).
    pub(super) clock_offset: u64,
    /// Transmit timestamps reach its core this late (error-queue latency).
    pub(super) tx_report_delay: Duration,
    /// A measurement response leaves this long after the request came in.
    pub(super) turnaround: Duration,
    /// Frames it sent.
    pub(super) frames_sent: u64,
}

impl SimNode {
    pub(super) fn new(name: &str, ports: Vec<SimPort>, kind: Kind) -> SimNode {
        SimNode {
            name: name.to_string(),
            ports,
            kind,
            scheduled: None,
            clock_offset: 0,
            tx_report_delay: Duration::ZERO,
            turnaround: Duration::ZERO,
            frames_sent: 0,
        }
    }

    /// The kernel's view of port `i`.
    pub(super) fn link(&self, i: usize) -> Link {
        let p = &self.ports[i];
        Link {
            ifindex: ifindex(i),
            name: p.name.clone(),
            mac: Some(p.mac.0),
            admin_up: true,
            oper_up: p.link_up,
            carrier: p.link_up,
            alias: None,
        }
    }

    pub(super) fn core(&self) -> Option<&CoreNode> {
        match &self.kind {
            Kind::Core(c) => Some(c),
            _ => None,
        }
    }

    pub(super) fn core_mut(&mut self) -> Option<&mut CoreNode> {
        match &mut self.kind {
            Kind::Core(c) => Some(c),
            _ => None,
        }
    }

    /// When its core (or session) wants its timeout next.
    pub(super) fn poll_timeout(&mut self) -> Option<Instant> {
        match &mut self.kind {
            Kind::Core(c) => c.node.poll_timeout(),
            Kind::Station(s) => s.session.poll_timeout(),
            Kind::Transit(_) => None,
        }
    }
}

//! What a run records: the timeline ([`LogEntry`]), the frames that crossed
//! the wire ([`Captured`]) and the run's counters ([`SimStats`]).

use lossless_dcbx::{Event, Instant};
use lossless_headroom::session::MeasureEvent;
use lossless_node::pfc::PfcEvent;
use lossless_node::protocol::DaemonEvent;
use lossless_relay::{DropReason, PfcFrame, Port as RelayPort, Verdict};
use serde::Serialize;

use super::{NodeId, SegmentId};
use crate::transit::{Lookup, TransitDrop};

/// Why a node put a frame on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The node's own core sent it (an LLDPDU, a measurement frame).
    Core,
    /// The lab had the node send it ([`super::Sim::send_frame`]): a scripted
    /// peer's LLDPDU, a DC gateway told to pause.
    Originated,
    /// A PE's relay took a frame from its gateway into the tunnel at once.
    Relayed,
    /// A PE's storm ceiling sent a held-back value later.
    Flushed,
    /// A transit router forwarded it.
    Forwarded,
    /// A PE's relay took it out of the tunnel for its gateway.
    Delivered,
}

/// What happened, when: the timeline of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum LogEntry {
    /// A node sent a frame (described for people) on its port `port`: the
    /// frame's first bit left at `at`, its last bit reached the other end of
    /// a point-to-point link at `arrives` (None: lost, on no link, or on a
    /// shared segment).
    Sent {
        at: Instant,
        from: NodeId,
        port: usize,
        len: usize,
        arrives: Option<Instant>,
        cause: Cause,
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
    /// A node's PFC counters or storm watchdog (a storm, its end, a counter reset).
    Pfc {
        at: Instant,
        node: NodeId,
        event: PfcEvent,
    },
    /// A PE's relay judged a frame received on its `port` side.
    Relay {
        at: Instant,
        node: NodeId,
        port: RelayPort,
        verdict: Verdict,
    },
    /// A transit router forwarded a frame.
    Routed {
        at: Instant,
        node: NodeId,
        lookup: Lookup,
    },
    /// A transit router dropped a frame.
    Unrouted {
        at: Instant,
        node: NodeId,
        why: TransitDrop,
    },
    /// A DC gateway's check accepted a PFC frame from its PE.
    Accepted {
        at: Instant,
        node: NodeId,
        pfc: PfcFrame,
    },
    /// A DC gateway's check refused a frame.
    Refused {
        at: Instant,
        node: NodeId,
        reason: DropReason,
    },
}

/// A frame as it crossed the wire, for captures: its first bit at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub at: Instant,
    pub from: NodeId,
    /// The segment it went onto (None: the port is on none).
    pub segment: Option<SegmentId>,
    pub bytes: Vec<u8>,
}

/// Counters of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    pub frames_sent: u64,
    pub frames_delivered: u64,
    pub frames_lost: u64,
}

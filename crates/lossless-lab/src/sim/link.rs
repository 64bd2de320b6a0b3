//! The wire: segments between ports (a point-to-point link, or a shared medium
//! with more than two), each direction between two nodes with its own
//! propagation delay and loss, and optionally a line rate.
//!
//! Without a rate a frame is a point in time: it leaves when sent and arrives
//! `delay` later. With one (a relay's WAN path) links are full duplex and store
//! and forward: a frame occupies its sender's port for its bytes plus FCS,
//! preamble and SFD (then the inter-frame gap), waits behind what the port is
//! still sending (FIFO), and arrives a propagation delay after its last bit.

use lossless_dcbx::{Duration, Instant};
use lossless_node::link::LinkChange;
use rand::Rng;

use super::log::{Captured, Cause, LogEntry};
use super::node::Kind;
use super::queue::{Delivery, Due};
use super::{NodeId, SegmentId, Sim};

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

/// One direction's settings and what it counted.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PathState {
    pub(super) props: PathProps,
    /// Every `n`th frame on it is lost (counting every frame put on it).
    pub(super) drop_every: Option<u32>,
    pub(super) frames: u32,
}

/// A segment: the ports on it, and its line rate (None: frames take no time).
#[derive(Debug, Clone, Default)]
pub(super) struct Segment {
    pub(super) ends: Vec<(NodeId, usize)>,
    pub(super) rate_bps: Option<u64>,
}

/// Octets a frame occupies on the wire besides its own: FCS 4, preamble and
/// SFD 8. The inter-frame gap (12) follows before the next frame.
const FCS_AND_PREAMBLE: u64 = 12;
const INTER_FRAME_GAP: u64 = 12;
/// Frames shorter than this are padded by the MAC.
const MIN_FRAME: u64 = 60;

/// Time to send `bits` at `rate_bps`, whole nanoseconds rounded up.
pub fn bits_time(rate_bps: u64, bits: u64) -> Duration {
    let ns = (u128::from(bits) * 1_000_000_000).div_ceil(u128::from(rate_bps.max(1)));
    Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
}

/// Time from a frame's first bit to its last at `rate_bps`: padded to the
/// minimum size, plus FCS, preamble and SFD; whole nanoseconds rounded up.
pub fn serialization(rate_bps: u64, len: usize) -> Duration {
    let octets = (len as u64).max(MIN_FRAME) + FCS_AND_PREAMBLE;
    bits_time(rate_bps, octets * 8)
}

impl Sim {
    /// A point-to-point link between the first ports of two nodes (links stay
    /// down until `set_link`).
    pub fn connect(&mut self, a: NodeId, b: NodeId) -> SegmentId {
        self.connect_ports((a, 0), (b, 0))
    }

    /// A point-to-point link between two ports, each `(node, port index)`.
    pub fn connect_ports(&mut self, a: (NodeId, usize), b: (NodeId, usize)) -> SegmentId {
        let seg = self.segments.len();
        self.segments.push(Segment {
            ends: vec![a, b],
            rate_bps: None,
        });
        for (n, p) in [a, b] {
            self.nodes[n].ports[p].segment = Some(seg);
        }
        seg
    }

    /// Puts another node's first port on a segment: a shared medium (e.g. a
    /// hub, or a misconfigured bridge that forwards LLDP), i.e. a second
    /// neighbour.
    pub fn attach(&mut self, seg: SegmentId, node: NodeId) {
        if !self.segments[seg].ends.contains(&(node, 0)) {
            self.segments[seg].ends.push((node, 0));
        }
        self.nodes[node].ports[0].segment = Some(seg);
    }

    /// Takes a node's first port off its segment (its link goes down).
    pub fn detach(&mut self, node: NodeId) {
        self.set_node_link(node, false);
        if let Some(seg) = self.nodes[node].ports[0].segment.take() {
            self.segments[seg].ends.retain(|e| *e != (node, 0));
        }
    }

    /// The segment a port is on.
    pub fn segment_of(&self, node: NodeId, port: usize) -> Option<SegmentId> {
        self.nodes[node].ports.get(port)?.segment
    }

    /// The ports on a segment, `(node, port index)`.
    pub fn segment_ends(&self, seg: SegmentId) -> &[(NodeId, usize)] {
        &self.segments[seg].ends
    }

    /// Gives a segment a line rate (bit/s): serialization and queueing on
    /// every port sending onto it. None: frames take no time.
    pub fn set_rate(&mut self, seg: SegmentId, rate_bps: Option<u64>) {
        self.segments[seg].rate_bps = rate_bps;
    }

    fn path_mut(&mut self, from: NodeId, to: NodeId) -> &mut PathState {
        let default = self.default_path;
        self.paths.entry((from, to)).or_insert(PathState {
            props: default,
            ..PathState::default()
        })
    }

    /// Delay and loss from `from` to `to`.
    pub fn set_path(&mut self, from: NodeId, to: NodeId, props: PathProps) {
        self.path_mut(from, to).props = props;
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

    /// Loses every `n`th frame from `from` to `to` (counting from the next
    /// one: the `n`th, `2n`th, ...), besides the path's random loss. None: no
    /// such pattern.
    pub fn set_drop_every(&mut self, from: NodeId, to: NodeId, n: Option<u32>) {
        let p = self.path_mut(from, to);
        p.drop_every = n.filter(|n| *n > 0);
        p.frames = 0;
    }

    pub(super) fn segment_name(&self, seg: SegmentId) -> String {
        let names: Vec<&str> = self.segments[seg]
            .ends
            .iter()
            .map(|(n, _)| self.nodes[*n].name.as_str())
            .collect();
        names.join("-")
    }

    /// Brings every port on a segment up (or down) at the current instant.
    pub fn set_link(&mut self, seg: SegmentId, up: bool) {
        self.note(format!(
            "link {} {}",
            self.segment_name(seg),
            if up { "up" } else { "down" }
        ));
        for (node, port) in self.segments[seg].ends.clone() {
            self.set_port_link(node, port, up);
        }
    }

    /// One node's view of its first port's link (e.g. it was unplugged).
    pub fn set_node_link(&mut self, node: NodeId, up: bool) {
        self.set_port_link(node, 0, up);
    }

    /// One port's link.
    pub fn set_port_link(&mut self, node: NodeId, port: usize, up: bool) {
        self.nodes[node].ports[port].link_up = up;
        let now = self.clock();
        let link = self.nodes[node].link(port);
        match &mut self.nodes[node].kind {
            Kind::Core(c) => c.node.handle_link_change(now, LinkChange::New(link)),
            Kind::Station(s) => s.session.set_link(now.mono, up),
            Kind::Transit(_) => {}
        }
        self.after(node);
    }

    /// Puts a node's frame on its port's segment from `depart` (after what the
    /// port is still sending, when the segment has a rate): to every other
    /// port there, with the path's delay, or lost.
    pub(super) fn transmit(
        &mut self,
        node: NodeId,
        port: usize,
        bytes: Vec<u8>,
        kind: Delivery,
        cause: Cause,
        depart: Instant,
    ) {
        self.stats.frames_sent += 1;
        self.nodes[node].frames_sent += 1;
        let seg = self.nodes[node].ports[port].segment;
        let (start, on_wire) = match seg.and_then(|s| self.segments[s].rate_bps) {
            Some(rate) => {
                let p = &mut self.nodes[node].ports[port];
                let start = depart.max(p.free_at);
                let on_wire = serialization(rate, bytes.len());
                p.free_at = start + on_wire + bits_time(rate, INTER_FRAME_GAP * 8);
                (start, on_wire)
            }
            None => (depart, Duration::ZERO),
        };
        let logged = match &mut self.log {
            Some(log) => {
                log.push(LogEntry::Sent {
                    at: start,
                    from: node,
                    port,
                    len: bytes.len(),
                    arrives: None,
                    cause,
                    summary: (self.describe)(&bytes),
                });
                Some(log.len() - 1)
            }
            None => None,
        };
        if let Some(cap) = &mut self.capture {
            cap.push(Captured {
                at: start,
                from: node,
                segment: seg,
                bytes: bytes.clone(),
            });
        }
        let Some(seg) = seg else {
            return;
        };
        let peers: Vec<(NodeId, usize)> = self.segments[seg]
            .ends
            .iter()
            .copied()
            .filter(|(n, p)| (*n, *p) != (node, port))
            .collect();
        let mut arrivals = Vec::with_capacity(peers.len());
        for (to, to_port) in peers.iter().copied() {
            let default = self.default_path;
            let (delay, lost) = match self.paths.get_mut(&(node, to)) {
                Some(p) => {
                    p.frames = p.frames.wrapping_add(1);
                    let nth = p.drop_every.is_some_and(|n| p.frames % n == 0);
                    (p.props.delay, nth || lose(&mut self.rng, p.props.loss))
                }
                None => (default.delay, lose(&mut self.rng, default.loss)),
            };
            if lost {
                self.stats.frames_lost += 1;
                if let Some(log) = &mut self.log {
                    log.push(LogEntry::Lost {
                        at: start,
                        from: node,
                        to,
                    });
                }
                continue;
            }
            let at = start + on_wire + delay;
            arrivals.push(at);
            self.queue.push(
                at,
                Due::Arrive {
                    to,
                    port: to_port,
                    bytes: bytes.clone(),
                    kind,
                },
            );
        }
        // Point to point and not lost: the log says when it arrived.
        let arrived = match (peers.len(), &arrivals[..]) {
            (1, [at]) => Some(*at),
            _ => None,
        };
        if let (Some(i), Some(log)) = (logged, &mut self.log) {
            if let Some(LogEntry::Sent { arrives, .. }) = log.get_mut(i) {
                *arrives = arrived;
            }
        }
    }
}

/// Draws whether a frame is lost with probability `loss` (no draw when 0).
fn lose(rng: &mut rand::rngs::SmallRng, loss: f64) -> bool {
    loss > 0.0 && rng.gen::<f64>() < loss
}

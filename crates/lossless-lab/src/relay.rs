//! Seed 002's two-DC path as a discrete-event simulation on a virtual clock:
//!
//! ```text
//!  DC1-GW ---- PE1 ========= P ========= PE2 ---- DC2-GW
//!         link 3     link 2     link 1      link 0
//! ```
//!
//! The PEs are the real relay core ([`lossless_relay::Relay`], the
//! configurations of [`lossless_relay::example`] with P as their WAN next
//! hop), the gateways run the real [`GatewayCheck`], and P is a
//! [`crate::transit::Transit`] router that forwards by outer headers only.
//!
//! Links are point to point, full duplex, one rate, store and forward: a
//! frame occupies its direction of a link for its bytes plus FCS, preamble
//! and SFD (then the inter-frame gap), arrives a propagation delay after its
//! last bit, and the receiving node handles it at once (nodes take no time
//! of their own). Frames on a busy link wait their turn. The PEs' storm timers
//! fire at their `poll_timeout()`. Nothing reads the wall clock and nothing
//! is random: a run is a function of its configuration and of what the
//! gateways are told to send.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::{Ipv4Addr, Ipv6Addr};

use lossless_dcbx::{Duration, Instant};
use lossless_relay::example::{self, Kind, PE1_DC, PE1_WAN, PE2_DC, PE2_WAN};
use lossless_relay::{
    ConfigError, DropReason, GatewayCheck, GatewayConfig, PfcFrame, Port, Relay, RelayConfig,
    StormConfig, Verdict,
};
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::describe::describe_relay_frame;
use crate::pcap::Capture;
use crate::sim::Captured;
use crate::transit::{Interface, Lookup, Transit, TransitDrop};

/// The nodes, in the order a PFC frame from DC2's gateway meets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Node {
    Dc2Gw,
    Pe2,
    P,
    Pe1,
    Dc1Gw,
}

impl Node {
    pub const ALL: [Node; 5] = [Node::Dc2Gw, Node::Pe2, Node::P, Node::Pe1, Node::Dc1Gw];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Node::Dc2Gw => "DC2-GW",
            Node::Pe2 => "PE2",
            Node::P => "P",
            Node::Pe1 => "PE1",
            Node::Dc1Gw => "DC1-GW",
        }
    }
}

/// A direction along the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Toward {
    /// DC2-GW to DC1-GW: the direction of DC2's PFC.
    Dc1,
    Dc2,
}

impl Toward {
    fn index(self) -> usize {
        self as usize
    }
}

/// Link `i` joins `Node::ALL[i]` and `Node::ALL[i + 1]`; these name its
/// capture file.
pub const LINKS: [&str; 4] = ["dc2gw-pe2", "pe2-p", "p-pe1", "pe1-dc1gw"];

/// P's interface toward PE2 (interface 0) and toward PE1 (interface 1).
pub const P_TOWARD_PE2: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 2]);
pub const P_TOWARD_PE1: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 1]);

/// Octets a frame occupies on the wire besides its own: FCS 4, preamble and
/// SFD 8. The inter-frame gap (12) follows before the next frame.
const FCS_AND_PREAMBLE: u64 = 12;
const INTER_FRAME_GAP: u64 = 12;
/// Frames shorter than this are padded by the MAC.
const MIN_FRAME: u64 = 60;

/// The path's physical figures and the PEs' storm ceiling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathConfig {
    pub kind: Kind,
    /// Every link's rate, bit/s.
    pub rate_bps: u64,
    /// Propagation delay of each gateway-to-PE link.
    pub dc_link_delay: Duration,
    /// One-way propagation delay from PE2 to PE1 across the WAN, split
    /// evenly over the two spans at P.
    pub wan_delay: Duration,
    /// Both PEs' storm ceiling.
    pub storm: StormConfig,
}

impl PathConfig {
    /// Propagation delay of link `i` (the second WAN span takes the odd
    /// nanosecond).
    pub fn link_delay(&self, link: usize) -> Duration {
        let half = Duration::from_nanos(nanos(self.wan_delay) / 2);
        match link {
            1 => half,
            2 => self.wan_delay.saturating_sub(half),
            _ => self.dc_link_delay,
        }
    }

    /// Sum of the four links' propagation delays.
    pub fn propagation(&self) -> Duration {
        (0..LINKS.len()).map(|l| self.link_delay(l)).sum()
    }

    /// Time from a frame's first bit to its last on one link, whole
    /// nanoseconds rounded up.
    pub fn serialization(&self, len: usize) -> Duration {
        let octets = (len as u64).max(MIN_FRAME) + FCS_AND_PREAMBLE;
        self.bits_time(octets * 8)
    }

    fn bits_time(&self, bits: u64) -> Duration {
        let ns = (u128::from(bits) * 1_000_000_000).div_ceil(u128::from(self.rate_bps.max(1)));
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// PE `n`'s relay configuration: the example pair's, with P as the WAN next
/// hop and the path's storm ceiling.
pub fn pe_config(n: u8, cfg: &PathConfig) -> RelayConfig {
    let mut c = example::pe(n, cfg.kind);
    c.wan.next_hop_mac = if n == 1 { P_TOWARD_PE1 } else { P_TOWARD_PE2 };
    c.storm = cfg.storm.clone();
    c
}

/// P with routes to both PEs for the example pair's addresses: the SRv6
/// locators `fc00::eN:0/112`, the VXLAN endpoints `10.0.0.N` and `fc00::N`,
/// the SR-MPLS node SIDs `16000 + N`.
pub fn transit() -> Transit {
    let mut p = Transit::new(vec![
        Interface {
            mac: P_TOWARD_PE2,
            neighbour: PE2_WAN,
        },
        Interface {
            mac: P_TOWARD_PE1,
            neighbour: PE1_WAN,
        },
    ]);
    for (pe, interface) in [(2u16, 0), (1u16, 1)] {
        p.route_v6(
            Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0xe0 + pe, 0),
            112,
            interface,
        );
        p.route_v6(Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, pe), 128, interface);
        p.route_v4(Ipv4Addr::new(10, 0, 0, pe as u8), 32, interface);
        let sid = 16000 + u32::from(pe);
        p.swap_label(sid, sid, interface);
    }
    p
}

/// Why a node sent a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A gateway was told to send it.
    Originated,
    /// A PE relayed a frame from its gateway into the tunnel at once.
    Relayed,
    /// A PE's storm ceiling sent a held-back value later.
    Flushed,
    /// P forwarded it.
    Forwarded,
    /// A PE took it out of the tunnel for its gateway.
    Delivered,
}

/// What happened at a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// A frame went onto link `link`: its first bit at the record's time, its
    /// last bit reaching the far end at `arrives`.
    Sent {
        link: usize,
        toward: Toward,
        len: usize,
        arrives: Instant,
        cause: Cause,
        text: String,
    },
    /// A PE's verdict on a frame received on `port`.
    Verdict { port: Port, verdict: Verdict },
    /// P forwarded a frame.
    Routed(Lookup),
    /// P dropped a frame.
    Unrouted(TransitDrop),
    /// A gateway accepted a PFC frame from its PE.
    Accepted(PfcFrame),
    /// A gateway refused a frame.
    Refused(DropReason),
}

/// One line of the path's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub at: Instant,
    pub node: Node,
    pub what: What,
}

#[derive(Debug)]
enum Event {
    Arrive {
        link: usize,
        toward: Toward,
        bytes: Vec<u8>,
    },
    /// A PE's storm timer.
    Wake(Node),
}

#[derive(Debug)]
struct Scheduled {
    at: Instant,
    seq: u64,
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The simulated path. See the module docs.
pub struct Path {
    cfg: PathConfig,
    now: Instant,
    pe2: Relay,
    pe1: Relay,
    p: Transit,
    dc2_gw: GatewayCheck,
    dc1_gw: GatewayCheck,
    /// Per link and direction, when the link is free for the next frame.
    free_at: [[Instant; 2]; 4],
    captures: [Vec<Captured>; 4],
    queue: BinaryHeap<Reverse<Scheduled>>,
    seq: u64,
    /// The storm timer queued for PE2 and PE1 (older entries are stale).
    wake: [Option<Instant>; 2],
    log: Vec<Record>,
}

impl Path {
    /// The path at time zero, every link idle.
    pub fn new(cfg: PathConfig) -> Result<Path, ConfigError> {
        let now = Instant::ZERO;
        let pe2 = Relay::new(pe_config(2, &cfg), now)?;
        let pe1 = Relay::new(pe_config(1, &cfg), now)?;
        let dc1_gw = GatewayCheck::new(&GatewayConfig {
            interface: None,
            pe_port_mac: PE1_DC,
            pe_system_mac: None,
            buffer: None,
        })?;
        let dc2_gw = GatewayCheck::new(&GatewayConfig {
            interface: None,
            pe_port_mac: PE2_DC,
            pe_system_mac: None,
            buffer: None,
        })?;
        Ok(Path {
            cfg,
            now,
            pe2,
            pe1,
            p: transit(),
            dc2_gw,
            dc1_gw,
            free_at: [[now; 2]; 4],
            captures: Default::default(),
            queue: BinaryHeap::new(),
            seq: 0,
            wake: [None; 2],
            log: Vec::new(),
        })
    }

    pub fn config(&self) -> &PathConfig {
        &self.cfg
    }

    pub fn now(&self) -> Instant {
        self.now
    }

    pub fn log(&self) -> &[Record] {
        &self.log
    }

    /// PE `n` (1 or 2).
    pub fn pe(&self, n: u8) -> &Relay {
        if n == 1 {
            &self.pe1
        } else {
            &self.pe2
        }
    }

    pub fn transit(&self) -> &Transit {
        &self.p
    }

    /// DC `n`'s gateway check (1 or 2).
    pub fn gateway(&self, n: u8) -> &GatewayCheck {
        if n == 1 {
            &self.dc1_gw
        } else {
            &self.dc2_gw
        }
    }

    /// Every frame sent on link `link` so far, both directions.
    pub fn captures_of(&self, link: usize) -> &[Captured] {
        self.captures.get(link).map_or(&[], |c| c.as_slice())
    }

    /// One capture per link, named `<prefix><link>`.
    pub fn captures(&self, prefix: &str) -> Vec<Capture> {
        LINKS
            .iter()
            .zip(&self.captures)
            .map(|(name, frames)| Capture {
                name: format!("{prefix}{name}"),
                frames: frames.clone(),
            })
            .collect()
    }

    /// DC `n`'s gateway sends `frame` to its PE now (1 or 2).
    pub fn gateway_sends(&mut self, n: u8, frame: &[u8]) {
        let (node, toward) = if n == 1 {
            (Node::Dc1Gw, Toward::Dc2)
        } else {
            (Node::Dc2Gw, Toward::Dc1)
        };
        self.transmit(node, toward, frame.to_vec(), Cause::Originated);
    }

    /// When the next event is due, if any.
    pub fn next_event(&self) -> Option<Instant> {
        self.queue.peek().map(|Reverse(s)| s.at)
    }

    /// Handles every event due by `limit`, then sets the clock to `limit`.
    pub fn run_until(&mut self, limit: Instant) {
        while self.next_event().is_some_and(|at| at <= limit) {
            if let Some(Reverse(s)) = self.queue.pop() {
                self.now = s.at;
                self.handle(s.event);
            }
        }
        self.now = self.now.max(limit);
    }

    /// Runs until nothing is in flight and no timer is set; returns when
    /// the last event happened.
    pub fn run_until_idle(&mut self) -> Instant {
        while let Some(Reverse(s)) = self.queue.pop() {
            self.now = s.at;
            self.handle(s.event);
        }
        self.now
    }

    fn schedule(&mut self, at: Instant, event: Event) {
        self.seq += 1;
        self.queue.push(Reverse(Scheduled {
            at,
            seq: self.seq,
            event,
        }));
    }

    fn note(&mut self, at: Instant, node: Node, what: What) {
        self.log.push(Record { at, node, what });
    }

    /// Puts a frame from `from` onto its link toward `toward`, after
    /// whatever that direction is still sending.
    fn transmit(&mut self, from: Node, toward: Toward, bytes: Vec<u8>, cause: Cause) {
        let link = match toward {
            Toward::Dc1 => from.index(),
            Toward::Dc2 => from.index().wrapping_sub(1),
        };
        if link >= LINKS.len() {
            // A gateway sending away from its PE: there is no such link.
            return;
        }
        let dir = toward.index();
        let start = self.now.max(self.free_at[link][dir]);
        let on_wire = self.cfg.serialization(bytes.len());
        self.free_at[link][dir] = start + on_wire + self.cfg.bits_time(INTER_FRAME_GAP * 8);
        let arrives = start + on_wire + self.cfg.link_delay(link);
        self.captures[link].push(Captured {
            at: start,
            from: from.index(),
            segment: Some(link),
            bytes: bytes.clone(),
        });
        let what = What::Sent {
            link,
            toward,
            len: bytes.len(),
            arrives,
            cause,
            text: describe_relay_frame(&bytes),
        };
        self.note(start, from, what);
        self.schedule(
            arrives,
            Event::Arrive {
                link,
                toward,
                bytes,
            },
        );
    }

    fn handle(&mut self, event: Event) {
        let now = self.now;
        match event {
            Event::Arrive {
                link,
                toward,
                bytes,
            } => {
                let node = match toward {
                    Toward::Dc1 => Node::ALL[link + 1],
                    Toward::Dc2 => Node::ALL[link],
                };
                self.receive(node, toward, &bytes);
            }
            Event::Wake(node) => {
                let i = usize::from(node == Node::Pe1);
                if self.wake[i] != Some(now) {
                    return;
                }
                self.wake[i] = None;
                self.relay_mut(node).handle_timeout(now);
                self.drain(node, None);
            }
        }
    }

    fn relay_mut(&mut self, node: Node) -> &mut Relay {
        if node == Node::Pe1 {
            &mut self.pe1
        } else {
            &mut self.pe2
        }
    }

    /// A frame travelling `toward` reaches `node`.
    fn receive(&mut self, node: Node, toward: Toward, bytes: &[u8]) {
        let now = self.now;
        match node {
            Node::Dc1Gw | Node::Dc2Gw => {
                let gw = if node == Node::Dc1Gw {
                    &mut self.dc1_gw
                } else {
                    &mut self.dc2_gw
                };
                let what = match gw.check(bytes) {
                    Ok(pfc) => What::Accepted(pfc),
                    Err(r) => What::Refused(r),
                };
                self.note(now, node, what);
            }
            Node::Pe2 | Node::Pe1 => {
                // PE2's DC port faces DC2 (frames travelling toward DC1 come
                // from it); PE1's faces DC1.
                let from_dc = (node == Node::Pe2) == (toward == Toward::Dc1);
                let port = if from_dc { Port::Dc } else { Port::Wan };
                let verdict = self.relay_mut(node).handle_frame(now, port, bytes);
                self.note(now, node, What::Verdict { port, verdict });
                self.drain(node, Some(verdict));
            }
            Node::P => {
                let interface = match toward {
                    Toward::Dc1 => 0,
                    Toward::Dc2 => 1,
                };
                match self.p.forward(interface, bytes) {
                    Ok(f) => {
                        self.note(now, node, What::Routed(f.lookup));
                        let out = if f.interface == 1 {
                            Toward::Dc1
                        } else {
                            Toward::Dc2
                        };
                        self.transmit(node, out, f.frame, Cause::Forwarded);
                    }
                    Err(why) => self.note(now, node, What::Unrouted(why)),
                }
            }
        }
    }

    /// Sends what a PE queued and sets its timer. `verdict` is the frame
    /// just handled, if any: the last frame queued is that frame's relay or
    /// delivery; anything before it (and everything after a timer) is the
    /// storm ceiling's held-back values falling due.
    fn drain(&mut self, node: Node, verdict: Option<Verdict>) {
        let mut out = Vec::new();
        let relay = self.relay_mut(node);
        while let Some(tx) = relay.poll_transmit() {
            out.push((tx.port, tx.frame.to_vec()));
        }
        let last = match verdict {
            Some(Verdict::Relayed { .. }) => Some(Cause::Relayed),
            Some(Verdict::Delivered) => Some(Cause::Delivered),
            _ => None,
        };
        let n = out.len();
        for (i, (port, bytes)) in out.into_iter().enumerate() {
            let toward = match (node, port) {
                (Node::Pe2, Port::Dc) | (Node::Pe1, Port::Wan) => Toward::Dc2,
                _ => Toward::Dc1,
            };
            let cause = match last {
                Some(c) if i + 1 == n => c,
                _ => Cause::Flushed,
            };
            self.transmit(node, toward, bytes, cause);
        }
        let now = self.now;
        let next = self.relay_mut(node).poll_timeout().map(|t| t.max(now));
        let i = usize::from(node == Node::Pe1);
        if next != self.wake[i] {
            self.wake[i] = next;
            if let Some(at) = next {
                self.schedule(at, Event::Wake(node));
            }
        }
    }
}

//! draft-he-rtgwg-wan-pfc-00's two-DC path on the lab's simulator ([`crate::sim`]):
//!
//! ```text
//!  DC1-GW ---- PE1 ========= P ========= PE2 ---- DC2-GW
//!         link 3     link 2     link 1      link 0
//! ```
//!
//! The PEs and the gateways are nodes running losslessd's core with a
//! `[relay]` section, as a daemon on each would: the PEs' the configurations of
//! [`lossless_relay::example`] with P as their WAN next hop, the gateways' a
//! check of their PE's MACs. Each node core asks for its relay data path and
//! the simulator starts the real core on the node's ports: the relay
//! ([`lossless_relay::Relay`]) in the PEs, the [`lossless_relay::GatewayCheck`]
//! in the gateways. P is a [`Transit`] router that forwards by outer headers
//! only. The gateways' PFC frames are put on the wire by the lab.
//!
//! Links are point to point, full duplex, one rate, store and forward (the
//! simulator's links with a rate); nodes take no time of their own. Nothing
//! reads the wall clock and nothing is random: a run is a function of its
//! configuration and of what the gateways are told to send.

use std::net::{Ipv4Addr, Ipv6Addr};

use lossless_dcbx::{Duration, Instant};
use lossless_relay::example::{self, Kind, DC1_GW, DC2_GW, PE1_DC, PE1_WAN, PE2_DC, PE2_WAN};
use lossless_relay::{
    ConfigError, DropReason, GatewayCheck, GatewayConfig, PfcFrame, Port, Relay, RelayConfig,
    RelaySection, StormConfig, Verdict,
};
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::describe::describe_relay_frame;
use crate::pcap::Capture;
use crate::sim::{self, Captured, Cause, LogEntry, NodeId, PathProps, SegmentId, Sim};
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

/// Link `i` joins `Node::ALL[i]` and `Node::ALL[i + 1]`; these name its
/// capture file.
pub const LINKS: [&str; 4] = ["dc2gw-pe2", "pe2-p", "p-pe1", "pe1-dc1gw"];

/// P's interface toward PE2 (interface 0) and toward PE1 (interface 1).
pub const P_TOWARD_PE2: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 2]);
pub const P_TOWARD_PE1: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 1]);

/// A gateway's interface facing its PE.
const GATEWAY_PORT: &str = "pe";

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
        sim::serialization(self.rate_bps, len)
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

/// DC `n`'s gateway check: PFC only from its PE's DC port.
pub fn gateway_config(n: u8) -> GatewayConfig {
    GatewayConfig {
        interface: Some(GATEWAY_PORT.into()),
        pe_port_mac: if n == 1 { PE1_DC } else { PE2_DC },
        pe_system_mac: None,
        buffer: None,
        datapath: lossless_relay::Datapath::default(),
    }
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

/// Adds a node whose file has `[relay]` = `section`.
fn relay_node(
    sim: &mut Sim,
    name: &str,
    ports: &[(&str, MacAddr)],
    section: RelaySection,
) -> NodeId {
    // A section the relay accepted renders to a file the node core reads
    // back; anything else is a bug in the lab.
    sim.add_relay_node(name, ports, &section)
        .unwrap_or_else(|e| panic!("{name}'s [relay] section: {e}"))
}

/// The simulated path. See the module docs.
pub struct Path {
    cfg: PathConfig,
    sim: Sim,
    /// The simulator's node of each of [`Node::ALL`], and its segment of each link.
    ids: [NodeId; 5],
    links: [SegmentId; 4],
    /// The path's view of the simulator's log, and how much of it was read.
    log: Vec<Record>,
    read: usize,
}

impl Path {
    /// The path at time zero, every link idle. The relay and gateway
    /// configurations are checked as their data paths will check them.
    pub fn new(cfg: PathConfig) -> Result<Path, ConfigError> {
        let pe2 = pe_config(2, &cfg);
        let pe1 = pe_config(1, &cfg);
        Relay::new(pe2.clone(), Instant::ZERO)?;
        Relay::new(pe1.clone(), Instant::ZERO)?;
        GatewayCheck::new(&gateway_config(2))?;
        GatewayCheck::new(&gateway_config(1))?;
        let mut sim = Sim::new(0)
            .with_capture()
            .with_describer(describe_relay_frame);
        let interfaces = |c: &RelayConfig| {
            let name = |i: &Option<String>| i.clone().unwrap_or_default();
            (name(&c.dc.interface), name(&c.wan.interface))
        };
        let (pe2_dc, pe2_wan) = interfaces(&pe2);
        let (pe1_dc, pe1_wan) = interfaces(&pe1);
        let dc2_gw = relay_node(
            &mut sim,
            Node::Dc2Gw.name(),
            &[(GATEWAY_PORT, DC2_GW)],
            RelaySection::Gateway(gateway_config(2)),
        );
        let pe2_node = relay_node(
            &mut sim,
            Node::Pe2.name(),
            &[(&pe2_dc, PE2_DC), (&pe2_wan, PE2_WAN)],
            RelaySection::Pe(pe2),
        );
        let p = sim.add_transit(Node::P.name(), transit());
        let pe1_node = relay_node(
            &mut sim,
            Node::Pe1.name(),
            &[(&pe1_dc, PE1_DC), (&pe1_wan, PE1_WAN)],
            RelaySection::Pe(pe1),
        );
        let dc1_gw = relay_node(
            &mut sim,
            Node::Dc1Gw.name(),
            &[(GATEWAY_PORT, DC1_GW)],
            RelaySection::Gateway(gateway_config(1)),
        );
        // PE ports: DC first, WAN second.
        let ends = [
            ((dc2_gw, 0), (pe2_node, 0)),
            ((pe2_node, 1), (p, 0)),
            ((p, 1), (pe1_node, 1)),
            ((pe1_node, 0), (dc1_gw, 0)),
        ];
        let mut links = [0; 4];
        for (i, (a, b)) in ends.into_iter().enumerate() {
            let seg = sim.connect_ports(a, b);
            sim.set_rate(seg, Some(cfg.rate_bps));
            let props = PathProps {
                delay: cfg.link_delay(i),
                loss: 0.0,
            };
            sim.set_link_props(a.0, b.0, props);
            sim.set_link(seg, true);
            links[i] = seg;
        }
        let mut path = Path {
            cfg,
            sim,
            ids: [dc2_gw, pe2_node, p, pe1_node, dc1_gw],
            links,
            log: Vec::new(),
            read: 0,
        };
        path.read();
        Ok(path)
    }

    pub fn config(&self) -> &PathConfig {
        &self.cfg
    }

    /// The simulator the path runs on.
    pub fn sim(&self) -> &Sim {
        &self.sim
    }

    pub fn now(&self) -> Instant {
        self.sim.now()
    }

    pub fn log(&self) -> &[Record] {
        &self.log
    }

    /// The simulator's node for `node`.
    pub fn id(&self, node: Node) -> NodeId {
        self.ids[node.index()]
    }

    /// PE `n`'s relay (1 or 2).
    pub fn pe(&self, n: u8) -> &Relay {
        let node = if n == 1 { Node::Pe1 } else { Node::Pe2 };
        match self.sim.relay(self.id(node)) {
            Some(r) => r,
            None => panic!("{}'s relay data path runs from the start", node.name()),
        }
    }

    pub fn transit(&self) -> &Transit {
        match self.sim.transit(self.id(Node::P)) {
            Some(t) => t,
            None => panic!("P is a transit router"),
        }
    }

    /// DC `n`'s gateway check (1 or 2).
    pub fn gateway(&self, n: u8) -> &GatewayCheck {
        let node = if n == 1 { Node::Dc1Gw } else { Node::Dc2Gw };
        match self.sim.gateway(self.id(node)) {
            Some(g) => g,
            None => panic!("{}'s check runs from the start", node.name()),
        }
    }

    /// Every frame sent on link `link` so far, both directions.
    pub fn captures_of(&self, link: usize) -> impl Iterator<Item = &Captured> {
        let seg = self.links.get(link).copied();
        self.sim
            .capture()
            .iter()
            .filter(move |c| seg.is_some() && c.segment == seg)
    }

    /// One capture per link, named `<prefix><link>`.
    pub fn captures(&self, prefix: &str) -> Vec<Capture> {
        LINKS
            .iter()
            .enumerate()
            .map(|(i, name)| Capture {
                name: format!("{prefix}{name}"),
                frames: self.captures_of(i).cloned().collect(),
            })
            .collect()
    }

    /// DC `n`'s gateway sends `frame` to its PE now (1 or 2).
    pub fn gateway_sends(&mut self, n: u8, frame: &[u8]) {
        let node = if n == 1 { Node::Dc1Gw } else { Node::Dc2Gw };
        self.sim.send_frame_on(self.id(node), 0, frame.to_vec());
        self.read();
    }

    /// Handles every event due by `limit`, then sets the clock to `limit`.
    pub fn run_until(&mut self, limit: Instant) {
        self.sim.run_until(limit);
        self.read();
    }

    /// Runs until nothing is in flight and no timer is set; returns when
    /// the last event happened.
    pub fn run_until_idle(&mut self) -> Instant {
        let t = self.sim.run_until_idle();
        self.read();
        t
    }

    /// Appends what the simulator logged since the last read.
    fn read(&mut self) {
        let log = self.sim.log();
        let new: Vec<Record> = log[self.read..]
            .iter()
            .filter_map(|e| self.record(e))
            .collect();
        self.read = log.len();
        self.log.extend(new);
    }

    fn node_of(&self, id: NodeId) -> Option<Node> {
        let i = self.ids.iter().position(|n| *n == id)?;
        Some(Node::ALL[i])
    }

    /// A simulator log entry as the path sees it (None: not the path's).
    fn record(&self, e: &LogEntry) -> Option<Record> {
        let (at, id, what) = match e {
            LogEntry::Sent {
                at,
                from,
                port,
                len,
                arrives,
                cause,
                summary,
            } => {
                let seg = self.sim.segment_of(*from, *port)?;
                let link = self.links.iter().position(|s| *s == seg)?;
                let (to, _) = self.sim.segment_ends(seg).iter().find(|(n, _)| n != from)?;
                let from_node = self.node_of(*from)?;
                let toward = if self.node_of(*to)? > from_node {
                    Toward::Dc1
                } else {
                    Toward::Dc2
                };
                let what = What::Sent {
                    link,
                    toward,
                    len: *len,
                    arrives: (*arrives)?,
                    cause: *cause,
                    text: summary.clone(),
                };
                (*at, *from, what)
            }
            LogEntry::Relay {
                at,
                node,
                port,
                verdict,
            } => (
                *at,
                *node,
                What::Verdict {
                    port: *port,
                    verdict: *verdict,
                },
            ),
            LogEntry::Routed { at, node, lookup } => (*at, *node, What::Routed(*lookup)),
            LogEntry::Unrouted { at, node, why } => (*at, *node, What::Unrouted(*why)),
            LogEntry::Accepted { at, node, pfc } => (*at, *node, What::Accepted(*pfc)),
            LogEntry::Refused { at, node, reason } => (*at, *node, What::Refused(*reason)),
            _ => return None,
        };
        Some(Record {
            at,
            node: self.node_of(id)?,
            what,
        })
    }
}

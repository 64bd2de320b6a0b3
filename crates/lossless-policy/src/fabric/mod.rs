//! The fabric a policy is applied to: nodes, ports, links, and what each port can do.
//!
//! Two inputs, one family of formats: `ibnetdiscover` output and ibsim `net` files (ibsim
//! reads ibnetdiscover output too). [`topo::parse`] reads both.

pub mod lft;
pub mod topo;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Ca,
    Switch,
    Router,
}

impl NodeKind {
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Ca => "CA",
            NodeKind::Switch => "switch",
            NodeKind::Router => "router",
        }
    }
}

/// IB link speed per lane (PortInfo LinkSpeedActive / LinkSpeedExtActive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Speed {
    Sdr,
    Ddr,
    Qdr,
    /// Mellanox FDR10: OpenSM's rate computation does not know it and sees QDR.
    Fdr10,
    Fdr,
    Edr,
    Hdr,
    Ndr,
}

impl Speed {
    pub fn parse(s: &str) -> Option<Speed> {
        Some(match s.to_ascii_uppercase().as_str() {
            "SDR" => Speed::Sdr,
            "DDR" => Speed::Ddr,
            "QDR" => Speed::Qdr,
            "FDR10" => Speed::Fdr10,
            "FDR" => Speed::Fdr,
            "EDR" => Speed::Edr,
            "HDR" => Speed::Hdr,
            "NDR" => Speed::Ndr,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Speed::Sdr => "SDR",
            Speed::Ddr => "DDR",
            Speed::Qdr => "QDR",
            Speed::Fdr10 => "FDR10",
            Speed::Fdr => "FDR",
            Speed::Edr => "EDR",
            Speed::Hdr => "HDR",
            Speed::Ndr => "NDR",
        }
    }
}

/// The PathRecord rate enum for a port (OpenSM `ib_port_info_compute_rate`).
pub fn port_rate(width: u8, speed: Speed) -> u8 {
    // Columns: 1x, 4x, 8x, 12x, 2x.
    let row: [u8; 5] = match speed {
        Speed::Sdr => [2, 3, 6, 4, 5],
        Speed::Ddr => [5, 6, 7, 8, 3],
        Speed::Qdr | Speed::Fdr10 => [3, 7, 9, 10, 6],
        Speed::Fdr => [11, 12, 13, 14, 19],
        Speed::Edr => [15, 16, 17, 18, 20],
        Speed::Hdr => [20, 17, 21, 22, 16],
        Speed::Ndr => [16, 21, 23, 24, 17],
    };
    match width {
        4 => row[1],
        8 => row[2],
        12 => row[3],
        2 => row[4],
        _ => row[0],
    }
}

/// Position of each rate enum in bandwidth order (OpenSM `ordered_rates`).
const ORDERED_RATES: [u8; 25] = [
    0, 0, 1, 3, 6, 2, 5, 9, 10, 13, 14, 4, 12, 16, 17, 7, 15, 18, 19, 8, 11, 20, 21, 22, 23,
];

/// Compare two rate enums by bandwidth (OpenSM `ib_path_compare_rates`).
pub fn compare_rates(a: u8, b: u8) -> std::cmp::Ordering {
    let ord = |r: u8| ORDERED_RATES.get(usize::from(r)).copied().unwrap_or(0);
    ord(a).cmp(&ord(b))
}

/// Gb/s of a rate enum, for humans.
pub fn rate_gbps(rate: u8) -> Option<f64> {
    Some(match rate {
        2 => 2.5,
        3 => 10.0,
        4 => 30.0,
        5 => 5.0,
        6 => 20.0,
        7 => 40.0,
        8 => 60.0,
        9 => 80.0,
        10 => 120.0,
        11 => 14.0,
        12 => 56.0,
        13 => 112.0,
        14 => 168.0,
        15 => 25.0,
        16 => 100.0,
        17 => 200.0,
        18 => 300.0,
        19 => 28.0,
        20 => 50.0,
        21 => 400.0,
        22 => 600.0,
        23 => 800.0,
        24 => 1200.0,
        _ => return None,
    })
}

/// Bytes of an MTU enum.
pub fn mtu_bytes(mtu: u8) -> Option<u32> {
    match mtu {
        1..=5 => Some(128u32 << mtu),
        _ => None,
    }
}

/// One physical port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Port {
    pub num: u8,
    pub guid: u64,
    pub lid: Option<u16>,
    /// Remote end: node index and port number.
    pub peer: Option<(usize, u8)>,
    pub width: u8,
    pub speed: Speed,
    /// MTU capability enum (1=256 .. 5=4096).
    pub mtu_cap: u8,
    /// Number of data VLs the port supports (1, 2, 4, 8 or 15).
    pub data_vls: u8,
    pub vlarb_high_cap: u8,
    pub vlarb_low_cap: u8,
}

impl Port {
    pub fn rate(&self) -> u8 {
        port_rate(self.width, self.speed)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Node {
    pub kind: NodeKind,
    /// The id used inside the topology file (`"S-0000000000200000"`, `"Hca1"`).
    pub id: String,
    pub desc: String,
    pub guid: u64,
    pub nports: u8,
    /// A switch whose port 0 is an enhanced port 0 (ibsim's and ibnetdiscover's
    /// `enhanced port 0`): OpenSM programs its SL2VL and VLArb tables.
    pub enhanced_port0: bool,
    /// Ports that exist in the dump: switch port 0 and every connected port.
    pub ports: Vec<Port>,
}

impl Node {
    pub fn port(&self, num: u8) -> Option<&Port> {
        self.ports.iter().find(|p| p.num == num)
    }
}

/// A port of a node: the unit port groups, partitions and queries talk about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PortRef {
    pub node: usize,
    pub port: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// ibsim `net` file: no LIDs, ibsim's port capabilities.
    Ibsim,
    /// `ibnetdiscover` output: LIDs and active width/speed as discovered.
    Ibnetdiscover,
}

/// How the subnet manager's port of a [`Fabric`] was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SmSource {
    /// Given ([`Fabric::set_sm_port`]: `--sm`).
    Given,
    /// Assumed: an ibsim `net` file's first node, the one ibsim attaches a client to when it
    /// names none (OpenSM started without `SIM_HOST`).
    IbsimFirstNode,
    /// Not known: ibnetdiscover output does not say where the SM runs.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fabric {
    pub flavor: Flavor,
    pub nodes: Vec<Node>,
    /// The subnet manager's port: `SELF` in port groups and partitions, and the default
    /// partition's one full member when a partitions file is given.
    pub sm_port: Option<PortRef>,
    /// How `sm_port` was found.
    pub sm_source: SmSource,
}

impl Fabric {
    pub fn port(&self, r: PortRef) -> Option<&Port> {
        self.nodes.get(r.node)?.port(r.port)
    }

    pub fn node(&self, r: PortRef) -> Option<&Node> {
        self.nodes.get(r.node)
    }

    /// End ports: CA and router ports that are connected, and switch port 0. These are the
    /// ports OpenSM keeps in its port table (and that port groups and partitions hold).
    pub fn end_ports(&self) -> Vec<PortRef> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            for p in &n.ports {
                let end = match n.kind {
                    NodeKind::Switch => p.num == 0,
                    _ => p.peer.is_some(),
                };
                if end {
                    v.push(PortRef {
                        node: i,
                        port: p.num,
                    });
                }
            }
        }
        v
    }

    /// End ports with their port GUIDs, sorted by GUID: GUID ranges become binary searches.
    pub fn end_ports_by_guid(&self) -> Vec<(u64, PortRef)> {
        let mut v: Vec<(u64, PortRef)> = self
            .end_ports()
            .into_iter()
            .filter_map(|e| self.port(e).map(|p| (p.guid, e)))
            .collect();
        v.sort_unstable();
        v
    }

    /// The end port a physical port belongs to (switch ports all belong to port 0).
    pub fn base_port(&self, r: PortRef) -> PortRef {
        match self.nodes.get(r.node).map(|n| n.kind) {
            Some(NodeKind::Switch) => PortRef {
                node: r.node,
                port: 0,
            },
            _ => r,
        }
    }

    /// Label for messages: `Hca1/P1` or `Switch1/P3`.
    pub fn label(&self, r: PortRef) -> String {
        match self.nodes.get(r.node) {
            Some(n) => format!("{}/P{}", n.desc, r.port),
            None => format!("?/P{}", r.port),
        }
    }

    /// End port by port GUID (or node GUID, which for switches and ibsim CAs differs).
    pub fn by_guid(&self, guid: u64) -> Option<PortRef> {
        let ends = self.end_ports();
        ends.iter()
            .copied()
            .find(|r| self.port(*r).is_some_and(|p| p.guid == guid))
            .or_else(|| {
                ends.iter()
                    .copied()
                    .find(|r| self.nodes.get(r.node).is_some_and(|n| n.guid == guid))
            })
    }

    pub fn by_lid(&self, lid: u16) -> Option<PortRef> {
        self.end_ports()
            .into_iter()
            .find(|r| self.port(*r).is_some_and(|p| p.lid == Some(lid)))
    }

    /// Nodes by description (first match, as OpenSM's name hash keeps the first).
    pub fn by_desc(&self, desc: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.desc == desc)
    }

    /// Run the subnet manager on end port `r` (a CA or router port, or a switch's port 0),
    /// instead of the one assumed from the dump. Set it before building partitions or
    /// binding a policy: both read it.
    pub fn set_sm_port(&mut self, r: PortRef) {
        self.sm_port = Some(self.base_port(r));
        self.sm_source = SmSource::Given;
    }

    /// Which port the SM is taken to run on, and why: `HB1/P1 (given)`, or what was
    /// assumed.
    pub fn sm_text(&self) -> String {
        match (self.sm_port, self.sm_source) {
            (Some(r), SmSource::Given) => format!("{} (given)", self.label(r)),
            (Some(r), _) => format!(
                "{}, assumed: the first node of the ibsim net file, where ibsim attaches \
                 OpenSM when it is started without SIM_HOST",
                self.label(r)
            ),
            (None, SmSource::IbsimFirstNode) => {
                "none: the first node of the ibsim net file has no port to run it on".into()
            }
            (None, _) => "none known: ibnetdiscover output does not say where the SM runs, so \
                          SELF names no port and no port is the default partition's full \
                          member for being the SM's"
                .into(),
        }
    }

    /// Override the MTU capability of every port (ibnetdiscover does not report it).
    pub fn set_mtu_cap(&mut self, mtu: u8) {
        for n in &mut self.nodes {
            for p in &mut n.ports {
                p.mtu_cap = mtu;
            }
        }
    }
}

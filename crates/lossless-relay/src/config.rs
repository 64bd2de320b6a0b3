//! Configuration of the relay, shaped for a `[relay]` TOML section:
//!
//! ```toml
//! [relay]
//! role = "pe"
//!
//! [relay.dc]                         # the DC-facing port
//! port_mac = "02:00:00:00:e2:00"     # ours: the SMAC of PFC we deliver
//! gateway_port_mac = "02:00:00:00:d2:01"
//! gateway_system_mac = "02:00:00:00:d2:00"   # optional
//!
//! [relay.wan]                        # the WAN-facing port
//! port_mac = "02:00:00:00:e2:01"
//! next_hop_mac = "02:00:00:00:01:01"
//! vlan = 100                         # optional; tagged frames get PCP 7
//!
//! [relay.tunnel]
//! type = "srv6"                      # or "vxlan", "sr-mpls"
//! source = "fc00::e2"
//! segments = ["fc00::e1:d2"]         # path to the far PE, last: its End.DX2 SID
//! local_sid = "fc00::e2:d2"          # our End.DX2 SID
//!
//! [relay.marking]                    # all optional
//! dscp = 48
//!
//! [relay.storm]                      # optional: no ceiling without it
//! max_per_second = 1000
//! ```
//!
//! A DC gateway takes `role = "gateway"` and names its PE's MACs
//! ([`GatewayConfig`]). Unknown keys are refused; every value is checked by
//! [`RelayConfig::validate`] with the offending value in the error.

use std::net::{IpAddr, Ipv6Addr};
use std::time::Duration;

use lossless_headroom::units::{self, parse_bytes, parse_duration, parse_rate};
use lossless_wire::tunnel::mpls::{LABEL_FIRST_UNRESERVED, LABEL_MAX};
use lossless_wire::tunnel::srh::MAX_SEGMENTS;
use lossless_wire::tunnel::vxlan::VXLAN_PORT;
use lossless_wire::tunnel::Vni;
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

pub use crate::error::ConfigError;
use crate::storm::StormGuard;

/// The whole `[relay]` section: what this node does in draft-he-rtgwg-wan-pfc-00's
/// figure 2.
///
/// Read once per configuration load, so the size difference between the
/// variants costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "kebab-case")]
pub enum RelaySection {
    /// A PE between a DC gateway and the WAN: egress for its gateway's PFC,
    /// ingress for the far PE's.
    Pe(RelayConfig),
    /// A DC gateway that accepts forwarded PFC from its PE.
    Gateway(GatewayConfig),
}

/// A PE's relay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayConfig {
    pub dc: DcSide,
    pub wan: WanSide,
    pub tunnel: TunnelConfig,
    #[serde(default)]
    pub marking: Marking,
    #[serde(default)]
    pub storm: StormConfig,
    /// draft-he-rtgwg-wan-pfc-00's buffer condition, for `relay show`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferConfig>,
    /// Measure the WAN delay to the far PE inside the tunnel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure: Option<crate::delay::MeasureConfig>,
    /// How losslessd's data path waits and batches (the core ignores it).
    #[serde(default)]
    pub datapath: Datapath,
}

/// How the daemon's relay thread runs: what a deployment trades between
/// latency and a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Datapath {
    /// `wait`: sleep in `ppoll` until a frame or a storm deadline (no CPU when
    /// idle, a wake-up's latency per frame); `busy`: spin on the sockets (one
    /// core always busy, the lowest latency).
    pub poll: Poll,
    /// Frames per `recvmmsg`/`sendmmsg` (1..=1024).
    pub batch: u16,
    /// `auto`: the XDP program where it loads and attaches, except on a PE's
    /// veth (a frame redirected into a veth is lost unless its receiving end
    /// runs XDP, which this host cannot see; a gateway's program redirects
    /// nothing), the AF_PACKET path for the rest and where it cannot; `on`: as
    /// `auto`, on veth too; `off`: AF_PACKET only.
    pub xdp: XdpMode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum XdpMode {
    #[default]
    Auto,
    On,
    Off,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Poll {
    Wait,
    Busy,
}

impl Default for Datapath {
    fn default() -> Self {
        Datapath {
            poll: Poll::Wait,
            batch: 64,
            xdp: XdpMode::Auto,
        }
    }
}

/// The DC-facing side of a PE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcSide {
    /// The interface facing the DC gateway (losslessd needs it; the core
    /// does not look at it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// This PE's DC-facing port MAC: the SMAC written into PFC frames
    /// delivered to the gateway, and what the gateway accepts.
    pub port_mac: MacAddr,
    /// The attached gateway's port MAC: accepted as the SMAC of its PFC.
    pub gateway_port_mac: MacAddr,
    /// The gateway's system MAC, which some vendors send PFC from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_system_mac: Option<MacAddr>,
}

/// The WAN-facing side of a PE: the outer Ethernet header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WanSide {
    /// The interface facing the WAN (losslessd needs it; the core does not
    /// look at it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// Outer source MAC; tunnel frames to other destinations are not ours.
    pub port_mac: MacAddr,
    /// Outer destination MAC: the next hop toward the far PE.
    pub next_hop_mac: MacAddr,
    /// Outer 802.1Q VLAN id (0..=4094, 0 = priority tag only); tagged
    /// frames carry PCP [`Marking::vlan_pcp`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vlan: Option<u16>,
}

fn default_hop_limit() -> u8 {
    64
}
fn default_vxlan_port() -> u16 {
    VXLAN_PORT
}
/// Start of the dynamic port range RFC 7348 recommends for the source port.
fn default_source_port() -> u16 {
    49152
}
fn yes() -> bool {
    true
}

/// The tunnel to the far PE. One fixed flow per relay (constant flow label,
/// UDP source port, label stack), so every PFC frame of a PE pair takes the
/// same WAN path: a pause and the resume after it must not be reordered by
/// ECMP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum TunnelConfig {
    /// IPv6 + SRH with next header 143 (Ethernet): `seg6 mode l2encap`
    /// toward the far PE's `End.DX2`.
    Srv6 {
        /// Outer source address.
        source: Ipv6Addr,
        /// The SIDs to visit, in order, as `ip route ... segs A,B` takes
        /// them; the last is the far PE's End.DX2 SID.
        segments: Vec<Ipv6Addr>,
        /// Our End.DX2 SID: packets to it are decapsulated.
        local_sid: Ipv6Addr,
        /// Leave the SRH out (one segment only; `l2encap.red`).
        #[serde(default)]
        reduced: bool,
        #[serde(default = "default_hop_limit")]
        hop_limit: u8,
        /// 20 bits; constant, see above.
        #[serde(default)]
        flow_label: u32,
    },
    /// VXLAN (RFC 7348) over IPv4 or IPv6.
    Vxlan {
        /// Our VTEP address: outer source, and where the far PE sends to.
        source: IpAddr,
        /// The far PE's VTEP address.
        destination: IpAddr,
        vni: u32,
        /// UDP destination port, both ways (Linux `vxlan` devices default to
        /// 8472 unless given `dstport 4789`).
        #[serde(default = "default_vxlan_port")]
        port: u16,
        #[serde(default = "default_source_port")]
        source_port: u16,
        /// IPv4 TTL or IPv6 hop limit.
        #[serde(default = "default_hop_limit")]
        ttl: u8,
        /// Compute the UDP checksum over IPv4 (Linux does by default; RFC
        /// 7348 allows zero). Over IPv6 it is always computed.
        #[serde(default = "yes")]
        ipv4_checksum: bool,
    },
    /// An SR-MPLS label stack over an Ethernet pseudowire.
    SrMpls {
        /// Pushed top first; the last is the pseudowire label the far PE
        /// bound to this service.
        labels: Vec<u32>,
        /// Our pseudowire label: a stack whose bottom entry carries it is
        /// decapsulated.
        local_label: u32,
        /// Labels that may sit above ours on arrival (our node SID without
        /// penultimate-hop popping); explicit null (0, 2) is always allowed.
        #[serde(default)]
        pop_labels: Vec<u32>,
        /// RFC 4448 control word, both ways.
        #[serde(default = "yes")]
        control_word: bool,
        #[serde(default = "default_hop_limit")]
        ttl: u8,
    },
}

impl TunnelConfig {
    pub fn kind(&self) -> &'static str {
        match self {
            TunnelConfig::Srv6 { .. } => "srv6",
            TunnelConfig::Vxlan { .. } => "vxlan",
            TunnelConfig::SrMpls { .. } => "sr-mpls",
        }
    }
}

/// "it is preferable to configure the highest priority for the encapsulated
/// PFC frames such that the PFC frames are not discarded in case of network
/// congestion."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Marking {
    /// DSCP of the outer IPv6 traffic class / IPv4 TOS (ECN 0). Default 48
    /// (CS6, network control): the highest class RFC 4594 assigns; CS7 (56)
    /// is reserved, set it where the WAN maps it higher.
    pub dscp: u8,
    /// PCP of the outer VLAN tag, when the WAN side is tagged.
    pub vlan_pcp: u8,
    /// Traffic Class of every pushed MPLS label.
    pub mpls_tc: u8,
    /// `SO_PRIORITY` hint for the socket that sends relayed frames, both
    /// directions (7 needs CAP_NET_ADMIN).
    pub socket_priority: u32,
}

impl Default for Marking {
    fn default() -> Self {
        Marking {
            dscp: 48,
            vlan_pcp: 7,
            mpls_tc: 7,
            socket_priority: 7,
        }
    }
}

/// The storm ceiling (see [`crate::storm`]). Off unless `max_per_second` is
/// set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StormConfig {
    /// Relayed frames per second per priority; none: no ceiling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_second: Option<u32>,
    /// Frames a priority may send at once after a quiet spell; default
    /// `max_per_second`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    /// Silence after which a priority's episode is over, as a duration
    /// (`100ms`).
    #[serde(default = "default_episode_gap")]
    pub episode_gap: String,
    /// The speed of the link the far gateway receives relayed PFC on: how
    /// long a pause lasts there (`100G`: 65,535 quanta are 335.5 us).
    #[serde(default = "default_link_speed")]
    pub link_speed: String,
    /// How long before the far side's pause lapses a pause that keeps it
    /// paused is sent (at most half the pause): the WAN's jitter allowance.
    #[serde(default = "default_refresh_before")]
    pub refresh_before: String,
}

fn default_episode_gap() -> String {
    "100ms".to_string()
}

fn default_link_speed() -> String {
    "100G".to_string()
}

fn default_refresh_before() -> String {
    "50us".to_string()
}

impl Default for StormConfig {
    fn default() -> Self {
        StormConfig {
            max_per_second: None,
            burst: None,
            episode_gap: default_episode_gap(),
            link_speed: default_link_speed(),
            refresh_before: default_refresh_before(),
        }
    }
}

/// draft-he-rtgwg-wan-pfc-00's buffer condition at the destination DC gateway,
/// evaluated for `relay show`: quantities as the headroom calculator takes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferConfig {
    /// One-way forwarding delay of a PFC frame from the destination gateway
    /// to the source gateway (`2ms`), or `measured`: the PEs' measurement
    /// inside the tunnel (a PE with `[relay.measure]` only).
    pub wan_delay: String,
    /// Average receive rate of the priority at the gateway's port (`100G`).
    pub rx_rate: String,
    /// Average send rate of the priority at the sending port; default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_rate: Option<String>,
    /// The buffer reserved, to check against the condition (`32MB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<String>,
}

/// A DC gateway's check of forwarded PFC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// The interface facing the PE (losslessd needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// The PE's DC-facing port MAC.
    pub pe_port_mac: MacAddr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pe_system_mac: Option<MacAddr>,
    /// draft-he-rtgwg-wan-pfc-00's buffer condition at this gateway, for `relay show`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferConfig>,
    /// How losslessd reads the frames: its socket loop, and `xdp` (the
    /// check in XDP, which drops the illegal frames before the host sees
    /// them; `auto` attaches on veth too: the gateway's program redirects
    /// nothing).
    #[serde(default)]
    pub datapath: Datapath,
}

fn unicast(key: &'static str, mac: MacAddr) -> Result<(), ConfigError> {
    if mac.is_multicast() || mac == MacAddr::default() {
        return Err(ConfigError::NotUnicast { key, value: mac });
    }
    Ok(())
}

fn at_most(
    key: &'static str,
    value: u64,
    max: u64,
    allowed: &'static str,
) -> Result<(), ConfigError> {
    if value > max {
        return Err(ConfigError::OutOfRange {
            key,
            value,
            allowed,
        });
    }
    Ok(())
}

fn label(key: &'static str, value: u32) -> Result<(), ConfigError> {
    if !(LABEL_FIRST_UNRESERVED..=LABEL_MAX).contains(&value) {
        return Err(ConfigError::OutOfRange {
            key,
            value: value.into(),
            allowed: "16..=1048575 (0..=15 are reserved)",
        });
    }
    Ok(())
}

fn unit<T>(
    key: &'static str,
    value: &str,
    parse: fn(&str) -> Result<T, units::UnitError>,
) -> Result<T, ConfigError> {
    parse(value).map_err(|e| ConfigError::Unit {
        key,
        value: value.to_string(),
        reason: e.to_string(),
    })
}

impl StormConfig {
    /// The ceiling this section asks for, its buckets full at `now`; `None`
    /// without `max_per_second`. The one place the defaults (`burst`:
    /// `max_per_second`) are applied: the core's relay and the XDP program's
    /// map both start from it.
    pub fn guard(&self, now: lossless_time::Instant) -> Result<Option<StormGuard>, ConfigError> {
        let Some(rate) = self.max_per_second else {
            return Ok(None);
        };
        let burst = self.burst.unwrap_or(rate);
        Ok(Some(StormGuard::new(
            now,
            rate,
            burst,
            self.gap()?,
            self.clock()?,
        )))
    }

    /// The silence that ends an episode.
    pub fn gap(&self) -> Result<Duration, ConfigError> {
        let d = unit("storm.episode_gap", &self.episode_gap, parse_duration)?;
        // Picoseconds to nanoseconds, rounding up: a gap is a minimum.
        let gap = Duration::from_nanos(d.0.div_ceil(1000));
        if gap.is_zero() {
            return Err(ConfigError::Unit {
                key: "storm.episode_gap",
                value: self.episode_gap.clone(),
                reason: "must be longer than zero".into(),
            });
        }
        Ok(gap)
    }

    /// How long pauses last at the far gateway, and the refresh margin.
    pub fn clock(&self) -> Result<crate::storm::PauseClock, ConfigError> {
        let speed = unit("storm.link_speed", &self.link_speed, parse_rate)?;
        if speed.0 == 0 {
            return Err(ConfigError::Unit {
                key: "storm.link_speed",
                value: self.link_speed.clone(),
                reason: "must be faster than zero".into(),
            });
        }
        let before = unit("storm.refresh_before", &self.refresh_before, parse_duration)?;
        Ok(crate::storm::PauseClock::new(
            speed.0,
            Duration::from_nanos(before.0.div_ceil(1000)),
        ))
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if let Some(0) = self.max_per_second {
            return Err(ConfigError::OutOfRange {
                key: "storm.max_per_second",
                value: 0,
                allowed: "1..=4294967295 (leave it out for no ceiling)",
            });
        }
        if let Some(0) = self.burst {
            return Err(ConfigError::OutOfRange {
                key: "storm.burst",
                value: 0,
                allowed: "1..=4294967295",
            });
        }
        self.clock()?;
        self.gap().map(|_| ())
    }
}

/// `buffer.wan_delay` for the PEs' measurement.
pub const MEASURED: &str = "measured";

/// [`BufferConfig`] with its quantities parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferInputs {
    pub wan: lossless_headroom::wan::Wan,
    pub reserved: Option<units::Bytes>,
}

impl BufferConfig {
    /// The condition evaluated: what `relay show` prints.
    pub fn evaluate(&self) -> Result<crate::buffer::GatewayBuffer, ConfigError> {
        let i = self.inputs()?;
        Ok(crate::buffer::GatewayBuffer::evaluate(&i.wan, i.reserved))
    }

    /// Whether the delay is the PEs' measurement.
    pub fn is_measured(&self) -> bool {
        self.wan_delay == MEASURED
    }

    /// The condition for a measured one-way delay and round trip.
    pub fn evaluate_measured(
        &self,
        one_way: units::Duration,
        round_trip: units::Duration,
    ) -> Result<crate::buffer::GatewayBuffer, ConfigError> {
        let mut i = self.inputs()?;
        i.wan.delay = one_way;
        Ok(crate::buffer::GatewayBuffer::evaluate_with(
            &i.wan, round_trip, "measured", i.reserved,
        ))
    }

    /// The quantities parsed; a measured delay is 0 until measured.
    pub fn inputs(&self) -> Result<BufferInputs, ConfigError> {
        let delay = if self.is_measured() {
            units::Duration(0)
        } else {
            unit("buffer.wan_delay", &self.wan_delay, parse_duration)?
        };
        let rx_rate = unit("buffer.rx_rate", &self.rx_rate, parse_rate)?;
        let tx_rate = match &self.tx_rate {
            Some(t) => unit("buffer.tx_rate", t, parse_rate)?,
            None => units::Rate(0),
        };
        let reserved = match &self.reserved {
            Some(r) => Some(unit("buffer.reserved", r, parse_bytes)?),
            None => None,
        };
        Ok(BufferInputs {
            wan: lossless_headroom::wan::Wan {
                delay,
                rx_rate,
                tx_rate,
            },
            reserved,
        })
    }
}

impl RelayConfig {
    /// Every check [`crate::Relay::new`] makes.
    pub fn validate(&self) -> Result<(), ConfigError> {
        unicast("dc.port_mac", self.dc.port_mac)?;
        unicast("dc.gateway_port_mac", self.dc.gateway_port_mac)?;
        if let Some(m) = self.dc.gateway_system_mac {
            unicast("dc.gateway_system_mac", m)?;
        }
        unicast("wan.port_mac", self.wan.port_mac)?;
        unicast("wan.next_hop_mac", self.wan.next_hop_mac)?;
        if let Some(vid) = self.wan.vlan {
            at_most("wan.vlan", vid.into(), 4094, "0..=4094")?;
        }
        let m = &self.marking;
        at_most("marking.dscp", m.dscp.into(), 63, "0..=63")?;
        at_most("marking.vlan_pcp", m.vlan_pcp.into(), 7, "0..=7")?;
        at_most("marking.mpls_tc", m.mpls_tc.into(), 7, "0..=7")?;
        match &self.tunnel {
            TunnelConfig::Srv6 {
                segments,
                reduced,
                flow_label,
                ..
            } => {
                if segments.is_empty() || segments.len() > MAX_SEGMENTS {
                    return Err(ConfigError::Segments {
                        count: segments.len(),
                    });
                }
                if *reduced && segments.len() != 1 {
                    return Err(ConfigError::ReducedWithSegments {
                        count: segments.len(),
                    });
                }
                at_most(
                    "tunnel.flow_label",
                    (*flow_label).into(),
                    0xf_ffff,
                    "0..=1048575 (20 bits)",
                )?;
            }
            TunnelConfig::Vxlan {
                source,
                destination,
                vni,
                ..
            } => {
                if Vni::new(*vni).is_none() {
                    return Err(ConfigError::OutOfRange {
                        key: "tunnel.vni",
                        value: (*vni).into(),
                        allowed: "0..=16777215 (24 bits)",
                    });
                }
                if source.is_ipv4() != destination.is_ipv4() {
                    return Err(ConfigError::MixedFamilies {
                        local: *source,
                        remote: *destination,
                    });
                }
            }
            TunnelConfig::SrMpls {
                labels,
                local_label,
                pop_labels,
                ..
            } => {
                if labels.is_empty() {
                    return Err(ConfigError::NoLabels);
                }
                for l in labels {
                    label("tunnel.labels", *l)?;
                }
                label("tunnel.local_label", *local_label)?;
                for l in pop_labels {
                    at_most(
                        "tunnel.pop_labels",
                        (*l).into(),
                        LABEL_MAX.into(),
                        "0..=1048575",
                    )?;
                }
            }
        }
        self.storm.validate()?;
        self.datapath.validate()?;
        if let Some(m) = &self.measure {
            m.session()?;
        }
        if let Some(b) = &self.buffer {
            if b.is_measured() && self.measure.is_none() {
                return Err(ConfigError::Unit {
                    key: "buffer.wan_delay",
                    value: MEASURED.into(),
                    reason: "needs [relay.measure], which measures it".into(),
                });
            }
            b.inputs()?;
        }
        Ok(())
    }
}

impl Datapath {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=1024).contains(&self.batch) {
            return Err(ConfigError::OutOfRange {
                key: "datapath.batch",
                value: self.batch.into(),
                allowed: "1..=1024",
            });
        }
        Ok(())
    }
}

impl GatewayConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        unicast("pe_port_mac", self.pe_port_mac)?;
        self.datapath.validate()?;
        if let Some(m) = self.pe_system_mac {
            unicast("pe_system_mac", m)?;
        }
        if let Some(b) = &self.buffer {
            if b.is_measured() {
                return Err(ConfigError::Unit {
                    key: "buffer.wan_delay",
                    value: MEASURED.into(),
                    reason: "a gateway does not measure the WAN; give the delay (its PE's \
                             relay show has the measured one)"
                        .into(),
                });
            }
            b.inputs()?;
        }
        Ok(())
    }
}

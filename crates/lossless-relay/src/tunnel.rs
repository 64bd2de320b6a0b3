//! The configured tunnel, both ways: [`Encapsulator`] wraps a PFC frame for
//! the far PE, [`Decapsulator`] takes one out of what arrives from the WAN and
//! says whether it was meant for us.

use std::net::IpAddr;

use lossless_wire::tunnel::ip::IpProtocol;
use lossless_wire::tunnel::mpls::{
    encode_stack, LABEL_IPV4_EXPLICIT_NULL, LABEL_IPV6_EXPLICIT_NULL,
};
use lossless_wire::tunnel::srh::encode_path;
use lossless_wire::tunnel::{
    ControlWord, Encap, IpHeader, Ipv4Header, Ipv6Header, LabelStack, ParseOptions, SegmentList,
    Srh, TunnelFrame, UdpHeader, Vni, VxlanHeader,
};
use lossless_wire::{DecodeError, DecodeErrorKind, EthernetHeader, MacAddr, VlanTag};

use crate::config::{ConfigError, Marking, TunnelConfig, WanSide};
use crate::DropReason;

/// Builds the tunnel frame around an inner frame. The variable parts (segment
/// list, label stack) are encoded once, at configuration.
#[derive(Debug, Clone)]
pub struct Encapsulator {
    outer: EthernetHeader,
    kind: Kind,
    /// Segment list (SRv6) or label stack (SR-MPLS), wire bytes.
    bytes: Vec<u8>,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Srv6 {
        ipv6: Ipv6Header,
        srh: bool,
        segments_left: u8,
    },
    Vxlan4 {
        ip: Ipv4Header<'static>,
        udp: UdpHeader,
        vxlan: VxlanHeader,
    },
    Vxlan6 {
        ip: Ipv6Header,
        udp: UdpHeader,
        vxlan: VxlanHeader,
    },
    Mpls {
        control_word: bool,
    },
}

impl Encapsulator {
    pub fn new(
        tunnel: &TunnelConfig,
        wan: &WanSide,
        marking: &Marking,
    ) -> Result<Encapsulator, ConfigError> {
        let outer = EthernetHeader {
            dst: wan.next_hop_mac,
            src: wan.port_mac,
            vlan: wan.vlan.map(|vid| VlanTag {
                pcp: marking.vlan_pcp,
                dei: false,
                vid,
            }),
            ethertype: 0,
        };
        let tos = marking.dscp << 2;
        let (kind, bytes) = match tunnel {
            TunnelConfig::Srv6 {
                source,
                segments,
                reduced,
                hop_limit,
                flow_label,
                ..
            } => {
                let first = *segments.first().ok_or(ConfigError::Segments { count: 0 })?;
                let ipv6 = Ipv6Header {
                    traffic_class: tos,
                    flow_label: *flow_label,
                    payload_len: 0,
                    next_header: IpProtocol::ETHERNET,
                    hop_limit: *hop_limit,
                    src: *source,
                    dst: first,
                };
                let bytes = encode_path(segments);
                SegmentList::from_bytes(&bytes).map_err(|_| ConfigError::Segments {
                    count: segments.len(),
                })?;
                let kind = Kind::Srv6 {
                    ipv6,
                    srh: !reduced,
                    segments_left: (segments.len() - 1) as u8,
                };
                (kind, bytes)
            }
            TunnelConfig::Vxlan {
                source,
                destination,
                vni,
                port,
                source_port,
                ttl,
                ipv4_checksum,
            } => {
                let vni = Vni::new(*vni).ok_or(ConfigError::OutOfRange {
                    key: "tunnel.vni",
                    value: (*vni).into(),
                    allowed: "0..=16777215 (24 bits)",
                })?;
                let vxlan = VxlanHeader::new(vni);
                let udp = UdpHeader {
                    src_port: *source_port,
                    dst_port: *port,
                    length: 0,
                    checksum: 0,
                };
                let kind = match (source, destination) {
                    (IpAddr::V4(src), IpAddr::V4(dst)) => Kind::Vxlan4 {
                        ip: Ipv4Header {
                            tos,
                            total_len: 0,
                            ident: 0,
                            // Never fragmented: a PFC frame in VXLAN is 110 octets.
                            dont_fragment: true,
                            more_fragments: false,
                            fragment_offset: 0,
                            ttl: *ttl,
                            protocol: IpProtocol::UDP,
                            src: *src,
                            dst: *dst,
                            options: &[],
                        },
                        udp: UdpHeader {
                            checksum: u16::from(*ipv4_checksum),
                            ..udp
                        },
                        vxlan,
                    },
                    (IpAddr::V6(src), IpAddr::V6(dst)) => Kind::Vxlan6 {
                        ip: Ipv6Header {
                            traffic_class: tos,
                            flow_label: 0,
                            payload_len: 0,
                            next_header: IpProtocol::UDP,
                            hop_limit: *ttl,
                            src: *src,
                            dst: *dst,
                        },
                        udp,
                        vxlan,
                    },
                    _ => {
                        return Err(ConfigError::MixedFamilies {
                            local: *source,
                            remote: *destination,
                        })
                    }
                };
                (kind, Vec::new())
            }
            TunnelConfig::SrMpls {
                labels,
                control_word,
                ttl,
                ..
            } => {
                let bytes = encode_stack(labels, marking.mpls_tc, *ttl);
                LabelStack::from_bytes(&bytes).map_err(|_| ConfigError::NoLabels)?;
                let kind = Kind::Mpls {
                    control_word: *control_word,
                };
                (kind, bytes)
            }
        };
        Ok(Encapsulator { outer, kind, bytes })
    }

    /// The tunnel frame around `inner`.
    pub fn frame<'a>(&'a self, inner: &'a [u8]) -> TunnelFrame<'a> {
        let encap = match self.kind {
            Kind::Srv6 {
                ipv6,
                srh,
                segments_left,
            } => Encap::Srv6 {
                ipv6,
                srh: srh.then(|| Srh {
                    next_header: IpProtocol::ETHERNET,
                    segments_left,
                    flags: 0,
                    tag: 0,
                    // Our own encoding of a validated list, checked in new().
                    segments: SegmentList::from_bytes(&self.bytes)
                        .expect("segment list checked at construction"),
                    tlvs: &[],
                }),
            },
            Kind::Vxlan4 { ip, udp, vxlan } => Encap::Vxlan {
                ip: IpHeader::V4(ip),
                udp,
                vxlan,
            },
            Kind::Vxlan6 { ip, udp, vxlan } => Encap::Vxlan {
                ip: IpHeader::V6(ip),
                udp,
                vxlan,
            },
            Kind::Mpls { control_word } => Encap::Mpls {
                // Our own encoding of a validated stack, checked in new().
                labels: LabelStack::from_bytes(&self.bytes)
                    .expect("label stack checked at construction"),
                control_word: control_word.then(ControlWord::default),
            },
        };
        TunnelFrame {
            outer: self.outer,
            encap,
            inner,
        }
    }

    /// Octets of headers in front of the inner frame.
    pub fn header_len(&self) -> usize {
        self.frame(&[]).header_len()
    }

    /// Where the outer IP header starts, for a raw-IP sender; `None` for MPLS.
    pub fn ip_offset(&self) -> Option<usize> {
        self.frame(&[]).ip_offset()
    }
}

/// Recognizes our tunnel packets and takes the inner frame out.
#[derive(Debug, Clone)]
pub struct Decapsulator {
    port_mac: MacAddr,
    opts: ParseOptions,
    accept: Accept,
}

#[derive(Debug, Clone)]
enum Accept {
    Srv6 { local_sid: std::net::Ipv6Addr },
    Vxlan { local: IpAddr, vni: u32 },
    Mpls { local_label: u32, pop: Vec<u32> },
}

/// Why a WAN frame yielded no inner frame: the reason counted, and for a
/// malformed one the decode error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub reason: DropReason,
    pub error: Option<DecodeError>,
}

impl Refusal {
    fn because(reason: DropReason) -> Refusal {
        Refusal {
            reason,
            error: None,
        }
    }
}

impl Decapsulator {
    pub fn new(tunnel: &TunnelConfig, wan: &WanSide) -> Decapsulator {
        let (opts, accept) = match tunnel {
            TunnelConfig::Srv6 { local_sid, .. } => (
                ParseOptions::default(),
                Accept::Srv6 {
                    local_sid: *local_sid,
                },
            ),
            TunnelConfig::Vxlan {
                source, vni, port, ..
            } => (
                ParseOptions {
                    vxlan_port: *port,
                    ..ParseOptions::default()
                },
                Accept::Vxlan {
                    local: *source,
                    vni: *vni,
                },
            ),
            TunnelConfig::SrMpls {
                local_label,
                pop_labels,
                control_word,
                ..
            } => (
                ParseOptions {
                    control_word: *control_word,
                    ..ParseOptions::default()
                },
                Accept::Mpls {
                    local_label: *local_label,
                    pop: pop_labels.clone(),
                },
            ),
        };
        Decapsulator {
            port_mac: wan.port_mac,
            opts,
            accept,
        }
    }

    pub fn options(&self) -> &ParseOptions {
        &self.opts
    }

    /// The inner frame of `frame` if it is our tunnel, addressed to us.
    pub fn decapsulate<'a>(&self, frame: &'a [u8]) -> Result<&'a [u8], Refusal> {
        let t = TunnelFrame::parse(frame, &self.opts).map_err(|e| Refusal {
            reason: match e.kind {
                DecodeErrorKind::NotThisProtocol { .. } => DropReason::NotTunnel,
                _ => DropReason::MalformedTunnel,
            },
            error: Some(e),
        })?;
        if t.outer.dst != self.port_mac {
            return Err(Refusal::because(DropReason::NotForUs));
        }
        match (&self.accept, t.encap) {
            (Accept::Srv6 { local_sid }, Encap::Srv6 { ipv6, srh }) => {
                if ipv6.dst != *local_sid {
                    return Err(Refusal::because(DropReason::NotForUs));
                }
                if srh.is_some_and(|s| s.segments_left > 0) {
                    return Err(Refusal::because(DropReason::SegmentsLeft));
                }
            }
            (Accept::Vxlan { local, vni }, Encap::Vxlan { ip, vxlan, .. }) => {
                let dst = match ip {
                    IpHeader::V4(h) => IpAddr::V4(h.dst),
                    IpHeader::V6(h) => IpAddr::V6(h.dst),
                };
                if dst != *local || vxlan.vni.get() != *vni {
                    return Err(Refusal::because(DropReason::NotForUs));
                }
            }
            (Accept::Mpls { local_label, pop }, Encap::Mpls { labels, .. }) => {
                let bottom = labels.bottom().map(|e| e.label);
                let above_ok = labels.iter().take(labels.len() - 1).all(|e| {
                    e.label == LABEL_IPV4_EXPLICIT_NULL
                        || e.label == LABEL_IPV6_EXPLICIT_NULL
                        || pop.contains(&e.label)
                });
                if bottom != Some(*local_label) || !above_ok {
                    return Err(Refusal::because(DropReason::NotForUs));
                }
            }
            _ => return Err(Refusal::because(DropReason::NotForUs)),
        }
        Ok(t.inner)
    }
}

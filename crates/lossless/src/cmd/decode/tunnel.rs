//! Frames inside the PFC relay's tunnels (draft-he-rtgwg-wan-pfc-00): SRv6 with or
//! without an SRH, VXLAN over IPv4 or IPv6, SR-MPLS over an Ethernet pseudowire.
//! Recognising one ([`recognise`]), its headers as JSON ([`TunnelJson`]) and as text
//! ([`describe`]). The parsing is the relay's own, `lossless_wire::tunnel`.

use std::net::{IpAddr, Ipv6Addr};

use lossless_wire::tunnel::ipv4::ETHERTYPE_IPV4;
use lossless_wire::tunnel::ipv6::ETHERTYPE_IPV6;
use lossless_wire::tunnel::mpls::ETHERTYPE_MPLS;
use lossless_wire::tunnel::{Encap, IpHeader, ParseOptions, TunnelFrame};
use lossless_wire::{DecodeError, DecodeErrorKind};
use serde::Serialize;

use super::names;

/// What a frame of an IP or MPLS Ethertype is, as far as tunnels go.
pub enum Recognised<'a> {
    Tunnel(TunnelFrame<'a>),
    /// A tunnel by its outer headers (the VXLAN port, an SRH carrying Ethernet, an
    /// MPLS pseudowire) whose bytes are malformed.
    Malformed(DecodeError),
    /// Other IP or MPLS traffic, or a frame cut short by the snap length.
    NotTunnel,
}

/// Field prefixes that only a tunnel reaches: an error there is a malformed
/// tunnel, an error before them (the IP header of any packet) is not ours to judge.
const TUNNEL_FIELDS: [&str; 4] = ["ipv6.routing", "udp.", "vxlan.", "mpls."];

/// Parses `data` (a whole frame) as a relay tunnel when its Ethertype may be one.
/// `complete`: the capture holds the whole frame (no snap length cut).
pub fn recognise<'a>(
    data: &'a [u8],
    ethertype: u16,
    complete: bool,
    opts: &ParseOptions,
) -> Recognised<'a> {
    if !matches!(ethertype, ETHERTYPE_IPV4 | ETHERTYPE_IPV6 | ETHERTYPE_MPLS) {
        return Recognised::NotTunnel;
    }
    match TunnelFrame::parse(data, opts) {
        Ok(t) => Recognised::Tunnel(t),
        Err(e) if matches!(e.kind, DecodeErrorKind::NotThisProtocol { .. }) => {
            Recognised::NotTunnel
        }
        Err(e) if complete && TUNNEL_FIELDS.iter().any(|f| e.field.starts_with(f)) => {
            Recognised::Malformed(e)
        }
        Err(_) => Recognised::NotTunnel,
    }
}

/// The tunnel headers, `kind` first: `"srv6"`, `"vxlan"` or `"sr-mpls"`.
#[derive(Debug, Serialize)]
#[serde(tag = "kind")]
pub enum TunnelJson {
    #[serde(rename = "srv6")]
    Srv6 {
        src: Ipv6Addr,
        dst: Ipv6Addr,
        dscp: u8,
        ecn: u8,
        flow_label: u32,
        hop_limit: u8,
        /// Absent in the reduced form (one segment, no SRH).
        #[serde(skip_serializing_if = "Option::is_none")]
        srh: Option<SrhJson>,
    },
    #[serde(rename = "vxlan")]
    Vxlan {
        ip_version: u8,
        src: IpAddr,
        dst: IpAddr,
        dscp: u8,
        ecn: u8,
        /// IPv4 TTL or IPv6 hop limit.
        ttl: u8,
        src_port: u16,
        dst_port: u16,
        vni: u32,
    },
    #[serde(rename = "sr-mpls")]
    Mpls {
        /// Top of the stack first.
        labels: Vec<LabelJson>,
        #[serde(skip_serializing_if = "Option::is_none")]
        control_word: Option<ControlWordJson>,
    },
}

#[derive(Debug, Serialize)]
pub struct SrhJson {
    segments_left: u8,
    /// As in the header: Segment List[0] (the last segment of the path) first.
    segments: Vec<Ipv6Addr>,
    tag: u16,
}

#[derive(Debug, Serialize)]
pub struct LabelJson {
    label: u32,
    tc: u8,
    ttl: u8,
    bottom: bool,
}

#[derive(Debug, Serialize)]
pub struct ControlWordJson {
    sequence: u16,
}

impl TunnelJson {
    pub fn new(encap: &Encap<'_>) -> TunnelJson {
        match encap {
            Encap::Srv6 { ipv6, srh } => TunnelJson::Srv6 {
                src: ipv6.src,
                dst: ipv6.dst,
                dscp: ipv6.traffic_class >> 2,
                ecn: ipv6.traffic_class & 3,
                flow_label: ipv6.flow_label,
                hop_limit: ipv6.hop_limit,
                srh: srh.as_ref().map(|s| SrhJson {
                    segments_left: s.segments_left,
                    segments: s.segments.iter().collect(),
                    tag: s.tag,
                }),
            },
            Encap::Vxlan { ip, udp, vxlan } => {
                let (ip_version, src, dst, tos, ttl) = match ip {
                    IpHeader::V4(h) => (4, h.src.into(), h.dst.into(), h.tos, h.ttl),
                    IpHeader::V6(h) => {
                        (6, h.src.into(), h.dst.into(), h.traffic_class, h.hop_limit)
                    }
                };
                TunnelJson::Vxlan {
                    ip_version,
                    src,
                    dst,
                    dscp: tos >> 2,
                    ecn: tos & 3,
                    ttl,
                    src_port: udp.src_port,
                    dst_port: udp.dst_port,
                    vni: vxlan.vni.get(),
                }
            }
            Encap::Mpls {
                labels,
                control_word,
            } => TunnelJson::Mpls {
                labels: labels
                    .iter()
                    .map(|l| LabelJson {
                        label: l.label,
                        tc: l.tc,
                        ttl: l.ttl,
                        bottom: l.bos,
                    })
                    .collect(),
                control_word: control_word.map(|c| ControlWordJson {
                    sequence: c.sequence,
                }),
            },
        }
    }
}

/// The DSCP of a TOS / traffic class octet: `48 (CS6)`.
fn dscp(tos: u8) -> String {
    names::dscp(tos >> 2)
}

/// The tunnel headers in one line:
/// `srv6 fc00::e2 -> fc00::e1:d2, dscp 48 (CS6), hop limit 64, SRH segments left 0 [fc00::e1:d2]`.
pub fn describe(encap: &Encap<'_>) -> String {
    match encap {
        Encap::Srv6 { ipv6, srh } => {
            let mut s = format!(
                "srv6 {} -> {}, dscp {}, hop limit {}",
                ipv6.src,
                ipv6.dst,
                dscp(ipv6.traffic_class),
                ipv6.hop_limit
            );
            match srh {
                Some(srh) => {
                    let list: Vec<String> = srh.segments.iter().map(|a| a.to_string()).collect();
                    s.push_str(&format!(
                        ", SRH segments left {} [{}]",
                        srh.segments_left,
                        list.join(", ")
                    ));
                }
                None => s.push_str(", no SRH (reduced)"),
            }
            s
        }
        Encap::Vxlan { ip, udp, vxlan } => {
            let (ip, ttl) = match ip {
                IpHeader::V4(h) => (
                    format!("ipv4 {} -> {}, dscp {}", h.src, h.dst, dscp(h.tos)),
                    format!("ttl {}", h.ttl),
                ),
                IpHeader::V6(h) => (
                    format!(
                        "ipv6 {} -> {}, dscp {}",
                        h.src,
                        h.dst,
                        dscp(h.traffic_class)
                    ),
                    format!("hop limit {}", h.hop_limit),
                ),
            };
            format!(
                "vxlan vni {}, udp {} -> {}, {ip}, {ttl}",
                vxlan.vni.get(),
                udp.src_port,
                udp.dst_port
            )
        }
        Encap::Mpls {
            labels,
            control_word,
        } => {
            let stack: Vec<String> = labels
                .iter()
                .map(|l| {
                    let bottom = if l.bos { ", bottom" } else { "" };
                    format!("{} (tc {}, ttl {}{bottom})", l.label, l.tc, l.ttl)
                })
                .collect();
            let cw = match control_word {
                Some(c) => format!(", control word sequence {}", c.sequence),
                None => ", no control word".to_string(),
            };
            format!("sr-mpls labels {}{cw}", stack.join(", "))
        }
    }
}

//! A whole encapsulated frame: outer Ethernet header, tunnel headers, and the
//! carried Ethernet frame, as one `Repr`.
//!
//! ```text
//! SRv6:     Ethernet | IPv6 (nh 43) | SRH (nh 143) | inner frame
//! SRv6 red: Ethernet | IPv6 (nh 143)               | inner frame
//! VXLAN:    Ethernet | IPv4 or IPv6 | UDP | VXLAN  | inner frame
//! SR-MPLS:  Ethernet (0x8847) | labels ... S=1 | [control word] | inner frame
//! ```
//!
//! [`TunnelFrame::emit`] computes what the structure implies: the outer
//! Ethertype, IP next header / protocol, every length, the IPv4 header
//! checksum and the UDP checksum (always over IPv6; over IPv4 only when the
//! header's checksum field is nonzero, zero meaning "none"). The values of
//! those fields in the headers given are ignored, so a parsed frame re-emits
//! byte for byte except for link padding after the IP packet, which is not
//! part of it.

use super::ip::IpProtocol;
use super::ipv4::{Ipv4Header, ETHERTYPE_IPV4};
use super::ipv6::{Ipv6Header, ETHERTYPE_IPV6, HEADER_LEN as IPV6_LEN};
use super::mpls::{ControlWord, LabelStack, ETHERTYPE_MPLS};
use super::srh::Srh;
use super::udp::{self, UdpHeader, HEADER_LEN as UDP_LEN};
use super::vxlan::{VxlanHeader, HEADER_LEN as VXLAN_LEN, VXLAN_PORT};
use crate::codec::Writer;
use crate::ethernet::EthernetHeader;
use crate::{DecodeError, DecodeErrorKind};

/// The IP header under VXLAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpHeader<'a> {
    V4(Ipv4Header<'a>),
    V6(Ipv6Header),
}

impl IpHeader<'_> {
    pub fn buffer_len(&self) -> usize {
        match self {
            IpHeader::V4(h) => h.buffer_len(),
            IpHeader::V6(h) => h.buffer_len(),
        }
    }
}

/// The tunnel headers between the outer Ethernet header and the inner frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encap<'a> {
    /// SRv6 L2 encapsulation (H.Encaps.L2): IPv6, then an SRH whose next
    /// header is Ethernet, or no SRH at all (the reduced form, IPv6 next
    /// header Ethernet, which the kernel's `l2encap.red` sends for one SID).
    Srv6 {
        ipv6: Ipv6Header,
        srh: Option<Srh<'a>>,
    },
    /// VXLAN over UDP over IPv4 or IPv6.
    Vxlan {
        ip: IpHeader<'a>,
        udp: UdpHeader,
        vxlan: VxlanHeader,
    },
    /// An MPLS label stack over an Ethernet pseudowire.
    Mpls {
        labels: LabelStack<'a>,
        control_word: Option<ControlWord>,
    },
}

impl Encap<'_> {
    /// Octets of tunnel headers (after the outer Ethernet header).
    pub fn buffer_len(&self) -> usize {
        match self {
            Encap::Srv6 { srh, .. } => IPV6_LEN + srh.as_ref().map_or(0, Srh::buffer_len),
            Encap::Vxlan { ip, .. } => ip.buffer_len() + UDP_LEN + VXLAN_LEN,
            Encap::Mpls {
                labels,
                control_word,
            } => labels.buffer_len() + control_word.as_ref().map_or(0, ControlWord::buffer_len),
        }
    }

    /// The outer Ethertype this encapsulation needs.
    pub fn ethertype(&self) -> u16 {
        match self {
            Encap::Srv6 { .. } => ETHERTYPE_IPV6,
            Encap::Vxlan {
                ip: IpHeader::V4(_),
                ..
            } => ETHERTYPE_IPV4,
            Encap::Vxlan {
                ip: IpHeader::V6(_),
                ..
            } => ETHERTYPE_IPV6,
            Encap::Mpls { .. } => ETHERTYPE_MPLS,
        }
    }
}

/// What a receiver must know that the bytes do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// UDP destination port taken as VXLAN (IANA: 4789; Linux's default
    /// `vxlan` device: 8472).
    pub vxlan_port: u16,
    /// Whether an MPLS payload starts with a control word: nothing on the
    /// wire says, both ends are configured alike.
    pub control_word: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            vxlan_port: VXLAN_PORT,
            control_word: true,
        }
    }
}

/// An encapsulated Ethernet frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunnelFrame<'a> {
    /// The outer (WAN) Ethernet header; its Ethertype is derived on emit.
    pub outer: EthernetHeader,
    pub encap: Encap<'a>,
    /// The carried frame, from its destination MAC, without FCS.
    pub inner: &'a [u8],
}

fn not_this(offset: usize, field: &'static str, reason: &'static str) -> DecodeError {
    DecodeError::new(offset, field, DecodeErrorKind::NotThisProtocol { reason })
}

/// How far `rest` (a suffix of `whole`) starts into it.
fn consumed(whole: &[u8], rest: &[u8]) -> usize {
    whole.len() - rest.len()
}

impl<'a> TunnelFrame<'a> {
    /// Parses a frame from its destination MAC. Errors count offsets from
    /// there. A well-formed frame that is not a tunnel this module knows
    /// (another Ethertype, IP protocol or UDP port) is `NotThisProtocol`, so
    /// a receiver can tell other traffic from a malformed tunnel.
    pub fn parse(frame: &'a [u8], opts: &ParseOptions) -> Result<TunnelFrame<'a>, DecodeError> {
        let (outer, h) = EthernetHeader::parse(frame)?;
        let rest = frame.get(h..).unwrap_or(&[]);
        let (encap, inner) = match outer.ethertype {
            ETHERTYPE_IPV6 => parse_ipv6(rest, h, opts)?,
            ETHERTYPE_IPV4 => parse_ipv4(rest, h, opts)?,
            ETHERTYPE_MPLS => parse_mpls(rest, h, opts)?,
            _ => {
                return Err(not_this(
                    h - 2,
                    "eth.type",
                    "Ethertype is not IPv4, IPv6 or MPLS unicast",
                ))
            }
        };
        Ok(TunnelFrame {
            outer,
            encap,
            inner,
        })
    }

    /// Where the outer IP header starts (for a sender on a raw IP socket),
    /// `None` for MPLS.
    pub fn ip_offset(&self) -> Option<usize> {
        match self.encap {
            Encap::Mpls { .. } => None,
            _ => Some(self.outer.buffer_len()),
        }
    }

    /// Octets before the inner frame.
    pub fn header_len(&self) -> usize {
        self.outer.buffer_len() + self.encap.buffer_len()
    }

    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.inner.len()
    }

    /// Writes `buffer_len()` bytes and returns that count, computing the
    /// derived fields listed in the module docs. Panics if `buf` is shorter.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let total = self.buffer_len();
        let buf = &mut buf[..total];
        let outer = EthernetHeader {
            ethertype: self.encap.ethertype(),
            ..self.outer
        };
        let h = outer.buffer_len();
        outer.emit(buf);
        let inner_len = self.inner.len();
        let mut w = Writer::new(&mut buf[h..]);
        match &self.encap {
            Encap::Srv6 { ipv6, srh } => {
                let srh_len = srh.as_ref().map_or(0, Srh::buffer_len);
                let ip = Ipv6Header {
                    payload_len: (srh_len + inner_len) as u16,
                    next_header: if srh.is_some() {
                        IpProtocol::ROUTING
                    } else {
                        IpProtocol::ETHERNET
                    },
                    ..*ipv6
                };
                ip.emit(w.rest_mut());
                w.advance(IPV6_LEN);
                if let Some(srh) = srh {
                    let srh = Srh {
                        next_header: IpProtocol::ETHERNET,
                        ..*srh
                    };
                    srh.emit(w.rest_mut());
                    w.advance(srh_len);
                }
                w.put(self.inner);
            }
            Encap::Vxlan { ip, udp, vxlan } => {
                let udp_len = UDP_LEN + VXLAN_LEN + inner_len;
                let ip_len = ip.buffer_len();
                match ip {
                    IpHeader::V4(v4) => Ipv4Header {
                        total_len: (ip_len + udp_len) as u16,
                        protocol: IpProtocol::UDP,
                        ..*v4
                    }
                    .emit(w.rest_mut()),
                    IpHeader::V6(v6) => Ipv6Header {
                        payload_len: udp_len as u16,
                        next_header: IpProtocol::UDP,
                        ..*v6
                    }
                    .emit(w.rest_mut()),
                }
                w.advance(ip_len);
                UdpHeader {
                    length: udp_len as u16,
                    checksum: 0,
                    ..*udp
                }
                .emit(w.rest_mut());
                w.advance(UDP_LEN);
                vxlan.emit(w.rest_mut());
                w.advance(VXLAN_LEN);
                w.put(self.inner);
                let datagram = &mut buf[h + ip_len..];
                match ip {
                    IpHeader::V6(v6) => udp::fill_checksum_v6(&v6.src, &v6.dst, datagram),
                    IpHeader::V4(v4) if udp.checksum != 0 => {
                        udp::fill_checksum_v4(&v4.src, &v4.dst, datagram)
                    }
                    IpHeader::V4(_) => {}
                }
            }
            Encap::Mpls {
                labels,
                control_word,
            } => {
                labels.emit(w.rest_mut());
                w.advance(labels.buffer_len());
                if let Some(cw) = control_word {
                    cw.emit(w.rest_mut());
                    w.advance(cw.buffer_len());
                }
                w.put(self.inner);
            }
        }
        total
    }
}

fn parse_ipv6<'a>(
    data: &'a [u8],
    base: usize,
    opts: &ParseOptions,
) -> Result<(Encap<'a>, &'a [u8]), DecodeError> {
    let (ipv6, payload) = Ipv6Header::parse(data).map_err(|e| e.shifted(base))?;
    let pbase = base + IPV6_LEN;
    match ipv6.next_header {
        IpProtocol::ROUTING => {
            let (srh, inner) = Srh::parse(payload).map_err(|e| e.shifted(pbase))?;
            if srh.next_header != IpProtocol::ETHERNET {
                return Err(not_this(
                    pbase,
                    "ipv6.routing.nxt",
                    "SRH next header is not Ethernet (143)",
                ));
            }
            Ok((
                Encap::Srv6 {
                    ipv6,
                    srh: Some(srh),
                },
                inner,
            ))
        }
        IpProtocol::ETHERNET => Ok((Encap::Srv6 { ipv6, srh: None }, payload)),
        IpProtocol::UDP => {
            let verify = |d: &[u8]| udp::verify_v6(&ipv6.src, &ipv6.dst, d);
            let (udp, vxlan, inner) = parse_vxlan_udp(payload, pbase, opts, verify)?;
            Ok((
                Encap::Vxlan {
                    ip: IpHeader::V6(ipv6),
                    udp,
                    vxlan,
                },
                inner,
            ))
        }
        _ => Err(not_this(
            base + 6,
            "ipv6.nxt",
            "next header is not Routing/SRH (43), Ethernet (143) or UDP (17)",
        )),
    }
}

/// A UDP Length shorter than the IP payload leaves bytes that belong to
/// neither; Linux trims them, but in a tunnel they can only be corruption,
/// and a frame kept with them could not be re-emitted as it came.
fn udp_fills_packet(header: &UdpHeader, ip_payload: &[u8], base: usize) -> Result<(), DecodeError> {
    let length = usize::from(header.length);
    if length != ip_payload.len() {
        return Err(DecodeError::new(
            base + 4,
            "udp.length",
            DecodeErrorKind::BadLength {
                length,
                expected: ip_payload.len(),
            },
        ));
    }
    Ok(())
}

fn parse_ipv4<'a>(
    data: &'a [u8],
    base: usize,
    opts: &ParseOptions,
) -> Result<(Encap<'a>, &'a [u8]), DecodeError> {
    let (ipv4, payload) = Ipv4Header::parse(data).map_err(|e| e.shifted(base))?;
    if ipv4.is_fragment() {
        return Err(DecodeError::new(
            base + 6,
            "ip.frag_offset",
            DecodeErrorKind::BadValue {
                value: (u64::from(ipv4.more_fragments) << 13) | u64::from(ipv4.fragment_offset),
                reason: "a fragment: tunnel packets are not reassembled",
            },
        ));
    }
    if ipv4.protocol != IpProtocol::UDP {
        return Err(not_this(base + 9, "ip.proto", "protocol is not UDP (17)"));
    }
    let pbase = base + ipv4.buffer_len();
    let verify = |d: &[u8]| udp::verify_v4(&ipv4.src, &ipv4.dst, d);
    let (udp, vxlan, inner) = parse_vxlan_udp(payload, pbase, opts, verify)?;
    Ok((
        Encap::Vxlan {
            ip: IpHeader::V4(ipv4),
            udp,
            vxlan,
        },
        inner,
    ))
}

/// The UDP datagram of a VXLAN packet, at `pbase` in the frame: the VXLAN
/// port, a length that fills the IP payload, the checksum (`verify`, over
/// the IP version's pseudo-header), then the VXLAN header and the inner
/// frame.
fn parse_vxlan_udp<'a>(
    datagram: &'a [u8],
    pbase: usize,
    opts: &ParseOptions,
    verify: impl FnOnce(&[u8]) -> Result<(), DecodeError>,
) -> Result<(UdpHeader, VxlanHeader, &'a [u8]), DecodeError> {
    let (header, body) = UdpHeader::parse(datagram).map_err(|e| e.shifted(pbase))?;
    if header.dst_port != opts.vxlan_port {
        return Err(not_this(
            pbase + 2,
            "udp.dstport",
            "UDP destination port is not the VXLAN port",
        ));
    }
    udp_fills_packet(&header, datagram, pbase)?;
    verify(datagram).map_err(|e| e.shifted(pbase))?;
    let (vxlan, inner) = VxlanHeader::parse(body).map_err(|e| e.shifted(pbase + UDP_LEN))?;
    Ok((header, vxlan, inner))
}

fn parse_mpls<'a>(
    data: &'a [u8],
    base: usize,
    opts: &ParseOptions,
) -> Result<(Encap<'a>, &'a [u8]), DecodeError> {
    let (labels, rest) = LabelStack::parse(data).map_err(|e| e.shifted(base))?;
    if !opts.control_word {
        return Ok((
            Encap::Mpls {
                labels,
                control_word: None,
            },
            rest,
        ));
    }
    let cw_base = base + consumed(data, rest);
    let (cw, inner) = ControlWord::parse(rest).map_err(|e| e.shifted(cw_base))?;
    Ok((
        Encap::Mpls {
            labels,
            control_word: Some(cw),
        },
        inner,
    ))
}

//! The UDP header (RFC 768) and its checksum over IPv4 and IPv6.
//!
//! Over IPv6 the checksum is mandatory (RFC 8200 section 8.1: "IPv6 receivers
//! must discard UDP packets containing a zero checksum"); RFC 6935/6936 relax
//! that for tunnels only where both ends are configured for it, and the Linux
//! VXLAN device refuses zero-checksum IPv6 packets unless `udp6zerocsumrx` is
//! set. So the relay always computes it over IPv6. Over IPv4, zero means "no
//! checksum", which RFC 7348 recommends for VXLAN.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::checksum::{pseudo_header_v4, pseudo_header_v6};
use super::ip::IpProtocol;
use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

pub const HEADER_LEN: usize = 8;
/// Offset of the checksum field in the header.
pub const CHECKSUM_OFFSET: usize = 6;

/// A UDP header. `length` covers header and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub length: u16,
    pub checksum: u16,
}

impl UdpHeader {
    /// Parses the header at the start of `data` (the IP payload) and returns
    /// it with its payload: `length - 8` bytes. The checksum is not verified
    /// here: it needs the IP addresses, see [`verify_v6`] and [`verify_v4`].
    pub fn parse(data: &[u8]) -> Result<(UdpHeader, &[u8]), DecodeError> {
        let mut r = Reader::new(data);
        let src_port = r.u16("udp.srcport")?;
        let dst_port = r.u16("udp.dstport")?;
        let len_at = r.offset();
        let length = r.u16("udp.length")?;
        let checksum = r.u16("udp.checksum")?;
        let len = usize::from(length);
        if len < HEADER_LEN {
            return Err(DecodeError::new(
                len_at,
                "udp.length",
                DecodeErrorKind::TooShort {
                    length: len,
                    minimum: HEADER_LEN,
                },
            ));
        }
        if len > data.len() {
            return Err(DecodeError::new(
                len_at,
                "udp.length",
                DecodeErrorKind::LengthBeyondContainer {
                    length: len,
                    available: data.len(),
                },
            ));
        }
        let payload = r.take(len - HEADER_LEN, "udp.payload")?;
        let header = UdpHeader {
            src_port,
            dst_port,
            length,
            checksum,
        };
        Ok((header, payload))
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes [`HEADER_LEN`] bytes, fields as given.
    pub fn emit(&self, buf: &mut [u8]) {
        let mut w = Writer::new(buf);
        w.u16(self.src_port);
        w.u16(self.dst_port);
        w.u16(self.length);
        w.u16(self.checksum);
    }
}

/// The checksum to write for `datagram` (UDP header and payload, its checksum
/// field counted as zero) over IPv6. A computed zero is sent as 0xffff (RFC
/// 768), since zero would mean "none".
pub fn checksum_v6(src: &Ipv6Addr, dst: &Ipv6Addr, datagram: &[u8]) -> u16 {
    let sum = pseudo_header_v6(src, dst, datagram.len() as u32, IpProtocol::UDP);
    let sum = add_without_checksum(sum, datagram);
    nonzero(sum.checksum())
}

/// As [`checksum_v6`], over IPv4.
pub fn checksum_v4(src: &Ipv4Addr, dst: &Ipv4Addr, datagram: &[u8]) -> u16 {
    let sum = pseudo_header_v4(src, dst, datagram.len() as u16, IpProtocol::UDP);
    let sum = add_without_checksum(sum, datagram);
    nonzero(sum.checksum())
}

fn add_without_checksum(sum: super::checksum::Sum, datagram: &[u8]) -> super::checksum::Sum {
    let head = datagram.get(..CHECKSUM_OFFSET).unwrap_or(datagram);
    let tail = datagram.get(CHECKSUM_OFFSET + 2..).unwrap_or(&[]);
    sum.add_bytes(head).add_bytes(tail)
}

fn nonzero(c: u16) -> u16 {
    if c == 0 {
        0xffff
    } else {
        c
    }
}

/// Writes the IPv6 checksum into `datagram`'s checksum field.
pub fn fill_checksum_v6(src: &Ipv6Addr, dst: &Ipv6Addr, datagram: &mut [u8]) {
    let c = checksum_v6(src, dst, datagram);
    datagram[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&c.to_be_bytes());
}

/// Writes the IPv4 checksum into `datagram`'s checksum field.
pub fn fill_checksum_v4(src: &Ipv4Addr, dst: &Ipv4Addr, datagram: &mut [u8]) {
    let c = checksum_v4(src, dst, datagram);
    datagram[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&c.to_be_bytes());
}

/// Checks the checksum of `datagram` over IPv6; a zero checksum is refused.
/// Errors count offsets from the start of `datagram`.
pub fn verify_v6(src: &Ipv6Addr, dst: &Ipv6Addr, datagram: &[u8]) -> Result<(), DecodeError> {
    let found = stored(datagram)?;
    if found == 0 {
        return Err(DecodeError::new(
            CHECKSUM_OFFSET,
            "udp.checksum",
            DecodeErrorKind::BadValue {
                value: 0,
                reason: "zero UDP checksum over IPv6 (RFC 8200 8.1)",
            },
        ));
    }
    compare(checksum_v6(src, dst, datagram), found)
}

/// Checks the checksum of `datagram` over IPv4; zero ("none") passes.
pub fn verify_v4(src: &Ipv4Addr, dst: &Ipv4Addr, datagram: &[u8]) -> Result<(), DecodeError> {
    let found = stored(datagram)?;
    if found == 0 {
        return Ok(());
    }
    compare(checksum_v4(src, dst, datagram), found)
}

fn stored(datagram: &[u8]) -> Result<u16, DecodeError> {
    let mut r = Reader::new(datagram);
    r.take(CHECKSUM_OFFSET, "udp.srcport")?;
    r.u16("udp.checksum")
}

fn compare(computed: u16, found: u16) -> Result<(), DecodeError> {
    if computed == found {
        Ok(())
    } else {
        Err(DecodeError::new(
            CHECKSUM_OFFSET,
            "udp.checksum",
            DecodeErrorKind::Checksum { computed, found },
        ))
    }
}

/// Where a UDP datagram sits in an Ethernet frame, and the addresses its checksum
/// covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpInFrame {
    /// The datagram (header and payload) as offsets into the frame.
    pub range: std::ops::Range<usize>,
    pub addrs: IpPair,
}

/// Source and destination of the IP packet around a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpPair {
    V4(Ipv4Addr, Ipv4Addr),
    V6(Ipv6Addr, Ipv6Addr),
}

/// Finds the UDP datagram of a frame that is UDP over IPv4 or over IPv6 (without
/// extension headers), an 802.1Q tag allowed; None for anything else, or a header
/// that does not parse.
pub fn udp_in_frame(frame: &[u8]) -> Option<UdpInFrame> {
    let eth = crate::EthernetFrame::new_checked(frame).ok()?;
    let at = eth.header_len();
    let (ip_len, addrs, ip_payload) = match eth.ethertype() {
        super::ipv4::ETHERTYPE_IPV4 => {
            let (ip, payload) = super::Ipv4Header::parse(eth.payload()).ok()?;
            if ip.protocol != IpProtocol::UDP || ip.is_fragment() {
                return None;
            }
            (ip.buffer_len(), IpPair::V4(ip.src, ip.dst), payload)
        }
        super::ipv6::ETHERTYPE_IPV6 => {
            let (ip, payload) = super::Ipv6Header::parse(eth.payload()).ok()?;
            if ip.next_header != IpProtocol::UDP {
                return None;
            }
            (ip.buffer_len(), IpPair::V6(ip.src, ip.dst), payload)
        }
        _ => return None,
    };
    let (udp, _) = UdpHeader::parse(ip_payload).ok()?;
    let start = at + ip_len;
    Some(UdpInFrame {
        range: start..start + usize::from(udp.length),
        addrs,
    })
}

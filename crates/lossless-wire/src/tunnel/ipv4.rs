//! The IPv4 header (RFC 791 section 3.1), for VXLAN over IPv4.
//!
//! ```text
//! |Version|  IHL  |Type of Service|          Total Length         |
//! |         Identification        |Flags|      Fragment Offset    |
//! |  Time to Live |    Protocol   |         Header Checksum       |
//! |                       Source Address                          |
//! |                    Destination Address                        |
//! |                    Options                    |    Padding    |
//! ```

use std::net::Ipv4Addr;

use super::checksum::Sum;
use super::ip::IpProtocol;
use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// The header without options.
pub const MIN_HEADER_LEN: usize = 20;
/// IHL is 4 bits of 32-bit words.
pub const MAX_HEADER_LEN: usize = 60;
const CHECKSUM_OFFSET: usize = 10;

/// An IPv4 header. The reserved flag bit is ignored on receipt and written
/// as zero; the checksum is verified by [`Ipv4Header::parse`] and computed by
/// [`Ipv4Header::emit`], so it is not a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Header<'a> {
    /// DSCP (high 6 bits) and ECN (low 2 bits).
    pub tos: u8,
    /// Header plus payload, octets.
    pub total_len: u16,
    pub ident: u16,
    pub dont_fragment: bool,
    pub more_fragments: bool,
    /// In 8-octet units, 13 bits.
    pub fragment_offset: u16,
    pub ttl: u8,
    pub protocol: IpProtocol,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// Options and padding, as received: a multiple of 4 octets, at most 40.
    pub options: &'a [u8],
}

impl<'a> Ipv4Header<'a> {
    /// Parses the header at the start of `data` and returns it with its
    /// payload, cut to Total Length (what follows is link padding).
    pub fn parse(data: &'a [u8]) -> Result<(Ipv4Header<'a>, &'a [u8]), DecodeError> {
        let mut r = Reader::new(data);
        let vihl = r.u8("ip.version")?;
        let version = vihl >> 4;
        if version != 4 {
            return Err(DecodeError::new(
                0,
                "ip.version",
                DecodeErrorKind::BadValue {
                    value: version.into(),
                    reason: "IP version is not 4",
                },
            ));
        }
        let header_len = usize::from(vihl & 0x0f) * 4;
        if header_len < MIN_HEADER_LEN {
            return Err(DecodeError::new(
                0,
                "ip.hdr_len",
                DecodeErrorKind::TooShort {
                    length: header_len,
                    minimum: MIN_HEADER_LEN,
                },
            ));
        }
        let tos = r.u8("ip.dsfield")?;
        let len_at = r.offset();
        let total_len = r.u16("ip.len")?;
        let ident = r.u16("ip.id")?;
        let frag = r.u16("ip.flags")?;
        let ttl = r.u8("ip.ttl")?;
        let protocol = IpProtocol(r.u8("ip.proto")?);
        let found = r.u16("ip.checksum")?;
        let src = Ipv4Addr::from(r.array::<4>("ip.src")?);
        let dst = Ipv4Addr::from(r.array::<4>("ip.dst")?);
        let options = r.take(header_len - MIN_HEADER_LEN, "ip.options")?;
        let total = usize::from(total_len);
        if total < header_len {
            return Err(DecodeError::new(
                len_at,
                "ip.len",
                DecodeErrorKind::TooShort {
                    length: total,
                    minimum: header_len,
                },
            ));
        }
        if total > data.len() {
            return Err(DecodeError::new(
                len_at,
                "ip.len",
                DecodeErrorKind::LengthBeyondContainer {
                    length: total,
                    available: data.len(),
                },
            ));
        }
        let header_bytes = data.get(..header_len).unwrap_or(&[]);
        if !Sum::new().add_bytes(header_bytes).verifies() {
            let computed = Sum::new()
                .add_bytes(header_bytes.get(..CHECKSUM_OFFSET).unwrap_or(&[]))
                .add_bytes(header_bytes.get(CHECKSUM_OFFSET + 2..).unwrap_or(&[]))
                .checksum();
            return Err(DecodeError::new(
                CHECKSUM_OFFSET,
                "ip.checksum",
                DecodeErrorKind::Checksum { computed, found },
            ));
        }
        let payload = r.take(total - header_len, "ip.len")?;
        let header = Ipv4Header {
            tos,
            total_len,
            ident,
            dont_fragment: frag & 0x4000 != 0,
            more_fragments: frag & 0x2000 != 0,
            fragment_offset: frag & 0x1fff,
            ttl,
            protocol,
            src,
            dst,
            options,
        };
        Ok((header, payload))
    }

    /// Whether this packet is a fragment (More Fragments or a nonzero offset).
    pub fn is_fragment(&self) -> bool {
        self.more_fragments || self.fragment_offset != 0
    }

    pub fn buffer_len(&self) -> usize {
        MIN_HEADER_LEN + self.options.len()
    }

    /// Writes `buffer_len()` bytes with a computed header checksum. Panics if
    /// `options` is not a multiple of 4 octets or longer than 40 (a caller
    /// bug: parsed headers never are).
    pub fn emit(&self, buf: &mut [u8]) {
        let len = self.buffer_len();
        assert!(
            self.options.len().is_multiple_of(4) && len <= MAX_HEADER_LEN,
            "IPv4 options of {} octets",
            self.options.len()
        );
        let mut w = Writer::new(buf);
        w.u8(0x40 | (len / 4) as u8);
        w.u8(self.tos);
        w.u16(self.total_len);
        w.u16(self.ident);
        w.u16(
            u16::from(self.dont_fragment) << 14
                | u16::from(self.more_fragments) << 13
                | (self.fragment_offset & 0x1fff),
        );
        w.u8(self.ttl);
        w.u8(self.protocol.0);
        w.u16(0);
        w.put(&self.src.octets());
        w.put(&self.dst.octets());
        w.put(self.options);
        let checksum = Sum::new().add_bytes(&buf[..len]).checksum();
        buf[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2].copy_from_slice(&checksum.to_be_bytes());
    }
}

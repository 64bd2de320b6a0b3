//! The IPv6 fixed header (RFC 8200 section 3).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! |Version| Traffic Class |           Flow Label                  |
//! |         Payload Length        |  Next Header  |   Hop Limit   |
//! |                  Source Address (128 bits)                    |
//! |                Destination Address (128 bits)                 |
//! ```

use std::net::Ipv6Addr;

use super::ip::IpProtocol;
use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

pub const ETHERTYPE_IPV6: u16 = 0x86dd;
pub const HEADER_LEN: usize = 40;
/// The Flow Label is 20 bits.
pub const FLOW_LABEL_MAX: u32 = 0x000f_ffff;

/// An IPv6 fixed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Header {
    /// DSCP (high 6 bits) and ECN (low 2 bits).
    pub traffic_class: u8,
    /// 20 bits; higher bits are dropped on emit.
    pub flow_label: u32,
    /// Octets after this header, extension headers included.
    pub payload_len: u16,
    pub next_header: IpProtocol,
    pub hop_limit: u8,
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
}

impl Ipv6Header {
    /// Parses the header at the start of `data` and returns it with its
    /// payload: exactly `payload_len` bytes. Bytes after those are link-layer
    /// padding and are not part of the packet.
    ///
    /// A jumbogram (payload length 0 with a Hop-by-Hop header, RFC 2675) is
    /// not special-cased: its payload is empty, so the next parser stops.
    pub fn parse(data: &[u8]) -> Result<(Ipv6Header, &[u8]), DecodeError> {
        let mut r = Reader::new(data);
        let at = r.offset();
        let word = r.u32("ipv6.version")?;
        let version = word >> 28;
        if version != 6 {
            return Err(DecodeError::new(
                at,
                "ipv6.version",
                DecodeErrorKind::BadValue {
                    value: version.into(),
                    reason: "IP version is not 6",
                },
            ));
        }
        let len_at = r.offset();
        let payload_len = r.u16("ipv6.plen")?;
        let next_header = IpProtocol(r.u8("ipv6.nxt")?);
        let hop_limit = r.u8("ipv6.hlim")?;
        let src = Ipv6Addr::from(r.array::<16>("ipv6.src")?);
        let dst = Ipv6Addr::from(r.array::<16>("ipv6.dst")?);
        let header = Ipv6Header {
            traffic_class: (word >> 20) as u8,
            flow_label: word & FLOW_LABEL_MAX,
            payload_len,
            next_header,
            hop_limit,
            src,
            dst,
        };
        let available = r.left();
        if usize::from(payload_len) > available {
            return Err(DecodeError::new(
                len_at,
                "ipv6.plen",
                DecodeErrorKind::LengthBeyondContainer {
                    length: payload_len.into(),
                    available,
                },
            ));
        }
        let payload = r.take(payload_len.into(), "ipv6.plen")?;
        Ok((header, payload))
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes [`HEADER_LEN`] bytes, fields as given.
    pub fn emit(&self, buf: &mut [u8]) {
        let mut w = Writer::new(buf);
        w.u32(6 << 28 | u32::from(self.traffic_class) << 20 | (self.flow_label & FLOW_LABEL_MAX));
        w.u16(self.payload_len);
        w.u8(self.next_header.0);
        w.u8(self.hop_limit);
        w.put(&self.src.octets());
        w.put(&self.dst.octets());
    }
}

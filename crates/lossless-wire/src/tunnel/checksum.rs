//! The Internet checksum (RFC 1071): the one's complement of the one's
//! complement sum of 16-bit big-endian words, used by the IPv4 header and by
//! UDP (with a pseudo-header of the enclosing IP header, RFC 768 / RFC 8200
//! section 8.1).

use std::net::{Ipv4Addr, Ipv6Addr};

use super::ip::IpProtocol;

/// A running one's complement sum. Add the covered bytes in order (any odd
/// byte is padded with a zero, so only the last chunk may be odd-sized), then
/// [`Sum::checksum`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sum(u64);

impl Sum {
    pub const fn new() -> Sum {
        Sum(0)
    }

    /// Adds `data` as big-endian 16-bit words; an odd last byte is the high
    /// byte of a word whose low byte is zero.
    pub fn add_bytes(mut self, data: &[u8]) -> Sum {
        let mut words = data.chunks_exact(2);
        for w in &mut words {
            self.0 += u64::from(u16::from_be_bytes([w[0], w[1]]));
        }
        if let [last] = words.remainder() {
            self.0 += u64::from(*last) << 8;
        }
        self
    }

    pub fn add_u16(mut self, v: u16) -> Sum {
        self.0 += u64::from(v);
        self
    }

    pub fn add_u32(self, v: u32) -> Sum {
        self.add_u16((v >> 16) as u16).add_u16(v as u16)
    }

    /// The sum folded to 16 bits (end-around carry).
    pub fn folded(self) -> u16 {
        let mut s = self.0;
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    /// The checksum to write: the complement of the folded sum.
    pub fn checksum(self) -> u16 {
        !self.folded()
    }

    /// Whether bytes that include their own checksum field verify: their
    /// sum folds to 0xffff.
    pub fn verifies(self) -> bool {
        self.folded() == 0xffff
    }
}

/// The UDP pseudo-header over IPv6 (RFC 8200 section 8.1): source, destination,
/// upper-layer packet length, next header.
pub fn pseudo_header_v6(src: &Ipv6Addr, dst: &Ipv6Addr, len: u32, next: IpProtocol) -> Sum {
    Sum::new()
        .add_bytes(&src.octets())
        .add_bytes(&dst.octets())
        .add_u32(len)
        .add_u16(u16::from(next.0))
}

/// The UDP pseudo-header over IPv4 (RFC 768): source, destination, zero,
/// protocol, UDP length.
pub fn pseudo_header_v4(src: &Ipv4Addr, dst: &Ipv4Addr, len: u16, protocol: IpProtocol) -> Sum {
    Sum::new()
        .add_bytes(&src.octets())
        .add_bytes(&dst.octets())
        .add_u16(u16::from(protocol.0))
        .add_u16(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 1071 section 3's example: the words 0001 f203 f4f5 f6f7 sum to
    /// ddf2 (folded), so the checksum is 220d.
    #[test]
    fn rfc1071_example() {
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let s = Sum::new().add_bytes(&data);
        assert_eq!(s.folded(), 0xddf2);
        assert_eq!(s.checksum(), 0x220d);
        assert!(s.add_u16(0x220d).verifies());
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(
            Sum::new().add_bytes(&[0x12, 0x34, 0x56]).folded(),
            Sum::new().add_bytes(&[0x12, 0x34, 0x56, 0x00]).folded()
        );
        assert_eq!(Sum::new().add_bytes(&[0xab]).folded(), 0xab00);
    }

    #[test]
    fn carries_wrap_around() {
        // 0xffff + 0x0002 = 0x1_0001 -> 0x0002.
        assert_eq!(Sum::new().add_u16(0xffff).add_u16(2).folded(), 0x0002);
        assert_eq!(Sum::new().add_u32(0x0001_ffff).folded(), 0x0001);
    }
}

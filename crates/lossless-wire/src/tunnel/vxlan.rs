//! The VXLAN header (RFC 7348 section 5).
//!
//! ```text
//! |R|R|R|R|I|R|R|R|            Reserved                           |
//! |                VXLAN Network Identifier (VNI) |   Reserved    |
//! ```
//!
//! "Flags (8 bits): where the I flag MUST be set to 1 for a valid VXLAN
//! Network ID (VNI). The other 7 bits (designated "R") are reserved fields and
//! MUST be set to zero on transmission and ignored on receipt." The outer UDP
//! destination port is 4789 (IANA); note that a Linux `vxlan` device created
//! without `dstport` uses 8472.

use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

/// The IANA-assigned VXLAN UDP port.
pub const VXLAN_PORT: u16 = 4789;
pub const HEADER_LEN: usize = 8;
/// The I flag: the VNI is valid.
pub const FLAG_VNI: u8 = 0x08;

/// A 24-bit VXLAN Network Identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Vni(u32);

impl Vni {
    pub const MAX: u32 = 0x00ff_ffff;

    /// `None` above 2^24 - 1.
    pub const fn new(v: u32) -> Option<Vni> {
        if v <= Vni::MAX {
            Some(Vni(v))
        } else {
            None
        }
    }

    pub const fn get(self) -> u32 {
        self.0
    }
}

/// A VXLAN header. The reserved fields mean nothing on receipt, but they
/// are kept as received: the UDP checksum covers them, so a header re-emitted
/// with them zeroed would no longer match its checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VxlanHeader {
    /// The flags octet as received; [`FLAG_VNI`] is always set in a parsed
    /// header. Other bits (GBP's G, D, A...) are kept so they round-trip.
    pub flags: u8,
    /// The 24 bits after the flags (zero on transmission).
    pub reserved: [u8; 3],
    pub vni: Vni,
    /// The 8 bits after the VNI (zero on transmission).
    pub reserved_low: u8,
}

impl VxlanHeader {
    /// A header with only the I flag set.
    pub const fn new(vni: Vni) -> VxlanHeader {
        VxlanHeader {
            flags: FLAG_VNI,
            reserved: [0; 3],
            vni,
            reserved_low: 0,
        }
    }

    /// Parses the header at the start of `data` (the UDP payload) and returns
    /// it with the inner Ethernet frame. A clear I flag is refused.
    pub fn parse(data: &[u8]) -> Result<(VxlanHeader, &[u8]), DecodeError> {
        let mut r = Reader::new(data);
        let flags_at = r.offset();
        let flags = r.u8("vxlan.flags")?;
        let reserved = r.array::<3>("vxlan.reserved")?;
        let word = r.u32("vxlan.vni")?;
        if flags & FLAG_VNI == 0 {
            return Err(DecodeError::new(
                flags_at,
                "vxlan.flag_i",
                DecodeErrorKind::BadValue {
                    value: flags.into(),
                    reason: "I flag clear: no valid VNI (RFC 7348 section 5)",
                },
            ));
        }
        let header = VxlanHeader {
            flags,
            reserved,
            vni: Vni(word >> 8),
            reserved_low: word as u8,
        };
        Ok((header, r.rest()))
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes [`HEADER_LEN`] bytes, fields as given.
    pub fn emit(&self, buf: &mut [u8]) {
        let mut w = Writer::new(buf);
        w.u8(self.flags);
        w.put(&self.reserved);
        w.u32(self.vni.0 << 8 | u32::from(self.reserved_low));
    }
}

//! Ethernet II header, with one 802.1Q tag tolerated.

use crate::MacAddr;

/// 802.1Q tag protocol identifier.
pub const TPID_8021Q: u16 = 0x8100;
/// Shortest Ethernet frame without FCS; shorter frames are padded on emit.
pub const MIN_FRAME_LEN: usize = 60;

/// An 802.1Q tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag {
    /// Priority code point, 0..=7.
    pub pcp: u8,
    pub dei: bool,
    /// VLAN id, 0..=4095 (0: priority tag only).
    pub vid: u16,
}

/// An Ethernet II header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetHeader {
    pub dst: MacAddr,
    pub src: MacAddr,
    pub vlan: Option<VlanTag>,
    pub ethertype: u16,
}

use crate::codec::{Reader, Writer};
use crate::DecodeError;

impl VlanTag {
    /// The 16-bit Tag Control Information: PCP (3 bits), DEI (1), VID (12).
    /// Out-of-range `pcp`/`vid` are masked to their field widths.
    pub fn tci(&self) -> u16 {
        ((self.pcp as u16 & 0x7) << 13) | ((self.dei as u16) << 12) | (self.vid & 0x0fff)
    }

    pub fn from_tci(tci: u16) -> Self {
        VlanTag {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0x0fff,
        }
    }
}

impl EthernetHeader {
    /// Parses the header at the start of `data`; returns it and its length (14,
    /// or 18 with one 802.1Q tag).
    ///
    /// Only one tag is taken off: a second one (QinQ) is left as the Ethertype
    /// 0x8100, so the caller sees "not LLDP" rather than a mis-parsed payload.
    /// A value below 0x0600 is an 802.3 length (STP BPDUs, LLC): it is kept
    /// in `ethertype` as is, so such frames pass through as "other traffic"
    /// instead of being counted as malformed.
    pub fn parse(data: &[u8]) -> Result<(EthernetHeader, usize), DecodeError> {
        let mut r = Reader::new(data);
        let dst = MacAddr(r.array("eth.dst")?);
        let src = MacAddr(r.array("eth.src")?);
        let mut ethertype = r.u16("eth.ethertype")?;
        let mut vlan = None;
        if ethertype == TPID_8021Q {
            vlan = Some(VlanTag::from_tci(r.u16("eth.vlan")?));
            ethertype = r.u16("eth.ethertype")?;
        }
        let header = EthernetHeader {
            dst,
            src,
            vlan,
            ethertype,
        };
        Ok((header, r.offset()))
    }

    pub fn buffer_len(&self) -> usize {
        if self.vlan.is_some() {
            18
        } else {
            14
        }
    }

    /// Writes `buffer_len()` bytes at the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        let mut w = Writer::new(buf);
        w.put(&self.dst.0);
        w.put(&self.src.0);
        if let Some(tag) = self.vlan {
            w.u16(TPID_8021Q);
            w.u16(tag.tci());
        }
        w.u16(self.ethertype);
    }
}

/// A checked view of an Ethernet frame in a buffer (smoltcp's `Frame` shape): once
/// [`EthernetFrame::new_checked`] passed, no accessor can go out of bounds, and an
/// 802.1Q tag is accounted for (the Ethertype and the payload are those behind it).
#[derive(Debug, Clone, Copy)]
pub struct EthernetFrame<T> {
    buffer: T,
    header: EthernetHeader,
    header_len: usize,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Checks that `buffer` holds a whole header (with its tag, if any).
    pub fn new_checked(buffer: T) -> Result<EthernetFrame<T>, DecodeError> {
        let (header, header_len) = EthernetHeader::parse(buffer.as_ref())?;
        Ok(EthernetFrame {
            buffer,
            header,
            header_len,
        })
    }

    pub fn header(&self) -> &EthernetHeader {
        &self.header
    }

    pub fn dst(&self) -> MacAddr {
        self.header.dst
    }

    pub fn src(&self) -> MacAddr {
        self.header.src
    }

    /// The Ethertype behind the tag, if there is one.
    pub fn ethertype(&self) -> u16 {
        self.header.ethertype
    }

    pub fn vlan(&self) -> Option<VlanTag> {
        self.header.vlan
    }

    /// 14, or 18 with a tag.
    pub fn header_len(&self) -> usize {
        self.header_len
    }

    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(self.header_len..).unwrap_or(&[])
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Rewrites the source MAC in place (a relay's SMAC rewrite).
    pub fn set_src(&mut self, mac: MacAddr) {
        if let Some(b) = self.buffer.as_mut().get_mut(6..12) {
            b.copy_from_slice(&mac.0);
            self.header.src = mac;
        }
    }

    /// Rewrites the destination MAC in place.
    pub fn set_dst(&mut self, mac: MacAddr) {
        if let Some(b) = self.buffer.as_mut().get_mut(0..6) {
            b.copy_from_slice(&mac.0);
            self.header.dst = mac;
        }
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        let at = self.header_len;
        self.buffer.as_mut().get_mut(at..).unwrap_or(&mut [])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_reads_behind_a_tag_and_rewrites_in_place() {
        let mut f = [0u8; 64];
        f[..6].copy_from_slice(&[1, 0x80, 0xc2, 0, 0, 1]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..16].copy_from_slice(&[0x81, 0x00, 0x60, 0x05]);
        f[16..18].copy_from_slice(&[0x88, 0x08]);
        let mut v = EthernetFrame::new_checked(&mut f[..]).expect("a tagged header");
        assert_eq!(v.ethertype(), 0x8808);
        assert_eq!(v.header_len(), 18);
        assert_eq!(v.vlan().map(|t| (t.pcp, t.vid)), Some((3, 5)));
        v.set_src(MacAddr([2, 0, 0, 0, 0, 9]));
        assert_eq!(v.payload().len(), 46);
        assert_eq!(f[6..12], [2, 0, 0, 0, 0, 9]);
        // Too short for its tag: refused, never read past the end.
        assert!(EthernetFrame::new_checked(&f[..16]).is_err());
        assert!(EthernetFrame::new_checked(&f[..13]).is_err());
    }
}

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

//! The legality rules of draft-he-rtgwg-wan-pfc-00 section 3.2 for a PFC frame,
//! shared by the egress PE (frames from its DC gateway), the ingress PE (frames out
//! of the tunnel) and the DC gateway (frames from its PE).
//!
//! "it needs to parse a PFC frame and determine that it is a legal PFC frame,
//! that is, besides its correct frame format, its destination MAC address must
//! be the multicast address: 0180-C200-0001 and the source MAC address must be
//! its directly connected downstream DC gateway port MAC address (some vendors
//! also use device system MAC address). Otherwise, the egress PE node must
//! discard this illegal PFC frame."
//!
//! "Correct frame format" is read as the draft's figure 1: Ethertype 0x8808,
//! opcode 0x0101, a class-enable vector whose high byte is 0x00, eight pause
//! times, padding to the minimum frame size (60 octets without FCS, 64 with an
//! 802.1Q tag, which some switches put on PFC). Checks run in that order, then
//! the destination, then (where a caller asks) the source, and the first that
//! fails is the reason counted.

use lossless_wire::ethernet::MIN_FRAME_LEN;
use lossless_wire::mac_control::{ETHERTYPE_MAC_CONTROL, OPCODE_PFC};
use lossless_wire::{EthernetHeader, MacAddr, VlanTag};
use serde::{Deserialize, Serialize};

use crate::DropReason;

/// Largest legal PFC frame: a tagged minimum-size frame without FCS.
pub const MAX_PFC_FRAME_LEN: usize = MIN_FRAME_LEN + 4;

/// A legal PFC frame, as far as its bytes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcFrame {
    pub dst: MacAddr,
    pub src: MacAddr,
    pub vlan: Option<VlanTag>,
    /// The class-enable vector's low byte: bit n enables priority n.
    pub class_enable: u8,
    /// Pause time per priority in quanta of 512 bit times; 0 resumes.
    /// Meaningful only where `class_enable` has the bit.
    pub quanta: [u16; 8],
    /// Offset of the opcode: 14, or 18 with a tag.
    pub header_len: usize,
}

impl PfcFrame {
    /// Offset of the class-enable vector in the frame.
    pub fn vector_offset(&self) -> usize {
        self.header_len + 2
    }

    /// Offset of the pause time of priority `p`.
    pub fn time_offset(&self, p: usize) -> usize {
        self.header_len + 4 + 2 * p
    }

    /// Whether the frame pauses (quanta > 0) priority `p`; `None` when it
    /// does not concern `p`.
    pub fn pauses(&self, p: usize) -> Option<bool> {
        (self.class_enable & (1 << p) != 0).then(|| self.quanta[p] != 0)
    }
}

/// Checks everything but the source MAC.
pub fn check_pfc(frame: &[u8]) -> Result<PfcFrame, DropReason> {
    let (header, h) = EthernetHeader::parse(frame).map_err(|_| DropReason::ShortFrame)?;
    if header.ethertype != ETHERTYPE_MAC_CONTROL {
        return Err(DropReason::NotMacControl);
    }
    let expected = MIN_FRAME_LEN + (h - 14);
    if frame.len() < expected {
        return Err(DropReason::ShortFrame);
    }
    if frame.len() > expected {
        return Err(DropReason::LongFrame);
    }
    // From here the frame holds opcode, vector and times: h + 20 <= 60.
    let word = |at: usize| u16::from_be_bytes([frame[at], frame[at + 1]]);
    if word(h) != OPCODE_PFC {
        return Err(DropReason::NotPfc);
    }
    let vector = word(h + 2);
    if vector & 0xff00 != 0 {
        return Err(DropReason::ClassVectorReserved);
    }
    if vector == 0 {
        return Err(DropReason::EmptyClassVector);
    }
    if header.dst != MacAddr::MAC_CONTROL {
        return Err(DropReason::BadDmac);
    }
    let mut quanta = [0u16; 8];
    for (p, q) in quanta.iter_mut().enumerate() {
        *q = word(h + 4 + 2 * p);
    }
    Ok(PfcFrame {
        dst: header.dst,
        src: header.src,
        vlan: header.vlan,
        class_enable: vector as u8,
        quanta,
        header_len: h,
    })
}

/// The source MACs a neighbour may send PFC from: its port MAC and,
/// optionally, its system (chassis) MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedSources {
    pub port_mac: MacAddr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_mac: Option<MacAddr>,
}

impl AllowedSources {
    pub fn allows(&self, mac: MacAddr) -> bool {
        mac == self.port_mac || self.system_mac == Some(mac)
    }

    /// All of [`check_pfc`], then the source MAC.
    pub fn check(&self, frame: &[u8]) -> Result<PfcFrame, DropReason> {
        let pfc = check_pfc(frame)?;
        if !self.allows(pfc.src) {
            return Err(DropReason::BadSmac);
        }
        Ok(pfc)
    }
}

/// Rewrites a legal PFC frame in place so that it enables only the priorities
/// in `keep` (a subset of its vector); the pause times of the others become 0.
pub(crate) fn restrict(frame: &mut [u8], pfc: &PfcFrame, keep: u8) {
    let v = pfc.vector_offset();
    frame[v] = 0;
    frame[v + 1] = keep;
    for p in 0..8 {
        if keep & (1 << p) == 0 {
            let t = pfc.time_offset(p);
            frame[t] = 0;
            frame[t + 1] = 0;
        }
    }
}

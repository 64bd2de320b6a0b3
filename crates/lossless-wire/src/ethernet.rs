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

//! Byte vectors shared by the integration tests.
//!
//! The five `LLDPAD_*` frames are CEE LLDPDUs of Debian's lldpad 1.1 (two
//! agents on a veth pair), captured once and copied here as hex so the tests
//! need neither a capture file nor tshark.
//! What tshark 4.0 decodes from them is asserted in `golden.rs`.
#![allow(dead_code)]

/// Frame 1: 02:00:00:00:00:0a, SeqNo 1 AckNo 0; PG 0,0,0,0,1,1,1,15 at 25/75 %
/// (Enable), PFC on 3 and 4 (Enable), APP FCoE->3 iSCSI->4 FIP->3 (Enable, Willing).
pub const LLDPAD_1: &str = "0180c200000e02000000000a88cc02070402000000000a04070302000000000a06020078fe43001b2102020a000000000001000000000411000080000000111f194b00000000000008060600008000180808160000c0008906001b21080cbc011b21108914001b21080000";
/// Frame 2: 02:00:00:00:00:0b, SeqNo 1 AckNo 1; lldpad defaults, all features Enable + Willing.
pub const LLDPAD_2: &str = "0180c200000e02000000000b88cc02070402000000000b04070302000000000b06020078fe43001b2102020a0000000000010000000104110000c000012345670d0d0d0d0c0c0c0c0806060000c000000808160000c0008906001b21080cbc011b21108914001b21080000";
/// Frame 3: as frame 1 with SeqNo 2 AckNo 1.
pub const LLDPAD_3: &str = "0180c200000e02000000000a88cc02070402000000000a04070302000000000a06020078fe43001b2102020a000000000002000000010411000080000000111f194b00000000000008060600008000180808160000c0008906001b21080cbc011b21108914001b21080000";
/// Frame 4: as frame 2 with SeqNo 1 AckNo 2.
pub const LLDPAD_4: &str = "0180c200000e02000000000b88cc02070402000000000b04070302000000000b06020078fe43001b2102020a0000000000010000000204110000c000012345670d0d0d0d0c0c0c0c0806060000c000000808160000c0008906001b21080cbc011b21108914001b21080000";
/// Frame 5: identical to frame 3 (the fast-transmit repeat).
pub const LLDPAD_5: &str = "0180c200000e02000000000a88cc02070402000000000a04070302000000000a06020078fe43001b2102020a000000000002000000010411000080000000111f194b00000000000008060600008000180808160000c0008906001b21080cbc011b21108914001b21080000";

pub const LLDPAD_FRAMES: [&str; 5] = [LLDPAD_1, LLDPAD_2, LLDPAD_3, LLDPAD_4, LLDPAD_5];

/// An example CEE DCBX TLV (whole org TLV, from the TLV header): SeqNo 7, AckNo 6;
/// PGIDs 0,0,0,1,1,1,15,2 at 25/75 %; PFC on priority 3; APP FCoE->3, iSCSI->4.
pub const REFERENCE_CEE_TLV: &str = "fe 3d 00 1b 21 02 02 0a 00 00 00 00 00 07 00 00 00 06 04 11 00 00 c0 00 00 01 11 f2 19 4b 00 00 00 00 00 00 08 06 06 00 00 a0 00 08 08 08 10 00 00 80 00 89 06 00 1b 21 08 0c bc 01 1b 21 30";

/// Ethernet header length of the lldpad frames (no VLAN tag).
pub const ETH_LEN: usize = 14;

pub fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s
        .bytes()
        .filter(|b| b.is_ascii_hexdigit())
        .map(|b| (b as char).to_digit(16).expect("hex digit") as u8)
        .collect();
    assert_eq!(digits.len() % 2, 0, "odd number of hex digits");
    digits.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
}

/// Wraps a CEE org TLV in a minimal LLDPDU: Chassis ID and Port ID of MAC
/// subtype, TTL 120, the TLV, End.
pub fn lldpdu_with(tlv: &[u8]) -> Vec<u8> {
    let mut v = hex("0207 04 020000000001 0407 03 020000000001 0602 0078");
    v.extend_from_slice(tlv);
    v.extend_from_slice(&[0, 0]);
    v
}

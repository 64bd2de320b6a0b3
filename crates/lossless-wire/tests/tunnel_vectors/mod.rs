//! Tunnel frames shared by the tunnel tests, and the helpers they parse and emit
//! them with.
//!
//! The `KERNEL_*` frames were sent by Linux 6.18 in network namespaces on veth
//! (TX checksum offload switched off, so the checksums on the wire are the
//! final ones) and captured with tshark 4.0.17, which decodes them as noted.
//! The others are written out by hand from the RFC layouts, field by field,
//! so they check the emitters against something the emitters did not make.
#![allow(dead_code)]

use std::net::Ipv6Addr;

use lossless_wire::tunnel::{ParseOptions, TunnelFrame};
use lossless_wire::{DecodeError, DecodeErrorKind, MacAddr};

/// The DC gateway that sends [`PFC`]: the inner source of every golden frame.
pub const GW: MacAddr = MacAddr([2, 0, 0, 0, 0x0d, 1]);

/// The parse options of the golden frames: the defaults (VXLAN on port 4789).
pub fn opts() -> ParseOptions {
    ParseOptions::default()
}

/// `f` parsed as a tunnel frame with [`opts`].
pub fn parse(f: &[u8]) -> Result<TunnelFrame<'_>, DecodeError> {
    TunnelFrame::parse(f, &opts())
}

/// The error `f` is refused with; panics when it parses.
pub fn err(f: &[u8]) -> DecodeError {
    parse(f).expect_err("must be refused")
}

/// The error expected at `offset` (from the outer destination MAC) in `field`.
pub fn de(offset: usize, field: &'static str, kind: DecodeErrorKind) -> DecodeError {
    DecodeError::new(offset, field, kind)
}

pub fn v6(s: &str) -> Ipv6Addr {
    s.parse().expect("IPv6 address")
}

/// The bytes `t` emits, checking it filled the buffer it asked for.
pub fn emit(t: &TunnelFrame) -> Vec<u8> {
    let mut out = vec![0u8; t.buffer_len()];
    assert_eq!(t.emit(&mut out), out.len());
    out
}

/// The literal of [`PFC`], for `concat!`.
macro_rules! pfc_hex {
    () => {
        "0180c2000001 020000000d01 8808 0101 0018 \
         0000 0000 0000 ffff ffff 0000 0000 0000 \
         0000000000000000000000000000000000000000000000000000"
    };
}

/// A PFC frame from a DC gateway: 02:00:00:00:0d:01 pauses priorities 3 and
/// 4 for 0xffff quanta (tshark: macc.opcode 0x0101, macc.cbfc.enbv 0x0018).
pub const PFC: &str = pfc_hex!();

/// `ip link add vx6 type vxlan id 4242 local fc00:1::e remote fc00:1::b
/// dstport 4789`; [`PFC`] written to vx6 with an AF_PACKET socket. tshark:
/// eth:ethertype:ipv6:udp:vxlan:eth:ethertype:macc, udp.srcport 44463,
/// udp.checksum 0x5120 [Good], vxlan.flags 0x0800, vxlan.vni 4242, hlim 64.
pub const KERNEL_VXLAN6: &str = "020000000b01020000000e0186dd60000000004c1140fc00000100000000000000000000000efc00000100000000000000000000000badaf12b5004c512008000000001092000180c2000001020000000d01880801010018000000000000ffffffff0000000000000000000000000000000000000000000000000000000000000000";

/// As [`KERNEL_VXLAN6`] over IPv4: `id 77 local 10.0.1.14 remote 10.0.1.11`.
/// tshark: ip.ttl 64, ip.flags.df 0, ip.id 0xe984, udp.checksum 0x7834 [Good]
/// (Linux 6.18 checksums IPv4 VXLAN by default), vxlan.vni 77.
pub const KERNEL_VXLAN4: &str = "020000000b01020000000e01080045000060e984000040117af00a00010e0a00010badaf12b5004c78340800000000004d000180c2000001020000000d01880801010018000000000000ffffffff0000000000000000000000000000000000000000000000000000000000000000";

/// `ip -6 route add fc00:c::/64 encap seg6 mode l2encap segs fc00:1::b dev
/// rppe1` on a router forwarding a UDP packet from fc00:a::1 to fc00:c::1: the
/// whole received frame (02:00:00:00:0a:01 -> 02:00:00:00:0e:00) in IPv6 + SRH.
/// tshark: ipv6.src fc00:1::e, ipv6.dst fc00:1::b, ipv6.flow 0x28816
/// (inherited from the inner IPv6 header), ipv6.hlim 63 (64, then forwarded),
/// ipv6.routing.len 2, .type 4, .segleft 0, .srh.last_entry 0, .srh.addr
/// fc00:1::b, next header 143; inner eth:ethertype:ipv6:udp.
pub const KERNEL_L2ENCAP: &str = "020000000b01020000000e0186dd60028816006a2b3ffc00000100000000000000000000000efc00000100000000000000000000000b8f02040000000000fc00000100000000000000000000000b020000000e00020000000a0186dd60028816001c1140fc00000a000000000000000000000001fc00000c000000000000000000000001dcfc0009001cf8467878787878787878787878787878787878787878";

/// By hand: [`PFC`] over SRv6 with two segments, path fc00::2:1 then
/// fc00::d2 (so Segment List[0] = fc00::d2, [1] = fc00::2:1, Segments Left 1,
/// Last Entry 1, destination fc00::2:1), traffic class 0xc0 (CS6), flow label
/// 0x12345, hop limit 64, source fc00::1, flags 0, tag 0x0007.
pub const SRV6_TWO_SEGMENTS: &str = concat!(
    "020000000b01 020000000e01 86dd \
    6c012345 0064 2b 40 \
    fc000000000000000000000000000001 \
    fc000000000000000000000000020001 \
    8f 04 04 01 01 00 0007 \
    fc0000000000000000000000000000d2 \
    fc000000000000000000000000020001 ",
    pfc_hex!()
);

/// By hand: [`PFC`] over SR-MPLS: label 16002 (TC 7, TTL 64), pseudowire
/// label 100 (TC 7, S, TTL 64), a zero control word.
pub const MPLS_CW: &str = concat!(
    "020000000b01 020000000e01 8847 03e82e40 00064f40 00000000 ",
    pfc_hex!()
);

pub fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s
        .bytes()
        .filter(|b| b.is_ascii_hexdigit())
        .map(|b| (b as char).to_digit(16).expect("hex digit") as u8)
        .collect();
    assert_eq!(digits.len() % 2, 0, "odd number of hex digits");
    digits.chunks(2).map(|p| p[0] << 4 | p[1]).collect()
}

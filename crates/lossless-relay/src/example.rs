//! The two-DC topology of draft-he-rtgwg-wan-pfc-00's figure 2 as ready configurations:
//! one place for the tests, the benchmark, the fuzz target and the documentation to take
//! a PE pair from.
//!
//! ```text
//! DC1 GW ---- PE1 ======== WAN ======== PE2 ---- DC2 GW
//!  d1:01   e1:00 e1:01             e2:01 e2:00   d2:01 (system d2:00)
//! ```
//!
//! A PFC frame from DC2 GW enters PE2 (egress), crosses to PE1 (ingress) and leaves
//! toward DC1 GW with PE1's DC-facing MAC as its source. Addresses: SRv6 SIDs
//! `fc00::eN:d2`, VXLAN endpoints `10.0.0.N` / `fc00::N` (VNI 4242), SR-MPLS node SIDs
//! `16000 + N` and service labels `100 + N`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use lossless_wire::{emit_mac_control_frame, MacAddr, MacControl};

use crate::config::{Datapath, DcSide, Marking, RelayConfig, StormConfig, TunnelConfig, WanSide};

pub const DC1_GW: MacAddr = MacAddr([2, 0, 0, 0, 0xd1, 1]);
pub const DC2_GW: MacAddr = MacAddr([2, 0, 0, 0, 0xd2, 1]);
pub const DC2_GW_SYSTEM: MacAddr = MacAddr([2, 0, 0, 0, 0xd2, 0]);
pub const PE1_DC: MacAddr = MacAddr([2, 0, 0, 0, 0xe1, 0]);
pub const PE1_WAN: MacAddr = MacAddr([2, 0, 0, 0, 0xe1, 1]);
pub const PE2_DC: MacAddr = MacAddr([2, 0, 0, 0, 0xe2, 0]);
pub const PE2_WAN: MacAddr = MacAddr([2, 0, 0, 0, 0xe2, 1]);

/// The tunnel the pair uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Srv6,
    /// SRv6 without an SRH (one segment, in the destination address).
    Srv6Reduced,
    Vxlan4,
    Vxlan6,
    Mpls,
}

pub const KINDS: [Kind; 5] = [
    Kind::Srv6,
    Kind::Srv6Reduced,
    Kind::Vxlan4,
    Kind::Vxlan6,
    Kind::Mpls,
];

fn v6(pe: u16, low: u16) -> Ipv6Addr {
    Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, pe, low)
}

/// The tunnel of PE `n` (1 or 2) toward the other.
pub fn tunnel(kind: Kind, n: u8) -> TunnelConfig {
    let (me, other): (u16, u16) = if n == 1 { (1, 2) } else { (2, 1) };
    let vxlan = |source: IpAddr, destination: IpAddr| TunnelConfig::Vxlan {
        source,
        destination,
        vni: 4242,
        port: 4789,
        source_port: 49152,
        ttl: 64,
        ipv4_checksum: true,
    };
    match kind {
        Kind::Srv6 | Kind::Srv6Reduced => TunnelConfig::Srv6 {
            source: v6(0, 0xe0 + me),
            segments: vec![v6(0xe0 + other, 0xd2)],
            local_sid: v6(0xe0 + me, 0xd2),
            reduced: kind == Kind::Srv6Reduced,
            hop_limit: 64,
            flow_label: 0,
        },
        Kind::Vxlan4 => vxlan(
            Ipv4Addr::new(10, 0, 0, me as u8).into(),
            Ipv4Addr::new(10, 0, 0, other as u8).into(),
        ),
        Kind::Vxlan6 => vxlan(v6(0, me).into(), v6(0, other).into()),
        Kind::Mpls => TunnelConfig::SrMpls {
            labels: vec![16000 + u32::from(other), 100 + u32::from(other)],
            local_label: 100 + u32::from(me),
            // Our node SID arrives on top: no penultimate-hop popping.
            pop_labels: vec![16000 + u32::from(me)],
            control_word: true,
            ttl: 64,
        },
    }
}

/// PE `n` (1: ingress toward DC1 GW; 2: egress for DC2 GW's PFC), default marking and
/// storm ceiling (off); interfaces `peN-dc` and `peN-wan`.
pub fn pe(n: u8, kind: Kind) -> RelayConfig {
    let (dc, gateway, system, wan, peer) = if n == 1 {
        (PE1_DC, DC1_GW, None, PE1_WAN, PE2_WAN)
    } else {
        (PE2_DC, DC2_GW, Some(DC2_GW_SYSTEM), PE2_WAN, PE1_WAN)
    };
    RelayConfig {
        dc: DcSide {
            interface: Some(format!("pe{n}-dc")),
            port_mac: dc,
            gateway_port_mac: gateway,
            gateway_system_mac: system,
        },
        wan: WanSide {
            interface: Some(format!("pe{n}-wan")),
            port_mac: wan,
            next_hop_mac: peer,
            vlan: None,
        },
        tunnel: tunnel(kind, n),
        marking: Marking::default(),
        storm: StormConfig::default(),
        buffer: None,
        measure: None,
        datapath: Datapath::default(),
    }
}

/// A minimum-size PFC frame from `src` to 01-80-C2-00-00-01 with the class
/// vector and pause times given (`quanta[p]` counts where bit p is set).
pub fn pfc(src: MacAddr, class_enable: u16, quanta: [u16; 8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(60);
    let ctl = MacControl::Pfc {
        class_enable,
        quanta,
    };
    emit_mac_control_frame(src, MacAddr::MAC_CONTROL, None, &ctl, &mut out);
    out
}

/// A frame for checking a filter against [`crate::host::Filter`], built from
/// `seed` (a property test's random octets; missing ones read as 0): with or
/// without one or two VLAN tags (802.1Q, 802.1ad), of an EtherType the
/// relay's filters look at or one they do not, a PFC frame from `src`, IPv4
/// with any header length and fragment field, IPv6 with the next headers the
/// filters name, UDP to `udp_port` or another, or cut anywhere.
pub fn probe_frame(seed: &[u8], src: MacAddr, udp_port: u16) -> Vec<u8> {
    let mut s = seed.iter().copied().chain(std::iter::repeat(0));
    let mut next = move || s.next().unwrap_or(0);
    let mut f = Vec::with_capacity(128);
    f.extend_from_slice(&MacAddr::MAC_CONTROL.0);
    f.extend_from_slice(&src.0);
    let tags: &[u16] = match next() % 8 {
        4 => &[0x8100],
        5 => &[0x88a8],
        6 => &[0x88a8, 0x8100],
        7 => &[0x8100, 0x8100],
        _ => &[],
    };
    for tpid in tags {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&[next() & 0xef, next()]);
    }
    let pick = next();
    let ty: u16 = match pick % 8 {
        0 | 1 => 0x8808,
        2 => 0x0800,
        3 => 0x86dd,
        4 => 0x8847,
        5 => 0x88cc,
        _ => u16::from_be_bytes([next(), next()]),
    };
    f.extend_from_slice(&ty.to_be_bytes());
    match ty {
        0x8808 => {
            let start = f.len() - 14;
            let opcode: u16 = if next() % 4 == 0 { 0x0001 } else { 0x0101 };
            f.extend_from_slice(&opcode.to_be_bytes());
            f.extend_from_slice(&[0, next()]);
            for _ in 0..16 {
                f.push(next());
            }
            f.resize(start + 60, 0);
        }
        0x0800 => {
            let b = next();
            let ihl = if b & 0x80 == 0 { 5 } else { b & 0x0f };
            let mut ip = vec![0u8; usize::from(ihl.max(5)) * 4];
            ip[0] = 0x40 | ihl;
            let frag: u16 = match next() % 4 {
                0 | 1 => 0,
                2 => 0x4000,
                _ => u16::from_be_bytes([next(), next()]),
            };
            ip[6..8].copy_from_slice(&frag.to_be_bytes());
            ip[9] = match next() % 4 {
                0 | 1 => 17,
                2 => 6,
                _ => next(),
            };
            f.extend_from_slice(&ip);
            push_udp(&mut f, &mut next, udp_port);
        }
        0x86dd => {
            let mut ip = [0u8; 40];
            ip[0] = 0x60;
            ip[6] = match next() % 8 {
                0 | 1 => 17,
                2 | 3 => 43,
                4 => 143,
                5 => 58,
                _ => next(),
            };
            f.extend_from_slice(&ip);
            push_udp(&mut f, &mut next, udp_port);
        }
        _ => f.extend_from_slice(&[next(); 46]),
    }
    // Cut it short now and then, anywhere.
    let cut = next();
    if cut % 4 == 0 {
        let at = usize::from(next()) % (f.len() + 1);
        f.truncate(at);
    }
    f
}

/// [`probe_frame`]'s UDP header (to `udp_port`, 4789 or another) and payload.
fn push_udp(f: &mut Vec<u8>, next: &mut impl FnMut() -> u8, udp_port: u16) {
    let dport = match next() % 4 {
        0 | 1 => udp_port,
        2 => 4789,
        _ => u16::from_be_bytes([next(), next()]),
    };
    let mut udp = [0u8; 8];
    udp[2..4].copy_from_slice(&dport.to_be_bytes());
    f.extend_from_slice(&udp);
    f.extend_from_slice(&[next(); 16]);
}

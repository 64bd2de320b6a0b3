//! The two-DC topology of seed 002's figure 2, for the relay tests:
//!
//! ```text
//! DC1 GW ---- PE1 ======== WAN ======== PE2 ---- DC2 GW
//!  d1:01   e1:00 e1:01             e2:01 e2:00   d2:01 (system d2:00)
//! ```
//!
//! A PFC frame from DC2 GW enters PE2 (egress), crosses to PE1 (ingress)
//! and leaves toward DC1 GW with PE1's DC-facing MAC as its source.
#![allow(dead_code)]

use std::net::{IpAddr, Ipv6Addr};
use std::time::Duration;

use lossless_relay::{
    DcSide, Instant, Marking, Port, Relay, RelayConfig, StormConfig, TunnelConfig, WanSide,
};
use lossless_wire::{emit_mac_control_frame, MacAddr, MacControl, VlanTag};

pub const DC1_GW: MacAddr = MacAddr([2, 0, 0, 0, 0xd1, 1]);
pub const DC2_GW: MacAddr = MacAddr([2, 0, 0, 0, 0xd2, 1]);
pub const DC2_GW_SYSTEM: MacAddr = MacAddr([2, 0, 0, 0, 0xd2, 0]);
pub const PE1_DC: MacAddr = MacAddr([2, 0, 0, 0, 0xe1, 0]);
pub const PE1_WAN: MacAddr = MacAddr([2, 0, 0, 0, 0xe1, 1]);
pub const PE2_DC: MacAddr = MacAddr([2, 0, 0, 0, 0xe2, 0]);
pub const PE2_WAN: MacAddr = MacAddr([2, 0, 0, 0, 0xe2, 1]);
pub const STRANGER: MacAddr = MacAddr([2, 0, 0, 0, 0x66, 6]);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Srv6,
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

pub fn v6(s: &str) -> Ipv6Addr {
    s.parse().expect("IPv6 address")
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().expect("IP address")
}

/// The tunnel of PE `n` (1 or 2) toward the other.
pub fn tunnel(kind: Kind, n: u8) -> TunnelConfig {
    let (me, other): (u32, u32) = if n == 1 { (1, 2) } else { (2, 1) };
    match kind {
        Kind::Srv6 | Kind::Srv6Reduced => TunnelConfig::Srv6 {
            source: v6(&format!("fc00::e{me}")),
            segments: vec![v6(&format!("fc00::e{other}:d2"))],
            local_sid: v6(&format!("fc00::e{me}:d2")),
            reduced: kind == Kind::Srv6Reduced,
            hop_limit: 64,
            flow_label: 0,
        },
        Kind::Vxlan4 => TunnelConfig::Vxlan {
            source: ip(&format!("10.0.0.{me}")),
            destination: ip(&format!("10.0.0.{other}")),
            vni: 4242,
            port: 4789,
            source_port: 49152,
            ttl: 64,
            ipv4_checksum: true,
        },
        Kind::Vxlan6 => TunnelConfig::Vxlan {
            source: ip(&format!("fc00::{me}")),
            destination: ip(&format!("fc00::{other}")),
            vni: 4242,
            port: 4789,
            source_port: 49152,
            ttl: 64,
            ipv4_checksum: true,
        },
        Kind::Mpls => TunnelConfig::SrMpls {
            labels: vec![16000 + other, 100 + other],
            local_label: 100 + me,
            // Our node SID arrives on top: no penultimate-hop popping.
            pop_labels: vec![16000 + me],
            control_word: true,
            ttl: 64,
        },
    }
}

/// PE2: egress for DC2 GW's PFC.
pub fn pe2(kind: Kind) -> RelayConfig {
    RelayConfig {
        dc: DcSide {
            port_mac: PE2_DC,
            gateway_port_mac: DC2_GW,
            gateway_system_mac: Some(DC2_GW_SYSTEM),
        },
        wan: WanSide {
            port_mac: PE2_WAN,
            next_hop_mac: PE1_WAN,
            vlan: None,
        },
        tunnel: tunnel(kind, 2),
        marking: Marking::default(),
        storm: StormConfig::default(),
        buffer: None,
    }
}

/// PE1: ingress, delivering to DC1 GW.
pub fn pe1(kind: Kind) -> RelayConfig {
    RelayConfig {
        dc: DcSide {
            port_mac: PE1_DC,
            gateway_port_mac: DC1_GW,
            gateway_system_mac: None,
        },
        wan: WanSide {
            port_mac: PE1_WAN,
            next_hop_mac: PE2_WAN,
            vlan: None,
        },
        tunnel: tunnel(kind, 1),
        marking: Marking::default(),
        storm: StormConfig::default(),
        buffer: None,
    }
}

pub fn t(ms: u64) -> Instant {
    Instant::from_duration(Duration::from_millis(ms))
}

pub fn t_us(us: u64) -> Instant {
    Instant::from_duration(Duration::from_micros(us))
}

pub fn relay(cfg: RelayConfig) -> Relay {
    Relay::new(cfg, t(0)).expect("valid config")
}

/// A PFC frame from `src` with the vector and times given.
pub fn pfc_from(src: MacAddr, class_enable: u16, quanta: [u16; 8]) -> Vec<u8> {
    let mut out = Vec::new();
    emit_mac_control_frame(
        src,
        MacAddr::MAC_CONTROL,
        None,
        &MacControl::Pfc {
            class_enable,
            quanta,
        },
        &mut out,
    );
    out
}

/// A priority-tagged PFC frame (some switches send PFC with a tag).
pub fn pfc_tagged(src: MacAddr, class_enable: u16, quanta: [u16; 8]) -> Vec<u8> {
    let mut out = Vec::new();
    emit_mac_control_frame(
        src,
        MacAddr::MAC_CONTROL,
        Some(VlanTag {
            pcp: 7,
            dei: false,
            vid: 0,
        }),
        &MacControl::Pfc {
            class_enable,
            quanta,
        },
        &mut out,
    );
    out
}

/// DC2 GW pauses priorities 3 and 4.
pub fn pfc_3_4() -> Vec<u8> {
    pfc_from(DC2_GW, 0x18, [0, 0, 0, 0xffff, 0x1234, 0, 0, 0])
}

/// A one-priority frame: pause `p` for `q` quanta (0 resumes).
pub fn pfc_one(p: usize, q: u16) -> Vec<u8> {
    let mut quanta = [0; 8];
    quanta[p] = q;
    pfc_from(DC2_GW, 1 << p, quanta)
}

/// Everything `r` has queued, drained: (port, socket priority, ip offset, bytes).
pub fn drain(r: &mut Relay) -> Vec<(Port, u32, Option<usize>, Vec<u8>)> {
    let mut out = Vec::new();
    while let Some(tx) = r.poll_transmit() {
        out.push((tx.port, tx.socket_priority, tx.ip_offset, tx.frame.to_vec()));
    }
    out
}

/// The PFC content (vector, times) of a delivered or inner frame.
pub fn pfc_content(frame: &[u8]) -> (u8, [u16; 8]) {
    let p = lossless_relay::check_pfc(frame).expect("a legal PFC frame");
    (p.class_enable, p.quanta)
}

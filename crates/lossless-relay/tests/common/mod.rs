//! The two-DC topology of draft-he-rtgwg-wan-pfc-00's figure 2, for the relay
//! tests:
//!
//! ```text
//! DC1 GW ---- PE1 ======== WAN ======== PE2 ---- DC2 GW
//!  d1:01   e1:00 e1:01             e2:01 e2:00   d2:01 (system d2:00)
//! ```
//!
//! A PFC frame from DC2 GW enters PE2 (egress), crosses to PE1 (ingress)
//! and leaves toward DC1 GW with PE1's DC-facing MAC as its source.
// Each test binary uses a different part of this module.
#![allow(dead_code, unused_imports)]

use std::net::{IpAddr, Ipv6Addr};
use std::time::Duration;

use lossless_relay::{Instant, Port, Relay, RelayConfig};
use lossless_wire::{emit_mac_control_frame, MacAddr, MacControl, VlanTag};

pub use lossless_relay::example::{
    Kind, DC1_GW, DC2_GW, DC2_GW_SYSTEM, KINDS, PE1_DC, PE1_WAN, PE2_DC, PE2_WAN,
};

pub const STRANGER: MacAddr = MacAddr([2, 0, 0, 0, 0x66, 6]);

pub fn v6(s: &str) -> Ipv6Addr {
    s.parse().expect("IPv6 address")
}

pub fn ip(s: &str) -> IpAddr {
    s.parse().expect("IP address")
}

pub use lossless_relay::example::tunnel;

/// PE2: egress for DC2 GW's PFC.
pub fn pe2(kind: Kind) -> RelayConfig {
    lossless_relay::example::pe(2, kind)
}

/// PE1: ingress, delivering to DC1 GW.
pub fn pe1(kind: Kind) -> RelayConfig {
    lossless_relay::example::pe(1, kind)
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
pub use lossless_relay::example::pfc as pfc_from;

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

//! Any sequence of frames into a PE relay, on either port, at any pace.
//!
//! Input: one byte of setup (tunnel kind, storm ceiling on or off), then
//! records of [flags][length][bytes]: flags bit 0 picks the port (WAN/DC),
//! bits 1..8 how many milliseconds pass before the frame. After each frame
//! the timers run as a daemon would run them.
//!
//! Checked: no panic; every frame is accounted for once; everything sent to
//! the DC is a legal PFC frame with our DC MAC as source; everything sent to
//! the WAN is delivered by the far PE as a legal PFC frame.
#![no_main]

use std::net::IpAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use lossless_relay::{
    check_pfc, DcSide, Instant, Marking, Port, Relay, RelayConfig, StormConfig, TunnelConfig,
    Verdict, WanSide,
};
use lossless_wire::MacAddr;

const GW: MacAddr = MacAddr([2, 0, 0, 0, 0xd1, 1]);
const GW_SYSTEM: MacAddr = MacAddr([2, 0, 0, 0, 0xd1, 0]);

fn ip(s: &str) -> IpAddr {
    s.parse().expect("address")
}

fn tunnel(kind: u8, me: u32, other: u32) -> TunnelConfig {
    match kind % 5 {
        0 | 1 => TunnelConfig::Srv6 {
            source: format!("fc00::e{me}").parse().expect("v6"),
            segments: vec![format!("fc00::e{other}:d2").parse().expect("v6")],
            local_sid: format!("fc00::e{me}:d2").parse().expect("v6"),
            reduced: kind % 5 == 1,
            hop_limit: 64,
            flow_label: 0,
        },
        2 => TunnelConfig::Vxlan {
            source: ip(&format!("10.0.0.{me}")),
            destination: ip(&format!("10.0.0.{other}")),
            vni: 4242,
            port: 4789,
            source_port: 49152,
            ttl: 64,
            ipv4_checksum: true,
        },
        3 => TunnelConfig::Vxlan {
            source: ip(&format!("fc00::{me}")),
            destination: ip(&format!("fc00::{other}")),
            vni: 4242,
            port: 4789,
            source_port: 49152,
            ttl: 64,
            ipv4_checksum: true,
        },
        _ => TunnelConfig::SrMpls {
            labels: vec![16000 + other, 100 + other],
            local_label: 100 + me,
            pop_labels: vec![16000 + me],
            control_word: true,
            ttl: 64,
        },
    }
}

/// PE `me` of the pair (1 or 2); PE1's gateway is GW.
fn config(kind: u8, me: u32, storm: bool) -> RelayConfig {
    let other = 3 - me;
    RelayConfig {
        dc: DcSide {
            port_mac: MacAddr([2, 0, 0, 0, 0xe0 + me as u8, 0]),
            gateway_port_mac: GW,
            gateway_system_mac: Some(GW_SYSTEM),
        },
        wan: WanSide {
            port_mac: MacAddr([2, 0, 0, 0, 0xe0 + me as u8, 1]),
            next_hop_mac: MacAddr([2, 0, 0, 0, 0xe0 + other as u8, 1]),
            vlan: None,
        },
        tunnel: tunnel(kind, me, other),
        marking: Marking::default(),
        storm: StormConfig {
            max_per_second: storm.then_some(50),
            burst: Some(3),
            episode_gap: "20ms".into(),
        },
        buffer: None,
    }
}

fn check_out(pe: &mut Relay, far: &mut Relay, now: Instant, dc_mac: MacAddr) {
    let mut wan = Vec::new();
    while let Some(tx) = pe.poll_transmit() {
        match tx.port {
            Port::Dc => {
                let p = check_pfc(tx.frame).expect("sent to the DC: a legal PFC frame");
                assert_eq!(p.src, dc_mac);
            }
            Port::Wan => wan.push(tx.frame.to_vec()),
        }
    }
    for f in wan {
        assert_eq!(far.handle_frame(now, Port::Wan, &f), Verdict::Delivered);
        while far.poll_transmit().is_some() {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&setup, mut rest)) = data.split_first() else {
        return;
    };
    let kind = setup & 0x7f;
    let mut pe = Relay::new(config(kind, 1, setup & 0x80 != 0), Instant::ZERO).expect("config");
    let mut far = Relay::new(config(kind, 2, false), Instant::ZERO).expect("config");
    let dc_mac = pe.config().dc.port_mac;
    let mut now = Instant::ZERO;
    let mut frames = 0u64;
    while let [flags, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (frame, next) = tail.split_at(n);
        rest = next;
        now = now + Duration::from_millis(u64::from(flags >> 1));
        while let Some(at) = pe.poll_timeout() {
            if at > now {
                break;
            }
            assert!(at >= Instant::ZERO);
            pe.handle_timeout(at);
            check_out(&mut pe, &mut far, at, dc_mac);
        }
        let port = if flags & 1 == 1 { Port::Wan } else { Port::Dc };
        pe.handle_frame(now, port, frame);
        frames += 1;
        check_out(&mut pe, &mut far, now, dc_mac);
    }
    let e = pe.egress_counters();
    assert_eq!(e.received, e.relayed + e.suppressed + e.dropped.total());
    let i = pe.ingress_counters();
    assert_eq!(i.received, i.delivered + i.dropped.total());
    assert_eq!(e.received + i.received, frames);
});

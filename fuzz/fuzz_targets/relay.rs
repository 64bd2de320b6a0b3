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

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use lossless_relay::example::{pe, KINDS};
use lossless_relay::{check_pfc, Instant, Port, Relay, RelayConfig, StormConfig, Verdict};
use lossless_wire::MacAddr;

const GW: MacAddr = MacAddr([2, 0, 0, 0, 0xd1, 1]);
const GW_SYSTEM: MacAddr = MacAddr([2, 0, 0, 0, 0xd1, 0]);

/// PE `me` of the example pair (1 or 2), both taking PFC from GW (either may be
/// handed any frame), tunnel by `kind % 5`.
fn config(kind: u8, me: u8, storm: bool) -> RelayConfig {
    let mut c = pe(me, KINDS[usize::from(kind % 5)]);
    c.dc.gateway_port_mac = GW;
    c.dc.gateway_system_mac = Some(GW_SYSTEM);
    c.storm = StormConfig {
        max_per_second: storm.then_some(50),
        burst: Some(3),
        episode_gap: "20ms".into(),
        ..StormConfig::default()
    };
    c
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

//! Helpers shared by the scenario tests.
#![allow(dead_code)]

use lossless_dcbx::{Duration, Instant, PortConfig};
use lossless_lab::scenario::{converged, host_config, switch_config};
use lossless_lab::{NodeId, PathProps, SegmentId, Sim};

pub const D: Duration = Duration::from_millis(10);

pub struct Pair {
    pub sim: Sim,
    pub a: NodeId,
    pub b: NodeId,
    pub seg: SegmentId,
}

/// Two agents on one link with `delay` each way, link not yet up.
pub fn pair_with(
    a_cfg: PortConfig,
    b_cfg: PortConfig,
    delay: Duration,
    loss: f64,
    seed: u64,
) -> Pair {
    let mut sim = Sim::new(seed).with_capture();
    let a = sim.add_agent("a", a_cfg).expect("valid config a");
    let b = sim.add_agent("b", b_cfg).expect("valid config b");
    let seg = sim.connect(a, b);
    sim.set_link_props(a, b, PathProps { delay, loss });
    Pair { sim, a, b, seg }
}

/// The switch/host configurations of the lab, link up, converged.
pub fn converged_pair(a_cfg: PortConfig, b_cfg: PortConfig) -> Pair {
    let mut p = pair_with(a_cfg, b_cfg, D, 0.0, 1);
    p.sim.set_link(p.seg, true);
    let t = p.sim.run_until_true(secs(10.0), converged);
    assert!(t.is_some(), "pair did not converge");
    p
}

pub fn switch() -> PortConfig {
    switch_config()
}

pub fn host() -> PortConfig {
    host_config()
}

pub fn secs(s: f64) -> Instant {
    Instant::from_secs_f64(s)
}

/// Seconds on the virtual clock.
pub fn at(i: Instant) -> f64 {
    i.since_epoch().as_secs_f64()
}

/// The IEEE 802.1Qaz switch of the lab (mode ieee, nothing willing, ETS with a
/// recommendation, PFC on 3, APP DSCP 26 and UDP 4791 on 3).
pub fn ieee_switch() -> PortConfig {
    lossless_lab::scenario::ieee_switch_config()
}

/// The IEEE 802.1Qaz host of the lab (mode auto, defaults: everything willing).
pub fn ieee_host() -> PortConfig {
    lossless_lab::scenario::ieee_host_config()
}

/// Two agents on one link of one-way delay `D`, brought up together at 0.
pub fn up_pair(a_cfg: PortConfig, b_cfg: PortConfig) -> Pair {
    let mut p = pair_with(a_cfg, b_cfg, D, 0.0, 1);
    p.sim.set_link(p.seg, true);
    p
}

/// The events `node`'s agent reported, with when.
pub fn events(sim: &Sim, node: NodeId) -> Vec<(Instant, lossless_dcbx::Event)> {
    sim.log()
        .iter()
        .filter_map(|e| match e {
            lossless_lab::LogEntry::Event { at, node: n, event } if *n == node => {
                Some((*at, event.clone()))
            }
            _ => None,
        })
        .collect()
}

/// The IEEE 802.1Qaz TLVs of every LLDPDU `node` sent from `since` on, with when.
pub fn ieee_sent(
    sim: &Sim,
    node: NodeId,
    since: Instant,
) -> Vec<(Instant, lossless_wire::ieee::IeeeDcbx)> {
    use lossless_wire::frame::{Frame, Payload};
    sim.capture()
        .iter()
        .filter(|c| c.from == node && c.at >= since)
        .filter_map(|c| {
            match Frame::parse(&c.bytes)
                .expect("we emit valid frames")
                .payload
            {
                Payload::Lldp(pdu) if pdu.ttl != 0 => Some((c.at, pdu.ieee_dcbx)),
                _ => None,
            }
        })
        .collect()
}

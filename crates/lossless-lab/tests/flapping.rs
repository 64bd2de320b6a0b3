#![allow(clippy::unwrap_used)]
//! A flapping peer (issue 29, items 2 and 3), on the lab's virtual clock: a scripted
//! peer alternating what it advertises every 10 ms for 5 s, against the node core
//! losslessd runs with `apply = "dcbnl"` and the lab's modelled NIC.
//!
//! What it checks: the NIC is programmed at most once per `nic_hold_ms` past a burst
//! of three (the latest configuration at the end of each hold), a peer
//! alternating IEEE and CEE TLVs flips `auto` mode at most once per `MODE_HOLD`, the
//! peer is reported flapping (health problem, metric, event), and the event history
//! keeps room for other news: the churn is summarised, not kept event by event.
//! Before the dampening, the same runs programmed the NIC once per frame (≈ 500) and
//! changed mode once per frame.

use lossless_dcbx::{Duration, Instant, Version};
use lossless_lab::nic::Driver;
use lossless_lab::scenario::dual_pdu;
use lossless_lab::scripted::{ScriptedPdu, ScriptedPeer};
use lossless_lab::{NodeId, Sim};
use lossless_node::config::{Apply, PortSettings};
use lossless_node::protocol::Request;
use lossless_wire::cee::PriorityMap;
use lossless_wire::MacAddr;
use serde_json::Value;

/// Frames the peer sends: one every 10 ms for 5 s.
const FRAMES: u32 = 500;
const EVERY: Duration = Duration::from_millis(10);

/// The host (node 0, `apply = "dcbnl"`, the defaults: auto, willing) and a
/// scripted peer on one link, up.
fn rig(nic_hold_ms: Option<u32>) -> (Sim, NodeId, ScriptedPeer) {
    let mut sim = Sim::new(1).without_log();
    let mut s = PortSettings {
        apply: Apply::Dcbnl,
        ..PortSettings::default()
    };
    if let Some(ms) = nic_hold_ms {
        s.nic_hold_ms = ms;
    }
    let host = sim
        .add_node(
            "host",
            MacAddr([2, 0, 0, 0, 0, 0x0b]),
            s,
            Driver::Dcbnl { buffer: None },
        )
        .unwrap();
    let peer = ScriptedPeer::add(&mut sim, "peer", dual_pdu().mac);
    let seg = sim.connect(host, peer.node);
    sim.set_link(seg, true);
    sim.run_for(Duration::from_millis(1));
    (sim, host, peer)
}

/// IEEE 802.1Qaz only (the NX-OS peer's TLVs), PFC on `pfc`.
fn ieee_pdu(pfc: u8) -> ScriptedPdu {
    let mut p = dual_pdu();
    p.cee = None;
    if let Some(Ok(c)) = &mut p.ieee.pfc {
        c.enabled = PriorityMap(pfc);
    }
    p
}

/// CEE DCBX only (the NX-OS peer's CEE TLV), SeqNo `seq`.
fn cee_pdu(seq: u32) -> ScriptedPdu {
    cee_pfc_pdu(seq, 0, None)
}

/// CEE DCBX only, SeqNo `seq` acknowledging `ack` (a CEE port takes the peer's
/// configuration once the peer acknowledged its own), PFC on `pfc` if given.
fn cee_pfc_pdu(seq: u32, ack: u32, pfc: Option<u8>) -> ScriptedPdu {
    let mut p = dual_pdu();
    p.ieee = Default::default();
    if let Some(c) = p.cee.as_mut() {
        if let Some(ctl) = c.control.as_mut() {
            ctl.seq = seq;
            ctl.ack = ack;
        }
        if let (Some(Ok(f)), Some(pfc)) = (&mut c.pfc, pfc) {
            f.cfg.priorities = PriorityMap(pfc);
        }
    }
    p
}

/// Sends `pdu(i)` every 10 ms, `FRAMES` of them; returns when it ended.
fn flap(sim: &mut Sim, peer: &ScriptedPeer, mut pdu: impl FnMut(u32) -> ScriptedPdu) -> Instant {
    for i in 0..FRAMES {
        sim.send_frame(peer.node, pdu(i).frame().unwrap());
        sim.run_for(EVERY);
    }
    sim.now()
}

fn answer(sim: &mut Sim, req: Request) -> Value {
    let r = sim.request(0, req);
    assert!(r.ok, "{r:?}");
    r.result.unwrap()
}

fn events(sim: &mut Sim) -> Vec<Value> {
    answer(sim, Request::Events { follow: false })["events"]
        .as_array()
        .unwrap()
        .clone()
}

fn metric(sim: &Sim, name: &str) -> f64 {
    let text = sim.metrics(0);
    text.lines()
        .find(|l| l.starts_with(&format!("{name}{{port=")))
        .and_then(|l| l.rsplit(' ').next())
        .unwrap_or_else(|| panic!("no {name}:\n{text}"))
        .parse()
        .unwrap()
}

#[test]
fn a_peer_alternating_its_pfc_programs_the_nic_once_per_hold() {
    let (mut sim, host, peer) = rig(None);
    let start = sim.now();
    let end = flap(&mut sim, &peer, |i| {
        ieee_pdu(if i.is_multiple_of(2) {
            0b0000_1000
        } else {
            0b0001_0000
        })
    });
    let programs = sim.nic(host).ieee_programs;
    let secs = (end - start).as_secs_f64();
    println!("{FRAMES} alternating PFC TLVs in {secs:.1} s: {programs} IEEE programmings");
    // A burst of 3 at once, then one per 1 s hold: 8 in 5 s (one more for the
    // programming that finds the first frame's answer in flight).
    assert!(
        programs <= 9,
        "{programs} programmings in {secs:.1} s: not once per nic_hold_ms"
    );
    // What the NIC holds at the end is the latest configuration, once the last hold
    // ran out.
    sim.run_for(Duration::from_millis(1_100));
    let last = if (FRAMES - 1).is_multiple_of(2) {
        0b0000_1000
    } else {
        0b0001_0000
    };
    assert_eq!(sim.nic(host).ieee_pfc, Some(last));
    assert!(metric(&sim, "lossless_nic_programs_coalesced_total") > 400.0);

    // Flapping: a health problem of its own, a metric, an event.
    let st = answer(&mut sim, Request::Status);
    let problems = st["ports"][0]["problems"].to_string();
    assert!(problems.contains("the DCBX peer flaps"), "{st:#}");
    assert_eq!(metric(&sim, "lossless_peer_flapping"), 1.0);
    assert_eq!(metric(&sim, "lossless_peer_flaps_total"), 1.0);
    let ev = events(&mut sim);
    let flapping: Vec<&Value> = ev.iter().filter(|e| e["event"] == "flapping").collect();
    assert!(
        flapping.first().is_some_and(|e| e["active"] == true),
        "{flapping:?}"
    );
    // The history is not a wall of oper_changed: the churn is summarised.
    let oper = ev.iter().filter(|e| e["event"] == "oper_changed").count();
    assert!(
        oper <= 20,
        "{oper} oper_changed events kept of {}",
        ev.len()
    );
    assert!(metric(&sim, "lossless_events_suppressed_total") > 400.0);
    // Every window of the flapping peer has its summary: "N changes in 10 s".
    sim.run_for(Duration::from_secs(6));
    let ev = events(&mut sim);
    let summary = ev
        .iter()
        .filter(|e| e["event"] == "flapping" && e["changes"].as_u64() > Some(100))
        .count();
    assert!(summary >= 1, "no summary of the window: {ev:#?}");

    // Quiet for three windows: no longer flapping, healthy again.
    sim.run_for(Duration::from_secs(40));
    assert_eq!(metric(&sim, "lossless_peer_flapping"), 0.0);
    let ev = events(&mut sim);
    assert!(
        ev.iter()
            .any(|e| e["event"] == "flapping" && e["active"] == false),
        "{ev:#?}"
    );
}

#[test]
fn a_cee_peer_alternating_its_pfc_programs_the_nic_once_per_hold() {
    let (mut sim, host, peer) = rig(None);
    let start = sim.now();
    let end = flap(&mut sim, &peer, |i| {
        // The host's SeqNo, as the peer acknowledges it (0 before the fallback).
        let ack = 1;
        cee_pfc_pdu(
            i + 1,
            ack,
            Some(if i.is_multiple_of(2) {
                0b0000_1000
            } else {
                0b0001_0000
            }),
        )
    });
    let programs = sim.nic(host).cee.len();
    let secs = (end - start).as_secs_f64();
    println!("{FRAMES} alternating CEE PFC TLVs in {secs:.1} s: {programs} CEE programmings");
    assert_eq!(
        sim.agent(host).control().seq,
        1,
        "the host's SeqNo never moved"
    );
    assert!(
        programs <= 9,
        "{programs} programmings in {secs:.1} s: not once per nic_hold_ms"
    );
    assert_eq!(metric(&sim, "lossless_peer_flapping"), 1.0);
}

#[test]
fn a_nic_hold_of_zero_programs_every_change() {
    let (mut sim, host, peer) = rig(Some(0));
    flap(&mut sim, &peer, |i| {
        ieee_pdu(if i.is_multiple_of(2) {
            0b0000_1000
        } else {
            0b0001_0000
        })
    });
    // The hold is off: one programming per change, as before (the peer is still
    // reported flapping).
    assert!(sim.nic(host).ieee_programs >= 400);
    assert_eq!(metric(&sim, "lossless_peer_flapping"), 1.0);
}

#[test]
fn a_peer_alternating_ieee_and_cee_flips_auto_mode_once_per_hold() {
    let (mut sim, host, peer) = rig(None);
    let start = sim.now();
    let end = flap(&mut sim, &peer, |i| {
        if i.is_multiple_of(2) {
            cee_pdu(i + 1)
        } else {
            ieee_pdu(0b0000_1000)
        }
    });
    let changes = sim.agent(host).dcbx_stats().mode_changes;
    let nic = sim.nic(host);
    let programs = nic.ieee_programs + nic.cee.len();
    let secs = (end - start).as_secs_f64();
    println!(
        "{FRAMES} LLDPDUs alternating CEE and IEEE in {secs:.1} s: {changes} mode changes, \
         {programs} programmings"
    );
    // The first at once (IEEE at link-up, CEE on the first CEE LLDPDU), then at
    // most one per 5 s hold.
    assert!(changes <= 2, "{changes} mode changes in {secs:.1} s");
    assert!(programs <= 8, "{programs} programmings in {secs:.1} s");
    assert!(matches!(
        sim.agent(host).running(),
        Version::Cee | Version::Ieee
    ));
    assert_eq!(metric(&sim, "lossless_peer_flapping"), 1.0);
}

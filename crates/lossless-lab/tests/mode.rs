//! Which DCBX version a port runs, against peers of each kind, and how fast each
//! version agrees on the same link. `mode = "auto"` starts in IEEE 802.1Qaz at every
//! link-up, falls back to CEE DCBX on the first LLDPDU of a CEE-only peer and stays
//! there until the link resets or the peer goes away; a peer sending both versions
//! (NX-OS) is answered in IEEE. `mode = "ieee"` and `mode = "cee"` never change.

mod common;
use common::*;

use lossless_dcbx::{DcbxMode, Duration, Event, Instant, ModeReason, PortConfig, Reason, Version};
use lossless_lab::scenario::{
    converged, converged_nodes, dual_pdu, roce_ets_table, switch_config, NXOS_MAC,
};
use lossless_lab::scripted::ScriptedPeer;
use lossless_lab::{PathProps, Sim};
use lossless_wire::cee::PriorityMap;

fn mode_changes(sim: &Sim, n: usize) -> Vec<(Instant, Version, Version, ModeReason)> {
    events(sim, n)
        .into_iter()
        .filter_map(|(t, e)| match e {
            Event::ModeChanged { from, to, reason } => Some((t, from, to, reason)),
            _ => None,
        })
        .collect()
}

/// The version of each LLDPDU `n` sent from `since` on: true for IEEE.
fn sent_ieee(sim: &Sim, n: usize, since: Instant) -> Vec<(Instant, bool)> {
    use lossless_wire::frame::{Frame, Payload};
    sim.capture()
        .iter()
        .filter(|c| c.from == n && c.at >= since)
        .filter_map(|c| match Frame::parse(&c.bytes).expect("valid").payload {
            Payload::Lldp(p) if p.ttl != 0 => {
                assert!(
                    p.cee_dcbx.is_none() || p.ieee_dcbx.is_empty(),
                    "one version"
                );
                Some((c.at, !p.ieee_dcbx.is_empty()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn auto_falls_back_to_cee_on_the_first_frame_and_back_to_ieee_on_a_link_reset() {
    // switch_config() is CEE-only; the host is in auto, the default.
    let mut p = up_pair(switch_config(), ieee_host());
    let (a, b) = (p.a, p.b);
    let t = p.sim.run_until_true(secs(10.0), converged);
    // The switch's first LLDPDU arrives at D: the host falls back then and answers
    // in CEE at once (SeqNo 1, acknowledging the switch's); CEE then needs the
    // switch's acknowledgement (2D) and the host seeing it (3D).
    assert_eq!(t, Some(Instant::ZERO + 3 * D));
    assert_eq!(
        mode_changes(&p.sim, b),
        vec![(
            Instant::ZERO + D,
            Version::Ieee,
            Version::Cee,
            ModeReason::PeerCeeOnly
        )]
    );
    assert_eq!(
        sent_ieee(&p.sim, b, Instant::ZERO)[..2],
        [(Instant::ZERO, true), (Instant::ZERO + D, false)],
        "IEEE at link-up, CEE from the fallback on"
    );
    p.sim.run_for(Duration::from_secs(5));
    let h = p.sim.agent(b);
    let st = h.status();
    assert_eq!(
        (st.mode.configured, st.mode.running, st.mode.reason),
        (DcbxMode::Auto, Version::Cee, ModeReason::PeerCeeOnly)
    );
    assert_eq!(h.pfc().oper_cfg.priorities, PriorityMap(0b1_1000));
    assert_eq!(h.pfc().reason, Reason::AdoptedPeer);
    assert_eq!(h.dcbx_stats().mode_changes, 1);
    // Link reset: IEEE first, CEE again on the switch's first LLDPDU.
    p.sim.set_link(p.seg, false);
    p.sim.run_for(Duration::from_secs(1));
    let t1 = p.sim.now();
    p.sim.set_link(p.seg, true);
    assert_eq!(p.sim.agent(b).running(), Version::Ieee);
    let t = p
        .sim
        .run_until_true(t1 + Duration::from_secs(10), converged);
    assert_eq!(t, Some(t1 + 3 * D));
    assert_eq!(
        mode_changes(&p.sim, b)[1..],
        [
            (t1, Version::Cee, Version::Ieee, ModeReason::LinkReset),
            (t1 + D, Version::Ieee, Version::Cee, ModeReason::PeerCeeOnly)
        ]
    );
    assert_eq!(sent_ieee(&p.sim, b, t1)[..2], [(t1, true), (t1 + D, false)]);
    // The CEE switch never changed version, and never saw the host as a peer
    // while it spoke IEEE.
    assert!(mode_changes(&p.sim, a).is_empty());
    assert_eq!(p.sim.agent(a).pfc().reason, Reason::PeerWilling);
}

#[test]
fn forced_ieee_next_to_a_cee_only_peer_has_no_peer() {
    let mut host = ieee_host();
    host.dcbx.mode = DcbxMode::Ieee;
    let mut p = up_pair(switch_config(), host);
    let (a, b) = (p.a, p.b);
    let t = p.sim.run_until_true(secs(10.0), |s| {
        s.agent(b).ieee().pfc.reason == Reason::PeerCeeOnly
    });
    assert_eq!(t, Some(Instant::ZERO + D));
    p.sim.run_for(Duration::from_secs(10));
    let h = p.sim.agent(b);
    assert!(!h.peer_present());
    assert_eq!(h.running(), Version::Ieee);
    assert!(mode_changes(&p.sim, b).is_empty());
    let i = h.ieee();
    for (r, e) in [
        (i.ets.reason, i.ets.error),
        (i.pfc.reason, i.pfc.error),
        (i.app.reason, i.app.error),
    ] {
        assert_eq!((r, e), (Reason::PeerCeeOnly, false));
    }
    // Its own configuration runs; it goes on sending IEEE only.
    assert_eq!(h.applied_pfc(), PriorityMap::NONE);
    assert!(sent_ieee(&p.sim, b, Instant::ZERO).iter().all(|(_, i)| *i));
    // The CEE switch sees an IEEE-only neighbour: no peer either.
    let s = p.sim.agent(a);
    assert!(!s.peer_present());
    assert_eq!(s.pfc().reason, Reason::PeerIeeeOnly);
    assert_eq!(s.status().mode.reason, ModeReason::Configured);
}

#[test]
fn forced_cee_next_to_an_ieee_peer_has_no_peer_next_to_a_cee_peer_runs_cee_and_auto_next_to_auto_runs_ieee(
) {
    let mut host = ieee_host();
    host.dcbx.mode = DcbxMode::Cee;
    let mut p = up_pair(ieee_switch(), host);
    p.sim.run_for(Duration::from_secs(5));
    let h = p.sim.agent(p.b);
    assert_eq!((h.running(), h.peer_present()), (Version::Cee, false));
    assert_eq!(h.pfc().reason, Reason::PeerIeeeOnly);
    assert_eq!(p.sim.agent(p.a).ieee().pfc.reason, Reason::PeerCeeOnly);
    // Forced CEE next to the CEE-only switch: plain CEE from the first frame, no
    // fallback needed (converged at 2D, where auto needs 3D).
    let mut host = ieee_host();
    host.dcbx.mode = DcbxMode::Cee;
    let mut p = up_pair(switch_config(), host);
    let t = p.sim.run_until_true(secs(10.0), converged);
    assert_eq!(t, Some(Instant::ZERO + 2 * D));
    assert!(mode_changes(&p.sim, p.b).is_empty());
    assert!(sent_ieee(&p.sim, p.b, Instant::ZERO)
        .iter()
        .all(|(_, i)| !*i));
    // Both in auto: IEEE, agreed after one exchange, no mode change.
    let mut sw = ieee_switch();
    sw.dcbx.mode = DcbxMode::Auto;
    let mut p = up_pair(sw, ieee_host());
    let t = p.sim.run_until_true(secs(10.0), converged);
    assert_eq!(t, Some(Instant::ZERO + 2 * D));
    for n in [p.a, p.b] {
        assert_eq!(p.sim.agent(n).running(), Version::Ieee);
        assert!(mode_changes(&p.sim, n).is_empty());
    }
}

#[test]
fn auto_returns_to_ieee_when_the_cee_peer_goes_or_turns_to_ieee() {
    // The CEE peer shuts down: back to IEEE at once.
    let mut p = converged_pair(switch_config(), ieee_host());
    let b = p.b;
    p.sim.run_for(Duration::from_secs(5));
    let mut gone = switch_config();
    gone.admin_status = lossless_dcbx::AdminStatus::RxOnly;
    let t0 = p.sim.now();
    p.sim.set_config(p.a, gone).expect("valid");
    p.sim.run_for(Duration::from_secs(1));
    assert_eq!(
        mode_changes(&p.sim, b)[1..],
        [(t0 + D, Version::Cee, Version::Ieee, ModeReason::PeerGone)]
    );
    // The CEE peer is reconfigured to IEEE: its first IEEE-only LLDPDU is a peer
    // going away for the host's CEE, so the host is back in IEEE one delay later and
    // runs the switch's recommendation once the switch answers it.
    let mut p = converged_pair(switch_config(), ieee_host());
    let (a, b) = (p.a, p.b);
    p.sim.run_for(Duration::from_secs(5));
    let t0 = p.sim.now();
    p.sim.set_config(a, ieee_switch()).expect("valid");
    let t = p.sim.run_until_true(t0 + Duration::from_secs(10), |s| {
        converged(s) && s.agent(b).ieee().ets.oper == roce_ets_table()
    });
    assert_eq!(
        mode_changes(&p.sim, b)[1..],
        [(t0 + D, Version::Cee, Version::Ieee, ModeReason::PeerGone)]
    );
    // t0 + D the host resets into IEEE and sends; the switch takes it as its peer at
    // 2D and answers; the host runs its recommendation at 3D; the switch sees that 4D.
    assert_eq!(t, Some(t0 + 4 * D));
}

#[test]
fn a_peer_sending_both_versions_is_answered_in_ieee() {
    let mut sim = Sim::new(1).with_capture();
    let host = sim.add_agent("host", ieee_host()).expect("valid");
    let mut peer = ScriptedPeer::add(&mut sim, "nxos", NXOS_MAC);
    let seg = sim.connect(host, peer.node);
    sim.set_link_props(
        host,
        peer.node,
        PathProps {
            delay: D,
            loss: 0.0,
        },
    );
    sim.set_link(seg, true);
    let frame = dual_pdu().frame().expect("emits");
    peer.schedule(frame, sim.now(), Duration::from_secs(30));
    let t = peer.run_until_true(&mut sim, secs(10.0), |s| converged_nodes(s, &[host]));
    assert_eq!(
        t,
        Some(Instant::ZERO + D),
        "agreed on the peer's first LLDPDU"
    );
    peer.run_until(&mut sim, secs(100.0));
    let h = sim.agent(host);
    assert_eq!(h.running(), Version::Ieee);
    assert!(mode_changes(&sim, host).is_empty());
    assert_eq!(h.dcbx_stats().mode_changes, 0);
    assert_eq!(h.ieee().ets.oper, roce_ets_table());
    assert_eq!(h.applied_pfc(), PriorityMap(0b1000));
    assert_eq!(
        h.neighbors()[0]
            .summary(sim.now(), h.config().neighbor_hold())
            .dcbx,
        "ieee+cee"
    );
    // Four scripted LLDPDUs (0, 30, 60, 90 s), every answer IEEE.
    assert_eq!(
        sim.capture().iter().filter(|c| c.from == peer.node).count(),
        4
    );
    assert!(sent_ieee(&sim, host, Instant::ZERO).iter().all(|(_, i)| *i));
    // Forced to CEE, the same host reads the CEE half and answers in CEE; the
    // scripted peer never acknowledges, so the host's SeqNo waits (a real NX-OS
    // would complete the handshake).
    let mut cee = ieee_host();
    cee.dcbx.mode = DcbxMode::Cee;
    sim.set_config(host, cee).expect("valid");
    let t0 = sim.now();
    peer.schedule(
        dual_pdu().frame().expect("emits"),
        t0,
        Duration::from_secs(30),
    );
    peer.run_until(&mut sim, t0 + Duration::from_secs(2));
    let h = sim.agent(host);
    assert_eq!((h.running(), h.peer_present()), (Version::Cee, true));
    let pfc = h.status().pfc;
    assert_eq!(pfc.peer.map(|c| c.priorities), Some(PriorityMap(0b1_1000)));
    assert_eq!(pfc.reason, Reason::WaitingForAck);
    assert!(sent_ieee(&sim, host, t0).iter().all(|(_, i)| !*i));
}

/// The time each version needs on the same link, for the same intent (a switch not
/// willing, a willing host): both links up together, and the host coming up after
/// the switch. IEEE needs no handshake: the willing host runs the switch's
/// configuration on the first LLDPDU it receives, and both agree after one
/// exchange; CEE's host waits for the acknowledgement of its SeqNo before it runs.
#[test]
fn ieee_agrees_within_one_exchange_and_never_later_than_cee() {
    struct Times {
        host_runs: Duration,
        converged: Duration,
    }
    fn measure(sw: PortConfig, host: PortConfig, staggered: bool) -> Times {
        let mut p = pair_with(sw, host, D, 0.0, 1);
        let t0 = if staggered {
            p.sim.set_node_link(p.a, true);
            p.sim.run_for(Duration::from_millis(500));
            let t0 = p.sim.now();
            p.sim.set_node_link(p.b, true);
            t0
        } else {
            p.sim.set_link(p.seg, true);
            p.sim.now()
        };
        let b = p.b;
        let runs = p
            .sim
            .run_until_true(t0 + Duration::from_secs(10), |s| {
                s.agent(b).applied_pfc() != PriorityMap::NONE
            })
            .expect("the host runs PFC");
        let conv = p
            .sim
            .run_until_true(t0 + Duration::from_secs(10), converged)
            .expect("converges");
        Times {
            host_runs: runs - t0,
            converged: conv - t0,
        }
    }
    for staggered in [false, true] {
        let ieee = measure(ieee_switch(), ieee_host(), staggered);
        let cee = measure(
            switch_config(),
            lossless_lab::scenario::host_config(),
            staggered,
        );
        // The host hears the switch's first LLDPDU at D (together) or 2D (the switch
        // answers the host's first).
        let first = if staggered { 2 * D } else { D };
        assert_eq!(ieee.host_runs, first, "staggered {staggered}");
        assert_eq!(ieee.converged, first + D, "staggered {staggered}");
        assert_eq!(cee.host_runs, 2 * D, "staggered {staggered}");
        assert_eq!(cee.converged, first + D, "staggered {staggered}");
        assert!(ieee.host_runs <= cee.host_runs && ieee.converged <= cee.converged);
    }
}

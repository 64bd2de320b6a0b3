//! Peer loss, neighbours coming and going, configuration changes, the SeqNo
//! ratchet, loss and restarts, each asserting both ends and when.

mod common;
use common::*;

use lossless_dcbx::{AdminStatus, Duration, Event, NeighborLoss, Reason};
use lossless_lab::scenario::converged;
use lossless_lab::{LogEntry, PathProps, Sim};
use lossless_wire::cee::PriorityMap;
use lossless_wire::frame::{Frame, Payload};

fn control_of(bytes: &[u8]) -> Option<(u32, u32)> {
    let f = Frame::parse(bytes).ok()?;
    match f.payload {
        Payload::Lldp(pdu) => pdu.cee_dcbx.and_then(|c| c.control).map(|c| (c.seq, c.ack)),
        _ => None,
    }
}

fn removed(sim: &Sim, node: usize) -> Vec<(f64, NeighborLoss)> {
    sim.log()
        .iter()
        .filter_map(|e| match e {
            LogEntry::Event {
                at: t,
                node: n,
                event: Event::NeighborRemoved { why, .. },
            } if *n == node => Some((at(*t), *why)),
            _ => None,
        })
        .collect()
}

#[test]
fn peer_ttl_expiry_resets_like_link_up() {
    let mut p = converged_pair(switch(), host());
    p.sim.run_for(Duration::from_secs(40));
    // b falls silent (no shutdown frame): every frame from b is lost from now on.
    p.sim.set_path(
        p.b,
        p.a,
        PathProps {
            delay: D,
            loss: 1.0,
        },
    );
    let last_rx = p.sim.agent(p.a).neighbors()[0].last_rx;
    p.sim.run_for(Duration::from_secs(200));
    let gone = removed(&p.sim, p.a);
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].1, NeighborLoss::TtlExpired);
    // Aged out exactly rxInfoTTL (120 s) after b's last frame arrived.
    assert!(
        (gone[0].0 - (at(last_rx) + 120.0)).abs() < 1e-9,
        "{gone:?} last {last_rx:?}"
    );
    let a = p.sim.agent(p.a);
    assert_eq!(a.lldp_stats().ageouts, 1);
    for (r, mode, err) in [
        (a.pg().reason, a.pg().oper_mode, a.pg().error),
        (a.pfc().reason, a.pfc().oper_mode, a.pfc().error),
    ] {
        assert_eq!(r, Reason::PeerLost);
        assert!(!mode && err, "peer expired: OperMode off, Error set");
    }
    // Control reset as at link up, then SeqNo 1 carrying the Error flags, unacknowledged.
    assert_eq!(
        (a.control().seq, a.control().ack, a.control().rcvd_ack),
        (1, 0, 0)
    );
}

#[test]
fn shutdown_lldpdu_removes_peer_at_once() {
    let mut p = converged_pair(switch(), host());
    p.sim.run_for(Duration::from_secs(5));
    let t0 = p.sim.now();
    let mut cfg = host();
    cfg.admin_status = AdminStatus::RxOnly;
    p.sim.set_config(p.b, cfg).expect("valid");
    p.sim.run_for(Duration::from_secs(1));
    let gone = removed(&p.sim, p.a);
    assert_eq!(gone.len(), 1);
    assert_eq!(gone[0].1, NeighborLoss::Shutdown);
    assert!(
        (gone[0].0 - (at(t0) + D.as_secs_f64())).abs() < 1e-9,
        "{gone:?}"
    );
    assert_eq!(p.sim.agent(p.a).pfc().reason, Reason::PeerLost);
    // The shutdown frame itself: TTL 0, no DCBX.
    let last_b = p
        .sim
        .capture()
        .iter()
        .rev()
        .find(|c| c.from == p.b)
        .expect("b sent");
    match Frame::parse(&last_b.bytes).expect("valid").payload {
        Payload::Lldp(pdu) => {
            assert_eq!(pdu.ttl, 0);
            assert!(pdu.cee_dcbx.is_none());
        }
        other => panic!("{other:?}"),
    }
    // b sends nothing more (rx only) but still hears a.
    let after: Vec<_> = p
        .sim
        .capture()
        .iter()
        .filter(|c| c.from == p.b && c.at >= t0)
        .collect();
    assert_eq!(after.len(), 1);
    assert_eq!(p.sim.agent(p.b).neighbors().len(), 1);
    assert_eq!(p.sim.agent(p.b).pfc().reason, Reason::DcbxInactive);
}

#[test]
fn tx_only_withdraws_dcbx_tlvs() {
    let mut p = converged_pair(switch(), host());
    let mut cfg = host();
    cfg.admin_status = AdminStatus::TxOnly;
    p.sim.set_config(p.b, cfg).expect("valid");
    p.sim.run_for(Duration::from_secs(2));
    // b still sends LLDP, without DCBX: a treats that as the peer's DCBX going away.
    let last_b = p
        .sim
        .capture()
        .iter()
        .rev()
        .find(|c| c.from == p.b)
        .expect("b sent");
    assert_eq!(control_of(&last_b.bytes), None);
    assert_eq!(p.sim.agent(p.a).neighbors().len(), 1);
    assert_eq!(p.sim.agent(p.a).pfc().reason, Reason::PeerLost);
    assert!(p.sim.agent(p.a).pfc().error);
}

#[test]
fn second_neighbour_appearing_and_leaving() {
    let mut p = converged_pair(switch(), host());
    let mut third = host();
    third.mac = lossless_wire::MacAddr([2, 0, 0, 0, 0, 0x0c]);
    let c = p.sim.add_agent("c", third.clone()).expect("valid");
    p.sim.attach(p.seg, c);
    p.sim.set_link_props(
        p.a,
        c,
        PathProps {
            delay: D,
            loss: 0.0,
        },
    );
    p.sim.set_link_props(
        p.b,
        c,
        PathProps {
            delay: D,
            loss: 0.0,
        },
    );
    let t0 = p.sim.now();
    p.sim.set_node_link(c, true);
    p.sim.run_for(Duration::from_secs(2));
    for n in [p.a, p.b] {
        let ag = p.sim.agent(n);
        assert_eq!(ag.neighbors().len(), 2);
        assert_eq!(ag.pfc().reason, Reason::MultiplePeers);
        assert!(!ag.pfc().oper_mode && ag.pfc().error);
    }
    // While multiple neighbours are present nothing is acknowledged.
    let ack_a = p.sim.agent(p.a).control().ack;
    let ack_b = p.sim.agent(p.b).control().ack;
    let seq_a = p.sim.agent(p.a).control().seq;
    let mut cfg = switch();
    cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b100_0000);
    p.sim.set_config(p.a, cfg.clone()).expect("valid");
    p.sim.run_for(Duration::from_secs(2));
    // b acknowledges nothing, so a's last SeqNo stays unacknowledged and the
    // ratchet holds the change back at the next SeqNo.
    let a_now = p.sim.agent(p.a);
    assert_eq!(
        p.sim.agent(p.b).control().ack,
        ack_b,
        "b acknowledged nothing"
    );
    assert_eq!(
        a_now.control().seq,
        seq_a,
        "no SeqNo before the last is acknowledged"
    );
    assert_ne!(a_now.control().rcvd_ack, seq_a);
    assert_eq!(a_now.pfc().feature_seq, seq_a + 1);
    assert!(!a_now.pfc().syncd);
    assert_eq!(p.sim.agent(p.a).control().ack, ack_a);
    let too_many_at = p.sim.log().iter().find_map(|e| match e {
        LogEntry::Event {
            at: t,
            node,
            event: Event::TooManyNeighbors { active: true },
        } if *node == p.a => Some(*t),
        _ => None,
    });
    let too_many_at = too_many_at.map(at).expect("tooManyNeighbors reported");
    assert!((too_many_at - (at(t0) + D.as_secs_f64())).abs() < 1e-9);
    // c leaves with a shutdown frame: a and b converge again on a's new PFC.
    let mut gone = third;
    gone.admin_status = AdminStatus::Disabled;
    p.sim.set_config(c, gone).expect("valid");
    let t1 = p.sim.now();
    let t = p.sim.run_until_true(t1 + Duration::from_secs(5), |s| {
        (0..2).all(|n| s.agent(n).pfc().reason != Reason::MultiplePeers) && {
            let b = s.agent(1);
            b.pfc().oper_mode && b.pfc().oper_cfg.priorities == PriorityMap(0b100_0000)
        }
    });
    let t = t.expect("reconverged after the second neighbour left");
    // Both send at once when the peer reappears; after this flurry of changes
    // txCredit (5, +1 per second) may hold an acknowledgement for up to a second.
    assert!(t - t1 <= Duration::from_secs(2), "{:?}", t - t1);
}

#[test]
fn change_on_one_side_propagates_in_one_round_trip() {
    let mut p = converged_pair(switch(), host());
    p.sim.run_for(Duration::from_secs(3));
    let seq0 = p.sim.agent(p.a).control().seq;
    let mut cfg = switch();
    cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b0010_0000);
    let t0 = p.sim.now();
    p.sim.set_config(p.a, cfg).expect("valid");
    let t = p
        .sim
        .run_until_true(t0 + Duration::from_secs(5), |s| {
            converged(s) && s.agent(1).pfc().oper_cfg.priorities == PriorityMap(0b0010_0000)
        })
        .expect("host follows");
    assert_eq!(t - t0, 2 * D, "change out, ack back");
    assert_eq!(p.sim.agent(p.a).control().seq, seq0 + 1);
    assert_eq!(p.sim.agent(p.b).control().ack, seq0 + 1);
}

#[test]
fn changes_on_both_sides_at_once() {
    let mut a_cfg = switch();
    let mut b_cfg = host();
    b_cfg.dcbx.pfc.willing = false;
    b_cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b1_1000);
    let mut p = converged_pair(a_cfg.clone(), b_cfg.clone());
    assert_eq!(p.sim.agent(p.a).pfc().reason, Reason::Compatible);
    a_cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b1000_0000);
    b_cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b1000_0000);
    p.sim.set_config(p.a, a_cfg).expect("valid");
    p.sim.set_config(p.b, b_cfg).expect("valid");
    let t0 = p.sim.now();
    p.sim.run_for(Duration::from_secs(3));
    for n in [p.a, p.b] {
        let f = p.sim.agent(n).pfc();
        assert_eq!(f.reason, Reason::Compatible, "both changed to the same PFC");
        assert!(f.oper_mode && f.syncd && !f.error);
        assert_eq!(f.oper_cfg.priorities, PriorityMap(0b1000_0000));
    }
    let syncd_at = p
        .sim
        .log()
        .iter()
        .filter_map(|e| match e {
            LogEntry::Event {
                at: t,
                event: Event::Syncd { .. },
                ..
            } if *t > t0 => Some(*t),
            _ => None,
        })
        .max()
        .expect("syncd");
    assert_eq!(syncd_at - t0, 2 * D);
}

#[test]
fn three_features_changed_at_once_take_one_seq() {
    let mut p = converged_pair(switch(), host());
    let seq0 = p.sim.agent(p.a).control().seq;
    let mut cfg = switch();
    cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b0100_0000);
    cfg.dcbx.pg.cfg.percent = [50, 50, 0, 0, 0, 0, 0, 0];
    cfg.dcbx.app.cfg.entries[0].priorities = PriorityMap(0b0100_0000);
    let t0 = p.sim.now();
    p.sim.set_config(p.a, cfg.clone()).expect("valid");
    p.sim.run_for(Duration::from_secs(2));
    let a = p.sim.agent(p.a);
    assert_eq!(a.control().seq, seq0 + 1, "one SeqNo for the three changes");
    assert!(a.all_syncd());
    let b = p.sim.agent(p.b);
    assert_eq!(b.pfc().oper_cfg, cfg.dcbx.pfc.cfg);
    assert_eq!(b.pg().oper_cfg, cfg.dcbx.pg.cfg);
    assert_eq!(b.app().oper_cfg, cfg.dcbx.app.cfg);
    let n_frames = p
        .sim
        .capture()
        .iter()
        .filter(|c| c.from == p.a && c.at >= t0 && c.at < t0 + D)
        .count();
    assert_eq!(n_frames, 1, "the three changes go out in one frame");
}

/// The CEE DCBX specification's example: peer AckNo 9, SeqNo 10, features pending at 11. A PDU
/// with SeqNo 11 is not sent until AckNo 10 is received.
#[test]
fn ratchet_seed_example() {
    let mut p = converged_pair(switch(), host());
    let mut cfg = switch();
    // Walk a to SeqNo 9, each change acknowledged, 10 s apart: txCredit allows
    // bursts of 5 frames and one more per second, and each change starts a
    // fast burst, so faster changes would be (rightly) rate limited.
    let mut prio = 0u8;
    while p.sim.agent(p.a).control().seq < 9 {
        prio = (prio + 1) % 8;
        cfg.dcbx.pfc.cfg.priorities = PriorityMap(1 << prio);
        p.sim.set_config(p.a, cfg.clone()).expect("valid");
        p.sim.run_for(Duration::from_secs(10));
    }
    assert_eq!(p.sim.agent(p.a).control().rcvd_ack, 9);
    // Change -> SeqNo 10 goes out; 2 ms later, before its ack, three more changes.
    cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b1000_0001);
    p.sim.set_config(p.a, cfg.clone()).expect("valid");
    let t10 = p.sim.now();
    p.sim.run_for(Duration::from_millis(2));
    cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b11);
    cfg.dcbx.pg.cfg.percent = [60, 40, 0, 0, 0, 0, 0, 0];
    cfg.dcbx.app.cfg.entries.pop();
    p.sim.set_config(p.a, cfg.clone()).expect("valid");
    {
        let a = p.sim.agent(p.a);
        assert_eq!((a.control().seq, a.control().rcvd_ack), (10, 9));
        assert_eq!(
            (a.pfc().feature_seq, a.pg().feature_seq, a.app().feature_seq),
            (11, 11, 11)
        );
        assert!(!a.pfc().syncd && !a.pg().syncd && !a.app().syncd);
    }
    p.sim.run_for(Duration::from_secs(1));
    // On the wire: no SeqNo 11 before AckNo 10 reached a.
    let sent_11 = p
        .sim
        .capture()
        .iter()
        .find(|c| c.from == p.a && control_of(&c.bytes).map(|x| x.0) == Some(11))
        .expect("seq 11 sent");
    let ack_10 = p
        .sim
        .capture()
        .iter()
        .find(|c| c.from == p.b && control_of(&c.bytes).map(|x| x.1) == Some(10))
        .expect("ack 10 sent");
    assert_eq!(
        sent_11.at,
        ack_10.at + D,
        "SeqNo 11 leaves the instant AckNo 10 arrives"
    );
    assert_eq!(ack_10.at, t10 + D);
    let a = p.sim.agent(p.a);
    assert_eq!(a.control().seq, 11);
    assert!(a.all_syncd());
    assert_eq!(
        p.sim.agent(p.b).pfc().oper_cfg.priorities,
        PriorityMap(0b11)
    );
}

#[test]
fn thirty_percent_loss_still_converges() {
    let mut worst = Duration::ZERO;
    for seed in 0..50 {
        let mut p = pair_with(switch(), host(), D, 0.3, seed);
        p.sim.set_link(p.seg, true);
        let t = p
            .sim
            .run_until_true(secs(60.0), |s| {
                converged(s) && s.agent(1).pfc().oper_cfg.priorities == PriorityMap(0b1_1000)
            })
            .unwrap_or_else(|| panic!("seed {seed}: no convergence in 60 s"));
        worst = worst.max(t.since_epoch());
        // And it stays converged.
        p.sim.run_for(Duration::from_secs(200));
        assert!(converged(&p.sim), "seed {seed}: lost convergence");
    }
    assert!(worst < Duration::from_secs(10), "worst {worst:?}");
}

#[test]
fn one_agent_restarting() {
    let mut p = converged_pair(switch(), host());
    p.sim.run_for(Duration::from_secs(10));
    // Walk a's SeqNo up so the restarted b's SeqNo 1 is clearly new to a.
    let t0 = p.sim.now();
    p.sim.restart(p.b, host()).expect("valid");
    let t = p
        .sim
        .run_until_true(t0 + Duration::from_secs(10), |s| {
            converged(s) && s.agent(1).pfc().oper_cfg.priorities == PriorityMap(0b1_1000)
        })
        .expect("reconverges");
    assert!(t - t0 <= 4 * D, "{:?}", t - t0);
    assert_eq!(
        p.sim.agent(p.a).neighbors().len(),
        1,
        "same MSAP: no second neighbour"
    );
}

#[test]
fn version_negotiates_to_the_common_one() {
    let mut a_cfg = switch();
    a_cfg.dcbx.max_version = 1;
    let mut p = pair_with(a_cfg, host(), D, 0.0, 5);
    p.sim.set_link(p.seg, true);
    p.sim
        .run_until_true(secs(10.0), converged)
        .expect("converges");
    let a = p.sim.agent(p.a);
    assert_eq!(a.control().oper_version, 0);
    assert_eq!(a.pfc().oper_version, 0);
    assert_eq!(
        p.sim.agent(p.b).pfc().oper_cfg.priorities,
        PriorityMap(0b1_1000)
    );
}

/// emit(parse(b)) == b for every frame the agents emit, across a run with
/// changes, errors, a shutdown and a restart.
#[test]
fn every_emitted_frame_reparses_and_reemits_identically() {
    let mut p = converged_pair(switch(), host());
    let mut cfg = switch();
    cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b1000_0000);
    cfg.dcbx.app.advertise = false;
    p.sim.set_config(p.a, cfg.clone()).expect("valid");
    p.sim.run_for(Duration::from_secs(6));
    cfg.admin_status = AdminStatus::RxOnly;
    p.sim.set_config(p.a, cfg).expect("valid");
    p.sim.run_for(Duration::from_secs(3));
    p.sim.restart(p.a, switch()).expect("valid");
    p.sim.run_for(Duration::from_secs(3));
    let mut n_dcbx = 0;
    for c in p.sim.capture() {
        let f = Frame::parse(&c.bytes).expect("we emit valid frames");
        let Payload::Lldp(pdu) = &f.payload else {
            panic!("non-LLDP frame")
        };
        if let Some(cee) = &pdu.cee_dcbx {
            n_dcbx += 1;
            assert!(cee.anomalies.is_empty() && !cee.duplicates.any());
        }
        assert!(pdu.cin_dcbx.is_none());
        let mut again = Vec::new();
        lossless_wire::frame::emit_lldp_frame(f.header.src, pdu, &mut again).expect("emits");
        assert_eq!(again, c.bytes, "re-emitted frame differs");
    }
    assert!(n_dcbx > 10);
}

/// The CEE DCBX specification §2.3: DCBX is on by default with an administrative off switch.
/// Off: our LLDPDUs carry no DCBX TLV, the peer's are ignored; LLDP itself goes on.
#[test]
fn dcbx_admin_off_switch() {
    let mut p = converged_pair(switch(), host());
    let mut cfg = host();
    cfg.dcbx.enabled = false;
    let t0 = p.sim.now();
    p.sim.set_config(p.b, cfg).expect("valid");
    p.sim.run_for(Duration::from_secs(5));
    let b_frames: Vec<_> = p
        .sim
        .capture()
        .iter()
        .filter(|c| c.from == p.b && c.at >= t0)
        .collect();
    assert!(!b_frames.is_empty(), "LLDP keeps running");
    assert!(
        b_frames.iter().all(|c| control_of(&c.bytes).is_none()),
        "no DCBX TLV"
    );
    let b = p.sim.agent(p.b);
    assert!(!b.dcbx_active());
    assert_eq!(b.pfc().reason, Reason::DcbxInactive);
    assert!(!b.pfc().oper_mode);
    assert_eq!(b.neighbors().len(), 1, "b still learns a over LLDP");
    assert_eq!(p.sim.agent(p.a).pfc().reason, Reason::PeerLost);
    // Back on: both converge again.
    p.sim.set_config(p.b, host()).expect("valid");
    let t1 = p.sim.now();
    let t = p
        .sim
        .run_until_true(t1 + Duration::from_secs(5), converged)
        .expect("reconverges");
    // Two round trips (our SeqNo 1 acknowledged, then the peer's Error-cleared
    // SeqNo acknowledged); after the fast bursts of the last seconds txCredit
    // may hold the last acknowledgement until the next one-second tick.
    assert!(t - t1 <= Duration::from_secs(1) + 4 * D, "{:?}", t - t1);
    assert_eq!(
        p.sim.agent(p.b).pfc().oper_cfg.priorities,
        PriorityMap(0b1_1000)
    );
}

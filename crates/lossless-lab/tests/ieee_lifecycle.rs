//! IEEE 802.1Qaz over a link's life: a second neighbour coming and going, the
//! peer's TTL running out, a shutdown LLDPDU, a feature not advertised or disabled,
//! malformed TLVs from the peer; each asserting both ends and when. Without a peer
//! (none, gone, or more than one neighbour) an IEEE port runs its own configuration.

mod common;
use common::*;

use lossless_dcbx::{AdminStatus, Duration, Event, FeatureId, Instant, NeighborLoss, Reason};
use lossless_lab::scenario::{converged_nodes, roce_app_table, roce_ets_table};
use lossless_lab::scripted::ScriptedPdu;
use lossless_lab::{PathProps, Sim};
use lossless_wire::frame::{emit_lldp_frame, Frame, Payload};
use lossless_wire::ieee::{
    EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, PfcConfig, PriorityMap, IEEE_8021_OUI,
};
use lossless_wire::MacAddr;

const P3: PriorityMap = PriorityMap(0b1000);

/// The switch and the host, converged (the host runs the switch's ETS
/// recommendation, PFC and APP).
fn converged_ieee() -> Pair {
    let p = converged_pair(ieee_switch(), ieee_host());
    let h = p.sim.agent(p.b).ieee();
    assert_eq!((h.ets.oper, h.pfc.oper), (roce_ets_table(), P3));
    p
}

/// The host's state, compared whole: ETS, PFC, APP operational, and PFC's reason.
fn host_runs(
    sim: &Sim,
    n: usize,
) -> (EtsTable, PriorityMap, lossless_wire::ieee::AppPriorityTable) {
    let i = sim.agent(n).ieee();
    (i.ets.oper, i.pfc.oper, i.app.oper.clone())
}

fn runs_the_switchs() -> (EtsTable, PriorityMap, lossless_wire::ieee::AppPriorityTable) {
    (roce_ets_table(), P3, roce_app_table())
}

fn runs_its_own() -> (EtsTable, PriorityMap, lossless_wire::ieee::AppPriorityTable) {
    (
        EtsTable::default(),
        PriorityMap::NONE,
        lossless_wire::ieee::AppPriorityTable::new(),
    )
}

fn reasons(sim: &Sim, n: usize) -> [Reason; 3] {
    let i = sim.agent(n).ieee();
    [i.ets.reason, i.pfc.reason, i.app.reason]
}

#[test]
fn a_second_neighbour_makes_both_run_their_own_until_it_leaves() {
    let mut p = converged_ieee();
    p.sim.run_for(Duration::from_secs(5));
    let mut third = ieee_host();
    third.mac = MacAddr([2, 0, 0, 0, 0, 0x0c]);
    third.dcbx.pfc.cfg.priorities = PriorityMap(0b10_0000);
    let c = p.sim.add_agent("c", third.clone()).expect("valid");
    p.sim.attach(p.seg, c);
    let path = PathProps {
        delay: D,
        loss: 0.0,
    };
    p.sim.set_link_props(p.a, c, path);
    p.sim.set_link_props(p.b, c, path);
    let t0 = p.sim.now();
    p.sim.set_node_link(c, true);
    let (a, b) = (p.a, p.b);
    // c's first LLDPDU reaches a and b at t0 + D: two neighbours, no DCBX peer.
    let t = p.sim.run_until_true(t0 + Duration::from_secs(1), |s| {
        reasons(s, a) == [Reason::MultiplePeers; 3] && reasons(s, b) == [Reason::MultiplePeers; 3]
    });
    assert_eq!(t, Some(t0 + D));
    p.sim.run_for(Duration::from_secs(2));
    for n in [a, b, c] {
        let ag = p.sim.agent(n);
        assert_eq!(ag.neighbors().len(), 2, "{}", p.sim.name(n));
        assert!(!ag.peer_present());
        assert_eq!(reasons(&p.sim, n), [Reason::MultiplePeers; 3]);
        // An error on every feature: the link does not run what both ends want.
        let i = ag.ieee();
        assert!(i.ets.error && i.pfc.error && i.app.error);
        assert!(ag.any_error() && !ag.all_syncd());
    }
    // Each runs its own configuration: the host leaves the switch's behind.
    assert_eq!(host_runs(&p.sim, b), runs_its_own());
    assert_eq!(host_runs(&p.sim, a), runs_the_switchs());
    assert_eq!(p.sim.agent(c).ieee().pfc.oper, PriorityMap(0b10_0000));
    let set: Vec<(Instant, FeatureId)> = events(&p.sim, b)
        .into_iter()
        .filter_map(|(t, e)| match e {
            Event::ErrorSet {
                feature,
                reason: Reason::MultiplePeers,
            } => Some((t, feature)),
            _ => None,
        })
        .collect();
    assert_eq!(
        set,
        vec![
            (t0 + D, FeatureId::Ets),
            (t0 + D, FeatureId::Pfc),
            (t0 + D, FeatureId::App)
        ]
    );
    // c leaves with a shutdown LLDPDU: at t1 + D the switch is the only neighbour
    // again, and the host runs what it last heard from it at once, without waiting
    // for its next LLDPDU.
    let mut gone = third;
    gone.admin_status = AdminStatus::Disabled;
    p.sim.set_config(c, gone).expect("valid");
    let t1 = p.sim.now();
    let t = p.sim.run_until_true(t1 + Duration::from_secs(5), |s| {
        host_runs(s, b) == runs_the_switchs()
    });
    assert_eq!(t, Some(t1 + D));
    let t = p
        .sim
        .run_until_true(t1 + Duration::from_secs(5), |s| converged_nodes(s, &[a, b]));
    assert_eq!(
        t,
        Some(t1 + 2 * D),
        "the switch sees it in the host's answer"
    );
    for n in [a, b] {
        let i = p.sim.agent(n).ieee();
        assert!(!i.ets.error && !i.pfc.error && !i.app.error);
    }
}

#[test]
fn the_peers_ttl_running_out_brings_back_the_hosts_own_configuration() {
    let mut p = converged_ieee();
    p.sim.run_for(Duration::from_secs(40));
    // The switch falls silent towards the host (no shutdown LLDPDU).
    p.sim.set_path(
        p.a,
        p.b,
        PathProps {
            delay: D,
            loss: 1.0,
        },
    );
    let last_rx = p.sim.agent(p.b).neighbors()[0].last_rx;
    let b = p.b;
    let t = p
        .sim
        .run_until_true(secs(400.0), |s| !s.agent(b).peer_present());
    // rxInfoTTL: 120 s after the last LLDPDU arrived.
    assert_eq!(t, Some(last_rx + Duration::from_secs(120)));
    let gone: Vec<_> = events(&p.sim, b)
        .into_iter()
        .filter_map(|(t, e)| match e {
            Event::NeighborRemoved { why, .. } => Some((t, why)),
            _ => None,
        })
        .collect();
    assert_eq!(
        gone,
        vec![(last_rx + Duration::from_secs(120), NeighborLoss::TtlExpired)]
    );
    let h = p.sim.agent(b);
    assert_eq!(host_runs(&p.sim, b), runs_its_own());
    assert_eq!(reasons(&p.sim, b), [Reason::PeerLost; 3]);
    // A peer that goes away is not an error in IEEE: there is nothing to disagree with.
    assert!(!h.any_error());
    assert_eq!(h.lldp_stats().ageouts, 1);
    assert_eq!(h.dcbx_stats().peer_losses, 1);
    // The switch still hears the host and still runs its own.
    assert_eq!(host_runs(&p.sim, p.a), runs_the_switchs());
    assert!(p.sim.agent(p.a).peer_present());
}

#[test]
fn a_shutdown_lldpdu_removes_the_peer_one_delay_later() {
    let mut p = converged_ieee();
    p.sim.run_for(Duration::from_secs(5));
    let mut sw = ieee_switch();
    sw.admin_status = AdminStatus::RxOnly;
    let t0 = p.sim.now();
    p.sim.set_config(p.a, sw).expect("valid");
    let b = p.b;
    let t = p.sim.run_until_true(t0 + Duration::from_secs(5), |s| {
        !s.agent(b).peer_present() && host_runs(s, b) == runs_its_own()
    });
    assert_eq!(t, Some(t0 + D));
    assert!(events(&p.sim, b).iter().any(|(t, e)| *t == t0 + D
        && matches!(
            e,
            Event::NeighborRemoved {
                why: NeighborLoss::Shutdown,
                ..
            }
        )));
    assert_eq!(reasons(&p.sim, b), [Reason::PeerLost; 3]);
    p.sim.run_for(Duration::from_secs(5));
    // The switch only listens now: it still hears the host, but DCBX needs both ways.
    let sw = p.sim.agent(p.a);
    assert!(!sw.dcbx_active());
    assert_eq!(reasons(&p.sim, p.a), [Reason::DcbxInactive; 3]);
}

#[test]
fn a_feature_not_advertised_runs_locally_and_the_peer_sees_it_absent() {
    let mut host = ieee_host();
    host.dcbx.pfc.advertise = false;
    host.dcbx.ieee.ets.advertise = false;
    let mut p = up_pair(ieee_switch(), host);
    p.sim.run_for(Duration::from_secs(3));
    let (a, b) = (p.a, p.b);
    // The host sends neither TLV and ignores the switch's: its own PFC and ETS run.
    for (at, tlvs) in ieee_sent(&p.sim, b, Instant::ZERO) {
        assert!(tlvs.pfc.is_none() && tlvs.ets_config.is_none(), "{at:?}");
        assert!(tlvs.app.is_some());
    }
    let h = p.sim.agent(b).ieee();
    assert_eq!(
        (h.pfc.oper, h.pfc.reason),
        (PriorityMap::NONE, Reason::NotAdvertised)
    );
    assert_eq!(
        (h.ets.oper, h.ets.reason),
        (EtsTable::default(), Reason::NotAdvertised)
    );
    assert_eq!(
        h.app.oper,
        roce_app_table(),
        "APP is still advertised and merged"
    );
    // The switch: a peer without PFC or ETS TLV. Not an error (they are optional),
    // but not agreed: the host does not show it runs the switch's PFC.
    let s = p.sim.agent(a).ieee();
    assert_eq!(s.pfc.reason, Reason::PeerFeatureAbsent);
    assert_eq!(s.ets.reason, Reason::PeerFeatureAbsent);
    assert!(!s.pfc.error && !s.ets.error && !s.pfc.agreed);
    assert!(!p.sim.agent(a).all_syncd());
    assert_eq!(s.pfc.oper, P3);
}

#[test]
fn pfc_disabled_is_advertised_with_no_priority_and_a_willing_peer_follows() {
    let mut p = converged_ieee();
    p.sim.run_for(Duration::from_secs(5));
    let mut sw = ieee_switch();
    sw.dcbx.pfc.enable = false;
    let t0 = p.sim.now();
    p.sim.set_config(p.a, sw.clone()).expect("valid");
    let (a, b) = (p.a, p.b);
    // The switch's change goes out at once; the host runs no PFC one delay later.
    let t = p.sim.run_until_true(t0 + Duration::from_secs(5), |s| {
        s.agent(b).applied_pfc() == PriorityMap::NONE
    });
    assert_eq!(t, Some(t0 + D));
    p.sim.run_for(Duration::from_secs(3));
    let s = p.sim.agent(a);
    assert_eq!(
        (s.ieee().pfc.oper_mode, s.ieee().pfc.reason),
        (false, Reason::LocalDisabled)
    );
    assert_eq!(s.applied_pfc(), PriorityMap::NONE);
    for (at, tlvs) in ieee_sent(&p.sim, a, t0) {
        let pfc = tlvs.pfc.expect("still advertised").expect("valid");
        assert_eq!(pfc.enabled, PriorityMap::NONE, "{at:?}");
        assert!(!pfc.willing);
    }
    let h = p.sim.agent(b).ieee();
    assert_eq!(
        (h.pfc.oper, h.pfc.reason),
        (PriorityMap::NONE, Reason::AdoptedPeer)
    );
    assert!(h.pfc.oper_mode && h.pfc.agreed);
    // ETS and APP go on as before.
    assert_eq!(h.ets.oper, roce_ets_table());
    // Enabled again: PFC on 3 on both ends one delay later.
    sw.dcbx.pfc.enable = true;
    let t1 = p.sim.now();
    p.sim.set_config(a, sw).expect("valid");
    let t = p.sim.run_until_true(t1 + Duration::from_secs(5), |s| {
        s.agent(b).applied_pfc() == P3 && s.agent(a).applied_pfc() == P3
    });
    assert_eq!(t, Some(t1 + D));
}

/// The switch's regular LLDPDU with one TLV replaced by raw bytes (or, with
/// `dup`, a second copy of the PFC TLV): what a buggy peer might send.
fn crafted(replace: u8, info: Vec<u8>, dup: bool) -> Vec<u8> {
    let mut pdu = ScriptedPdu::new(ieee_switch().mac);
    pdu.system_name = Some("switch".into());
    let mut ieee = IeeeDcbx::new(
        Some(EtsConfig {
            willing: false,
            cbs: false,
            max_tcs: 8,
            table: roce_ets_table(),
        }),
        Some(EtsRecommendation {
            table: roce_ets_table(),
        }),
        Some(PfcConfig {
            willing: false,
            mbc: false,
            cap: 8,
            enabled: P3,
            headroom_measurement: false,
        }),
        Some(roce_app_table()),
    );
    if !dup {
        match replace {
            9 => ieee.ets_config = None,
            10 => ieee.ets_recommendation = None,
            11 => ieee.pfc = None,
            _ => ieee.app = None,
        }
    }
    pdu.ieee = ieee;
    pdu.raw.push((IEEE_8021_OUI, replace, info));
    pdu.frame().expect("emits")
}

/// Each malformation: the TLV (subtype), its information, and the counter it bumps.
struct Bad {
    what: &'static str,
    subtype: u8,
    info: Vec<u8>,
    dup: bool,
    reason: Reason,
    counter: fn(&lossless_dcbx::stats::IeeeStats) -> u64,
    by_tlv: fn(&lossless_dcbx::stats::IeeeStats) -> u64,
}

fn malformations() -> Vec<Bad> {
    // A well-formed ETS table body: prio->TC nibbles, 8 bandwidths, 8 TSAs.
    let table = |bw: [u8; 8]| -> Vec<u8> {
        let mut v = vec![0x00, 0x01, 0x00, 0x20];
        v.extend_from_slice(&bw);
        v.extend_from_slice(&[2, 2, 0, 0, 0, 0, 0, 0]);
        v
    };
    vec![
        Bad {
            what: "PFC TLV one byte long",
            subtype: 11,
            info: vec![0x08, 0x08, 0x00],
            dup: false,
            reason: Reason::PeerFeatureInvalid,
            counter: |s| s.bad_length,
            by_tlv: |s| s.invalid_pfc,
        },
        Bad {
            what: "PFC TLV twice",
            subtype: 11,
            info: vec![0x08, 0x08],
            dup: true,
            reason: Reason::DuplicateTlv,
            counter: |s| s.duplicate,
            by_tlv: |s| s.invalid_pfc,
        },
        Bad {
            what: "ETS recommendation sharing 90 %",
            subtype: 10,
            info: [vec![0], table([50, 40, 0, 0, 0, 0, 0, 0])].concat(),
            dup: false,
            reason: Reason::PeerFeatureInvalid,
            counter: |s| s.bad_value,
            by_tlv: |s| s.invalid_ets_recommendation,
        },
        Bad {
            what: "ETS configuration cut short",
            subtype: 9,
            info: vec![0x00, 0x00, 0x01],
            dup: false,
            reason: Reason::PeerFeatureInvalid,
            counter: |s| s.bad_length,
            by_tlv: |s| s.invalid_ets_config,
        },
        Bad {
            what: "APP entry with reserved selector 0",
            subtype: 12,
            info: vec![0x00, 0x60, 0x12, 0xb7],
            dup: false,
            reason: Reason::PeerFeatureInvalid,
            counter: |s| s.bad_value,
            by_tlv: |s| s.invalid_app,
        },
        Bad {
            what: "APP TLV of 5 + 2 bytes",
            subtype: 12,
            info: vec![0x00, 0x60, 0x12],
            dup: false,
            reason: Reason::PeerFeatureInvalid,
            counter: |s| s.bad_length,
            by_tlv: |s| s.invalid_app,
        },
    ]
}

#[test]
fn a_malformed_tlv_is_counted_by_reason_and_its_contents_never_run() {
    for bad in malformations() {
        let mut p = converged_ieee();
        // Past the fast burst: the switch's next LLDPDU is 30 s away.
        p.sim.run_for(Duration::from_secs(10));
        let (a, b) = (p.a, p.b);
        let before = *p.sim.agent(b).dcbx_stats();
        let lldp_before = *p.sim.agent(b).lldp_stats();
        let t0 = p.sim.now();
        let frame = crafted(bad.subtype, bad.info.clone(), bad.dup);
        // It re-parses as we meant: the one TLV malformed, the others well formed.
        let Payload::Lldp(pdu) = Frame::parse(&frame).expect("a valid LLDPDU").payload else {
            panic!("not LLDP")
        };
        assert_eq!(pdu.ieee_dcbx.errors().count(), 1, "{}", bad.what);
        p.sim.send_frame(a, frame);
        p.sim.run_until(t0 + D);
        let st = p.sim.agent(b).dcbx_stats().ieee;
        assert_eq!(st.lldpdus_in, before.ieee.lldpdus_in + 1, "{}", bad.what);
        assert_eq!(
            (bad.by_tlv)(&st),
            (bad.by_tlv)(&before.ieee) + 1,
            "{}",
            bad.what
        );
        assert_eq!(
            (bad.counter)(&st),
            (bad.counter)(&before.ieee) + 1,
            "{}",
            bad.what
        );
        assert_eq!(st.invalid(), before.ieee.invalid() + 1, "{}", bad.what);
        // The LLDPDU itself is valid: LLDP counts no error and keeps the neighbour.
        let lldp = p.sim.agent(b).lldp_stats();
        assert_eq!(lldp.frames_in_errors, lldp_before.frames_in_errors);
        assert!(p.sim.agent(b).peer_present());
        // The feature whose TLV is malformed runs as if the switch had not sent it,
        // reports why, in error; the switch's other TLVs still count.
        let h = p.sim.agent(b).ieee();
        let (ets, pfc, app) = runs_the_switchs();
        match bad.subtype {
            9 => {
                // A willing port reads the recommendation; ETS runs it still. The
                // configuration TLV is what the error is about.
                assert_eq!(h.ets.oper, ets, "{}", bad.what);
                assert_eq!(h.peer.ets_config, None);
            }
            10 => {
                assert_eq!(
                    (h.ets.oper, h.ets.reason),
                    (EtsTable::default(), bad.reason)
                );
                assert!(h.ets.error);
            }
            11 => {
                assert_eq!((h.pfc.oper, h.pfc.reason), (PriorityMap::NONE, bad.reason));
                assert!(h.pfc.error);
            }
            _ => {
                assert_eq!(h.app.oper, lossless_wire::ieee::AppPriorityTable::new());
                assert_eq!(h.app.reason, bad.reason);
                assert!(h.app.error);
            }
        }
        if bad.subtype != 11 {
            assert_eq!(h.pfc.oper, pfc, "{}", bad.what);
        }
        if !matches!(bad.subtype, 9 | 10) {
            assert_eq!(h.ets.oper, ets, "{}", bad.what);
        }
        if bad.subtype != 12 {
            assert_eq!(h.app.oper, app, "{}", bad.what);
        }
        // The switch, which takes nothing from the host, runs exactly what it ran.
        assert_eq!(host_runs(&p.sim, a), runs_the_switchs());
        if bad.subtype == 9 {
            // Nothing changed; see the next test.
            continue;
        }
        // The switch's next regular LLDPDU puts everything back.
        let next_tx = p
            .sim
            .run_until_true(t0 + Duration::from_secs(60), |s| {
                s.capture().iter().any(|c| c.from == a && c.at > t0)
            })
            .expect("the switch sends again");
        let t = p.sim.run_until_true(next_tx + Duration::from_secs(1), |s| {
            host_runs(s, b) == runs_the_switchs() && !s.agent(b).any_error()
        });
        assert_eq!(t, Some(next_tx + D), "{}", bad.what);
    }
}

#[test]
fn a_malformed_ets_configuration_alone_is_an_error_but_changes_nothing_that_runs() {
    // The willing host runs the recommendation, which is well formed: the broken
    // configuration TLV is reported and counted, and what runs stays as it was.
    let mut p = converged_ieee();
    p.sim.run_for(Duration::from_secs(10));
    let b = p.b;
    let runs = host_runs(&p.sim, b);
    let t0 = p.sim.now();
    p.sim
        .send_frame(p.a, crafted(9, vec![0x00, 0x00, 0x01], false));
    p.sim.run_until(t0 + D);
    assert_eq!(host_runs(&p.sim, b), runs);
    let ets = &p.sim.agent(b).ieee().ets;
    assert_eq!(ets.reason, Reason::AdoptedRecommendation);
    assert!(
        !events(&p.sim, b)
            .iter()
            .any(|(t, e)| *t > t0 && matches!(e, Event::OperChanged { .. })),
        "nothing that runs changed"
    );
}

/// emit(parse(b)) == b for every frame the agents emit across an IEEE run with
/// changes, a mode fallback, a shutdown and a restart; every IEEE TLV well formed.
#[test]
fn every_emitted_ieee_frame_reparses_and_reemits_identically() {
    let mut p = converged_ieee();
    let mut sw = ieee_switch();
    sw.dcbx.pfc.cfg.priorities = PriorityMap(0b1000_1000);
    sw.dcbx.ieee.app = lossless_wire::ieee::AppPriorityTable::new();
    sw.dcbx.pfc.enable = false;
    p.sim.set_config(p.a, sw.clone()).expect("valid");
    p.sim.run_for(Duration::from_secs(6));
    // The switch becomes CEE-only: the host falls back, then the switch returns.
    p.sim
        .set_config(p.a, lossless_lab::scenario::switch_config())
        .expect("valid");
    p.sim.run_for(Duration::from_secs(6));
    sw.dcbx.headroom_measurement = true;
    sw.dcbx.ieee.pfc_mbc = true;
    p.sim.set_config(p.a, sw.clone()).expect("valid");
    p.sim.run_for(Duration::from_secs(6));
    sw.admin_status = AdminStatus::RxOnly;
    p.sim.set_config(p.a, sw).expect("valid");
    p.sim.run_for(Duration::from_secs(3));
    p.sim.restart(p.a, ieee_switch()).expect("valid");
    p.sim.run_for(Duration::from_secs(3));
    let (mut n_ieee, mut n_cee) = (0, 0);
    for c in p.sim.capture() {
        let f = Frame::parse(&c.bytes).expect("we emit valid frames");
        let Payload::Lldp(pdu) = &f.payload else {
            panic!("non-LLDP frame")
        };
        assert_eq!(pdu.ieee_dcbx.errors().count(), 0);
        n_ieee += usize::from(!pdu.ieee_dcbx.is_empty());
        n_cee += usize::from(pdu.cee_dcbx.is_some());
        assert!(
            pdu.ieee_dcbx.is_empty() || pdu.cee_dcbx.is_none(),
            "an agent sends one version"
        );
        let mut again = Vec::new();
        emit_lldp_frame(f.header.src, pdu, &mut again).expect("emits");
        assert_eq!(again, c.bytes, "re-emitted frame differs");
    }
    assert!(n_ieee > 20 && n_cee > 5, "{n_ieee} IEEE, {n_cee} CEE");
}

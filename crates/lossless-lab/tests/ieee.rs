//! IEEE 802.1Qaz feature by feature, with the outcome taken from the rules of IEEE
//! 802.1Q-2018 D.3 (not from the implementation) and asserted on both ends with when
//! it happened on the virtual clock: both links come up at 0, one-way delay D, so
//! each end's first LLDPDU arrives at D (a willing end runs what it takes from it
//! then, and answers at once: a new neighbour starts a fast burst) and the answer at
//! 2D.
//!
//! - ETS (D.3.2, asymmetric): a willing port runs the peer's ETS Recommendation,
//!   whatever the peer's Willing; otherwise its own table.
//! - PFC (D.3.3, symmetric): a willing port takes a not-willing peer's PFC; both
//!   willing, the lower MAC takes the higher MAC's; neither willing and different,
//!   the link runs two configurations: an error on both ends.
//! - APP: a willing port runs its own entries, then the peer's for a selector and
//!   protocol it does not name; it advertises its own entries only.

mod common;
use common::*;

use lossless_dcbx::{Duration, Event, FeatureId, Instant, PortConfig, Reason};
use lossless_lab::scenario::{roce_app_table, roce_ets_table};
use lossless_lab::Sim;
use lossless_wire::ieee::{AppPriority, AppPriorityTable, EtsTable, PriorityMap, Selector, Tsa};
use lossless_wire::MacAddr;

/// Instant `n` one-way delays after the link came up.
fn d(n: u32) -> Instant {
    Instant::ZERO + D * n
}

/// When `done` first holds, running on from now.
fn when(p: &mut Pair, done: impl FnMut(&Sim) -> bool) -> Option<Instant> {
    p.sim.run_until_true(secs(10.0), done)
}

/// A second valid table: every priority on TC 0, which has the whole link by ETS.
fn one_class() -> EtsTable {
    let mut tsa = [Tsa::STRICT; 8];
    tsa[0] = Tsa::ETS;
    EtsTable {
        prio_tc: [0; 8],
        tc_bw: [100, 0, 0, 0, 0, 0, 0, 0],
        tsa,
    }
}

fn app(entries: &[(u8, Selector, u16)]) -> AppPriorityTable {
    let v: Vec<AppPriority> = entries
        .iter()
        .map(|&(priority, selector, protocol)| AppPriority {
            priority,
            selector,
            protocol,
        })
        .collect();
    AppPriorityTable::try_from(&v[..]).expect("fits")
}

// ---------------------------------------------------------------- ETS

#[test]
fn ets_willing_host_runs_the_recommendation_after_one_frame() {
    let mut p = up_pair(ieee_switch(), ieee_host());
    let (a, b) = (p.a, p.b);
    let t = when(&mut p, |s| s.agent(b).ieee().ets.oper == roce_ets_table());
    assert_eq!(t, Some(d(1)), "the host runs the recommendation on receipt");
    let h = &p.sim.agent(b).ieee().ets;
    assert_eq!(h.reason, Reason::AdoptedRecommendation);
    assert!(h.agreed && h.oper_mode && !h.error);
    // The switch sees the host run its recommendation in the host's answer.
    let t = when(&mut p, |s| s.agent(a).ieee().ets.agreed);
    assert_eq!(t, Some(d(2)));
    p.sim.run_for(D * 300);
    let sw = &p.sim.agent(a).ieee().ets;
    assert_eq!(sw.oper, roce_ets_table());
    assert_eq!(sw.reason, Reason::NotWilling);
    assert!(!sw.error && sw.agreed);
    // What each sends: the switch its table and the recommendation; the host what it
    // runs (its own table before D, the recommendation after), never a recommendation.
    for (at, tlvs) in ieee_sent(&p.sim, a, Instant::ZERO) {
        let cfg = tlvs.ets_config.expect("ETS sent").expect("valid");
        assert!(!cfg.willing, "{at:?}");
        assert_eq!(cfg.table, roce_ets_table());
        let rec = tlvs.ets_recommendation.expect("REC sent").expect("valid");
        assert_eq!(rec.table, roce_ets_table());
    }
    for (at, tlvs) in ieee_sent(&p.sim, b, Instant::ZERO) {
        let cfg = tlvs.ets_config.expect("ETS sent").expect("valid");
        assert!(cfg.willing);
        let want = if at < d(1) {
            EtsTable::default()
        } else {
            roce_ets_table()
        };
        assert_eq!(cfg.table, want, "{at:?}");
        assert!(tlvs.ets_recommendation.is_none());
    }
}

#[test]
fn ets_willing_without_a_recommendation_runs_its_own() {
    let mut sw = ieee_switch();
    sw.dcbx.ieee.ets.cfg.recommend = Some(false);
    let mut p = up_pair(sw, ieee_host());
    let (a, b) = (p.a, p.b);
    let t = when(&mut p, |s| {
        s.agent(b).ieee().ets.reason == Reason::NoRecommendation
    });
    assert_eq!(t, Some(d(1)));
    p.sim.run_for(D * 300);
    let h = &p.sim.agent(b).ieee().ets;
    assert_eq!(
        h.oper,
        EtsTable::default(),
        "nothing recommended: its own table"
    );
    // Neither takes the other's table, which ETS allows: agreed, no error.
    assert!(h.agreed && !h.error);
    let sw = &p.sim.agent(a).ieee().ets;
    assert_eq!((sw.oper, sw.reason), (roce_ets_table(), Reason::NotWilling));
    assert!(sw.agreed && !sw.error);
    assert!(ieee_sent(&p.sim, a, Instant::ZERO)
        .iter()
        .all(|(_, t)| t.ets_recommendation.is_none()));
    assert!(!events(&p.sim, b).iter().any(|(at, e)| *at > Instant::ZERO
        && *e
            == Event::OperChanged {
                feature: FeatureId::Ets,
                oper_mode: true
            }));
}

#[test]
fn ets_not_willing_host_keeps_its_table_despite_a_recommendation() {
    let mut host = ieee_host();
    host.dcbx.ieee.ets.willing = false;
    host.dcbx.ieee.ets.cfg.table = one_class();
    let mut p = up_pair(ieee_switch(), host);
    let (a, b) = (p.a, p.b);
    let t = when(&mut p, |s| {
        s.agent(a).ieee().ets.agreed && s.agent(b).ieee().ets.agreed
    });
    assert_eq!(t, Some(d(1)), "nothing to take: agreed on the first frame");
    p.sim.run_for(D * 300);
    for (n, table) in [(a, roce_ets_table()), (b, one_class())] {
        let e = &p.sim.agent(n).ieee().ets;
        assert_eq!((e.oper, e.reason), (table, Reason::NotWilling));
        assert!(!e.error);
    }
    // Not willing, recommendation unset: the host recommends its own table too.
    let sent = ieee_sent(&p.sim, b, Instant::ZERO);
    assert!(sent
        .iter()
        .all(|(_, t)| { matches!(&t.ets_recommendation, Some(Ok(r)) if r.table == one_class()) }));
}

#[test]
fn ets_both_willing_each_runs_the_others_recommendation() {
    let mut sw = ieee_switch();
    sw.dcbx.ieee.ets.willing = true;
    sw.dcbx.ieee.ets.cfg.recommend = Some(true);
    let mut host = ieee_host();
    host.dcbx.ieee.ets.cfg.table = one_class();
    host.dcbx.ieee.ets.cfg.recommend = Some(true);
    let mut p = up_pair(sw, host);
    let (a, b) = (p.a, p.b);
    let t = when(&mut p, |s| {
        s.agent(a).ieee().ets.oper == one_class() && s.agent(b).ieee().ets.oper == roce_ets_table()
    });
    assert_eq!(t, Some(d(1)), "the recommendations cross");
    p.sim.run_for(D * 300);
    for n in [a, b] {
        let e = &p.sim.agent(n).ieee().ets;
        assert_eq!(e.reason, Reason::AdoptedRecommendation);
        assert!(e.agreed && !e.error);
    }
    // Each advertises what it runs (the other's table) and recommends its own.
    let last = |n| ieee_sent(&p.sim, n, d(1)).pop().expect("sent").1;
    let (sa, sb) = (last(a), last(b));
    assert_eq!(sa.ets_config.expect("cfg").expect("ok").table, one_class());
    assert_eq!(
        sa.ets_recommendation.expect("rec").expect("ok").table,
        roce_ets_table()
    );
    assert_eq!(
        sb.ets_config.expect("cfg").expect("ok").table,
        roce_ets_table()
    );
    assert_eq!(
        sb.ets_recommendation.expect("rec").expect("ok").table,
        one_class()
    );
}

// ---------------------------------------------------------------- PFC

struct PfcEnd {
    mac: u8,
    willing: bool,
    prios: u8,
}

fn pfc_cfg(base: PortConfig, e: &PfcEnd) -> PortConfig {
    let mut c = base;
    c.mac = MacAddr([2, 0, 0, 0, 0, e.mac]);
    c.dcbx.pfc.willing = e.willing;
    c.dcbx.pfc.cfg.priorities = PriorityMap(e.prios);
    c
}

/// Runs a PFC case: returns the pair after 3 s, and when each end first ran the
/// priorities it ends with and first agreed.
fn pfc_case(a: PfcEnd, b: PfcEnd) -> (Pair, [Option<Instant>; 4]) {
    let mut p = up_pair(pfc_cfg(ieee_switch(), &a), pfc_cfg(ieee_host(), &b));
    p.sim.run_for(D * 300);
    let mut times = [None; 4];
    for (i, n) in [p.a, p.b].into_iter().enumerate() {
        let ev = events(&p.sim, n);
        let first = |f: &dyn Fn(&Event) -> bool| ev.iter().find(|(_, e)| f(e)).map(|(t, _)| *t);
        times[i] = first(&|e| {
            *e == Event::OperChanged {
                feature: FeatureId::Pfc,
                oper_mode: true,
            }
        });
        times[2 + i] = first(&|e| {
            *e == Event::Syncd {
                feature: FeatureId::Pfc,
            }
        });
    }
    (p, times)
}

fn pfc_of(p: &Pair, n: usize) -> (PriorityMap, Reason, bool, bool) {
    let f = &p.sim.agent(n).ieee().pfc;
    (f.oper, f.reason, f.agreed, f.error)
}

#[test]
fn pfc_neither_willing_same_priorities_is_compatible() {
    let (p, t) = pfc_case(
        PfcEnd {
            mac: 0x0a,
            willing: false,
            prios: 0b1000,
        },
        PfcEnd {
            mac: 0x0b,
            willing: false,
            prios: 0b1000,
        },
    );
    for n in [p.a, p.b] {
        assert_eq!(
            pfc_of(&p, n),
            (PriorityMap(0b1000), Reason::Compatible, true, false)
        );
    }
    assert_eq!(
        [t[2], t[3]],
        [Some(d(1)), Some(d(1))],
        "agreed on the first frame"
    );
}

#[test]
fn pfc_neither_willing_different_priorities_is_a_mismatch_on_both_ends() {
    let (p, _) = pfc_case(
        PfcEnd {
            mac: 0x0a,
            willing: false,
            prios: 0b1000,
        },
        PfcEnd {
            mac: 0x0b,
            willing: false,
            prios: 0b1_0000,
        },
    );
    for (n, own) in [(p.a, 0b1000), (p.b, 0b1_0000)] {
        // Each keeps its own (neither may take the other's), and reports the mismatch.
        assert_eq!(
            pfc_of(&p, n),
            (PriorityMap(own), Reason::PeerDiffers, false, true)
        );
        assert!(p.sim.agent(n).any_error());
        let ev = events(&p.sim, n);
        let set: Vec<Instant> = ev
            .iter()
            .filter(|(_, e)| {
                *e == Event::ErrorSet {
                    feature: FeatureId::Pfc,
                    reason: Reason::PeerDiffers,
                }
            })
            .map(|(t, _)| *t)
            .collect();
        assert_eq!(set, vec![d(1)], "set on the first frame, once");
        assert!(!ev.iter().any(|(_, e)| *e
            == Event::ErrorCleared {
                feature: FeatureId::Pfc
            }));
        assert!(!p.sim.agent(n).all_syncd());
    }
}

#[test]
fn pfc_willing_end_takes_the_not_willing_peers() {
    for flip in [false, true] {
        // The not-willing end has the lower MAC in one run and the higher in the
        // other: with one end not willing, the MACs do not matter.
        let (w_mac, nw_mac) = if flip { (0x0a, 0x0b) } else { (0x0b, 0x0a) };
        let (p, t) = pfc_case(
            PfcEnd {
                mac: nw_mac,
                willing: false,
                prios: 0b1000,
            },
            PfcEnd {
                mac: w_mac,
                willing: true,
                prios: 0b1_0000,
            },
        );
        assert_eq!(
            pfc_of(&p, p.a),
            (PriorityMap(0b1000), Reason::PeerWilling, true, false)
        );
        assert_eq!(
            pfc_of(&p, p.b),
            (PriorityMap(0b1000), Reason::AdoptedPeer, true, false)
        );
        // b runs a's PFC on receipt of a's first frame; a sees it in b's answer.
        assert_eq!([t[3], t[2]], [Some(d(1)), Some(d(2))], "flip {flip}");
        assert_eq!(p.sim.agent(p.b).applied_pfc(), PriorityMap(0b1000));
        // b advertises what it runs, Willing still set.
        for (at, tlvs) in ieee_sent(&p.sim, p.b, d(1)) {
            let pfc = tlvs.pfc.expect("PFC").expect("valid");
            assert!(pfc.willing && pfc.enabled == PriorityMap(0b1000), "{at:?}");
        }
    }
}

#[test]
fn pfc_both_willing_the_lower_mac_takes_the_higher_macs() {
    // a lower: a takes b's.
    let (p, t) = pfc_case(
        PfcEnd {
            mac: 0x0a,
            willing: true,
            prios: 0b1000,
        },
        PfcEnd {
            mac: 0x0b,
            willing: true,
            prios: 0b1_1000,
        },
    );
    assert_eq!(
        pfc_of(&p, p.a),
        (PriorityMap(0b1_1000), Reason::TieBreakAdopted, true, false)
    );
    assert_eq!(
        pfc_of(&p, p.b),
        (PriorityMap(0b1_1000), Reason::TieBreakKept, true, false)
    );
    assert_eq!([t[2], t[3]], [Some(d(1)), Some(d(2))]);
    // The other way round: a higher, b takes a's.
    let (p, t) = pfc_case(
        PfcEnd {
            mac: 0x0c,
            willing: true,
            prios: 0b1000,
        },
        PfcEnd {
            mac: 0x0b,
            willing: true,
            prios: 0b1_1000,
        },
    );
    assert_eq!(
        pfc_of(&p, p.a),
        (PriorityMap(0b1000), Reason::TieBreakKept, true, false)
    );
    assert_eq!(
        pfc_of(&p, p.b),
        (PriorityMap(0b1000), Reason::TieBreakAdopted, true, false)
    );
    assert_eq!([t[2], t[3]], [Some(d(2)), Some(d(1))]);
    for n in [p.a, p.b] {
        assert_eq!(p.sim.agent(n).applied_pfc(), PriorityMap(0b1000));
        assert!(p.sim.agent(n).all_syncd());
    }
}

// ---------------------------------------------------------------- APP

#[test]
fn app_willing_runs_its_entries_then_the_peers_it_does_not_name() {
    let mut host = ieee_host();
    // RoCEv2 on 5 here, on 3 at the switch: the host's entry stands, the switch's for
    // the same selector and port is dropped; iSCSI is the host's own.
    host.dcbx.ieee.app = app(&[(5, Selector::UDP, 4791), (4, Selector::TCP, 3260)]);
    let mut p = up_pair(ieee_switch(), host);
    let (a, b) = (p.a, p.b);
    let merged = app(&[
        (5, Selector::UDP, 4791),
        (4, Selector::TCP, 3260),
        (3, Selector::DSCP, 26),
    ]);
    let t = when(&mut p, |s| s.agent(b).ieee().app.oper == merged);
    assert_eq!(t, Some(d(1)));
    p.sim.run_for(D * 300);
    let h = &p.sim.agent(b).ieee().app;
    assert_eq!((h.reason, h.agreed, h.error), (Reason::Merged, true, false));
    assert_eq!(h.oper, merged);
    // The switch, not willing, runs its own and sees the host's own entries only.
    let sw = &p.sim.agent(a).ieee().app;
    assert_eq!(
        (sw.oper.clone(), sw.reason),
        (roce_app_table(), Reason::NotWilling)
    );
    assert_eq!(
        p.sim.agent(a).ieee().peer.app,
        Some(app(&[(5, Selector::UDP, 4791), (4, Selector::TCP, 3260)]))
    );
    // Every APP TLV the host sent carries its own entries, never the merge.
    for (_, tlvs) in ieee_sent(&p.sim, b, Instant::ZERO) {
        assert_eq!(
            tlvs.app.expect("APP").expect("valid"),
            app(&[(5, Selector::UDP, 4791), (4, Selector::TCP, 3260)])
        );
    }
}

#[test]
fn app_both_willing_merge_each_way_and_not_willing_keeps_its_own() {
    let mut sw = ieee_switch();
    sw.dcbx.app.willing = true;
    let mut host = ieee_host();
    host.dcbx.ieee.app = app(&[(5, Selector::UDP, 4791), (4, Selector::TCP, 3260)]);
    let mut p = up_pair(sw, host.clone());
    p.sim.run_for(D * 300);
    assert_eq!(
        p.sim.agent(p.a).ieee().app.oper,
        app(&[
            (3, Selector::DSCP, 26),
            (3, Selector::UDP, 4791),
            (4, Selector::TCP, 3260)
        ])
    );
    assert_eq!(
        p.sim.agent(p.b).ieee().app.oper,
        app(&[
            (5, Selector::UDP, 4791),
            (4, Selector::TCP, 3260),
            (3, Selector::DSCP, 26)
        ])
    );
    // The host not willing: its own entries only, on both counts.
    host.dcbx.app.willing = false;
    let mut p = up_pair(ieee_switch(), host);
    let b = p.b;
    let t = when(&mut p, |s| {
        s.agent(b).ieee().app.reason == Reason::NotWilling
    });
    assert_eq!(t, Some(d(1)));
    p.sim.run_for(D * 300);
    let h = &p.sim.agent(b).ieee().app;
    assert_eq!(
        h.oper,
        app(&[(5, Selector::UDP, 4791), (4, Selector::TCP, 3260)])
    );
    assert!(h.agreed && !h.error);
    assert_eq!(p.sim.agent(b).ieee().peer.app, Some(roce_app_table()));
}

/// Both willing with the same MAC (two ports given one address, a misconfiguration):
/// no MAC is lower, so no rule says who takes whose. If each took the other's, they
/// would swap configurations at every exchange, each change sent at once, for ever
/// (a flood at the transmit credit's rate, and the NIC reprogrammed each time). With
/// the same MAC each LLDPDU carries the other's own MSAP, which cannot be told from
/// its own LLDPDUs looped back: each discards them, keeps its own configuration and
/// reports a loop.
#[test]
fn pfc_both_willing_with_the_same_mac_keep_their_own_and_report_it() {
    let mut p = up_pair(
        pfc_cfg(
            ieee_host(),
            &PfcEnd {
                mac: 0x0b,
                willing: true,
                prios: 0b1000,
            },
        ),
        pfc_cfg(
            ieee_host(),
            &PfcEnd {
                mac: 0x0b,
                willing: true,
                prios: 0b1_0000,
            },
        ),
    );
    p.sim.run_for(Duration::from_secs(100));
    for (n, own) in [(p.a, 0b1000), (p.b, 0b1_0000)] {
        let (oper, _, agreed, _) = pfc_of(&p, n);
        assert_eq!((oper, agreed), (PriorityMap(own), false));
        assert!(p.sim.agent(n).neighbors().is_empty());
        let port = p.sim.port(n);
        assert!(port.io.rx_own_lldpdus > 0);
        assert!(
            port.health().health.contains("loop:"),
            "{:?}",
            port.health()
        );
        let flips = events(&p.sim, n)
            .iter()
            .filter(|(_, e)| {
                matches!(
                    e,
                    Event::OperChanged {
                        feature: FeatureId::Pfc,
                        ..
                    }
                )
            })
            .count();
        assert_eq!(flips, 1, "PFC set once, at link-up");
    }
    // The link-up burst (5 frames each) and one answer to the new neighbour each,
    // then one every 30 s: nothing more.
    assert!(p.sim.stats().frames_sent <= 20, "{:?}", p.sim.stats());
}

// ---------------------------------------------------------------- the CEE view

/// Fails on the old code: a port running IEEE 802.1Qaz showed its CEE features as
/// "DCBX is not running on this port", beside IEEE features that agree.
#[test]
fn a_port_running_ieee_says_so_in_its_cee_features() {
    let mut p = up_pair(ieee_switch(), ieee_host());
    let b = p.b;
    when(&mut p, |s| s.agent(b).ieee().pfc.agreed).expect("PFC agreed");
    let status = p.sim.agent(b).status();
    assert!(status.dcbx_active);
    for (name, f) in [
        ("pg", &status.pg.reason),
        ("pfc", &status.pfc.reason),
        ("app", &status.app.reason),
    ] {
        assert_eq!(*f, Reason::IeeeRunning, "{name}");
    }
    assert!(
        status.pfc.reason_text.contains("IEEE 802.1Qaz"),
        "{}",
        status.pfc.reason_text
    );
}

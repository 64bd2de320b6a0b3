//! Every (willing, willing) x (compatible, incompatible) case for PG, PFC and
//! APP, with the outcome taken from the rules of the CEE DCBX specification §2.4.3 and Table 6
//! (not from the implementation), and when it was reached.

mod common;
use common::*;

use lossless_dcbx::{PortConfig, Reason};
use lossless_lab::scenario::converged;
use lossless_wire::cee::{AppEntry, AppSelector, PfcConfig, PgConfig, PriorityMap, DCBX_OUI};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Feat {
    Pg,
    Pfc,
    App,
}

/// Gives `c` a distinct configuration for `f` (variant 0 or 1) and willingness.
fn configure(c: &mut PortConfig, f: Feat, variant: u8, willing: bool) {
    match f {
        Feat::Pg => {
            c.dcbx.pg.willing = willing;
            c.dcbx.pg.cfg = if variant == 0 {
                PgConfig {
                    pgid: [0, 0, 0, 1, 1, 1, 15, 2],
                    percent: [25, 75, 0, 0, 0, 0, 0, 0],
                    num_tcs: 8,
                }
            } else {
                PgConfig {
                    pgid: [0, 1, 1, 1, 1, 1, 1, 1],
                    percent: [50, 50, 0, 0, 0, 0, 0, 0],
                    num_tcs: 4,
                }
            };
        }
        Feat::Pfc => {
            c.dcbx.pfc.willing = willing;
            c.dcbx.pfc.cfg = PfcConfig {
                priorities: PriorityMap(if variant == 0 {
                    0b0001_1000
                } else {
                    0b0000_1000
                }),
                num_tcs: 8,
            };
        }
        Feat::App => {
            c.dcbx.app.willing = willing;
            c.dcbx.app.cfg.entries.clear();
            c.dcbx.app.cfg.entries.push(AppEntry {
                selector: AppSelector::PORT,
                protocol: 4791,
                oui: DCBX_OUI,
                priorities: PriorityMap(if variant == 0 { 0b1000 } else { 0b1_0000 }),
            });
        }
    }
}

struct Seen {
    oper_mode: bool,
    error: bool,
    oper_is_own: bool,
    oper_is_peer: bool,
    reason: Reason,
}

fn seen(p: &Pair, node: usize, f: Feat, own: &PortConfig, peer: &PortConfig) -> Seen {
    let a = p.sim.agent(node);
    match f {
        Feat::Pg => Seen {
            oper_mode: a.pg().oper_mode,
            error: a.pg().error,
            oper_is_own: a.pg().oper_cfg == own.dcbx.pg.cfg,
            oper_is_peer: a.pg().oper_cfg == peer.dcbx.pg.cfg,
            reason: a.pg().reason,
        },
        Feat::Pfc => Seen {
            oper_mode: a.pfc().oper_mode,
            error: a.pfc().error,
            oper_is_own: a.pfc().oper_cfg == own.dcbx.pfc.cfg,
            oper_is_peer: a.pfc().oper_cfg == peer.dcbx.pfc.cfg,
            reason: a.pfc().reason,
        },
        Feat::App => Seen {
            oper_mode: a.app().oper_mode,
            error: a.app().error,
            oper_is_own: a.app().oper_cfg == own.dcbx.app.cfg,
            oper_is_peer: a.app().oper_cfg == peer.dcbx.app.cfg,
            reason: a.app().reason,
        },
    }
}

#[test]
fn every_willing_pair_and_compatibility_for_every_feature() {
    for f in [Feat::Pg, Feat::Pfc, Feat::App] {
        for (wa, wb) in [(false, false), (true, false), (false, true), (true, true)] {
            for compatible in [true, false] {
                let mut ca = host();
                let mut cb = switch();
                // Start both from the same configuration of the other features.
                cb.dcbx = ca.dcbx.clone();
                configure(&mut ca, f, 0, wa);
                configure(&mut cb, f, if compatible { 0 } else { 1 }, wb);
                let mut p = pair_with(ca.clone(), cb.clone(), D, 0.0, 7);
                p.sim.set_link(p.seg, true);
                let t = p.sim.run_until_true(secs(10.0), converged);
                let case = format!("{f:?} willing a={wa} b={wb} compatible={compatible}");
                let t = t.unwrap_or_else(|| panic!("{case}: no convergence"));
                p.sim.run_for(lossless_dcbx::Duration::from_secs(3));
                let sa = seen(&p, p.a, f, &ca, &cb);
                let sb = seen(&p, p.b, f, &cb, &ca);
                // PG is never compared (Table 6): differing PGs are compatible.
                let compat = compatible || f == Feat::Pg;
                if wa != wb {
                    // The willing side runs the other's configuration, no error on either.
                    let (w, nw) = if wa { (&sa, &sb) } else { (&sb, &sa) };
                    assert!(
                        w.oper_mode && w.oper_is_peer && !w.error,
                        "{case}: willing side"
                    );
                    assert_eq!(w.reason, Reason::AdoptedPeer, "{case}");
                    assert!(
                        nw.oper_mode && nw.oper_is_own && !nw.error,
                        "{case}: not-willing side"
                    );
                    assert_eq!(nw.reason, Reason::PeerWilling, "{case}");
                    // Simultaneous link-up: one round trip (frames out, acks back).
                    assert_eq!(at(t), 2.0 * D.as_secs_f64(), "{case}: converged at {t:?}");
                } else if compat {
                    for s in [&sa, &sb] {
                        assert!(s.oper_mode && s.oper_is_own && !s.error, "{case}");
                        assert_eq!(s.reason, Reason::Compatible, "{case}");
                    }
                    assert_eq!(at(t), 2.0 * D.as_secs_f64(), "{case}: converged at {t:?}");
                } else {
                    // Mismatch: Error set, OperMode off, local configuration kept.
                    for s in [&sa, &sb] {
                        assert!(!s.oper_mode && s.error && s.oper_is_own, "{case}");
                        assert_eq!(s.reason, Reason::Incompatible, "{case}");
                    }
                    // The Error flag is an exchanged parameter: it goes out with
                    // SeqNo 2, acknowledged one round trip later.
                    assert_eq!(at(t), 4.0 * D.as_secs_f64(), "{case}: converged at {t:?}");
                    assert_eq!(p.sim.agent(p.a).control().seq, 2, "{case}");
                }
                // PFC off in hardware unless operational; PG and APP keep the local config.
                if f == Feat::Pfc && !compat && wa == wb {
                    assert_eq!(p.sim.agent(p.a).pfc().applied(&ca.dcbx.pfc), None, "{case}");
                }
            }
        }
    }
}

#[test]
fn advertise_off_on_either_side() {
    for off_on_a in [true, false] {
        let mut ca = switch();
        let mut cb = host();
        if off_on_a {
            ca.dcbx.pfc.advertise = false;
        } else {
            cb.dcbx.pfc.advertise = false;
        }
        let p = converged_pair(ca, cb);
        let (quiet, other) = if off_on_a { (p.a, p.b) } else { (p.b, p.a) };
        let q = p.sim.agent(quiet).pfc();
        assert_eq!(q.reason, Reason::NotAdvertised);
        assert!(
            q.oper_mode && !q.error,
            "not advertised: OperMode = Enable, no error"
        );
        let o = p.sim.agent(other).pfc();
        assert_eq!(o.reason, Reason::PeerFeatureAbsent);
        assert!(!o.oper_mode && o.error);
        // PG is unaffected.
        assert!(p.sim.agent(other).pg().oper_mode);
        // The manager was told the feature is missing on the peer.
        let told = p.sim.log().iter().any(|e| matches!(e,
            lossless_lab::LogEntry::Event { node, event: lossless_dcbx::Event::FeatureNotPresentOnPeer { feature: lossless_dcbx::FeatureId::Pfc }, .. } if *node == other));
        assert!(told);
    }
}

#[test]
fn enable_off_on_either_side() {
    for off_on_a in [true, false] {
        let mut ca = switch();
        let mut cb = host();
        if off_on_a {
            ca.dcbx.pfc.enable = false;
            ca.dcbx.pg.enable = false;
        } else {
            cb.dcbx.pfc.enable = false;
            cb.dcbx.pg.enable = false;
        }
        let p = converged_pair(ca.clone(), cb.clone());
        for (node, cfg, local_off) in [(p.a, &ca, off_on_a), (p.b, &cb, !off_on_a)] {
            let ag = p.sim.agent(node);
            assert!(!ag.pfc().oper_mode && !ag.pfc().error);
            assert!(!ag.pg().oper_mode && !ag.pg().error);
            let want = if local_off {
                Reason::LocalDisabled
            } else {
                Reason::PeerDisabled
            };
            assert_eq!(ag.pfc().reason, want);
            // SetCfg(_, false): PFC disabled; PG runs the local configuration (if enabled here).
            assert_eq!(ag.pfc().applied(&cfg.dcbx.pfc), None);
            let pg_applied = ag.pg().applied(&cfg.dcbx.pg);
            assert_eq!(pg_applied, (!local_off).then_some(cfg.dcbx.pg.cfg));
        }
    }
}

#[test]
fn convergence_within_three_frames_and_one_and_a_half_round_trips() {
    // b is up first; a comes up later (an agent started after its peer):
    // a's first frame, b's answer (acks a), a's answer (acks b) = 3 frames, 1.5 RTT.
    let mut p = pair_with(switch(), host(), D, 0.0, 3);
    p.sim.set_node_link(p.b, true);
    p.sim.run_until(secs(0.5));
    let start = p.sim.now();
    let sent_before = p.sim.stats().frames_sent;
    p.sim.set_node_link(p.a, true);
    let t = p
        .sim
        .run_until_true(secs(10.0), converged)
        .expect("converges");
    let frames = p.sim.stats().frames_sent - sent_before;
    let rtt = 2.0 * D.as_secs_f64();
    assert!(frames <= 3, "{frames} frames");
    assert!(
        (t - start).as_secs_f64() <= 1.5 * rtt + 1e-9,
        "{:?}",
        t - start
    );
    // The willing host runs the switch's PFC.
    assert_eq!(
        p.sim.agent(p.b).pfc().oper_cfg.priorities,
        PriorityMap(0b1_1000)
    );
}

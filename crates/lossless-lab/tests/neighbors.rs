//! A device on the link that is not the DCBX peer: IEEE 802.1AB's and DCBX's rule
//! (more than one neighbour: no DCBX peer) holds, but only while the cause does. Each
//! extra MSAP holds the port until it ages out or shuts down, and a neighbour we never
//! negotiated with for at most `max_neighbor_hold`; the survivor's own frames never
//! extend it, and on leaving the state the port asks the survivor for a fresh LLDPDU.
//! Fakes come from a scripted node the real peer does not hear, on both DCBX versions.

mod common;
use common::*;

use lossless_dcbx::{Event, Instant, PortConfig, Reason};
use lossless_lab::scenario::converged_nodes;
use lossless_lab::scripted::{ScriptedPdu, ScriptedPeer};
use lossless_lab::{NodeId, PathProps, Sim};
use lossless_wire::cee::PriorityMap;
use lossless_wire::frame::{Frame, Payload};
use lossless_wire::MacAddr;
use rand::{Rng, SeedableRng};

use lossless_dcbx::Duration;

/// The default `max_neighbor_hold`.
const CAP: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    Cee,
    Ieee,
}

const BOTH: [Version; 2] = [Version::Cee, Version::Ieee];

/// The not-willing switch and the willing host of `version` (CEE: PFC on 3 and 4;
/// IEEE 802.1Qaz: on 3).
fn configs(version: Version) -> (PortConfig, PortConfig) {
    match version {
        Version::Cee => (switch(), host()),
        Version::Ieee => (ieee_switch(), ieee_host()),
    }
}

/// The switch (`a`), the host (`b`) and a scripted node on their link whose frames
/// reach only the host, after `D`.
struct Link {
    p: Pair,
    fake: NodeId,
    /// The PFC priorities the host runs when it follows the switch.
    pfc: PriorityMap,
}

impl Link {
    fn new(version: Version, host_cfg: impl FnOnce(&mut PortConfig)) -> Link {
        let (sw, mut h) = configs(version);
        host_cfg(&mut h);
        let pfc = sw.dcbx.pfc.cfg.priorities;
        let mut p = pair_with(sw, h, D, 0.0, 1);
        let fake = ScriptedPeer::add(&mut p.sim, "fake", MacAddr([2, 0xfa, 0, 0, 0, 0])).node;
        p.sim.attach(p.seg, fake);
        p.sim.set_path(
            fake,
            p.b,
            PathProps {
                delay: D,
                loss: 0.0,
            },
        );
        p.sim.set_path(
            fake,
            p.a,
            PathProps {
                delay: D,
                loss: 1.0,
            },
        );
        p.sim.set_node_link(fake, true);
        Link { p, fake, pfc }
    }

    /// Both up and converged.
    fn converged(version: Version, host_cfg: impl FnOnce(&mut PortConfig)) -> Link {
        let mut l = Link::new(version, host_cfg);
        l.p.sim.set_node_link(l.p.a, true);
        l.p.sim.set_node_link(l.p.b, true);
        let (a, b) = (l.p.a, l.p.b);
        let t =
            l.p.sim
                .run_until_true(secs(10.0), |s| converged_nodes(s, &[a, b]));
        assert!(t.is_some(), "{version:?}: the pair did not converge");
        l.p.sim.run_for(Duration::from_secs(5));
        l
    }

    /// The fake sends one LLDPDU (mandatory TLVs only) from `mac` now.
    fn fake(&mut self, mac: MacAddr, ttl: u16) {
        let pdu = ScriptedPdu {
            ttl,
            ..ScriptedPdu::new(mac)
        };
        self.p
            .sim
            .send_frame(self.fake, pdu.frame().expect("emits"));
    }

    /// The host runs the switch's PFC with the switch as its DCBX peer, in sync.
    fn host_follows(&self) -> impl Fn(&Sim) -> bool {
        let (b, pfc) = (self.p.b, self.pfc);
        move |s: &Sim| converged_nodes(s, &[b]) && s.agent(b).applied_pfc() == pfc
    }

    fn host_blocked(&self) -> bool {
        let h = self.p.sim.agent(self.p.b);
        !h.peer_present()
            && h.applied_pfc() == PriorityMap::NONE
            && pfc_reason(h) == Reason::MultiplePeers
    }

    /// When the host's tooManyNeighbors state went on and off, in order.
    fn transitions(&self) -> Vec<(Instant, bool)> {
        events(&self.p.sim, self.p.b)
            .into_iter()
            .filter_map(|(t, e)| match e {
                Event::TooManyNeighbors { active } => Some((t, active)),
                _ => None,
            })
            .collect()
    }
}

fn pfc_reason(a: &lossless_dcbx::Agent) -> Reason {
    match a.running() {
        lossless_dcbx::Version::Cee => a.pfc().reason,
        lossless_dcbx::Version::Ieee => a.ieee().pfc.reason,
    }
}

fn fake_mac(i: u32) -> MacAddr {
    let [_, x, y, z] = i.to_be_bytes();
    MacAddr([2, 0xfa, 1, x, y, z])
}

/// One LLDPDU from a second MSAP with TTL 65535 while the host follows the switch:
/// the host has no DCBX peer for exactly `cap`, then runs the switch's configuration
/// again while the fake stays a neighbour; the expiry is an event and a metric.
fn one_frame_costs_the_cap(version: Version, cap: Option<u32>) {
    let mut l = Link::converged(version, |h| {
        if let Some(c) = cap {
            h.max_neighbor_hold = c;
        }
    });
    let cap = cap.map_or(CAP, |c| Duration::from_secs(c.into()));
    let what = format!("{version:?}, cap {cap:?}");
    let t0 = l.p.sim.now();
    l.fake(fake_mac(1), u16::MAX);
    l.p.sim.run_until(t0 + D);
    assert!(l.host_blocked(), "{what}: two neighbours, no DCBX peer");
    // The rule holds for the whole cap...
    l.p.sim.run_until(t0 + D + (cap - Duration::from_millis(1)));
    assert!(l.host_blocked(), "{what}: released before the cap");
    // ...and not a moment longer: the host runs what it holds of the switch.
    let t =
        l.p.sim
            .run_until_true(t0 + D + cap + Duration::from_secs(1), l.host_follows());
    let t = t.unwrap_or_else(|| panic!("{what}: still blocked after the cap"));
    assert!(
        t - (t0 + D + cap) <= 4 * D,
        "{what}: {:?} after the fake",
        t - (t0 + D)
    );
    assert_eq!(
        l.transitions(),
        [(t0 + D, true), (t0 + D + cap, false)],
        "{what}"
    );
    let expired: Vec<(Instant, String)> = events(&l.p.sim, l.p.b)
        .into_iter()
        .filter_map(|(t, e)| match e {
            Event::NeighborHoldExpired { chassis_id, .. } => Some((t, chassis_id)),
            _ => None,
        })
        .collect();
    assert_eq!(
        expired,
        [(t0 + D + cap, "02:fa:01:00:00:01".to_string())],
        "{what}"
    );
    // The fake is still a neighbour, and holds nothing any more.
    l.p.sim.run_for(Duration::from_secs(300));
    let h = l.p.sim.agent(l.p.b);
    assert_eq!(h.neighbors().len(), 2, "{what}");
    assert!(l.host_follows()(&l.p.sim), "{what}");
    let metrics = l.p.sim.metrics(l.p.b);
    for line in [
        "lossless_lldp_neighbor_hold_expiries_total{port=\"p0\"} 1",
        "lossless_dcbx_events_total{port=\"p0\",kind=\"neighbor_hold_expired\"} 1",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "{what}: no {line} in\n{metrics}"
        );
    }
}

#[test]
fn one_ttl_65535_lldpdu_costs_at_most_the_cap() {
    for version in BOTH {
        one_frame_costs_the_cap(version, None);
    }
}

#[test]
fn a_configured_cap_of_5_s_holds_5_s() {
    for version in BOTH {
        one_frame_costs_the_cap(version, Some(5));
    }
}

#[test]
fn a_flood_of_fake_msaps_costs_their_ttl() {
    const N: u32 = 10_000;
    const TTL: u16 = 20;
    for version in BOTH {
        for peer_first in [true, false] {
            let what = format!(
                "{version:?}, switch up {} the flood",
                if peer_first { "before" } else { "during" }
            );
            let mut l = Link::new(version, |_| {});
            let (a, b) = (l.p.a, l.p.b);
            l.p.sim.set_node_link(b, true);
            if peer_first {
                l.p.sim.set_node_link(a, true);
                let t =
                    l.p.sim
                        .run_until_true(secs(10.0), |s| converged_nodes(s, &[a, b]));
                assert!(t.is_some(), "{what}: no convergence before the flood");
            }
            // N fakes over one second; a switch coming up in the middle of it
            // finds the host's remote MIB full: its LLDPDUs are discarded.
            let start = secs(20.0);
            let gap = Duration::from_micros(100);
            for i in 0..N {
                l.p.sim.run_until(start + gap * i);
                if !peer_first && i == N / 2 {
                    l.p.sim.set_node_link(a, true);
                }
                l.fake(fake_mac(i), TTL);
            }
            let last = l.p.sim.now() + D;
            let ttl = Duration::from_secs(TTL.into());
            l.p.sim.run_until(last);
            assert!(l.host_blocked(), "{what}");
            let t =
                l.p.sim
                    .run_until_true(last + ttl + Duration::from_secs(2), l.host_follows())
                    .unwrap_or_else(|| panic!("{what}: the host did not converge"));
            // The host's receive budget (200 frames at once, then 100 a second from
            // others than its DCBX peer) refuses most of the flood unread: the fakes
            // it took come one per 10 ms, so the last of them at most 10 ms before
            // the last one sent, and the port is held until that one's TTL.
            assert!(
                t + Duration::from_millis(11) >= last + ttl,
                "{what}: released at {t:?}, last fake {last:?}"
            );
            assert!(
                t <= last + ttl + Duration::from_secs(1),
                "{what}: converged {:?} after the last fake",
                t - last
            );
        }
    }
}

/// What the host's state must do under `frames` (arrival instant, fake, TTL), the
/// switch being its negotiated peer: each fake's life starts with a frame, holds the
/// port until `cap` later, and ends at its TTL or at its shutdown LLDPDU; the port is
/// in tooManyNeighbors while some fake lives and holds. Returns its transitions.
fn model(frames: &[(Instant, u32, u16)], cap: Duration) -> Vec<(Instant, bool)> {
    use std::collections::BTreeMap;
    // Per fake: (hold ends, life ends).
    let mut live: BTreeMap<u32, (Instant, Instant)> = BTreeMap::new();
    let mut out: Vec<(Instant, bool)> = Vec::new();
    let mut frames = frames.iter().peekable();
    let mut now = Instant::ZERO;
    loop {
        // The next instant anything happens: a frame, or a deadline after `now`.
        let deadline = live
            .values()
            .flat_map(|&(h, l)| [h, l])
            .filter(|&d| d > now)
            .min();
        let arrival = frames.peek().map(|f| f.0);
        now = match (deadline, arrival) {
            (Some(d), Some(a)) => d.min(a),
            (d, a) => match d.or(a) {
                Some(t) => t,
                None => return out,
            },
        };
        // As the agent: ageing first, then the frames of this instant.
        live.retain(|_, (_, l)| *l > now);
        while let Some(&&(_, fake, ttl)) = frames.peek().filter(|f| f.0 == now) {
            frames.next();
            if ttl == 0 {
                live.remove(&fake);
                continue;
            }
            let life = now + Duration::from_secs(ttl.into());
            live.entry(fake).or_insert((now + cap, life)).1 = life;
        }
        let state = live.values().any(|&(h, _)| now < h);
        if out.last().is_some_and(|l| l.1) != state {
            out.push((now, state));
        }
    }
}

#[test]
fn random_fakes_leave_the_state_at_the_computed_instant() {
    for seed in 0..12u64 {
        let version = BOTH[(seed % 2) as usize];
        let mut l = Link::converged(version, |_| {});
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let t0 = l.p.sim.now();
        // 60 LLDPDUs from 10 fakes (more than the remote MIB holds: some are
        // discarded) over 100 s: shutdowns, short and long TTLs, repeats.
        let mut sends: Vec<(Instant, u32, u16)> = (0..60)
            .map(|_| {
                let at = t0 + Duration::from_millis(rng.gen_range(0..100_000));
                let ttl = match rng.gen_range(0..10) {
                    0 | 1 => 0,
                    2 => u16::MAX,
                    3 => rng.gen_range(31..600),
                    _ => rng.gen_range(1..30),
                };
                (at, rng.gen_range(0..10), ttl)
            })
            .collect();
        sends.sort();
        sends.dedup_by_key(|s| s.0);
        for &(at, fake, ttl) in &sends {
            l.p.sim.run_until(at);
            l.fake(fake_mac(fake), ttl);
        }
        l.p.sim.run_for(Duration::from_secs(700));
        let arrivals: Vec<(Instant, u32, u16)> =
            sends.iter().map(|&(at, f, ttl)| (at + D, f, ttl)).collect();
        let want = model(&arrivals, CAP);
        assert_eq!(
            l.transitions(),
            want,
            "seed {seed} ({version:?}): {sends:?}"
        );
        assert!(!want.is_empty() && !want.last().expect("some").1);
        assert!(
            l.host_follows()(&l.p.sim),
            "seed {seed}: the host follows the switch again"
        );
    }
}

#[test]
fn a_fakes_shutdown_frees_the_port_at_once() {
    for version in BOTH {
        // The host holds what the switch sent: it runs it the moment the fake leaves.
        let mut l = Link::converged(version, |_| {});
        l.fake(fake_mac(7), u16::MAX);
        l.p.sim.run_for(Duration::from_secs(5));
        assert!(l.host_blocked(), "{version:?}");
        let t1 = l.p.sim.now();
        l.fake(fake_mac(7), 0);
        let t =
            l.p.sim
                .run_until_true(t1 + Duration::from_secs(40), l.host_follows())
                .unwrap_or_else(|| panic!("{version:?}: no convergence after the shutdown"));
        assert!(
            t - t1 <= 4 * D,
            "{version:?}: {:?} after the shutdown",
            t - t1
        );
        assert_eq!(
            l.transitions().last(),
            Some(&(t1 + D, false)),
            "{version:?}"
        );

        // The host holds nothing of the switch's (a remote MIB of one, taken by the
        // fake before the switch came up): it asks the switch for a fresh LLDPDU.
        let mut l = Link::new(version, |h| h.max_neighbors = 1);
        let (a, b) = (l.p.a, l.p.b);
        l.p.sim.set_node_link(b, true);
        l.fake(fake_mac(7), u16::MAX);
        l.p.sim.run_for(Duration::from_secs(1));
        l.p.sim.set_node_link(a, true);
        // Past the switch's fast transmissions: its next LLDPDU is 30 s away.
        l.p.sim.run_for(Duration::from_secs(8));
        assert!(
            l.host_blocked(),
            "{version:?}: the switch's LLDPDUs are discarded"
        );
        assert!(l.p.sim.agent(b).neighbors().len() == 1);
        let t1 = l.p.sim.now();
        l.fake(fake_mac(7), 0);
        let t =
            l.p.sim
                .run_until_true(t1 + Duration::from_secs(40), l.host_follows())
                .unwrap_or_else(|| panic!("{version:?}: no convergence after the shutdown"));
        // Shutdown, the host's request, the switch's answer: three delays, and the
        // CEE handshake's round trip.
        assert!(
            t - t1 <= 5 * D,
            "{version:?}: {:?} after the shutdown",
            t - t1
        );
        // The host's first LLDPDU once the fake left: TTL 121, not its usual 120, so
        // that a peer dropping repeats (lldpad) takes it; in CEE DCBX, AckNo 0.
        let first =
            l.p.sim
                .capture()
                .iter()
                .find(|c| c.from == b && c.at >= t1 + D)
                .expect("the host sent");
        assert_eq!(first.at, t1 + D, "{version:?}");
        match Frame::parse(&first.bytes).expect("valid").payload {
            Payload::Lldp(pdu) => {
                assert_eq!(pdu.ttl, 121, "{version:?}");
                let ack = pdu.cee_dcbx.and_then(|c| c.control).map(|c| c.ack);
                let want = (version == Version::Cee).then_some(0);
                assert_eq!(ack, want, "{version:?}");
            }
            other => panic!("{other:?}"),
        }
    }
}

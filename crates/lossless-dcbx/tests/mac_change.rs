//! A port's MAC changes (and with it its MSAP, the Chassis and Port ID it sends): the
//! peer must end up on the new identity at once, not hold the old one beside it until
//! its TTL. Two agents on one simulated link, time a parameter.

use lossless_dcbx::{Agent, Event, Instant, PortConfig};
use lossless_wire::cee::PriorityMap;
use lossless_wire::frame::{Frame, Payload};
use lossless_wire::MacAddr;

const OLD: MacAddr = MacAddr([2, 0, 0, 0, 0, 0x0a]);
const NEW: MacAddr = MacAddr([2, 0, 0, 0, 0, 0xaa]);
const PEER: MacAddr = MacAddr([2, 0, 0, 0, 0, 0x0b]);

/// The host: not willing, PFC on `pfc`.
fn host(mac: MacAddr, pfc: u8) -> PortConfig {
    let mut c = PortConfig::new(mac);
    c.dcbx.pfc.willing = false;
    c.dcbx.pfc.cfg.priorities = PriorityMap(pfc);
    c
}

/// The host (`a`) and its willing peer (`b`) on one link with no delay.
struct Link {
    a: Agent,
    b: Agent,
    now: Instant,
    /// Shutdown LLDPDUs from `a` are lost (a sender that sends none).
    lose_shutdowns: bool,
    /// What `a` sent: (when, TTL, Chassis ID).
    sent: Vec<(Instant, u16, Vec<u8>)>,
    /// `b`'s events, with when.
    events: Vec<(Instant, Event)>,
}

impl Link {
    fn new() -> Link {
        let at = Instant::ZERO;
        let mut l = Link {
            a: Agent::new(host(OLD, 0x08), at).expect("valid"),
            b: Agent::new(PortConfig::new(PEER), at).expect("valid"),
            now: at,
            lose_shutdowns: false,
            sent: Vec::new(),
            events: Vec::new(),
        };
        l.a.handle_link(at, true);
        l.b.handle_link(at, true);
        l.flush();
        l
    }

    fn flush(&mut self) {
        let mut buf = Vec::new();
        loop {
            let mut moved = false;
            while self.a.poll_transmit(&mut buf) {
                moved = true;
                let Ok(Frame {
                    payload: Payload::Lldp(pdu),
                    ..
                }) = Frame::parse(&buf)
                else {
                    panic!("not an LLDPDU");
                };
                self.sent
                    .push((self.now, pdu.ttl, pdu.chassis_id.id.to_vec()));
                if !(self.lose_shutdowns && pdu.ttl == 0) {
                    self.b.handle_frame(self.now, &buf);
                }
            }
            while self.b.poll_transmit(&mut buf) {
                moved = true;
                self.a.handle_frame(self.now, &buf);
            }
            while let Some(e) = self.b.poll_event() {
                self.events.push((self.now, e));
            }
            while self.a.poll_event().is_some() {}
            if !moved {
                return;
            }
        }
    }

    /// Runs both agents' timers up to `secs`.
    fn run_to(&mut self, secs: f64) {
        let end = Instant::from_secs_f64(secs);
        loop {
            let next = [self.a.poll_timeout(), self.b.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    self.a.handle_timeout(self.now);
                    self.b.handle_timeout(self.now);
                    self.flush();
                }
                _ => break,
            }
        }
        self.now = end;
        self.a.handle_timeout(end);
        self.b.handle_timeout(end);
        self.flush();
    }

    /// The host's MAC changes at `secs` (and, to tell which neighbour the peer
    /// follows, its PFC).
    fn change_mac(&mut self, secs: f64) {
        self.run_to(secs);
        let at = Instant::from_secs_f64(secs);
        self.a.set_config(at, host(NEW, 0x10)).expect("valid");
        self.flush();
    }

    fn peer_pfc(&self) -> u8 {
        self.b.applied_pfc().0
    }

    fn too_many_since(&self, secs: f64) -> Vec<(f64, bool)> {
        let since = Instant::from_secs_f64(secs);
        self.events
            .iter()
            .filter(|(t, _)| *t >= since)
            .filter_map(|(t, e)| match e {
                Event::TooManyNeighbors { active } => {
                    Some((t.since_epoch().as_secs_f64(), *active))
                }
                _ => None,
            })
            .collect()
    }
}

#[test]
fn a_mac_change_retires_the_old_msap_first_and_the_peer_follows_at_once() {
    let mut l = Link::new();
    l.run_to(10.0);
    assert!(l.b.peer_present());
    assert_eq!(l.peer_pfc(), 0x08);
    let before = l.sent.len();
    l.change_mac(10.0);
    // First the shutdown LLDPDU of the old identity, then the new one's LLDPDU.
    let after: Vec<_> = l.sent[before..]
        .iter()
        .map(|(_, ttl, id)| (*ttl, id.clone()))
        .collect();
    assert_eq!(after.first(), Some(&(0, OLD.0.to_vec())), "sent: {after:?}");
    assert!(
        matches!(after.get(1), Some((ttl, id)) if *ttl > 0 && id[..] == NEW.0[..]),
        "sent: {after:?}"
    );
    assert_eq!(after.iter().filter(|(ttl, _)| *ttl == 0).count(), 1);
    // The peer holds the new identity only, never had more than one neighbour, and
    // runs the new neighbour's PFC.
    l.run_to(11.0);
    let ids: Vec<_> =
        l.b.status()
            .neighbors
            .iter()
            .map(|n| n.chassis_id.clone())
            .collect();
    assert_eq!(ids, vec![NEW.to_string()]);
    assert_eq!(l.too_many_since(10.0), vec![]);
    assert!(l.b.peer_present());
    assert_eq!(l.peer_pfc(), 0x10);
    assert_eq!(l.a.lldp_stats().lldpdu_length_errors, 0);
}

#[test]
fn no_shutdown_when_the_msap_does_not_change() {
    let mut l = Link::new();
    l.run_to(10.0);
    let before = l.sent.len();
    let mut cfg = host(OLD, 0x08);
    cfg.system_name = Some("renamed".into());
    l.a.set_config(Instant::from_secs_f64(10.0), cfg)
        .expect("valid");
    l.flush();
    assert!(l.sent[before..].iter().all(|(_, ttl, _)| *ttl > 0));
    // Configured Chassis and Port IDs: a new MAC leaves the MSAP as it was.
    let mut l = Link::new();
    let named = |mac| {
        let mut c = host(mac, 0x08);
        c.chassis_id = Some("host-a".into());
        c.port_id = Some("eth0".into());
        c
    };
    l.a.set_config(Instant::ZERO, named(OLD)).expect("valid");
    l.run_to(10.0);
    let before = l.sent.len();
    l.a.set_config(Instant::from_secs_f64(10.0), named(NEW))
        .expect("valid");
    l.flush();
    assert!(l.sent[before..].iter().all(|(_, ttl, _)| *ttl > 0));
}

#[test]
fn a_neighbour_that_stopped_sending_does_not_outrank_one_that_sends() {
    // The sender sends no shutdown (an older agent, or the frame lost): the old MSAP
    // stays in the peer's MIB until its TTL (120 s), the new one beside it.
    let mut l = Link::new();
    l.lose_shutdowns = true;
    l.run_to(10.0);
    assert_eq!(l.peer_pfc(), 0x08);
    l.change_mac(10.0);
    assert_eq!(l.b.status().neighbors.len(), 2);
    // The old one's last LLDPDU was at most 30 s (its transmit interval) before the
    // change: it is silent 45 s after that (1.5 intervals), at most 45 s after the
    // change, and from then on the peer runs with the one that sends.
    let old =
        l.b.neighbors()
            .iter()
            .find(|n| n.mac == OLD)
            .expect("old held");
    let silent = old.silent_from().since_epoch().as_secs_f64();
    assert!(silent <= 10.0 + 45.0, "silent at {silent}");
    l.run_to(silent);
    let states = l.too_many_since(10.0);
    assert_eq!(states.last().map(|s| s.1), Some(false), "{states:?}");
    let roles: Vec<_> =
        l.b.status()
            .neighbors
            .iter()
            .map(|n| n.role.clone())
            .collect();
    assert_eq!(roles, vec!["silent", "negotiated"]);
    for t in [silent, silent + 1.0, 100.0, 125.0, 200.0] {
        l.run_to(t);
        assert!(l.b.peer_present(), "at {t}");
        assert_eq!(
            l.peer_pfc(),
            0x10,
            "at {t}: the peer follows the neighbour that sends"
        );
    }
    let roles: Vec<_> =
        l.b.status()
            .neighbors
            .iter()
            .map(|n| n.role.clone())
            .collect();
    assert_eq!(roles, vec!["negotiated"], "the old one aged out at its TTL");
}

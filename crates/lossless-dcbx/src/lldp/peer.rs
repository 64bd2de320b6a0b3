//! Who DCBX talks to: the rule of IEEE 802.1AB and of both DCBX versions (more than
//! one neighbour on the port: no DCBX peer), held only while its cause is there.
//!
//! Every MSAP on the port, in the remote MIB or discarded for tooManyNeighbors, counts
//! while its information lives: it ages out at its own TTL or leaves with its
//! shutdown LLDPDU, and the port leaves the state that moment. A neighbour we
//! negotiated with (it was the port's DCBX peer since it appeared) holds the port for
//! as long as it stays. One we never negotiated with holds it for at most
//! `max_neighbor_hold` from when it began to share the port; after that it stays in
//! the remote MIB but no longer stands between the port and its peer:
//!
//! * two live MSAPs or more, and one of them holds the port without having been
//!   negotiated with, or two negotiated ones: no DCBX peer (`multiple_peers`);
//! * otherwise the negotiated neighbour is the peer; with none, the longest-known
//!   neighbour sending DCBX TLVs, else the longest-known one.
//!
//! The survivor's own LLDPDUs only refresh its own entry: they never extend the state.
//!
//! A neighbour that stopped sending ([`Neighbor::silent`]: one and a half of its
//! transmit intervals without an LLDPDU) does not outrank one that still sends: it is
//! not the peer beside it, negotiated or not, nor a second negotiated neighbour (a
//! peer whose MAC changed without a shutdown LLDPDU for its old MSAP, a neighbour
//! replaced on the cable). It counts again with its next LLDPDU, and leaves at its
//! TTL. Holds are unchanged: a neighbour never negotiated with holds the port for
//! `max_neighbor_hold` whether it still sends or not.

use crate::time::{Duration, Instant};

use super::rx::{Msap, Neighbor, RemoteMib};

/// The neighbour DCBX talks to.
#[derive(Debug, Clone, Copy)]
pub enum PeerView<'a> {
    /// No neighbour whose information we hold.
    None,
    /// Exactly this one.
    One(&'a Neighbor),
    /// More than one neighbour: no DCBX peer.
    Multiple,
}

impl RemoteMib {
    /// Who DCBX talks to at `now` (after [`RemoteMib::age`] at `now`).
    pub fn dcbx_view(&self, now: Instant, hold: Duration) -> PeerView<'_> {
        if self.neighbors.len() + self.discarded.live() <= 1 {
            return self.neighbors.first().map_or(PeerView::None, PeerView::One);
        }
        // Who may be the peer: those that still send, if any does.
        let sending = self.neighbors.iter().any(|n| !n.silent(now));
        let counts = |n: &&Neighbor| !sending || !n.silent(now);
        let holds =
            |n: &Neighbor| !n.negotiated && n.sharing_since.is_none_or(|since| now < since + hold);
        let mut negotiated = self
            .neighbors
            .iter()
            .filter(counts)
            .filter(|n| n.negotiated);
        let first = negotiated.next();
        if self.neighbors.iter().any(holds)
            || self.discarded.holding(now, hold)
            || negotiated.next().is_some()
        {
            return PeerView::Multiple;
        }
        let longest_known = |a: &&Neighbor, b: &&Neighbor| a.first_seen.cmp(&b.first_seen);
        let fallback = self
            .neighbors
            .iter()
            .filter(counts)
            .filter(|n| n.dcbx.is_some() || n.ieee.is_some())
            .min_by(longest_known)
            .or_else(|| self.neighbors.iter().filter(counts).min_by(longest_known));
        first.or(fallback).map_or(PeerView::None, PeerView::One)
    }

    /// The neighbour `msap` is the port's DCBX peer now.
    pub fn mark_negotiated(&mut self, msap: &Msap) {
        if let Some(n) = self.neighbors.iter_mut().find(|n| &n.msap == msap) {
            n.negotiated = true;
            n.sharing_since = None;
        }
    }

    /// After any change: with two live MSAPs or more, each one we never negotiated
    /// with shares the port from `now` if it did not already; alone, none does.
    pub(super) fn update_sharing(&mut self, now: Instant) {
        let sharing = self.neighbors.len() + self.discarded.live() > 1;
        for n in self.neighbors.iter_mut().filter(|n| !n.negotiated) {
            n.sharing_since = match (sharing, n.sharing_since) {
                (true, s) => Some(s.unwrap_or(now)),
                (false, _) => None,
            };
        }
        self.discarded.set_sharing(now, sharing);
    }
}

#[cfg(test)]
mod tests {
    use lossless_wire::cee::{CeeDcbx, Control};
    use lossless_wire::lldp::Lldpdu;
    use lossless_wire::MacAddr;

    use super::*;
    use crate::lldp::discarded::TRACKED;
    use crate::lldp::rx::{Limits, RxOutcome};
    use crate::stats::LldpStats;

    const HOLD: Duration = Duration::from_secs(30);

    fn at(s: f64) -> Instant {
        Instant::from_secs_f64(s)
    }

    fn mac(i: u16) -> MacAddr {
        let [x, y] = i.to_be_bytes();
        MacAddr([2, 0, 0, 0, x, y])
    }

    struct Mib {
        mib: RemoteMib,
        stats: LldpStats,
        max: usize,
    }

    impl Mib {
        fn new(max: usize) -> Mib {
            Mib {
                mib: RemoteMib::default(),
                stats: LldpStats::default(),
                max,
            }
        }

        /// An LLDPDU from neighbour `i` at `t` (with a CEE DCBX TLV if `dcbx`).
        fn rx(&mut self, t: f64, i: u16, ttl: u16, dcbx: bool) -> RxOutcome {
            self.age(t);
            let m = mac(i);
            let (chassis, port) = Lldpdu::mac_ids(&m);
            let mut pdu = Lldpdu::new(chassis, port, ttl);
            if dcbx {
                let control = Control {
                    oper_version: 0,
                    max_version: 0,
                    seq: 1,
                    ack: 0,
                };
                pdu.cee_dcbx = Some(CeeDcbx::new(control, None, None, None));
            }
            let limits = Limits {
                max_neighbors: self.max,
                hold: HOLD,
            };
            self.mib.receive(at(t), m, &pdu, limits, &mut self.stats)
        }

        fn age(&mut self, t: f64) -> usize {
            self.mib
                .age(at(t), HOLD, &mut self.stats)
                .hold_expired
                .len()
        }

        /// Who DCBX talks to at `t`: a neighbour's index, none, or multiple.
        fn view(&mut self, t: f64) -> Option<Option<u16>> {
            self.age(t);
            match self.mib.dcbx_view(at(t), HOLD) {
                PeerView::Multiple => None,
                PeerView::None => Some(None),
                PeerView::One(n) => Some(Some(u16::from_be_bytes([n.mac.0[4], n.mac.0[5]]))),
            }
        }

        fn negotiate(&mut self, i: u16) {
            let n = self.mib.neighbors().iter().find(|n| n.mac == mac(i));
            let msap = n.expect("held").msap.clone();
            self.mib.mark_negotiated(&msap);
        }
    }

    const MULTIPLE: Option<Option<u16>> = None;

    #[test]
    fn an_extra_neighbour_holds_the_port_for_the_cap_then_is_set_aside() {
        let mut m = Mib::new(4);
        m.rx(0.0, 1, 120, true);
        assert_eq!(m.view(0.0), Some(Some(1)));
        m.negotiate(1);
        m.rx(10.0, 2, 65535, false);
        assert_eq!(m.view(10.0), MULTIPLE);
        assert_eq!(m.view(39.999), MULTIPLE);
        assert_eq!(m.mib.poll_timeout(HOLD), Some(at(40.0)));
        assert_eq!(m.age(40.0), 1, "one hold expired");
        assert_eq!(m.view(40.0), Some(Some(1)));
        // Its frames do not give it a new hold; the peer's never extend anything.
        m.rx(50.0, 2, 65535, false);
        m.rx(51.0, 1, 120, true);
        assert_eq!(m.view(51.0), Some(Some(1)));
        assert_eq!(m.stats.neighbor_hold_expiries, 1);
    }

    #[test]
    fn a_later_fake_does_not_take_a_port_whose_neighbour_was_never_negotiated() {
        // The incumbent sends DCBX we did not negotiate (a CEE-only peer of an IEEE
        // port); fake 2 arrives at 0, fake 3 at 20.
        let mut m = Mib::new(4);
        m.rx(0.0, 1, 120, true);
        m.rx(0.5, 2, 65535, true);
        m.rx(20.0, 3, 65535, true);
        // The incumbent sends every 30 s, as its TTL says (else it falls silent at 45 s
        // and the fakes, which claim to send for hours, outrank it).
        m.rx(30.0, 1, 120, true);
        // 1 and 2 stop holding at 30.5, 3 at 50: until then, no peer.
        assert_eq!(m.view(35.0), MULTIPLE);
        assert_eq!(m.view(49.9), MULTIPLE);
        // Then the longest-known DCBX speaker: the incumbent, not the fakes.
        assert_eq!(m.view(50.0), Some(Some(1)));
    }

    #[test]
    fn a_negotiated_neighbour_that_stopped_sending_does_not_outrank_one_that_sends() {
        // 1 was the peer and sends every 30 s until 60; 2 (its new MAC, no shutdown
        // for the old MSAP) sends from 61 on.
        let mut m = Mib::new(4);
        for t in [0.0, 30.0, 60.0] {
            m.rx(t, 1, 120, true);
        }
        m.negotiate(1);
        for t in [61.0, 62.0, 63.0, 64.0, 94.0] {
            m.rx(t, 2, 120, true);
        }
        assert_eq!(m.view(91.0), Some(Some(1)), "2's hold over, 1 still counts");
        // 1 is silent 1.5 intervals (3/8 of its TTL) after its last LLDPDU.
        assert_eq!(m.mib.poll_timeout(HOLD), Some(at(105.0)));
        assert_eq!(m.view(104.9), Some(Some(1)));
        assert_eq!(m.view(105.0), Some(Some(2)));
        m.negotiate(2);
        assert_eq!(m.view(124.0), Some(Some(2)));
        // It comes back: two negotiated neighbours that send, no peer.
        m.rx(125.0, 1, 120, true);
        assert_eq!(m.view(125.0), MULTIPLE);
    }

    #[test]
    fn alone_a_silent_neighbour_stays_the_peer_until_its_ttl() {
        let mut m = Mib::new(4);
        m.rx(0.0, 1, 120, true);
        m.negotiate(1);
        assert_eq!(m.view(100.0), Some(Some(1)));
        // Two silent ones: neither outranks the other (the rule as without silence).
        m.rx(1.0, 2, 120, true);
        assert_eq!(m.view(60.0), Some(Some(1)));
    }

    #[test]
    fn two_negotiated_neighbours_hold_until_one_leaves() {
        let mut m = Mib::new(4);
        m.rx(0.0, 1, 120, true);
        m.negotiate(1);
        m.rx(1.0, 2, 120, true);
        m.negotiate(2);
        assert_eq!(m.view(100.0), MULTIPLE);
        let first = m.mib.neighbors()[0].msap.clone();
        assert_eq!(m.rx(101.0, 1, 0, true), RxOutcome::Deleted(first));
        assert_eq!(m.view(101.0), Some(Some(2)));
    }

    #[test]
    fn with_every_hold_over_the_longest_known_dcbx_speaker_is_the_peer() {
        let mut m = Mib::new(4);
        m.rx(0.0, 1, 1000, false);
        m.rx(1.0, 2, 1000, true);
        m.rx(2.0, 3, 1000, true);
        assert_eq!(m.view(30.9), MULTIPLE);
        assert_eq!(m.view(32.0), Some(Some(2)));
    }

    #[test]
    fn a_discarded_msap_keeps_its_hold_when_the_mib_takes_it_in() {
        let mut m = Mib::new(2);
        m.rx(0.0, 1, 120, true);
        m.negotiate(1);
        m.rx(1.0, 2, 10, false);
        assert_eq!(m.rx(2.0, 3, 120, false), RxOutcome::TooMany);
        assert_eq!(m.mib.discarded(), 1);
        // 2 ages out at 11: 3 gets in at 12 with the hold it had since 2.
        assert_eq!(m.rx(12.0, 3, 120, false), RxOutcome::Added);
        assert_eq!(m.mib.discarded(), 0);
        assert_eq!(m.view(31.9), MULTIPLE);
        assert_eq!(m.view(32.0), Some(Some(1)));
    }

    #[test]
    fn shutdown_of_a_discarded_msap_ends_the_state_at_once() {
        let mut m = Mib::new(1);
        m.rx(0.0, 1, 120, true);
        m.negotiate(1);
        assert_eq!(m.rx(1.0, 2, 65535, false), RxOutcome::TooMany);
        assert_eq!(m.view(5.0), MULTIPLE);
        assert_eq!(m.rx(5.0, 2, 0, false), RxOutcome::DiscardedShutdown);
        assert_eq!(m.view(5.0), Some(Some(1)));
    }

    #[test]
    fn past_the_tracked_msaps_the_latest_release_is_kept() {
        let mut m = Mib::new(1);
        m.rx(0.0, 1, 120, true);
        m.negotiate(1);
        // Twice as many fakes as tracked, TTLs rising then falling: the state ends when
        // the one releasing the port last (TTL 20 at 1.0 + n/2 ms) does.
        let n = 2 * TRACKED as u16;
        for i in 0..n {
            let ttl = if i == n / 2 { 20 } else { 10 };
            m.rx(1.0 + f64::from(i) * 0.001, 100 + i, ttl, false);
        }
        assert_eq!(m.mib.discarded(), TRACKED);
        let last = 1.0 + f64::from(n / 2) * 0.001 + 20.0;
        assert_eq!(m.view(last - 0.0005), MULTIPLE);
        assert_eq!(m.view(last), Some(Some(1)));
        assert_eq!(m.mib.discarded(), 0);
    }
}

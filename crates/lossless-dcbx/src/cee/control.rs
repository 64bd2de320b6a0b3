//! The DCBX Control state machine (CEE DCBX specification §2.4.2; its Figure 8
//! rebuilt from the text, Tables 1 and 2, and what lldpad does).
//!
//! It owns SeqNo (ours), AckNo (the peer SeqNo we acknowledge) and RcvdAckNo
//! (the peer's acknowledgement of ours). SeqNo advances one change at a time:
//! only when the previous SeqNo was acknowledged (the "ratchet" of the
//! SetLocalParameters commentary).

use lossless_wire::cee::Control;
use serde::Serialize;

/// Control machine state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ControlMachine {
    /// SeqNo: changes each time an exchanged feature parameter changes.
    pub seq: u32,
    /// AckNo: the SeqNo of the most recent peer DCBX TLV we handled.
    pub ack: u32,
    /// RcvdAckNo: the AckNo of the most recent peer DCBX TLV we handled.
    pub rcvd_ack: u32,
    /// Oper_Version: the highest version both ends support.
    pub oper_version: u8,
    /// Max_Version.
    pub max_version: u8,
    /// Where SeqNo starts after a reset: 0 in a fresh agent; a restarted
    /// daemon starts each life in a new range so that its first SeqNo differs
    /// from anything the peer acknowledged before (see `Agent::set_seq_base`).
    pub seq_base: u32,
}

/// What a received Control TLV asks of the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PeerControlOutcome {
    /// Send a frame: a new AckNo or a new Oper_Version to announce.
    pub send: bool,
    /// Both ends run the same version: the feature machines may proceed.
    pub versions_agree: bool,
}

impl ControlMachine {
    pub fn new(max_version: u8) -> Self {
        ControlMachine::starting_at(max_version, 0)
    }

    /// A machine whose next SeqNo is `seq_base + 1` (nothing issued yet).
    pub fn starting_at(max_version: u8, seq_base: u32) -> Self {
        ControlMachine {
            seq: seq_base,
            ack: 0,
            rcvd_ack: seq_base,
            oper_version: max_version,
            max_version,
            seq_base,
        }
    }

    /// Link up, or PeerNotAdvertiseDCBX: "the local side resets similar to a link up".
    pub fn reset(&mut self) {
        *self = ControlMachine::starting_at(self.max_version, self.seq_base);
    }

    /// The Control TLV we send.
    pub fn tlv(&self) -> Control {
        Control {
            oper_version: self.oper_version,
            max_version: self.max_version,
            seq: self.seq,
            ack: self.ack,
        }
    }

    /// Handles the peer's Control TLV. `may_ack` is false while multiple
    /// neighbours are present: then nothing of the peer's is acknowledged.
    pub fn on_peer(&mut self, peer: &Control, may_ack: bool) -> PeerControlOutcome {
        let mut out = PeerControlOutcome::default();
        let agreed = peer.max_version.min(self.max_version);
        if self.oper_version != agreed {
            // Version negotiation: adopt the highest common version and tell the peer.
            self.oper_version = agreed;
            out.send = true;
            return out;
        }
        if self.oper_version != peer.oper_version {
            // Wait for the peer to move to the agreed version.
            return out;
        }
        out.versions_agree = true;
        self.rcvd_ack = peer.ack;
        // D13: a new peer SeqNo is acknowledged at once. A peer AckNo of 0
        // while we have a SeqNo means it started over (restart): tell it again.
        let peer_restarted = peer.ack == 0 && self.seq != self.seq_base;
        if may_ack && (self.ack != peer.seq || peer_restarted) {
            self.ack = peer.seq;
            out.send = true;
        }
        out
    }

    /// We hold none of the peer's information any more: AckNo 0, which a CEE peer
    /// takes for a peer that started over (it acknowledges and sends again).
    pub fn forget_peer(&mut self) {
        self.ack = 0;
    }

    /// The ratchet: a new SeqNo may be issued only once the last one was acknowledged.
    /// Before the first SeqNo of this reset nothing is outstanding, whatever
    /// AckNo the peer still carries from an earlier life.
    pub fn may_advance(&self) -> bool {
        self.seq == self.seq_base || self.seq == self.rcvd_ack
    }

    /// Issues the next SeqNo (skipping 0, which means "nothing sent yet").
    pub fn advance(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }

    /// Our current SeqNo is still waiting for the peer's acknowledgement.
    pub fn awaiting_ack(&self) -> bool {
        self.seq != self.seq_base && self.seq != self.rcvd_ack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctl(seq: u32, ack: u32) -> Control {
        Control {
            oper_version: 0,
            max_version: 0,
            seq,
            ack,
        }
    }

    #[test]
    fn new_peer_seq_is_acknowledged_at_once() {
        let mut c = ControlMachine::new(0);
        c.advance();
        let out = c.on_peer(&ctl(1, 0), true);
        assert!(out.send && out.versions_agree);
        assert_eq!((c.seq, c.ack, c.rcvd_ack), (1, 1, 0));
        // The same SeqNo again (a periodic frame) needs no answer.
        let out = c.on_peer(&ctl(1, 1), true);
        assert!(!out.send);
        assert_eq!(c.rcvd_ack, 1);
    }

    #[test]
    fn ratchet_waits_for_ack_of_previous_seq() {
        // The CEE DCBX specification's example: AckNo from the peer 9, local
        // SeqNo 10, features pending at 11.
        let mut c = ControlMachine::new(0);
        c.seq = 10;
        c.rcvd_ack = 9;
        assert!(!c.may_advance(), "SeqNo 11 must wait for AckNo 10");
        c.on_peer(&ctl(5, 9), true);
        assert!(!c.may_advance());
        c.on_peer(&ctl(5, 10), true);
        assert!(c.may_advance());
        assert_eq!(c.advance(), 11);
    }

    #[test]
    fn no_ack_with_multiple_neighbours() {
        let mut c = ControlMachine::new(0);
        let out = c.on_peer(&ctl(3, 0), false);
        assert!(!out.send);
        assert_eq!(c.ack, 0);
    }

    #[test]
    fn version_negotiates_down_then_waits_for_peer() {
        let mut c = ControlMachine::new(2);
        let peer = Control {
            oper_version: 1,
            max_version: 1,
            seq: 1,
            ack: 0,
        };
        let out = c.on_peer(&peer, true);
        assert!(out.send && !out.versions_agree);
        assert_eq!(c.oper_version, 1);
        assert_eq!(c.ack, 0, "nothing acknowledged before versions agree");
        let out = c.on_peer(&peer, true);
        assert!(out.versions_agree && out.send);
        assert_eq!(c.ack, 1);
    }

    #[test]
    fn seq_base_starts_a_new_range_whatever_the_peer_acked_before() {
        let mut c = ControlMachine::starting_at(0, 7 << 16);
        // The peer still acknowledges SeqNo 3 from our previous life.
        let out = c.on_peer(&ctl(9, 3), true);
        assert!(out.send && out.versions_agree);
        assert!(c.may_advance(), "nothing of this life is outstanding");
        assert!(!c.awaiting_ack());
        assert_eq!(c.advance(), (7 << 16) + 1);
        assert!(c.awaiting_ack());
        c.reset();
        assert_eq!((c.seq, c.ack, c.rcvd_ack), (7 << 16, 0, 7 << 16));
    }

    #[test]
    fn restarted_peer_is_acknowledged_again() {
        let mut c = ControlMachine::new(0);
        c.seq = 4;
        c.ack = 1;
        c.rcvd_ack = 4;
        let out = c.on_peer(&ctl(1, 0), true);
        assert!(out.send, "peer AckNo 0 means it lost our state");
        assert_eq!(c.rcvd_ack, 0);
    }
}

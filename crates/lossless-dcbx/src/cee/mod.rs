//! CEE DCBX (the pre-standard "DCB Capability Exchange Protocol"): the Control machine
//! and the three feature machines of one port, run together after every input.
//!
//! SeqNo/AckNo make it a handshake: a changed configuration is sent with a new SeqNo,
//! retransmitted until the peer acknowledges it, and only then compared with the
//! peer's (Syncd). The agent decides whether CEE runs at all and who the peer is.

pub mod control;
pub mod feature;

use std::collections::VecDeque;

use lossless_wire::cee::{AppConfig, CeeDcbx, FeatureTlv, PfcConfig, PgConfig};

use crate::config::DcbxConfig;
use crate::event::Event;
use crate::reason::Reason;
use crate::stats::DcbxStats;
use control::ControlMachine;
use feature::{Feature, PeerView};

/// The feature sub-TLVs sent with the current SeqNo: retransmissions repeat
/// exactly what that SeqNo stands for, so the peer's acknowledgement means it
/// has seen this content.
#[derive(Debug, Clone, Default)]
struct Advertised {
    pg: Option<FeatureTlv<PgConfig>>,
    pfc: Option<FeatureTlv<PfcConfig>>,
    app: Option<FeatureTlv<AppConfig>>,
}

/// The CEE machines of one port.
#[derive(Debug, Clone)]
pub struct CeeMachines {
    pub control: ControlMachine,
    pub pg: Feature<PgConfig>,
    pub pfc: Feature<PfcConfig>,
    pub app: Feature<AppConfig>,
    advertised: Advertised,
}

/// What the CEE peer is: its TLV (with a Control sub-TLV), or why there is none.
#[derive(Debug, Clone, Copy)]
pub enum Peer<'a> {
    Present(&'a CeeDcbx),
    Absent(Reason),
}

impl CeeMachines {
    /// The machines as at link up; SeqNo starts after `seq_base`.
    pub fn new(d: &DcbxConfig, seq_base: u32) -> Self {
        let v = d.max_version;
        CeeMachines {
            control: ControlMachine::starting_at(v, seq_base),
            pg: Feature::new(&d.pg, v),
            pfc: Feature::new(&d.pfc, v),
            app: Feature::new(&d.app, v),
            advertised: Advertised::default(),
        }
    }

    /// Back to the link-up state (link up, peer loss, a version change); the features'
    /// reasons are kept until they run again.
    pub fn reset(&mut self, d: &DcbxConfig, seq_base: u32) {
        let v = d.max_version;
        self.control = ControlMachine::starting_at(v, seq_base);
        self.pg.reset(&d.pg, v);
        self.pfc.reset(&d.pfc, v);
        self.app.reset(&d.app, v);
        self.advertised = Advertised::default();
    }

    /// Every feature's DesiredCfg has been acknowledged by the peer.
    pub fn all_syncd(&self) -> bool {
        self.pg.syncd && self.pfc.syncd && self.app.syncd
    }

    /// Our SeqNo waits for the peer's acknowledgement.
    pub fn awaiting_ack(&self) -> bool {
        self.control.awaiting_ack()
    }

    /// The TLV we send: Control and the features our SeqNo stands for.
    pub fn tlv(&self) -> CeeDcbx {
        let a = &self.advertised;
        CeeDcbx::new(
            self.control.tlv(),
            a.pg.clone(),
            a.pfc.clone(),
            a.app.clone(),
        )
    }

    /// DCBX does not run, or the port runs IEEE: every feature on its local
    /// configuration, off.
    pub fn inactive(&mut self, d: &DcbxConfig, events: &mut VecDeque<Event>) {
        let v = d.max_version;
        self.pg.evaluate(&d.pg, v, PeerView::Inactive, events);
        self.pfc.evaluate(&d.pfc, v, PeerView::Inactive, events);
        self.app.evaluate(&d.app, v, PeerView::Inactive, events);
    }

    /// The Control and Feature machines after any input. `fresh_pdu`: the peer just
    /// sent a DCBX TLV (somethingChangedRemote). `pfc_flags`: the reserved flag bits
    /// our PFC sub-TLV carries. Returns whether a frame should go out now (a new
    /// SeqNo, a new AckNo, a new version to announce).
    pub fn run(
        &mut self,
        d: &DcbxConfig,
        peer: Peer<'_>,
        fresh_pdu: bool,
        pfc_flags: u8,
        events: &mut VecDeque<Event>,
        stats: &mut DcbxStats,
    ) -> bool {
        let v = d.max_version;
        let mut send = false;
        let peer_ctrl = match peer {
            Peer::Present(c) => c.control,
            Peer::Absent(_) => None,
        };
        let mut versions_agree = false;
        if let Some(ctrl) = peer_ctrl {
            if fresh_pdu {
                let out = self.control.on_peer(&ctrl, true);
                send |= out.send;
                let ack = self.control.rcvd_ack;
                self.pg.on_ack(ack, events);
                self.pfc.on_ack(ack, events);
                self.app.on_ack(ack, events);
            }
            versions_agree = self.control.oper_version == ctrl.max_version.min(v)
                && self.control.oper_version == ctrl.oper_version;
        }
        // LocalParameterChange first: a changed DesiredCfg is not Syncd, so the
        // machines below wait for the peer's acknowledgement before comparing it.
        let seq = self.control.seq;
        self.pg.mark_if_changed(&d.pg, v, 0, seq);
        self.pfc.mark_if_changed(&d.pfc, v, pfc_flags, seq);
        self.app.mark_if_changed(&d.app, v, 0, seq);
        let absent = match peer {
            Peer::Present(c) if c.control.is_some() => {
                let dup = &c.duplicates;
                let view = |duplicate, tlv| PeerView::Present {
                    versions_agree,
                    duplicate_control: dup.control,
                    duplicate,
                    tlv,
                };
                self.pg
                    .evaluate(&d.pg, v, view(dup.pg, c.pg.as_ref()), events);
                let pfc = PeerView::Present {
                    versions_agree,
                    duplicate_control: dup.control,
                    duplicate: dup.pfc,
                    tlv: c.pfc.as_ref(),
                };
                self.pfc.evaluate(&d.pfc, v, pfc, events);
                let app = PeerView::Present {
                    versions_agree,
                    duplicate_control: dup.control,
                    duplicate: dup.app,
                    tlv: c.app.as_ref(),
                };
                self.app.evaluate(&d.app, v, app, events);
                None
            }
            // A CEE TLV without Control is no DCBX peer.
            Peer::Present(_) => Some(Reason::PeerNoDcbx),
            Peer::Absent(r) => Some(r),
        };
        if let Some(r) = absent {
            self.pg.evaluate(&d.pg, v, PeerView::Absent(r), events);
            self.pfc.evaluate(&d.pfc, v, PeerView::Absent(r), events);
            self.app.evaluate(&d.app, v, PeerView::Absent(r), events);
        }
        // The machines may have changed an exchanged parameter (Error, version):
        // that too is due with the next SeqNo.
        self.pg.mark_if_changed(&d.pg, v, 0, seq);
        self.pfc.mark_if_changed(&d.pfc, v, pfc_flags, seq);
        self.app.mark_if_changed(&d.app, v, 0, seq);
        // The ratchet: a new SeqNo only once the previous one was acknowledged.
        if self.control.may_advance() && !self.all_syncd() {
            self.control.advance();
            stats.seq_changes += 1;
            self.advertised = Advertised {
                pg: self.pg.content(&d.pg, v, 0),
                pfc: self.pfc.content(&d.pfc, v, pfc_flags),
                app: self.app.content(&d.app, v, 0),
            };
            self.pg.on_seq_issued(&d.pg, events);
            self.pfc.on_seq_issued(&d.pfc, events);
            self.app.on_seq_issued(&d.app, events);
            send = true;
        }
        send
    }
}

//! One port's LLDP agent with CEE DCBX on top, sans-IO.
//!
//! Inputs: [`Agent::handle_link`], [`Agent::handle_frame`],
//! [`Agent::handle_timeout`], [`Agent::set_config`], each with the current
//! time. Outputs: [`Agent::poll_transmit`] (whole Ethernet frames),
//! [`Agent::poll_event`], [`Agent::poll_timeout`]. Nothing here reads a clock,
//! touches a socket or spawns.

use std::collections::VecDeque;

use lossless_wire::cee::{
    AppConfig, CeeDcbx, FeatureTlv, PfcConfig, PgConfig, FLAG_HEADROOM_MEASUREMENT,
};
use lossless_wire::frame::{emit_lldp_frame, Frame, Payload};
use lossless_wire::lldp::{chassis_subtype, port_subtype, Id, Lldpdu};
use lossless_wire::{EmitError, MacAddr};

use crate::config::{ConfigError, FeatureAdmin, PortConfig};
use crate::control::ControlMachine;
use crate::event::{Event, NeighborLoss};
use crate::feature::{Feature, FeatureKind, PeerView, Reason};
use crate::lldp::rx::{Msap, RemoteMib, RxOutcome};
use crate::lldp::tx::{TxKind, TxMachine};
use crate::stats::{DcbxStats, LldpStats};
use crate::status::{FeatureStatus, HeadroomCapability, PortStatus};
use crate::time::Instant;
use crate::IdText;

/// The feature sub-TLVs sent with the current SeqNo: retransmissions repeat
/// exactly what that SeqNo stands for, so the peer's acknowledgement means it
/// has seen this content.
#[derive(Debug, Clone, Default)]
struct Advertised {
    pg: Option<FeatureTlv<PgConfig>>,
    pfc: Option<FeatureTlv<PfcConfig>>,
    app: Option<FeatureTlv<AppConfig>>,
}

/// An LLDP + CEE DCBX agent for one port.
#[derive(Debug, Clone)]
pub struct Agent {
    cfg: PortConfig,
    link_up: bool,
    tx: TxMachine,
    mib: RemoteMib,
    control: ControlMachine,
    pg: Feature<PgConfig>,
    pfc: Feature<PfcConfig>,
    app: Feature<AppConfig>,
    advertised: Advertised,
    /// A DCBX peer is currently in view.
    peer_dcbx: bool,
    /// The last DCBX peer went away and none has replaced it.
    peer_lost: bool,
    /// Last reported tooManyNeighbors / multiple-neighbour state.
    too_many: bool,
    transmit: VecDeque<Vec<u8>>,
    events: VecDeque<Event>,
    lldp_stats: LldpStats,
    dcbx_stats: DcbxStats,
    now: Instant,
    /// SeqNo base of this agent's life (see `set_seq_base`).
    seq_base: u32,
}

impl Agent {
    /// A new agent with its link down.
    pub fn new(cfg: PortConfig, now: Instant) -> Result<Agent, ConfigError> {
        cfg.validate()?;
        let v = cfg.dcbx.max_version;
        Ok(Agent {
            pg: Feature::new(&cfg.dcbx.pg, v),
            pfc: Feature::new(&cfg.dcbx.pfc, v),
            app: Feature::new(&cfg.dcbx.app, v),
            control: ControlMachine::new(v),
            seq_base: 0,
            cfg,
            link_up: false,
            tx: TxMachine::new(now),
            mib: RemoteMib::default(),
            advertised: Advertised::default(),
            peer_dcbx: false,
            peer_lost: false,
            too_many: false,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            lldp_stats: LldpStats::default(),
            dcbx_stats: DcbxStats::default(),
            now,
        })
    }

    pub fn config(&self) -> &PortConfig {
        &self.cfg
    }

    pub fn mac(&self) -> MacAddr {
        self.cfg.mac
    }

    pub fn link_up(&self) -> bool {
        self.link_up
    }

    pub fn control(&self) -> &ControlMachine {
        &self.control
    }

    pub fn pg(&self) -> &Feature<PgConfig> {
        &self.pg
    }

    pub fn pfc(&self) -> &Feature<PfcConfig> {
        &self.pfc
    }

    pub fn app(&self) -> &Feature<AppConfig> {
        &self.app
    }

    pub fn neighbors(&self) -> &[crate::lldp::rx::Neighbor] {
        self.mib.neighbors()
    }

    pub fn lldp_stats(&self) -> &LldpStats {
        &self.lldp_stats
    }

    pub fn dcbx_stats(&self) -> &DcbxStats {
        &self.dcbx_stats
    }

    /// DCBX runs: link up, LLDP rx and tx enabled, DCBX not switched off (seed 000 §2.3).
    pub fn dcbx_active(&self) -> bool {
        self.link_up && self.cfg.admin_status == crate::AdminStatus::RxTx && self.cfg.dcbx.enabled
    }

    /// A single DCBX peer is in view (with its Control sub-TLV).
    pub fn peer_present(&self) -> bool {
        self.peer_dcbx
    }

    /// Every feature's DesiredCfg has been acknowledged by the peer.
    pub fn all_syncd(&self) -> bool {
        self.pg.syncd && self.pfc.syncd && self.app.syncd
    }

    /// The link (portEnabled) went up or down.
    pub fn handle_link(&mut self, now: Instant, up: bool) {
        self.now = now;
        if up == self.link_up {
            return;
        }
        self.link_up = up;
        if up {
            self.reset_dcbx();
            self.peer_lost = false;
            if self.cfg.admin_status.tx() {
                self.tx.start(now, &self.cfg.timers);
            }
        } else {
            // No shutdown LLDPDU: the link that would carry it is gone.
            self.tx.stop(now, &self.cfg.timers, false);
            let gone = self.mib.clear();
            self.report_removed(gone);
            self.peer_dcbx = false;
            self.too_many = false;
        }
        self.run_dcbx(now, false);
        self.pump(now);
    }

    /// Where SeqNo starts at each reset (link up, peer loss). A daemon that
    /// restarts passes a base derived from its boot count, so its first SeqNo
    /// after the restart differs from any SeqNo the peer acknowledged in the
    /// previous life and the peer takes the (possibly changed) content as new.
    /// Takes effect at the next reset; call it before the first link-up.
    pub fn set_seq_base(&mut self, base: u32) {
        self.seq_base = base;
        if !self.link_up {
            self.control = ControlMachine::starting_at(self.cfg.dcbx.max_version, base);
        }
    }

    /// A frame arrived on the port (whole Ethernet frame, FCS stripped).
    /// Frames that are not LLDP to the nearest-bridge address are ignored.
    pub fn handle_frame(&mut self, now: Instant, frame: &[u8]) {
        self.now = now;
        let aged = self.expire(now);
        match self.receive(now, frame) {
            Some(fresh_dcbx) => self.run_dcbx(now, fresh_dcbx),
            None if aged => self.run_dcbx(now, false),
            None => {}
        }
        self.pump(now);
    }

    /// rxProcessFrame: validates an LLDPDU and updates the remote MIB. Returns
    /// None when the frame is not for this agent or was discarded, else
    /// whether it carried a DCBX TLV the machines must process.
    fn receive(&mut self, now: Instant, frame: &[u8]) -> Option<bool> {
        if !self.link_up || !self.cfg.admin_status.rx() {
            return None;
        }
        let parsed = match Frame::parse(frame) {
            Ok(f) => f,
            Err(e) => {
                // Only count frames that were meant for us.
                if is_lldp_frame(frame) {
                    self.lldp_stats.frames_in += 1;
                    self.lldp_stats.frames_in_errors += 1;
                    self.lldp_stats.frames_discarded += 1;
                    self.events.push_back(Event::FrameDiscarded {
                        error: e.to_string(),
                    });
                }
                return None;
            }
        };
        let pdu = match &parsed.payload {
            Payload::Lldp(pdu) if parsed.header.dst == MacAddr::LLDP_NEAREST_BRIDGE => pdu,
            _ => return None,
        };
        self.lldp_stats.frames_in += 1;
        let outcome = self.mib.receive(
            now,
            parsed.header.src,
            pdu,
            self.cfg.max_neighbors,
            &mut self.lldp_stats,
        );
        match outcome {
            RxOutcome::Added => {
                self.events.push_back(Event::NeighborAdded {
                    chassis_id: IdText(pdu.chassis_id.subtype, pdu.chassis_id.id).to_string(),
                    port_id: IdText(pdu.port_id.subtype, pdu.port_id.id).to_string(),
                });
                // newNeighbor: fast transmission so the newcomer learns us quickly.
                self.tx.fast_start(now, &self.cfg.timers);
            }
            RxOutcome::Deleted(ref msap) => {
                self.report_removed(vec![(msap.clone(), NeighborLoss::Shutdown)])
            }
            RxOutcome::Updated | RxOutcome::Ignored | RxOutcome::TooMany => {}
        }
        if let Some(cee) = &pdu.cee_dcbx {
            self.dcbx_stats.count_tlv(cee);
        }
        self.dcbx_stats.cin_tlvs += u64::from(pdu.cin_dcbx.is_some());
        Some(pdu.ttl != 0 && pdu.cee_dcbx.is_some() && outcome != RxOutcome::TooMany)
    }

    /// Time passed: age neighbours, run the transmit timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        if self.expire(now) {
            self.run_dcbx(now, false);
        }
        self.pump(now);
    }

    /// Applies a new configuration at once. A bad one is refused and nothing changes.
    pub fn set_config(&mut self, now: Instant, cfg: PortConfig) -> Result<(), ConfigError> {
        cfg.validate()?;
        self.now = now;
        self.expire(now);
        let old = std::mem::replace(&mut self.cfg, cfg);
        let was_active =
            self.link_up && old.admin_status == crate::AdminStatus::RxTx && old.dcbx.enabled;
        if self.link_up {
            match (old.admin_status.tx(), self.cfg.admin_status.tx()) {
                // LLDP tx disabled: a shutdown LLDPDU tells the peer at once.
                (true, false) => self.tx.stop(now, &old.timers, true),
                (false, true) => self.tx.start(now, &self.cfg.timers),
                _ => {}
            }
            if old.admin_status.rx() && !self.cfg.admin_status.rx() {
                let gone = self.mib.clear();
                self.report_removed(gone);
            }
        }
        let identity_changed = old.mac != self.cfg.mac
            || old.chassis_id != self.cfg.chassis_id
            || old.port_id != self.cfg.port_id
            || old.system_name != self.cfg.system_name
            || old.port_description != self.cfg.port_description;
        if old.dcbx.max_version != self.cfg.dcbx.max_version || was_active != self.dcbx_active() {
            // DCBX (re)starts from the link-up state, or its TLVs are withdrawn.
            self.reset_dcbx();
            self.peer_dcbx = false;
            self.peer_lost = false;
            self.tx.local_change(now, &self.cfg.timers);
        } else if identity_changed {
            self.tx.local_change(now, &self.cfg.timers);
        }
        self.run_dcbx(now, false);
        self.pump(now);
        Ok(())
    }

    /// The agent is going away (the daemon stops): a shutdown LLDPDU (TTL 0)
    /// if LLDP transmission was running, so the peer forgets us at once
    /// instead of after its TTL, then silence.
    pub fn shutdown(&mut self, now: Instant) {
        self.now = now;
        if self.link_up && self.cfg.admin_status.tx() {
            self.tx.stop(now, &self.cfg.timers, true);
        }
        self.pump(now);
    }

    /// The next frame to put on the wire.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// The next notification for the manager.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When to call `handle_timeout` next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        match (self.tx.poll_timeout(), self.mib.poll_timeout()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Everything a manager shows about this port.
    pub fn status(&self) -> PortStatus {
        let d = &self.cfg.dcbx;
        PortStatus {
            link_up: self.link_up,
            admin_status: self.cfg.admin_status,
            dcbx_enabled: d.enabled,
            dcbx_active: self.dcbx_active(),
            peer_present: self.peer_dcbx,
            control: self.control,
            pg: feature_status(&self.pg, &d.pg),
            pfc: feature_status(&self.pfc, &d.pfc),
            app: feature_status(&self.app, &d.app),
            neighbors: self
                .mib
                .neighbors()
                .iter()
                .map(|n| n.summary(self.now))
                .collect(),
            lldp: self.lldp_stats,
            dcbx: self.dcbx_stats,
            headroom_measurement: HeadroomCapability {
                local: d.headroom_measurement,
                peer: self.peer_headroom_measurement(),
            },
        }
    }

    /// The reserved flag bits we set in our PFC sub-TLV.
    fn pfc_flags(&self) -> u8 {
        if self.cfg.dcbx.headroom_measurement {
            FLAG_HEADROOM_MEASUREMENT
        } else {
            0
        }
    }

    /// The peer's PFC sub-TLV, as last received while DCBX runs, sets the
    /// headroom-measurement flag.
    pub fn peer_headroom_measurement(&self) -> bool {
        self.dcbx_active()
            && self.peer_dcbx
            && self
                .pfc
                .peer
                .as_ref()
                .is_some_and(|p| p.header.reserved_flags & FLAG_HEADROOM_MEASUREMENT != 0)
    }

    /// Both ends advertise the measurement capability: seed 004's condition for
    /// starting the delay measurement ("if both support PFC HDRM").
    pub fn headroom_measurement_agreed(&self) -> bool {
        self.cfg.dcbx.headroom_measurement && self.peer_headroom_measurement()
    }

    fn reset_dcbx(&mut self) {
        let v = self.cfg.dcbx.max_version;
        self.control = ControlMachine::starting_at(v, self.seq_base);
        self.pg.reset(&self.cfg.dcbx.pg, v);
        self.pfc.reset(&self.cfg.dcbx.pfc, v);
        self.app.reset(&self.cfg.dcbx.app, v);
        self.advertised = Advertised::default();
    }

    /// Ages the remote MIB; true when something went away.
    fn expire(&mut self, now: Instant) -> bool {
        let gone = self.mib.age(now, &mut self.lldp_stats);
        let changed = !gone.is_empty();
        self.report_removed(gone);
        changed || (self.too_many && !self.mib.too_many_neighbors(now))
    }

    fn report_removed(&mut self, gone: Vec<(Msap, NeighborLoss)>) {
        for (msap, why) in gone {
            self.events.push_back(Event::NeighborRemoved {
                chassis_id: msap.chassis_id.to_string(),
                port_id: msap.port_id.to_string(),
                why,
            });
        }
    }

    /// The DCBX Control and Feature machines after any input. `fresh_pdu`: the
    /// single neighbour just sent a DCBX TLV (somethingChangedRemote).
    fn run_dcbx(&mut self, now: Instant, fresh_pdu: bool) {
        let v = self.cfg.dcbx.max_version;
        if !self.dcbx_active() {
            let ev = &mut self.events;
            self.pg
                .evaluate(&self.cfg.dcbx.pg, v, PeerView::Inactive, ev);
            self.pfc
                .evaluate(&self.cfg.dcbx.pfc, v, PeerView::Inactive, ev);
            self.app
                .evaluate(&self.cfg.dcbx.app, v, PeerView::Inactive, ev);
            return;
        }
        // Seed 000 §2.3: more than one neighbour -> the peer's DCBX TLVs are absent.
        let too_many = self.mib.neighbors().len() > 1 || self.mib.too_many_neighbors(now);
        if too_many != self.too_many {
            self.too_many = too_many;
            self.events
                .push_back(Event::TooManyNeighbors { active: too_many });
        }
        let neighbor = (!too_many).then(|| self.mib.neighbors().first()).flatten();
        let has_neighbor = neighbor.is_some();
        let neighbor_cin = neighbor.is_some_and(|n| n.cin_dcbx && n.dcbx.is_none());
        // A copy, so the machines below can change the agent while reading it.
        let cee: Option<CeeDcbx> = neighbor.and_then(|n| n.dcbx.clone());
        let cee = cee.as_ref();
        let peer_ctrl = cee.and_then(|c| c.control);
        let mut send = false;
        match (peer_ctrl.is_some(), self.peer_dcbx) {
            (true, false) => {
                self.peer_dcbx = true;
                self.peer_lost = false;
                self.events.push_back(Event::PeerDcbx { present: true });
                // A peer (re)appears: show it our state now rather than at the next timer.
                send = true;
            }
            (false, true) => {
                self.peer_dcbx = false;
                self.events.push_back(Event::PeerDcbx { present: false });
                if !too_many {
                    // PeerNotAdvertiseDCBX: reset as at link up.
                    self.peer_lost = true;
                    self.dcbx_stats.peer_losses += 1;
                    self.reset_dcbx();
                }
            }
            _ => {}
        }
        let mut versions_agree = false;
        if let Some(ctrl) = peer_ctrl {
            if fresh_pdu {
                let out = self.control.on_peer(&ctrl, true);
                send |= out.send;
                let ack = self.control.rcvd_ack;
                self.pg.on_ack(ack, &mut self.events);
                self.pfc.on_ack(ack, &mut self.events);
                self.app.on_ack(ack, &mut self.events);
            }
            versions_agree = self.control.oper_version == ctrl.max_version.min(v)
                && self.control.oper_version == ctrl.oper_version;
        }
        let absent = if too_many {
            Reason::MultiplePeers
        } else if self.peer_lost {
            Reason::PeerLost
        } else if neighbor_cin {
            Reason::PeerCin
        } else if has_neighbor {
            Reason::PeerNoDcbx
        } else {
            Reason::NoPeer
        };
        let pfc_flags = self.pfc_flags();
        let ev = &mut self.events;
        let d = &self.cfg.dcbx;
        // LocalParameterChange first: a changed DesiredCfg is not Syncd, so the
        // machines below wait for the peer's acknowledgement before comparing it.
        let seq = self.control.seq;
        self.pg.mark_if_changed(&d.pg, v, 0, seq);
        self.pfc.mark_if_changed(&d.pfc, v, pfc_flags, seq);
        self.app.mark_if_changed(&d.app, v, 0, seq);
        match (cee, peer_ctrl.is_some()) {
            (Some(c), true) => {
                let dup = &c.duplicates;
                let pg = PeerView::Present {
                    versions_agree,
                    duplicate_control: dup.control,
                    duplicate: dup.pg,
                    tlv: c.pg.as_ref(),
                };
                self.pg.evaluate(&d.pg, v, pg, ev);
                let pfc = PeerView::Present {
                    versions_agree,
                    duplicate_control: dup.control,
                    duplicate: dup.pfc,
                    tlv: c.pfc.as_ref(),
                };
                self.pfc.evaluate(&d.pfc, v, pfc, ev);
                let app = PeerView::Present {
                    versions_agree,
                    duplicate_control: dup.control,
                    duplicate: dup.app,
                    tlv: c.app.as_ref(),
                };
                self.app.evaluate(&d.app, v, app, ev);
            }
            _ => {
                self.pg.evaluate(&d.pg, v, PeerView::Absent(absent), ev);
                self.pfc.evaluate(&d.pfc, v, PeerView::Absent(absent), ev);
                self.app.evaluate(&d.app, v, PeerView::Absent(absent), ev);
            }
        }
        // The machines may have changed an exchanged parameter (Error, version):
        // that too is due with the next SeqNo.
        self.pg.mark_if_changed(&d.pg, v, 0, seq);
        self.pfc.mark_if_changed(&d.pfc, v, pfc_flags, seq);
        self.app.mark_if_changed(&d.app, v, 0, seq);
        // The ratchet: a new SeqNo only once the previous one was acknowledged.
        if self.control.may_advance() && !(self.pg.syncd && self.pfc.syncd && self.app.syncd) {
            self.control.advance();
            self.dcbx_stats.seq_changes += 1;
            self.advertised = Advertised {
                pg: self.pg.content(&d.pg, v, 0),
                pfc: self.pfc.content(&d.pfc, v, pfc_flags),
                app: self.app.content(&d.app, v, 0),
            };
            self.pg.on_seq_issued(&d.pg, ev);
            self.pfc.on_seq_issued(&d.pfc, ev);
            self.app.on_seq_issued(&d.app, ev);
            send = true;
        }
        if send {
            // Any change of our Control TLV starts a fast burst, so a lost
            // frame is repeated after msgFastTx rather than msgTxInterval.
            self.tx.fast_start(now, &self.cfg.timers);
        }
        if self.peer_dcbx && self.control.awaiting_ack() {
            self.tx.keep_fast(now, &self.cfg.timers);
        }
    }

    /// Runs the transmit machine and queues what it sends.
    fn pump(&mut self, now: Instant) {
        while let Some(kind) = self.tx.poll(now, &self.cfg.timers) {
            match self.build_frame(kind) {
                Ok(frame) => {
                    self.lldp_stats.frames_out += 1;
                    self.transmit.push_back(frame);
                }
                // A validated configuration always fits; should one not, the
                // frame is counted and not sent, rather than sent malformed.
                Err(_) => self.lldp_stats.lldpdu_length_errors += 1,
            }
        }
    }

    fn build_frame(&self, kind: TxKind) -> Result<Vec<u8>, EmitError> {
        let cfg = &self.cfg;
        let chassis_id = match &cfg.chassis_id {
            Some(s) => Id {
                subtype: chassis_subtype::LOCAL,
                id: s.as_bytes(),
            },
            None => Id {
                subtype: chassis_subtype::MAC_ADDRESS,
                id: &cfg.mac.0,
            },
        };
        let port_id = match &cfg.port_id {
            Some(s) => Id {
                subtype: port_subtype::INTERFACE_NAME,
                id: s.as_bytes(),
            },
            None => Id {
                subtype: port_subtype::MAC_ADDRESS,
                id: &cfg.mac.0,
            },
        };
        let ttl = match kind {
            TxKind::Info => cfg.timers.ttl(),
            TxKind::Shutdown => 0,
        };
        let mut pdu = Lldpdu::new(chassis_id, port_id, ttl);
        if kind == TxKind::Info {
            pdu.port_description = cfg.port_description.as_deref().map(str::as_bytes);
            pdu.system_name = cfg.system_name.as_deref().map(str::as_bytes);
            if self.dcbx_active() {
                let a = &self.advertised;
                pdu.cee_dcbx = Some(CeeDcbx::new(
                    self.control.tlv(),
                    a.pg.clone(),
                    a.pfc.clone(),
                    a.app.clone(),
                ));
            }
        }
        let mut out = Vec::with_capacity(128);
        emit_lldp_frame(cfg.mac, &pdu, &mut out)?;
        Ok(out)
    }
}

fn feature_status<C: FeatureKind>(f: &Feature<C>, admin: &FeatureAdmin<C>) -> FeatureStatus<C> {
    FeatureStatus {
        enable: admin.enable,
        willing: admin.willing,
        advertise: admin.advertise,
        desired: admin.cfg.clone(),
        peer: f.peer.as_ref().map(|p| p.cfg.clone()),
        peer_enable: f.peer.as_ref().map(|p| p.header.enable),
        peer_willing: f.peer.as_ref().map(|p| p.header.willing),
        peer_error: f.peer.as_ref().map(|p| p.header.error),
        oper: f.oper_cfg.clone(),
        oper_mode: f.oper_mode,
        syncd: f.syncd,
        error: f.error,
        feature_seq: f.feature_seq,
        oper_version: f.oper_version,
        applied: f.applied(admin),
        reason: f.reason,
        reason_text: f.reason.describe(),
    }
}

/// Ethertype 0x88cc, untagged or behind one 802.1Q tag.
fn is_lldp_frame(frame: &[u8]) -> bool {
    matches!(
        (frame.get(12..14), frame.get(16..18)),
        (Some([0x88, 0xcc]), _) | (Some([0x81, 0x00]), Some([0x88, 0xcc]))
    )
}

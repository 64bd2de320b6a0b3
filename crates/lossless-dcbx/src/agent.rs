//! One port's LLDP agent with DCBX on top, sans-IO: IEEE 802.1Qaz, CEE DCBX, or
//! whichever the peer speaks ([`crate::mode`]).
//!
//! Inputs: [`Agent::handle_link`], [`Agent::handle_frame`],
//! [`Agent::handle_timeout`], [`Agent::set_config`], each with the current
//! time. Outputs: [`Agent::poll_transmit`] (whole Ethernet frames, written into the
//! caller's buffer), [`Agent::poll_event`], [`Agent::poll_timeout`]. Nothing here
//! reads a clock, touches a socket or spawns.
//!
//! The agent owns LLDP (the transmit machine and the remote MIB), decides who the
//! DCBX peer is (exactly one neighbour, sending DCBX of the running version) and which
//! version runs, and hands the peer to the CEE machines ([`crate::cee`]) or the IEEE
//! ones ([`crate::ieee`]).

use std::collections::VecDeque;

use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig, PriorityMap, FLAG_HEADROOM_MEASUREMENT};
use lossless_wire::frame::{emit_lldp_frame, Frame, Payload};
use lossless_wire::ieee::IeeeDcbx;
use lossless_wire::{EmitError, MacAddr};

use crate::cee::control::ControlMachine;
use crate::cee::feature::{Feature, FeatureKind};
use crate::cee::{self, CeeMachines};
use crate::config::{ConfigError, FeatureAdmin, PortConfig};
use crate::event::{Event, NeighborLoss};
use crate::ieee::{self, IeeeMachines};
use crate::lldp::local;
use crate::lldp::rx::{Msap, Neighbor, RemoteMib, RxOutcome};
use crate::lldp::tx::{TxKind, TxMachine};
use crate::mode::{ModeChange, ModeMachine, Version};
use crate::reason::Reason;
use crate::stats::{DcbxStats, DecodeErrors, LldpStats};
use crate::status::{
    FeatureStatus, HeadroomCapability, IeeeFeatureStatus, IeeeStatus, ModeStatus, PortStatus,
};
use crate::time::Instant;
use crate::IdText;

/// An LLDP + DCBX agent for one port.
#[derive(Debug, Clone)]
pub struct Agent {
    cfg: PortConfig,
    link_up: bool,
    tx: TxMachine,
    mib: RemoteMib,
    mode: ModeMachine,
    cee: CeeMachines,
    ieee: IeeeMachines,
    /// A DCBX peer of the running version is in view.
    peer_dcbx: bool,
    /// The last DCBX peer went away and none has replaced it.
    peer_lost: bool,
    /// Last reported tooManyNeighbors / multiple-neighbour state.
    too_many: bool,
    /// The IEEE TLVs last sent: a change goes out at once (fast transmission).
    ieee_sent: Option<IeeeDcbx>,
    transmit: VecDeque<TxKind>,
    events: VecDeque<Event>,
    lldp_stats: LldpStats,
    dcbx_stats: DcbxStats,
    decode_errors: DecodeErrors,
    now: Instant,
    /// SeqNo base of this agent's life (see `set_seq_base`).
    seq_base: u32,
}

impl Agent {
    /// A new agent with its link down.
    pub fn new(cfg: PortConfig, now: Instant) -> Result<Agent, ConfigError> {
        cfg.validate()?;
        Ok(Agent {
            mode: ModeMachine::new(cfg.dcbx.mode),
            cee: CeeMachines::new(&cfg.dcbx, 0),
            ieee: IeeeMachines::new(&cfg.dcbx),
            seq_base: 0,
            cfg,
            link_up: false,
            tx: TxMachine::new(now),
            mib: RemoteMib::default(),
            peer_dcbx: false,
            peer_lost: false,
            too_many: false,
            ieee_sent: None,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            lldp_stats: LldpStats::default(),
            dcbx_stats: DcbxStats::default(),
            decode_errors: DecodeErrors::default(),
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

    /// The DCBX version the port runs now.
    pub fn running(&self) -> Version {
        self.mode.running()
    }

    pub fn control(&self) -> &ControlMachine {
        &self.cee.control
    }

    pub fn pg(&self) -> &Feature<PgConfig> {
        &self.cee.pg
    }

    pub fn pfc(&self) -> &Feature<PfcConfig> {
        &self.cee.pfc
    }

    pub fn app(&self) -> &Feature<AppConfig> {
        &self.cee.app
    }

    /// The IEEE 802.1Qaz machines.
    pub fn ieee(&self) -> &IeeeMachines {
        &self.ieee
    }

    pub fn neighbors(&self) -> &[Neighbor] {
        self.mib.neighbors()
    }

    pub fn lldp_stats(&self) -> &LldpStats {
        &self.lldp_stats
    }

    pub fn dcbx_stats(&self) -> &DcbxStats {
        &self.dcbx_stats
    }

    /// Malformed input received, by field and kind.
    pub fn decode_errors(&self) -> &DecodeErrors {
        &self.decode_errors
    }

    /// DCBX runs: link up, LLDP rx and tx enabled, DCBX not switched off (CEE DCBX 2.3).
    pub fn dcbx_active(&self) -> bool {
        self.link_up && self.cfg.admin_status == crate::AdminStatus::RxTx && self.cfg.dcbx.enabled
    }

    /// A single DCBX peer of the running version is in view.
    pub fn peer_present(&self) -> bool {
        self.peer_dcbx
    }

    /// Every feature of the running version agrees with the peer: CEE, every
    /// DesiredCfg acknowledged (Syncd); IEEE, the peer's TLVs show what each
    /// feature's decision expects of it.
    pub fn all_syncd(&self) -> bool {
        match self.mode.running() {
            Version::Cee => self.cee.all_syncd(),
            Version::Ieee => self.ieee.all_agreed(),
        }
    }

    /// The priorities PFC runs on now, in the running version (none when it is off).
    pub fn applied_pfc(&self) -> PriorityMap {
        match self.mode.running() {
            Version::Cee => self
                .cee
                .pfc
                .applied(&self.cfg.dcbx.pfc)
                .map_or(PriorityMap::NONE, |p| p.priorities),
            Version::Ieee if self.ieee.pfc.oper_mode => self.ieee.pfc.oper,
            Version::Ieee => PriorityMap::NONE,
        }
    }

    /// Some feature of the running version is in error.
    pub fn any_error(&self) -> bool {
        match self.mode.running() {
            Version::Cee => self.cee.pg.error || self.cee.pfc.error || self.cee.app.error,
            Version::Ieee => self.ieee.ets.error || self.ieee.pfc.error || self.ieee.app.error,
        }
    }

    /// The link (portEnabled) went up or down.
    pub fn handle_link(&mut self, now: Instant, up: bool) {
        self.now = now;
        if up == self.link_up {
            return;
        }
        self.link_up = up;
        if up {
            let change = self.mode.link_reset();
            self.report_mode(change);
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
            self.cee.control = ControlMachine::starting_at(self.cfg.dcbx.max_version, base);
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
    /// whether it carried DCBX TLVs the machines must process.
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
                    self.decode_errors.count(&e);
                    self.events.push_back(Event::FrameDiscarded {
                        field: e.field,
                        kind: e.kind.name(),
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
            cee.anomalies
                .iter()
                .for_each(|e| self.decode_errors.count(e));
        }
        self.dcbx_stats.ieee.count(&pdu.ieee_dcbx);
        for e in pdu.ieee_dcbx.errors() {
            self.decode_errors.count(e);
        }
        self.dcbx_stats.cin_tlvs += u64::from(pdu.cin_dcbx.is_some());
        let dcbx = pdu.cee_dcbx.is_some() || !pdu.ieee_dcbx.is_empty();
        Some(pdu.ttl != 0 && dcbx && outcome != RxOutcome::TooMany)
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
            || old.port_description != self.cfg.port_description
            || old.system_description != self.cfg.system_description
            || old.system_capabilities != self.cfg.system_capabilities
            || old.management_address != self.cfg.management_address;
        let mode_change = self.mode.configure(self.cfg.dcbx.mode);
        let restart = old.dcbx.max_version != self.cfg.dcbx.max_version
            || was_active != self.dcbx_active()
            || mode_change.is_some();
        self.report_mode(mode_change);
        if restart {
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

    /// Writes the next frame to put on the wire into `out` (cleared first, its
    /// allocation reused); false when there is none. A frame that could not be built
    /// (a configuration that does not fit, which validation refuses) is counted in
    /// `lldpdu_length_errors` and skipped, never sent malformed.
    pub fn poll_transmit(&mut self, out: &mut Vec<u8>) -> bool {
        while let Some(kind) = self.transmit.pop_front() {
            match self.build_frame(kind, out) {
                Ok(()) => {
                    self.lldp_stats.frames_out += 1;
                    return true;
                }
                Err(_) => self.lldp_stats.lldpdu_length_errors += 1,
            }
        }
        false
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
            mode: ModeStatus {
                configured: self.mode.configured(),
                running: self.mode.running(),
                reason: self.mode.reason(),
                reason_text: self.mode.reason().describe(),
            },
            peer_present: self.peer_dcbx,
            all_syncd: self.peer_dcbx && self.all_syncd(),
            any_error: self.any_error(),
            control: self.cee.control,
            pg: feature_status(&self.cee.pg, &d.pg),
            pfc: feature_status(&self.cee.pfc, &d.pfc),
            app: feature_status(&self.cee.app, &d.app),
            ieee: self.ieee_status(),
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

    fn ieee_status(&self) -> IeeeStatus {
        let d = &self.cfg.dcbx;
        let m = &self.ieee;
        let p = &m.peer;
        IeeeStatus {
            ets: IeeeFeatureStatus {
                enable: d.ieee.ets.enable,
                willing: d.ieee.ets.willing,
                advertise: d.ieee.ets.advertise,
                admin: d.ieee.ets.cfg.table,
                peer: p.ets_config.map(|c| c.table),
                peer_willing: p.ets_config.map(|c| c.willing),
                oper: m.ets.oper,
                oper_mode: m.ets.oper_mode,
                agreed: m.ets.agreed,
                error: m.ets.error,
                reason: m.ets.reason,
                reason_text: m.ets.reason.describe(),
            },
            pfc: IeeeFeatureStatus {
                enable: d.pfc.enable,
                willing: d.pfc.willing,
                advertise: d.pfc.advertise,
                admin: d.pfc.cfg.priorities,
                peer: p.pfc.map(|c| c.enabled),
                peer_willing: p.pfc.map(|c| c.willing),
                oper: m.pfc.oper,
                oper_mode: m.pfc.oper_mode,
                agreed: m.pfc.agreed,
                error: m.pfc.error,
                reason: m.pfc.reason,
                reason_text: m.pfc.reason.describe(),
            },
            app: IeeeFeatureStatus {
                enable: d.app.enable,
                willing: d.app.willing,
                advertise: d.app.advertise,
                admin: d.ieee.app.clone(),
                peer: p.app.clone(),
                peer_willing: None,
                oper: m.app.oper.clone(),
                oper_mode: m.app.oper_mode,
                agreed: m.app.agreed,
                error: m.app.error,
                reason: m.app.reason,
                reason_text: m.app.reason.describe(),
            },
            ets_recommend: d.ieee.ets.cfg.recommends(d.ieee.ets.willing),
            peer_tlvs: p.clone(),
        }
    }

    /// The peer's PFC TLV (CEE or IEEE, as the port runs), as last received while DCBX
    /// runs, sets the headroom-measurement flag.
    pub fn peer_headroom_measurement(&self) -> bool {
        if !(self.dcbx_active() && self.peer_dcbx) {
            return false;
        }
        match self.mode.running() {
            Version::Cee => self
                .cee
                .pfc
                .peer
                .as_ref()
                .is_some_and(|p| p.header.reserved_flags & FLAG_HEADROOM_MEASUREMENT != 0),
            Version::Ieee => self.ieee.peer.pfc.is_some_and(|p| p.headroom_measurement),
        }
    }

    /// Both ends advertise the measurement capability: the condition for starting the
    /// delay measurement ("Adaptive PFC Headroom": if both support PFC HDRM).
    pub fn headroom_measurement_agreed(&self) -> bool {
        self.cfg.dcbx.headroom_measurement && self.peer_headroom_measurement()
    }

    /// Both versions' machines back to the link-up state.
    fn reset_dcbx(&mut self) {
        self.cee.reset(&self.cfg.dcbx, self.seq_base);
        self.ieee = IeeeMachines::new(&self.cfg.dcbx);
        self.ieee_sent = None;
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

    fn report_mode(&mut self, change: Option<ModeChange>) {
        if let Some(c) = change {
            self.dcbx_stats.mode_changes += 1;
            self.events.push_back(Event::ModeChanged {
                from: c.from,
                to: c.to,
                reason: c.reason,
            });
        }
    }

    /// The DCBX machines after any input. `fresh_pdu`: the single neighbour just
    /// sent DCBX TLVs (somethingChangedRemote).
    fn run_dcbx(&mut self, now: Instant, fresh_pdu: bool) {
        if !self.dcbx_active() {
            match self.mode.running() {
                Version::Cee => self.cee.inactive(&self.cfg.dcbx, &mut self.events),
                Version::Ieee => self.run_ieee(ieee::PeerView::Inactive),
            }
            return;
        }
        // CEE DCBX 2.3: more than one neighbour -> the peer's DCBX TLVs are absent.
        let too_many = self.mib.neighbors().len() > 1 || self.mib.too_many_neighbors(now);
        if too_many != self.too_many {
            self.too_many = too_many;
            self.events
                .push_back(Event::TooManyNeighbors { active: too_many });
        }
        // A copy, so the machines below can change the agent while reading it.
        let neighbor = (!too_many)
            .then(|| self.mib.neighbors().first().cloned())
            .flatten();
        let speaks_cee = neighbor.as_ref().is_some_and(|n| n.dcbx.is_some());
        let speaks_ieee = neighbor.as_ref().is_some_and(|n| n.ieee.is_some());
        if fresh_pdu && neighbor.is_some() {
            let change = self.mode.peer_sends(speaks_cee, speaks_ieee);
            if change.is_some() {
                self.reset_dcbx();
                self.peer_dcbx = false;
                // Answer in the peer's version now, not at the next timer.
                self.tx.local_change(now, &self.cfg.timers);
            }
            self.report_mode(change);
        }
        let running = self.mode.running();
        let present = match running {
            Version::Cee => neighbor
                .as_ref()
                .and_then(|n| n.dcbx.as_ref())
                .is_some_and(|c| c.control.is_some()),
            Version::Ieee => speaks_ieee,
        };
        let mut send = false;
        match (present, self.peer_dcbx) {
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
                    // PeerNotAdvertiseDCBX: reset as at link up; auto mode starts over.
                    self.peer_lost = true;
                    self.dcbx_stats.peer_losses += 1;
                    let change = self.mode.peer_gone();
                    self.report_mode(change);
                    self.reset_dcbx();
                }
            }
            _ => {}
        }
        let absent = self.absence(too_many, neighbor.as_ref(), speaks_cee, speaks_ieee);
        match self.mode.running() {
            Version::Cee => {
                let peer = match neighbor.as_ref().and_then(|n| n.dcbx.as_ref()) {
                    Some(c) if self.peer_dcbx => cee::Peer::Present(c),
                    _ => cee::Peer::Absent(absent),
                };
                let d = &self.cfg.dcbx;
                let flags = if d.headroom_measurement {
                    FLAG_HEADROOM_MEASUREMENT
                } else {
                    0
                };
                send |= self.cee.run(
                    d,
                    peer,
                    fresh_pdu,
                    flags,
                    &mut self.events,
                    &mut self.dcbx_stats,
                );
                if self.peer_dcbx && self.cee.awaiting_ack() {
                    self.tx.keep_fast(now, &self.cfg.timers);
                }
            }
            Version::Ieee => {
                let view = match (&neighbor, self.peer_dcbx) {
                    (Some(n), true) => match &n.ieee {
                        Some(tlvs) => ieee::PeerView::Present { tlvs, mac: n.mac },
                        None => ieee::PeerView::Absent(absent),
                    },
                    _ => ieee::PeerView::Absent(absent),
                };
                self.run_ieee(view);
                // What we run is what we send: a change goes out at once.
                let advertised = self.ieee_advertised();
                if self.ieee_sent.as_ref() != Some(&advertised) {
                    self.ieee_sent = Some(advertised);
                    send = true;
                }
            }
        }
        if send {
            // Any change of our DCBX TLVs starts a fast burst, so a lost frame is
            // repeated after msgFastTx rather than msgTxInterval.
            self.tx.fast_start(now, &self.cfg.timers);
        }
    }

    fn run_ieee(&mut self, view: ieee::PeerView<'_>) {
        let mac = self.cfg.mac;
        self.ieee
            .evaluate(&self.cfg.dcbx, mac, view, &mut self.events);
    }

    /// Why there is no DCBX peer of the running version.
    fn absence(
        &self,
        too_many: bool,
        neighbor: Option<&Neighbor>,
        speaks_cee: bool,
        speaks_ieee: bool,
    ) -> Reason {
        let cee_only = speaks_cee && !speaks_ieee;
        let ieee_only = speaks_ieee && !speaks_cee;
        if too_many {
            Reason::MultiplePeers
        } else if self.peer_lost {
            Reason::PeerLost
        } else if self.mode.running() == Version::Ieee && cee_only {
            Reason::PeerCeeOnly
        } else if self.mode.running() == Version::Cee && ieee_only {
            Reason::PeerIeeeOnly
        } else if neighbor.is_some_and(|n| n.cin_dcbx && n.dcbx.is_none() && n.ieee.is_none()) {
            Reason::PeerCin
        } else if neighbor.is_some() {
            Reason::PeerNoDcbx
        } else {
            Reason::NoPeer
        }
    }

    fn ieee_advertised(&self) -> IeeeDcbx {
        self.ieee
            .advertise(&self.cfg.dcbx, self.cfg.dcbx.headroom_measurement)
    }

    /// Runs the transmit machine and queues what it sends.
    fn pump(&mut self, now: Instant) {
        while let Some(kind) = self.tx.poll(now, &self.cfg.timers) {
            self.transmit.push_back(kind);
        }
    }

    fn build_frame(&self, kind: TxKind, out: &mut Vec<u8>) -> Result<(), EmitError> {
        let cfg = &self.cfg;
        local::with_lldpdu(cfg, kind == TxKind::Shutdown, |pdu| {
            if kind == TxKind::Info && self.dcbx_active() {
                match self.mode.running() {
                    Version::Cee => pdu.cee_dcbx = Some(self.cee.tlv()),
                    Version::Ieee => pdu.ieee_dcbx = self.ieee_advertised(),
                }
            }
            emit_lldp_frame(cfg.mac, pdu, out)
        })
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

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

mod frame;
mod status;

use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig, PriorityMap, FLAG_HEADROOM_MEASUREMENT};
use lossless_wire::frame::{Frame, Payload};
use lossless_wire::ieee::IeeeDcbx;
use lossless_wire::lldp::Lldpdu;
use lossless_wire::MacAddr;

use crate::cee::control::ControlMachine;
use crate::cee::feature::Feature;
use crate::cee::{self, CeeMachines};
use crate::config::{ConfigError, PortConfig};
use crate::event::{Event, NeighborLoss};
use crate::ieee::{self, IeeeMachines};
use crate::lldp::peer::PeerView;
use crate::lldp::rx::{Limits, Msap, Neighbor, RemoteMib, RxOutcome};
use crate::lldp::tx::{TxKind, TxMachine};
use crate::mode::{DcbxMode, ModeChange, ModeMachine, Version};
use crate::reason::Reason;
use crate::stats::{DcbxStats, DecodeErrors, LldpStats};
use crate::time::Instant;
use crate::IdText;
use frame::is_lldp_frame;

/// What a received LLDPDU brings the DCBX machines.
#[derive(Debug, Default)]
struct Fresh {
    /// The neighbour whose DCBX TLVs it refreshed in the remote MIB.
    from: Option<Msap>,
    /// Its TTL is not the one that neighbour sent last: it asks for our LLDPDU (see
    /// `ask_survivor`).
    asks: bool,
}

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
    /// Boxed: a port that never sent them is 840 octets smaller.
    ieee_sent: Option<Box<IeeeDcbx>>,
    transmit: VecDeque<TxKind>,
    /// The identity (MSAP) the port last sent, when it has another now (its MAC,
    /// Chassis ID or Port ID changed while it sent): its shutdown LLDPDU goes out
    /// before anything else, so the neighbour deletes that MSAP at once rather than
    /// holding it beside the new one until its TTL (802.1AB-2016's shutdown LLDPDU).
    /// Identities that changed again before a frame went out were never sent: only
    /// the first is kept.
    retired: Option<Box<PortConfig>>,
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
            retired: None,
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

    /// MSAPs whose LLDPDUs tooManyNeighbors discarded and that have not aged out.
    pub fn discarded_msaps(&self) -> usize {
        self.mib.discarded()
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
        self.dcbx_allowed() && self.cfg.dcbx.mode != DcbxMode::Static
    }

    /// `mode = "static"` runs: the configuration as written, a neighbour's DCBX TLVs
    /// read and compared, not followed.
    pub fn static_mode(&self) -> bool {
        self.dcbx_allowed() && self.cfg.dcbx.mode == DcbxMode::Static
    }

    /// Link up, LLDP both ways, DCBX not switched off.
    fn dcbx_allowed(&self) -> bool {
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
            self.retired = None;
            let gone = self.mib.clear();
            self.report_removed(gone);
            self.peer_dcbx = false;
            self.too_many = false;
        }
        self.run_dcbx(now, &Fresh::default());
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
            Some(fresh) => self.run_dcbx(now, &fresh),
            None if aged => self.run_dcbx(now, &Fresh::default()),
            None => {}
        }
        self.pump(now);
    }

    /// rxProcessFrame: validates an LLDPDU and updates the remote MIB. Returns
    /// None when the frame is not for this agent, else what it brings the machines.
    fn receive(&mut self, now: Instant, frame: &[u8]) -> Option<Fresh> {
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
                    self.events.push_back(Event::FrameDiscarded(Box::new(
                        crate::event::Discarded {
                            field: e.field.into(),
                            kind: e.kind.name().into(),
                            error: e.to_string(),
                        },
                    )));
                }
                return None;
            }
        };
        let pdu = match &parsed.payload {
            Payload::Lldp(pdu) if parsed.header.dst == MacAddr::LLDP_NEAREST_BRIDGE => pdu,
            _ => return None,
        };
        self.lldp_stats.frames_in += 1;
        let limits = Limits {
            max_neighbors: self.cfg.max_neighbors,
            hold: self.cfg.neighbor_hold(),
        };
        let src = parsed.header.src;
        let outcome = self
            .mib
            .receive(now, src, pdu, limits, &mut self.lldp_stats);
        let mut asks = false;
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
            RxOutcome::Updated { ttl_changed } => asks = ttl_changed,
            RxOutcome::DiscardedShutdown | RxOutcome::Ignored | RxOutcome::TooMany => {}
        }
        self.count_dcbx_tlvs(pdu);
        let dcbx = pdu.cee_dcbx.is_some() || !pdu.ieee_dcbx.is_empty();
        let stored = matches!(outcome, RxOutcome::Added | RxOutcome::Updated { .. });
        Some(Fresh {
            from: (stored && dcbx).then(|| Msap::of(pdu)),
            asks,
        })
    }

    fn count_dcbx_tlvs(&mut self, pdu: &Lldpdu<'_>) {
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
    }

    /// Time passed: age neighbours, run the transmit timers.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.now = now;
        let aged = self.expire(now);
        // A change of version that waited for the mode's hold (`mode::MODE_HOLD`).
        let change = self.mode.handle_timeout(now);
        if change.is_some() {
            self.switch_version(now, change);
        }
        if aged || change.is_some() {
            self.run_dcbx(now, &Fresh::default());
        }
        self.pump(now);
    }

    /// Applies a new configuration at once. A bad one is refused and nothing changes.
    pub fn set_config(&mut self, now: Instant, cfg: PortConfig) -> Result<(), ConfigError> {
        cfg.validate()?;
        self.now = now;
        self.expire(now);
        let old = std::mem::replace(&mut self.cfg, cfg);
        if self.link_up && old.admin_status.tx() && old.msap() != self.cfg.msap() {
            // The neighbour knows us by the old MSAP: tell it that one is gone, then
            // send the new one (fast, as any change of identity).
            if self.retired.is_none() {
                self.retired = Some(Box::new(old.clone()));
            }
        }
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
        self.run_dcbx(now, &Fresh::default());
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
        if let Some(old) = self.retired.take() {
            match frame::build_shutdown(&old, out) {
                Ok(()) => {
                    self.lldp_stats.frames_out += 1;
                    return true;
                }
                Err(_) => self.lldp_stats.lldpdu_length_errors += 1,
            }
        }
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

    /// The next notification for the manager. None once they are all out, and then
    /// the queue gives its room back: notifications come in bursts (a negotiation,
    /// a neighbour's coming and going), and a port's queue would otherwise keep the
    /// room of its largest burst, about 250 octets, for good.
    pub fn poll_event(&mut self) -> Option<Event> {
        let e = self.events.pop_front();
        if e.is_none() && self.events.capacity() > 0 {
            self.events = VecDeque::new();
        }
        e
    }

    /// When to call `handle_timeout` next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let mib = self.mib.poll_timeout(self.cfg.neighbor_hold());
        [self.tx.poll_timeout(), mib, self.mode.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
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

    /// Ages the remote MIB; true when something went away or stopped holding the port.
    fn expire(&mut self, now: Instant) -> bool {
        let aged = self
            .mib
            .age(now, self.cfg.neighbor_hold(), &mut self.lldp_stats);
        self.report_removed(aged.gone);
        for msap in aged.hold_expired {
            self.events.push_back(Event::NeighborHoldExpired {
                chassis_id: msap.chassis_id.to_string(),
                port_id: msap.port_id.to_string(),
            });
        }
        aged.changed
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

    /// The DCBX machines after any input; `fresh`: what the LLDPDU just received
    /// brought (nothing, for a timer or a configuration change).
    fn run_dcbx(&mut self, now: Instant, fresh: &Fresh) {
        if self.static_mode() {
            // The single neighbour's IEEE TLVs, to show and compare; never followed.
            let neighbor = match self.mib.dcbx_view(now, self.cfg.neighbor_hold()) {
                PeerView::One(n) => n.ieee.clone(),
                PeerView::None | PeerView::Multiple => None,
            };
            self.run_ieee(ieee::PeerView::Static(neighbor.as_deref()));
            return;
        }
        if !self.dcbx_active() {
            match self.mode.running() {
                Version::Cee => self.cee.inactive(&self.cfg.dcbx, &mut self.events),
                Version::Ieee => self.run_ieee(ieee::PeerView::Inactive),
            }
            return;
        }
        let (neighbor, leaving) = self.choose_peer(now);
        let from_peer = neighbor
            .as_ref()
            .is_some_and(|n| fresh.from.as_ref() == Some(&n.msap));
        // Leaving tooManyNeighbors, what we hold of the survivor is news to the
        // machines (somethingChangedRemote), as a frame it just sent would be.
        let holds_dcbx = |n: &Neighbor| n.dcbx.is_some() || n.ieee.is_some();
        let fresh_pdu = from_peer || (leaving && neighbor.as_ref().is_some_and(holds_dcbx));
        if leaving {
            if let Some(speaks) = self.mib.lone_discarded() {
                // Its LLDPDUs were discarded, but we know its version: ask in that.
                self.follow_version(now, speaks.cee, speaks.ieee);
            }
            self.ask_survivor(now, neighbor.as_ref());
        }
        let speaks_cee = neighbor.as_ref().is_some_and(|n| n.dcbx.is_some());
        let speaks_ieee = neighbor.as_ref().is_some_and(|n| n.ieee.is_some());
        if fresh_pdu {
            self.follow_version(now, speaks_cee, speaks_ieee);
        }
        let present = match self.mode.running() {
            Version::Cee => neighbor
                .as_ref()
                .and_then(|n| n.dcbx.as_ref())
                .is_some_and(|c| c.control.is_some()),
            Version::Ieee => speaks_ieee,
        };
        let mut send = self.track_presence(now, present);
        if let Some(n) = neighbor.as_ref().filter(|_| self.peer_dcbx) {
            self.mib.mark_negotiated(&n.msap);
        }
        let absent = self.absence(self.too_many, neighbor.as_ref(), speaks_cee, speaks_ieee);
        send |= self.run_version(now, neighbor.as_ref(), absent, fresh_pdu);
        if send {
            // Any change of our DCBX TLVs starts a fast burst, so a lost frame is
            // repeated after msgFastTx rather than msgTxInterval.
            self.tx.fast_start(now, &self.cfg.timers);
        } else if from_peer && fresh.asks && self.peer_dcbx {
            // The peer's TTL changed: it asks for our LLDPDU (`ask_survivor`), as any
            // changed LLDPDU does of lldpad in IEEE 802.1Qaz mode. Answered now,
            // not at our next msgTxInterval.
            self.tx.local_change(now, &self.cfg.timers);
        }
    }

    /// Who DCBX talks to now (a copy, so the machines can change the agent while
    /// reading it), reporting tooManyNeighbors as it starts and ends; true when it
    /// just ended.
    fn choose_peer(&mut self, now: Instant) -> (Option<Neighbor>, bool) {
        let (neighbor, too_many) = match self.mib.dcbx_view(now, self.cfg.neighbor_hold()) {
            PeerView::One(n) => (Some(n.clone()), false),
            PeerView::None => (None, false),
            // IEEE 802.1AB, CEE DCBX 2.3: more than one neighbour -> no DCBX peer.
            PeerView::Multiple => (None, true),
        };
        let leaving = self.too_many && !too_many;
        if too_many != self.too_many {
            self.too_many = too_many;
            self.events
                .push_back(Event::TooManyNeighbors { active: too_many });
        }
        (neighbor, leaving)
    }

    /// tooManyNeighbors just ended: ask the survivor for a fresh LLDPDU instead of
    /// waiting up to its msgTxInterval. A fast burst whose first LLDPDU differs from
    /// the last (its TTL), which lldpad answers in IEEE 802.1Qaz mode and so do we;
    /// in CEE DCBX, with none of the survivor's information held, AckNo 0 too: a CEE
    /// peer (lldpad, us) takes that for a peer that started over and sends again.
    fn ask_survivor(&mut self, now: Instant, survivor: Option<&Neighbor>) {
        self.tx.solicit(now, &self.cfg.timers);
        let held = survivor
            .and_then(|n| n.dcbx.as_ref())
            .is_some_and(|c| c.control.is_some());
        if self.mode.running() == Version::Cee && !held {
            self.cee.control.forget_peer();
        }
    }

    /// `mode = "auto"`: the DCBX TLVs the peer just sent decide the version.
    fn follow_version(&mut self, now: Instant, speaks_cee: bool, speaks_ieee: bool) {
        let change = self.mode.peer_sends(now, speaks_cee, speaks_ieee);
        self.switch_version(now, change);
    }

    /// The running version changed because of the peer: both versions' machines start
    /// over and ours goes out in the new one.
    fn switch_version(&mut self, now: Instant, change: Option<ModeChange>) {
        if change.is_some() {
            self.reset_dcbx();
            self.peer_dcbx = false;
            // Answer in the peer's version now, not at the next timer.
            self.tx.local_change(now, &self.cfg.timers);
        }
        self.report_mode(change);
    }

    /// A DCBX peer of the running version appears or goes; true when ours should go
    /// out now.
    fn track_presence(&mut self, now: Instant, present: bool) -> bool {
        match (present, self.peer_dcbx) {
            (true, false) => {
                self.peer_dcbx = true;
                self.peer_lost = false;
                self.events.push_back(Event::PeerDcbx { present: true });
                // A peer (re)appears: show it our state now rather than at the next timer.
                true
            }
            (false, true) => {
                self.peer_dcbx = false;
                self.events.push_back(Event::PeerDcbx { present: false });
                if !self.too_many {
                    // PeerNotAdvertiseDCBX: reset as at link up; auto mode starts over.
                    self.peer_lost = true;
                    self.dcbx_stats.peer_losses += 1;
                    let change = self.mode.peer_gone(now);
                    self.report_mode(change);
                    self.reset_dcbx();
                }
                false
            }
            _ => false,
        }
    }

    /// The machines of the running version; true when ours should go out now.
    fn run_version(
        &mut self,
        now: Instant,
        neighbor: Option<&Neighbor>,
        absent: Reason,
        fresh_pdu: bool,
    ) -> bool {
        match self.mode.running() {
            Version::Cee => {
                let peer = match neighbor.and_then(|n| n.dcbx.as_ref()) {
                    Some(c) if self.peer_dcbx => cee::Peer::Present(c),
                    _ => cee::Peer::Absent(absent),
                };
                let d = &self.cfg.dcbx;
                let flags = if d.headroom_measurement {
                    FLAG_HEADROOM_MEASUREMENT
                } else {
                    0
                };
                let send = self.cee.run(
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
                send
            }
            Version::Ieee => {
                let view = match (neighbor, self.peer_dcbx) {
                    (Some(n), true) => match &n.ieee {
                        Some(tlvs) => ieee::PeerView::Present { tlvs, mac: n.mac },
                        None => ieee::PeerView::Absent(absent),
                    },
                    _ => ieee::PeerView::Absent(absent),
                };
                self.run_ieee(view);
                // What we run is what we send: a change goes out at once.
                let advertised = self.ieee_advertised();
                let changed = self.ieee_sent.as_deref() != Some(&advertised);
                if changed {
                    self.ieee_sent = Some(Box::new(advertised));
                }
                changed
            }
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
}

//! The link-delay measurement session (Adaptive PFC Headroom, phase 2), sans-IO.
//!
//! Each port runs one session, which is both ends of the exchange:
//!
//! - as **station 1** it runs measurement rounds: `samples` requests spaced `spacing`
//!   apart; for each it learns T1 (its transmit timestamp of the request), T2 (in the
//!   response), T4 (its receive timestamp of the response) and T3 (in the follow-up);
//! - as **station 2** it answers every request with a response carrying T2 and, once the
//!   runtime reports the response's transmit timestamp, a follow-up carrying T3.
//!
//! A round ends when every exchange is complete, or `reply_timeout` after the last
//! request. The minimum filter of the valid exchanges is the round's result
//! ([`crate::adaptive::min_round_trip`]): queueing and scheduling only add delay.
//!
//! Rounds run only while the link is up and both ends advertised the capability in
//! DCBX ([`Session::set_agreed`]); requests are answered whenever the link is up, so a
//! peer that saw the agreement a moment earlier loses nothing. Timestamps are handed in
//! by the caller, picoseconds on its clock modulo 2^64: the kernel's (SO_TIMESTAMPING)
//! in the daemon, the virtual clock in the lab, where the result is exact.
//!
//! Frames per port and round: `samples` requests, plus up to 2 x `samples` answers to
//! the peer's round (96 frames with the default 32 samples).

use std::collections::VecDeque;

use lossless_time::{Duration, Instant};
use lossless_wire::measure::{Measure, MessageKind, FLAG_HARDWARE};
use lossless_wire::{emit_measure_frame, Frame, MacAddr, Payload};
use serde::Serialize;

use crate::adaptive::Exchange;
use crate::units;

/// A timestamp: picoseconds on the station's own clock, modulo 2^64.
pub type Timestamp = u64;

/// How a port measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionConfig {
    /// Exchanges per round.
    pub samples: u16,
    /// Time between two requests of a round.
    pub spacing: Duration,
    /// How long after the last request of a round its answers may still arrive.
    pub reply_timeout: Duration,
    /// Time from one round's result to the next round.
    pub period: Duration,
    /// Time from a failed round to the next attempt.
    pub retry: Duration,
    /// Valid exchanges a round needs for a result.
    pub min_valid: u16,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            samples: 32,
            spacing: Duration::from_millis(2),
            reply_timeout: Duration::from_millis(50),
            period: Duration::from_secs(60),
            // A failed round (a path that was not passing frames yet) retries soon, so
            // a link still settles within a second of coming up.
            retry: Duration::from_millis(250),
            min_valid: 8,
        }
    }
}

/// A configuration value outside its range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} = {value}: {reason}")]
pub struct SessionConfigError {
    pub field: &'static str,
    pub value: String,
    pub reason: &'static str,
}

impl SessionConfig {
    pub fn validate(&self) -> Result<(), SessionConfigError> {
        let err = |field, value: String, reason| {
            Err(SessionConfigError {
                field,
                value,
                reason,
            })
        };
        if !(1..=1000).contains(&self.samples) {
            return err("samples", self.samples.to_string(), "must be 1..=1000");
        }
        if self.min_valid == 0 || self.min_valid > self.samples {
            return err(
                "min_valid",
                self.min_valid.to_string(),
                "must be at least 1 and at most samples",
            );
        }
        if self.spacing > Duration::from_secs(1) {
            return err(
                "spacing",
                format!("{:?}", self.spacing),
                "must be at most 1s",
            );
        }
        if self.reply_timeout.is_zero() || self.reply_timeout > Duration::from_secs(10) {
            return err(
                "reply_timeout",
                format!("{:?}", self.reply_timeout),
                "must be above 0 and at most 10s",
            );
        }
        if self.period < Duration::from_secs(1) {
            return err(
                "period",
                format!("{:?}", self.period),
                "must be at least 1s",
            );
        }
        if self.retry < Duration::from_millis(100) {
            return err(
                "retry",
                format!("{:?}", self.retry),
                "must be at least 100ms",
            );
        }
        Ok(())
    }
}

/// The result of one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Measurement {
    /// T4 - T1 - (T3 - T2), minimum over the valid exchanges: both directions of the
    /// link, cables and interfaces.
    pub round_trip: units::Duration,
    /// The median of the same exchanges, to show the spread the minimum filter removed.
    pub median: units::Duration,
    pub valid: u16,
    pub sent: u16,
    /// Both stations timestamped in hardware.
    pub hardware: bool,
    pub session: u16,
    #[serde(skip)]
    pub started: Instant,
    #[serde(skip)]
    pub finished: Instant,
}

impl Measurement {
    /// Half the round trip: the one-way delay of a symmetric link.
    pub fn one_way(&self) -> units::Duration {
        units::Duration(self.round_trip.0 / 2)
    }
}

/// What a session reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum MeasureEvent {
    Measured(Measurement),
    Failed {
        session: u16,
        valid: u16,
        sent: u16,
        min_valid: u16,
        /// Exchanges without our transmit timestamp (T1), without the peer's response
        /// (T2, T4), without its follow-up (T3): where the round lost its samples.
        missing_t1: u16,
        missing_response: u16,
        missing_follow_up: u16,
    },
}

/// Counters, by message and by what went wrong.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct MeasureStats {
    pub requests_sent: u64,
    pub responses_sent: u64,
    pub follow_ups_sent: u64,
    pub requests_received: u64,
    pub responses_received: u64,
    pub follow_ups_received: u64,
    /// Answers for a round or exchange that is no longer open.
    pub stale: u64,
    /// Measurement frames that did not parse.
    pub malformed: u64,
    /// Complete exchanges whose timestamps are inconsistent (clock steps).
    pub invalid_exchanges: u64,
    pub rounds_completed: u64,
    pub rounds_failed: u64,
    /// Rounds dropped unfinished: link down, capability withdrawn, re-measure.
    pub rounds_abandoned: u64,
}

/// One exchange of the open round (its sequence number is its index), as its
/// timestamps arrive (in any order).
#[derive(Debug, Clone, Copy)]
struct Pending {
    t1: Option<Timestamp>,
    t2: Option<Timestamp>,
    t3: Option<Timestamp>,
    t4: Option<Timestamp>,
    peer_hardware: bool,
}

impl Pending {
    fn exchange(&self) -> Option<Exchange> {
        Some(Exchange {
            t1: self.t1?,
            t2: self.t2?,
            t3: self.t3?,
            t4: self.t4?,
        })
    }
}

#[derive(Debug, Clone)]
struct Round {
    id: u16,
    started: Instant,
    next_send: Instant,
    last_sent: Instant,
    pending: Vec<Pending>,
}

/// A response sent, waiting for its transmit timestamp (T3) to send the follow-up.
#[derive(Debug, Clone, Copy)]
struct Answer {
    session: u16,
    seq: u16,
    t2: Timestamp,
}

/// How many answers may wait for their transmit timestamps; older ones are dropped.
const MAX_WAITING_ANSWERS: usize = 64;

/// One port's measurement session.
#[derive(Debug, Clone)]
pub struct Session {
    cfg: SessionConfig,
    mac: MacAddr,
    link_up: bool,
    agreed: bool,
    hardware: bool,
    next_id: u16,
    round: Option<Round>,
    next_round: Option<Instant>,
    answers: VecDeque<Answer>,
    transmit: VecDeque<Vec<u8>>,
    events: VecDeque<MeasureEvent>,
    last: Option<Measurement>,
    stats: MeasureStats,
}

impl Session {
    /// A session for the port with `mac`. `first_id` numbers the first round; later
    /// rounds count up from it, so a restarted station (a new `first_id`) does not take
    /// answers meant for its previous life.
    pub fn new(
        cfg: SessionConfig,
        mac: MacAddr,
        first_id: u16,
    ) -> Result<Self, SessionConfigError> {
        cfg.validate()?;
        Ok(Session {
            cfg,
            mac,
            link_up: false,
            agreed: false,
            hardware: false,
            next_id: first_id,
            round: None,
            next_round: None,
            answers: VecDeque::new(),
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            last: None,
            stats: MeasureStats::default(),
        })
    }

    pub fn config(&self) -> &SessionConfig {
        &self.cfg
    }

    /// A new configuration; an open round finishes under the old one.
    pub fn set_config(&mut self, cfg: SessionConfig) -> Result<(), SessionConfigError> {
        cfg.validate()?;
        self.cfg = cfg;
        Ok(())
    }

    /// The runtime's timestamps come from the NIC's clock.
    pub fn set_hardware_timestamps(&mut self, hardware: bool) {
        self.hardware = hardware;
    }

    pub fn set_mac(&mut self, mac: MacAddr) {
        self.mac = mac;
    }

    /// Link state. Up (with agreement) measures at once; down forgets the open round
    /// and the last result, which belonged to the link as it was.
    pub fn set_link(&mut self, now: Instant, up: bool) {
        if up == self.link_up {
            return;
        }
        self.link_up = up;
        if !up {
            self.abandon();
            self.next_round = None;
            self.answers.clear();
            self.last = None;
        }
        self.maybe_start(now);
    }

    /// Both ends advertise the capability in DCBX (Adaptive PFC Headroom: "if both
    /// support PFC HDRM, initiate PFC HDRM Measurement Request, otherwise, stop the procedure").
    pub fn set_agreed(&mut self, now: Instant, agreed: bool) {
        if agreed == self.agreed {
            return;
        }
        self.agreed = agreed;
        if !agreed {
            self.abandon();
            self.next_round = None;
        }
        self.maybe_start(now);
    }

    /// Follows the port's DCBX agent: its link, and whether both ends advertise the
    /// capability. Call after every input the agent handled.
    pub fn follow(&mut self, now: Instant, agent: &lossless_dcbx::Agent) {
        self.set_link(now, agent.link_up());
        self.set_agreed(now, agent.headroom_measurement_agreed());
    }

    /// Measure again now (speed change, operator request); an open round is abandoned.
    pub fn remeasure(&mut self, now: Instant) {
        self.abandon();
        self.next_round = None;
        self.maybe_start(now);
    }

    fn abandon(&mut self) {
        if self.round.take().is_some() {
            self.stats.rounds_abandoned += 1;
        }
    }

    /// Rounds may run: link up and both ends capable.
    pub fn running(&self) -> bool {
        self.link_up && self.agreed
    }

    pub fn measuring(&self) -> bool {
        self.round.is_some()
    }

    pub fn last(&self) -> Option<&Measurement> {
        self.last.as_ref()
    }

    pub fn stats(&self) -> &MeasureStats {
        &self.stats
    }

    /// The id the next round will carry.
    pub fn next_round_id(&self) -> u16 {
        self.next_id
    }

    pub fn next_round(&self) -> Option<Instant> {
        self.next_round
    }

    fn maybe_start(&mut self, now: Instant) {
        if self.running() && self.round.is_none() && self.next_round.is_none() {
            self.start_round(now);
        }
    }

    fn start_round(&mut self, now: Instant) {
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.next_round = None;
        self.round = Some(Round {
            id,
            started: now,
            next_send: now,
            last_sent: now,
            pending: Vec::with_capacity(self.cfg.samples.into()),
        });
        self.send_due(now);
    }

    fn flags(&self) -> u8 {
        if self.hardware {
            FLAG_HARDWARE
        } else {
            0
        }
    }

    fn emit(&mut self, msg: Measure) {
        let mut out = Vec::with_capacity(64);
        emit_measure_frame(self.mac, &msg, &mut out);
        self.transmit.push_back(out);
    }

    fn send_due(&mut self, now: Instant) {
        let flags = self.flags();
        let Some(round) = self.round.as_mut() else {
            return;
        };
        let mut due = Vec::new();
        while round.pending.len() < usize::from(self.cfg.samples) && round.next_send <= now {
            let seq = round.pending.len() as u16;
            round.pending.push(Pending {
                t1: None,
                t2: None,
                t3: None,
                t4: None,
                peer_hardware: false,
            });
            round.last_sent = now;
            round.next_send = round.next_send + self.cfg.spacing;
            due.push(Measure {
                kind: MessageKind::Request,
                session: round.id,
                sequence: seq,
                flags,
                t1: 0,
                t2: 0,
                t3: 0,
            });
        }
        for msg in due {
            self.stats.requests_sent += 1;
            self.emit(msg);
        }
    }

    /// A received frame with its receive timestamp. Frames that are not measurement
    /// messages are ignored; malformed ones are counted.
    pub fn handle_frame(&mut self, now: Instant, frame: &[u8], rx: Timestamp) {
        let msg = match Frame::parse(frame) {
            Ok(Frame {
                payload: Payload::Measure(m),
                ..
            }) => m,
            Ok(_) => return,
            Err(_) => {
                if frame.get(12..14)
                    == Some(&lossless_wire::measure::ETHERTYPE_MEASURE.to_be_bytes())
                {
                    self.stats.malformed += 1;
                }
                return;
            }
        };
        if !self.link_up {
            return;
        }
        match msg.kind {
            MessageKind::Request => {
                self.stats.requests_received += 1;
                self.stats.responses_sent += 1;
                let flags = self.flags();
                self.emit(Measure {
                    kind: MessageKind::Response,
                    session: msg.session,
                    sequence: msg.sequence,
                    flags,
                    t1: 0,
                    t2: rx,
                    t3: 0,
                });
                if self.answers.len() == MAX_WAITING_ANSWERS {
                    self.answers.pop_front();
                }
                self.answers.push_back(Answer {
                    session: msg.session,
                    seq: msg.sequence,
                    t2: rx,
                });
            }
            MessageKind::Response => {
                self.stats.responses_received += 1;
                match self.pending_mut(msg.session, msg.sequence) {
                    Some(p) => {
                        p.t2 = Some(msg.t2);
                        p.t4 = Some(rx);
                        p.peer_hardware = msg.flags & FLAG_HARDWARE != 0;
                    }
                    None => self.stats.stale += 1,
                }
            }
            MessageKind::FollowUp => {
                self.stats.follow_ups_received += 1;
                match self.pending_mut(msg.session, msg.sequence) {
                    Some(p) => {
                        p.t2 = Some(msg.t2);
                        p.t3 = Some(msg.t3);
                    }
                    None => self.stats.stale += 1,
                }
            }
        }
        self.finish_if_complete(now);
    }

    /// The transmit timestamp of a frame this session sent (from the kernel's error
    /// queue, which returns the frame; or the runtime's clock where the driver gives
    /// none).
    pub fn handle_tx_timestamp(&mut self, now: Instant, frame: &[u8], tx: Timestamp) {
        let Ok(Frame {
            payload: Payload::Measure(msg),
            ..
        }) = Frame::parse(frame)
        else {
            return;
        };
        match msg.kind {
            MessageKind::Request => {
                if let Some(p) = self.pending_mut(msg.session, msg.sequence) {
                    p.t1 = Some(tx);
                }
                self.finish_if_complete(now);
            }
            MessageKind::Response => {
                let at = self
                    .answers
                    .iter()
                    .position(|a| a.session == msg.session && a.seq == msg.sequence);
                if let Some(a) = at.and_then(|i| self.answers.remove(i)) {
                    self.stats.follow_ups_sent += 1;
                    let flags = self.flags();
                    self.emit(Measure {
                        kind: MessageKind::FollowUp,
                        session: a.session,
                        sequence: a.seq,
                        flags,
                        t1: 0,
                        t2: a.t2,
                        t3: tx,
                    });
                }
            }
            MessageKind::FollowUp => {}
        }
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(at) = self.next_round {
            if at <= now && self.running() && self.round.is_none() {
                self.start_round(now);
            }
        }
        self.send_due(now);
        if let Some(r) = &self.round {
            if r.pending.len() == usize::from(self.cfg.samples)
                && now >= r.last_sent + self.cfg.reply_timeout
            {
                self.finish(now);
            }
        }
    }

    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<MeasureEvent> {
        self.events.pop_front()
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        match &self.round {
            Some(r) if r.pending.len() < usize::from(self.cfg.samples) => Some(r.next_send),
            Some(r) => Some(r.last_sent + self.cfg.reply_timeout),
            None if self.running() => self.next_round,
            None => None,
        }
    }

    fn pending_mut(&mut self, session: u16, seq: u16) -> Option<&mut Pending> {
        let r = self.round.as_mut().filter(|r| r.id == session)?;
        r.pending.get_mut(usize::from(seq))
    }

    fn finish_if_complete(&mut self, now: Instant) {
        if let Some(r) = &self.round {
            if r.pending.len() == usize::from(self.cfg.samples)
                && r.pending.iter().all(|p| p.exchange().is_some())
            {
                self.finish(now);
            }
        }
    }

    fn finish(&mut self, now: Instant) {
        let Some(r) = self.round.take() else {
            return;
        };
        let mut trips = Vec::with_capacity(r.pending.len());
        let mut hardware = self.hardware;
        for p in &r.pending {
            if let Some(e) = p.exchange() {
                match e.round_trip() {
                    Ok(d) => {
                        trips.push(d);
                        hardware &= p.peer_hardware;
                    }
                    Err(_) => self.stats.invalid_exchanges += 1,
                }
            }
        }
        trips.sort_unstable();
        let sent = r.pending.len() as u16;
        let valid = trips.len() as u16;
        if valid >= self.cfg.min_valid {
            let m = Measurement {
                round_trip: trips[0],
                median: trips[trips.len() / 2],
                valid,
                sent,
                hardware,
                session: r.id,
                started: r.started,
                finished: now,
            };
            self.stats.rounds_completed += 1;
            self.last = Some(m);
            self.events.push_back(MeasureEvent::Measured(m));
            self.next_round = Some(now + self.cfg.period);
        } else {
            self.stats.rounds_failed += 1;
            let count = |f: fn(&Pending) -> bool| r.pending.iter().filter(|p| f(p)).count() as u16;
            self.events.push_back(MeasureEvent::Failed {
                session: r.id,
                valid,
                sent,
                min_valid: self.cfg.min_valid,
                missing_t1: count(|p| p.t1.is_none()),
                missing_response: count(|p| p.t4.is_none()),
                missing_follow_up: count(|p| p.t3.is_none()),
            });
            self.next_round = Some(now + self.cfg.retry);
        }
    }
}

//! The WAN delay, measured by the PEs rather than configured: the link-delay
//! measurement exchange of the headroom code (T1..T4, `lossless_headroom::session`,
//! frames of `lossless_wire::measure`) carried inside the tunnel, PE to PE.
//!
//! Each PE runs one session, both stations of the exchange: it sends requests
//! to the far PE in its tunnel and answers the far PE's. A measurement frame
//! out of the tunnel (EtherType 0x88B5) goes to the session, never to the DC
//! gateway. Timestamps are the relay's clock (in picoseconds): a frame's
//! arrival as the caller says it (the kernel's receive time where the runtime
//! has it, so a relay thread that runs late does not lengthen the round trip),
//! and its departure: the kernel's transmit time where the runtime can ask
//! for it ([`WanDelay::set_kernel_tx_stamps`], the stamp back through
//! [`WanDelay::handle_tx_stamp`]), else the time the frame is queued for
//! sending. A queued time puts the PEs' sending path in the round trip:
//! microseconds on an idle host, milliseconds when the relay thread waits for
//! a CPU between the two; the minimum over a round's exchanges keeps the
//! smallest.
//!
//! The result is the round trip PE to PE and back (T4 - T1 - (T3 - T2)) and
//! half of it as the one-way delay: the draft's forwarding delay when
//! `buffer.wan_delay = "measured"`.

use lossless_headroom::session::{MeasureEvent, Measurement, Session, SessionConfig};
use lossless_headroom::units::{self, parse_duration};
use lossless_time::{Duration, Instant};
use lossless_wire::measure::ETHERTYPE_MEASURE;
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// `[relay.measure]`: measure the WAN delay to the far PE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureConfig {
    /// Exchanges per round (1..=1000).
    #[serde(default = "default_samples")]
    pub samples: u16,
    /// Between two requests of a round.
    #[serde(default = "default_spacing")]
    pub spacing: String,
    /// From one round's result to the next (at least 1 s).
    #[serde(default = "default_period")]
    pub period: String,
}

fn default_samples() -> u16 {
    16
}

fn default_spacing() -> String {
    "1ms".into()
}

fn default_period() -> String {
    "10s".into()
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            samples: default_samples(),
            spacing: default_spacing(),
            period: default_period(),
        }
    }
}

fn duration(key: &'static str, value: &str) -> Result<Duration, ConfigError> {
    let d = parse_duration(value).map_err(|e| ConfigError::Unit {
        key,
        value: value.to_string(),
        reason: e.to_string(),
    })?;
    Ok(Duration::from_nanos(d.0.div_ceil(1000)))
}

impl MeasureConfig {
    /// The session's settings, or the key and value refused.
    pub fn session(&self) -> Result<SessionConfig, ConfigError> {
        let cfg = SessionConfig {
            samples: self.samples,
            spacing: duration("measure.spacing", &self.spacing)?,
            period: duration("measure.period", &self.period)?,
            min_valid: self.samples.div_ceil(4).max(1),
            ..SessionConfig::default()
        };
        cfg.validate().map_err(|e| ConfigError::Unit {
            key: match e.field {
                "samples" => "measure.samples",
                "spacing" => "measure.spacing",
                _ => "measure.period",
            },
            value: e.value.clone(),
            reason: e.reason.to_string(),
        })?;
        Ok(cfg)
    }
}

/// The last measurement, for `relay show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WanDelayStatus {
    /// PE to PE and back, the round's minimum; `None` before the first round.
    pub round_trip_ns: Option<u64>,
    /// Half the round trip.
    pub one_way_ns: Option<u64>,
    /// The round's median round trip: the spread the minimum removed.
    pub median_ns: Option<u64>,
    /// Valid exchanges of the last round, of those sent.
    pub valid: u16,
    pub sent: u16,
    pub rounds_completed: u64,
    pub rounds_failed: u64,
    /// Measurement frames sent into the tunnel and taken out of it.
    pub frames_sent: u64,
    pub frames_received: u64,
    /// What times a frame's departure: the kernel's transmit stamp, or the
    /// relay's clock when the frame is queued.
    #[serde(default)]
    pub departure: Departure,
    /// Kernel transmit stamps received.
    #[serde(default)]
    pub tx_stamps: u64,
}

/// What times a measurement frame's departure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Departure {
    /// The relay's clock when the frame is queued for sending.
    #[default]
    Queued,
    /// The kernel's stamp when the driver takes the frame.
    Kernel,
}

impl Departure {
    /// How `relay show` says it.
    pub fn describe(self) -> &'static str {
        match self {
            Departure::Queued => "departures timed when queued",
            Departure::Kernel => "departures timed by the kernel",
        }
    }
}

/// One PE's measurement session and its last result.
#[derive(Debug, Clone)]
pub struct WanDelay {
    session: Session,
    /// When the first round starts (until then the session is idle).
    start_at: Option<Instant>,
    last: Option<Measurement>,
    frames_sent: u64,
    frames_received: u64,
    departure: Departure,
    tx_stamps: u64,
}

/// Picoseconds on the relay's clock, modulo 2^64.
fn ps(now: Instant) -> u64 {
    (now.since_epoch().as_nanos() as u64).wrapping_mul(1000)
}

fn ns(d: units::Duration) -> u64 {
    d.0 / 1000
}

impl WanDelay {
    /// A session sending from `mac`, its first round at `now`.
    pub fn new(cfg: &MeasureConfig, mac: MacAddr, now: Instant) -> Result<WanDelay, ConfigError> {
        let first_id = (now.since_epoch().as_nanos() & 0xffff) as u16;
        let session =
            Session::new(cfg.session()?, mac, first_id).map_err(|e| ConfigError::Unit {
                key: "measure",
                value: e.value.clone(),
                reason: e.reason.to_string(),
            })?;
        Ok(WanDelay {
            session,
            start_at: Some(now),
            last: None,
            frames_sent: 0,
            frames_received: 0,
            departure: Departure::Queued,
            tx_stamps: 0,
        })
    }

    /// Whether an inner frame is a measurement frame (EtherType 0x88B5).
    pub fn is_measurement(inner: &[u8]) -> bool {
        inner.get(12..14) == Some(&ETHERTYPE_MEASURE.to_be_bytes())
    }

    /// A measurement frame out of the tunnel, handled at `now`, received at
    /// `arrived` (no later than `now`).
    pub fn handle(&mut self, now: Instant, arrived: Instant, inner: &[u8]) {
        self.handle_timeout(now);
        self.frames_received += 1;
        self.session.handle_frame(now, inner, ps(arrived.min(now)));
        self.collect();
    }

    pub fn handle_timeout(&mut self, now: Instant) {
        if let Some(at) = self.start_at.filter(|at| *at <= now) {
            // The tunnel is the link, and both PEs run the exchange.
            self.session.set_link(at.max(now), true);
            self.session.set_agreed(at.max(now), true);
            self.start_at = None;
        }
        self.session.handle_timeout(now);
        self.collect();
    }

    pub fn poll_timeout(&self) -> Option<Instant> {
        self.start_at.or_else(|| self.session.poll_timeout())
    }

    /// Whether the runtime asks the kernel for each measurement frame's
    /// transmit time and hands it to [`WanDelay::handle_tx_stamp`]; until
    /// then (and when it cannot) a frame's departure is `now` when drained.
    pub fn set_kernel_tx_stamps(&mut self, on: bool) {
        self.departure = if on {
            Departure::Kernel
        } else {
            Departure::Queued
        };
    }

    /// Hands every frame due to `send` (to be put in the tunnel), with
    /// whether to ask the kernel for its transmit time; without kernel
    /// stamps each is taken as sent at `now`.
    pub fn drain(&mut self, now: Instant, mut send: impl FnMut(&[u8], bool)) {
        let kernel = self.departure == Departure::Kernel;
        while let Some(frame) = self.session.poll_transmit() {
            send(&frame, kernel);
            self.frames_sent += 1;
            if !kernel {
                self.session.handle_tx_timestamp(now, &frame, ps(now));
            }
        }
        self.collect();
    }

    /// The kernel's transmit time `sent` (no later than `now`) of a frame
    /// drained with a request for it (`inner`, the measurement frame as
    /// sent). An answer's stamp queues its follow-up: drain again.
    pub fn handle_tx_stamp(&mut self, now: Instant, inner: &[u8], sent: Instant) {
        self.tx_stamps += 1;
        self.session
            .handle_tx_timestamp(now, inner, ps(sent.min(now)));
        self.collect();
    }

    fn collect(&mut self) {
        while let Some(e) = self.session.poll_event() {
            if let MeasureEvent::Measured(m) = e {
                self.last = Some(m);
            }
        }
    }

    /// (one-way, round trip) of the last round, in the headroom model's units.
    pub fn measured(&self) -> Option<(units::Duration, units::Duration)> {
        self.last.map(|m| (m.one_way(), m.round_trip))
    }

    pub fn status(&self) -> WanDelayStatus {
        let s = self.session.stats();
        WanDelayStatus {
            round_trip_ns: self.last.map(|m| ns(m.round_trip)),
            one_way_ns: self.last.map(|m| ns(m.one_way())),
            median_ns: self.last.map(|m| ns(m.median)),
            valid: self.last.map_or(0, |m| m.valid),
            sent: self.last.map_or(0, |m| m.sent),
            rounds_completed: s.rounds_completed,
            rounds_failed: s.rounds_failed,
            frames_sent: self.frames_sent,
            frames_received: self.frames_received,
            departure: self.departure,
            tx_stamps: self.tx_stamps,
        }
    }
}

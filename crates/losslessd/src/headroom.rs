//! Adaptive PFC headroom on one port (seed 004): the measurement session, the line rate
//! it is sized at, the hysteresis, and what reached the NIC.
//!
//! The session runs whenever the port advertises the capability; it measures once the
//! peer advertises it too (the agent says so), on link up, on a speed change and every
//! `period`. Each result is sized (`X = speed x round trip`, `DV = X + 2 x MaxFrame +
//! PFCFrame`, `headroom = DV x alpha` in cells) and fed through the hysteresis; a
//! headroom that changes is programmed through dcbnl where the port applies to the NIC.

use lossless_dcbx::Instant;
use lossless_headroom::cells::Headroom;
use lossless_headroom::session::{MeasureEvent, MeasureStats, Measurement, Session};
use lossless_headroom::sizing::{need, Decision, Need, Sizer};
use lossless_headroom::units::Rate;
use lossless_sys::timestamp::Clocks;
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::config::{alpha_text, HeadroomSettings};

/// Where the line rate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SpeedSource {
    /// `headroom.speed` in the configuration.
    Config,
    /// The kernel (`/sys/class/net/IF/speed`).
    Kernel,
    /// Neither: nothing can be sized.
    Unknown,
}

/// What happened to the headroom on the NIC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum HeadroomHardware {
    /// `apply = "none"`: computed and reported only.
    ReportOnly,
    /// The port applies to the NIC, but it has no dcbnl: reported only.
    Unsupported { reason: String },
    /// Programmed: IEEE PFC delay allowance (bit times, saturated at 65,535).
    Applied {
        pfc_delay_bits: u16,
        saturated: bool,
    },
    /// The NIC refused.
    Error { error: String },
    /// Nothing to program yet.
    Pending,
}

/// One port's adaptive headroom.
#[derive(Debug)]
pub struct PortHeadroom {
    pub session: Session,
    pub settings: HeadroomSettings,
    sizer: Sizer,
    kernel_speed: Option<Rate>,
    pub clocks: Option<Clocks>,
    pub socket_error: Option<String>,
    last_need: Option<Need>,
    last_decision: Option<Decision>,
    pub hardware: HeadroomHardware,
    pub measured_at: Option<Instant>,
    pub measurements: u64,
    pub failures: u64,
    /// Received without a kernel timestamp, so not usable.
    pub frames_without_timestamp: u64,
}

/// A headroom to program, after the hysteresis said so.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    pub need: Need,
    pub decision: Decision,
}

impl PortHeadroom {
    pub fn new(settings: HeadroomSettings, mac: MacAddr, first_id: u16) -> Option<PortHeadroom> {
        let session = Session::new(settings.session(), mac, first_id).ok()?;
        Some(PortHeadroom {
            session,
            settings,
            sizer: Sizer::default(),
            kernel_speed: None,
            clocks: None,
            socket_error: None,
            last_need: None,
            last_decision: None,
            hardware: HeadroomHardware::Pending,
            measured_at: None,
            measurements: 0,
            failures: 0,
            frames_without_timestamp: 0,
        })
    }

    /// New settings (reload); a change of what the sizing depends on re-measures.
    pub fn set_settings(&mut self, now: Instant, settings: HeadroomSettings) {
        if settings == self.settings {
            return;
        }
        let _ = self.session.set_config(settings.session());
        self.settings = settings;
        self.sizer.reset();
        self.session.remeasure(now);
    }

    pub fn speed(&self) -> (Option<Rate>, SpeedSource) {
        match (self.settings.speed(), self.kernel_speed) {
            (Some(s), _) => (Some(s), SpeedSource::Config),
            (None, Some(s)) => (Some(s), SpeedSource::Kernel),
            (None, None) => (None, SpeedSource::Unknown),
        }
    }

    /// The kernel's line rate in Mb/s (None: unknown, e.g. link down). A change
    /// starts over: the old headroom was sized for another rate.
    pub fn set_kernel_speed(&mut self, now: Instant, mbps: Option<u64>) -> bool {
        let speed = mbps.map(|m| Rate(m.saturating_mul(1_000_000)));
        if speed == self.kernel_speed {
            return false;
        }
        let was = self.kernel_speed;
        self.kernel_speed = speed;
        if was.is_some() && speed.is_some() && self.settings.speed.is_none() {
            self.sizer.reset();
            self.session.remeasure(now);
            return true;
        }
        false
    }

    /// A session event: a result is sized and, if the hysteresis lets it, returned
    /// for programming.
    pub fn on_event(&mut self, now: Instant, ev: &MeasureEvent) -> Option<Change> {
        match ev {
            MeasureEvent::Measured(m) => {
                self.measurements += 1;
                self.measured_at = Some(now);
                let (speed, _) = self.speed();
                let sizing = self.settings.sizing();
                let n = need(&sizing, m.round_trip, speed?);
                let decision = self.sizer.update(&sizing, &n.headroom);
                self.last_need = Some(n);
                self.last_decision = Some(decision);
                decision.applies().then_some(Change { need: n, decision })
            }
            MeasureEvent::Failed { .. } => {
                self.failures += 1;
                None
            }
        }
    }

    /// The sizing of the last result.
    pub fn need(&self) -> Option<&Need> {
        self.last_need.as_ref()
    }

    pub fn applied(&self) -> Option<&Headroom> {
        self.sizer.applied()
    }

    pub fn view(&self, port: &str, now: Instant) -> PortHeadroomView {
        let (speed, speed_source) = self.speed();
        PortHeadroomView {
            port: port.to_string(),
            running: self.session.running(),
            measuring: self.session.measuring(),
            clocks: self.clocks,
            socket_error: self.socket_error.clone(),
            speed_bps: speed.map(|s| s.0),
            speed_source,
            alpha: alpha_text(self.settings.alpha),
            cell_bytes: self.settings.cell,
            max_frame_octets: self.settings.max_frame,
            last: self
                .session
                .last()
                .map(|m| LastMeasurement::new(m, self.measured_at, now)),
            need: self.last_need,
            decision: self.last_decision,
            applied: self.applied().copied(),
            hardware: self.hardware.clone(),
            next_round_in_s: self
                .session
                .next_round()
                .filter(|_| self.session.running())
                .map(|t| t.saturating_since(now).as_secs_f64()),
            measurements: self.measurements,
            failures: self.failures,
            frames_without_timestamp: self.frames_without_timestamp,
            frames: *self.session.stats(),
        }
    }
}

/// The last round, in the units people read.
#[derive(Debug, Clone, Serialize)]
pub struct LastMeasurement {
    pub round_trip_ns: f64,
    pub one_way_ns: f64,
    pub median_round_trip_ns: f64,
    pub valid: u16,
    pub sent: u16,
    pub hardware_timestamps: bool,
    pub took_ms: f64,
    pub age_s: Option<f64>,
}

impl LastMeasurement {
    fn new(m: &Measurement, at: Option<Instant>, now: Instant) -> Self {
        LastMeasurement {
            round_trip_ns: m.round_trip.0 as f64 / 1e3,
            one_way_ns: m.one_way().0 as f64 / 1e3,
            median_round_trip_ns: m.median.0 as f64 / 1e3,
            valid: m.valid,
            sent: m.sent,
            hardware_timestamps: m.hardware,
            took_ms: (m.finished - m.started).as_secs_f64() * 1e3,
            age_s: at.map(|t| (now - t).as_secs_f64()),
        }
    }
}

/// `lossless headroom show`: one port.
#[derive(Debug, Clone, Serialize)]
pub struct PortHeadroomView {
    pub port: String,
    /// Link up and both ends advertise the capability.
    pub running: bool,
    /// A round is open now.
    pub measuring: bool,
    pub clocks: Option<Clocks>,
    pub socket_error: Option<String>,
    pub speed_bps: Option<u64>,
    pub speed_source: SpeedSource,
    pub alpha: String,
    pub cell_bytes: u64,
    pub max_frame_octets: u64,
    pub last: Option<LastMeasurement>,
    /// The sizing of the last result, every term.
    pub need: Option<Need>,
    pub decision: Option<Decision>,
    /// What the hysteresis holds as the port's headroom.
    pub applied: Option<Headroom>,
    pub hardware: HeadroomHardware,
    pub next_round_in_s: Option<f64>,
    pub measurements: u64,
    pub failures: u64,
    pub frames_without_timestamp: u64,
    pub frames: MeasureStats,
}

/// The IEEE PFC delay allowance for a measured round trip: X in bit times, saturated
/// at the field's 65,535.
pub fn pfc_delay_bits(n: &Need) -> u16 {
    u16::try_from(n.x_bit_times).unwrap_or(u16::MAX)
}

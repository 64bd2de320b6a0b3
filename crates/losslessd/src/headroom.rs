//! Adaptive PFC headroom on one port (seed 004): the measurement session, the line rate
//! it is sized at, the hysteresis, and what reached the NIC.
//!
//! The session runs whenever the port advertises the capability; it measures once the
//! peer advertises it too (the agent says so), on link up, on a speed change and every
//! `period`. Each result is sized (`X = speed x round trip`, `DV = X + 2 x MaxFrame +
//! PFCFrame`, `headroom = DV x alpha` in cells) and fed through the hysteresis; a
//! headroom that changes is programmed through dcbnl where the port applies to the NIC:
//! the IEEE PFC delay allowance, then the DCB buffers that hold PFC priorities
//! ([`plan_buffer`]), where the driver exposes them.
//!
//! ## The DCB buffer
//!
//! The driver reports its receive buffers in `DCB_CMD_IEEE_GET` (`struct dcbnl_buffer`:
//! which buffer each priority goes to, the size of each, the port's total) only when it
//! has `dcbnl_getbuffer`; the kernel drops a buffer in `IEEE_SET` without a word when
//! the driver lacks `dcbnl_setbuffer`. So support is learned from IEEE_GET, and what
//! the driver took from reading it back after the set.
//!
//! Rules: the driver's `prio2buffer` is kept; every buffer holding a PFC-enabled
//! priority is made to hold at least the headroom (one headroom per buffer: whatever
//! the number of lossless priorities sharing it, what is in flight after a PAUSE is
//! bounded by the link's rate times its delay, which DV counts once); the others are
//! left alone; the total must fit `total_size`, or nothing is written. A buffer is
//! never made smaller than its *floor*: the size it had before this daemon sized it,
//! or that someone else (`dcb buffer set`, the driver) gave it since. Above the floor
//! it follows the headroom the hysteresis holds ([`lossless_headroom::sizing`]): it
//! grows at once and shrinks only when the hysteresis lets the headroom shrink (or a
//! speed change starts the sizing over).

use lossless_dcbx::Instant;
use lossless_headroom::cells::Headroom;
use lossless_headroom::session::{MeasureEvent, MeasureStats, Measurement, Session};
use lossless_headroom::sizing::{need, Decision, Need, Sizer};
use lossless_headroom::units::Rate;
use lossless_sys::dcbnl::{DcbBuffer, IeeeConfig, MAX_BUFFERS};
use lossless_sys::timestamp::Clocks;
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::config::{alpha_text, Apply, HeadroomSettings};
use crate::protocol::Hardware;

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

/// Why the driver's buffer is left alone when it exposes none.
pub const NO_BUFFER: &str = "driver exposes no DCB buffer: no DCB_ATTR_DCB_BUFFER in IEEE_GET";

/// What became of the NIC's DCB buffer (`DCB_ATTR_DCB_BUFFER`) for the headroom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum BufferState {
    /// Not to be programmed: `apply = "none"`, or `headroom.buffer = false`.
    Off { reason: String },
    /// Cannot be: the port has no dcbnl, or the driver exposes no buffer.
    Unsupported { reason: String },
    /// No headroom sized yet, or the driver's answers not in yet.
    Pending,
    /// Every buffer holding a PFC priority holds at least the headroom.
    Sized {
        headroom_bytes: u64,
        /// The buffers holding a PFC-enabled priority.
        lossless: Vec<u8>,
        /// The driver's buffers as read (after the write, when there was one).
        prio2buffer: [u8; 8],
        buffer_size: [u32; MAX_BUFFERS],
        total_size: u32,
        /// Below these sizes the daemon never goes (see the module documentation).
        floor: [u32; MAX_BUFFERS],
        /// A write was needed (false: the buffers already held enough).
        written: bool,
    },
    /// No PFC-enabled priority: no buffer to size.
    NoPfcPriority,
    /// The sizes do not fit the port's buffer: nothing written.
    DoesNotFit {
        headroom_bytes: u64,
        need_bytes: u64,
        total_size: u32,
        reason: String,
    },
    /// Reading or writing failed, or the driver did not take the sizes.
    Error { error: String },
}

impl BufferState {
    /// The state's name (as in the JSON) and, where the buffer was not sized, why.
    pub fn label(&self) -> (&'static str, String) {
        match self {
            BufferState::Off { reason } => ("off", reason.clone()),
            BufferState::Unsupported { reason } => ("unsupported", reason.clone()),
            BufferState::Pending => ("pending", String::new()),
            BufferState::Sized { .. } => ("sized", String::new()),
            BufferState::NoPfcPriority => (
                "no_pfc_priority",
                "no PFC-enabled priority: no buffer holds lossless traffic".into(),
            ),
            BufferState::DoesNotFit { reason, .. } => ("does_not_fit", reason.clone()),
            BufferState::Error { error } => ("error", error.clone()),
        }
    }
}

/// What to do with the driver's buffer, for one headroom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BufferPlan {
    /// Write this.
    Write(DcbBuffer),
    /// The buffers already hold what is wanted.
    Enough,
    /// No PFC-enabled priority.
    NoPfcPriority,
    /// The buffers would need `need` bytes of the port's `total`.
    DoesNotFit { need: u64, total: u32 },
}

/// The buffer sizes for `headroom` bytes per lossless buffer: each buffer holding a
/// priority of `pfc_enabled` gets `max(floor, headroom)`, the others keep their size,
/// `prio2buffer` is kept; the sum must fit `total_size` (0: the driver gives no total,
/// and the check is left to it).
pub fn plan_buffer(
    current: &DcbBuffer,
    floor: &[u32; MAX_BUFFERS],
    pfc_enabled: u8,
    headroom: u64,
) -> BufferPlan {
    let lossless = current.buffers_of(pfc_enabled);
    if lossless == 0 {
        return BufferPlan::NoPfcPriority;
    }
    let mut want = *current;
    let mut need: u64 = 0;
    for (b, size) in want.buffer_size.iter_mut().enumerate() {
        let wanted = if lossless & (1 << b) != 0 {
            headroom.max(u64::from(floor[b]))
        } else {
            u64::from(*size)
        };
        need = need.saturating_add(wanted);
        *size = u32::try_from(wanted).unwrap_or(u32::MAX);
    }
    let too_big = headroom > u64::from(u32::MAX);
    if too_big || (current.total_size != 0 && need > u64::from(current.total_size)) {
        return BufferPlan::DoesNotFit {
            need,
            total: current.total_size,
        };
    }
    if want == *current {
        BufferPlan::Enough
    } else {
        BufferPlan::Write(want)
    }
}

/// The buffer indices in a mask, ascending.
fn indices(mask: u8) -> Vec<u8> {
    (0..8).filter(|b| mask & (1 << b) != 0).collect()
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
    /// The sizing of the headroom the hysteresis holds.
    applied_need: Option<Need>,
    last_decision: Option<Decision>,
    pub hardware: HeadroomHardware,
    pub measured_at: Option<Instant>,
    pub measurements: u64,
    pub failures: u64,
    /// Received without a kernel timestamp, so not usable.
    pub frames_without_timestamp: u64,
    buffer: BufferState,
    /// Per buffer, the size below which the daemon never goes.
    buffer_floor: Option<[u32; MAX_BUFFERS]>,
    /// The sizes the driver reported after our last write.
    buffer_ours: Option<[u32; MAX_BUFFERS]>,
    /// The write waiting for its read-back, and the PFC priorities it was for.
    buffer_asked: Option<(DcbBuffer, u8)>,
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
            applied_need: None,
            last_decision: None,
            hardware: HeadroomHardware::Pending,
            measured_at: None,
            measurements: 0,
            failures: 0,
            frames_without_timestamp: 0,
            buffer: BufferState::Pending,
            buffer_floor: None,
            buffer_ours: None,
            buffer_asked: None,
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
        self.applied_need = None;
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
            self.applied_need = None;
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
                if decision.applies() {
                    self.applied_need = Some(n);
                }
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

    /// The sizing of the headroom the hysteresis holds (what is programmed).
    pub fn applied_need(&self) -> Option<&Need> {
        self.applied_need.as_ref()
    }

    pub fn applied(&self) -> Option<&Headroom> {
        self.sizer.applied()
    }

    /// The floor per buffer, updated from what the driver reports now: a buffer whose
    /// size is not what our last write left there was sized by someone else (or by us
    /// in an earlier life), and that size becomes its floor.
    fn observe(&mut self, current: &DcbBuffer) -> [u32; MAX_BUFFERS] {
        let mut floor = self.buffer_floor.unwrap_or(current.buffer_size);
        for (b, f) in floor.iter_mut().enumerate() {
            if self.buffer_ours.map(|o| o[b]) != Some(current.buffer_size[b]) {
                *f = current.buffer_size[b];
            }
        }
        self.buffer_floor = Some(floor);
        floor
    }

    /// The IEEE configuration read after programming the PFC delay (the buffer is
    /// configured and the port has dcbnl): sizes the buffer for the headroom held now.
    /// Returns the buffer to write, if one is needed; the state is final otherwise.
    pub fn buffer_read(
        &mut self,
        pfc_enabled: u8,
        ieee: Result<IeeeConfig, String>,
    ) -> Option<DcbBuffer> {
        self.buffer_asked = None;
        let current = match ieee {
            Err(e) => {
                self.buffer = BufferState::Error {
                    error: format!("DCB_CMD_IEEE_GET: {e}"),
                };
                return None;
            }
            Ok(IeeeConfig { buffer: None, .. }) => {
                self.buffer = BufferState::Unsupported {
                    reason: NO_BUFFER.into(),
                };
                return None;
            }
            Ok(IeeeConfig {
                buffer: Some(b), ..
            }) => b,
        };
        let Some(headroom) = self.applied().map(|h| h.bytes) else {
            self.buffer = BufferState::Pending;
            return None;
        };
        let floor = self.observe(&current);
        match plan_buffer(&current, &floor, pfc_enabled, headroom) {
            BufferPlan::Write(want) => {
                self.buffer_asked = Some((want, pfc_enabled));
                return Some(want);
            }
            BufferPlan::Enough => {
                self.buffer = sized(headroom, pfc_enabled, &current, floor, false);
            }
            BufferPlan::NoPfcPriority => self.buffer = BufferState::NoPfcPriority,
            BufferPlan::DoesNotFit { need, total } => {
                self.buffer = BufferState::DoesNotFit {
                    headroom_bytes: headroom,
                    need_bytes: need,
                    total_size: total,
                    reason: if headroom > u64::from(u32::MAX) {
                        format!("a headroom of {headroom} bytes is beyond a u32 buffer size")
                    } else {
                        format!(
                            "the buffers would need {need} bytes, the port has {total} \
                             (buffers without PFC priorities are not shrunk)"
                        )
                    },
                };
            }
        }
        None
    }

    /// The answer to writing the buffer: the driver's buffer read back (or why the
    /// write or the read failed). The driver took it when every lossless buffer holds
    /// at least what was asked.
    pub fn buffer_written(&mut self, readback: Result<IeeeConfig, String>) {
        let Some((asked, pfc_enabled)) = self.buffer_asked.take() else {
            return;
        };
        let headroom = self.applied().map_or(0, |h| h.bytes);
        let floor = self.buffer_floor.unwrap_or_default();
        self.buffer = match readback {
            Err(e) => BufferState::Error { error: e },
            Ok(IeeeConfig { buffer: None, .. }) => BufferState::Error {
                error: format!("after IEEE_SET of the buffer, {NO_BUFFER}"),
            },
            Ok(IeeeConfig {
                buffer: Some(got), ..
            }) => {
                self.buffer_ours = Some(got.buffer_size);
                let lossless = asked.buffers_of(pfc_enabled);
                let short = indices(lossless)
                    .into_iter()
                    .map(usize::from)
                    .find(|&b| got.buffer_size[b] < asked.buffer_size[b]);
                match short {
                    Some(b) => BufferState::Error {
                        error: format!(
                            "IEEE_SET asked for {} bytes in buffer {b}, the driver holds {} \
                             (it has no dcbnl_setbuffer, or rounds sizes down)",
                            asked.buffer_size[b], got.buffer_size[b]
                        ),
                    },
                    None if got.prio2buffer != asked.prio2buffer => BufferState::Error {
                        error: format!(
                            "the driver changed prio2buffer from {:?} to {:?}",
                            asked.prio2buffer, got.prio2buffer
                        ),
                    },
                    None => sized(headroom, pfc_enabled, &got, floor, true),
                }
            }
        };
    }

    /// The buffer's state as reported, given how the port applies (`apply`, the
    /// headroom's `buffer` setting, the dcbnl probe).
    pub fn buffer_state(&self, apply: Apply, hardware: &Hardware) -> BufferState {
        if apply == Apply::None {
            return BufferState::Off {
                reason: "apply = \"none\": the headroom is computed and reported, \
                         the NIC is not programmed"
                    .into(),
            };
        }
        if !self.settings.buffer {
            return BufferState::Off {
                reason: "headroom.buffer = false: the DCB buffer is left as the driver has it"
                    .into(),
            };
        }
        match hardware {
            Hardware::Unsupported { reason } => BufferState::Unsupported {
                reason: format!("no dcbnl on the port: {reason}"),
            },
            Hardware::Probing | Hardware::ReportOnly => BufferState::Pending,
            Hardware::Dcbnl { .. } => self.buffer.clone(),
        }
    }

    pub fn view(
        &self,
        port: &str,
        apply: Apply,
        hardware: &Hardware,
        now: Instant,
    ) -> PortHeadroomView {
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
            buffer: self.buffer_state(apply, hardware),
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
    /// What reached the hardware: the IEEE PFC delay allowance.
    pub hardware: HeadroomHardware,
    /// What became of the DCB buffer.
    pub buffer: BufferState,
    pub next_round_in_s: Option<f64>,
    pub measurements: u64,
    pub failures: u64,
    pub frames_without_timestamp: u64,
    pub frames: MeasureStats,
}

fn sized(
    headroom: u64,
    pfc_enabled: u8,
    b: &DcbBuffer,
    floor: [u32; MAX_BUFFERS],
    written: bool,
) -> BufferState {
    BufferState::Sized {
        headroom_bytes: headroom,
        lossless: indices(b.buffers_of(pfc_enabled)),
        prio2buffer: b.prio2buffer,
        buffer_size: b.buffer_size,
        total_size: b.total_size,
        floor,
        written,
    }
}

/// The IEEE PFC delay allowance for a measured round trip: X in bit times, saturated
/// at the field's 65,535.
pub fn pfc_delay_bits(n: &Need) -> u16 {
    u16::try_from(n.x_bit_times).unwrap_or(u16::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use lossless_headroom::units::Duration as Ps;

    /// Priorities 3 and 4 (PFC) in buffer 1, the rest in buffer 0; a 1 MiB port.
    const DRIVER: DcbBuffer = DcbBuffer {
        prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
        buffer_size: [262_144, 65_536, 0, 0, 0, 0, 0, 0],
        total_size: 1_048_576,
    };
    const PFC_3_4: u8 = 0b0001_1000;

    fn with_buffer(b: DcbBuffer) -> Result<IeeeConfig, String> {
        Ok(IeeeConfig {
            pfc: None,
            buffer: Some(b),
        })
    }

    /// A port sized at 100G from round trips given in microseconds.
    fn port() -> PortHeadroom {
        let settings = HeadroomSettings {
            speed: Some(100_000_000_000),
            ..HeadroomSettings::default()
        };
        PortHeadroom::new(settings, MacAddr([2, 0, 0, 0, 0, 1]), 1).unwrap()
    }

    fn measure(h: &mut PortHeadroom, rtt_us: u64) -> Option<Change> {
        let now = Instant::from_duration(std::time::Duration::from_secs(1));
        let m = Measurement {
            round_trip: Ps(rtt_us * 1_000_000),
            median: Ps(rtt_us * 1_000_000),
            valid: 32,
            sent: 32,
            hardware: false,
            session: 1,
            started: now,
            finished: now,
        };
        h.on_event(now, &MeasureEvent::Measured(m))
    }

    #[test]
    fn plan_grows_the_buffers_of_pfc_priorities_only() {
        let floor = DRIVER.buffer_size;
        let BufferPlan::Write(w) = plan_buffer(&DRIVER, &floor, PFC_3_4, 141_760) else {
            panic!("a 64 KiB lossless buffer is below 141,760 bytes")
        };
        assert_eq!(w.prio2buffer, DRIVER.prio2buffer);
        assert_eq!(w.buffer_size, [262_144, 141_760, 0, 0, 0, 0, 0, 0]);
        assert_eq!(w.total_size, DRIVER.total_size);
        // Never below the floor: a smaller headroom leaves the buffer as it was.
        assert_eq!(
            plan_buffer(&DRIVER, &floor, PFC_3_4, 1_000),
            BufferPlan::Enough
        );
        // PFC on priority 0 too: buffer 0 holds lossless traffic as well.
        let BufferPlan::Write(w) = plan_buffer(&DRIVER, &floor, 0b1001_1001, 300_000) else {
            panic!()
        };
        assert_eq!(w.buffer_size, [300_000, 300_000, 0, 0, 0, 0, 0, 0]);
        // No PFC priority, nothing to size.
        assert_eq!(
            plan_buffer(&DRIVER, &floor, 0, 141_760),
            BufferPlan::NoPfcPriority
        );
        // The total counts the buffers left alone.
        assert_eq!(
            plan_buffer(&DRIVER, &floor, PFC_3_4, 800_000),
            BufferPlan::DoesNotFit {
                need: 262_144 + 800_000,
                total: 1_048_576
            }
        );
        assert!(matches!(
            plan_buffer(&DRIVER, &floor, PFC_3_4, 786_432),
            BufferPlan::Write(_)
        ));
        // A driver that reports no total leaves the check to itself.
        let no_total = DcbBuffer {
            total_size: 0,
            ..DRIVER
        };
        assert!(matches!(
            plan_buffer(&no_total, &floor, PFC_3_4, 800_000),
            BufferPlan::Write(_)
        ));
        assert!(matches!(
            plan_buffer(&no_total, &floor, PFC_3_4, 1 << 33),
            BufferPlan::DoesNotFit { .. }
        ));
    }

    #[test]
    fn buffer_follows_the_hysteresis_above_its_floor() {
        let mut h = port();
        // 11 us at 100G: 886 cells of 160 bytes.
        let c = measure(&mut h, 11).unwrap();
        assert_eq!(c.need.headroom.bytes, 141_760);
        let want = h.buffer_read(PFC_3_4, with_buffer(DRIVER)).unwrap();
        assert_eq!(want.buffer_size[1], 141_760);
        h.buffer_written(with_buffer(want));
        let st = h.buffer_state(
            Apply::Dcbnl,
            &Hardware::Dcbnl {
                error: None,
                applied: 1,
            },
        );
        assert_eq!(
            st,
            BufferState::Sized {
                headroom_bytes: 141_760,
                lossless: vec![1],
                prio2buffer: DRIVER.prio2buffer,
                buffer_size: want.buffer_size,
                total_size: DRIVER.total_size,
                floor: DRIVER.buffer_size,
                written: true,
            }
        );
        // Jitter below: the hysteresis keeps the headroom, nothing to program.
        assert!(measure(&mut h, 10).is_none());
        // Longer: grows at once.
        measure(&mut h, 20).unwrap();
        let grown = h.buffer_read(PFC_3_4, with_buffer(want)).unwrap();
        assert!(grown.buffer_size[1] > 141_760);
        h.buffer_written(with_buffer(grown));
        // Much shorter, three rounds in a row: the hysteresis shrinks the headroom,
        // and the buffer with it, but not below the driver's 64 KiB.
        assert!(measure(&mut h, 2).is_none());
        assert!(measure(&mut h, 2).is_none());
        let c = measure(&mut h, 2).unwrap();
        assert_eq!(c.decision, Decision::Shrink);
        assert!(c.need.headroom.bytes < 65_536);
        let shrunk = h.buffer_read(PFC_3_4, with_buffer(grown)).unwrap();
        assert_eq!(shrunk.buffer_size[1], 65_536);
        h.buffer_written(with_buffer(shrunk));

        // Someone else resizes the buffer (`dcb buffer set`): its size is the new floor.
        let mut theirs = shrunk;
        theirs.buffer_size[1] = 100_000;
        measure(&mut h, 11).unwrap();
        let again = h.buffer_read(PFC_3_4, with_buffer(theirs)).unwrap();
        assert_eq!(again.buffer_size[1], 141_760);
        h.buffer_written(with_buffer(again));
        for _ in 0..3 {
            measure(&mut h, 2);
        }
        assert_eq!(
            h.buffer_read(PFC_3_4, with_buffer(again))
                .unwrap()
                .buffer_size[1],
            100_000
        );
    }

    #[test]
    fn every_reason_not_to_size_the_buffer_is_said() {
        let dcbnl = Hardware::Dcbnl {
            error: None,
            applied: 0,
        };
        let mut h = port();
        assert_eq!(h.buffer_state(Apply::Dcbnl, &dcbnl), BufferState::Pending);
        measure(&mut h, 11).unwrap();
        // A driver without dcbnl_getbuffer.
        assert!(h
            .buffer_read(
                PFC_3_4,
                Ok(IeeeConfig {
                    pfc: Some(Default::default()),
                    buffer: None
                })
            )
            .is_none());
        assert_eq!(
            h.buffer_state(Apply::Dcbnl, &dcbnl).label(),
            (
                "unsupported",
                "driver exposes no DCB buffer: no DCB_ATTR_DCB_BUFFER in IEEE_GET".into()
            )
        );
        // The other reasons come from the configuration and the probe.
        let (state, why) = h.buffer_state(Apply::None, &Hardware::ReportOnly).label();
        assert_eq!(state, "off");
        assert!(why.starts_with("apply = \"none\""), "{why}");
        let (state, why) = h
            .buffer_state(
                Apply::Dcbnl,
                &Hardware::Unsupported {
                    reason: "va: the driver does not support DCB netlink (EOPNOTSUPP)".into(),
                },
            )
            .label();
        assert_eq!(state, "unsupported");
        assert_eq!(
            why,
            "no dcbnl on the port: va: the driver does not support DCB netlink (EOPNOTSUPP)"
        );
        h.settings.buffer = false;
        let (state, why) = h.buffer_state(Apply::Dcbnl, &dcbnl).label();
        assert_eq!(state, "off");
        assert!(why.starts_with("headroom.buffer = false"), "{why}");
        h.settings.buffer = true;

        // No PFC priority; a read that failed; a port too small.
        assert!(h.buffer_read(0, with_buffer(DRIVER)).is_none());
        assert_eq!(
            h.buffer_state(Apply::Dcbnl, &dcbnl).label().0,
            "no_pfc_priority"
        );
        assert!(h.buffer_read(PFC_3_4, Err("timed out".into())).is_none());
        assert_eq!(
            h.buffer_state(Apply::Dcbnl, &dcbnl).label(),
            ("error", "DCB_CMD_IEEE_GET: timed out".into())
        );
        let small = DcbBuffer {
            total_size: 300_000,
            ..DRIVER
        };
        assert!(h.buffer_read(PFC_3_4, with_buffer(small)).is_none());
        let (state, why) = h.buffer_state(Apply::Dcbnl, &dcbnl).label();
        assert_eq!(state, "does_not_fit");
        assert_eq!(
            why,
            "the buffers would need 403904 bytes, the port has 300000 \
             (buffers without PFC priorities are not shrunk)"
        );

        // A driver that says yes and keeps its old sizes (no dcbnl_setbuffer).
        let want = h.buffer_read(PFC_3_4, with_buffer(DRIVER)).unwrap();
        h.buffer_written(with_buffer(DRIVER));
        assert_eq!(
            h.buffer_state(Apply::Dcbnl, &dcbnl).label(),
            (
                "error",
                format!(
                    "IEEE_SET asked for {} bytes in buffer 1, the driver holds 65536 \
                     (it has no dcbnl_setbuffer, or rounds sizes down)",
                    want.buffer_size[1]
                )
            )
        );
    }
}

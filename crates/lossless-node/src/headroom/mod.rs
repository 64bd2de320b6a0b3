//! Adaptive PFC headroom on one port, as the Adaptive PFC Headroom proposal (Lily Lv,
//! Huawei) describes it: the measurement session, the line rate it is sized at, the
//! hysteresis, and what reached the NIC.
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

use crate::hardware::{DcbBuffer, HardwareError, IeeeReadback, MAX_BUFFERS};

mod buffer;

use crate::timestamps::Clocks;
use buffer::{indices, sized};
pub use buffer::{plan_buffer, BufferPlan, BufferState, NO_BUFFER};
use lossless_dcbx::Instant;
use lossless_headroom::cells::Headroom;
use lossless_headroom::session::{MeasureEvent, Measurement, Session};
use lossless_headroom::sizing::{need, Decision, Need, Sizer};
use lossless_headroom::units::Rate;
use lossless_wire::MacAddr;

use crate::config::{alpha_text, Apply, HeadroomSettings};
use crate::protocol::Hardware;

pub use lossless_proto::headroom::{
    HeadroomHardware, HeadroomOff, HeadroomShow, LastMeasurement, PortHeadroomView, SpeedSource,
};

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
        ieee: Result<IeeeReadback, HardwareError>,
    ) -> Option<DcbBuffer> {
        self.buffer_asked = None;
        let current = match ieee {
            Err(e) => {
                // The runtime's message names the command and the interface.
                self.buffer = BufferState::Error {
                    error: e.to_string(),
                };
                return None;
            }
            Ok(IeeeReadback { buffer: None, .. }) => {
                self.buffer = BufferState::Unsupported {
                    reason: NO_BUFFER.into(),
                };
                return None;
            }
            Ok(IeeeReadback {
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
    pub fn buffer_written(&mut self, readback: Result<IeeeReadback, HardwareError>) {
        let Some((asked, pfc_enabled)) = self.buffer_asked.take() else {
            return;
        };
        let headroom = self.applied().map_or(0, |h| h.bytes);
        let floor = self.buffer_floor.unwrap_or_default();
        self.buffer = match readback {
            Err(e) => BufferState::Error {
                error: e.to_string(),
            },
            Ok(IeeeReadback { buffer: None, .. }) => BufferState::Error {
                error: format!("after IEEE_SET of the buffer, {NO_BUFFER}"),
            },
            Ok(IeeeReadback {
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
                .map(|m| last_measurement(m, self.measured_at, now)),
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

/// The last round as `headroom show` gives it.
fn last_measurement(m: &Measurement, at: Option<Instant>, now: Instant) -> LastMeasurement {
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

    fn with_buffer(b: DcbBuffer) -> Result<IeeeReadback, HardwareError> {
        Ok(IeeeReadback {
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
                Ok(IeeeReadback {
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
        assert!(h
            .buffer_read(
                PFC_3_4,
                Err(HardwareError::new(
                    crate::hardware::HardwareErrorKind::Timeout,
                    "va: DCB_CMD_IEEE_GET: no reply within 1 s"
                ))
            )
            .is_none());
        assert_eq!(
            h.buffer_state(Apply::Dcbnl, &dcbnl).label(),
            ("error", "va: DCB_CMD_IEEE_GET: no reply within 1 s".into())
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

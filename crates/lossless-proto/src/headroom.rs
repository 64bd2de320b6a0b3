//! `headroom show`: per port, the last link-delay measurement, its sizing, the headroom
//! the hysteresis holds and what reached the NIC (the IEEE PFC delay allowance, the DCB
//! buffers), or why the port does not measure.
//!
//! The node (`lossless-node`'s `headroom` module) measures, sizes and builds these; the
//! sizing terms are `lossless-headroom`'s own types.

use lossless_headroom::cells::Headroom;
use lossless_headroom::session::MeasureStats;
use lossless_headroom::sizing::{Decision, Need};
use serde::{Deserialize, Serialize};

/// Receive buffers a port may have (`DCBX_MAX_BUFFERS`).
pub const MAX_BUFFERS: usize = 8;

/// Where the line rate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// The last round, in the units people read.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// `lossless headroom show`: one port.
#[derive(Debug, Clone, Serialize, Deserialize)]
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

/// `lossless headroom show`: one port, measuring or with `headroom.measure` off.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HeadroomShow {
    Off(HeadroomOff),
    On(Box<PortHeadroomView>),
}

/// A port that does not measure: `{"port":..,"off":true,"reason":..}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeadroomOff {
    pub port: String,
    pub off: bool,
    pub reason: String,
}

/// What became of the NIC's DCB buffer (`DCB_ATTR_DCB_BUFFER`) for the headroom.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// Where a timestamp is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// The NIC's PTP hardware clock, at the MAC.
    Hardware,
    /// The kernel, `CLOCK_REALTIME`, in the network stack and driver.
    Software,
    /// The caller, `CLOCK_REALTIME`, right after `send` (transmit only).
    Userspace,
}

/// The clocks in use on a measurement socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clocks {
    pub rx: Clock,
    pub tx: Clock,
}

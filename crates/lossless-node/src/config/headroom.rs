//! `[ports."NAME".headroom]`: adaptive PFC headroom on a port, as the Adaptive PFC
//! Headroom proposal (Lily Lv, Huawei) describes it.
//!
//! ```toml
//! [ports."eth0".headroom]
//! measure = true          # advertise the capability in DCBX and measure the link
//! alpha = "1.25"          # headroom = DV x alpha, rounded up to the cell
//! cell = 160              # buffer cell size, bytes
//! speed = "100G"          # the line rate; default: the kernel's (sysfs speed)
//! max_frame = 2000        # largest frame the peer sends, octets (the DV's MaxFrame)
//! timestamps = "auto"     # "auto" (hardware where the NIC has it), "software", "hardware"
//! samples = 32            # exchanges per measurement round
//! period = 60             # seconds between rounds
//! buffer = true           # with apply = "dcbnl": size the NIC's DCB buffers too
//! ```
//!
//! Every value is checked as it is read, so a refusal names its key and position.

use crate::timestamps::TimestampMode;
use lossless_headroom::cells::{Alpha, DEFAULT_CELL};
use lossless_headroom::session::SessionConfig;
use lossless_headroom::sizing::SizingConfig;
use lossless_headroom::units::{parse_rate, Bytes, FrameSize, Rate};

use super::error::Fault;
use super::read::{quoted, Field};

pub(crate) const HEADROOM_KEYS: &[&str] = &[
    "measure",
    "alpha",
    "cell",
    "speed",
    "max_frame",
    "timestamps",
    "samples",
    "period",
    "buffer",
];

/// The effective headroom settings of a port (`measure` lives in
/// `DcbxConfig::headroom_measurement`, which the agent advertises).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HeadroomSettings {
    pub alpha: Alpha,
    /// Cell size, bytes (1..=65536).
    pub cell: u64,
    /// Line rate override, bit/s; `None`: the kernel's.
    pub speed: Option<u64>,
    /// Largest frame, octets (64..=16384).
    pub max_frame: u64,
    pub timestamps: TimestampMode,
    /// Exchanges per round (1..=33: with the peer's answers, at most 99 frames per port).
    pub samples: u16,
    /// Seconds between rounds (1..=86400).
    pub period: u32,
    /// With `apply = "dcbnl"`: grow the DCB buffers (`DCB_ATTR_DCB_BUFFER`) that
    /// hold PFC priorities to the headroom, where the driver exposes them.
    pub buffer: bool,
}

impl Default for HeadroomSettings {
    fn default() -> Self {
        HeadroomSettings {
            alpha: Alpha::ONE,
            cell: DEFAULT_CELL.0,
            speed: None,
            max_frame: 2000,
            timestamps: TimestampMode::Auto,
            samples: SessionConfig::default().samples,
            period: 60,
            buffer: true,
        }
    }
}

impl HeadroomSettings {
    pub fn session(&self) -> SessionConfig {
        SessionConfig {
            samples: self.samples,
            min_valid: self.samples.div_ceil(4),
            period: std::time::Duration::from_secs(self.period.into()),
            ..SessionConfig::default()
        }
    }

    pub fn sizing(&self) -> SizingConfig {
        SizingConfig {
            alpha: self.alpha,
            cell: Bytes(self.cell),
            max_frame: FrameSize::Octets(self.max_frame),
            ..SizingConfig::default()
        }
    }

    pub fn speed(&self) -> Option<Rate> {
        self.speed.map(Rate)
    }
}

/// Which key of the section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadroomKey {
    Measure,
    Alpha,
    Cell,
    Speed,
    MaxFrame,
    Timestamps,
    Samples,
    Period,
    Buffer,
}

/// One key with its (checked) value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadroomSetting {
    Measure(bool),
    Alpha(Alpha),
    Cell(u64),
    Speed(u64),
    MaxFrame(u64),
    Timestamps(TimestampMode),
    Samples(u16),
    Period(u32),
    Buffer(bool),
}

impl HeadroomSetting {
    pub fn key(&self) -> HeadroomKey {
        match self {
            HeadroomSetting::Measure(_) => HeadroomKey::Measure,
            HeadroomSetting::Alpha(_) => HeadroomKey::Alpha,
            HeadroomSetting::Cell(_) => HeadroomKey::Cell,
            HeadroomSetting::Speed(_) => HeadroomKey::Speed,
            HeadroomSetting::MaxFrame(_) => HeadroomKey::MaxFrame,
            HeadroomSetting::Timestamps(_) => HeadroomKey::Timestamps,
            HeadroomSetting::Samples(_) => HeadroomKey::Samples,
            HeadroomSetting::Period(_) => HeadroomKey::Period,
            HeadroomSetting::Buffer(_) => HeadroomKey::Buffer,
        }
    }

    pub fn apply(&self, s: &mut super::PortSettings) {
        let h = &mut s.headroom;
        match *self {
            HeadroomSetting::Measure(v) => s.dcbx.headroom_measurement = v,
            HeadroomSetting::Alpha(v) => h.alpha = v,
            HeadroomSetting::Cell(v) => h.cell = v,
            HeadroomSetting::Speed(v) => h.speed = Some(v),
            HeadroomSetting::MaxFrame(v) => h.max_frame = v,
            HeadroomSetting::Timestamps(v) => h.timestamps = v,
            HeadroomSetting::Samples(v) => h.samples = v,
            HeadroomSetting::Period(v) => h.period = v,
            HeadroomSetting::Buffer(v) => h.buffer = v,
        }
    }

    /// Reads one key of the section.
    pub fn read(f: &Field) -> Result<HeadroomSetting, Fault> {
        let range = |lo: u64, hi: u64| -> Result<u64, Fault> {
            let v = f.uint(hi)?;
            if v < lo {
                return Err(f.fault(format!("{v} is below the minimum {lo}")));
            }
            Ok(v)
        };
        Ok(match f.name {
            "measure" => HeadroomSetting::Measure(f.bool()?),
            "alpha" => {
                let text = match (f.str(), f.int()) {
                    (Ok(s), _) => s.to_string(),
                    (_, Ok(i)) => i.to_string(),
                    _ => return Err(f.fault("expected a factor such as \"1.25\" or 1")),
                };
                HeadroomSetting::Alpha(Alpha::parse(&text).map_err(|e| f.fault(e.to_string()))?)
            }
            "cell" => HeadroomSetting::Cell(range(1, 65_536)?),
            "speed" => {
                let rate = parse_rate(f.str()?).map_err(|e| f.fault(e.to_string()))?;
                if rate.0 < 1_000_000 || rate.0 > 1_600_000_000_000 {
                    return Err(f.fault(format!("{} bit/s is outside 1M..1600G", rate.0)));
                }
                HeadroomSetting::Speed(rate.0)
            }
            "max_frame" => HeadroomSetting::MaxFrame(range(64, 16_384)?),
            "timestamps" => {
                let s = f.str()?;
                HeadroomSetting::Timestamps(match s {
                    "auto" => TimestampMode::Auto,
                    "software" => TimestampMode::Software,
                    "hardware" => TimestampMode::Hardware,
                    _ => {
                        return Err(f.fault(format!(
                            "{} is not \"auto\", \"software\" or \"hardware\"",
                            quoted(s)
                        )))
                    }
                })
            }
            "samples" => HeadroomSetting::Samples(
                // 33 requests and the answers to the peer's 33: 99 frames per port.
                u16::try_from(range(1, 33)?).unwrap_or(33),
            ),
            "period" => HeadroomSetting::Period(u32::try_from(range(1, 86_400)?).unwrap_or(86_400)),
            "buffer" => HeadroomSetting::Buffer(f.bool()?),
            _ => return Err(f.unknown(HEADROOM_KEYS)),
        })
    }
}

/// The section's keys as `headroom.KEY = value` lines.
pub(crate) fn render(measure: bool, h: &HeadroomSettings, line: &mut impl FnMut(&str, String)) {
    line("headroom.measure", measure.to_string());
    line("headroom.alpha", quoted(&alpha_text(h.alpha)));
    line("headroom.cell", h.cell.to_string());
    if let Some(s) = h.speed {
        line("headroom.speed", quoted(&format!("{s}b/s")));
    }
    line("headroom.max_frame", h.max_frame.to_string());
    let ts = match h.timestamps {
        TimestampMode::Auto => "auto",
        TimestampMode::Software => "software",
        TimestampMode::Hardware => "hardware",
    };
    line("headroom.timestamps", quoted(ts));
    line("headroom.samples", h.samples.to_string());
    line("headroom.period", h.period.to_string());
    line("headroom.buffer", h.buffer.to_string());
}

/// `1.25` for 1,250,000 ppm; `1` for one.
pub fn alpha_text(a: Alpha) -> String {
    let (int, frac) = (a.0 / 1_000_000, a.0 % 1_000_000);
    if frac == 0 {
        return int.to_string();
    }
    let f = format!("{frac:06}");
    format!("{int}.{}", f.trim_end_matches('0'))
}

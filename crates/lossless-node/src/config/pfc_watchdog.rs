//! `[ports."NAME".pfc_watchdog]`: the PFC storm watchdog of a port (off by default).
//!
//! ```toml
//! [ports."eth0".pfc_watchdog]
//! enabled = true
//! detection_ms = 200      # pauses on every reading for this long: a storm (100..=5000)
//! restoration_ms = 200    # no pause either way for this long: over (100..=60000)
//! action = "alert"        # "alert" (event, metric, log) or "forward" (PFC off on it)
//! priorities = [3]        # default: the port's PFC priorities (configured or negotiated)
//! interval_ms = 200       # how often the counters are read (50..=5000)
//! ```
//!
//! Each key has one rule ([`PfcWatchdogSetting::check`]), used by the file reader and
//! by anything else that takes the same key, so a refusal reads the same everywhere.

use lossless_wire::cee::PriorityMap;

use super::error::Fault;
use super::read::{quoted, Field};
use super::setting_error::SettingError;

pub(crate) const PFC_WATCHDOG_KEYS: &[&str] = &[
    "enabled",
    "detection_ms",
    "restoration_ms",
    "action",
    "priorities",
    "interval_ms",
];

/// The allowed detection times, milliseconds.
pub const DETECTION_MS: (u32, u32) = (100, 5000);
/// The allowed restoration times, milliseconds.
pub const RESTORATION_MS: (u32, u32) = (100, 60_000);
/// The allowed reading intervals, milliseconds.
pub const INTERVAL_MS: (u32, u32) = (50, 5000);

pub use lossless_proto::pfc::WatchdogAction;

/// The effective watchdog settings of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcWatchdogSettings {
    pub enabled: bool,
    pub detection_ms: u32,
    pub restoration_ms: u32,
    pub action: WatchdogAction,
    /// The priorities watched (and the only ones `forward` ever touches); None: the
    /// port's PFC priorities, configured (`pfc.priorities`) or negotiated.
    pub priorities: Option<PriorityMap>,
    /// How often the counters are read, milliseconds (also when the watchdog is off:
    /// `lossless pfc show` and the metrics use them).
    pub interval_ms: u32,
}

impl Default for PfcWatchdogSettings {
    fn default() -> Self {
        PfcWatchdogSettings {
            enabled: false,
            detection_ms: 200,
            restoration_ms: 200,
            action: WatchdogAction::Alert,
            priorities: None,
            interval_ms: 200,
        }
    }
}

/// A value as it was written, for [`PfcWatchdogSetting::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawValue {
    Bool(bool),
    Int(i64),
    Str(String),
    List(Vec<i64>),
}

impl RawValue {
    /// The value of a key of the file, as written: a boolean, an integer, a string or
    /// a list of integers.
    pub(crate) fn read(f: &Field) -> Result<RawValue, Fault> {
        Ok(if let Ok(b) = f.bool() {
            RawValue::Bool(b)
        } else if let Ok(i) = f.int() {
            RawValue::Int(i)
        } else if let Ok(s) = f.str() {
            RawValue::Str(s.to_string())
        } else if let Ok(elements) = f.elements() {
            let mut list = Vec::new();
            for e in elements {
                list.push(e.int()?);
            }
            RawValue::List(list)
        } else {
            return Err(f.fault(format!("unexpected {}", f.kind())));
        })
    }
}

/// One key with its checked value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PfcWatchdogSetting {
    Enabled(bool),
    DetectionMs(u32),
    RestorationMs(u32),
    Action(WatchdogAction),
    Priorities(PriorityMap),
    IntervalMs(u32),
}

impl PfcWatchdogSetting {
    /// The one rule for a key of the section: its type and range. The error says why
    /// (the caller adds where).
    pub fn check(key: &str, value: &RawValue) -> Result<PfcWatchdogSetting, SettingError> {
        let ms = |(lo, hi): (u32, u32)| -> Result<u32, SettingError> {
            match value {
                RawValue::Int(v) if (i64::from(lo)..=i64::from(hi)).contains(v) => {
                    Ok(u32::try_from(*v).unwrap_or(hi))
                }
                RawValue::Int(v) => Err(SettingError::MsOutOfRange { value: *v, lo, hi }),
                _ => Err(SettingError::NotMs { lo, hi }),
            }
        };
        const ACTIONS: &str = "\"alert\" or \"forward\"";
        Ok(match key {
            "enabled" => match value {
                RawValue::Bool(b) => PfcWatchdogSetting::Enabled(*b),
                _ => return Err(SettingError::NotBoolean),
            },
            "detection_ms" => PfcWatchdogSetting::DetectionMs(ms(DETECTION_MS)?),
            "restoration_ms" => PfcWatchdogSetting::RestorationMs(ms(RESTORATION_MS)?),
            "interval_ms" => PfcWatchdogSetting::IntervalMs(ms(INTERVAL_MS)?),
            "action" => match value {
                RawValue::Str(s) if s == "alert" => {
                    PfcWatchdogSetting::Action(WatchdogAction::Alert)
                }
                RawValue::Str(s) if s == "forward" => {
                    PfcWatchdogSetting::Action(WatchdogAction::Forward)
                }
                RawValue::Str(s) => {
                    return Err(SettingError::UnknownWord {
                        what: "action",
                        given: quoted(s),
                        expected: ACTIONS,
                    })
                }
                _ => return Err(SettingError::NotWord { expected: ACTIONS }),
            },
            "priorities" => match value {
                RawValue::List(l) => {
                    let mut map = PriorityMap::NONE;
                    for p in l {
                        super::priorities::add_priority(&mut map, *p)?;
                    }
                    PfcWatchdogSetting::Priorities(map)
                }
                _ => return Err(SettingError::NotPriorities { hint: "" }),
            },
            _ => {
                return Err(SettingError::UnknownKey {
                    key: key.to_string(),
                    keys: PFC_WATCHDOG_KEYS,
                })
            }
        })
    }

    /// Reads one key of the section from the file, through [`Self::check`].
    pub(crate) fn read(f: &Field) -> Result<PfcWatchdogSetting, Fault> {
        if !PFC_WATCHDOG_KEYS.contains(&f.name) {
            return Err(f.unknown(PFC_WATCHDOG_KEYS));
        }
        let raw = RawValue::read(f)?;
        PfcWatchdogSetting::check(f.name, &raw).map_err(|reason| f.fault(reason.to_string()))
    }

    pub fn key(&self) -> &'static str {
        match self {
            PfcWatchdogSetting::Enabled(_) => "enabled",
            PfcWatchdogSetting::DetectionMs(_) => "detection_ms",
            PfcWatchdogSetting::RestorationMs(_) => "restoration_ms",
            PfcWatchdogSetting::Action(_) => "action",
            PfcWatchdogSetting::Priorities(_) => "priorities",
            PfcWatchdogSetting::IntervalMs(_) => "interval_ms",
        }
    }

    pub fn apply(&self, s: &mut PfcWatchdogSettings) {
        match *self {
            PfcWatchdogSetting::Enabled(v) => s.enabled = v,
            PfcWatchdogSetting::DetectionMs(v) => s.detection_ms = v,
            PfcWatchdogSetting::RestorationMs(v) => s.restoration_ms = v,
            PfcWatchdogSetting::Action(v) => s.action = v,
            PfcWatchdogSetting::Priorities(v) => s.priorities = Some(v),
            PfcWatchdogSetting::IntervalMs(v) => s.interval_ms = v,
        }
    }
}

/// The section's keys as `pfc_watchdog.KEY = value` lines.
pub(crate) fn render(w: &PfcWatchdogSettings, line: &mut impl FnMut(&str, String)) {
    line("pfc_watchdog.enabled", w.enabled.to_string());
    line("pfc_watchdog.detection_ms", w.detection_ms.to_string());
    line("pfc_watchdog.restoration_ms", w.restoration_ms.to_string());
    line("pfc_watchdog.action", quoted(w.action.name()));
    if let Some(p) = w.priorities {
        let list: Vec<String> = p.priorities().map(|p| p.to_string()).collect();
        line("pfc_watchdog.priorities", format!("[{}]", list.join(", ")));
    }
    line("pfc_watchdog.interval_ms", w.interval_ms.to_string());
}

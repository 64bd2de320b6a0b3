//! What losslessd keeps across restarts and crashes: runtime changes (`lossless dcbx set`)
//! and the boot counter, and their on-disk form (`state.json`).
//!
//! The node core only encodes and decodes; writing the file atomically is the runtime's
//! (losslessd's state directory).
//!
//! ```json
//! {
//!   "version": 1,
//!   "boots": 3,
//!   "ports": { "eth0": { "pfc": { "enable": true, "willing": false, "advertise": true,
//!                                 "cfg": { "priorities": [3], "num_tcs": 8 } },
//!                        "pfc_mbc": false, "mode": "ieee" } }
//! }
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lossless_dcbx::ieee::EtsAdmin;
use lossless_dcbx::{DcbxMode, FeatureAdmin};
use lossless_wire::cee::{InvalidValue, PfcConfig, PgConfig};
use serde::{Deserialize, Serialize};

use crate::config::{AppRules, PortSettings, RoceSettings};
use lossless_proto::{FeatureName, Source, Sources};

/// The layout of `state.json` this node reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Everything persisted.
#[derive(Default, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersistedState {
    /// How many times the daemon has started (it increments this at start).
    pub boots: u32,
    /// Runtime changes per interface name.
    #[serde(default)]
    pub ports: BTreeMap<String, PortOverrides>,
}

/// What `lossless dcbx set` changed on one port, over its configured settings.
#[derive(Default, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcbx_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg: Option<FeatureAdmin<PgConfig>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<FeatureAdmin<PfcConfig>>,
    /// The APP flags and rules (older files hold the CEE table, which reads as rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<FeatureAdmin<AppRules>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ets: Option<FeatureAdmin<EtsAdmin>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<DcbxMode>,
    /// IEEE 802.1Qaz PFC's MACsec bypass bit (the rest of PFC is `pfc`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc_mbc: Option<bool>,
    /// The RoCE host settings `lossless roce set` gave (each set key over the file's).
    #[serde(default, skip_serializing_if = "RoceSettings::is_empty")]
    pub roce: RoceSettings,
}

impl PortOverrides {
    /// Puts every override over `s`.
    pub fn apply(&self, s: &mut PortSettings) {
        let d = &mut s.dcbx;
        if let Some(v) = self.dcbx_enabled {
            d.enabled = v;
        }
        if let Some(v) = &self.pg {
            d.pg = v.clone();
        }
        if let Some(v) = &self.pfc {
            d.pfc = v.clone();
        }
        if let Some(v) = &self.ets {
            d.ieee.ets = v.clone();
        }
        if let Some(v) = self.mode {
            d.mode = v;
        }
        if let Some(v) = self.pfc_mbc {
            d.ieee.pfc_mbc = v;
        }
        if let Some(v) = &self.app {
            d.app.enable = v.enable;
            d.app.willing = v.willing;
            d.app.advertise = v.advertise;
            s.set_app(v.cfg.clone());
        }
        self.roce.overlay(&mut s.roce);
    }

    /// True when nothing is overridden.
    pub fn is_empty(&self) -> bool {
        self.dcbx_enabled.is_none()
            && self.pg.is_none()
            && self.pfc.is_none()
            && self.app.is_none()
            && self.ets.is_none()
            && self.mode.is_none()
            && self.pfc_mbc.is_none()
            && self.roce.is_empty()
    }

    /// Drops the overrides of `feature` (every one when None): the file's values run
    /// again. True when something was dropped.
    pub fn reset(&mut self, feature: Option<FeatureName>) -> bool {
        let before = self.clone();
        match feature {
            None => *self = PortOverrides::default(),
            Some(FeatureName::Pg) => self.pg = None,
            Some(FeatureName::Pfc) => {
                self.pfc = None;
                self.pfc_mbc = None;
            }
            Some(FeatureName::App) => self.app = None,
            Some(FeatureName::Ets) => self.ets = None,
            Some(FeatureName::Mode) => self.mode = None,
        }
        *self != before
    }

    /// Where each setting comes from: "runtime" where an override replaces the file's.
    pub fn sources(&self) -> Sources {
        let src = |set: bool| if set { Source::Runtime } else { Source::Config };
        Sources {
            pg: src(self.pg.is_some()),
            pfc: src(self.pfc.is_some() || self.pfc_mbc.is_some()),
            app: src(self.app.is_some()),
            ets: src(self.ets.is_some()),
            mode: src(self.mode.is_some()),
        }
    }

    /// The values a valid configuration holds (the same checks as `PortConfig::validate`).
    fn validate(&self) -> Result<(), (&'static str, String)> {
        let text = |feature, e: InvalidValue| (feature, e.to_string());
        if let Some(f) = &self.pg {
            f.cfg.validate().map_err(|e| text("pg", e))?;
        }
        if let Some(f) = &self.pfc {
            f.cfg.validate().map_err(|e| text("pfc", e))?;
        }
        if let Some(f) = &self.app {
            f.cfg.validate().map_err(|e| ("app", e.to_string()))?;
        }
        if let Some(f) = &self.ets {
            f.cfg.validate().map_err(|e| text("ets", e))?;
        }
        self.roce.validate().map_err(|e| ("roce", e.to_string()))?;
        Ok(())
    }
}

/// Why a state file's content was refused. Each names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Not JSON, or not the layout of [`PersistedState`].
    #[error("{}:{line}:{column}: corrupt state file: {reason}", path.display())]
    Corrupt {
        path: PathBuf,
        line: usize,
        column: usize,
        reason: String,
    },
    /// Written by a losslessd with another layout.
    #[error(
        "{}: state file format version {found} is not supported (this losslessd reads version {})",
        path.display(),
        FORMAT_VERSION
    )]
    Version { path: PathBuf, found: u64 },
    /// Well formed, but holding a value no configuration may have.
    #[error("{}: ports.{port:?}.{feature}: {reason}", path.display())]
    Invalid {
        path: PathBuf,
        port: String,
        feature: &'static str,
        reason: String,
    },
}

/// The on-disk form: the state with its format version first.
#[derive(Serialize)]
struct OnDiskRef<'a> {
    version: u32,
    boots: u32,
    ports: &'a BTreeMap<String, PortOverrides>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OnDisk {
    #[allow(dead_code)]
    version: u64,
    boots: u32,
    #[serde(default)]
    ports: BTreeMap<String, PortOverrides>,
}

/// Only the version, read first so that a newer layout is named as such.
#[derive(Deserialize)]
struct Probe {
    version: u64,
}

impl PersistedState {
    /// The file's content: pretty JSON with the format version first, one trailing newline.
    pub fn encode(&self) -> Vec<u8> {
        let mut json = serde_json::to_vec_pretty(&OnDiskRef {
            version: FORMAT_VERSION,
            boots: self.boots,
            ports: &self.ports,
        })
        // Only maps with string keys and plain values: serialising cannot fail.
        .unwrap_or_default();
        json.push(b'\n');
        json
    }

    /// Reads a state file's content; `origin` is the file errors name. Anything that is
    /// not a complete, valid state file is an error saying where and why.
    pub fn decode(text: &[u8], origin: &Path) -> Result<PersistedState, StateError> {
        let path = origin.to_path_buf();
        let corrupt = |e: serde_json::Error| {
            let suffix = format!(" at line {} column {}", e.line(), e.column());
            let message = e.to_string();
            StateError::Corrupt {
                path: path.clone(),
                line: e.line(),
                column: e.column(),
                reason: message
                    .strip_suffix(&suffix)
                    .unwrap_or(&message)
                    .to_string(),
            }
        };
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(StateError::Corrupt {
                path: path.clone(),
                line: 1,
                column: 1,
                reason: "the file is empty".into(),
            });
        }
        let probe: Probe = serde_json::from_slice(text).map_err(corrupt)?;
        if probe.version != u64::from(FORMAT_VERSION) {
            return Err(StateError::Version {
                path,
                found: probe.version,
            });
        }
        let disk: OnDisk = serde_json::from_slice(text).map_err(corrupt)?;
        for (port, o) in &disk.ports {
            o.validate()
                .map_err(|(feature, reason)| StateError::Invalid {
                    path: path.clone(),
                    port: port.clone(),
                    feature,
                    reason,
                })?;
        }
        Ok(PersistedState {
            boots: disk.boots,
            ports: disk.ports,
        })
    }
}

pub use lossless_proto::status::{StateDirProblem, StateDirReason, StateSetAside};

/// The state directory as the node knows it.
#[derive(Debug, Clone, Default)]
pub struct StateDirHealth {
    pub problem: Option<StateDirProblem>,
    pub set_aside: Option<StateSetAside>,
}

/// Why the persisted state was not (or not durably) written: the answer to
/// `Output::Persist`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PersistError {
    /// Nothing was written: the file holds what it held.
    #[error("{0}")]
    NotWritten(StateDirProblem),
    /// The new file is in place (a restart reads it) but the directory could not be
    /// flushed: a power loss may bring back the old one.
    #[error("{0}")]
    NotDurable(StateDirProblem),
}

impl PersistError {
    pub fn problem(&self) -> &StateDirProblem {
        match self {
            PersistError::NotWritten(p) | PersistError::NotDurable(p) => p,
        }
    }
}

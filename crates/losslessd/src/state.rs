//! The daemon's state directory: runtime changes (`lossless dcbx set`) and
//! the boot counter, kept across restarts and crashes.
//!
//! One file, `state.json`, replaced atomically: the new content is written to
//! a temporary file in the same directory, flushed to disk, renamed over
//! `state.json`, and the directory is flushed, so after a crash (kill -9,
//! power loss) the file holds the old or the new content, never a mix.
//!
//! ```json
//! {
//!   "version": 1,
//!   "boots": 3,
//!   "ports": { "eth0": { "pfc": { "enable": true, "willing": false, "advertise": true,
//!                                 "cfg": { "priorities": [3], "num_tcs": 8 } } } }
//! }
//! ```

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use lossless_dcbx::FeatureAdmin;
use lossless_wire::cee::{AppConfig, InvalidValue, PfcConfig, PgConfig};
use serde::{Deserialize, Serialize};

use crate::config::PortSettings;

/// The state file inside the state directory.
pub const STATE_FILE: &str = "state.json";
/// The layout of `state.json` this daemon reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// The state directory (`daemon.state_dir`).
#[derive(Debug)]
pub struct StateDir {
    root: PathBuf,
}

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<FeatureAdmin<AppConfig>>,
}

impl PortOverrides {
    /// Puts every override over `s`.
    pub fn apply(&self, s: &mut PortSettings) {
        let d = s.dcbx_mut();
        if let Some(v) = self.dcbx_enabled {
            d.enabled = v;
        }
        if let Some(v) = &self.pg {
            d.pg = v.clone();
        }
        if let Some(v) = &self.pfc {
            d.pfc = v.clone();
        }
        if let Some(v) = &self.app {
            d.app = v.clone();
        }
    }

    /// True when nothing is overridden.
    pub fn is_empty(&self) -> bool {
        self.dcbx_enabled.is_none() && self.pg.is_none() && self.pfc.is_none() && self.app.is_none()
    }

    /// The values a valid configuration holds (the same checks as `PortConfig::validate`).
    fn validate(&self) -> Result<(), (&'static str, InvalidValue)> {
        if let Some(f) = &self.pg {
            f.cfg.validate().map_err(|e| ("pg", e))?;
        }
        if let Some(f) = &self.pfc {
            f.cfg.validate().map_err(|e| ("pfc", e))?;
        }
        if let Some(f) = &self.app {
            f.cfg.validate().map_err(|e| ("app", e))?;
        }
        Ok(())
    }
}

/// Why the state could not be read or written. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
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

/// Makes temporary file names unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl StateDir {
    /// Opens the directory, creating it (and its parents) with mode 0700 when
    /// missing. An existing directory is used as it is, unless group or
    /// others may write to it (state there could be forged): that is refused.
    pub fn open(root: &Path) -> io::Result<StateDir> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(root)?;
        let meta = fs::metadata(root)?;
        if !meta.is_dir() {
            return Err(io::Error::other(format!(
                "{}: not a directory",
                root.display()
            )));
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{}: state directory is writable by group or others (mode {mode:04o}); \
                     use a directory only losslessd can write (0700)",
                    root.display()
                ),
            ));
        }
        Ok(StateDir {
            root: root.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `state.json` in this directory.
    pub fn file(&self) -> PathBuf {
        self.root.join(STATE_FILE)
    }

    /// Reads the state. No file yet is the default state; anything that is
    /// not a complete, valid state file is an error naming the file and why.
    /// Temporary files left by an interrupted save are ignored.
    pub fn load(&self) -> Result<PersistedState, StateError> {
        let path = self.file();
        let text = match fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(PersistedState::default()),
            Err(source) => return Err(StateError::Io { path, source }),
        };
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
        let probe: Probe = serde_json::from_slice(&text).map_err(corrupt)?;
        if probe.version != u64::from(FORMAT_VERSION) {
            return Err(StateError::Version {
                path,
                found: probe.version,
            });
        }
        let disk: OnDisk = serde_json::from_slice(&text).map_err(corrupt)?;
        for (port, o) in &disk.ports {
            o.validate().map_err(|(feature, e)| StateError::Invalid {
                path: path.clone(),
                port: port.clone(),
                feature,
                reason: e.to_string(),
            })?;
        }
        Ok(PersistedState {
            boots: disk.boots,
            ports: disk.ports,
        })
    }

    /// Replaces the state file atomically and durably (see the module documentation).
    pub fn save(&self, state: &PersistedState) -> Result<(), StateError> {
        let mut json = serde_json::to_vec_pretty(&OnDiskRef {
            version: FORMAT_VERSION,
            boots: state.boots,
            ports: &state.ports,
        })
        .map_err(|e| StateError::Io {
            path: self.file(),
            source: io::Error::other(e),
        })?;
        json.push(b'\n');
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .root
            .join(format!(".{STATE_FILE}.{}.{n}.tmp", std::process::id()));
        let result = write_synced(&temp, &json)
            .map_err(|source| StateError::Io {
                path: temp.clone(),
                source,
            })
            .and_then(|()| {
                fs::rename(&temp, self.file()).map_err(|source| StateError::Io {
                    path: self.file(),
                    source,
                })
            });
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result?;
        File::open(&self.root)
            .and_then(|d| d.sync_all())
            .map_err(|source| StateError::Io {
                path: self.root.clone(),
                source,
            })
    }
}

/// Writes a new file (0600) and flushes it to disk.
fn write_synced(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(data)?;
    f.sync_all()
}

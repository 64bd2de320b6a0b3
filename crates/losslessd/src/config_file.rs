//! Which configuration file the daemon reads, and reading it (its parsing is the node
//! core's: [`DaemonConfig::parse`]).
//!
//! `--config FILE` names the file, and it must exist: a typo must not silently run
//! every port on the defaults. Without `--config` the daemon reads
//! [`DEFAULT_CONFIG_PATH`] when it exists, and runs on the built-in defaults when it
//! does not. Either way the file it started with is the one `reload` reads again, and
//! a file gone by then is refused like a broken one (the running configuration stays).

use std::io;
use std::path::{Path, PathBuf};

use lossless_node::config::{ConfigFileError, DaemonConfig};

pub use lossless_node::config::DEFAULT_CONFIG_PATH;

/// Where the daemon's configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    /// `--config FILE`.
    Named(PathBuf),
    /// No `--config`, and the default file exists.
    Default(PathBuf),
    /// No `--config`, and nothing at the default path (`looked_at`): every built-in
    /// default.
    BuiltIn { looked_at: PathBuf },
}

impl ConfigSource {
    /// `named` (from `--config`) when given; else `default` if a file is there.
    pub fn resolve(named: Option<&Path>, default: &Path) -> ConfigSource {
        match named {
            Some(path) => ConfigSource::Named(path.to_path_buf()),
            None if default.exists() => ConfigSource::Default(default.to_path_buf()),
            None => ConfigSource::BuiltIn {
                looked_at: default.to_path_buf(),
            },
        }
    }

    /// The file the daemon reads, at start and on every reload (None: no file).
    pub fn path(&self) -> Option<&Path> {
        match self {
            ConfigSource::Named(p) | ConfigSource::Default(p) => Some(p),
            ConfigSource::BuiltIn { .. } => None,
        }
    }

    /// What was read, for `--check` and the start-up log.
    pub fn describe(&self) -> String {
        match self {
            ConfigSource::Named(p) => p.display().to_string(),
            ConfigSource::Default(p) => format!("{} (the default file)", p.display()),
            ConfigSource::BuiltIn { looked_at } => format!(
                "the built-in defaults (no --config, and no {})",
                looked_at.display()
            ),
        }
    }
}

/// The file's text. A missing file is an error naming it, like any other read error.
pub fn read(path: &Path) -> Result<String, ConfigFileError> {
    std::fs::read_to_string(path).map_err(|source| ConfigFileError::Io {
        path: path.to_path_buf(),
        source: match source.kind() {
            io::ErrorKind::NotFound => io::Error::new(io::ErrorKind::NotFound, "no such file"),
            _ => source,
        },
    })
}

/// Reads and parses the file at `path`.
pub fn load(path: &Path) -> Result<DaemonConfig, ConfigFileError> {
    DaemonConfig::parse(&read(path)?, path)
}

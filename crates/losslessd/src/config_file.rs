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

/// How often the file is looked at for a new version.
pub const WATCH_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// Which version of the file is there: what `stat(2)` says of it through any symlinks
/// (a ConfigMap's file is a link into `..data`, which Kubernetes swaps for a new
/// directory), or that it could not be looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Version {
    Seen {
        dev: u64,
        ino: u64,
        len: u64,
        mtime: Option<std::time::SystemTime>,
    },
    Unreadable(io::ErrorKind),
}

fn version(path: &Path) -> Version {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => Version::Seen {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: m.modified().ok(),
        },
        Err(e) => Version::Unreadable(e.kind()),
    }
}

/// Watches the configuration file for a new version (an editor's save, an atomic
/// rename, a ConfigMap update), by looking at it every [`WATCH_EVERY`].
#[derive(Debug)]
pub struct Watch {
    path: Option<PathBuf>,
    last: Option<Version>,
}

impl Watch {
    /// The file the daemon started with (None: the built-in defaults, nothing to watch).
    pub fn new(path: Option<PathBuf>) -> Watch {
        let last = path.as_deref().map(version);
        Watch { path, last }
    }

    /// True when the file is not the version seen last time (it changed, went or came
    /// back): the caller reloads, which refuses a file that is gone or broken.
    pub fn changed(&mut self) -> bool {
        let Some(path) = &self.path else {
            return false;
        };
        let now = version(path);
        let changed = self.last.as_ref() != Some(&now);
        self.last = Some(now);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_version_is_seen_once() {
        let dir = std::env::temp_dir().join(format!("lossless-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("losslessd.toml");
        std::fs::write(&path, "[defaults]\n").expect("write");
        let mut w = Watch::new(Some(path.clone()));
        assert!(!w.changed());
        // An atomic replace (a new inode), as editors and ConfigMaps do.
        let tmp = dir.join("new.toml");
        std::fs::write(&tmp, "[defaults]\napply = \"none\"\n").expect("write");
        std::fs::rename(&tmp, &path).expect("rename");
        assert!(w.changed());
        assert!(!w.changed());
        std::fs::remove_file(&path).expect("remove");
        assert!(w.changed());
        assert!(!w.changed());
        assert!(!Watch::new(None).changed());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

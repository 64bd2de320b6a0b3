//! The state directory (`daemon.state_dir`): where the node's [`PersistedState`] lives
//! across restarts and crashes.
//!
//! One file, `state.json`, replaced atomically: the new content is written to a
//! temporary file in the same directory, flushed to disk, renamed over `state.json`,
//! and the directory is flushed, so after a crash (kill -9, power loss) the file holds
//! the old or the new content, never a mix. The content's format is the node core's
//! ([`PersistedState::encode`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use lossless_node::state::{PersistedState, StateError};

/// The state file inside the state directory.
pub const STATE_FILE: &str = "state.json";

/// The state directory.
#[derive(Debug)]
pub struct StateDir {
    root: PathBuf,
}

/// Why the state could not be read or written. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// The file is there but its content is refused.
    #[error(transparent)]
    Content(#[from] StateError),
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

    /// Removes the temporary files (`.state.json.PID.N.tmp`) that saves killed before
    /// their rename left behind, and returns their names. Nothing else is touched.
    /// Call it before this process saves anything.
    pub fn remove_leftovers(&self) -> io::Result<Vec<String>> {
        let mut removed = Vec::new();
        for entry in fs::read_dir(&self.root)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if !is_temp_name(name) || !entry.file_type()?.is_file() {
                continue;
            }
            match fs::remove_file(entry.path()) {
                Ok(()) => removed.push(name.to_string()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        removed.sort();
        Ok(removed)
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
    pub fn load(&self) -> Result<PersistedState, StateDirError> {
        let path = self.file();
        match fs::read(&path) {
            Ok(text) => Ok(PersistedState::decode(&text, &path)?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(PersistedState::default()),
            Err(source) => Err(StateDirError::Io { path, source }),
        }
    }

    /// Replaces the state file atomically and durably (see the module documentation).
    pub fn save(&self, state: &PersistedState) -> Result<(), StateDirError> {
        let json = state.encode();
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .root
            .join(format!(".{STATE_FILE}.{}.{n}.tmp", std::process::id()));
        let result = write_synced(&temp, &json)
            .map_err(|source| StateDirError::Io {
                path: temp.clone(),
                source,
            })
            .and_then(|()| {
                fs::rename(&temp, self.file()).map_err(|source| StateDirError::Io {
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
            .map_err(|source| StateDirError::Io {
                path: self.root.clone(),
                source,
            })
    }
}

/// Whether `name` is one of [`StateDir::save`]'s temporary files:
/// `.state.json.PID.N.tmp`, both numbers decimal.
fn is_temp_name(name: &str) -> bool {
    let Some(middle) = name
        .strip_prefix(&format!(".{STATE_FILE}."))
        .and_then(|r| r.strip_suffix(".tmp"))
    else {
        return false;
    };
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(middle.split_once('.'), Some((pid, n)) if number(pid) && number(n))
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

#[cfg(test)]
mod tests {
    use super::is_temp_name;

    #[test]
    fn temp_names() {
        assert!(is_temp_name(".state.json.4242.0.tmp"));
        for other in [
            "state.json",
            ".state.json.tmp",
            ".state.json.1.tmp",
            ".state.json.a.1.tmp",
            ".state.json.1.2.tmp.keep",
            "state.json.1.2.tmp",
            ".state.json..1.tmp",
        ] {
            assert!(!is_temp_name(other), "{other}");
        }
    }
}

//! The state directory (`daemon.state_dir`): where the node's [`PersistedState`] lives
//! across restarts and crashes.
//!
//! One file, `state.json`, replaced atomically: the new content is written to a
//! temporary file in the same directory, flushed to disk, renamed over `state.json`,
//! and the directory is flushed, so after a crash (kill -9, power loss) the file holds
//! the old or the new content, never a mix. The content's format is the node core's
//! ([`PersistedState::encode`]).
//!
//! Nothing here stops the daemon: a directory that cannot be written (read-only, full),
//! a state file that is damaged, and a directory or file that another user owns or
//! may write (its state could be forged; checked as sshd's `StrictModes` checks a
//! user's files: the owner is this process's user or root, group and others cannot
//! write, and the same for every directory above but where the sticky bit is set, as
//! on `/tmp`) are reported ([`Started`], [`StateDirProblem`]) and the daemon runs on
//! its configuration file. A refused state file is moved aside
//! (`state.json.damaged-<unix time>`, `state.json.untrusted-<unix time>`), never
//! deleted; one that could not be moved is never overwritten ([`StateDir::save`]
//! moves it first).

use std::cell::Cell;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use lossless_node::state::{
    PersistError, PersistedState, StateDirProblem, StateDirReason, StateError, StateSetAside,
};

/// The state file inside the state directory.
pub const STATE_FILE: &str = "state.json";

/// The state directory.
#[derive(Debug)]
pub struct StateDir {
    root: PathBuf,
    /// The user the directory and the file must belong to (or root): this process's
    /// effective uid.
    euid: u32,
    /// A state file refused and not moved aside yet (the tag of its new name): moved
    /// before anything is written over it.
    aside: Cell<Option<&'static str>>,
}

/// What [`StateDir::start`] found: the state to run (this start counted in `boots`),
/// and what is wrong, if anything.
#[derive(Debug)]
pub struct Started {
    pub dir: StateDir,
    pub state: PersistedState,
    /// The directory's problem: while one that refuses changes lasts, nothing persists.
    pub problem: Option<StateDirProblem>,
    /// The state file refused (and moved aside, or left in place).
    pub set_aside: Option<StateSetAside>,
    /// The temporary files of interrupted writes removed.
    pub removed: Vec<String>,
}

/// Why the state could not be read or written. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    /// The file is there but its content is refused.
    #[error(transparent)]
    Content(#[from] StateError),
    /// The file (or its directory) is not trusted: its content was not read.
    #[error(transparent)]
    Untrusted(StateDirProblem),
}

/// Makes temporary file names unique within the process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl StateDir {
    /// Opens the directory, creating it (and its parents) with mode 0700 when
    /// missing. An existing directory is used as it is, unless it is not trusted
    /// ([`StateDir::check`]: state there could be forged): that is refused.
    pub fn open(root: &Path) -> io::Result<StateDir> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(root)?;
        let dir = StateDir::unchecked(root);
        dir.check().map_err(|p| {
            let kind = match p.reason {
                StateDirReason::NotUsable => io::ErrorKind::Other,
                _ => io::ErrorKind::PermissionDenied,
            };
            io::Error::new(kind, p.message)
        })?;
        Ok(dir)
    }

    fn unchecked(root: &Path) -> StateDir {
        StateDir {
            root: root.to_path_buf(),
            euid: nix::unistd::geteuid().as_raw(),
            aside: Cell::new(None),
        }
    }

    /// What the daemon does at start, and never fails: creates the directory when
    /// missing, checks it can be trusted, removes the temporary files of interrupted
    /// writes, reads the state (a refused file is moved aside: the default state
    /// runs), counts this start in `boots` and writes it back. What went wrong is in
    /// [`Started`].
    pub fn start(root: &Path) -> Started {
        let dir = StateDir::unchecked(root);
        let mut started = Started {
            state: PersistedState::default(),
            problem: None,
            set_aside: None,
            removed: Vec::new(),
            dir,
        };
        let dir = &started.dir;
        if let Err(e) = fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(root)
        {
            // Nothing to read: a directory that cannot even be created.
            started.problem = Some(not_writable(root, &e));
            started.state.boots = 1;
            return started;
        }
        if let Err(p) = dir.check() {
            // Not even looked into; its state file is not trusted either, and moved
            // aside before the first write once the directory is.
            if fs::symlink_metadata(dir.file()).is_ok() {
                dir.aside.set(Some("untrusted"));
            }
            started.problem = Some(p);
            started.state.boots = 1;
            return started;
        }
        match dir.remove_leftovers() {
            Ok(removed) => started.removed = removed,
            Err(e) => {
                tracing::warn!(dir = %root.display(), error = %e, "cannot clean the state directory")
            }
        }
        match dir.load() {
            Ok(state) => started.state = state,
            Err(e) => started.set_aside = Some(dir.set_aside(&e)),
        }
        started.state.boots = started.state.boots.wrapping_add(1);
        if let Err(e) = dir.save(&started.state) {
            started.problem = Some(e.problem().clone());
        }
        started
    }

    /// Moves the refused state file aside (`state.json.TAG-<unix time>`), or marks it
    /// to be moved before the next write when the directory refuses.
    fn set_aside(&self, why: &StateDirError) -> StateSetAside {
        let tag = match why {
            StateDirError::Untrusted(_) => "untrusted",
            _ => "damaged",
        };
        let moved_to = match self.move_aside(tag) {
            Ok(to) => Some(to.display().to_string()),
            Err(_) => {
                self.aside.set(Some(tag));
                None
            }
        };
        StateSetAside {
            path: self.file().display().to_string(),
            moved_to,
            why: why.to_string(),
        }
    }

    /// Renames `state.json` to `state.json.TAG-<unix time>` (a free name) and flushes
    /// the directory.
    fn move_aside(&self, tag: &str) -> io::Result<PathBuf> {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut to = self.root.join(format!("{STATE_FILE}.{tag}-{secs}"));
        let mut n = 1;
        while fs::symlink_metadata(&to).is_ok() {
            to = self.root.join(format!("{STATE_FILE}.{tag}-{secs}.{n}"));
            n += 1;
        }
        fs::rename(self.file(), &to)?;
        File::open(&self.root).and_then(|d| d.sync_all())?;
        Ok(to)
    }

    /// Whether the directory can be trusted with state: a directory, owned by this
    /// process's user or root, that group and others cannot write; every directory
    /// above it owned by this user or root and not writable by group or others unless
    /// its sticky bit is set. Checked again before every write.
    pub fn check(&self) -> Result<(), StateDirProblem> {
        let root = fs::canonicalize(&self.root).map_err(|e| not_writable(&self.root, &e))?;
        let meta = fs::metadata(&root).map_err(|e| not_writable(&root, &e))?;
        if !meta.is_dir() {
            return Err(problem(
                StateDirReason::NotUsable,
                &root,
                format!("{}: the state directory is not a directory", root.display()),
            ));
        }
        self.trusted(&root, &meta, "the state directory", false)?;
        let mut above = root.parent();
        while let Some(dir) = above {
            let meta = fs::metadata(dir).map_err(|e| not_writable(dir, &e))?;
            self.trusted(dir, &meta, "a directory above the state directory", true)?;
            above = dir.parent();
        }
        Ok(())
    }

    /// The owner and mode rule for `path` (`what` it is).
    fn trusted(
        &self,
        path: &Path,
        meta: &Metadata,
        what: &str,
        sticky_ok: bool,
    ) -> Result<(), StateDirProblem> {
        let owner = meta.uid();
        if owner != self.euid && owner != 0 {
            return Err(problem(
                StateDirReason::NotOwned,
                path,
                format!(
                    "{}: {what} is owned by uid {owner}, expected uid {} (losslessd's user) \
                     or root: state there could be forged, it is ignored",
                    path.display(),
                    self.euid
                ),
            ));
        }
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 && !(sticky_ok && mode & 0o1000 != 0) {
            return Err(problem(
                StateDirReason::OpenMode,
                path,
                format!(
                    "{}: {what} is writable by group or others (mode {mode:04o}): state \
                     there could be forged, it is ignored; use a directory only losslessd \
                     can write (0700) and a file only it can (0600)",
                    path.display()
                ),
            ));
        }
        Ok(())
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
    /// not a complete, valid state file is an error naming the file and why, and so
    /// is a file that is not trusted (a symbolic link, another user's, writable by
    /// group or others: [`StateDir::check`]'s rule), which is not read.
    /// Temporary files left by an interrupted save are ignored.
    pub fn load(&self) -> Result<PersistedState, StateDirError> {
        let path = self.file();
        let io = |source| StateDirError::Io {
            path: path.clone(),
            source,
        };
        // O_NOFOLLOW: a link is refused (ELOOP), and what is checked is what is read.
        let mut file = match OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(PersistedState::default()),
            Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
                return Err(StateDirError::Untrusted(problem(
                    StateDirReason::NotUsable,
                    &path,
                    format!("{}: the state file is a symbolic link", path.display()),
                )))
            }
            Err(e) => return Err(io(e)),
        };
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            return Err(StateDirError::Untrusted(problem(
                StateDirReason::NotUsable,
                &path,
                format!("{}: the state file is not a regular file", path.display()),
            )));
        }
        self.trusted(&path, &meta, "the state file", false)
            .map_err(StateDirError::Untrusted)?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(io)?;
        Ok(PersistedState::decode(&text, &path)?)
    }

    /// Replaces the state file atomically and durably (see the module documentation),
    /// once the directory passes [`StateDir::check`] again and a refused state file
    /// left in place is moved aside. `NotWritten`: the file is as it was;
    /// `NotDurable`: the new file is in place but the directory's flush failed.
    pub fn save(&self, state: &PersistedState) -> Result<(), PersistError> {
        self.check().map_err(PersistError::NotWritten)?;
        if let Some(tag) = self.aside.get() {
            match self.move_aside(tag) {
                Ok(to) => tracing::warn!(
                    "the state file refused at start is moved to {} before the first write",
                    to.display()
                ),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(PersistError::NotWritten(not_writable(&self.file(), &e))),
            }
            self.aside.set(None);
        }
        self.write(state)
    }

    fn write(&self, state: &PersistedState) -> Result<(), PersistError> {
        let json = state.encode();
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = self
            .root
            .join(format!(".{STATE_FILE}.{}.{n}.tmp", std::process::id()));
        let result = write_synced(&temp, &json)
            .map_err(|e| not_writable(&self.root, &e))
            .and_then(|()| {
                fs::rename(&temp, self.file()).map_err(|e| not_writable(&self.file(), &e))
            });
        if let Err(p) = result {
            let _ = fs::remove_file(&temp);
            return Err(PersistError::NotWritten(p));
        }
        File::open(&self.root)
            .and_then(|d| d.sync_all())
            .map_err(|e| {
                PersistError::NotDurable(problem(
                    StateDirReason::NotDurable,
                    &self.root,
                    format!(
                        "{}: {STATE_FILE} was replaced but the directory could not be flushed \
                     ({e}): the new state runs and the next start reads it, a power loss \
                     may bring back the one before",
                        self.root.display()
                    ),
                ))
            })
    }
}

fn problem(reason: StateDirReason, path: &Path, message: String) -> StateDirProblem {
    StateDirProblem {
        reason,
        path: path.display().to_string(),
        message,
    }
}

/// `path` cannot be written (or read, for a directory to write into).
fn not_writable(path: &Path, e: &io::Error) -> StateDirProblem {
    problem(
        StateDirReason::NotWritable,
        path,
        format!("{}: cannot write: {e}", path.display()),
    )
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

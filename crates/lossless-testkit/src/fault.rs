//! Faults of the disk beneath a daemon's state directory, made honestly (the daemon's
//! binary unchanged): a directory flush that fails ([`DirFsyncFault`], a library
//! preloaded into the process that fails `fsync(2)` of a directory with EIO while
//! armed), and a mount namespace of the daemon's own where its state directory is a
//! tiny tmpfs or a read-only bind mount ([`private_mounts`], [`in_mounts_of`]), so
//! that nothing is mounted on the test's host.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The compiled fault library (`c/fsync_fault.c`), to put in `LD_PRELOAD`. Panics
/// with the reason when it could not be built (no gcc).
pub fn dir_fsync_library() -> PathBuf {
    let err = env!("LOSSLESS_FSYNC_FAULT_BUILD_ERROR");
    assert!(
        err.is_empty(),
        "the fsync fault library was not built: {err}"
    );
    let so = PathBuf::from(env!("LOSSLESS_FSYNC_FAULT_SO"));
    assert!(
        so.is_file(),
        "{} is missing: rebuild lossless-testkit",
        so.display()
    );
    so
}

/// `fsync(2)`/`fdatasync(2)` of any directory fail with EIO in the processes started
/// with [`DirFsyncFault::vars`] while the fault is armed ([`DirFsyncFault::arm`]).
#[derive(Debug)]
pub struct DirFsyncFault {
    flag: PathBuf,
}

impl DirFsyncFault {
    /// A fault, disarmed, whose flag file is `dir/fsync-fault` (`dir` must exist).
    pub fn new(dir: &Path) -> DirFsyncFault {
        DirFsyncFault {
            flag: dir.join("fsync-fault"),
        }
    }

    /// The environment that preloads the library into a process.
    pub fn vars(&self) -> Vec<(String, String)> {
        vec![
            (
                "LD_PRELOAD".to_string(),
                dir_fsync_library().display().to_string(),
            ),
            (
                "LOSSLESS_FAULT_DIR_FSYNC".to_string(),
                self.flag.display().to_string(),
            ),
        ]
    }

    /// From now on every directory flush fails.
    pub fn arm(&self) {
        std::fs::write(&self.flag, "").expect("arm the fsync fault");
    }

    /// Directory flushes work again.
    pub fn disarm(&self) {
        let _ = std::fs::remove_file(&self.flag);
    }

    /// How many directory flushes were failed while armed.
    pub fn failures(&self) -> usize {
        std::fs::read_to_string(&self.flag)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }
}

/// A wrapper (for a daemon's `start_under`) that runs its command line in a mount
/// namespace of its own (`unshare -m`, mounts private) after the shell commands
/// `setup` ran there: e.g. `mount -t tmpfs -o size=4k,mode=0700 tmpfs DIR`.
pub fn private_mounts(setup: &str) -> Vec<String> {
    [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-ec",
        &format!("{setup}\nexec \"$@\""),
        "sh",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// Runs `args` in the mount namespace of process `pid` (`nsenter -m`); panics when it
/// fails.
pub fn in_mounts_of(pid: u32, args: &[&str]) -> Output {
    let out = Command::new("nsenter")
        .args(["-t", &pid.to_string(), "-m", "--"])
        .args(args)
        .output()
        .expect("run nsenter");
    assert!(
        out.status.success(),
        "nsenter -t {pid} -m {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

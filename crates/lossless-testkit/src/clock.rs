//! A step of the wall clock as one process sees it, made honestly (the daemon's binary
//! unchanged, the machine's clock untouched): a library preloaded into the process
//! (`c/clock_step.c`) shifts its `clock_gettime(CLOCK_REALTIME)` by the seconds a file
//! holds, while the kernel's clock, and the receive stamps it puts on frames
//! (`SO_TIMESTAMPNS`), go on unchanged. The process's readings and the kernel's stamps
//! then disagree by the step, as after a real step of the system clock (chrony's
//! `makestep`, a VM resume) between the process's reading and the frames the kernel
//! stamps. A time namespace (`unshare -T`) cannot do it: it offsets CLOCK_MONOTONIC
//! and CLOCK_BOOTTIME only, never CLOCK_REALTIME.

use std::path::{Path, PathBuf};

/// The compiled library (`c/clock_step.c`), to put in `LD_PRELOAD`. Panics with the
/// reason when it could not be built (no gcc).
pub fn step_library() -> PathBuf {
    let err = env!("LOSSLESS_CLOCK_STEP_BUILD_ERROR");
    assert!(
        err.is_empty(),
        "the clock step library was not built: {err}"
    );
    let so = PathBuf::from(env!("LOSSLESS_CLOCK_STEP_SO"));
    assert!(
        so.is_file(),
        "{} is missing: rebuild lossless-testkit",
        so.display()
    );
    so
}

/// The wall clock of the processes started with [`ClockStep::vars`], stepped by
/// [`ClockStep::step`] (none until then).
#[derive(Debug)]
pub struct ClockStep {
    file: PathBuf,
}

impl ClockStep {
    /// No step yet; the step's file is `dir/clock-step` (`dir` must exist).
    pub fn new(dir: &Path) -> ClockStep {
        ClockStep {
            file: dir.join("clock-step"),
        }
    }

    /// The environment that preloads the library into a process.
    pub fn vars(&self) -> Vec<(String, String)> {
        vec![
            (
                "LD_PRELOAD".to_string(),
                step_library().display().to_string(),
            ),
            (
                "LOSSLESS_CLOCK_STEP".to_string(),
                self.file.display().to_string(),
            ),
        ]
    }

    /// From now on the processes read the wall clock `secs` later than the kernel's
    /// (earlier if negative): the kernel's clock stepped back by `secs` since their
    /// last reading, as they see it.
    pub fn step(&self, secs: i64) {
        std::fs::write(&self.file, secs.to_string()).expect("step the clock");
    }
}

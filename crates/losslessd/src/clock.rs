//! The daemon's clocks: the monotonic time the node core runs on (from the runtime's
//! start) with the wall-clock time beside it, and the real-time clock of the kernel's
//! receive stamps. Only the runtime reads them; the node gets the time as a parameter.

use std::time::SystemTime;

use lossless_dcbx::Instant;
use lossless_node::node::Now;

/// The real-time clock in nanoseconds since the epoch: the clock of the kernel's
/// receive stamps (`SO_TIMESTAMPNS`, a ring's `tp_sec`/`tp_nsec`).
pub(crate) fn unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

pub(crate) struct Clock {
    epoch: tokio::time::Instant,
}

impl Clock {
    /// A clock whose monotonic time starts now.
    pub(crate) fn start() -> Clock {
        Clock {
            epoch: tokio::time::Instant::now(),
        }
    }

    pub(crate) fn now(&self) -> Now {
        let mono = Instant::from_duration(tokio::time::Instant::now() - self.epoch);
        let unix = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        Now { mono, unix }
    }

    /// The time of an instant already past (when a reading was taken): monotonic as
    /// it was, wall-clock time as now less what has passed since.
    pub(crate) fn at(&self, then: std::time::Instant) -> Now {
        let now = self.now();
        let then = tokio::time::Instant::from_std(then);
        let ago = tokio::time::Instant::now().saturating_duration_since(then);
        Now {
            mono: Instant::from_duration(then.saturating_duration_since(self.epoch)),
            unix: now.unix - ago.as_secs_f64(),
        }
    }

    pub(crate) fn deadline(&self, at: Instant) -> tokio::time::Instant {
        self.epoch + at.since_epoch()
    }
}

//! Time as a parameter: the cores never read a clock.
//!
//! [`Instant`] is a point on whatever timeline the caller runs: the daemon maps
//! its monotonic clock onto it, the lab runs a virtual clock from zero. The crate sits
//! low in the stack (as smoltcp's `time`) so that every sans-IO core can take `now`
//! without depending on another core for the type.

use std::ops::{Add, Sub};
pub use std::time::Duration;

/// A point in time, as a duration since the caller's epoch.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(Duration);

impl Instant {
    pub const ZERO: Instant = Instant(Duration::ZERO);

    pub const fn from_duration(since_epoch: Duration) -> Self {
        Instant(since_epoch)
    }

    pub fn from_secs_f64(secs: f64) -> Self {
        Instant(Duration::from_secs_f64(secs))
    }

    pub const fn since_epoch(self) -> Duration {
        self.0
    }

    pub fn saturating_since(self, earlier: Instant) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_since(earlier)
    }
}

impl std::fmt::Debug for Instant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t+{:.6}s", self.0.as_secs_f64())
    }
}

impl std::fmt::Display for Instant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.6}", self.0.as_secs_f64())
    }
}

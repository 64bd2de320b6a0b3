//! Time as a parameter: [`lossless_time`]'s [`Instant`] and [`Duration`], re-exported so
//! `lossless_dcbx::time` and `lossless_dcbx::{Instant, Duration}` keep naming them.

pub use lossless_time::{Duration, Instant};

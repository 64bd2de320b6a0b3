//! Adaptive headroom (Adaptive PFC Headroom, phase 3): size the headroom from a measured link
//! instead of the worst-case tables. Station 1 sends a request at T1, station 2 receives it at T2
//! and answers at T3, station 1 receives the answer at T4; then
//!
//! ```text
//! X        = port speed * (T4 - T1 - (T3 - T2))
//! DV       = X + 2 * (Max Frame) + (PFC Frame)
//! Headroom = DV * alpha, rounded up to the cell size
//! ```
//!
//! X is the measured round trip in bit times: both cables and both interfaces, replacing
//! 2 x cable delay + ID_s1 + ID_s2 (+ HD where the timestamps see it). Pure arithmetic:
//! the timestamps come from the runtime, the samples from the measurement session.

use serde::Serialize;

use crate::cells::{headroom, Alpha, Headroom};
use crate::units::{Bytes, Duration, Rate};

/// One exchange's timestamps, picoseconds on each station's own clock modulo 2^64 (T1,
/// T4 on station 1; T2, T3 on station 2: only differences on the same clock are used, so
/// the clocks need no synchronisation and may wrap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Exchange {
    pub t1: u64,
    pub t2: u64,
    pub t3: u64,
    pub t4: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    #[error("T4 {t4} ps is before T1 {t1} ps")]
    ReplyBeforeRequest { t1: u64, t4: u64 },
    #[error("T3 {t3} ps is before T2 {t2} ps")]
    AnswerBeforeReceipt { t2: u64, t3: u64 },
    #[error("the peer's turnaround T3 - T2 = {turnaround} ps exceeds T4 - T1 = {total} ps")]
    TurnaroundExceedsRoundTrip { turnaround: u64, total: u64 },
}

/// `later - earlier` on a wrapping clock; `None` when it is "negative" (half the range
/// or more: 106 days in picoseconds, far beyond any exchange).
fn elapsed(earlier: u64, later: u64) -> Option<u64> {
    let d = later.wrapping_sub(earlier);
    (d < 1 << 63).then_some(d)
}

impl Exchange {
    /// T4 - T1 - (T3 - T2): the time on the wire and in the interfaces, both ways.
    pub fn round_trip(&self) -> Result<Duration, ExchangeError> {
        let total = elapsed(self.t1, self.t4).ok_or(ExchangeError::ReplyBeforeRequest {
            t1: self.t1,
            t4: self.t4,
        })?;
        let turnaround = elapsed(self.t2, self.t3).ok_or(ExchangeError::AnswerBeforeReceipt {
            t2: self.t2,
            t3: self.t3,
        })?;
        total
            .checked_sub(turnaround)
            .map(Duration)
            .ok_or(ExchangeError::TurnaroundExceedsRoundTrip { turnaround, total })
    }
}

/// The minimum filter: queueing and scheduling only ever add delay, so the smallest
/// round trip of many samples is the best estimate of the link itself. Invalid exchanges
/// (clock steps, reordered replies) are skipped; `None` if none was valid.
pub fn min_round_trip(samples: &[Exchange]) -> Option<Duration> {
    samples.iter().filter_map(|e| e.round_trip().ok()).min()
}

/// X = speed x round trip, bit times, rounded up.
pub fn measured_bits(round_trip: Duration, speed: Rate) -> u64 {
    round_trip.bit_times(speed)
}

/// DV = X + 2 x max frame + PFC frame (all bit times).
pub fn adaptive_dv(x_bits: u64, max_frame_bits: u64, pfc_frame_bits: u64) -> u64 {
    x_bits
        .saturating_add(max_frame_bits.saturating_mul(2))
        .saturating_add(pfc_frame_bits)
}

/// Headroom = DV x alpha, rounded up to the cell size.
pub fn adaptive_headroom(dv_bits: u64, alpha: Alpha, cell: Bytes) -> Headroom {
    headroom(dv_bits, alpha, cell)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_headroom_phase_3() {
        // 100G, 10 km of fibre each way (5 us each way = 10 us) plus 1 us of interfaces,
        // peer turnaround 3 us.
        let e = Exchange {
            t1: 1_000_000,
            t2: 50_000_000,
            t3: 53_000_000,
            t4: 15_000_000,
        };
        assert_eq!(e.round_trip(), Ok(Duration(11_000_000)));
        let x = measured_bits(Duration(11_000_000), Rate(100_000_000_000));
        assert_eq!(x, 1_100_000);
        let dv = adaptive_dv(x, 16_160, 672);
        assert_eq!(dv, 1_100_000 + 32_320 + 672);
        let h = adaptive_headroom(dv, Alpha::ONE, Bytes(160));
        // 1,132,992 bits = 141,624 bytes = 885.15 cells -> 886 cells
        assert_eq!((h.cells, h.bytes), (886, 141_760));
    }

    #[test]
    fn minimum_filter_skips_bad_samples() {
        let ok = |rt: u64| Exchange {
            t1: 0,
            t2: 7,
            t3: 7 + 100,
            t4: rt + 100,
        };
        let bad = Exchange {
            t1: 10,
            t2: 0,
            t3: 0,
            t4: 5,
        };
        assert_eq!(
            min_round_trip(&[ok(900), bad, ok(500), ok(700)]),
            Some(Duration(500))
        );
        assert_eq!(min_round_trip(&[bad]), None);
        // Clocks wrap: T1 just below 2^64, T4 just after the wrap.
        let wrapped = Exchange {
            t1: u64::MAX - 99,
            t2: 5,
            t3: 25,
            t4: 400,
        };
        assert_eq!(wrapped.round_trip(), Ok(Duration(500 - 20)));
        assert!(matches!(
            Exchange {
                t1: 0,
                t2: 0,
                t3: 10,
                t4: 5
            }
            .round_trip(),
            Err(ExchangeError::TurnaroundExceedsRoundTrip { .. })
        ));
    }
}

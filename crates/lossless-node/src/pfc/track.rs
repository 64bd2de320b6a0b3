//! One counter read again and again: what it did between two readings ([`Step`]), why
//! a delta is not known ([`Discontinuity`]: a reset, a 32- or 64-bit wrap, a counter
//! that vanished), and a total that never goes down ([`Track`]). The PFC counters
//! (`counters.rs`) and the RDMA device's (`rdma.rs`) both count this way.

/// What a counter did between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Not reported, now or before.
    Absent,
    /// Reported for the first time (or again after vanishing): a baseline, no delta.
    First,
    /// Counted up by this much (0: nothing happened).
    Delta(u64),
    /// A discontinuity: no delta can be trusted across it.
    Broken(Discontinuity),
}

impl Step {
    /// The frames since the previous reading, when they are known.
    pub fn delta(self) -> Option<u64> {
        match self {
            Step::Delta(d) => Some(d),
            _ => None,
        }
    }

    pub fn broken(self) -> bool {
        matches!(self, Step::Broken(_))
    }
}

pub use lossless_proto::pfc::Discontinuity;

/// A value within this many of the top of a 32-bit (or 64-bit) range that is followed
/// by a smaller one is taken to have wrapped; anything else smaller is a reset.
const WRAP_MARGIN_32: u64 = 1 << 30;
const WRAP_MARGIN_64: u64 = 1 << 62;

/// One counter's total: never goes down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Track {
    /// The last reading (None: none yet, or the counter vanished).
    pub(super) last: Option<u64>,
    /// Frames (or microseconds) counted since the port was added.
    pub total: u64,
}

impl Track {
    /// Takes a reading.
    pub fn update(&mut self, reading: Option<u64>) -> Step {
        let step = match (self.last, reading) {
            (None, None) => Step::Absent,
            (None, Some(_)) => Step::First,
            (Some(before), None) => Step::Broken(Discontinuity::Vanished { before }),
            (Some(before), Some(after)) if after >= before => Step::Delta(after - before),
            (Some(before), Some(after)) => Step::Broken(wrap_or_reset(before, after)),
        };
        match step {
            Step::Delta(d) => self.total = self.total.saturating_add(d),
            Step::Broken(Discontinuity::Wrap { delta, .. }) => {
                self.total = self.total.saturating_add(delta)
            }
            Step::Broken(Discontinuity::Reset { after, .. }) => {
                self.total = self.total.saturating_add(after)
            }
            _ => {}
        }
        self.last = reading;
        step
    }

    pub fn last(&self) -> Option<u64> {
        self.last
    }
}

fn wrap_or_reset(before: u64, after: u64) -> Discontinuity {
    let top32 = u64::from(u32::MAX);
    if before <= top32 && before > top32 - WRAP_MARGIN_32 && after < WRAP_MARGIN_32 {
        let delta = (top32 - before) + after + 1;
        return Discontinuity::Wrap {
            before,
            after,
            delta,
        };
    }
    if before > u64::MAX - WRAP_MARGIN_64 && after < WRAP_MARGIN_64 {
        let delta = after.wrapping_sub(before);
        return Discontinuity::Wrap {
            before,
            after,
            delta,
        };
    }
    Discontinuity::Reset { before, after }
}

pub use lossless_proto::pfc::DiscontinuityCounts;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_follow_increments_and_never_go_down() {
        let mut t = Track::default();
        assert_eq!(t.update(None), Step::Absent);
        assert_eq!(t.update(Some(10)), Step::First);
        assert_eq!(t.total, 0);
        assert_eq!(t.update(Some(15)), Step::Delta(5));
        assert_eq!(t.update(Some(15)), Step::Delta(0));
        assert_eq!(
            t.update(Some(3)),
            Step::Broken(Discontinuity::Reset {
                before: 15,
                after: 3
            })
        );
        assert_eq!(t.total, 8, "a reset counts what was counted since it");
        assert_eq!(
            t.update(None),
            Step::Broken(Discontinuity::Vanished { before: 3 })
        );
        assert_eq!(t.total, 8);
        assert_eq!(t.update(Some(100)), Step::First, "back after vanishing");
        assert_eq!(t.total, 8);
        assert_eq!(t.update(Some(101)), Step::Delta(1));
        assert_eq!(t.total, 9);
    }

    #[test]
    fn a_32_bit_wrap_adds_what_passed_the_top() {
        let mut t = Track::default();
        t.update(Some(u64::from(u32::MAX) - 4));
        let s = t.update(Some(5));
        assert_eq!(
            s,
            Step::Broken(Discontinuity::Wrap {
                before: u64::from(u32::MAX) - 4,
                after: 5,
                delta: 10
            })
        );
        assert_eq!(t.total, 10);
        // Far from the top, a smaller value is a reset.
        let mut r = Track::default();
        r.update(Some(1_000_000));
        assert!(matches!(
            r.update(Some(5)),
            Step::Broken(Discontinuity::Reset { .. })
        ));
    }

    #[test]
    fn a_64_bit_wrap_adds_what_passed_the_top() {
        let mut t = Track::default();
        t.update(Some(u64::MAX - 1));
        assert_eq!(
            t.update(Some(2)),
            Step::Broken(Discontinuity::Wrap {
                before: u64::MAX - 1,
                after: 2,
                delta: 4
            })
        );
        assert_eq!(t.total, 4);
    }
}

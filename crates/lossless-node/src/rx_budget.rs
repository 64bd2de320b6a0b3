//! The receive budget of a port: how many frames per second it processes from anyone
//! but its DCBX peer (a token bucket). A broken or hostile device on the link can send
//! hundreds of thousands of frames a second; each one the agent parses costs
//! microseconds on the one thread that runs every port. Past the budget, such frames
//! are counted and dropped before they are parsed. Frames from the negotiated peer
//! (its MSAP, or its MAC for MAC Control) never use the budget and are never dropped
//! by it.

use lossless_dcbx::Instant;

/// `rx_budget_per_s` by default: frames per second from others than the peer.
pub const DEFAULT_RX_BUDGET_PER_S: u32 = 100;
/// `rx_budget_burst` by default: how many such frames may come at once.
pub const DEFAULT_RX_BUDGET_BURST: u32 = 200;

/// A port's budget: `per_s` frames a second, up to `burst` at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxBudgetLimits {
    pub per_s: u32,
    pub burst: u32,
}

impl Default for RxBudgetLimits {
    fn default() -> Self {
        RxBudgetLimits {
            per_s: DEFAULT_RX_BUDGET_PER_S,
            burst: DEFAULT_RX_BUDGET_BURST,
        }
    }
}

/// The token bucket; full when created.
#[derive(Debug, Clone)]
pub struct RxBudget {
    limits: RxBudgetLimits,
    tokens: f64,
    last: Instant,
}

impl RxBudget {
    pub fn new(limits: RxBudgetLimits, now: Instant) -> RxBudget {
        RxBudget {
            limits,
            tokens: f64::from(limits.burst),
            last: now,
        }
    }

    pub fn limits(&self) -> RxBudgetLimits {
        self.limits
    }

    /// New limits (a reload); what is left is capped at the new burst.
    pub fn set_limits(&mut self, limits: RxBudgetLimits) {
        self.limits = limits;
        self.tokens = self.tokens.min(f64::from(limits.burst));
    }

    /// Takes one frame's worth at `now`: false when the budget is spent.
    pub fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens = (self.tokens + elapsed * f64::from(self.limits.per_s))
            .min(f64::from(self.limits.burst));
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_dcbx::Duration;

    fn at(ms: u64) -> Instant {
        Instant::from_duration(Duration::from_millis(ms))
    }

    #[test]
    fn a_burst_then_the_rate() {
        let mut b = RxBudget::new(
            RxBudgetLimits {
                per_s: 10,
                burst: 5,
            },
            at(0),
        );
        assert_eq!((0..20).filter(|_| b.take(at(0))).count(), 5);
        // 10 per second: one every 100 ms.
        assert!(!b.take(at(50)));
        assert!(b.take(at(100)));
        assert!(!b.take(at(150)));
        // A long pause refills to the burst, not beyond.
        assert_eq!((0..20).filter(|_| b.take(at(60_000))).count(), 5);
    }

    #[test]
    fn time_going_back_takes_nothing_extra() {
        let mut b = RxBudget::new(
            RxBudgetLimits {
                per_s: 10,
                burst: 1,
            },
            at(1000),
        );
        assert!(b.take(at(1000)));
        assert!(!b.take(at(500)));
        assert!(!b.take(at(1050)));
        assert!(b.take(at(1100)));
    }
}

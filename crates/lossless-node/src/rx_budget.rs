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

/// Which bucket a frame draws on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    /// An LLDPDU (EtherType 0x88CC).
    Lldp,
    /// Anything else: MAC Control (PFC, PAUSE), measurement frames.
    Other,
}

impl Traffic {
    /// The bucket of a whole Ethernet frame, by its EtherType (LLDPDUs are sent
    /// untagged).
    pub fn of(frame: &[u8]) -> Traffic {
        if frame.get(12..14) == Some(&[0x88, 0xcc]) {
            Traffic::Lldp
        } else {
            Traffic::Other
        }
    }
}

/// A port's two token buckets, one per [`Traffic`]; full when created.
#[derive(Debug, Clone)]
pub struct RxBudget {
    limits: RxBudgetLimits,
    lldp: Bucket,
    other: Bucket,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn take(&mut self, limits: RxBudgetLimits, now: Instant) -> bool {
        let elapsed = now.saturating_since(self.last).as_secs_f64();
        self.last = self.last.max(now);
        self.tokens =
            (self.tokens + elapsed * f64::from(limits.per_s)).min(f64::from(limits.burst));
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

impl RxBudget {
    pub fn new(limits: RxBudgetLimits, now: Instant) -> RxBudget {
        let full = Bucket {
            tokens: f64::from(limits.burst),
            last: now,
        };
        RxBudget {
            limits,
            lldp: full,
            other: full,
        }
    }

    pub fn limits(&self) -> RxBudgetLimits {
        self.limits
    }

    /// New limits (a reload); what is left is capped at the new burst.
    pub fn set_limits(&mut self, limits: RxBudgetLimits) {
        self.limits = limits;
        for b in [&mut self.lldp, &mut self.other] {
            b.tokens = b.tokens.min(f64::from(limits.burst));
        }
    }

    /// Takes one frame's worth of `traffic`'s bucket at `now`: false when it is
    /// spent.
    pub fn take(&mut self, now: Instant, traffic: Traffic) -> bool {
        let limits = self.limits;
        match traffic {
            Traffic::Lldp => self.lldp.take(limits, now),
            Traffic::Other => self.other.take(limits, now),
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
        assert_eq!((0..20).filter(|_| b.take(at(0), Traffic::Other)).count(), 5);
        // 10 per second: one every 100 ms.
        assert!(!b.take(at(50), Traffic::Other));
        assert!(b.take(at(100), Traffic::Other));
        assert!(!b.take(at(150), Traffic::Other));
        // A long pause refills to the burst, not beyond.
        assert_eq!(
            (0..20)
                .filter(|_| b.take(at(60_000), Traffic::Other))
                .count(),
            5
        );
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
        assert!(b.take(at(1000), Traffic::Other));
        assert!(!b.take(at(500), Traffic::Other));
        assert!(!b.take(at(1050), Traffic::Other));
        assert!(b.take(at(1100), Traffic::Other));
    }

    /// A flood of PFC frames spends the other bucket, not the LLDPDUs'.
    #[test]
    fn lldpdus_and_other_frames_have_a_bucket_each() {
        let mut b = RxBudget::new(
            RxBudgetLimits {
                per_s: 10,
                burst: 3,
            },
            at(0),
        );
        let pfc = [[0u8; 12].as_slice(), &[0x88, 0x08, 1, 1]].concat();
        let lldp = [[0u8; 12].as_slice(), &[0x88, 0xcc, 2, 7]].concat();
        assert_eq!(
            (Traffic::of(&pfc), Traffic::of(&lldp)),
            (Traffic::Other, Traffic::Lldp)
        );
        assert_eq!(
            Traffic::of(&[0x88; 13]),
            Traffic::Other,
            "too short for an EtherType"
        );
        assert_eq!(
            (0..100)
                .filter(|_| b.take(at(0), Traffic::of(&pfc)))
                .count(),
            3
        );
        assert_eq!(
            (0..100)
                .filter(|_| b.take(at(0), Traffic::of(&lldp)))
                .count(),
            3
        );
        // A reload caps both.
        b.set_limits(RxBudgetLimits {
            per_s: 10,
            burst: 1,
        });
        assert_eq!(
            (0..100).filter(|_| b.take(at(1000), Traffic::Lldp)).count(),
            1
        );
        assert_eq!(
            (0..100)
                .filter(|_| b.take(at(1000), Traffic::Other))
                .count(),
            1
        );
    }
}

//! The receive budget of a port: how many frames per second it processes (token
//! buckets). A broken or hostile device on the link can send hundreds of thousands of
//! frames a second; each one the agent parses costs microseconds on the one thread
//! that runs every port. Past the budget, frames are counted and dropped before they
//! are parsed, and the port is given a packet socket of its own.
//!
//! The DCBX peer (its MSAP, or its MAC for MAC Control) is budgeted too, apart from
//! everyone else and with a larger allowance: a device that copies the peer's MSAP
//! from one LLDPDU would otherwise pass unbudgeted. Its LLDPDUs have a bucket of their
//! own as large as the others' (an 802.1AB agent sends one a second, a few more during
//! fast transmission and at a change: `txCreditMax` is 5), so a flood of strangers'
//! LLDPDUs cannot starve it; its other frames (PFC and PAUSE, which a storm makes
//! legitimately frequent) [`PEER_OTHER_FACTOR`] times as large.

use lossless_dcbx::Instant;

/// `rx_budget_per_s` by default: frames per second of each bucket.
pub const DEFAULT_RX_BUDGET_PER_S: u32 = 100;
/// `rx_budget_burst` by default: how many such frames may come at once.
pub const DEFAULT_RX_BUDGET_BURST: u32 = 200;
/// The DCBX peer's frames other than LLDPDUs (MAC Control) may come this many times
/// as often as the configured budget: 1,000 a second, 2,000 at once by default.
pub const PEER_OTHER_FACTOR: u32 = 10;

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

impl RxBudgetLimits {
    /// The limits of one bucket: the configured ones, or for the peer's other frames
    /// [`PEER_OTHER_FACTOR`] times them.
    pub fn of(self, sender: Sender, traffic: Traffic) -> RxBudgetLimits {
        match (sender, traffic) {
            (Sender::Peer, Traffic::Other) => RxBudgetLimits {
                per_s: self.per_s.saturating_mul(PEER_OTHER_FACTOR),
                burst: self.burst.saturating_mul(PEER_OTHER_FACTOR),
            },
            _ => self,
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

/// Who sent a frame, as far as the budget is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// The port's DCBX peer: an LLDPDU with its MSAP, any other frame from its MAC.
    Peer,
    /// Anyone else (every sender while the port has no peer).
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

/// A port's four token buckets, one per [`Sender`] and [`Traffic`]; full when
/// created. Compact (32 bytes): one refill time for all four, in nanoseconds, tokens
/// as `f32`.
#[derive(Debug, Clone)]
pub struct RxBudget {
    limits: RxBudgetLimits,
    /// When the buckets were last refilled, ns since the clock's epoch.
    last_ns: u64,
    /// Tokens left, by [`RxBudget::index`].
    tokens: [f32; 4],
}

fn nanos(t: Instant) -> u64 {
    u64::try_from(t.since_epoch().as_nanos()).unwrap_or(u64::MAX)
}

const BUCKETS: [(Sender, Traffic); 4] = [
    (Sender::Other, Traffic::Lldp),
    (Sender::Other, Traffic::Other),
    (Sender::Peer, Traffic::Lldp),
    (Sender::Peer, Traffic::Other),
];

impl RxBudget {
    pub fn new(limits: RxBudgetLimits, now: Instant) -> RxBudget {
        RxBudget {
            limits,
            last_ns: nanos(now),
            tokens: BUCKETS.map(|(s, t)| limits.of(s, t).burst as f32),
        }
    }

    fn index(sender: Sender, traffic: Traffic) -> usize {
        match (sender, traffic) {
            (Sender::Other, Traffic::Lldp) => 0,
            (Sender::Other, Traffic::Other) => 1,
            (Sender::Peer, Traffic::Lldp) => 2,
            (Sender::Peer, Traffic::Other) => 3,
        }
    }

    pub fn limits(&self) -> RxBudgetLimits {
        self.limits
    }

    /// New limits (a reload); what is left is capped at the new bursts.
    pub fn set_limits(&mut self, limits: RxBudgetLimits) {
        self.limits = limits;
        for (i, (s, t)) in BUCKETS.into_iter().enumerate() {
            self.tokens[i] = self.tokens[i].min(limits.of(s, t).burst as f32);
        }
    }

    /// Takes one frame's worth of the bucket of `sender`'s `traffic` at `now`: false
    /// when it is spent. Time going back refills nothing.
    pub fn take(&mut self, now: Instant, sender: Sender, traffic: Traffic) -> bool {
        let now_ns = nanos(now);
        if now_ns > self.last_ns {
            let elapsed = (now_ns - self.last_ns) as f64 / 1e9;
            self.last_ns = now_ns;
            for (i, (s, t)) in BUCKETS.into_iter().enumerate() {
                let l = self.limits.of(s, t);
                let filled = f64::from(self.tokens[i]) + elapsed * f64::from(l.per_s);
                self.tokens[i] = filled.min(f64::from(l.burst)) as f32;
            }
        }
        let tokens = &mut self.tokens[RxBudget::index(sender, traffic)];
        if *tokens >= 1.0 {
            *tokens -= 1.0;
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
        assert_eq!(
            (0..20)
                .filter(|_| b.take(at(0), Sender::Other, Traffic::Other))
                .count(),
            5
        );
        // 10 per second: one every 100 ms.
        assert!(!b.take(at(50), Sender::Other, Traffic::Other));
        assert!(b.take(at(100), Sender::Other, Traffic::Other));
        assert!(!b.take(at(150), Sender::Other, Traffic::Other));
        // A long pause refills to the burst, not beyond.
        assert_eq!(
            (0..20)
                .filter(|_| b.take(at(60_000), Sender::Other, Traffic::Other))
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
        assert!(b.take(at(1000), Sender::Other, Traffic::Other));
        assert!(!b.take(at(500), Sender::Other, Traffic::Other));
        assert!(!b.take(at(1050), Sender::Other, Traffic::Other));
        assert!(b.take(at(1100), Sender::Other, Traffic::Other));
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
                .filter(|_| b.take(at(0), Sender::Other, Traffic::of(&pfc)))
                .count(),
            3
        );
        assert_eq!(
            (0..100)
                .filter(|_| b.take(at(0), Sender::Other, Traffic::of(&lldp)))
                .count(),
            3
        );
        // A reload caps both.
        b.set_limits(RxBudgetLimits {
            per_s: 10,
            burst: 1,
        });
        assert_eq!(
            (0..100)
                .filter(|_| b.take(at(1000), Sender::Other, Traffic::Lldp))
                .count(),
            1
        );
        assert_eq!(
            (0..100)
                .filter(|_| b.take(at(1000), Sender::Other, Traffic::Other))
                .count(),
            1
        );
    }

    /// The DCBX peer is budgeted too (issue 29, item 1: a copied MSAP passed
    /// unbudgeted), in buckets of its own: strangers cannot spend its LLDPDUs' and
    /// its PFC frames may come [`PEER_OTHER_FACTOR`] times as often.
    #[test]
    fn the_peer_has_a_budget_of_its_own_and_a_larger_one_for_mac_control() {
        let limits = RxBudgetLimits {
            per_s: 10,
            burst: 3,
        };
        let mut b = RxBudget::new(limits, at(0));
        let taken = |b: &mut RxBudget, ms: u64, s: Sender, t: Traffic| {
            (0..1000).filter(|_| b.take(at(ms), s, t)).count()
        };
        // Strangers spend theirs; the peer's LLDPDUs still have 3, then none.
        assert_eq!(taken(&mut b, 0, Sender::Other, Traffic::Lldp), 3);
        assert_eq!(taken(&mut b, 0, Sender::Peer, Traffic::Lldp), 3);
        assert!(
            !b.take(at(0), Sender::Peer, Traffic::Lldp),
            "the peer's LLDPDUs are budgeted"
        );
        // Its MAC Control: ten times the burst, then ten times the rate.
        assert_eq!(taken(&mut b, 0, Sender::Peer, Traffic::Other), 30);
        assert_eq!(taken(&mut b, 100, Sender::Peer, Traffic::Other), 10);
        assert_eq!(
            taken(&mut b, 100, Sender::Other, Traffic::Other),
            3,
            "untouched: full"
        );
        assert_eq!(taken(&mut b, 100, Sender::Peer, Traffic::Lldp), 1);
        // One refill time for all four buckets: each at its own rate, capped at its burst.
        assert_eq!(taken(&mut b, 60_000, Sender::Peer, Traffic::Other), 30);
        assert_eq!(taken(&mut b, 60_000, Sender::Peer, Traffic::Lldp), 3);
        // A reload caps the peer's too.
        b.set_limits(RxBudgetLimits {
            per_s: 10,
            burst: 1,
        });
        assert_eq!(taken(&mut b, 120_000, Sender::Peer, Traffic::Other), 10);
        assert_eq!(
            limits.of(Sender::Peer, Traffic::Other),
            RxBudgetLimits {
                per_s: 100,
                burst: 30
            }
        );
    }
}

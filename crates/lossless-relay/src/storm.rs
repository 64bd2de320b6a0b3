//! The storm ceiling: a PFC storm in one DC must not flood the WAN, yet the
//! far gateway must always learn that a priority was paused, and that it was
//! resumed.
//!
//! Everything here is per priority p (0..=7), and counts *priority
//! instances*: a frame whose class-enable vector has bit p set concerns p; it
//! *pauses* p if its pause time for p is nonzero and *resumes* p if it is 0.
//!
//! **Episode.** An episode of p begins with a pause for p that arrives while p
//! has no open episode, and ends once no frame concerning p has arrived for
//! `episode_gap` (default 100 ms; longer than the longest pause, 65535 quanta
//! = 33.6 ms at 1 Gb/s, so a pause the gateway let expire instead of resuming
//! also ends its episode). Its *first pause* is that opening frame; its *final
//! resume* is its last frame concerning p when that frame resumes p. Frames
//! that arrive less than `episode_gap` apart belong to one episode however
//! often p flaps between pause and resume, so flapping cannot multiply the
//! frames the ceiling lets through unconditionally.
//!
//! **Ceiling.** Each priority has a token bucket: `max_per_second` tokens a
//! second, at most `burst` held (default `max_per_second`). Relaying p costs
//! one token. In an episode, a frame's instance of p is relayed if a token is
//! there and suppressed if not; the latest suppressed value of p is kept as
//! *pending*.
//!
//! **Guarantees.**
//! 1. The first pause of an episode is relayed when it arrives, token or not
//!    (it takes one if there is one; it never borrows).
//! 2. The latest state of p reaches the far side: a pending value is sent,
//!    as a PFC frame built from the last suppressed one, as soon as a token is
//!    there, and at the latest when the episode ends, token or not. So the
//!    final resume of an episode is always relayed: at once if the ceiling
//!    allows, else at most `min(1/max_per_second, episode_gap)` later.
//! 3. Over any interval of length T, the instances of p relayed with a token
//!    number at most `burst + max_per_second * T`; the only others are first
//!    pauses (at most one per episode) and end-of-episode flushes (at most one
//!    per episode).
//!
//! A frame with several priorities is relayed with the priorities that may
//! go: the others are cleared from its class-enable vector and their pause
//! times zeroed (they are pending). A resume for p outside any episode (p is
//! already resumed on the far side) is relayed with a token and otherwise
//! dropped, not kept.

use std::time::Duration;

use lossless_dcbx::Instant;
use serde::{Deserialize, Serialize};

/// Token units per frame: tokens are counted in billionths of a frame, so a
/// rate in frames per second refills exactly `rate` units per nanosecond.
const UNIT: u128 = 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Episode {
    started: Instant,
    last_seen: Instant,
}

#[derive(Debug, Clone, Copy)]
struct Priority {
    /// Token units held at `refilled`.
    tokens: u128,
    refilled: Instant,
    episode: Option<Episode>,
    pending: Option<u16>,
    counters: PriorityCounters,
}

/// Per-priority counters, in priority instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriorityCounters {
    /// Episodes begun, i.e. first pauses relayed.
    pub episodes: u64,
    /// Instances relayed, by any path.
    pub relayed: u64,
    /// Instances relayed without a token: first pauses and end-of-episode
    /// flushes that found the bucket empty.
    pub bypassed: u64,
    /// Instances held back (kept pending, or a stray resume dropped).
    pub suppressed: u64,
    /// Pending values sent later in a frame of their own.
    pub flushed: u64,
}

/// A priority's state for `relay show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriorityStatus {
    pub priority: u8,
    pub in_episode: bool,
    /// The value waiting for a token (0 = resume).
    pub pending: Option<u16>,
    /// Whole tokens in the bucket at the last update.
    pub tokens: u64,
    #[serde(flatten)]
    pub counters: PriorityCounters,
}

/// What to do with one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Priorities to relay (subset of the frame's vector).
    pub relay: u8,
    /// Priorities held back.
    pub suppress: u8,
}

/// A frame the guard wants sent on its own: `class_enable` with `quanta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flush {
    pub class_enable: u8,
    pub quanta: [u16; 8],
}

/// The per-priority ceiling. Time only comes in as `now`.
#[derive(Debug, Clone)]
pub struct StormGuard {
    rate: u32,
    burst: u32,
    gap: Duration,
    prio: [Priority; 8],
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

impl StormGuard {
    /// `rate` frames per second per priority, `burst` at most held (both at
    /// least 1; 0 is taken as 1), episodes ending after `gap` of silence.
    /// Buckets start full.
    pub fn new(now: Instant, rate: u32, burst: u32, gap: Duration) -> StormGuard {
        let (rate, burst) = (rate.max(1), burst.max(1));
        let p = Priority {
            tokens: u128::from(burst) * UNIT,
            refilled: now,
            episode: None,
            pending: None,
            counters: PriorityCounters::default(),
        };
        StormGuard {
            rate,
            burst,
            gap,
            prio: [p; 8],
        }
    }

    pub fn rate(&self) -> u32 {
        self.rate
    }

    pub fn burst(&self) -> u32 {
        self.burst
    }

    pub fn gap(&self) -> Duration {
        self.gap
    }

    fn cap(&self) -> u128 {
        u128::from(self.burst) * UNIT
    }

    fn refill(&mut self, p: usize, now: Instant) {
        let cap = self.cap();
        let rate = u128::from(self.rate);
        let s = &mut self.prio[p];
        if now > s.refilled {
            let add = nanos(now - s.refilled).saturating_mul(rate);
            s.tokens = s.tokens.saturating_add(add).min(cap);
            s.refilled = now;
        }
    }

    fn take(&mut self, p: usize) -> bool {
        let s = &mut self.prio[p];
        if s.tokens >= UNIT {
            s.tokens -= UNIT;
            true
        } else {
            false
        }
    }

    /// When priority `p` will hold a whole token, given no spending.
    fn token_at(&self, p: usize) -> Instant {
        let s = &self.prio[p];
        if s.tokens >= UNIT {
            return s.refilled;
        }
        let need = UNIT - s.tokens;
        let wait = need.div_ceil(u128::from(self.rate));
        s.refilled + Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
    }

    /// When `p`'s pending value goes out: the first token or the end of the
    /// episode.
    fn flush_at(&self, p: usize) -> Option<Instant> {
        let s = &self.prio[p];
        s.pending?;
        let close = s.episode.map(|e| e.last_seen + self.gap);
        let token = self.token_at(p);
        Some(close.map_or(token, |c| c.min(token)))
    }

    /// Ends the episode of `p` if it has been silent for the gap; its
    /// pending value must have been flushed already (see [`Self::flush_due`]).
    fn close_if_over(&mut self, p: usize, now: Instant) {
        let gap = self.gap;
        let s = &mut self.prio[p];
        if let Some(e) = s.episode {
            if now >= e.last_seen + gap && s.pending.is_none() {
                s.episode = None;
            }
        }
    }

    /// Decides a legal frame's fate at `now`. Call [`Self::flush_due`] first
    /// so that anything due earlier goes out before it.
    pub fn admit(&mut self, now: Instant, class_enable: u8, quanta: &[u16; 8]) -> Decision {
        let mut d = Decision {
            relay: 0,
            suppress: 0,
        };
        for (p, &q) in quanta.iter().enumerate() {
            let bit = 1u8 << p;
            if class_enable & bit == 0 {
                continue;
            }
            self.refill(p, now);
            self.close_if_over(p, now);
            let open = self.prio[p].episode.is_some();
            if !open && q > 0 {
                // Guarantee 1: the first pause goes, token or not.
                let had = self.take(p);
                let s = &mut self.prio[p];
                s.episode = Some(Episode {
                    started: now,
                    last_seen: now,
                });
                s.pending = None;
                s.counters.episodes += 1;
                s.counters.relayed += 1;
                if !had {
                    s.counters.bypassed += 1;
                }
                d.relay |= bit;
                continue;
            }
            let had = self.take(p);
            let s = &mut self.prio[p];
            if let Some(e) = s.episode.as_mut() {
                e.last_seen = now;
            }
            if had {
                s.pending = None;
                s.counters.relayed += 1;
                d.relay |= bit;
            } else {
                s.counters.suppressed += 1;
                d.suppress |= bit;
                if open {
                    s.pending = Some(q);
                }
            }
        }
        d
    }

    /// The next instant [`Self::flush_due`] has work, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        (0..8).filter_map(|p| self.flush_at(p)).min()
    }

    /// Takes the pending values due by `now` (all that fall due at the
    /// earliest due instant go in one frame) and ends episodes whose gap has
    /// passed. Call until it returns `None`.
    pub fn flush_due(&mut self, now: Instant) -> Option<Flush> {
        let first = (0..8)
            .filter_map(|p| self.flush_at(p).filter(|at| *at <= now))
            .min();
        let Some(at) = first else {
            for p in 0..8 {
                self.close_if_over(p, now);
            }
            return None;
        };
        let mut flush = Flush {
            class_enable: 0,
            quanta: [0; 8],
        };
        for p in 0..8 {
            if self.flush_at(p) != Some(at) {
                continue;
            }
            self.refill(p, at);
            let had = self.take(p);
            let s = &mut self.prio[p];
            let Some(q) = s.pending.take() else {
                continue;
            };
            s.counters.relayed += 1;
            s.counters.flushed += 1;
            if !had {
                s.counters.bypassed += 1;
            }
            flush.class_enable |= 1 << p;
            flush.quanta[p] = q;
        }
        Some(flush)
    }

    pub fn counters(&self, p: usize) -> PriorityCounters {
        self.prio[p].counters
    }

    pub fn in_episode(&self, p: usize) -> bool {
        self.prio[p].episode.is_some()
    }

    pub fn episode_started(&self, p: usize) -> Option<Instant> {
        self.prio[p].episode.map(|e| e.started)
    }

    pub fn pending(&self, p: usize) -> Option<u16> {
        self.prio[p].pending
    }

    pub fn status(&self) -> [PriorityStatus; 8] {
        std::array::from_fn(|p| {
            let s = &self.prio[p];
            PriorityStatus {
                priority: p as u8,
                in_episode: s.episode.is_some(),
                pending: s.pending,
                tokens: u64::try_from(s.tokens / UNIT).unwrap_or(u64::MAX),
                counters: s.counters,
            }
        })
    }

    /// Instances held back, all priorities.
    pub fn suppressed(&self) -> u64 {
        self.prio.iter().map(|s| s.counters.suppressed).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_duration(Duration::from_millis(ms))
    }

    fn q(p: usize, v: u16) -> [u16; 8] {
        let mut a = [0; 8];
        a[p] = v;
        a
    }

    #[test]
    fn tokens_refill_at_the_rate_and_stop_at_the_burst() {
        let mut g = StormGuard::new(t(0), 10, 2, Duration::from_millis(100));
        g.prio[0].episode = Some(Episode {
            started: t(0),
            last_seen: t(0),
        });
        assert_eq!(g.admit(t(0), 1, &q(0, 5)).relay, 1);
        assert_eq!(g.admit(t(0), 1, &q(0, 5)).relay, 1);
        assert_eq!(g.admit(t(0), 1, &q(0, 5)).relay, 0, "burst of 2 spent");
        // 10/s: one token every 100 ms, not before.
        assert_eq!(g.token_at(0), t(100));
        assert_eq!(g.admit(t(99), 1, &q(0, 5)).relay, 0);
        assert_eq!(g.admit(t(100), 1, &q(0, 5)).relay, 1);
        // A long silence refills to the burst only.
        g.refill(0, t(10_000));
        assert_eq!(g.prio[0].tokens, 2 * UNIT);
    }

    #[test]
    fn token_time_rounds_up_to_the_nanosecond() {
        // 3/s: a token every 333,333,333.3 ns.
        let mut g = StormGuard::new(t(0), 3, 1, Duration::from_millis(100));
        assert!(g.take(0));
        assert_eq!(
            g.token_at(0),
            Instant::from_duration(Duration::from_nanos(333_333_334))
        );
    }
}

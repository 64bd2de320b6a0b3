//! The storm ceiling: a PFC storm in one DC must not flood the WAN, yet the
//! far gateway must stay paused for as long as the near one asks, and learn
//! that a priority was resumed.
//!
//! Everything here is per priority p (0..=7), and counts *priority
//! instances*: a frame whose class-enable vector has bit p set concerns p; it
//! *pauses* p if its pause time for p is nonzero and *resumes* p if it is 0.
//!
//! **Episode.** An episode of p begins with a pause for p that arrives while p
//! has no open episode, and ends once no frame concerning p has arrived for
//! `episode_gap` (default 100 ms; longer than the longest pause, 65,535
//! quanta are 33.6 ms at 1 Gb/s). Its *first
//! pause* is that opening frame; its *final resume* is its last frame
//! concerning p when that frame resumes p.
//!
//! **The far side's pause.** A pause of q quanta stops the receiver for
//! q x 512 bit times at the speed of the link it arrives on
//! (`storm.link_speed`, default 100 Gb/s: 65,535 quanta are 335.5 us). From
//! what it relayed the guard knows until when the far gateway is paused
//! (every relayed frame crosses the same path, so the WAN delay shifts start
//! and end alike). A *refresh* is a pause for p that arrives while the far
//! side is still paused by what was already relayed, with more than the
//! *margin* left: `min(refresh_before, half the relayed pause)`, default
//! `refresh_before` 50 us, the WAN's jitter allowance.
//!
//! **Rules.**
//! 1. The first pause of an episode is relayed at once.
//! 2. A refresh is held back. If the near side still wants p paused when the
//!    far side's pause is one margin from lapsing, a pause is sent then,
//!    carrying what is left of the near side's latest pause (rounded up
//!    to whole quanta): the far side stays paused without a gap and the WAN
//!    carries one frame per priority per pause time (less the margin) however
//!    fast the near gateway refreshes.
//! 3. Any other pause in an episode (the far side was resumed, or its pause
//!    lapses within the margin) is relayed at once.
//! 4. A resume in an episode is relayed if a token is there; otherwise it is
//!    held, and sent when a token comes or at the latest when the episode
//!    ends, token or not: the final resume always crosses. A resume outside
//!    any episode (the far side is resumed already) goes with a token and is
//!    dropped without one.
//!
//! Tokens: each priority has a bucket of `max_per_second` tokens a second, at
//! most `burst` held (default `max_per_second`), full at start; a resume
//! costs one (pauses never do: the bucket stays for the resumes). So over any interval T a priority's
//! resumes relayed number at most `burst + max_per_second x T` plus one per
//! episode, and its pauses relayed are first pauses (one per episode), pauses
//! after a relayed resume (one per resume), and pauses that keep the far side
//! paused (one per pause time less the margin while the near side asks).
//! Flapping cannot multiply them.
//!
//! A frame with several priorities is relayed with the priorities that may
//! go: the others are cleared from its class-enable vector and their pause
//! times zeroed (they are held). Values of several priorities due at the same
//! instant share one frame.

use std::time::Duration;

use lossless_time::Instant;
use serde::{Deserialize, Serialize};

pub use crate::pause::PauseClock;

/// Token units per frame: tokens are counted in billionths of a frame, so a
/// rate in frames per second refills exactly `rate` units per nanosecond.
const UNIT: u128 = 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Episode {
    last_seen: Instant,
}

/// What the far gateway was last told about a priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Far {
    Resumed,
    /// Paused until `until`; a refresh is due at `refresh_at`.
    Paused {
        until: Instant,
        refresh_at: Instant,
    },
}

/// The latest state of a priority that was not relayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Nothing,
    /// A resume waiting for a token or the end of the episode.
    Resume,
    /// A refresh: the near side wants the priority paused until `until`
    /// (its latest pause, of `quanta`).
    Refresh {
        until: Instant,
        quanta: u16,
    },
}

#[derive(Debug, Clone, Copy)]
struct Priority {
    /// Token units held at `refilled`.
    tokens: u128,
    refilled: Instant,
    episode: Option<Episode>,
    far: Far,
    held: Held,
    counters: PriorityCounters,
}

/// Per-priority counters, in priority instances.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriorityCounters {
    /// Episodes begun, i.e. first pauses relayed.
    pub episodes: u64,
    /// Instances relayed, by any path.
    pub relayed: u64,
    /// Instances relayed without a token: every pause (pauses are bounded
    /// by the pause time, not the bucket) and the end-of-episode resumes
    /// that found the bucket empty.
    pub bypassed: u64,
    /// Instances held back (a refresh while the far side is paused, a resume
    /// waiting for a token, or a stray resume dropped).
    pub suppressed: u64,
    /// Held values sent later in a frame of their own.
    pub flushed: u64,
    /// Of `flushed`: pauses sent because the far side's pause would have
    /// lapsed while the near side still asked for it.
    #[serde(default)]
    pub refreshed: u64,
}

/// A priority's state for `relay show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PriorityStatus {
    pub priority: u8,
    pub in_episode: bool,
    /// The value held back (0 = a resume waiting; otherwise the latest
    /// refresh's pause time).
    pub pending: Option<u16>,
    /// Until when the far side is paused by what was relayed, on the relay's
    /// clock (nanoseconds since its start); `None`: resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub far_paused_until_ns: Option<u64>,
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
    clock: PauseClock,
    prio: [Priority; 8],
}

fn nanos(d: Duration) -> u128 {
    d.as_nanos()
}

impl StormGuard {
    /// `rate` frames per second per priority, `burst` at most held (both at
    /// least 1; 0 is taken as 1), episodes ending after `gap` of silence,
    /// pauses timed by `clock`. Buckets start full.
    pub fn new(
        now: Instant,
        rate: u32,
        burst: u32,
        gap: Duration,
        clock: PauseClock,
    ) -> StormGuard {
        let (rate, burst) = (rate.max(1), burst.max(1));
        let p = Priority {
            tokens: u128::from(burst) * UNIT,
            refilled: now,
            episode: None,
            far: Far::Resumed,
            held: Held::Nothing,
            counters: PriorityCounters::default(),
        };
        StormGuard {
            rate,
            burst,
            gap,
            clock,
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

    pub fn clock(&self) -> &PauseClock {
        &self.clock
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

    /// When `p`'s held value is due: a resume at the first token or the end
    /// of the episode; a refresh one margin before the far side's pause
    /// lapses.
    fn flush_at(&self, p: usize) -> Option<Instant> {
        let s = &self.prio[p];
        let close = s.episode.map(|e| e.last_seen + self.gap);
        match (s.held, s.far) {
            (Held::Nothing, _) => None,
            (Held::Refresh { .. }, Far::Paused { refresh_at, .. }) => Some(refresh_at),
            (Held::Resume, _) | (Held::Refresh { .. }, Far::Resumed) => {
                let token = self.token_at(p);
                Some(close.map_or(token, |c| c.min(token)))
            }
        }
    }

    /// Whether the far side is paused for `p` by what was relayed, with more
    /// than the margin left at `now`.
    fn far_covers(&self, p: usize, now: Instant) -> bool {
        matches!(self.prio[p].far, Far::Paused { refresh_at, .. } if refresh_at > now)
    }

    /// Ends the episode of `p` if it has been silent for the gap; a held
    /// resume must have been sent already (see [`Self::flush_due`]). A held
    /// refresh outlives it: it is due when the far side's pause would lapse.
    fn close_if_over(&mut self, p: usize, now: Instant) {
        let gap = self.gap;
        let s = &mut self.prio[p];
        if let Some(e) = s.episode {
            if now >= e.last_seen + gap && s.held != Held::Resume {
                s.episode = None;
            }
        }
    }

    /// Records a pause of `quanta` for `p` relayed at `now`.
    /// Pauses never spend tokens: they are bounded by the pause time, and
    /// the bucket stays for the resumes.
    fn relayed_pause(&mut self, p: usize, now: Instant, quanta: u16) {
        let pause = self.clock.duration(quanta);
        let margin = self.clock.margin(pause);
        let s = &mut self.prio[p];
        s.far = Far::Paused {
            until: now + pause,
            refresh_at: now + (pause - margin),
        };
        s.held = Held::Nothing;
        s.counters.relayed += 1;
        s.counters.bypassed += 1;
    }

    /// Records a resume of `p` relayed.
    fn relayed_resume(&mut self, p: usize, had_token: bool) {
        let s = &mut self.prio[p];
        s.far = Far::Resumed;
        s.held = Held::Nothing;
        s.counters.relayed += 1;
        if !had_token {
            s.counters.bypassed += 1;
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
            if self.admit_one(p, now, q) {
                d.relay |= bit;
            } else {
                d.suppress |= bit;
            }
        }
        d
    }

    /// One priority instance: whether it is relayed.
    fn admit_one(&mut self, p: usize, now: Instant, q: u16) -> bool {
        let open = self.prio[p].episode.is_some();
        if let Some(e) = self.prio[p].episode.as_mut() {
            e.last_seen = now;
        }
        if q > 0 && !open {
            // Rule 1: the first pause goes at once.
            let s = &mut self.prio[p];
            s.episode = Some(Episode { last_seen: now });
            s.counters.episodes += 1;
            self.relayed_pause(p, now, q);
            return true;
        }
        if q > 0 {
            if self.far_covers(p, now) {
                // Rule 2: a refresh; sent later only if it would lapse.
                let s = &mut self.prio[p];
                s.held = Held::Refresh {
                    until: now + self.clock.duration(q),
                    quanta: q,
                };
                s.counters.suppressed += 1;
                return false;
            }
            // Rule 3: the far side is not (or no longer) paused.
            self.relayed_pause(p, now, q);
            return true;
        }
        // Rule 4: a resume. It is the latest state: no refresh is due.
        if matches!(self.prio[p].held, Held::Refresh { .. }) {
            self.prio[p].held = Held::Nothing;
        }
        if self.take(p) {
            self.relayed_resume(p, true);
            return true;
        }
        let s = &mut self.prio[p];
        s.counters.suppressed += 1;
        if open {
            s.held = Held::Resume;
        }
        false
    }

    /// The next instant [`Self::flush_due`] has work, if any.
    pub fn poll_timeout(&self) -> Option<Instant> {
        (0..8).filter_map(|p| self.flush_at(p)).min()
    }

    /// Takes the held values due by `now` (all that fall due at the earliest
    /// due instant go in one frame) and ends episodes whose gap has passed.
    /// Call until it returns `None`.
    pub fn flush_due(&mut self, now: Instant) -> Option<Flush> {
        loop {
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
                if let Some(q) = self.send_held(p, at) {
                    flush.class_enable |= 1 << p;
                    flush.quanta[p] = q;
                }
            }
            if flush.class_enable != 0 {
                return Some(flush);
            }
        }
    }

    /// Sends `p`'s held value at `at` if it is still needed; the value sent.
    fn send_held(&mut self, p: usize, at: Instant) -> Option<u16> {
        let held = std::mem::replace(&mut self.prio[p].held, Held::Nothing);
        let q = match (held, self.prio[p].far) {
            (Held::Nothing, _) => return None,
            (Held::Refresh { until, .. }, Far::Paused { until: far, .. }) => {
                if until <= far {
                    // The far side is paused as long as the near side asked.
                    return None;
                }
                let q = self.clock.quanta_for(until - at);
                self.relayed_pause(p, at, q);
                self.prio[p].counters.refreshed += 1;
                q
            }
            (Held::Refresh { quanta, .. }, Far::Resumed) => {
                self.relayed_pause(p, at, quanta);
                quanta
            }
            (Held::Resume, _) => {
                let had = self.take(p);
                self.relayed_resume(p, had);
                0
            }
        };
        self.prio[p].counters.flushed += 1;
        Some(q)
    }

    pub fn counters(&self, p: usize) -> PriorityCounters {
        self.prio[p].counters
    }

    pub fn in_episode(&self, p: usize) -> bool {
        self.prio[p].episode.is_some()
    }

    /// The held value of `p`: 0 for a resume, the pause time of a refresh.
    pub fn pending(&self, p: usize) -> Option<u16> {
        match self.prio[p].held {
            Held::Nothing => None,
            Held::Resume => Some(0),
            Held::Refresh { quanta, .. } => Some(quanta),
        }
    }

    /// Until when the far side is paused for `p` by what was relayed.
    pub fn far_paused_until(&self, p: usize) -> Option<Instant> {
        match self.prio[p].far {
            Far::Resumed => None,
            Far::Paused { until, .. } => Some(until),
        }
    }

    pub fn status(&self) -> [PriorityStatus; 8] {
        std::array::from_fn(|p| {
            let s = &self.prio[p];
            PriorityStatus {
                priority: p as u8,
                in_episode: s.episode.is_some(),
                pending: self.pending(p),
                far_paused_until_ns: self
                    .far_paused_until(p)
                    .map(|t| u64::try_from(t.since_epoch().as_nanos()).unwrap_or(u64::MAX)),
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

    fn us(us: u64) -> Instant {
        Instant::from_duration(Duration::from_micros(us))
    }

    fn q(p: usize, v: u16) -> [u16; 8] {
        let mut a = [0; 8];
        a[p] = v;
        a
    }

    fn clock_100g() -> PauseClock {
        PauseClock::new(100_000_000_000, Duration::from_micros(50))
    }

    #[test]
    fn tokens_refill_at_the_rate_and_stop_at_the_burst() {
        let mut g = StormGuard::new(t(0), 10, 2, Duration::from_millis(100), clock_100g());
        g.prio[0].episode = Some(Episode { last_seen: t(0) });
        // Resumes spend tokens.
        assert_eq!(g.admit(t(0), 1, &q(0, 0)).relay, 1);
        assert_eq!(g.admit(t(0), 1, &q(0, 0)).relay, 1);
        assert_eq!(g.admit(t(0), 1, &q(0, 0)).relay, 0, "burst of 2 spent");
        // 10/s: one token every 100 ms, not before.
        assert_eq!(g.token_at(0), t(100));
        // A long silence refills to the burst only.
        g.refill(0, t(10_000));
        assert_eq!(g.prio[0].tokens, 2 * UNIT);
    }

    #[test]
    fn token_time_rounds_up_to_the_nanosecond() {
        // 3/s: a token every 333,333,333.3 ns.
        let mut g = StormGuard::new(t(0), 3, 1, Duration::from_millis(100), clock_100g());
        assert!(g.take(0));
        assert_eq!(
            g.token_at(0),
            Instant::from_duration(Duration::from_nanos(333_333_334))
        );
    }

    #[test]
    fn a_refresh_is_held_while_the_far_side_is_paused_and_sent_before_it_lapses() {
        let mut g = StormGuard::new(t(0), 10, 10, Duration::from_millis(100), clock_100g());
        // First pause at 0: far paused until 335.539 us, refresh due 285.539 us.
        assert_eq!(g.admit(us(0), 1, &q(0, 0xffff)).relay, 1);
        // Refreshes every 10 us are held, whatever the tokens.
        for k in 1..=28 {
            assert_eq!(g.admit(us(10 * k), 1, &q(0, 0xffff)).suppress, 1, "{k}");
        }
        let due = Instant::from_duration(Duration::from_nanos(285_539));
        assert_eq!(g.poll_timeout(), Some(due));
        assert_eq!(
            g.flush_due(Instant::from_duration(Duration::from_nanos(285_538))),
            None
        );
        // At the deadline: what is left of the last refresh (280 us + 335.539 us).
        let f = g.flush_due(due).expect("a refresh");
        let left = Duration::from_nanos(280_000 + 335_539 - 285_539);
        assert_eq!(f.class_enable, 1);
        assert_eq!(f.quanta[0], g.clock.quanta_for(left));
        assert!(g.clock.duration(f.quanta[0]) >= left);
        assert_eq!(g.counters(0).refreshed, 1);
        assert_eq!(g.counters(0).suppressed, 28);
        assert_eq!(g.flush_due(due), None);
    }

    #[test]
    fn a_refresh_the_far_side_already_covers_sends_nothing() {
        let mut g = StormGuard::new(t(0), 10, 10, Duration::from_millis(100), clock_100g());
        assert_eq!(g.admit(us(0), 1, &q(0, 0xffff)).relay, 1);
        // A short pause the far side's long one outlasts.
        assert_eq!(g.admit(us(10), 1, &q(0, 100)).suppress, 1);
        let due = g.poll_timeout().expect("held");
        assert_eq!(g.flush_due(due), None);
        assert_eq!(g.pending(0), None);
        assert_eq!(g.counters(0).flushed, 0);
    }

    #[test]
    fn a_pause_after_the_far_side_lapsed_goes_at_once_without_a_token() {
        let mut g = StormGuard::new(t(0), 1, 1, Duration::from_millis(100), clock_100g());
        assert_eq!(g.admit(us(0), 1, &q(0, 0xffff)).relay, 1);
        // 1 ms later the 335 us pause is over: relayed, no token spent.
        assert_eq!(g.admit(us(1000), 1, &q(0, 0xffff)).relay, 1);
        assert_eq!(g.counters(0).bypassed, 2);
        assert_eq!(g.prio[0].tokens, UNIT);
        // Inside the margin (50 us before the lapse) it is not a refresh either.
        assert_eq!(g.admit(us(1000 + 290), 1, &q(0, 0xffff)).relay, 1);
        assert_eq!(g.counters(0).episodes, 1);
    }
}

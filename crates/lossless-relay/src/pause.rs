//! How long a PFC pause stops its receiver, and what a receiver's pause
//! state was over time: the storm ceiling times its refreshes with it, and
//! the lab and the tests check with it that the far side stayed paused.
//!
//! A pause of q quanta stops the receiver for q x 512 bit times at the speed
//! of the link it arrives on (IEEE 802.1Q-2018 clause 36); a later frame for
//! the same priority reloads the timer (a resume, 0 quanta, ends it).

use std::time::Duration;

use lossless_time::Instant;

/// Bit times in one pause quantum (IEEE 802.1Q-2018 clause 36: 512 bit times).
pub const QUANTUM_BITS: u128 = 512;
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// How long pauses last on the far gateway's link, and how early a pause that
/// keeps it paused is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PauseClock {
    speed_bps: u64,
    refresh_before: Duration,
}

impl PauseClock {
    /// `speed_bps` (at least 1) is the link the far gateway receives the
    /// relayed PFC on; `refresh_before` the margin kept before a relayed pause
    /// lapses.
    pub fn new(speed_bps: u64, refresh_before: Duration) -> PauseClock {
        PauseClock {
            speed_bps: speed_bps.max(1),
            refresh_before,
        }
    }

    pub fn speed_bps(&self) -> u64 {
        self.speed_bps
    }

    pub fn refresh_before(&self) -> Duration {
        self.refresh_before
    }

    /// How long `quanta` pause the receiver, rounded down to the nanosecond
    /// (the far side is paused at least that long).
    pub fn duration(&self, quanta: u16) -> Duration {
        let ns = u128::from(quanta) * QUANTUM_BITS * NANOS_PER_SEC / u128::from(self.speed_bps);
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// The fewest quanta (at most 65,535) that pause for at least `d`.
    pub fn quanta_for(&self, d: Duration) -> u16 {
        let q = (d.as_nanos() * u128::from(self.speed_bps)).div_ceil(QUANTUM_BITS * NANOS_PER_SEC);
        u16::try_from(q).unwrap_or(u16::MAX)
    }

    /// How long before a pause of `pause` lapses its refresh is sent.
    pub fn margin(&self, pause: Duration) -> Duration {
        self.refresh_before.min(pause / 2)
    }
}

/// One priority's pause state at a receiver, from the PFC frames it got.
#[derive(Debug, Clone)]
pub struct PauseTimeline {
    clock: PauseClock,
    priority: usize,
    /// Paused spans, start..end, in order and disjoint.
    spans: Vec<(Instant, Instant)>,
}

impl PauseTimeline {
    pub fn new(clock: PauseClock, priority: usize) -> PauseTimeline {
        PauseTimeline {
            clock,
            priority,
            spans: Vec::new(),
        }
    }

    /// A PFC frame received at `at` (frames in time order).
    pub fn frame(&mut self, at: Instant, class_enable: u8, quanta: &[u16; 8]) {
        let p = self.priority;
        if class_enable & (1 << p) == 0 {
            return;
        }
        let q = quanta[p];
        if let Some(last) = self.spans.last_mut() {
            if last.1 > at {
                // Reloaded or resumed: the old timer stops here.
                last.1 = at.max(last.0);
            }
        }
        if q == 0 {
            return;
        }
        let end = at + self.clock.duration(q);
        match self.spans.last_mut() {
            Some(last) if last.1 >= at => last.1 = end,
            _ => self.spans.push((at, end)),
        }
    }

    /// The paused spans, start..end.
    pub fn spans(&self) -> &[(Instant, Instant)] {
        &self.spans
    }

    /// The spans within `from..to` when the receiver was not paused.
    pub fn gaps(&self, from: Instant, to: Instant) -> Vec<(Instant, Instant)> {
        let mut gaps = Vec::new();
        let mut at = from;
        for &(s, e) in &self.spans {
            if e <= at {
                continue;
            }
            if s >= to {
                break;
            }
            if s > at {
                gaps.push((at, s));
            }
            at = at.max(e);
        }
        if at < to {
            gaps.push((at, to));
        }
        gaps
    }

    /// The first span when `other` was paused and this one was not.
    pub fn first_uncovered(&self, other: &PauseTimeline) -> Option<(Instant, Instant)> {
        other
            .spans
            .iter()
            .find_map(|&(s, e)| self.gaps(s, e).into_iter().next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(us: u64) -> Instant {
        Instant::from_duration(Duration::from_micros(us))
    }

    fn clock_100g() -> PauseClock {
        PauseClock::new(100_000_000_000, Duration::from_micros(50))
    }

    #[test]
    fn pause_times_follow_the_link_speed() {
        let c = clock_100g();
        // 65,535 x 512 bits at 100 Gb/s = 335,539.2 ns, rounded down.
        assert_eq!(c.duration(0xffff), Duration::from_nanos(335_539));
        assert_eq!(c.quanta_for(Duration::from_nanos(335_539)), 0xffff);
        assert_eq!(
            c.quanta_for(Duration::from_nanos(335_540)),
            0xffff,
            "capped"
        );
        // One quantum is 5.12 ns: 6 ns need two.
        assert_eq!(c.quanta_for(Duration::from_nanos(6)), 2);
        assert_eq!(c.duration(2), Duration::from_nanos(10));
        let slow = PauseClock::new(1_000_000_000, Duration::from_micros(50));
        assert_eq!(slow.duration(0xffff), Duration::from_nanos(33_553_920));
        // The margin: refresh_before, or half a short pause.
        assert_eq!(
            c.margin(Duration::from_micros(300)),
            Duration::from_micros(50)
        );
        assert_eq!(
            c.margin(Duration::from_micros(60)),
            Duration::from_micros(30)
        );
    }

    #[test]
    fn a_timeline_reloads_on_each_frame_and_ends_on_a_resume() {
        // 1G: 1000 quanta = 512 us.
        let c = PauseClock::new(1_000_000_000, Duration::from_micros(50));
        let mut t = PauseTimeline::new(c, 3);
        let one = |q: u16| {
            let mut a = [0; 8];
            a[3] = q;
            a
        };
        t.frame(us(0), 0x08, &one(1000));
        t.frame(us(100), 0x10, &one(0)); // another priority: ignored
        t.frame(us(500), 0x08, &one(1000)); // reload before the end
        t.frame(us(700), 0x08, &one(0)); // resume
        t.frame(us(2000), 0x08, &one(10)); // 5.12 us
        assert_eq!(
            t.spans(),
            &[
                (us(0), us(700)),
                (
                    us(2000),
                    Instant::from_duration(Duration::from_nanos(2_005_120))
                )
            ]
        );
        assert_eq!(t.gaps(us(0), us(3000))[0], (us(700), us(2000)));
        let mut far = PauseTimeline::new(c, 3);
        far.frame(us(0), 0x08, &one(2000));
        assert_eq!(far.gaps(us(0), us(1024)), vec![]);
        assert_eq!(
            far.first_uncovered(&t),
            Some((
                Instant::from_duration(Duration::from_nanos(2_000_000)),
                Instant::from_duration(Duration::from_nanos(2_005_120)),
            ))
        );
    }
}

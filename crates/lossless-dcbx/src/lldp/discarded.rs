//! The MSAPs whose information tooManyNeighbors discarded (IEEE 802.1AB-2016
//! §9.2.7.7.1: the remote MIB was full), each with its own deadlines, so that the
//! condition ends the moment the last of them ages out or shuts down instead of at the
//! longest TTL ever seen.
//!
//! Memory and time are bounded: at most [`TRACKED`] MSAPs are kept. Past that, the one
//! that would release the port first (its TTL or its hold ends first) gives way, so
//! the instant the last of them releases the port is kept exactly; one that gave way
//! and sends again comes back as a newcomer, and with more than [`TRACKED`] of them
//! alive a shutdown can end the condition while one that gave way still lives.

use std::collections::HashMap;

use crate::time::{Duration, Instant};

use super::msap::Msap;

/// MSAPs tracked one by one per port.
pub const TRACKED: usize = 64;

/// One discarded MSAP.
#[derive(Debug, Clone, Copy)]
pub(super) struct Extra {
    /// Its information would have aged out now (last LLDPDU + its TTL).
    pub expires: Instant,
    /// Since when it has shared the port with another neighbour (None: alone).
    pub sharing_since: Option<Instant>,
    /// The DCBX versions its last LLDPDU spoke (CEE, IEEE 802.1Qaz): all we keep of
    /// its information, so that the port can ask it in its version.
    pub speaks: Speaks,
}

/// The DCBX TLVs an LLDPDU carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Speaks {
    pub cee: bool,
    pub ieee: bool,
}

impl Extra {
    fn hold_end(&self, hold: Duration) -> Option<Instant> {
        self.sharing_since.map(|since| since + hold)
    }

    /// When it stops keeping the port from its peer: its TTL, or its hold.
    fn release(&self, hold: Duration) -> Instant {
        self.hold_end(hold)
            .map_or(self.expires, |end| end.min(self.expires))
    }
}

/// What aged out or stopped holding between two instants.
#[derive(Debug, Default)]
pub(super) struct Aged {
    pub gone: usize,
    pub hold_expired: Vec<Msap>,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Discarded {
    tracked: HashMap<Msap, Extra>,
    /// The entries share the port with another neighbour.
    sharing: bool,
    /// No deadline falls before this (for this hold): ageing has nothing to do until then.
    due: Option<(Instant, Duration)>,
}

impl Discarded {
    /// A discarded LLDPDU from `msap` with TTL `ttl` (not 0) at `now`. It shares the
    /// port from now on (the remote MIB that refused it is not empty).
    pub fn note(
        &mut self,
        now: Instant,
        msap: Msap,
        ttl: Duration,
        speaks: Speaks,
        hold: Duration,
    ) {
        let expires = now + ttl;
        let entry = match self.tracked.get_mut(&msap) {
            Some(e) => {
                e.expires = expires;
                e.speaks = speaks;
                e.sharing_since.get_or_insert(now);
                *e
            }
            None => {
                let new = Extra {
                    expires,
                    sharing_since: Some(now),
                    speaks,
                };
                if !self.make_room(new.release(hold), hold) {
                    return;
                }
                self.tracked.insert(msap, new);
                new
            }
        };
        let first = entry.hold_end(hold).map_or(expires, |end| end.min(expires));
        self.due = self.due.map(|(due, h)| (due.min(first), h));
    }

    /// With every place taken, the entry releasing the port first gives way to one
    /// releasing it at `release`, if that is later; false when the newcomer is the one
    /// left out.
    fn make_room(&mut self, release: Instant, hold: Duration) -> bool {
        if self.tracked.len() < TRACKED {
            return true;
        }
        let first = self
            .tracked
            .iter()
            .min_by_key(|(_, e)| e.release(hold))
            .filter(|(_, e)| e.release(hold) < release)
            .map(|(m, _)| m.clone());
        first.is_some_and(|m| self.tracked.remove(&m).is_some())
    }

    /// A shutdown LLDPDU from `msap`: forgotten. True if it was tracked.
    pub fn shutdown(&mut self, msap: &Msap) -> bool {
        self.tracked.remove(msap).is_some()
    }

    /// The entry of an MSAP the remote MIB now takes in (it keeps its hold).
    pub fn take(&mut self, msap: &Msap) -> Option<Extra> {
        self.tracked.remove(msap)
    }

    /// Ages entries out at `now`; reports the holds that ended after `since`.
    pub fn age(&mut self, since: Instant, now: Instant, hold: Duration) -> Aged {
        let mut aged = Aged::default();
        if self.due.is_some_and(|(due, h)| h == hold && due > now) {
            return aged;
        }
        self.tracked.retain(|msap, e| {
            if let Some(end) = e.hold_end(hold) {
                if end > since && end <= now && end < e.expires {
                    aged.hold_expired.push(msap.clone());
                }
            }
            let keep = e.expires > now;
            aged.gone += usize::from(!keep);
            keep
        });
        let due = self.deadlines(now, hold).min();
        self.due = Some((due.unwrap_or(Instant::from_duration(Duration::MAX)), hold));
        aged
    }

    /// Every deadline after `after`: TTLs, and the ends of holds.
    fn deadlines(&self, after: Instant, hold: Duration) -> impl Iterator<Item = Instant> + '_ {
        self.tracked
            .values()
            .flat_map(move |e| [Some(e.expires), e.hold_end(hold)])
            .flatten()
            .filter(move |t| *t > after)
    }

    /// How many MSAPs live.
    pub fn live(&self) -> usize {
        self.tracked.len()
    }

    /// The only one, if there is exactly one.
    pub fn only(&self) -> Option<&Extra> {
        let mut all = self.tracked.values();
        all.next().filter(|_| all.next().is_none())
    }

    /// Some discarded MSAP still holds the port at `now`.
    pub fn holding(&self, now: Instant, hold: Duration) -> bool {
        self.tracked
            .values()
            .any(|e| e.hold_end(hold).is_none_or(|end| now < end))
    }

    /// Every entry shares the port from `now` (if it did not already), or none does.
    pub fn set_sharing(&mut self, now: Instant, sharing: bool) {
        if sharing == self.sharing {
            return;
        }
        self.sharing = sharing;
        for e in self.tracked.values_mut() {
            e.sharing_since = sharing.then_some(e.sharing_since.unwrap_or(now));
        }
        self.due = None;
    }

    /// The next instant after `after` at which an entry ages out or stops holding.
    pub fn next_deadline(&self, after: Instant, hold: Duration) -> Option<Instant> {
        match self.due {
            Some((due, h)) if h == hold && due > after => {
                Some(due).filter(|t| *t < Instant::from_duration(Duration::MAX))
            }
            _ => self.deadlines(after, hold).min(),
        }
    }

    pub fn clear(&mut self) {
        *self = Discarded::default();
    }
}

//! Dampening a peer that keeps changing what it advertises, sans-IO (time is a
//! parameter): the NIC is programmed at most once per `nic_hold_ms` with the latest
//! operational configuration, a peer whose changes keep coming is *flapping* (an
//! event, a health problem, a metric), and while it flaps the churn of DCBX events
//! is summarised per window instead of logged and kept one by one.
//!
//! - **NIC hold-down.** Programmings have a credit, as LLDP's transmissions do
//!   (802.1AB's txCredit): [`NIC_BURST`] at once, one more each `nic_hold_ms`. A
//!   link-up's negotiation (the DCBX version's change, the peer's configuration, its
//!   acknowledgement) goes at once; past the credit, a programming waits for the next
//!   one and then programs whatever runs by then: every change in between is
//!   coalesced into one programming (`lossless_nic_programs_coalesced_total`). Real
//!   drivers reconfigure queues, and ice restarts its firmware's DCB, on every call;
//!   lldpad programs on every change with no hold at all, which is what a flapping
//!   switch port turns into a storm.
//! - **Flapping.** An input after which the port runs something else because of what
//!   the peer advertises (an operational configuration, a DCBX version, a feature's
//!   error) is a change. More than [`FLAP_CHANGES`] in a window of
//!   [`FLAP_WINDOW`] and the peer is flapping; it stops flapping after
//!   [`FLAP_QUIET_WINDOWS`] windows in a row without a change.
//! - **Summaries.** While the peer flaps, the events of the churn are counted, not
//!   logged or kept in the event history; each window ends with one summary ("N
//!   changes in the last 10 s", M events not kept).
//!
//! The state lives in a box a port holds only while there is something to remember
//! (a hold running, a window open, or counters to report): a settled port pays a
//! pointer.

use lossless_dcbx::{Duration, Event, Instant};

pub use crate::config::{NIC_HOLD_MAX_MS, NIC_HOLD_MS};

/// Programmings that may go at once after a quiet spell (the credit's maximum).
pub const NIC_BURST: u8 = 3;
/// The window flapping is judged and summarised over.
pub const FLAP_WINDOW: Duration = Duration::from_secs(10);
/// More changes than this in one window: flapping.
pub const FLAP_CHANGES: u32 = 10;
/// Windows in a row without a change after which a peer no longer flaps (30 s).
pub const FLAP_QUIET_WINDOWS: u8 = 3;

/// What the node logs and publishes about a flapping peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlapNote {
    /// More than [`FLAP_CHANGES`] changes within the window: flapping from now on.
    Started { changes: u32 },
    /// A window of a flapping peer ended: its changes, and the events not kept.
    Summary { changes: u32, suppressed: u32 },
    /// No change for [`FLAP_QUIET_WINDOWS`] windows: flapping no more.
    Cleared,
}

/// One port's dampening.
#[derive(Debug, Default)]
pub struct Damping {
    state: Option<Box<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// The programming credit as of `credit_at` (None: full, [`NIC_BURST`]).
    credit_at: Option<Instant>,
    credit: u8,
    /// A programming wanted within the hold waits for it.
    nic_waiting: bool,
    /// The window being counted (None: no change since the last one closed).
    window_start: Option<Instant>,
    /// Changes in this window.
    in_window: u32,
    /// Windows in a row without a change, while flapping.
    quiet: u8,
    flapping: bool,
    /// Events not kept since the last summary.
    suppressed: u32,
    /// Times the peer started flapping.
    flaps: u64,
    /// Programmings coalesced into a later one.
    coalesced: u64,
    /// Events not logged nor kept, in all.
    suppressed_total: u64,
}

/// Whether an event tells of a change of what the port runs because of what the peer
/// advertises: its operational configuration, its DCBX version, a feature's error.
/// A negotiation has two or three such inputs, so a link-up and a link flap right
/// after it stay well under [`FLAP_CHANGES`]; the peer appearing and going, and
/// neighbours, are churn but not counted (a link flap has them all).
pub fn is_change(e: &Event) -> bool {
    matches!(
        e,
        Event::OperChanged { .. }
            | Event::ModeChanged { .. }
            | Event::ErrorSet { .. }
            | Event::ErrorCleared { .. }
            | Event::Incompatible { .. }
    )
}

/// Whether a flapping port keeps the event out of the log and the history: the
/// changes, and what comes with them (the peer appearing and going, features it
/// stops sending, neighbours, our own acknowledgements). Malformed frames are
/// never churn.
pub fn is_churn(e: &Event) -> bool {
    is_change(e)
        || matches!(
            e,
            Event::Syncd { .. }
                | Event::PeerDcbx { .. }
                | Event::FeatureNotPresentOnPeer { .. }
                | Event::NeighborAdded { .. }
                | Event::NeighborRemoved { .. }
        )
}

/// A port's `nic_hold_ms` as a duration.
pub fn hold(ms: u32) -> Duration {
    Duration::from_millis(ms.into())
}

impl Damping {
    fn state(&mut self) -> &mut State {
        self.state.get_or_insert_with(Default::default)
    }

    /// The NIC may be programmed now: some credit is left.
    pub fn may_program(&self, now: Instant, hold: Duration) -> bool {
        hold.is_zero()
            || self
                .state
                .as_ref()
                .is_none_or(|s| s.credit(now, hold).0 > 0)
    }

    /// The NIC was programmed now: one credit spent.
    pub fn programmed(&mut self, now: Instant, hold: Duration) {
        if hold.is_zero() {
            return;
        }
        let s = self.state();
        let (credit, at) = s.credit(now, hold);
        s.credit = credit.saturating_sub(1);
        s.credit_at = Some(at);
        s.nic_waiting = false;
    }

    /// A programming was wanted within the hold: it waits, coalesced with any other
    /// until the hold ends.
    pub fn wait_nic(&mut self) {
        let s = self.state();
        s.nic_waiting = true;
        s.coalesced += 1;
    }

    /// A programming waits for the hold; taken, it no longer does.
    pub fn take_nic_waiting(&mut self) -> bool {
        self.state
            .as_mut()
            .is_some_and(|s| std::mem::take(&mut s.nic_waiting))
    }

    pub fn nic_waiting(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.nic_waiting)
    }

    pub fn flapping(&self) -> bool {
        self.state.as_ref().is_some_and(|s| s.flapping)
    }

    /// Changes counted in the window now open.
    pub fn changes_in_window(&self) -> u32 {
        self.state.as_ref().map_or(0, |s| s.in_window)
    }

    /// Times the peer started flapping.
    pub fn flaps(&self) -> u64 {
        self.state.as_ref().map_or(0, |s| s.flaps)
    }

    /// Programmings coalesced into a later one.
    pub fn coalesced(&self) -> u64 {
        self.state.as_ref().map_or(0, |s| s.coalesced)
    }

    /// Events neither logged nor kept because the peer flapped.
    pub fn suppressed(&self) -> u64 {
        self.state.as_ref().map_or(0, |s| s.suppressed_total)
    }

    /// An event of a flapping peer's churn, not logged nor kept.
    pub fn suppress(&mut self) {
        let s = self.state();
        s.suppressed = s.suppressed.saturating_add(1);
        s.suppressed_total += 1;
    }

    /// An input changed what the port runs, at `now`.
    pub fn change(&mut self, now: Instant, hold: Duration, notes: &mut Vec<FlapNote>) {
        self.roll(now, hold, notes);
        let s = self.state();
        let start = *s.window_start.get_or_insert(now);
        debug_assert!(now < start + FLAP_WINDOW);
        s.in_window = s.in_window.saturating_add(1);
        s.quiet = 0;
        if !s.flapping && s.in_window > FLAP_CHANGES {
            s.flapping = true;
            s.flaps += 1;
            notes.push(FlapNote::Started {
                changes: s.in_window,
            });
        }
    }

    /// Time passed: closes the windows that ended by `now` (a summary for each of a
    /// flapping peer), ends a hold that ran out, and gives the box back when nothing
    /// is left to remember.
    pub fn roll(&mut self, now: Instant, hold: Duration, notes: &mut Vec<FlapNote>) {
        let Some(s) = self.state.as_mut() else {
            return;
        };
        while let Some(start) = s.window_start.filter(|t| now >= *t + FLAP_WINDOW) {
            let changes = std::mem::take(&mut s.in_window);
            if s.flapping && changes > 0 {
                let suppressed = std::mem::take(&mut s.suppressed);
                notes.push(FlapNote::Summary {
                    changes,
                    suppressed,
                });
            } else if s.flapping {
                s.quiet += 1;
                if s.quiet >= FLAP_QUIET_WINDOWS {
                    s.flapping = false;
                    s.quiet = 0;
                    s.suppressed = 0;
                    notes.push(FlapNote::Cleared);
                }
            }
            // A flapping peer's windows follow each other (a summary each); else the
            // next window opens with the next change.
            s.window_start = s.flapping.then_some(start + FLAP_WINDOW);
        }
        if s.credit_at.is_some() {
            let (credit, at) = s.credit(now, hold);
            s.credit = credit;
            s.credit_at = (credit < NIC_BURST).then_some(at);
        }
        let idle = s.window_start.is_none() && s.credit_at.is_none() && !s.nic_waiting;
        if idle && s.flaps == 0 && s.coalesced == 0 && s.suppressed_total == 0 {
            self.state = None;
        }
    }

    /// When [`Damping::roll`] or a waiting programming is due; `nic`: the NIC may be
    /// programmed now (the port has dcbnl and its link is up).
    pub fn poll_timeout(&self, hold: Duration, nic: bool) -> Option<Instant> {
        let s = self.state.as_ref()?;
        let window = s.window_start.map(|t| t + FLAP_WINDOW);
        // The next credit: a waiting programming goes then; else the box may go once
        // the credit is full again.
        let next = s.credit_at.map(|t| t + hold);
        let held = next.filter(|_| nic || !s.nic_waiting);
        [window, held].into_iter().flatten().min()
    }
}

impl State {
    /// The credit at `now`, and the instant it counts from (a credit is earned each
    /// `hold` after it; full, it counts from `now`).
    fn credit(&self, now: Instant, hold: Duration) -> (u8, Instant) {
        let Some(at) = self.credit_at else {
            return (NIC_BURST, now);
        };
        if hold.is_zero() {
            return (NIC_BURST, now);
        }
        if now < at {
            return (self.credit, at);
        }
        let earned = ((now - at).as_nanos() / hold.as_nanos()).min(u128::from(NIC_BURST));
        let credit = self.credit.saturating_add(earned as u8);
        if credit >= NIC_BURST {
            (NIC_BURST, now)
        } else {
            (credit, at + hold * earned as u32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64) -> Instant {
        Instant::from_secs_f64(secs)
    }

    #[test]
    fn a_burst_goes_at_once_then_one_per_hold() {
        let hold = hold(1_000);
        let mut d = Damping::default();
        for i in 0..NIC_BURST {
            let t = at(f64::from(i) * 0.01);
            assert!(d.may_program(t, hold), "programming {i} of the burst");
            d.programmed(t, hold);
        }
        assert!(!d.may_program(at(0.5), hold));
        d.wait_nic();
        d.wait_nic();
        assert_eq!(d.poll_timeout(hold, true), Some(at(1.0)));
        assert!(d.may_program(at(1.0), hold));
        assert!(d.take_nic_waiting());
        d.programmed(at(1.0), hold);
        assert!(!d.may_program(at(1.5), hold), "one per hold past the burst");
        assert!(d.may_program(at(2.0), hold));
        assert_eq!(d.coalesced(), 2);
        // Nothing more: the credit fills up again, the box stays for the counter.
        let mut notes = Vec::new();
        d.roll(at(10.0), hold, &mut notes);
        assert_eq!(d.poll_timeout(hold, true), None);
        assert!(notes.is_empty());
        assert!(d.may_program(at(10.0), hold));
    }

    #[test]
    fn a_hold_of_zero_never_waits() {
        let hold = hold(0);
        let mut d = Damping::default();
        for i in 0..100 {
            assert!(d.may_program(at(f64::from(i) * 0.001), hold));
            d.programmed(at(f64::from(i) * 0.001), hold);
        }
        assert_eq!(d.poll_timeout(hold, true), None);
    }

    #[test]
    fn a_settled_port_gives_its_box_back() {
        let hold = hold(1_000);
        let mut d = Damping::default();
        let mut notes = Vec::new();
        d.programmed(at(0.0), hold);
        d.change(at(0.0), hold, &mut notes);
        d.change(at(0.1), hold, &mut notes);
        d.roll(at(10.0), hold, &mut notes);
        assert!(d.state.is_none(), "nothing left to remember");
        assert!(notes.is_empty());
    }

    #[test]
    fn flapping_starts_past_the_threshold_is_summarised_and_clears_when_quiet() {
        let hold = hold(1_000);
        let mut d = Damping::default();
        let mut notes = Vec::new();
        for i in 0..=FLAP_CHANGES {
            d.change(at(f64::from(i) * 0.1), hold, &mut notes);
        }
        assert_eq!(
            notes,
            [FlapNote::Started {
                changes: FLAP_CHANGES + 1
            }]
        );
        assert!(d.flapping());
        notes.clear();
        d.suppress();
        d.change(at(12.0), hold, &mut notes);
        assert_eq!(
            notes,
            [FlapNote::Summary {
                changes: FLAP_CHANGES + 1,
                suppressed: 1
            }]
        );
        notes.clear();
        d.roll(at(25.0), hold, &mut notes);
        assert_eq!(
            notes,
            [FlapNote::Summary {
                changes: 1,
                suppressed: 0
            }]
        );
        notes.clear();
        // Three windows without a change.
        d.roll(at(45.0), hold, &mut notes);
        assert!(notes.is_empty() && d.flapping());
        d.roll(at(55.0), hold, &mut notes);
        assert_eq!(notes, [FlapNote::Cleared]);
        assert!(!d.flapping());
        assert_eq!(d.poll_timeout(hold, true), None);
        assert_eq!((d.flaps(), d.suppressed()), (1, 1));
    }
}

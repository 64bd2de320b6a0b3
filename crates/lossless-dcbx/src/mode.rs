//! Which DCBX version a port runs: IEEE 802.1Qaz, the pre-standard CEE DCBX, or
//! whichever the peer speaks.
//!
//! `mode = "auto"` (the default) starts with IEEE, as lldpad and the switches of the
//! field do, and falls back to CEE when the peer's LLDPDU carries the CEE TLV and no
//! IEEE TLV; it stays there until the link resets or the peer goes away (its TTL runs
//! out, it sends a shutdown LLDPDU, it stops sending DCBX). A peer that sends both
//! (NX-OS does) is answered in IEEE. `mode = "ieee"` and `mode = "cee"` never change.
//!
//! Hysteresis: the first change the peer causes after a link-up (or a new configured
//! mode) is made at once, so a CEE peer is answered in CEE on its first frame; after
//! it, the peer may change the version at most once per [`MODE_HOLD`]. A change
//! asked for within the hold waits for it to pass and is dropped if the peer takes
//! it back meanwhile, so a peer alternating IEEE and CEE TLVs flips the port (and the
//! NIC's DCBX mode) once per hold, not once per frame. A link reset or a new
//! configured mode is never held.

use serde::{Deserialize, Serialize};

use crate::time::{Duration, Instant};

/// After a change of version the peer caused, how long the version stays before the
/// peer may change it again.
pub const MODE_HOLD: Duration = Duration::from_secs(5);

/// What the configuration asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DcbxMode {
    /// IEEE first, CEE for a peer that speaks only CEE.
    #[default]
    Auto,
    /// IEEE 802.1Qaz only.
    Ieee,
    /// CEE DCBX only.
    Cee,
    /// No negotiation: the configuration runs as written (IEEE 802.1Qaz objects are
    /// programmed), for switches that send LLDP but no DCBX (SONiC, statically
    /// configured fabrics). No DCBX TLV is sent; a neighbour's DCBX TLVs are read
    /// and compared, not followed.
    Static,
}

impl DcbxMode {
    pub fn name(self) -> &'static str {
        match self {
            DcbxMode::Auto => "auto",
            DcbxMode::Ieee => "ieee",
            DcbxMode::Cee => "cee",
            DcbxMode::Static => "static",
        }
    }

    pub fn from_name(name: &str) -> Option<DcbxMode> {
        match name {
            "auto" => Some(DcbxMode::Auto),
            "ieee" => Some(DcbxMode::Ieee),
            "cee" => Some(DcbxMode::Cee),
            "static" => Some(DcbxMode::Static),
            _ => None,
        }
    }
}

/// The version a port runs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    Ieee,
    Cee,
}

impl Version {
    pub fn name(self) -> &'static str {
        match self {
            Version::Ieee => "ieee",
            Version::Cee => "cee",
        }
    }
}

/// Why the port runs the version it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModeReason {
    /// `mode = "ieee"` or `mode = "cee"`.
    Configured,
    /// Auto: IEEE, as at every link-up, until the peer shows it speaks only CEE.
    AutoDefault,
    /// Auto: the peer sent CEE DCBX and no IEEE TLV.
    PeerCeeOnly,
    /// Auto: back to IEEE because the link reset.
    LinkReset,
    /// Auto: back to IEEE because the peer went away.
    PeerGone,
    /// `mode = "static"`: the configuration runs, nothing is negotiated.
    Static,
}

impl ModeReason {
    pub fn describe(self) -> &'static str {
        match self {
            ModeReason::Configured => "configured",
            ModeReason::AutoDefault => {
                "auto: IEEE 802.1Qaz until the peer shows it speaks only CEE"
            }
            ModeReason::PeerCeeOnly => "auto: the peer sends CEE DCBX and no IEEE 802.1Qaz TLV",
            ModeReason::LinkReset => "auto: back to IEEE 802.1Qaz after a link reset",
            ModeReason::PeerGone => "auto: back to IEEE 802.1Qaz after the peer went away",
            ModeReason::Static => {
                "static: the configuration runs as written (IEEE 802.1Qaz objects), no DCBX \
                 negotiation"
            }
        }
    }
}

/// The mode machine of one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeMachine {
    configured: DcbxMode,
    running: Version,
    reason: ModeReason,
    /// A change asked for within the hold, to the other version, for this reason.
    pending: Option<ModeReason>,
    /// Until when the version the peer last chose holds, in tenths of a second of the
    /// clock, rounded down (0: no such change since the link-up or the configuration).
    /// Four octets, not an `Instant`'s sixteen: every port holds one.
    held_until: u32,
}

/// `t` in tenths of a second, rounded down (at least 1, at most `u32::MAX`: 13 years).
fn ticks(t: Instant) -> u32 {
    let ms = t.since_epoch().as_millis() / 100;
    u32::try_from(ms).unwrap_or(u32::MAX).max(1)
}

fn from_ticks(t: u32) -> Instant {
    Instant::ZERO + Duration::from_millis(u64::from(t) * 100)
}

/// A change of the running version, to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModeChange {
    pub from: Version,
    pub to: Version,
    pub reason: ModeReason,
}

impl ModeMachine {
    pub fn new(configured: DcbxMode) -> Self {
        let (running, reason) = Self::initial(configured);
        ModeMachine {
            configured,
            running,
            reason,
            pending: None,
            held_until: 0,
        }
    }

    fn initial(configured: DcbxMode) -> (Version, ModeReason) {
        match configured {
            DcbxMode::Auto => (Version::Ieee, ModeReason::AutoDefault),
            DcbxMode::Ieee => (Version::Ieee, ModeReason::Configured),
            DcbxMode::Cee => (Version::Cee, ModeReason::Configured),
            DcbxMode::Static => (Version::Ieee, ModeReason::Static),
        }
    }

    pub fn configured(&self) -> DcbxMode {
        self.configured
    }

    pub fn running(&self) -> Version {
        self.running
    }

    pub fn reason(&self) -> ModeReason {
        self.reason
    }

    /// When a change asked for within the hold is due (None: none waits).
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.pending
            .filter(|_| self.held_until != 0)
            .map(|_| from_ticks(self.held_until))
    }

    /// A change that waited for the hold: made now, if it is due.
    pub fn handle_timeout(&mut self, now: Instant) -> Option<ModeChange> {
        let due = self.poll_timeout().is_some_and(|t| now >= t);
        let reason = self.pending.filter(|_| due)?;
        let to = match self.running {
            Version::Ieee => Version::Cee,
            Version::Cee => Version::Ieee,
        };
        self.peer_driven(now, to, reason)
    }

    /// A change the peer causes: at once when no hold runs, else remembered until
    /// it ends.
    fn peer_driven(&mut self, now: Instant, to: Version, reason: ModeReason) -> Option<ModeChange> {
        if self.held_until != 0 && now < from_ticks(self.held_until) {
            self.pending = Some(reason);
            return None;
        }
        self.pending = None;
        self.held_until = ticks(now + MODE_HOLD);
        self.go(to, reason)
    }

    /// No hold, nothing waiting: a link reset or a new configuration starts over.
    fn unhold(&mut self) {
        self.pending = None;
        self.held_until = 0;
    }

    fn go(&mut self, to: Version, reason: ModeReason) -> Option<ModeChange> {
        let from = self.running;
        self.reason = reason;
        if from == to {
            return None;
        }
        self.running = to;
        Some(ModeChange { from, to, reason })
    }

    /// A new configured mode (a reload or a runtime change): starts over.
    pub fn configure(&mut self, configured: DcbxMode) -> Option<ModeChange> {
        if configured == self.configured {
            return None;
        }
        self.configured = configured;
        self.unhold();
        let (to, reason) = Self::initial(configured);
        self.go(to, reason)
    }

    /// The single DCBX peer's latest LLDPDU, received at `now`, carried these TLVs.
    pub fn peer_sends(&mut self, now: Instant, cee: bool, ieee: bool) -> Option<ModeChange> {
        if self.configured != DcbxMode::Auto {
            return None;
        }
        match self.running {
            Version::Ieee if cee && !ieee => {
                return self.peer_driven(now, Version::Cee, ModeReason::PeerCeeOnly)
            }
            // The peer speaks the running version again: what waited is off.
            Version::Ieee => self.pending = None,
            Version::Cee if cee => self.pending = None,
            Version::Cee => {}
        }
        None
    }

    /// The link went down and up.
    pub fn link_reset(&mut self) -> Option<ModeChange> {
        self.unhold();
        match self.configured {
            DcbxMode::Auto if self.running == Version::Cee => {
                self.go(Version::Ieee, ModeReason::LinkReset)
            }
            DcbxMode::Auto => {
                self.reason = ModeReason::AutoDefault;
                None
            }
            _ => None,
        }
    }

    /// The peer went away at `now`: its information aged out, it shut down, or it
    /// stopped sending DCBX (of the running version).
    pub fn peer_gone(&mut self, now: Instant) -> Option<ModeChange> {
        if self.configured == DcbxMode::Auto && self.running == Version::Cee {
            return self.peer_driven(now, Version::Ieee, ModeReason::PeerGone);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: f64) -> Instant {
        Instant::from_secs_f64(secs)
    }

    #[test]
    fn auto_falls_back_to_cee_and_returns_on_reset_or_loss() {
        let mut m = ModeMachine::new(DcbxMode::Auto);
        assert_eq!(m.running(), Version::Ieee);
        // Both: IEEE wins.
        assert_eq!(m.peer_sends(at(0.0), true, true), None);
        assert_eq!(m.peer_sends(at(0.0), false, true), None);
        let c = m.peer_sends(at(0.0), true, false).expect("falls back");
        assert_eq!(
            (c.from, c.to, c.reason),
            (Version::Ieee, Version::Cee, ModeReason::PeerCeeOnly)
        );
        // Stays in CEE even when the peer later sends both.
        assert_eq!(m.peer_sends(at(0.1), true, true), None);
        assert_eq!(m.running(), Version::Cee);
        let c = m.link_reset().expect("back to IEEE");
        assert_eq!((c.to, c.reason), (Version::Ieee, ModeReason::LinkReset));
        // After a link reset the first change is immediate again.
        m.peer_sends(at(0.2), true, false)
            .expect("falls back at once");
        let c = m.peer_gone(at(10.0)).expect("back to IEEE");
        assert_eq!((c.to, c.reason), (Version::Ieee, ModeReason::PeerGone));
    }

    /// A peer alternating CEE-only and IEEE-only LLDPDUs every 10 ms for 5 s: the
    /// first change at once, then at most one per MODE_HOLD.
    #[test]
    fn an_alternating_peer_flips_the_version_once_per_hold() {
        let mut m = ModeMachine::new(DcbxMode::Auto);
        let mut changes = 0;
        for i in 0..500u32 {
            let now = at(f64::from(i) * 0.01);
            changes += usize::from(m.handle_timeout(now).is_some());
            let cee = i % 2 == 0;
            let c = if m.running() == Version::Cee && !cee {
                m.peer_gone(now)
            } else {
                m.peer_sends(now, cee, !cee)
            };
            changes += usize::from(c.is_some());
            if i == 0 {
                assert!(c.is_some(), "the first change is immediate");
            }
        }
        // 5 s: at 0 s, then at most once per 5 s hold.
        assert!(changes <= 2, "{changes} mode changes in 5 s");
        assert!(changes >= 1);
    }

    #[test]
    fn a_change_within_the_hold_waits_and_is_dropped_when_taken_back() {
        let mut m = ModeMachine::new(DcbxMode::Auto);
        m.peer_sends(at(0.0), true, false).expect("CEE at once");
        // The peer leaves CEE within the hold: IEEE waits for the hold.
        assert_eq!(m.peer_gone(at(1.0)), None);
        assert_eq!(m.poll_timeout(), Some(at(0.0) + MODE_HOLD));
        assert_eq!(m.handle_timeout(at(2.0)), None, "not due yet");
        // It comes back in CEE: nothing waits any more.
        assert_eq!(m.peer_sends(at(3.0), true, false), None);
        assert_eq!(m.poll_timeout(), None);
        assert_eq!(m.running(), Version::Cee);
        // It goes again and stays gone: IEEE once the hold passed.
        assert_eq!(m.peer_gone(at(4.0)), None);
        let c = m
            .handle_timeout(at(5.0))
            .expect("due at the end of the hold");
        assert_eq!((c.to, c.reason), (Version::Ieee, ModeReason::PeerGone));
    }

    #[test]
    fn configured_modes_never_change() {
        for (mode, v) in [
            (DcbxMode::Ieee, Version::Ieee),
            (DcbxMode::Cee, Version::Cee),
        ] {
            let mut m = ModeMachine::new(mode);
            assert_eq!(m.peer_sends(at(0.0), true, false), None);
            assert_eq!(m.peer_sends(at(0.0), false, true), None);
            assert_eq!(m.link_reset(), None);
            assert_eq!(m.peer_gone(at(0.0)), None);
            assert_eq!((m.running(), m.reason()), (v, ModeReason::Configured));
        }
        let mut m = ModeMachine::new(DcbxMode::Auto);
        m.peer_sends(at(0.0), true, false);
        let c = m.configure(DcbxMode::Ieee).expect("forced to IEEE");
        assert_eq!((c.to, c.reason), (Version::Ieee, ModeReason::Configured));
    }
}

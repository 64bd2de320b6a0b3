//! Which DCBX version a port runs: IEEE 802.1Qaz, the pre-standard CEE DCBX, or
//! whichever the peer speaks.
//!
//! `mode = "auto"` (the default) starts with IEEE, as lldpad and the switches of the
//! field do, and falls back to CEE when the peer's LLDPDU carries the CEE TLV and no
//! IEEE TLV; it stays there until the link resets or the peer goes away (its TTL runs
//! out, it sends a shutdown LLDPDU, it stops sending DCBX). A peer that sends both
//! (NX-OS does) is answered in IEEE. `mode = "ieee"` and `mode = "cee"` never change.

use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
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
        let (to, reason) = Self::initial(configured);
        self.go(to, reason)
    }

    /// The single DCBX peer's latest LLDPDU carried these TLVs.
    pub fn peer_sends(&mut self, cee: bool, ieee: bool) -> Option<ModeChange> {
        if self.configured != DcbxMode::Auto {
            return None;
        }
        if cee && !ieee && self.running == Version::Ieee {
            return self.go(Version::Cee, ModeReason::PeerCeeOnly);
        }
        None
    }

    /// The link went down and up.
    pub fn link_reset(&mut self) -> Option<ModeChange> {
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

    /// The peer went away: its information aged out, it shut down, or it stopped
    /// sending DCBX.
    pub fn peer_gone(&mut self) -> Option<ModeChange> {
        if self.configured == DcbxMode::Auto && self.running == Version::Cee {
            return self.go(Version::Ieee, ModeReason::PeerGone);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_falls_back_to_cee_and_returns_on_reset_or_loss() {
        let mut m = ModeMachine::new(DcbxMode::Auto);
        assert_eq!(m.running(), Version::Ieee);
        // Both: IEEE wins.
        assert_eq!(m.peer_sends(true, true), None);
        assert_eq!(m.peer_sends(false, true), None);
        let c = m.peer_sends(true, false).expect("falls back");
        assert_eq!(
            (c.from, c.to, c.reason),
            (Version::Ieee, Version::Cee, ModeReason::PeerCeeOnly)
        );
        // Stays in CEE even when the peer later sends both.
        assert_eq!(m.peer_sends(true, true), None);
        assert_eq!(m.running(), Version::Cee);
        let c = m.link_reset().expect("back to IEEE");
        assert_eq!((c.to, c.reason), (Version::Ieee, ModeReason::LinkReset));
        m.peer_sends(true, false);
        let c = m.peer_gone().expect("back to IEEE");
        assert_eq!((c.to, c.reason), (Version::Ieee, ModeReason::PeerGone));
    }

    #[test]
    fn configured_modes_never_change() {
        for (mode, v) in [
            (DcbxMode::Ieee, Version::Ieee),
            (DcbxMode::Cee, Version::Cee),
        ] {
            let mut m = ModeMachine::new(mode);
            assert_eq!(m.peer_sends(true, false), None);
            assert_eq!(m.peer_sends(false, true), None);
            assert_eq!(m.link_reset(), None);
            assert_eq!(m.peer_gone(), None);
            assert_eq!((m.running(), m.reason()), (v, ModeReason::Configured));
        }
        let mut m = ModeMachine::new(DcbxMode::Auto);
        m.peer_sends(true, false);
        let c = m.configure(DcbxMode::Ieee).expect("forced to IEEE");
        assert_eq!((c.to, c.reason), (Version::Ieee, ModeReason::Configured));
    }
}

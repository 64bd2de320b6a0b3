//! How an APP entry is written for people, the one way every command prints it:
//! decimal ports and DSCPs, an Ethertype in hex, each with the protocol's or code
//! point's name where it has one: `udp 4791 (RoCEv2)`, `tcp 3260 (iSCSI)`,
//! `dscp 26 (AF31)`, `ethertype 0x8906 (FCoE)`, and `-> 3` for the priority.
//!
//! DSCP names: the class selectors (RFC 2474), assured forwarding (RFC 2597),
//! expedited forwarding (RFC 3246), VOICE-ADMIT (RFC 5865), lower effort (RFC 8622).

use std::fmt;

use crate::cee::AppSelector;
use crate::ieee::Selector;

/// What an APP entry's protocol field is, over both DCBX versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppMatch {
    Ethertype,
    /// IEEE 802.1Qaz selector 2: TCP or SCTP port.
    Tcp,
    /// IEEE 802.1Qaz selector 3: UDP or DCCP port.
    Udp,
    /// IEEE 802.1Qaz selector 4 (TCP, SCTP, UDP or DCCP), CEE's TCP/UDP port.
    Port,
    Dscp,
    /// A selector value with no meaning (IEEE 0, 6, 7; CEE 2, 3).
    Reserved(u8),
}

impl AppMatch {
    /// By the selector's name as the configuration and JSON give it (`"ethertype"`,
    /// `"tcp"`, `"udp"`, `"port"`, `"dscp"`).
    pub fn from_name(name: &str) -> Option<AppMatch> {
        Selector::from_name(name).map(AppMatch::from)
    }

    /// The selector's word: `udp`, `dscp`, ...; `selector N` when reserved.
    pub fn word(self) -> String {
        match self {
            AppMatch::Ethertype => "ethertype".into(),
            AppMatch::Tcp => "tcp".into(),
            AppMatch::Udp => "udp".into(),
            AppMatch::Port => "port".into(),
            AppMatch::Dscp => "dscp".into(),
            AppMatch::Reserved(s) => format!("selector {s}"),
        }
    }
}

impl From<Selector> for AppMatch {
    fn from(s: Selector) -> AppMatch {
        match s {
            Selector::ETHERTYPE => AppMatch::Ethertype,
            Selector::TCP => AppMatch::Tcp,
            Selector::UDP => AppMatch::Udp,
            Selector::PORT => AppMatch::Port,
            Selector::DSCP => AppMatch::Dscp,
            Selector(n) => AppMatch::Reserved(n),
        }
    }
}

impl From<AppSelector> for AppMatch {
    fn from(s: AppSelector) -> AppMatch {
        match s {
            AppSelector::ETHERTYPE => AppMatch::Ethertype,
            AppSelector::PORT => AppMatch::Port,
            AppSelector(n) => AppMatch::Reserved(n),
        }
    }
}

/// Every named DSCP code point.
pub const DSCP_NAMES: [(&str, u8); 23] = [
    ("CS0", 0),
    ("LE", 1),
    ("CS1", 8),
    ("AF11", 10),
    ("AF12", 12),
    ("AF13", 14),
    ("CS2", 16),
    ("AF21", 18),
    ("AF22", 20),
    ("AF23", 22),
    ("CS3", 24),
    ("AF31", 26),
    ("AF32", 28),
    ("AF33", 30),
    ("CS4", 32),
    ("AF41", 34),
    ("AF42", 36),
    ("AF43", 38),
    ("CS5", 40),
    ("VOICE-ADMIT", 44),
    ("EF", 46),
    ("CS6", 48),
    ("CS7", 56),
];

/// The name of a DSCP, if it has one.
pub fn dscp_name(dscp: u16) -> Option<&'static str> {
    DSCP_NAMES
        .iter()
        .find(|(_, v)| u16::from(*v) == dscp)
        .map(|(n, _)| *n)
}

/// A DSCP by its name, in any case.
pub fn dscp_by_name(name: &str) -> Option<u8> {
    DSCP_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))
        .map(|(_, v)| *v)
}

/// The name of what an entry matches: a DSCP's, or a protocol DCB traffic is
/// usually told by.
pub fn protocol_name(m: AppMatch, protocol: u16) -> Option<&'static str> {
    let tcp = matches!(m, AppMatch::Tcp | AppMatch::Port);
    let udp = matches!(m, AppMatch::Udp | AppMatch::Port);
    match (m, protocol) {
        (AppMatch::Dscp, d) => dscp_name(d),
        (AppMatch::Ethertype, 0x8906) => Some("FCoE"),
        (AppMatch::Ethertype, 0x8914) => Some("FIP"),
        (AppMatch::Ethertype, 0x8915) => Some("RoCE"),
        (_, 3260) if tcp => Some("iSCSI"),
        (_, 4420) if tcp => Some("NVMe/TCP"),
        (_, 445) if tcp => Some("SMB"),
        (_, 4791) if udp => Some("RoCEv2"),
        _ => None,
    }
}

/// What an entry matches: `udp 4791 (RoCEv2)`, `ethertype 0x8906 (FCoE)`,
/// `selector 6 protocol 7`.
pub struct AppTarget(pub AppMatch, pub u16);

impl fmt::Display for AppTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let AppTarget(m, p) = *self;
        match m {
            AppMatch::Ethertype => write!(f, "ethertype {p:#06x}")?,
            AppMatch::Reserved(s) => write!(f, "selector {s} protocol {p}")?,
            other => write!(f, "{} {p}", other.word())?,
        }
        match protocol_name(m, p) {
            Some(n) => write!(f, " ({n})"),
            None => Ok(()),
        }
    }
}

/// A whole entry: `dscp 26 (AF31) -> 3` (CEE: priorities as `3,4`).
pub fn app_entry(m: AppMatch, protocol: u16, priority: impl fmt::Display) -> String {
    format!("{} -> {priority}", AppTarget(m, protocol))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_way_for_every_selector() {
        assert_eq!(app_entry(AppMatch::Udp, 4791, 3), "udp 4791 (RoCEv2) -> 3");
        assert_eq!(app_entry(AppMatch::Tcp, 3260, 4), "tcp 3260 (iSCSI) -> 4");
        assert_eq!(app_entry(AppMatch::Dscp, 26, 3), "dscp 26 (AF31) -> 3");
        assert_eq!(
            app_entry(AppMatch::Ethertype, 0x8906, 3),
            "ethertype 0x8906 (FCoE) -> 3"
        );
        assert_eq!(app_entry(AppMatch::Port, 445, 2), "port 445 (SMB) -> 2");
        assert_eq!(app_entry(AppMatch::Udp, 3260, 2), "udp 3260 -> 2");
        assert_eq!(
            app_entry(AppMatch::Reserved(6), 7, 1),
            "selector 6 protocol 7 -> 1"
        );
        assert_eq!(AppMatch::from(AppSelector::PORT), AppMatch::Port);
        assert_eq!(AppMatch::from_name("udp"), Some(AppMatch::Udp));
        assert_eq!(dscp_by_name("af31"), Some(26));
    }
}

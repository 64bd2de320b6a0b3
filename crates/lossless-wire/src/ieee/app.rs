//! The Application Priority TLV (IEEE 802.1Q-2018 D.2.12): which priority
//! traffic of a given protocol, port or DSCP is sent with.

use std::ops::Deref;

use serde::{Deserialize, Serialize};

use super::{serialize_code, InvalidValue, NameOrNumber, INLINE_APP_ENTRIES, MAX_APP_ENTRIES};
use crate::table::Table;

/// How an entry's protocol field is read (D.2.12.3, the 3-bit Sel field).
///
/// An open code point: 0, 6 and 7 are reserved, refused on receipt and in
/// configuration, but representable so that an error can show the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Selector(pub u8);

impl Selector {
    /// The protocol is an Ethertype (FCoE 0x8906, RoCE 0x8915).
    pub const ETHERTYPE: Selector = Selector(1);
    /// A well-known port over TCP or SCTP (iSCSI 3260).
    pub const TCP: Selector = Selector(2);
    /// A well-known port over UDP or DCCP (RoCEv2 4791).
    pub const UDP: Selector = Selector(3);
    /// A well-known port over TCP, SCTP, UDP or DCCP.
    pub const PORT: Selector = Selector(4);
    /// A DSCP value, 0..=63 (added by IEEE 802.1Qcd-2015).
    pub const DSCP: Selector = Selector(5);

    /// The name users read and write: `ethertype`, `tcp`, `udp`, `port`, `dscp`.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Selector::ETHERTYPE => Some("ethertype"),
            Selector::TCP => Some("tcp"),
            Selector::UDP => Some("udp"),
            Selector::PORT => Some("port"),
            Selector::DSCP => Some("dscp"),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<Selector> {
        match name {
            "ethertype" => Some(Selector::ETHERTYPE),
            "tcp" => Some(Selector::TCP),
            "udp" => Some(Selector::UDP),
            "port" => Some(Selector::PORT),
            "dscp" => Some(Selector::DSCP),
            _ => None,
        }
    }
}

impl Serialize for Selector {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_code(self.name(), self.0, s)
    }
}

impl<'de> Deserialize<'de> for Selector {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NameOrNumber::deserialize(d)? {
            NameOrNumber::Name(n) => Selector::from_name(&n).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown APP selector {n:?}: expected \"ethertype\", \"tcp\", \"udp\", \"port\" or \"dscp\""
                ))
            }),
            // A number is taken as is; validate() refuses the reserved ones.
            NameOrNumber::Number(v) => Ok(Selector(v)),
        }
    }
}

/// One entry: traffic matching (selector, protocol) is sent with `priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AppPriority {
    /// 0..=7.
    pub priority: u8,
    pub selector: Selector,
    /// An Ethertype, a port or a DSCP, as the selector says.
    pub protocol: u16,
}

impl AppPriority {
    /// Priority 0..=7, a defined selector, a DSCP 0..=63.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        if self.priority > 7 {
            return Err(InvalidValue {
                field: "app.priority",
                index: None,
                value: self.priority.into(),
                reason: "a priority is 0..7",
            });
        }
        // D.2.12.3: selector values 0, 6 and 7 are reserved.
        if !(1..=5).contains(&self.selector.0) {
            return Err(InvalidValue {
                field: "app.selector",
                index: None,
                value: self.selector.0.into(),
                reason:
                    "selector 0, 6 and 7 are reserved (1 ethertype, 2 tcp, 3 udp, 4 port, 5 dscp)",
            });
        }
        // IEEE 802.1Qcd-2015: with selector 5 the protocol is a 6-bit DSCP.
        if self.selector == Selector::DSCP && self.protocol > 63 {
            return Err(InvalidValue {
                field: "app.protocol",
                index: None,
                value: self.protocol.into(),
                reason: "a DSCP is 0..63",
            });
        }
        Ok(())
    }
}

/// The entries of one Application Priority TLV, in wire order, the first
/// [`INLINE_APP_ENTRIES`] (16) in place, more on the heap.
///
/// Its capacity, [`MAX_APP_ENTRIES`] (168), is what one TLV can carry, so a
/// table of this type always fits its TLV: no length check can fail on
/// emission. Serialises as the list of entries.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AppPriorityTable(pub Table<AppPriority, MAX_APP_ENTRIES, INLINE_APP_ENTRIES>);

impl AppPriorityTable {
    pub const fn new() -> Self {
        AppPriorityTable(Table::new())
    }

    /// Appends an entry; `Err` gives it back when the table is full.
    pub fn push(&mut self, entry: AppPriority) -> Result<(), AppPriority> {
        self.0.try_push(entry)
    }

    /// Every entry's rules; the error's `index` is the entry's position.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        for (i, e) in self.0.iter().enumerate() {
            e.validate().map_err(|err| InvalidValue {
                index: Some(i),
                ..err
            })?;
        }
        Ok(())
    }
}

impl Deref for AppPriorityTable {
    type Target = [AppPriority];

    fn deref(&self) -> &[AppPriority] {
        &self.0
    }
}

impl TryFrom<&[AppPriority]> for AppPriorityTable {
    type Error = InvalidValue;

    /// Refuses more entries than one TLV carries, as `app.entries`.
    fn try_from(entries: &[AppPriority]) -> Result<Self, InvalidValue> {
        let mut t = AppPriorityTable::new();
        for &e in entries {
            if t.push(e).is_err() {
                return Err(InvalidValue {
                    field: "app.entries",
                    index: None,
                    value: entries.len() as u64,
                    reason: "at most 168 entries fit in one Application Priority TLV",
                });
            }
        }
        Ok(t)
    }
}

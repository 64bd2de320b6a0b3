//! ETS: which traffic class serves each priority and how the classes share
//! the link (IEEE 802.1Q-2018 D.2.9 ETS Configuration TLV, D.2.10 ETS
//! Recommendation TLV). The two TLVs carry the same three tables.

use serde::{Deserialize, Serialize};

use super::{serialize_code, InvalidValue, NameOrNumber, MAX_TCS};

/// A transmission selection algorithm (IEEE 802.1Q-2018 8.6.8, Table 8-6).
///
/// An open code point: 3..=254 are reserved, refused on receipt and in
/// configuration, but representable so that an error can show the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Tsa(pub u8);

impl Tsa {
    /// Strict priority.
    pub const STRICT: Tsa = Tsa(0);
    /// Credit-based shaper.
    pub const CBS: Tsa = Tsa(1);
    /// Enhanced transmission selection: the class gets its TC bandwidth share.
    pub const ETS: Tsa = Tsa(2);
    /// Vendor-specific.
    pub const VENDOR: Tsa = Tsa(255);

    /// The name users read and write: `strict`, `cbs`, `ets`, `vendor`.
    pub fn name(self) -> Option<&'static str> {
        match self {
            Tsa::STRICT => Some("strict"),
            Tsa::CBS => Some("cbs"),
            Tsa::ETS => Some("ets"),
            Tsa::VENDOR => Some("vendor"),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<Tsa> {
        match name {
            "strict" => Some(Tsa::STRICT),
            "cbs" => Some(Tsa::CBS),
            "ets" => Some(Tsa::ETS),
            "vendor" => Some(Tsa::VENDOR),
            _ => None,
        }
    }

    /// 3..=254: reserved for future standardisation.
    pub fn is_reserved(self) -> bool {
        (3..=254).contains(&self.0)
    }
}

impl Serialize for Tsa {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_code(self.name(), self.0, s)
    }
}

impl<'de> Deserialize<'de> for Tsa {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NameOrNumber::deserialize(d)? {
            NameOrNumber::Name(n) => Tsa::from_name(&n).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown TSA {n:?}: expected \"strict\", \"cbs\", \"ets\" or \"vendor\""
                ))
            }),
            // A number is taken as is; validate() refuses the reserved ones.
            NameOrNumber::Number(v) => Ok(Tsa(v)),
        }
    }
}

/// The three tables of both ETS TLVs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EtsTable {
    /// Traffic class of priorities 0..7 (Priority Assignment Table): 0..=7.
    pub prio_tc: [u8; 8],
    /// Bandwidth percentage of traffic classes 0..7 (TC Bandwidth Table).
    pub tc_bw: [u8; 8],
    /// Transmission selection algorithm of traffic classes 0..7 (TSA Assignment Table).
    pub tsa: [Tsa; 8],
}

impl Default for EtsTable {
    /// lldpad's default: every priority on TC 0, every TC strict with 0 %.
    fn default() -> Self {
        EtsTable {
            prio_tc: [0; 8],
            tc_bw: [0; 8],
            tsa: [Tsa::STRICT; 8],
        }
    }
}

/// The ETS Configuration TLV: what the sender runs (D.2.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct EtsConfig {
    /// Willing to take the peer's ETS Recommendation.
    pub willing: bool,
    /// The station supports the credit-based shaper.
    pub cbs: bool,
    /// Traffic classes the station supports, 1..=8 (sent as 3 bits, 8 as 0).
    pub max_tcs: u8,
    #[serde(flatten)]
    pub table: EtsTable,
}

impl Default for EtsConfig {
    /// lldpad's default: willing, no CBS, 8 TCs, [`EtsTable::default`].
    fn default() -> Self {
        EtsConfig {
            willing: true,
            cbs: false,
            max_tcs: MAX_TCS,
            table: EtsTable::default(),
        }
    }
}

/// The ETS Recommendation TLV: what the sender asks a willing peer to run
/// (D.2.10). Its first byte is reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct EtsRecommendation {
    pub table: EtsTable,
}

/// Which table a finding is in: the parser turns it into a byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Part {
    PrioTc,
    TcBw,
    Tsa,
}

/// Names of the tables' fields in errors, per TLV.
pub(super) struct TableFields {
    pub prio_tc: &'static str,
    pub tc_bw: &'static str,
    pub tsa: &'static str,
}

pub(super) const CONFIG_FIELDS: TableFields = TableFields {
    prio_tc: "ets.prio_tc",
    tc_bw: "ets.tc_bw",
    tsa: "ets.tsa",
};

pub(super) const RECOMMENDATION_FIELDS: TableFields = TableFields {
    prio_tc: "ets_recommendation.prio_tc",
    tc_bw: "ets_recommendation.tc_bw",
    tsa: "ets_recommendation.tsa",
};

impl EtsTable {
    /// The rules of both ETS TLVs, named as in the ETS Configuration TLV
    /// (`ets.prio_tc`, ...); the first violation in wire order is returned.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        self.check(&CONFIG_FIELDS).map_err(|(_, e)| e)
    }

    pub(super) fn check(&self, names: &TableFields) -> Result<(), (Part, InvalidValue)> {
        let bad = |part, field, index, value: u8, reason| {
            Err((
                part,
                InvalidValue {
                    field,
                    index,
                    value: value.into(),
                    reason,
                },
            ))
        };
        // D.2.9.6, Priority Assignment Table: each entry is a traffic class, 0..7.
        for (p, &tc) in self.prio_tc.iter().enumerate() {
            if tc >= MAX_TCS {
                return bad(
                    Part::PrioTc,
                    names.prio_tc,
                    Some(p),
                    tc,
                    "a traffic class is 0..7",
                );
            }
        }
        // D.2.9.7, TC Bandwidth Table: percentages.
        for (tc, &bw) in self.tc_bw.iter().enumerate() {
            if bw > 100 {
                return bad(
                    Part::TcBw,
                    names.tc_bw,
                    Some(tc),
                    bw,
                    "a percentage cannot exceed 100",
                );
            }
        }
        // D.2.9.8, TSA Assignment Table: a Table 8-6 value; 3..254 are reserved.
        for (tc, &tsa) in self.tsa.iter().enumerate() {
            if tsa.is_reserved() {
                return bad(
                    Part::Tsa,
                    names.tsa,
                    Some(tc),
                    tsa.0,
                    "TSA 3..254 is reserved (0 strict, 1 CBS, 2 ETS, 255 vendor)",
                );
            }
        }
        // D.2.9.7: the bandwidth shares sum to 100 %. What peers send: lldptool
        // refuses a tcbw that does not sum to 100, but lldpad's default table,
        // on the wire until one is configured, has every TC strict at 0 %
        // (tests/data/lldpad-ieee-default.pcapng). With no TC using ETS there
        // is nothing to share, so the rule here is: the eight sum to exactly
        // 100, or to 0 when no TC uses ETS. Only the total is checked, as
        // lldptool does: given a tcbw and no tsa, lldpad sends strict TCs with
        // shares (tests/data/lldpad-ieee-dscp.pcapng).
        let sum: u64 = self.tc_bw.iter().map(|&b| u64::from(b)).sum();
        let uses_ets = self.tsa.contains(&Tsa::ETS);
        if sum != 100 && (sum != 0 || uses_ets) {
            let reason = if sum == 0 {
                "traffic classes use ETS but every share is 0; the percentages must sum to 100"
            } else {
                "the eight percentages must sum to 100 (or all be 0 when no traffic class uses ETS)"
            };
            return Err((
                Part::TcBw,
                InvalidValue {
                    field: names.tc_bw,
                    index: None,
                    value: sum,
                    reason,
                },
            ));
        }
        Ok(())
    }
}

impl EtsConfig {
    /// MaxTCs 1..=8, then the table's rules ([`EtsTable::validate`]).
    pub fn validate(&self) -> Result<(), InvalidValue> {
        // D.2.9.5: Max TCs is 1..8 (a 3-bit field, 0 meaning 8).
        if !(1..=MAX_TCS).contains(&self.max_tcs) {
            return Err(InvalidValue {
                field: "ets.max_tcs",
                index: None,
                value: self.max_tcs.into(),
                reason: "the number of traffic classes is 1..8",
            });
        }
        self.table.validate()
    }
}

impl EtsRecommendation {
    /// The table's rules, named `ets_recommendation.prio_tc`, ...
    pub fn validate(&self) -> Result<(), InvalidValue> {
        self.table.check(&RECOMMENDATION_FIELDS).map_err(|(_, e)| e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_names_each_class_that_serves_a_priority_or_is_not_strict() {
        let t = EtsTable {
            prio_tc: [0, 0, 0, 1, 0, 0, 2, 0],
            tc_bw: [50, 50, 0, 0, 0, 0, 0, 100],
            tsa: [
                Tsa::ETS,
                Tsa::ETS,
                Tsa::STRICT,
                Tsa::STRICT,
                Tsa(9),
                Tsa::STRICT,
                Tsa::STRICT,
                Tsa::STRICT,
            ],
        };
        assert_eq!(
            t.summary(),
            "tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6} strict; tc4 {} tsa 9"
        );
        let mut one = EtsTable {
            prio_tc: [3; 8],
            ..EtsTable::default()
        };
        one.tsa[3] = Tsa::ETS;
        assert_eq!(one.summary(), "tc3 {0,1,2,3,4,5,6,7} ets 0%");
        assert_eq!(
            EtsTable {
                tsa: [Tsa::STRICT; 8],
                prio_tc: [0; 8],
                tc_bw: [100; 8]
            }
            .summary(),
            "tc0 {0,1,2,3,4,5,6,7} strict 100%"
        );
    }
}

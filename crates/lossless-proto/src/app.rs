//! The APP table as an operator writes it: one list for both DCBX versions.
//!
//! ```toml
//! [ports."eth0".app]
//! entries = [
//!     { selector = "dscp", protocol = 26, priority = 3 },          # RoCEv2 data, DSCP 26 -> 3
//!     { selector = "udp", protocol = 4791, priority = 3 },         # RoCEv2 (UDP 4791)
//!     { selector = "ethertype", protocol = 0x8906, priorities = [4] },  # FCoE
//! ]
//! ```
//!
//! Each rule is sent in IEEE 802.1Qaz form (one entry per priority) and, where CEE
//! DCBX can say it, in CEE form: an Ethertype as an Ethertype, a TCP, UDP or any-port
//! number as CEE's TCP/UDP port (rules for the same port merged), a DSCP not at all
//! (CEE has no DSCP selector). A number as selector is CEE's 2-bit field, CEE only.
//! [`AppRules::validate`] is the one rule the file, the CLI and the control socket
//! apply.

use lossless_wire::cee::{AppConfig, AppEntry, AppSelector, PriorityMap, DCBX_OUI};
use lossless_wire::ieee::{AppPriority, AppPriorityTable, Selector, MAX_APP_ENTRIES};
use serde::{Deserialize, Serialize};

/// What a rule's protocol number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleSelector {
    Ethertype,
    /// TCP or SCTP port.
    Tcp,
    /// UDP or DCCP port.
    Udp,
    /// Any of TCP, SCTP, UDP, DCCP (CEE's TCP/UDP port).
    Port,
    /// A DSCP, 0..=63 (IEEE only).
    Dscp,
    /// CEE's 2-bit selector field, as a number (CEE only).
    Cee(u8),
}

impl RuleSelector {
    pub fn name(self) -> Option<&'static str> {
        match self {
            RuleSelector::Ethertype => Some("ethertype"),
            RuleSelector::Tcp => Some("tcp"),
            RuleSelector::Udp => Some("udp"),
            RuleSelector::Port => Some("port"),
            RuleSelector::Dscp => Some("dscp"),
            RuleSelector::Cee(_) => None,
        }
    }

    /// By name; `tcp-udp` is the older name of `port`.
    pub fn from_name(name: &str) -> Option<RuleSelector> {
        Some(match name {
            "ethertype" => RuleSelector::Ethertype,
            "tcp" => RuleSelector::Tcp,
            "udp" => RuleSelector::Udp,
            "port" | "tcp-udp" => RuleSelector::Port,
            "dscp" => RuleSelector::Dscp,
            _ => return None,
        })
    }

    /// The IEEE selector, if IEEE can carry it.
    pub fn ieee(self) -> Option<Selector> {
        match self {
            RuleSelector::Ethertype => Some(Selector::ETHERTYPE),
            RuleSelector::Tcp => Some(Selector::TCP),
            RuleSelector::Udp => Some(Selector::UDP),
            RuleSelector::Port => Some(Selector::PORT),
            RuleSelector::Dscp => Some(Selector::DSCP),
            RuleSelector::Cee(_) => None,
        }
    }

    /// The CEE selector, if CEE can carry it.
    pub fn cee(self) -> Option<AppSelector> {
        match self {
            RuleSelector::Ethertype => Some(AppSelector::ETHERTYPE),
            RuleSelector::Tcp | RuleSelector::Udp | RuleSelector::Port => Some(AppSelector::PORT),
            RuleSelector::Dscp => None,
            RuleSelector::Cee(v) => Some(AppSelector(v)),
        }
    }

    /// The rule for an IEEE selector.
    pub fn from_ieee(s: Selector) -> Option<RuleSelector> {
        Some(match s {
            Selector::ETHERTYPE => RuleSelector::Ethertype,
            Selector::TCP => RuleSelector::Tcp,
            Selector::UDP => RuleSelector::Udp,
            Selector::PORT => RuleSelector::Port,
            Selector::DSCP => RuleSelector::Dscp,
            _ => return None,
        })
    }

    /// The rule for a CEE selector (its named values get their names back).
    pub fn from_cee(s: AppSelector) -> RuleSelector {
        match s {
            AppSelector::ETHERTYPE => RuleSelector::Ethertype,
            AppSelector::PORT => RuleSelector::Port,
            AppSelector(v) => RuleSelector::Cee(v),
        }
    }
}

impl std::fmt::Display for RuleSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => match self {
                RuleSelector::Cee(v) => write!(f, "{v}"),
                _ => Ok(()),
            },
        }
    }
}

impl Serialize for RuleSelector {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match (self.name(), self) {
            (Some(n), _) => s.serialize_str(n),
            (None, RuleSelector::Cee(v)) => s.serialize_u8(*v),
            (None, _) => s.serialize_none(),
        }
    }
}

impl<'de> Deserialize<'de> for RuleSelector {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Name(String),
            Num(u8),
        }
        match Raw::deserialize(d)? {
            Raw::Name(n) => RuleSelector::from_name(&n).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "unknown APP selector {n:?}: expected \"ethertype\", \"tcp\", \"udp\", \
                     \"port\" or \"dscp\""
                ))
            }),
            Raw::Num(v) if v <= 3 => Ok(RuleSelector::Cee(v)),
            Raw::Num(v) => Err(serde::de::Error::custom(format!(
                "APP selector {v}: a number is CEE's 2-bit selector, 0..3"
            ))),
        }
    }
}

fn dcbx_oui() -> [u8; 3] {
    DCBX_OUI
}

fn is_dcbx_oui(oui: &[u8; 3]) -> bool {
    *oui == DCBX_OUI
}

/// One rule: traffic matching (selector, protocol) goes on these priorities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AppRule {
    pub selector: RuleSelector,
    pub protocol: u16,
    /// One priority (`priority = 3`) or several (`priorities = [3, 4]`).
    #[serde(alias = "priority", deserialize_with = "priority_or_list")]
    pub priorities: PriorityMap,
    /// CEE only: the OUI sent with the entry (00-1B-21 unless said otherwise).
    #[serde(default = "dcbx_oui", skip_serializing_if = "is_dcbx_oui")]
    pub oui: [u8; 3],
}

fn priority_or_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<PriorityMap, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        One(u8),
        List(Vec<u8>),
    }
    let list = match Raw::deserialize(d)? {
        Raw::One(p) => vec![p],
        Raw::List(l) => l,
    };
    PriorityMap::from_priorities(&list)
        .map_err(|p| serde::de::Error::custom(format!("priority {p} is out of range 0..=7")))
}

/// The most rules a port may have: as many as one IEEE APP TLV carries.
pub const MAX_RULES: usize = MAX_APP_ENTRIES;

/// A port's APP rules, in the order written. Serialises as `{ "entries": [...] }`, the
/// shape of the CEE table that older state files hold, which it reads.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AppRules {
    pub entries: Vec<AppRule>,
}

/// A rule refused: which one (by index) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("app.entries[{index}]: {reason}")]
pub struct RuleError {
    pub index: usize,
    /// The part of the rule at fault: `selector`, `protocol`, `priorities`, or the
    /// whole rule (empty).
    pub part: &'static str,
    pub reason: String,
}

impl AppRules {
    /// The CEE APP table: rules CEE can carry, a TCP, UDP and any-port rule for the
    /// same number merged into one entry.
    pub fn cee(&self) -> AppConfig {
        let mut out = AppConfig::default();
        for r in &self.entries {
            let Some(selector) = r.selector.cee() else {
                continue;
            };
            if let Some(e) = out
                .entries
                .iter_mut()
                .find(|e| e.selector == selector && e.protocol == r.protocol && e.oui == r.oui)
            {
                e.priorities.0 |= r.priorities.0;
                continue;
            }
            // Validation keeps the table within its capacity.
            let _ = out.entries.try_push(AppEntry {
                selector,
                protocol: r.protocol,
                oui: r.oui,
                priorities: r.priorities,
            });
        }
        out
    }

    /// The IEEE APP table: one entry per rule and priority.
    pub fn ieee(&self) -> AppPriorityTable {
        let mut out = AppPriorityTable::new();
        for r in &self.entries {
            let Some(selector) = r.selector.ieee() else {
                continue;
            };
            for priority in r.priorities.priorities() {
                // Validation keeps the table within its capacity.
                let _ = out.push(AppPriority {
                    priority,
                    selector,
                    protocol: r.protocol,
                });
            }
        }
        out
    }

    /// The rules a CEE table and an IEEE table stand for: the CEE entries, then the
    /// IEEE entries the CEE ones do not already say.
    pub fn from_tables(cee: &AppConfig, ieee: &AppPriorityTable) -> AppRules {
        let mut rules = AppRules::default();
        for e in &cee.entries {
            rules.entries.push(AppRule {
                selector: RuleSelector::from_cee(e.selector),
                protocol: e.protocol,
                priorities: e.priorities,
                oui: e.oui,
            });
        }
        let said = rules.ieee();
        for e in ieee.iter() {
            if said.contains(e) {
                continue;
            }
            let Some(selector) = RuleSelector::from_ieee(e.selector) else {
                continue;
            };
            match rules
                .entries
                .iter_mut()
                .find(|r| r.selector == selector && r.protocol == e.protocol)
            {
                Some(r) => r.priorities.0 |= 1 << (e.priority & 7),
                None => rules.entries.push(AppRule {
                    selector,
                    protocol: e.protocol,
                    priorities: PriorityMap(1 << (e.priority & 7)),
                    oui: DCBX_OUI,
                }),
            }
        }
        rules
    }

    /// Every rule valid, none repeated, and both tables within what their TLVs carry.
    pub fn validate(&self) -> Result<(), RuleError> {
        let bad = |index, part, reason: String| {
            Err(RuleError {
                index,
                part,
                reason,
            })
        };
        if self.entries.len() > MAX_RULES {
            return bad(
                MAX_RULES,
                "",
                format!(
                    "{} rules: at most {MAX_RULES} fit in the IEEE Application Priority TLV",
                    self.entries.len()
                ),
            );
        }
        for (i, r) in self.entries.iter().enumerate() {
            if let RuleSelector::Cee(v) = r.selector {
                if v > 3 {
                    return bad(i, "selector", format!("CEE selector {v} is outside 0..3"));
                }
            }
            if r.selector == RuleSelector::Dscp {
                if r.protocol > 63 {
                    return bad(
                        i,
                        "protocol",
                        format!("DSCP {} is outside 0..63", r.protocol),
                    );
                }
                if r.priorities.priorities().count() > 1 {
                    return bad(
                        i,
                        "priorities",
                        format!(
                            "DSCP {} is given priorities {}: a DSCP maps to one priority",
                            r.protocol, r.priorities
                        ),
                    );
                }
            }
            if r.selector.cee().is_some() && r.oui[0] & 0x03 != 0 {
                return bad(
                    i,
                    "oui",
                    format!(
                        "the low 2 bits of OUI[0] carry the selector and must be zero (found {})",
                        r.oui[0]
                    ),
                );
            }
            if let Some(first) = self.entries[..i]
                .iter()
                .position(|f| f.selector == r.selector && f.protocol == r.protocol)
            {
                return bad(
                    i,
                    "",
                    format!(
                        "{} {} is already entries[{first}]: list its priorities in one rule",
                        r.selector, r.protocol
                    ),
                );
            }
        }
        let ieee_entries: usize = self
            .entries
            .iter()
            .filter(|r| r.selector.ieee().is_some())
            .map(|r| r.priorities.priorities().count())
            .sum();
        if ieee_entries > MAX_APP_ENTRIES {
            return bad(
                self.entries.len().saturating_sub(1),
                "",
                format!(
                    "{ieee_entries} IEEE entries (one per rule and priority): at most \
                     {MAX_APP_ENTRIES} fit in the Application Priority TLV"
                ),
            );
        }
        let cee = self.cee().entries.len();
        if cee > lossless_wire::cee::MAX_SENT_APP_ENTRIES {
            return bad(
                self.entries.len().saturating_sub(1),
                "",
                format!(
                    "{cee} CEE entries: at most {} fit in the CEE DCBX TLV beside Control, PG \
                     and PFC",
                    lossless_wire::cee::MAX_SENT_APP_ENTRIES
                ),
            );
        }
        if let Err(e) = self.cee().validate() {
            return bad(e.index.unwrap_or(0), "", format!("in CEE form: {e}"));
        }
        Ok(())
    }

    /// Adds `rule`, merging its priorities into a rule for the same selector and
    /// protocol; the result must validate or nothing changes.
    pub fn add(&mut self, rule: AppRule) -> Result<(), RuleError> {
        let mut next = self.clone();
        match next
            .entries
            .iter_mut()
            .find(|r| r.selector == rule.selector && r.protocol == rule.protocol)
        {
            Some(r) if r.selector == RuleSelector::Dscp => r.priorities = rule.priorities,
            Some(r) => r.priorities.0 |= rule.priorities.0,
            None => next.entries.push(rule),
        }
        next.validate()?;
        *self = next;
        Ok(())
    }

    /// Removes the priorities of `rule` from the rule for its selector and protocol
    /// (the whole rule when none is left, or when `rule` names none). False when there
    /// was no such rule.
    pub fn remove(&mut self, rule: &AppRule) -> bool {
        let Some(i) = self
            .entries
            .iter()
            .position(|r| r.selector == rule.selector && r.protocol == rule.protocol)
        else {
            return false;
        };
        let r = &mut self.entries[i];
        r.priorities.0 &= !rule.priorities.0;
        if rule.priorities.0 == 0 || r.priorities.0 == 0 {
            self.entries.remove(i);
        }
        true
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn rule(selector: RuleSelector, protocol: u16, prios: &[u8]) -> AppRule {
        AppRule {
            selector,
            protocol,
            priorities: PriorityMap::from_priorities(prios).unwrap_or_default(),
            oui: DCBX_OUI,
        }
    }

    #[test]
    fn one_list_gives_both_tables() {
        let rules = AppRules {
            entries: vec![
                rule(RuleSelector::Dscp, 26, &[3]),
                rule(RuleSelector::Udp, 4791, &[3]),
                rule(RuleSelector::Tcp, 4791, &[5]),
                rule(RuleSelector::Ethertype, 0x8906, &[4]),
            ],
        };
        rules.validate().unwrap_or_else(|e| panic!("{e}"));
        let ieee = rules.ieee();
        let got: Vec<(u8, u8, u16)> = ieee
            .iter()
            .map(|e| (e.selector.0, e.priority, e.protocol))
            .collect();
        assert_eq!(
            got,
            [(5, 3, 26), (3, 3, 4791), (2, 5, 4791), (1, 4, 0x8906)]
        );
        let cee = rules.cee();
        let got: Vec<(u8, u16, u8)> = cee
            .entries
            .iter()
            .map(|e| (e.selector.0, e.protocol, e.priorities.0))
            .collect();
        // DSCP has no CEE form; UDP and TCP 4791 merge into one port entry.
        assert_eq!(got, [(1, 4791, 0b0010_1000), (0, 0x8906, 0b0001_0000)]);
        // Back from the two tables: the same CEE table, every IEEE entry kept.
        let back = AppRules::from_tables(&cee, &ieee);
        assert_eq!(back.cee(), cee);
        assert!(ieee.iter().all(|e| back.ieee().contains(e)));
    }

    #[test]
    fn refusals_name_the_rule() {
        let refuse = |entries: Vec<AppRule>| AppRules { entries }.validate().unwrap_err();
        let e = refuse(vec![rule(RuleSelector::Dscp, 64, &[3])]);
        assert_eq!((e.index, e.part), (0, "protocol"));
        let e = refuse(vec![rule(RuleSelector::Dscp, 26, &[3, 4])]);
        assert_eq!((e.index, e.part), (0, "priorities"));
        let e = refuse(vec![
            rule(RuleSelector::Udp, 4791, &[3]),
            rule(RuleSelector::Udp, 4791, &[3]),
        ]);
        assert_eq!(e.index, 1);
        assert!(e.reason.contains("already entries[0]"), "{e}");
        let many: Vec<AppRule> = (0..78)
            .map(|p| rule(RuleSelector::Ethertype, 0x8900 + p, &[1]))
            .collect();
        let e = refuse(many);
        assert!(e.reason.contains("78 CEE entries"), "{e}");
    }

    #[test]
    fn add_merges_and_remove_takes_priorities_away() {
        let mut rules = AppRules::default();
        rules.add(rule(RuleSelector::Udp, 4791, &[3])).unwrap();
        rules.add(rule(RuleSelector::Udp, 4791, &[4])).unwrap();
        assert_eq!(rules.entries[0].priorities, PriorityMap(0b1_1000));
        assert!(rules.add(rule(RuleSelector::Dscp, 99, &[3])).is_err());
        assert_eq!(rules.entries.len(), 1, "a refused add changes nothing");
        assert!(rules.remove(&rule(RuleSelector::Udp, 4791, &[3])));
        assert_eq!(rules.entries[0].priorities, PriorityMap(0b1_0000));
        assert!(rules.remove(&rule(RuleSelector::Udp, 4791, &[])));
        assert!(rules.entries.is_empty());
        assert!(!rules.remove(&rule(RuleSelector::Udp, 4791, &[])));
    }

    #[test]
    fn older_state_files_read_as_rules() {
        let old =
            r#"{"entries":[{"selector":"port","protocol":4791,"oui":[0,27,33],"priorities":[3]}]}"#;
        let rules: AppRules = serde_json::from_str(old).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rules.entries, [rule(RuleSelector::Port, 4791, &[3])]);
        let new = r#"{"entries":[{"selector":"dscp","protocol":26,"priority":3}]}"#;
        let rules: AppRules = serde_json::from_str(new).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rules.entries, [rule(RuleSelector::Dscp, 26, &[3])]);
    }
}

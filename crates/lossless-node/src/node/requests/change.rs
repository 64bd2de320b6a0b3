//! What `dcbx set` may change and how a change lands on a port's runtime overrides.
//!
//! Every value is checked as the configuration file checks it: a priority list by the
//! same rule (0..=7, none twice), the APP rules by [`AppRules::validate`] (through
//! [`AppRules::add`]), ETS by the table's rules ([`EtsAdmin::validate`]), and the
//! whole port by `PortConfig::validate` afterwards (the caller's). A refusal is a
//! [`ChangeError`] naming the setting (`pfc.priorities`, `app_add[0]`, `ets.tc_bw`)
//! and why; the caller adds the port and "nothing changed".

use lossless_dcbx::ieee::EtsAdmin;
use lossless_dcbx::FeatureAdmin;
use lossless_wire::cee::{PriorityMap, DCBX_OUI};
use lossless_wire::ieee::{EtsTable, Tsa};

use crate::config::{add_priority, AppRule, AppRules, Class, ClassKey, ClassTable, PortSettings};
use crate::node::errors::ChangeError;
use crate::protocol::{AppRuleChange, EtsChange, FeatureChange, FeatureName, TcChange};
use crate::state::PortOverrides;

/// Puts `change` over the port's overrides; `settings` are what the port runs now.
pub(super) fn apply_change(
    overrides: &mut PortOverrides,
    settings: &PortSettings,
    change: &FeatureChange,
) -> Result<(), ChangeError> {
    let feature = change.feature;
    let given = given(change);
    for &(field, owners) in &given {
        if !owners.contains(&feature) {
            return Err(ChangeError::OtherFeature {
                field,
                feature,
                owners,
            });
        }
    }
    if given.is_empty() {
        return Err(ChangeError::Nothing(feature));
    }
    let current = &settings.dcbx;
    match feature {
        FeatureName::Pfc => {
            if flags_given(change) || change.priorities.is_some() {
                let mut a = current.pfc.clone();
                set_flags(&mut a, change);
                if let Some(p) = &change.priorities {
                    a.cfg.priorities = priority_list("pfc.priorities", p)?;
                }
                overrides.pfc = Some(a);
            }
            if let Some(v) = change.mbc {
                overrides.pfc_mbc = Some(v);
            }
        }
        FeatureName::Pg => {
            let mut a = current.pg.clone();
            set_flags(&mut a, change);
            if let Some(v) = &change.pgid {
                a.cfg.pgid = eight("pg.pgid", "the priority group of each priority 0..7", v)?;
            }
            if let Some(v) = &change.percent {
                a.cfg.percent = eight("pg.percent", "the share of each priority group 0..7", v)?;
            }
            overrides.pg = Some(a);
        }
        FeatureName::App => {
            let mut a = FeatureAdmin {
                enable: current.app.enable,
                willing: current.app.willing,
                advertise: current.app.advertise,
                cfg: settings.app.clone(),
            };
            set_flags(&mut a, change);
            if let Some(rules) = &change.app {
                rules.validate().map_err(ChangeError::Rules)?;
                a.cfg = rules.clone();
            }
            if let Some(rules) = &change.app_rules {
                for (i, r) in rules.del.iter().flatten().enumerate() {
                    remove_rule(&mut a.cfg, &format!("app_del[{i}]"), r)?;
                }
                for (i, r) in rules.add.iter().flatten().enumerate() {
                    add_rule(&mut a.cfg, &format!("app_add[{i}]"), r)?;
                }
            }
            overrides.app = Some(a);
        }
        FeatureName::Ets => {
            let mut a = current.ieee.ets.clone();
            set_flags(&mut a, change);
            if let Some(e) = &change.ets {
                set_ets(&mut a.cfg, e)?;
            }
            a.cfg.validate().map_err(ChangeError::Ets)?;
            overrides.ets = Some(a);
        }
        FeatureName::Mode => {
            // `given` is not empty and only `mode` belongs to this feature.
            overrides.mode = change.mode;
        }
    }
    Ok(())
}

/// The fields `change` gives, each with the features it belongs to.
fn given(c: &FeatureChange) -> Vec<(&'static str, &'static [FeatureName])> {
    use FeatureName::{App, Ets, Mode, Pfc, Pg};
    let add = c.app_rules.as_ref().is_some_and(|r| r.add.is_some());
    let del = c.app_rules.as_ref().is_some_and(|r| r.del.is_some());
    let ets = |f: fn(&EtsChange) -> bool| c.ets.as_deref().is_some_and(f);
    const FLAGS: &[FeatureName] = &[Pg, Pfc, App, Ets];
    let fields: [(&'static str, bool, &'static [FeatureName]); 18] = [
        ("enable", c.enable.is_some(), FLAGS),
        ("willing", c.willing.is_some(), FLAGS),
        ("advertise", c.advertise.is_some(), FLAGS),
        ("priorities", c.priorities.is_some(), &[Pfc]),
        ("mbc", c.mbc.is_some(), &[Pfc]),
        ("pgid", c.pgid.is_some(), &[Pg]),
        ("percent", c.percent.is_some(), &[Pg]),
        ("app", c.app.is_some(), &[App]),
        ("app_add", add, &[App]),
        ("app_del", del, &[App]),
        ("prio_tc", ets(|e| e.prio_tc.is_some()), &[Ets]),
        ("tc_bw", ets(|e| e.tc_bw.is_some()), &[Ets]),
        ("tsa", ets(|e| e.tsa.is_some()), &[Ets]),
        ("tcs", ets(|e| e.tcs.is_some()), &[Ets]),
        ("max_tcs", ets(|e| e.max_tcs.is_some()), &[Ets]),
        ("cbs", ets(|e| e.cbs.is_some()), &[Ets]),
        ("recommend", ets(|e| e.recommend.is_some()), &[Ets]),
        ("mode", c.mode.is_some(), &[Mode]),
    ];
    fields
        .into_iter()
        .filter(|(_, set, _)| *set)
        .map(|(name, _, owner)| (name, owner))
        .collect()
}

fn flags_given(c: &FeatureChange) -> bool {
    c.enable.is_some() || c.willing.is_some() || c.advertise.is_some()
}

fn set_flags<C>(a: &mut FeatureAdmin<C>, c: &FeatureChange) {
    if let Some(v) = c.enable {
        a.enable = v;
    }
    if let Some(v) = c.willing {
        a.willing = v;
    }
    if let Some(v) = c.advertise {
        a.advertise = v;
    }
}

/// A list of priorities by the file's rule ([`add_priority`]).
fn priority_list(field: &str, list: &[u8]) -> Result<PriorityMap, ChangeError> {
    let mut map = PriorityMap::NONE;
    for &p in list {
        add_priority(&mut map, i64::from(p)).map_err(|error| ChangeError::Priority {
            field: field.to_string(),
            error,
        })?;
    }
    Ok(map)
}

fn eight(field: &'static str, what: &'static str, v: &[u8]) -> Result<[u8; 8], ChangeError> {
    <[u8; 8]>::try_from(v).map_err(|_| ChangeError::NotEight {
        field,
        what,
        found: v.len(),
    })
}

/// The rule an [`AppRuleChange`] stands for.
fn rule(field: &str, r: &AppRuleChange) -> Result<AppRule, ChangeError> {
    Ok(AppRule {
        selector: r.selector,
        protocol: r.protocol,
        priorities: priority_list(&format!("{field}.priorities"), &r.priorities)?,
        oui: r.oui.unwrap_or(DCBX_OUI),
    })
}

fn add_rule(rules: &mut AppRules, field: &str, r: &AppRuleChange) -> Result<(), ChangeError> {
    let rule = rule(field, r)?;
    if rule.priorities.0 == 0 {
        return Err(ChangeError::NoPriorityToAdd {
            field: field.to_string(),
            selector: rule.selector,
            protocol: rule.protocol,
        });
    }
    rules.add(rule).map_err(|error| ChangeError::Add {
        field: field.to_string(),
        selector: rule.selector,
        protocol: rule.protocol,
        priorities: rule.priorities,
        error,
    })
}

fn remove_rule(rules: &mut AppRules, field: &str, r: &AppRuleChange) -> Result<(), ChangeError> {
    let rule = rule(field, r)?;
    let Some(have) = rules
        .entries
        .iter()
        .find(|e| e.selector == rule.selector && e.protocol == rule.protocol)
    else {
        return Err(ChangeError::NoSuchRule {
            field: field.to_string(),
            selector: rule.selector,
            protocol: rule.protocol,
            rules: rules
                .entries
                .iter()
                .map(|e| format!("{} {}", e.selector, e.protocol))
                .collect(),
        });
    };
    if rule.priorities.0 & !have.priorities.0 != 0 {
        return Err(ChangeError::NotOnPriorities {
            field: field.to_string(),
            selector: rule.selector,
            protocol: rule.protocol,
            have: have.priorities,
            given: rule.priorities,
        });
    }
    rules.remove(&rule);
    Ok(())
}

/// The ETS fields of a change over `e`.
fn set_ets(e: &mut EtsAdmin, c: &EtsChange) -> Result<(), ChangeError> {
    if let Some(tcs) = &c.tcs {
        if c.prio_tc.is_some() || c.tc_bw.is_some() || c.tsa.is_some() {
            return Err(ChangeError::EtsBothForms);
        }
        e.table = tcs_table(tcs)?;
    }
    if let Some(v) = &c.prio_tc {
        e.table.prio_tc = eight("ets.prio_tc", "the traffic class of each priority 0..7", v)?;
    }
    if let Some(v) = &c.tc_bw {
        e.table.tc_bw = eight(
            "ets.tc_bw",
            "the bandwidth share of each traffic class 0..7",
            v,
        )?;
    }
    if let Some(v) = &c.tsa {
        e.table.tsa = <[Tsa; 8]>::try_from(v.as_slice()).map_err(|_| ChangeError::NotEight {
            field: "ets.tsa",
            what: "the selection algorithm of each traffic class 0..7",
            found: v.len(),
        })?;
    }
    if let Some(v) = c.max_tcs {
        e.max_tcs = v;
    }
    if let Some(v) = c.cbs {
        e.cbs = v;
    }
    if let Some(v) = c.recommend {
        e.recommend = v;
    }
    Ok(())
}

/// The three tables from the per-class form, by the file's rule ([`ClassTable`]).
fn tcs_table(tcs: &[TcChange]) -> Result<EtsTable, ChangeError> {
    let mut table = ClassTable::default();
    for (i, t) in tcs.iter().enumerate() {
        let class = Class {
            tc: u64::from(t.tc),
            priorities: priority_list(&format!("ets.tcs[{i}].priorities"), &t.priorities)?,
            bandwidth: u64::from(t.bandwidth),
            tsa: t.tsa,
        };
        table.add(i, &class).map_err(|fault| ChangeError::Class {
            index: i,
            key: match fault.key {
                ClassKey::Tc => "tc",
                ClassKey::Priorities => "priorities",
                ClassKey::Bandwidth => "bandwidth",
            },
            reason: fault.reason,
        })?;
    }
    Ok(table.table)
}

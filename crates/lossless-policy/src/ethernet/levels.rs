//! QoS levels as 802.1p priorities: a level's SL is its priority, so SLs are 0-7 (the
//! levels' and the qos-ulps lines'); PFC goes on the priorities of the lossless levels.

use super::{EthLevel, TOP};
use crate::ast::{NameIndex, Policy, Spanned};
use crate::check::{Emit, Severity};

/// The levels that have a priority, with their lossless flag (`lossless: yes`, or named by
/// `lossless`, the `--lossless` option); the qos-ulps SLs checked too.
pub(super) fn levels(
    policy: &Policy,
    names: &NameIndex,
    lossless: &[String],
    d: &mut Emit<'_>,
) -> Vec<EthLevel> {
    let lossless = lossless_flags(policy, names, lossless, d);
    let levels = priorities(policy, &lossless, d);
    ulp_priorities(policy, d);
    levels
}

/// Whether each level is lossless: its own flag, or a `--lossless` name (which must be a
/// level's; the first level of a name gets it).
fn lossless_flags(
    policy: &Policy,
    names: &NameIndex,
    lossless: &[String],
    d: &mut Emit<'_>,
) -> Vec<bool> {
    let mut flags: Vec<bool> = policy.levels.iter().map(|l| l.lossless).collect();
    for n in lossless {
        match names.level(n) {
            Some(i) => flags[i] = true,
            None => d(
                Severity::Error,
                "unknown-level",
                TOP,
                format!(
                    "--lossless {n}: no QoS level of that name, expected one of: {}",
                    level_names(policy)
                ),
            ),
        }
    }
    flags
}

/// The defined level names, for an error message.
fn level_names(policy: &Policy) -> String {
    if policy.levels.is_empty() {
        return "(no levels defined)".to_string();
    }
    let known: Vec<&str> = policy
        .levels
        .iter()
        .map(|l| l.name.value.as_str())
        .collect();
    known.join(", ")
}

/// Each level whose SL is a priority (0-7), in order; the others are errors.
fn priorities(policy: &Policy, lossless: &[bool], d: &mut Emit<'_>) -> Vec<EthLevel> {
    let mut levels = Vec::new();
    for (l, lossless) in policy.levels.iter().zip(lossless) {
        match priority(&l.sl) {
            Some(priority) => levels.push(EthLevel {
                name: l.name.value.clone(),
                priority,
                lossless: *lossless,
                loc: l.loc,
            }),
            None => d(
                Severity::Error,
                "sl-not-priority",
                l.sl.loc,
                format!(
                    "level `{}` has SL {}: on Ethernet the SL is the 802.1p priority, 0-7",
                    l.name.value, l.sl.value
                ),
            ),
        }
    }
    levels
}

fn priority(sl: &Spanned<u64>) -> Option<u8> {
    u8::try_from(sl.value).ok().filter(|s| *s < 8)
}

/// The SLs of the qos-ulps lines, then of `default`, each with its text.
fn ulp_sls(policy: &Policy) -> impl Iterator<Item = (&Spanned<u64>, &str)> {
    policy
        .ulps
        .iter()
        .map(|u| (&u.sl, u.text.as_str()))
        .chain(policy.ulp_default.iter().map(|s| (s, "default")))
}

/// A qos-ulps line's SL must be a priority too.
fn ulp_priorities(policy: &Policy, d: &mut Emit<'_>) {
    for (sl, text) in ulp_sls(policy) {
        if priority(sl).is_none() {
            d(
                Severity::Error,
                "sl-not-priority",
                sl.loc,
                format!(
                    "qos-ulps `{text}` gives SL {}: on Ethernet the SL is the 802.1p priority, 0-7",
                    sl.value
                ),
            );
        }
    }
}

/// The priorities with PFC on: the lossless levels', ascending, once each.
pub(super) fn pfc(levels: &[EthLevel]) -> Vec<u8> {
    let mut pfc: Vec<u8> = levels
        .iter()
        .filter(|l| l.lossless)
        .map(|l| l.priority)
        .collect();
    pfc.sort_unstable();
    pfc.dedup();
    pfc
}

/// The priorities some level or qos-ulps line uses.
pub(super) fn used(policy: &Policy, levels: &[EthLevel]) -> [bool; 8] {
    let mut used = [false; 8];
    for l in levels {
        used[usize::from(l.priority)] = true;
    }
    for (sl, _) in ulp_sls(policy) {
        if let Some(p) = priority(sl) {
            used[usize::from(p)] = true;
        }
    }
    used
}

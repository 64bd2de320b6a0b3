//! Priority-group bandwidth: a group's share is the VLArb weight of its VL (`vlarb-high`
//! and `vlarb-low` added, since CEE has one weighted table), split over the groups that
//! carry a priority; without a vlarb-scope, equal shares.

use crate::ast::VlArbScope;
use crate::check::{Emit, Severity};

/// The weight of PG 0..7 on the interface `name` whose priorities are in groups `pgid`;
/// a scope that leaves every group, or a used priority's group, without weight is reported.
pub(super) fn weights(
    name: &str,
    pgid: &[u8; 8],
    vlarb: Option<&VlArbScope>,
    used: &[bool; 8],
    d: &mut Emit<'_>,
) -> [u64; 8] {
    let carries = carrying(pgid);
    let Some(s) = vlarb else {
        return carries.map(u64::from);
    };
    let weights = scope_weights(s, &carries);
    if weights.iter().all(|w| *w == 0) {
        no_bandwidth(name, s, &carries, d);
    }
    zero_bandwidth(name, s, pgid, &weights, used, d);
    weights
}

/// The groups some priority is in: bandwidth goes to them only.
fn carrying(pgid: &[u8; 8]) -> [bool; 8] {
    let mut carries = [false; 8];
    for g in pgid {
        carries[usize::from(*g)] = true;
    }
    carries
}

/// The scope's weight of each VL 0-7, high and low added, kept for the carrying groups.
fn scope_weights(s: &VlArbScope, carries: &[bool; 8]) -> [u64; 8] {
    let mut weights = [0u64; 8];
    for w in s.high.iter().chain(&s.low).flatten() {
        if let Some(slot) = usize::try_from(w.vl).ok().and_then(|v| weights.get_mut(v)) {
            *slot += w.weight;
        }
    }
    for (w, c) in weights.iter_mut().zip(carries) {
        if !*c {
            *w = 0;
        }
    }
    weights
}

fn no_bandwidth(name: &str, s: &VlArbScope, carries: &[bool; 8], d: &mut Emit<'_>) {
    let pgs: Vec<usize> = carries
        .iter()
        .enumerate()
        .filter(|(_, c)| **c)
        .map(|(g, _)| g)
        .collect();
    d(
        Severity::Error,
        "no-bandwidth",
        s.loc,
        format!(
            "{name}: the vlarb-scope gives no weight to any VL its priorities use (PGs {pgs:?}), \
             so no priority group would get bandwidth"
        ),
    );
}

/// Each used priority whose group gets no weight.
fn zero_bandwidth(
    name: &str,
    s: &VlArbScope,
    pgid: &[u8; 8],
    weights: &[u64; 8],
    used: &[bool; 8],
    d: &mut Emit<'_>,
) {
    for (p, g) in pgid.iter().enumerate() {
        if used[p] && weights[usize::from(*g)] == 0 {
            d(
                Severity::Warning,
                "zero-bandwidth",
                s.loc,
                format!("{name}: priority {p} is in PG {g}, which gets 0 % (no weight for VL {g})"),
            );
        }
    }
}

/// Largest-remainder split of 100 % by `weights` (all zero: nothing).
pub(super) fn percentages(weights: &[u64; 8]) -> [u8; 8] {
    let total: u64 = weights.iter().sum();
    let mut out = [0u8; 8];
    if total == 0 {
        return out;
    }
    let mut rem: Vec<(u64, usize)> = Vec::new();
    let mut given = 0u64;
    for (i, w) in weights.iter().enumerate() {
        let exact = w * 100;
        out[i] = u8::try_from(exact / total).unwrap_or(100);
        given += exact / total;
        rem.push((exact % total, i));
    }
    // Largest remainders first; on a tie the lower PG.
    rem.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in rem
        .into_iter()
        .take(usize::try_from(100 - given).unwrap_or(0))
    {
        out[i] += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::percentages;

    #[test]
    fn percentages_sum_to_100() {
        assert_eq!(percentages(&[1; 8]), [13, 13, 13, 13, 12, 12, 12, 12]);
        assert_eq!(
            percentages(&[1, 1, 1, 0, 0, 0, 0, 0]),
            [34, 33, 33, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            percentages(&[255, 127, 63, 0, 0, 0, 0, 0]),
            [57, 29, 14, 0, 0, 0, 0, 0]
        );
        assert_eq!(percentages(&[0; 8]), [0; 8]);
        for w in [[7u64, 3, 0, 9, 1, 1, 0, 200], [1, 0, 0, 0, 0, 0, 0, 0]] {
            assert_eq!(
                percentages(&w).iter().map(|x| u32::from(*x)).sum::<u32>(),
                100
            );
        }
    }
}

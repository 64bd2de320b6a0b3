//! The sl2vl-scopes and vlarb-scopes on Ethernet: what of them has no meaning there, which
//! of them sets an interface's tables (the last whose `group` holds it, as for IB), and the
//! priority groups an SL2VL table gives.

use super::ports::{in_groups, Interface};
use crate::ast::{NameIndex, Policy, PortSet, Sl2VlScope, VlArbScope};
use crate::check::{Emit, Severity};

/// Each sl2vl-scope's InfiniBand-only parts, and the VLs beyond the priority groups of a
/// scope that holds an interface.
pub(super) fn sl2vl_notes(
    policy: &Policy,
    names: &NameIndex,
    ifaces: &[Interface],
    d: &mut Emit<'_>,
) {
    for s in &policy.sl2vl_scopes {
        if !s.across_from.is_empty() || !s.across_to.is_empty() {
            d(
                Severity::Warning,
                "ib-only",
                s.loc,
                "sl2vl-scope: `across` needs an InfiniBand fabric; ignored on Ethernet".to_string(),
            );
        }
        if matches!(s.from, PortSet::List(_)) || matches!(s.to, PortSet::List(_)) {
            d(Severity::Warning, "ib-only", s.loc, "sl2vl-scope: port numbers in `from`/`to` mean nothing for interfaces; the scope applies to every interface of its groups".to_string());
        }
        if ifaces
            .iter()
            .any(|i| in_groups(policy, names, &i.name, &s.groups))
        {
            vls_not_pgs(s, d);
        }
    }
}

/// The SLs 0-7 of the table that go to a VL that is no priority group.
fn vls_not_pgs(s: &Sl2VlScope, d: &mut Emit<'_>) {
    for (sl, vl) in s.table.iter().enumerate().take(8) {
        if *vl >= 8 {
            d(
                Severity::Error,
                "vl-not-pg",
                s.table_loc,
                format!(
                    "sl2vl-table maps SL {sl} to VL {vl}: on Ethernet VLs are priority groups \
                     0-7{}",
                    if *vl == 15 {
                        " (VL15, dropped, has no DCBX equivalent)"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
}

/// Each vlarb-scope's parts that have no CEE PG or IEEE ETS equivalent.
pub(super) fn vlarb_notes(policy: &Policy, d: &mut Emit<'_>) {
    for s in &policy.vlarb_scopes {
        if !s.across.is_empty() {
            d(
                Severity::Warning,
                "ib-only",
                s.loc,
                "vlarb-scope: `across` needs an InfiniBand fabric; ignored on Ethernet".to_string(),
            );
        }
        if s.high.is_some() || s.high_limit.is_some() {
            d(Severity::Warning, "vlarb-high", s.loc, "vlarb-high and vl-high-limit have no equivalent in CEE priority groups or IEEE 802.1Qaz ETS: high and low weights are added into one bandwidth table".to_string());
        }
    }
}

/// The sl2vl-scope that sets the interface's table: the last that holds it.
pub(super) fn last_sl2vl<'p>(
    policy: &'p Policy,
    names: &NameIndex,
    iface: &str,
) -> Option<&'p Sl2VlScope> {
    policy
        .sl2vl_scopes
        .iter()
        .rev()
        .find(|s| in_groups(policy, names, iface, &s.groups))
}

/// The vlarb-scope that sets the interface's weights: the last that holds it.
pub(super) fn last_vlarb<'p>(
    policy: &'p Policy,
    names: &NameIndex,
    iface: &str,
) -> Option<&'p VlArbScope> {
    policy
        .vlarb_scopes
        .iter()
        .rev()
        .find(|s| in_groups(policy, names, iface, &s.groups))
}

/// The priority group of priorities 0-7: the VL the table gives their SL (VLs beyond 7,
/// an error already, taken as 7); identity without a scope.
pub(super) fn priority_groups(sl2vl: Option<&Sl2VlScope>) -> [u8; 8] {
    let mut pgid = [0u8; 8];
    for (p, slot) in pgid.iter_mut().enumerate() {
        *slot = sl2vl.map_or(p as u8, |s| s.table[p].min(7));
    }
    pgid
}

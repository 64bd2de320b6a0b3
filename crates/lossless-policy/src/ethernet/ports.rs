//! The interfaces to configure: the `port-name` entries of port groups that are interface
//! names (`port-name: enp65s0f0`), then `--ports`; each must be a name the kernel takes.
//! And which port groups hold an interface.

use super::TOP;
use crate::ast::{Loc, NameIndex, Policy, PortGroup, Spanned};
use crate::check::{Emit, Severity};

/// An interface to configure, and where it was named (the top of the file for `--ports`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Interface {
    pub name: String,
    pub loc: Loc,
}

/// The interfaces of the groups, then those of `extra` (the `--ports` option), each once;
/// InfiniBand-only group criteria, bad names and no interface at all are reported.
pub(super) fn interfaces(policy: &Policy, extra: &[String], d: &mut Emit<'_>) -> Vec<Interface> {
    let mut ifaces: Vec<Interface> = Vec::new();
    for g in &policy.port_groups {
        for i in &g.interfaces {
            add(&mut ifaces, &i.value, i.loc);
        }
        ib_only(g, d);
    }
    for p in extra {
        add(&mut ifaces, p, TOP);
    }
    bad_names(&ifaces, d);
    if ifaces.is_empty() {
        d(
            Severity::Error,
            "no-ports",
            policy.port_groups.first().map_or(TOP, |g| g.loc),
            "no Ethernet port to configure: name interfaces in a port group \
             (`port-name: enp65s0f0`) or with --ports"
                .to_string(),
        );
    }
    ifaces
}

fn add(ifaces: &mut Vec<Interface>, name: &str, loc: Loc) {
    if !ifaces.iter().any(|i| i.name == name) {
        ifaces.push(Interface {
            name: name.to_string(),
            loc,
        });
    }
}

/// A group's criteria that select InfiniBand ports only.
fn ib_only(g: &PortGroup, d: &mut Emit<'_>) {
    let ib: Vec<&str> = [
        (!g.port_guids.is_empty(), "port-guid"),
        (!g.port_names.is_empty(), "IB port names (`<node>/P<port>`)"),
        (!g.pkeys.is_empty(), "pkey"),
        (!g.partitions.is_empty(), "partition"),
        (!g.node_types.is_empty(), "node-type"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, w)| *w)
    .collect();
    if !ib.is_empty() {
        d(
            Severity::Warning,
            "ib-only",
            g.name.loc,
            format!(
                "port group `{}`: {} select InfiniBand ports; on Ethernet only interface \
                 names (`port-name: enp65s0f0`) select ports",
                g.name.value,
                ib.join(", ")
            ),
        );
    }
}

fn bad_names(ifaces: &[Interface], d: &mut Emit<'_>) {
    for i in ifaces {
        if let Some(why) = bad_ifname(&i.name) {
            d(
                Severity::Error,
                "interface-name",
                i.loc,
                format!("`{}` cannot be configured: {why}", i.name),
            );
        }
    }
}

/// Why an interface name cannot be a losslessd port section (the kernel's rules).
fn bad_ifname(name: &str) -> Option<&'static str> {
    if name.is_empty() || name.len() > 15 {
        Some("an interface name is 1 to 15 bytes")
    } else if name == "." || name == ".." {
        Some("`.` and `..` are not interface names")
    } else if name.contains(['*', '?', '[']) {
        Some("a single interface name (globs would make the emitted sections overlap)")
    } else if name
        .chars()
        .any(|c| c == '/' || c == ':' || c.is_whitespace() || c.is_control())
    {
        Some("an interface name has no `/`, `:`, blanks or control characters")
    } else {
        None
    }
}

/// Whether one of `groups` (names, found case-insensitively as everywhere) holds the
/// interface `iface`.
pub(super) fn in_groups(
    policy: &Policy,
    names: &NameIndex,
    iface: &str,
    groups: &[Spanned<String>],
) -> bool {
    groups.iter().any(|g| {
        names
            .group(&g.value)
            .and_then(|gi| policy.port_groups.get(gi))
            .is_some_and(|pg| pg.interfaces.iter().any(|i| i.value == iface))
    })
}

/// The names of the port groups holding the interface `iface`, in order.
pub(super) fn groups_of(policy: &Policy, iface: &str) -> Vec<String> {
    policy
        .port_groups
        .iter()
        .filter(|g| g.interfaces.iter().any(|i| i.value == iface))
        .map(|g| g.name.value.clone())
        .collect()
}

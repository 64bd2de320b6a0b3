//! `<port-groups>` and its `<port-group>` items.

use super::build::split_list;
use super::build::{Builder, Once};
use super::tree::{norm, Elem};
use crate::ast::*;
use crate::parse::values::port_name;

impl Builder<'_, '_> {
    pub(super) fn port_groups(&mut self, e: &Elem) {
        let groups = self.items(e, "port-group");
        if groups.is_empty() {
            self.unexpected(
                e.loc,
                format!("`<{}>` without `<port-group>`", e.name),
                "at least one `<port-group>` (OpenSM requires one per port-groups)",
            );
        }
        for g in groups {
            self.port_group(g);
        }
    }

    pub(super) fn port_group(&mut self, e: &Elem) {
        let mut g = PortGroup::empty(e.loc);
        let mut name = None;
        let mut seen = Once::default();
        let mut ok = true;
        for c in self.elems(e) {
            let n = norm(&c.name);
            if matches!(n.as_str(), "name" | "use") && !self.once(&mut seen, e, c) {
                continue;
            }
            match n.as_str() {
                "name" => name = self.name(c, "a port group name"),
                "use" => g.use_ = self.value(c, "a description").map(|v| v.text.into()),
                "port-guid" | "pkey" => {
                    let what = if n == "pkey" {
                        "a P_Key or P_Key range"
                    } else {
                        "a port GUID or GUID range"
                    };
                    match self.ranges(c, what) {
                        Some(r) if n == "pkey" => g.pkeys.extend(r),
                        Some(r) => g.port_guids.extend(r),
                        None => ok = false,
                    }
                }
                "port-name" => ok &= self.port_names(c, &mut g),
                "partition" => g.partitions.extend(self.names(c, "a partition name")),
                "node-type" => ok &= self.node_types(c, &mut g),
                _ => self.not_allowed(e, c),
            }
        }
        match name {
            Some(n) => {
                g.name = n;
                if ok {
                    self.policy.port_groups.push(g);
                }
            }
            None => self.missing(e, "`<name>`"),
        }
    }

    /// `<port-name>`: `<node description>/P<port>` names an InfiniBand port, a name without
    /// a `/` an Ethernet interface. Every name is read; false when one was wrong.
    fn port_names(&mut self, c: &Elem, g: &mut PortGroup) -> bool {
        let mut ok = true;
        for s in self.names(c, "a port name `<node description>/P<port>`") {
            if !s.value.contains('/') {
                g.interfaces.push(s);
                continue;
            }
            match port_name(self.file, &s.value, false, s.loc) {
                Ok(p) => g.port_names.push(Spanned::new(p, s.loc)),
                Err(err) => {
                    self.err(err);
                    ok = false;
                }
            }
        }
        ok
    }

    /// `<node-type>`: a list of node types. Every one is read; false when one was wrong.
    fn node_types(&mut self, c: &Elem, g: &mut PortGroup) -> bool {
        let Some(v) = self.value(c, "node types") else {
            return true;
        };
        let mut ok = true;
        for s in split_list(&v) {
            // The OFA QoS RFC also writes HCA for CA.
            let name = if s.value.eq_ignore_ascii_case("HCA") {
                "CA"
            } else {
                s.value.as_str()
            };
            if !g.node_types.add(name) {
                self.unexpected(
                    s.loc,
                    format!("`{}`", s.value),
                    "a node type: CA (or HCA), SWITCH, ROUTER, SELF or ALL",
                );
                ok = false;
            }
        }
        ok
    }
}

//! `<qos-setup>`: `<sl2vl-scope>` and `<vlarb-scope>` items.

use super::build::{Builder, Once};
use super::tree::{norm, Elem};
use crate::ast::*;
use crate::parse::values::{merge_sets, sl2vl_table, vl_pairs};

impl Builder<'_, '_> {
    pub(super) fn qos_setup(&mut self, e: &Elem) {
        for c in self.elems(e) {
            match norm(&c.name).as_str() {
                "sl2vl-tables" => {
                    for s in self.items(c, "sl2vl-scope") {
                        self.sl2vl_scope(s);
                    }
                }
                "vlarb-tables" => {
                    for s in self.items(c, "vlarb-scope") {
                        self.vlarb_scope(s);
                    }
                }
                _ => self.not_allowed(e, c),
            }
        }
    }

    pub(super) fn sl2vl_scope(&mut self, e: &Elem) {
        let mut s = Sl2VlScope::empty(e.loc);
        let mut table = false;
        let mut ok = true;
        let mut seen = Once::default();
        for c in self.elems(e) {
            let n = norm(&c.name);
            match n.as_str() {
                "group" => s.groups.extend(self.names(c, "a port group name")),
                "across" => {
                    let v = self.names(c, "a port group name");
                    s.across_from.extend(v.iter().cloned());
                    s.across_to.extend(v);
                }
                "across-from" => s.across_from.extend(self.names(c, "a port group name")),
                "across-to" => s.across_to.extend(self.names(c, "a port group name")),
                "from" | "to" => match self.port_set(c) {
                    Some(set) => {
                        let slot = if n == "from" { &mut s.from } else { &mut s.to };
                        *slot = merge_sets(std::mem::take(slot), set);
                    }
                    None => ok = false,
                },
                "sl2vl-table" => {
                    if !self.once(&mut seen, e, c) {
                        continue;
                    }
                    match self.sl2vl_table_elem(c) {
                        Some(t) => {
                            s.table = t;
                            s.table_loc = c.loc;
                            table = true;
                        }
                        None => ok = false,
                    }
                }
                _ => self.not_allowed(e, c),
            }
        }
        if !table && ok {
            self.missing(e, "`<sl2vl-table>`");
            return;
        }
        if s.groups.is_empty() && s.across_from.is_empty() && s.across_to.is_empty() {
            self.missing(e, "`<group>`, `<across>`, `<across-from>` or `<across-to>`");
            return;
        }
        if ok {
            self.policy.sl2vl_scopes.push(s);
        }
    }

    fn sl2vl_table_elem(&mut self, e: &Elem) -> Option<[u8; 16]> {
        let v = self.value(e, "16 VLs")?;
        let mut cur = self.cursor(&v);
        let r = cur.num_list("a VL (0-15)", &mut self.policy.octal_numbers);
        let vals = self.ok(r)?;
        let table = sl2vl_table(self.file, &vals, v.loc);
        self.ok(table)
    }

    pub(super) fn vlarb_scope(&mut self, e: &Elem) {
        let mut s = VlArbScope::empty(e.loc);
        let mut ok = true;
        let mut seen = Once::default();
        for c in self.elems(e) {
            let n = norm(&c.name);
            if matches!(n.as_str(), "vlarb-high" | "vlarb-low" | "vl-high-limit")
                && !self.once(&mut seen, e, c)
            {
                continue;
            }
            match n.as_str() {
                "group" => s.groups.extend(self.names(c, "a port group name")),
                "across" => s.across.extend(self.names(c, "a port group name")),
                "to" => match self.port_set(c) {
                    Some(set) => s.to = merge_sets(std::mem::take(&mut s.to), set),
                    None => ok = false,
                },
                "vlarb-high" | "vlarb-low" => match self.vl_weights(c) {
                    Some(p) if n == "vlarb-high" => s.high = Some(p),
                    Some(p) => s.low = Some(p),
                    None => ok = false,
                },
                "vl-high-limit" => match self.number(c, "the VL high limit") {
                    Some((n, loc, _)) => s.high_limit = Some(Spanned::new(n, loc)),
                    None => ok = false,
                },
                _ => self.not_allowed(e, c),
            }
        }
        if s.groups.is_empty() && s.across.is_empty() {
            self.missing(e, "`<group>` or `<across>`");
            return;
        }
        if ok {
            self.policy.vlarb_scopes.push(s);
        }
    }

    /// `<vlarb-high>` or `<vlarb-low>`: VL:weight pairs.
    fn vl_weights(&mut self, e: &Elem) -> Option<Vec<VlWeight>> {
        let v = self.value(e, "VL:weight pairs")?;
        let mut cur = self.cursor(&v);
        let r = vl_pairs(&mut cur, &mut self.policy.octal_numbers);
        self.ok(r)
    }
}

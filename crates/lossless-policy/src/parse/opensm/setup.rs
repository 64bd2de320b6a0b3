//! `qos-setup` items: `vlarb-scope` and `sl2vl-scope`.

use super::state::State;
use super::Parser;
use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::values::{merge_sets, port_list, sl2vl_table, vl_pairs};
use crate::parse::ParseError;

impl Parser<'_> {
    pub(super) fn vlarb_attr(
        &mut self,
        cur: &mut Cursor<'_>,
        kw: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        match kw {
            "group" | "across" => {
                self.colon(cur, kw)?;
                let names = self.names(cur, "a port group name")?;
                if let Some(v) = self.vlarb.as_mut() {
                    if kw == "group" {
                        v.groups.extend(names);
                    } else {
                        v.across.extend(names);
                    }
                }
            }
            "vlarb-high" | "vlarb-low" => {
                let key: &'static str = if kw == "vlarb-high" {
                    "vlarb-high"
                } else {
                    "vlarb-low"
                };
                self.once(cur, key, "vlarb-scope", loc)?;
                let pairs = vl_pairs(cur, &mut self.policy.octal_numbers)?;
                if let Some(v) = self.vlarb.as_mut() {
                    if kw == "vlarb-high" {
                        v.high = Some(pairs);
                    } else {
                        v.low = Some(pairs);
                    }
                }
            }
            "vl-high-limit" => {
                self.once(cur, "vl-high-limit", "vlarb-scope", loc)?;
                let (n, nloc, _) = cur.number("the VL high limit")?;
                if let Some(v) = self.vlarb.as_mut() {
                    v.high_limit = Some(Spanned::new(n, nloc));
                }
            }
            _ => return Err(self.unknown_attr(State::VlarbScope, kw, loc)),
        }
        cur.expect_end()
    }

    pub(super) fn end_vlarb(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        cur.expect_end()?;
        let (_, opened) = self.state();
        let Some(v) = self.vlarb.take() else {
            return Err(self.unknown_attr(State::VlarbScope, "end-vlarb-scope", loc));
        };
        if v.groups.is_empty() && v.across.is_empty() {
            return Err(self.missing(
                "vlarb-scope",
                opened,
                loc,
                "end-vlarb-scope",
                "`group` or `across`",
            ));
        }
        self.policy.vlarb_scopes.push(v);
        self.pop();
        Ok(())
    }

    pub(super) fn sl2vl_attr(
        &mut self,
        cur: &mut Cursor<'_>,
        kw: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        match kw {
            "group" | "across" | "across-from" | "across-to" => self.sl2vl_groups(cur, kw)?,
            "from" | "to" => self.sl2vl_ports(cur, kw)?,
            "sl2vl-table" => self.sl2vl_table_attr(cur, loc)?,
            _ => return Err(self.unknown_attr(State::Sl2vlScope, kw, loc)),
        }
        cur.expect_end()
    }

    /// `group`, `across`, `across-from`, `across-to`: which ports the scope applies to.
    fn sl2vl_groups(&mut self, cur: &mut Cursor<'_>, kw: &str) -> Result<(), ParseError> {
        self.colon(cur, kw)?;
        let names = self.names(cur, "a port group name")?;
        if let Some(s) = self.sl2vl.as_mut() {
            match kw {
                "group" => s.groups.extend(names),
                "across" => {
                    s.across_from.extend(names.iter().cloned());
                    s.across_to.extend(names);
                }
                "across-from" => s.across_from.extend(names),
                _ => s.across_to.extend(names),
            }
        }
        Ok(())
    }

    /// `from` or `to`: `*` or port numbers below 128, added to what the scope has.
    fn sl2vl_ports(&mut self, cur: &mut Cursor<'_>, kw: &str) -> Result<(), ParseError> {
        self.colon(cur, kw)?;
        let set = if cur.eat('*') {
            PortSet::All
        } else {
            let r = cur.ranges(
                "`*` or a port number list",
                false,
                &mut self.policy.octal_numbers,
            )?;
            port_list(self.file, r, &format!("`{kw}`"))?
        };
        if let Some(s) = self.sl2vl.as_mut() {
            let slot = if kw == "from" { &mut s.from } else { &mut s.to };
            *slot = merge_sets(std::mem::take(slot), set);
        }
        Ok(())
    }

    /// `sl2vl-table`: 16 VLs, once per scope.
    fn sl2vl_table_attr(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        self.once(cur, "sl2vl-table", "sl2vl-scope", loc)?;
        let vals = cur.num_list("a VL (0-15)", &mut self.policy.octal_numbers)?;
        let table = sl2vl_table(self.file, &vals, loc)?;
        self.sl2vl_table = true;
        if let Some(s) = self.sl2vl.as_mut() {
            s.table = table;
            s.table_loc = loc;
        }
        Ok(())
    }

    pub(super) fn end_sl2vl(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        cur.expect_end()?;
        let (_, opened) = self.state();
        let Some(s) = self.sl2vl.take() else {
            return Err(self.unknown_attr(State::Sl2vlScope, "end-sl2vl-scope", loc));
        };
        if !self.sl2vl_table {
            return Err(self.missing(
                "sl2vl-scope",
                opened,
                loc,
                "end-sl2vl-scope",
                "`sl2vl-table`",
            ));
        }
        if s.groups.is_empty() && s.across_from.is_empty() && s.across_to.is_empty() {
            return Err(self.missing(
                "sl2vl-scope",
                opened,
                loc,
                "end-sl2vl-scope",
                "`group`, `across`, `across-from` or `across-to`",
            ));
        }
        self.policy.sl2vl_scopes.push(s);
        self.pop();
        Ok(())
    }
}

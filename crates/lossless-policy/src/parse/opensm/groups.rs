//! `port-groups` and its `port-group` items: names, GUIDs, port names, P_Keys, partitions
//! and node types.

use super::state::State;
use super::Parser;
use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::values::port_name;
use crate::parse::ParseError;

impl Parser<'_> {
    /// `end-port-groups`: OpenSM requires at least one group in the section.
    pub(super) fn end_port_groups(
        &mut self,
        cur: &mut Cursor<'_>,
        loc: Loc,
    ) -> Result<(), ParseError> {
        cur.expect_end()?;
        if self.children() == 0 {
            return Err(ParseError::Unexpected {
                file: self.file.to_string(),
                loc,
                found: "`end-port-groups`".to_string(),
                expected: "port-group (OpenSM requires at least one per port-groups)".to_string(),
            });
        }
        self.pop();
        Ok(())
    }

    pub(super) fn port_group_attr(
        &mut self,
        cur: &mut Cursor<'_>,
        kw: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        let file = self.file;
        let octal = &mut self.policy.octal_numbers;
        let Some(g) = self.group.as_mut() else {
            return Err(self.unknown_attr(State::PortGroup, kw, loc));
        };
        match kw {
            "name" => {
                let name =
                    self.single(cur, "name", "port-group", loc, "a port group name", false)?;
                self.group_name = Some(name);
            }
            "use" => {
                let s = self.single(cur, "use", "port-group", loc, "a description", true)?;
                if let Some(g) = self.group.as_mut() {
                    g.use_ = Some(s.value);
                }
            }
            "port-guid" => {
                cur.expect(':', "`:` after `port-guid`")?;
                g.port_guids
                    .extend(cur.ranges("a port GUID or GUID range", false, octal)?);
            }
            "pkey" => {
                cur.expect(':', "`:` after `pkey`")?;
                g.pkeys
                    .extend(cur.ranges("a P_Key or P_Key range", false, octal)?);
            }
            "port-name" => {
                cur.expect(':', "`:` after `port-name`")?;
                port_names(file, cur, g)?;
            }
            "partition" => {
                cur.expect(':', "`:` after `partition`")?;
                let v = cur.string_list("a partition name")?;
                g.partitions
                    .extend(v.into_iter().map(|s| Spanned::new(s.value.0, s.loc)));
            }
            "node-type" => {
                cur.expect(':', "`:` after `node-type`")?;
                node_types(file, cur, g)?;
            }
            _ => return Err(self.unknown_attr(State::PortGroup, kw, loc)),
        }
        cur.expect_end()
    }

    pub(super) fn end_port_group(
        &mut self,
        cur: &mut Cursor<'_>,
        loc: Loc,
    ) -> Result<(), ParseError> {
        cur.expect_end()?;
        let (_, opened) = self.state();
        let Some(mut g) = self.group.take() else {
            return Err(self.unknown_attr(State::PortGroup, "end-port-group", loc));
        };
        let Some(name) = self.group_name.take() else {
            return Err(self.missing("port-group", opened, loc, "end-port-group", "`name`"));
        };
        g.name = name;
        self.policy.port_groups.push(g);
        self.pop();
        Ok(())
    }
}

/// `port-name:` values: `<node description>/P<port>` names an InfiniBand port; a name
/// without a `/` is an Ethernet interface.
fn port_names(file: &str, cur: &mut Cursor<'_>, g: &mut PortGroup) -> Result<(), ParseError> {
    for s in cur.string_list("a port name `<node description>/P<port>`")? {
        let (name, blank) = s.value;
        if name.contains('/') {
            g.port_names
                .push(Spanned::new(port_name(file, &name, blank, s.loc)?, s.loc));
        } else {
            g.interfaces.push(Spanned::new(name, s.loc));
        }
    }
    Ok(())
}

/// `node-type:` values, comma-separated.
fn node_types(file: &str, cur: &mut Cursor<'_>, g: &mut PortGroup) -> Result<(), ParseError> {
    loop {
        let Some(w) = cur.word() else {
            return Err(cur.unexpected("a node type: CA, SWITCH, ROUTER, SELF or ALL"));
        };
        if !g.node_types.add(w.value) {
            return Err(ParseError::Unexpected {
                file: file.to_string(),
                loc: w.loc,
                found: format!("`{}`", w.value),
                expected: "a node type: CA, SWITCH, ROUTER, SELF or ALL".to_string(),
            });
        }
        if !cur.eat(',') {
            return Ok(());
        }
    }
}

//! Parser for OpenSM's `qos-policy.conf` (the grammar of `osm_qos_parser_y.y`).
//!
//! Same language as OpenSM, with three deliberate differences, each an error here where
//! OpenSM is silent: a level SL above 15 (OpenSM stores it and then every path for that level
//! fails), a packet life above 63 (it spills into the selector bits of the PathRecord) and a
//! name containing a section keyword (OpenSM's lexer splits the name there and rejects the
//! file with an error that does not name the token).

mod groups;
mod levels;
mod rules;
mod setup;
mod state;
mod ulps;

use crate::ast::*;
use crate::lexer::{strip_comment, Cursor};
use crate::parse::ParseError;
use state::{Seen, State};

/// Kept here for its public path; the value readers live in `parse::values`.
pub use crate::parse::values::mask_pkeys;
pub(crate) use ulps::{parse_ulp, Ulp};

struct Parser<'a> {
    file: &'a str,
    policy: Policy,
    /// Open items: state, where opened, number of children seen.
    stack: Vec<(State, Loc, usize)>,
    seen: Seen,
    group: Option<PortGroup>,
    group_name: Option<Spanned<String>>,
    sl2vl: Option<Sl2VlScope>,
    sl2vl_table: bool,
    vlarb: Option<VlArbScope>,
    level: Option<QosLevel>,
    level_name: Option<Spanned<String>>,
    level_sl: Option<Spanned<u64>>,
    rule: Option<MatchRule>,
    rule_level: Option<Spanned<String>>,
}

fn blank_loc() -> Loc {
    Loc { line: 0, col: 0 }
}

/// Parse OpenSM's policy format.
pub fn parse(file: &str, src: &str) -> Result<Policy, ParseError> {
    let mut p = Parser {
        file,
        policy: Policy::default(),
        stack: vec![(State::Top, blank_loc(), 0)],
        seen: Seen::default(),
        group: None,
        group_name: None,
        sl2vl: None,
        sl2vl_table: false,
        vlarb: None,
        level: None,
        level_name: None,
        level_sl: None,
        rule: None,
        rule_level: None,
    };
    let mut last_line = 0u32;
    for (i, raw) in src.split('\n').enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        last_line = line;
        let text = strip_comment(raw);
        if text.trim().is_empty() {
            continue;
        }
        let mut cur = Cursor::new(file, text, line);
        p.line(&mut cur)?;
    }
    let (state, opened) = p.state();
    if state != State::Top {
        return Err(ParseError::Unclosed {
            file: file.to_string(),
            loc: Loc {
                line: last_line,
                col: 1,
            },
            found: "end of file".to_string(),
            item: state.opener().to_string(),
            opened,
            expected: state.closer().to_string(),
        });
    }
    Ok(p.policy)
}

impl<'a> Parser<'a> {
    fn state(&self) -> (State, Loc) {
        self.stack
            .last()
            .map_or((State::Top, blank_loc()), |(s, l, _)| (*s, *l))
    }

    /// Children seen in the innermost open item (OpenSM requires at least one port-group in
    /// port-groups and one rule in qos-ulps).
    fn children(&self) -> usize {
        self.stack.last().map_or(0, |f| f.2)
    }

    fn count_child(&mut self) {
        if let Some(f) = self.stack.last_mut() {
            f.2 += 1;
        }
    }

    fn push(&mut self, s: State, loc: Loc) {
        self.count_child();
        self.stack.push((s, loc, 0));
        self.seen = Seen::default();
    }

    fn pop(&mut self) {
        self.stack.pop();
    }

    /// One line: an item opens or closes, or an attribute of the open item.
    fn line(&mut self, cur: &mut Cursor<'_>) -> Result<(), ParseError> {
        let (state, _) = self.state();
        if state == State::Ulps {
            return self.ulp_line(cur);
        }
        let Some(w) = cur.word() else {
            return Err(cur.unexpected(state.expected()));
        };
        let kw = w.value;
        let loc = w.loc;
        match (state, kw) {
            (State::Top, _) => self.section_line(cur, kw, loc),
            (State::PortGroups, "port-group") => self.open(cur, State::PortGroup, loc),
            (State::PortGroups, "end-port-groups") => self.end_port_groups(cur, loc),
            (State::PortGroup, "end-port-group") => self.end_port_group(cur, loc),
            (State::PortGroup, _) => self.port_group_attr(cur, kw, loc),
            (State::QosSetup, "vlarb-tables") => self.open(cur, State::VlarbTables, loc),
            (State::QosSetup, "sl2vl-tables") => self.open(cur, State::Sl2vlTables, loc),
            (State::QosSetup, "end-qos-setup")
            | (State::VlarbTables, "end-vlarb-tables")
            | (State::Sl2vlTables, "end-sl2vl-tables")
            | (State::Levels, "end-qos-levels")
            | (State::Rules, "end-qos-match-rules") => self.close_list(cur),
            (State::VlarbTables, "vlarb-scope") => self.open(cur, State::VlarbScope, loc),
            (State::VlarbScope, "end-vlarb-scope") => self.end_vlarb(cur, loc),
            (State::VlarbScope, _) => self.vlarb_attr(cur, kw, loc),
            (State::Sl2vlTables, "sl2vl-scope") => self.open(cur, State::Sl2vlScope, loc),
            (State::Sl2vlScope, "end-sl2vl-scope") => self.end_sl2vl(cur, loc),
            (State::Sl2vlScope, _) => self.sl2vl_attr(cur, kw, loc),
            (State::Levels, "qos-level") => self.open(cur, State::Level, loc),
            (State::Level, "end-qos-level") => self.end_level(cur, loc),
            (State::Level, _) => self.level_attr(cur, kw, loc),
            (State::Rules, "qos-match-rule") => self.open(cur, State::Rule, loc),
            (State::Rule, "end-qos-match-rule") => self.end_rule(cur, loc),
            (State::Rule, _) => self.rule_attr(cur, kw, loc),
            (s, _) => Err(self.unknown_attr(s, kw, loc)),
        }
    }

    /// A line at the top level: only a section may open here.
    fn section_line(&mut self, cur: &mut Cursor<'_>, kw: &str, loc: Loc) -> Result<(), ParseError> {
        let (state, kind) = match kw {
            "port-groups" => (State::PortGroups, SectionKind::PortGroups),
            "qos-setup" => (State::QosSetup, SectionKind::QosSetup),
            "qos-levels" => (State::Levels, SectionKind::QosLevels),
            "qos-match-rules" => (State::Rules, SectionKind::QosMatchRules),
            "qos-ulps" => (State::Ulps, SectionKind::QosUlps),
            _ => return Err(self.unknown_attr(State::Top, kw, loc)),
        };
        self.open(cur, state, loc)?;
        self.policy.sections.push((kind, loc));
        Ok(())
    }

    /// An item opens: nothing may follow its keyword; the item it starts is empty.
    fn open(&mut self, cur: &mut Cursor<'_>, s: State, loc: Loc) -> Result<(), ParseError> {
        cur.expect_end()?;
        self.push(s, loc);
        match s {
            State::PortGroup => {
                self.group = Some(PortGroup::empty(loc));
                self.group_name = None;
            }
            State::VlarbScope => self.vlarb = Some(VlArbScope::empty(loc)),
            State::Sl2vlScope => {
                self.sl2vl = Some(Sl2VlScope::empty(loc));
                self.sl2vl_table = false;
            }
            State::Level => {
                self.level = Some(QosLevel::empty(loc));
                self.level_name = None;
                self.level_sl = None;
            }
            State::Rule => {
                self.rule = Some(MatchRule::empty(loc));
                self.rule_level = None;
            }
            _ => {}
        }
        Ok(())
    }

    /// The end of a list (or of `qos-setup`) that needs no check of what it held.
    fn close_list(&mut self, cur: &mut Cursor<'_>) -> Result<(), ParseError> {
        cur.expect_end()?;
        self.pop();
        Ok(())
    }

    /// `kw: <string>`, at most once per `item`: a name (blanks outside quotes dropped, as
    /// OpenSM's lexer does) or, with `description`, text that keeps its inner blanks.
    fn single(
        &mut self,
        cur: &mut Cursor<'_>,
        kw: &'static str,
        item: &str,
        loc: Loc,
        what: &str,
        description: bool,
    ) -> Result<Spanned<String>, ParseError> {
        self.once(cur, kw, item, loc)?;
        let s = cur.single_string(what, description)?;
        Ok(Spanned::new(s.value.0, s.loc))
    }

    /// `key:` of an attribute that may appear once per `item`.
    fn once(
        &mut self,
        cur: &mut Cursor<'_>,
        key: &'static str,
        item: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        self.colon(cur, key)?;
        self.seen.once(self.file, key, item, loc)
    }

    /// `keyword:` — the colon that must follow an attribute keyword.
    fn colon(&self, cur: &mut Cursor<'_>, kw: &str) -> Result<(), ParseError> {
        cur.expect(':', &format!("`:` after `{kw}`"))
    }

    fn unknown_attr(&self, state: State, kw: &str, loc: Loc) -> ParseError {
        ParseError::Unexpected {
            file: self.file.to_string(),
            loc,
            found: format!("`{kw}`"),
            expected: state.expected().to_string(),
        }
    }

    fn names(&self, cur: &mut Cursor<'_>, what: &str) -> Result<Vec<Spanned<String>>, ParseError> {
        let v = cur.string_list(what)?;
        Ok(v.into_iter()
            .map(|s| Spanned::new(s.value.0, s.loc))
            .collect())
    }

    fn missing(
        &self,
        item: &str,
        opened: Loc,
        loc: Loc,
        found: &str,
        expected: &str,
    ) -> ParseError {
        ParseError::Missing {
            file: self.file.to_string(),
            loc,
            found: found.to_string(),
            item: item.to_string(),
            opened,
            expected: expected.to_string(),
        }
    }
}

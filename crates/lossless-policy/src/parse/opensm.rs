//! Parser for OpenSM's `qos-policy.conf` (the grammar of `osm_qos_parser_y.y`).
//!
//! Same language as OpenSM, with three deliberate differences, each an error here where
//! OpenSM is silent: a level SL above 15 (OpenSM stores it and then every path for that level
//! fails), a packet life above 63 (it spills into the selector bits of the PathRecord) and a
//! name containing a section keyword (OpenSM's lexer splits the name there and rejects the
//! file with an error that does not name the token).

use crate::ast::*;
use crate::lexer::{strip_comment, Cursor};
use crate::parse::ParseError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Top,
    PortGroups,
    PortGroup,
    QosSetup,
    VlarbTables,
    VlarbScope,
    Sl2vlTables,
    Sl2vlScope,
    Levels,
    Level,
    Rules,
    Rule,
    Ulps,
}

impl State {
    fn expected(self) -> &'static str {
        match self {
            State::Top => {
                "a section: port-groups, qos-setup, qos-levels, qos-match-rules or qos-ulps"
            }
            State::PortGroups => "port-group or end-port-groups",
            State::PortGroup => {
                "name, use, port-guid, port-name, pkey, partition, node-type or end-port-group"
            }
            State::QosSetup => "vlarb-tables, sl2vl-tables or end-qos-setup",
            State::VlarbTables => "vlarb-scope or end-vlarb-tables",
            State::VlarbScope => {
                "group, across, vlarb-high, vlarb-low, vl-high-limit or end-vlarb-scope"
            }
            State::Sl2vlTables => "sl2vl-scope or end-sl2vl-tables",
            State::Sl2vlScope => {
                "group, across, across-from, across-to, from, to, sl2vl-table or end-sl2vl-scope"
            }
            State::Levels => "qos-level or end-qos-levels",
            State::Level => {
                "name, use, sl, mtu-limit, rate-limit, packet-life, path-bits, pkey, lossless or \
                 end-qos-level"
            }
            State::Rules => "qos-match-rule or end-qos-match-rules",
            State::Rule => {
                "use, qos-class, source, destination, service-id, pkey, qos-level-name or \
                 end-qos-match-rule"
            }
            State::Ulps => "a ULP rule (default, sdp, rds, srp, iser, ipoib, any) or end-qos-ulps",
        }
    }

    fn closer(self) -> &'static str {
        match self {
            State::Top => "",
            State::PortGroups => "end-port-groups",
            State::PortGroup => "end-port-group",
            State::QosSetup => "end-qos-setup",
            State::VlarbTables => "end-vlarb-tables",
            State::VlarbScope => "end-vlarb-scope",
            State::Sl2vlTables => "end-sl2vl-tables",
            State::Sl2vlScope => "end-sl2vl-scope",
            State::Levels => "end-qos-levels",
            State::Level => "end-qos-level",
            State::Rules => "end-qos-match-rules",
            State::Rule => "end-qos-match-rule",
            State::Ulps => "end-qos-ulps",
        }
    }

    fn opener(self) -> &'static str {
        self.closer().trim_start_matches("end-")
    }
}

/// Attribute keyword seen once per item, remembered to report duplicates.
#[derive(Default)]
struct Seen {
    keys: Vec<(&'static str, Loc)>,
}

impl Seen {
    fn once(
        &mut self,
        file: &str,
        key: &'static str,
        item: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        if let Some((_, first)) = self.keys.iter().find(|(k, _)| *k == key) {
            return Err(ParseError::Duplicate {
                file: file.to_string(),
                loc,
                found: key.to_string(),
                item: item.to_string(),
                first: *first,
                expected: format!("one `{key}` per {item}"),
            });
        }
        self.keys.push((key, loc));
        Ok(())
    }
}

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
            (State::Top, "port-groups") => {
                self.open_section(cur, State::PortGroups, SectionKind::PortGroups, loc)
            }
            (State::Top, "qos-setup") => {
                self.open_section(cur, State::QosSetup, SectionKind::QosSetup, loc)
            }
            (State::Top, "qos-levels") => {
                self.open_section(cur, State::Levels, SectionKind::QosLevels, loc)
            }
            (State::Top, "qos-match-rules") => {
                self.open_section(cur, State::Rules, SectionKind::QosMatchRules, loc)
            }
            (State::Top, "qos-ulps") => {
                self.open_section(cur, State::Ulps, SectionKind::QosUlps, loc)
            }
            (State::PortGroups, "port-group") => {
                cur.expect_end()?;
                self.push(State::PortGroup, loc);
                self.group = Some(PortGroup {
                    name: Spanned::new(String::new(), loc),
                    use_: None,
                    port_guids: vec![],
                    port_names: vec![],
                    interfaces: vec![],
                    pkeys: vec![],
                    partitions: vec![],
                    node_types: NodeTypes::default(),
                    loc,
                });
                self.group_name = None;
                Ok(())
            }
            (State::PortGroups, "end-port-groups") => {
                cur.expect_end()?;
                if self.children() == 0 {
                    return Err(ParseError::Unexpected {
                        file: self.file.to_string(),
                        loc,
                        found: "`end-port-groups`".to_string(),
                        expected: "port-group (OpenSM requires at least one per port-groups)"
                            .to_string(),
                    });
                }
                self.pop();
                Ok(())
            }
            (State::PortGroup, "end-port-group") => self.end_port_group(cur, loc),
            (State::PortGroup, _) => self.port_group_attr(cur, kw, loc),
            (State::QosSetup, "vlarb-tables") => {
                cur.expect_end()?;
                self.push(State::VlarbTables, loc);
                Ok(())
            }
            (State::QosSetup, "sl2vl-tables") => {
                cur.expect_end()?;
                self.push(State::Sl2vlTables, loc);
                Ok(())
            }
            (State::QosSetup, "end-qos-setup")
            | (State::VlarbTables, "end-vlarb-tables")
            | (State::Sl2vlTables, "end-sl2vl-tables")
            | (State::Levels, "end-qos-levels")
            | (State::Rules, "end-qos-match-rules") => {
                cur.expect_end()?;
                self.pop();
                Ok(())
            }
            (State::VlarbTables, "vlarb-scope") => {
                cur.expect_end()?;
                self.push(State::VlarbScope, loc);
                self.vlarb = Some(VlArbScope {
                    groups: vec![],
                    across: vec![],
                    to: PortSet::Unspecified,
                    high: None,
                    low: None,
                    high_limit: None,
                    loc,
                });
                Ok(())
            }
            (State::VlarbScope, "end-vlarb-scope") => self.end_vlarb(cur, loc),
            (State::VlarbScope, _) => self.vlarb_attr(cur, kw, loc),
            (State::Sl2vlTables, "sl2vl-scope") => {
                cur.expect_end()?;
                self.push(State::Sl2vlScope, loc);
                self.sl2vl = Some(Sl2VlScope {
                    groups: vec![],
                    across_from: vec![],
                    across_to: vec![],
                    from: PortSet::Unspecified,
                    to: PortSet::Unspecified,
                    table: [0; 16],
                    table_loc: loc,
                    loc,
                });
                self.sl2vl_table = false;
                Ok(())
            }
            (State::Sl2vlScope, "end-sl2vl-scope") => self.end_sl2vl(cur, loc),
            (State::Sl2vlScope, _) => self.sl2vl_attr(cur, kw, loc),
            (State::Levels, "qos-level") => {
                cur.expect_end()?;
                self.push(State::Level, loc);
                self.level = Some(QosLevel {
                    name: Spanned::new(String::new(), loc),
                    use_: None,
                    sl: Spanned::new(0, loc),
                    mtu_limit: None,
                    rate_limit: None,
                    packet_life: None,
                    path_bits: vec![],
                    pkeys: vec![],
                    lossless: false,
                    loc,
                });
                self.level_name = None;
                self.level_sl = None;
                Ok(())
            }
            (State::Level, "end-qos-level") => self.end_level(cur, loc),
            (State::Level, _) => self.level_attr(cur, kw, loc),
            (State::Rules, "qos-match-rule") => {
                cur.expect_end()?;
                self.push(State::Rule, loc);
                self.rule = Some(MatchRule {
                    use_: None,
                    qos_class: vec![],
                    source: vec![],
                    destination: vec![],
                    service_id: vec![],
                    pkey: vec![],
                    level: Spanned::new(String::new(), loc),
                    loc,
                });
                self.rule_level = None;
                Ok(())
            }
            (State::Rule, "end-qos-match-rule") => self.end_rule(cur, loc),
            (State::Rule, _) => self.rule_attr(cur, kw, loc),
            (s, _) => Err(ParseError::Unexpected {
                file: self.file.to_string(),
                loc,
                found: format!("`{kw}`"),
                expected: s.expected().to_string(),
            }),
        }
    }

    fn open_section(
        &mut self,
        cur: &mut Cursor<'_>,
        s: State,
        kind: SectionKind,
        loc: Loc,
    ) -> Result<(), ParseError> {
        cur.expect_end()?;
        self.policy.sections.push((kind, loc));
        self.push(s, loc);
        Ok(())
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

    fn port_group_attr(
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
                cur.expect(':', "`:` after `name`")?;
                self.seen.once(file, "name", "port-group", loc)?;
                let s = cur.single_string("a port group name", false)?;
                self.group_name = Some(Spanned::new(s.value.0, s.loc));
            }
            "use" => {
                cur.expect(':', "`:` after `use`")?;
                self.seen.once(file, "use", "port-group", loc)?;
                g.use_ = Some(cur.single_string("a description", true)?.value.0);
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
                for s in cur.string_list("a port name `<node description>/P<port>`")? {
                    let (name, blank) = s.value;
                    if name.contains('/') {
                        g.port_names
                            .push(Spanned::new(port_name(file, &name, blank, s.loc)?, s.loc));
                    } else {
                        g.interfaces.push(Spanned::new(name, s.loc));
                    }
                }
            }
            "partition" => {
                cur.expect(':', "`:` after `partition`")?;
                let v = cur.string_list("a partition name")?;
                g.partitions
                    .extend(v.into_iter().map(|s| Spanned::new(s.value.0, s.loc)));
            }
            "node-type" => {
                cur.expect(':', "`:` after `node-type`")?;
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
                        break;
                    }
                }
            }
            _ => return Err(self.unknown_attr(State::PortGroup, kw, loc)),
        }
        cur.expect_end()
    }

    fn end_port_group(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
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

    fn vlarb_attr(&mut self, cur: &mut Cursor<'_>, kw: &str, loc: Loc) -> Result<(), ParseError> {
        let file = self.file;
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
                self.colon(cur, kw)?;
                let key: &'static str = if kw == "vlarb-high" {
                    "vlarb-high"
                } else {
                    "vlarb-low"
                };
                self.seen.once(file, key, "vlarb-scope", loc)?;
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
                self.colon(cur, kw)?;
                self.seen.once(file, "vl-high-limit", "vlarb-scope", loc)?;
                let (n, nloc, _) = cur.number("the VL high limit")?;
                if let Some(v) = self.vlarb.as_mut() {
                    v.high_limit = Some(Spanned::new(n, nloc));
                }
            }
            _ => return Err(self.unknown_attr(State::VlarbScope, kw, loc)),
        }
        cur.expect_end()
    }

    fn end_vlarb(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
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

    fn sl2vl_attr(&mut self, cur: &mut Cursor<'_>, kw: &str, loc: Loc) -> Result<(), ParseError> {
        let file = self.file;
        match kw {
            "group" | "across" | "across-from" | "across-to" => {
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
            }
            "from" | "to" => {
                self.colon(cur, kw)?;
                let set = if cur.eat('*') {
                    PortSet::All
                } else {
                    let r = cur.ranges(
                        "`*` or a port number list",
                        false,
                        &mut self.policy.octal_numbers,
                    )?;
                    if let Some(bad) = r.iter().find(|r| r.hi >= 128) {
                        return Err(ParseError::OutOfRange {
                            file: file.to_string(),
                            loc: bad.loc,
                            found: bad.hi.to_string(),
                            expected: format!("a port number below 128 in `{kw}`"),
                        });
                    }
                    PortSet::List(r)
                };
                if let Some(s) = self.sl2vl.as_mut() {
                    let slot = if kw == "from" { &mut s.from } else { &mut s.to };
                    *slot = match (std::mem::take(slot), set) {
                        (PortSet::List(mut a), PortSet::List(b)) => {
                            a.extend(b);
                            PortSet::List(a)
                        }
                        (PortSet::All, _) | (_, PortSet::All) => PortSet::All,
                        (_, b) => b,
                    };
                }
            }
            "sl2vl-table" => {
                self.colon(cur, kw)?;
                self.seen.once(file, "sl2vl-table", "sl2vl-scope", loc)?;
                let vals = cur.num_list("a VL (0-15)", &mut self.policy.octal_numbers)?;
                if vals.len() != 16 {
                    return Err(ParseError::OutOfRange {
                        file: file.to_string(),
                        loc,
                        found: format!("{} values", vals.len()),
                        expected: "exactly 16 VLs, one per SL 0-15".to_string(),
                    });
                }
                let mut table = [0u8; 16];
                for (slot, v) in table.iter_mut().zip(&vals) {
                    *slot = u8::try_from(v.value)
                        .ok()
                        .filter(|v| *v < 16)
                        .ok_or_else(|| ParseError::OutOfRange {
                            file: file.to_string(),
                            loc: v.loc,
                            found: v.value.to_string(),
                            expected: "a VL from 0 to 15".to_string(),
                        })?;
                }
                self.sl2vl_table = true;
                if let Some(s) = self.sl2vl.as_mut() {
                    s.table = table;
                    s.table_loc = loc;
                }
            }
            _ => return Err(self.unknown_attr(State::Sl2vlScope, kw, loc)),
        }
        cur.expect_end()
    }

    fn end_sl2vl(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
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

    fn level_attr(&mut self, cur: &mut Cursor<'_>, kw: &str, loc: Loc) -> Result<(), ParseError> {
        let file = self.file;
        let item = "qos-level";
        match kw {
            "name" => {
                self.colon(cur, kw)?;
                self.seen.once(file, "name", item, loc)?;
                let s = cur.single_string("a QoS level name", false)?;
                self.level_name = Some(Spanned::new(s.value.0, s.loc));
            }
            "use" => {
                self.colon(cur, kw)?;
                self.seen.once(file, "use", item, loc)?;
                let s = cur.single_string("a description", true)?;
                if let Some(l) = self.level.as_mut() {
                    l.use_ = Some(s.value.0);
                }
            }
            "sl" | "mtu-limit" | "rate-limit" | "packet-life" => {
                self.colon(cur, kw)?;
                let key: &'static str = match kw {
                    "sl" => "sl",
                    "mtu-limit" => "mtu-limit",
                    "rate-limit" => "rate-limit",
                    _ => "packet-life",
                };
                self.seen.once(file, key, item, loc)?;
                let (n, nloc, raw) = cur.number(&format!("a number for `{kw}`"))?;
                note_octal(&mut self.policy.octal_numbers, raw, nloc);
                let (lo, hi, meaning) = level_limits(kw);
                if n < lo || n > hi {
                    return Err(ParseError::OutOfRange {
                        file: file.to_string(),
                        loc: nloc,
                        found: raw.to_string(),
                        expected: meaning.to_string(),
                    });
                }
                let v = Spanned::new(n, nloc);
                if kw == "sl" {
                    self.level_sl = Some(v);
                } else if let Some(l) = self.level.as_mut() {
                    match kw {
                        "mtu-limit" => l.mtu_limit = Some(v),
                        "rate-limit" => l.rate_limit = Some(v),
                        _ => l.packet_life = Some(v),
                    }
                }
            }
            "lossless" => {
                self.colon(cur, kw)?;
                self.seen.once(file, "lossless", item, loc)?;
                let v = yes_no(cur, "`lossless`")?;
                cur.expect_end()?;
                self.policy
                    .extensions
                    .push(Spanned::new("lossless:".to_string(), loc));
                if let Some(l) = self.level.as_mut() {
                    l.lossless = v;
                }
                return Ok(());
            }
            "path-bits" => {
                self.colon(cur, kw)?;
                let r = cur.ranges(
                    "a path-bits value or range",
                    false,
                    &mut self.policy.octal_numbers,
                )?;
                if let Some(l) = self.level.as_mut() {
                    l.path_bits.extend(r);
                }
            }
            "pkey" => {
                self.colon(cur, kw)?;
                let r = cur.ranges(
                    "a P_Key or P_Key range",
                    false,
                    &mut self.policy.octal_numbers,
                )?;
                if let Some(l) = self.level.as_mut() {
                    l.pkeys.extend(r);
                }
            }
            _ => return Err(self.unknown_attr(State::Level, kw, loc)),
        }
        cur.expect_end()
    }

    fn end_level(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        cur.expect_end()?;
        let (_, opened) = self.state();
        let Some(mut l) = self.level.take() else {
            return Err(self.unknown_attr(State::Level, "end-qos-level", loc));
        };
        let Some(sl) = self.level_sl.take() else {
            return Err(self.missing("qos-level", opened, loc, "end-qos-level", "`sl`"));
        };
        let Some(name) = self.level_name.take() else {
            return Err(self.missing("qos-level", opened, loc, "end-qos-level", "`name`"));
        };
        l.sl = sl;
        l.name = name;
        self.policy.levels.push(l);
        self.pop();
        Ok(())
    }

    fn rule_attr(&mut self, cur: &mut Cursor<'_>, kw: &str, loc: Loc) -> Result<(), ParseError> {
        let file = self.file;
        let item = "qos-match-rule";
        match kw {
            "use" => {
                self.colon(cur, kw)?;
                self.seen.once(file, "use", item, loc)?;
                let s = cur.single_string("a description", true)?;
                if let Some(r) = self.rule.as_mut() {
                    r.use_ = Some(s.value.0);
                }
            }
            "qos-level-name" => {
                self.colon(cur, kw)?;
                self.seen.once(file, "qos-level-name", item, loc)?;
                let s = cur.single_string("a QoS level name", false)?;
                self.rule_level = Some(Spanned::new(s.value.0, s.loc));
            }
            "source" | "destination" => {
                self.colon(cur, kw)?;
                let names = self.names(cur, "a port group name")?;
                if let Some(r) = self.rule.as_mut() {
                    if kw == "source" {
                        r.source.extend(names);
                    } else {
                        r.destination.extend(names);
                    }
                }
            }
            "qos-class" | "service-id" | "pkey" => {
                self.colon(cur, kw)?;
                let what = match kw {
                    "qos-class" => "a QoS class or range",
                    "service-id" => "a service ID or range",
                    _ => "a P_Key or P_Key range",
                };
                let v = cur.ranges(what, false, &mut self.policy.octal_numbers)?;
                if let Some(r) = self.rule.as_mut() {
                    match kw {
                        "qos-class" => r.qos_class.extend(v),
                        "service-id" => r.service_id.extend(v),
                        _ => r.pkey.extend(v),
                    }
                }
            }
            _ => return Err(self.unknown_attr(State::Rule, kw, loc)),
        }
        cur.expect_end()
    }

    fn end_rule(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        cur.expect_end()?;
        let (_, opened) = self.state();
        let Some(mut r) = self.rule.take() else {
            return Err(self.unknown_attr(State::Rule, "end-qos-match-rule", loc));
        };
        let Some(level) = self.rule_level.take() else {
            return Err(self.missing(
                "qos-match-rule",
                opened,
                loc,
                "end-qos-match-rule",
                "`qos-level-name`",
            ));
        };
        r.level = level;
        self.policy.rules.push(r);
        self.pop();
        Ok(())
    }

    fn ulp_line(&mut self, cur: &mut Cursor<'_>) -> Result<(), ParseError> {
        let file = self.file;
        let Some(w) = cur.word() else {
            return Err(cur.unexpected(State::Ulps.expected()));
        };
        let loc = w.loc;
        if w.value == "end-qos-ulps" {
            cur.expect_end()?;
            if self.children() == 0 {
                return Err(ParseError::Unexpected {
                    file: file.to_string(),
                    loc,
                    found: "`end-qos-ulps`".to_string(),
                    expected: "a ULP rule (OpenSM requires at least one per qos-ulps)".to_string(),
                });
            }
            self.pop();
            return Ok(());
        }
        self.count_child();
        match parse_ulp(cur, w.value, loc, &mut self.policy.octal_numbers)? {
            Ulp::Default(sl) => self.policy.ulp_default = Some(sl),
            Ulp::Rule(r) => self.policy.ulps.push(r),
        }
        Ok(())
    }
}

/// One `qos-ulps` line, after its first word.
pub(crate) enum Ulp {
    Default(Spanned<u64>),
    Rule(UlpRule),
}

/// The rest of a `qos-ulps` line whose first word (`default`, `sdp`, ...) was `first` at
/// `loc`: shared by both forms (the XML form's `<ulp>` holds the same line).
pub(crate) fn parse_ulp(
    cur: &mut Cursor<'_>,
    first: &str,
    loc: Loc,
    octal: &mut Vec<Spanned<String>>,
) -> Result<Ulp, ParseError> {
    let file = cur.file;
    let text = cur.text.trim().to_string();
    let name = first.to_ascii_lowercase();
    let w = Spanned::new(first, loc);
    let bad_ulp = |found: &str| ParseError::Unexpected {
        file: file.to_string(),
        loc,
        found: format!("`{found}`"),
        expected: State::Ulps.expected().to_string(),
    };
    if name == "default" {
        cur.expect(':', "`:` after `default`")?;
        let sl = ulp_sl(cur, octal)?;
        cur.expect_end()?;
        return Ok(Ulp::Default(sl));
    }
    // `<ulp> :` (defaults) or `<ulp>, <criterion> <list> :`
    let (kind, list_kw) = if cur.eat(':') {
        let kind = match name.as_str() {
            "sdp" => UlpKind::Sdp,
            "rds" => UlpKind::Rds,
            "iser" => UlpKind::Iser,
            "ipoib" => UlpKind::Ipoib,
            "srp" | "any" => {
                return Err(cur.unexpected(format!("`,` and a criterion after `{}`", w.value)))
            }
            _ => return Err(bad_ulp(w.value)),
        };
        (kind, None)
    } else if cur.eat(',') {
        let Some(c) = cur.word() else {
            return Err(cur.unexpected("a ULP criterion"));
        };
        let kind = match (name.as_str(), c.value) {
            ("sdp", "port-num") => UlpKind::SdpPort,
            ("rds", "port-num") => UlpKind::RdsPort,
            ("iser", "port-num") => UlpKind::IserPort,
            ("srp", "target-port-guid") => UlpKind::SrpTargetGuid,
            ("ipoib", "pkey") => UlpKind::IpoibPkey,
            ("any", "service-id") => UlpKind::AnyServiceId,
            ("any", "pkey") => UlpKind::AnyPkey,
            ("any", "target-port-guid") => UlpKind::AnyTargetGuid,
            ("any", "source-port-guid") => UlpKind::AnySourceGuid,
            ("any", "source-target-port-guid") => UlpKind::AnySourceTargetGuid,
            ("sdp" | "rds" | "iser" | "srp" | "ipoib" | "any", _) => {
                let exp = match name.as_str() {
                    "sdp" | "rds" | "iser" => "`port-num`",
                    "srp" => "`target-port-guid`",
                    "ipoib" => "`pkey`",
                    _ => "`service-id`, `pkey`, `target-port-guid`, `source-port-guid` or `source-target-port-guid`",
                };
                return Err(ParseError::Unexpected {
                    file: file.to_string(),
                    loc: c.loc,
                    found: format!("`{}`", c.value),
                    expected: exp.to_string(),
                });
            }
            _ => return Err(bad_ulp(w.value)),
        };
        (kind, Some(c.value))
    } else {
        return match name.as_str() {
            "sdp" | "rds" | "iser" | "ipoib" => {
                Err(cur.unexpected(format!("`:` or `,` after `{}`", w.value)))
            }
            "srp" | "any" => Err(cur.unexpected(format!("`,` after `{}`", w.value))),
            _ => Err(bad_ulp(w.value)),
        };
    };
    let list = match list_kw {
        Some(k) => {
            let l = cur.ranges(&format!("a value or range after `{k}`"), true, octal)?;
            cur.expect(':', "`:` and the SL")?;
            l
        }
        None => vec![],
    };
    let sl = ulp_sl(cur, octal)?;
    cur.expect_end()?;
    let port_base: Option<u64> = match kind {
        UlpKind::SdpPort => Some(0x10000),
        UlpKind::RdsPort | UlpKind::IserPort => Some(0x0106_0000),
        _ => None,
    };
    if port_base.is_some() {
        if let Some(bad) = list.iter().find(|r| r.hi > 0xFFFF) {
            return Err(ParseError::OutOfRange {
                file: file.to_string(),
                loc: bad.loc,
                found: format!("{:#x}", bad.hi),
                expected: "a TCP port number from 0 to 0xFFFF".to_string(),
            });
        }
    }
    let one = |v: u64| NumRange {
        lo: v,
        hi: v,
        reversed: false,
        loc,
    };
    let mut rule = UlpRule {
        kind,
        service_id: vec![],
        pkey: vec![],
        source_guids: vec![],
        dest_guids: vec![],
        sl,
        text,
        loc,
    };
    match kind {
        UlpKind::Sdp => rule.service_id.push(NumRange {
            lo: 0x10000,
            hi: 0x1FFFF,
            reversed: false,
            loc,
        }),
        UlpKind::Rds => rule.service_id.push(one(0x0106_0000 + 0x48CA)),
        UlpKind::Iser => rule.service_id.push(one(0x0106_0000 + 0x0CBC)),
        UlpKind::Ipoib => rule.pkey.push(one(0x7fff)),
        UlpKind::SdpPort | UlpKind::RdsPort | UlpKind::IserPort => {
            let base = port_base.unwrap_or(0);
            rule.service_id = list
                .iter()
                .map(|r| NumRange {
                    lo: r.lo + base,
                    hi: r.hi + base,
                    ..*r
                })
                .collect();
        }
        UlpKind::AnyServiceId => rule.service_id = list,
        UlpKind::IpoibPkey | UlpKind::AnyPkey => rule.pkey = mask_pkeys(list),
        UlpKind::SrpTargetGuid | UlpKind::AnyTargetGuid => rule.dest_guids = list,
        UlpKind::AnySourceGuid => rule.source_guids = list,
        UlpKind::AnySourceTargetGuid => {
            rule.source_guids = list.clone();
            rule.dest_guids = list;
        }
    }
    Ok(Ulp::Rule(rule))
}

/// Allowed values of a level's numbers, and how to say so.
pub(crate) fn level_limits(kw: &str) -> (u64, u64, &'static str) {
    match kw {
        "sl" => (
            0,
            15,
            "an SL from 0 to 15 (OpenSM accepts more, then drops every path of this level)",
        ),
        "mtu-limit" => (1, 5, "an MTU enum from 1 (256) to 5 (4096)"),
        "rate-limit" => (2, 24, "a rate enum from 2 (2.5 Gb/s) to 24 (1200 Gb/s)"),
        _ => (
            0,
            63,
            "a packet life from 0 to 63 (6 bits in the PathRecord)",
        ),
    }
}

/// `yes`, `no`, `true` or `false` (any case).
pub(crate) fn yes_no(cur: &mut Cursor<'_>, what: &str) -> Result<bool, ParseError> {
    let expected = format!("`yes` or `no` after {what}");
    let Some(w) = cur.word() else {
        return Err(cur.unexpected(expected));
    };
    match w.value.to_ascii_lowercase().as_str() {
        "yes" | "true" => Ok(true),
        "no" | "false" => Ok(false),
        _ => Err(ParseError::Unexpected {
            file: cur.file.to_string(),
            loc: w.loc,
            found: format!("`{}`", w.value),
            expected,
        }),
    }
}

/// OpenSM keeps only the low 15 bits of P_Keys in policy lists (membership bit dropped).
pub fn mask_pkeys(list: Vec<NumRange>) -> Vec<NumRange> {
    list.into_iter()
        .map(|r| {
            let (a, b) = (r.lo & 0x7fff, r.hi & 0x7fff);
            NumRange {
                lo: a.min(b),
                hi: a.max(b),
                ..r
            }
        })
        .collect()
}

fn ulp_sl(
    cur: &mut Cursor<'_>,
    octal: &mut Vec<Spanned<String>>,
) -> Result<Spanned<u64>, ParseError> {
    let (n, loc, raw) = cur.number("an SL (0-15)")?;
    note_octal(octal, raw, loc);
    if n > 15 {
        return Err(ParseError::OutOfRange {
            file: cur.file.to_string(),
            loc,
            found: raw.to_string(),
            expected: "an SL from 0 to 15".to_string(),
        });
    }
    Ok(Spanned::new(n, loc))
}

pub(crate) fn note_octal(octal: &mut Vec<Spanned<String>>, raw: &str, loc: Loc) {
    let b = raw.as_bytes();
    if b.len() > 1 && b[0] == b'0' && b[1] != b'x' && b[1] != b'X' {
        octal.push(Spanned::new(raw.to_string(), loc));
    }
}

pub(crate) fn vl_pairs(
    cur: &mut Cursor<'_>,
    octal: &mut Vec<Spanned<String>>,
) -> Result<Vec<VlWeight>, ParseError> {
    let mut out = Vec::new();
    loop {
        let (vl, loc, raw) = cur.number("a VL:weight pair")?;
        note_octal(octal, raw, loc);
        cur.expect(':', "`:` between VL and weight")?;
        let (weight, wloc, raw) = cur.number("a weight (0-255)")?;
        note_octal(octal, raw, wloc);
        out.push(VlWeight { vl, weight, loc });
        if cur.eat(',') {
            continue;
        }
        return cur.expect_end().map(|_| out);
    }
}

/// Split `<node description>/P<port>` on the last slash, as OpenSM does.
pub(crate) fn port_name(
    file: &str,
    s: &str,
    had_blank: bool,
    loc: Loc,
) -> Result<PortName, ParseError> {
    let bad = |expected: &str| ParseError::Unexpected {
        file: file.to_string(),
        loc,
        found: format!("`{s}`"),
        expected: expected.to_string(),
    };
    let Some(idx) = s.rfind('/') else {
        return Err(bad(
            "a port name `<node description>/P<port>` (no `/` found)",
        ));
    };
    let (node, port) = (&s[..idx], &s[idx + 1..]);
    let Some(num) = port.strip_prefix(['P', 'p']) else {
        return Err(bad("`/P<port>` at the end of the port name"));
    };
    let parsed = if let Some(h) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        num.parse::<u64>().ok()
    };
    match parsed {
        Some(p) if p > 0 => Ok(PortName {
            node_desc: node.to_string(),
            port: p,
            had_blank,
        }),
        _ => Err(bad("a port number from 1 after `/P`")),
    }
}

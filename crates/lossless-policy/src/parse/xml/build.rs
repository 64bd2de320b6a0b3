//! From the element tree to the [`Policy`]: the walk over the sections, and the readers of
//! value elements every item uses.

use super::tree::{allowed, norm, Elem, Node};
use super::{advance, one_line, stray_text, Errors};
use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::values::{note_octal, port_list};
use crate::parse::ParseError;

/// The text of a value element: its content and where its first non-blank character is.
pub(super) struct Value<'s> {
    pub(super) text: std::borrow::Cow<'s, str>,
    pub(super) loc: Loc,
}

pub(super) struct Builder<'a, 'e> {
    pub(super) file: &'a str,
    pub(super) src: &'a str,
    pub(super) errs: &'e mut Errors<'a>,
    pub(super) policy: &'e mut Policy,
    pub(super) last_rule_sn: Option<(u64, Loc)>,
}

/// Single-valued children already seen in one element.
#[derive(Default)]
pub(super) struct Once(Vec<(String, Loc)>);

impl<'a> Builder<'a, '_> {
    pub(super) fn err(&mut self, mut e: ParseError) {
        match &mut e {
            ParseError::Unexpected { found, .. }
            | ParseError::OutOfRange { found, .. }
            | ParseError::Duplicate { found, .. }
            | ParseError::Missing { found, .. }
            | ParseError::Unclosed { found, .. } => *found = one_line(std::mem::take(found)),
        }
        self.errs.list.push(e);
    }

    pub(super) fn unexpected(
        &mut self,
        loc: Loc,
        found: impl Into<String>,
        expected: impl Into<String>,
    ) {
        self.errs.unexpected(loc, found, expected);
    }

    /// Child elements of a container; text other than blanks is reported.
    pub(super) fn elems<'t>(&mut self, e: &'t Elem) -> Vec<&'t Elem> {
        let mut v = Vec::new();
        let allowed_here = allowed(&norm(&e.name));
        for c in &e.children {
            match c {
                Node::Elem(x) => v.push(x),
                Node::Text { text, loc, .. } if !text.trim().is_empty() => {
                    let (at, found) = stray_text(*loc, text);
                    self.unexpected(
                        at,
                        found,
                        format!(
                            "an element ({}) or `</{}>`",
                            list_tags(allowed_here),
                            e.name
                        ),
                    );
                }
                Node::Text { .. } => {}
            }
        }
        v
    }

    pub(super) fn not_allowed(&mut self, parent: &Elem, child: &Elem) {
        let why = match (norm(&parent.name).as_str(), norm(&child.name).as_str()) {
            ("qos-level", "tclass") => {
                " (the OFA QoS RFC's level TClass: OpenSM levels carry no traffic class, it is matched \
                 in rules as qos-class)"
            }
            _ => "",
        };
        self.unexpected(
            child.loc,
            format!("`<{}>`{why}", child.name),
            format!(
                "{} or `</{}>` inside `<{}>` opened at {}",
                list_tags(allowed(&norm(&parent.name))),
                parent.name,
                parent.name,
                parent.loc
            ),
        );
    }

    /// Text of a value element; `None` (reported) when it holds elements or nothing.
    pub(super) fn value(&mut self, e: &Elem, what: &str) -> Option<Value<'a>> {
        let mut text = String::new();
        let mut start: Option<Loc> = None;
        let mut raw: Option<(usize, usize)> = None;
        let mut pieces = 0;
        let mut bad = false;
        for c in &e.children {
            match c {
                Node::Text {
                    text: t,
                    raw: r,
                    loc,
                } => {
                    pieces += 1;
                    start.get_or_insert(*loc);
                    raw = *r;
                    text.push_str(t);
                }
                Node::Elem(x) => {
                    self.unexpected(
                        x.loc,
                        format!("`<{}>`", x.name),
                        format!("{what} as text, then `</{}>`", e.name),
                    );
                    bad = true;
                }
            }
        }
        if bad {
            return None;
        }
        let trimmed = text.trim_start();
        if trimmed.trim_end().is_empty() {
            self.unexpected(
                e.loc,
                format!("an empty `<{}>`", e.name),
                format!("{what} inside `<{}>`", e.name),
            );
            return None;
        }
        let lead = text.len() - trimmed.len();
        let loc = advance(start.unwrap_or(e.loc), text.get(..lead).unwrap_or(""));
        let body = match (pieces, raw) {
            (1, Some((a, b))) => {
                let s = self.src.get(a..b).unwrap_or("");
                std::borrow::Cow::Borrowed(s.get(lead..).unwrap_or("").trim_end())
            }
            _ => std::borrow::Cow::Owned(trimmed.trim_end().to_string()),
        };
        Some(Value { text: body, loc })
    }

    /// Remember a single-valued child; a second one is reported and skipped.
    pub(super) fn once(&mut self, seen: &mut Once, parent: &Elem, child: &Elem) -> bool {
        let key = match norm(&child.name).as_str() {
            "sn" | "name" if norm(&parent.name) == "qos-level" => "name".to_string(),
            "match-level" | "qos-level-name" => "qos-level-name".to_string(),
            n => n.to_string(),
        };
        if let Some((_, first)) = seen.0.iter().find(|(k, _)| *k == key) {
            let first = *first;
            self.err(ParseError::Duplicate {
                file: self.file.to_string(),
                loc: child.loc,
                found: format!("<{}>", child.name),
                item: format!("`<{}>`", parent.name),
                first,
                expected: match key.as_str() {
                    "name" => format!("one `<name>` or `<sn>` per `<{}>`", parent.name),
                    "qos-level-name" => format!(
                        "one `<qos-level-name>` or `<match-level>` per `<{}>`",
                        parent.name
                    ),
                    _ => format!("one `<{}>` per `<{}>`", child.name, parent.name),
                },
            });
            return false;
        }
        seen.0.push((key, child.loc));
        true
    }

    pub(super) fn cursor<'v>(&self, v: &'v Value<'_>) -> Cursor<'v>
    where
        'a: 'v,
    {
        Cursor::at(self.file, &v.text, v.loc)
    }

    /// A scanner result: value, or the error recorded.
    pub(super) fn ok<T>(&mut self, r: Result<T, ParseError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.err(e);
                None
            }
        }
    }

    pub(super) fn policy_elem(&mut self, root: &Elem) {
        for c in self.elems(root) {
            match norm(&c.name).as_str() {
                "port-groups" => {
                    self.section(c, SectionKind::PortGroups);
                    self.port_groups(c);
                }
                "qos-setup" => {
                    self.section(c, SectionKind::QosSetup);
                    self.qos_setup(c);
                }
                "qos-levels" => {
                    self.section(c, SectionKind::QosLevels);
                    for l in self.items(c, "qos-level") {
                        self.level(l);
                    }
                }
                "qos-match-rules" => {
                    self.section(c, SectionKind::QosMatchRules);
                    for r in self.items(c, "qos-match-rule") {
                        self.rule(r);
                    }
                }
                "qos-ulps" => {
                    self.section(c, SectionKind::QosUlps);
                    let ulps = self.items(c, "ulp");
                    if ulps.is_empty() {
                        self.unexpected(
                            c.loc,
                            "`<qos-ulps>` without `<ulp>`".to_string(),
                            "at least one `<ulp>` (OpenSM requires a rule in qos-ulps)",
                        );
                    }
                    for u in ulps {
                        self.ulp(u);
                    }
                }
                _ => self.not_allowed(root, c),
            }
        }
    }

    pub(super) fn section(&mut self, e: &Elem, kind: SectionKind) {
        self.policy.sections.push((kind, e.loc));
    }

    /// The children of a list container that are `item` elements; others reported.
    pub(super) fn items<'t>(&mut self, e: &'t Elem, item: &str) -> Vec<&'t Elem> {
        let mut v = Vec::new();
        for c in self.elems(e) {
            if norm(&c.name) == item {
                v.push(c);
            } else {
                self.not_allowed(e, c);
            }
        }
        v
    }

    pub(super) fn missing(&mut self, e: &Elem, what: &str) {
        self.err(ParseError::Missing {
            file: self.file.to_string(),
            loc: e.end,
            found: format!("</{}>", e.name),
            item: format!("`<{}>`", e.name),
            opened: e.loc,
            expected: what.to_string(),
        });
    }

    /// A single name (kept as written, blanks included).
    pub(super) fn name(&mut self, e: &Elem, what: &str) -> Option<Spanned<String>> {
        let v = self.value(e, what)?;
        if let Some(p) = v.text.find(',') {
            let loc = advance(v.loc, v.text.get(..p).unwrap_or(""));
            self.unexpected(
                loc,
                "`,`".to_string(),
                format!("`</{}>`: {what} is a single name", e.name),
            );
            return None;
        }
        Some(Spanned::new(v.text.into_owned(), v.loc))
    }

    /// A comma-separated list of names.
    pub(super) fn names(&mut self, e: &Elem, what: &str) -> Vec<Spanned<String>> {
        let Some(v) = self.value(e, what) else {
            return vec![];
        };
        let items = split_list(&v);
        let mut out = Vec::new();
        for s in items {
            if s.value.is_empty() {
                self.unexpected(s.loc, "an empty list item".to_string(), what.to_string());
            } else {
                out.push(s);
            }
        }
        out
    }

    pub(super) fn ranges(&mut self, e: &Elem, what: &str) -> Option<Vec<NumRange>> {
        let v = self.value(e, what)?;
        let mut cur = self.cursor(&v);
        let r = cur.ranges(what, false, &mut self.policy.octal_numbers);
        self.ok(r)
    }

    pub(super) fn number(&mut self, e: &Elem, what: &str) -> Option<(u64, Loc, String)> {
        let v = self.value(e, what)?;
        let mut cur = self.cursor(&v);
        let r = cur
            .number(what)
            .and_then(|(n, loc, raw)| cur.expect_end().map(|_| (n, loc, raw.to_string())));
        let (n, loc, raw) = self.ok(r)?;
        note_octal(&mut self.policy.octal_numbers, &raw, loc);
        Some((n, loc, raw))
    }

    pub(super) fn port_set(&mut self, e: &Elem) -> Option<PortSet> {
        let v = self.value(e, "`*` or a port number list")?;
        if v.text.trim() == "*" {
            return Some(PortSet::All);
        }
        let mut cur = self.cursor(&v);
        let r = cur.ranges(
            "`*` or a port number list",
            false,
            &mut self.policy.octal_numbers,
        );
        let r = self.ok(r)?;
        let r = port_list(self.file, r, &format!("`<{}>`", e.name));
        self.ok(r)
    }
}

/// Split a value at commas; items trimmed, each with its place.
pub(super) fn split_list(v: &Value<'_>) -> Vec<Spanned<String>> {
    let mut out = Vec::new();
    let mut offset = 0;
    for piece in v.text.split(',') {
        let lead = piece.len() - piece.trim_start().len();
        let before = v.text.get(..offset + lead).unwrap_or("");
        out.push(Spanned::new(
            piece.trim().to_string(),
            advance(v.loc, before),
        ));
        offset += piece.len() + 1;
    }
    out
}

pub(super) fn list_tags(names: &[&str]) -> String {
    let tags: Vec<String> = names.iter().map(|n| format!("`<{n}>`")).collect();
    match tags.split_last() {
        None => "text".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{}, {last}", rest.join(", ")),
    }
}

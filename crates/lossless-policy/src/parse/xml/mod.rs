//! The OFA QoS RFC's XML form, `<qos-policy>`.
//!
//! The OFA QoS RFC writes its policy as XML and says a strict grammar should be used to parse it;
//! the grammar that became real is OpenSM's. So this form is OpenSM's language in XML
//! clothing: one element per OpenSM keyword, values in OpenSM's list and range syntax
//! (`<port-guid>0x10-0x1f, 0x30</port-guid>`), and the result is the same [`Policy`] the
//! OpenSM parser builds. What the RFC's example writes differently is accepted where it
//! means the same thing:
//!
//! * `_` for `-` in element names (`<mtu_limit>`, `<qos_match_rules>`);
//! * `<sn>` for a level's name, `<match-level>` for `qos-level-name` (the RFC names levels
//!   by number), `<tclass>` for `qos-class` and `<service>` for `service-id` in a rule,
//!   `HCA` for `CA` in `<node-type>`;
//! * `<to>` in a `<vlarb-scope>` (OpenSM has no port list there; the RFC does).
//!
//! What has no meaning in OpenSM is refused with the reason (`<tclass>` in a level: OpenSM
//! levels carry no traffic class). Element text is taken as written: names keep their
//! blanks (`<name>Virtual Servers</name>`), lists split at commas. `<ulp>` holds one
//! qos-ulps line as OpenSM writes it (`<ulp>sdp, port-num 10000 : 2</ulp>`).
//!
//! The parse does not stop at the first mistake: the RFC's own example has several, and a
//! user fixing them one run at a time would hate us. Tokens, then a tree (mismatched and
//! missing end tags repaired the way the rest of the file makes likely), then the policy;
//! every mistake is reported with its line:column and what was expected there.

mod build;
mod groups;
mod levels;
mod rules;
mod setup;
mod token;
mod tree;

use crate::ast::*;
use crate::parse::ParseError;
use build::Builder;
use token::tokenize;
use tree::{build_tree, Elem};

/// Parse the XML-like form; the first mistake, if any.
pub fn parse(file: &str, src: &str) -> Result<Policy, ParseError> {
    parse_all(file, src).map_err(|mut v| v.swap_remove(0))
}

/// Parse the XML-like form; every mistake, in file order.
pub fn parse_all(file: &str, src: &str) -> Result<Policy, Vec<ParseError>> {
    let mut errs = Errors {
        file,
        list: Vec::new(),
    };
    let lines = LineIndex::new(src);
    let tokens = tokenize(src, &lines, &mut errs);
    let root = build_tree(&tokens, lines.loc(src.len()), &mut errs);
    let mut policy = Policy::default();
    if let Some(root) = root {
        let mut b = Builder {
            file,
            src,
            errs: &mut errs,
            policy: &mut policy,
            last_rule_sn: None,
        };
        b.policy_elem(&root);
    }
    if errs.list.is_empty() {
        Ok(policy)
    } else {
        errs.list.sort_by_key(|e| e.loc());
        errs.list.dedup();
        Err(errs.list)
    }
}

struct Errors<'a> {
    file: &'a str,
    list: Vec<ParseError>,
}

/// Messages stay on one line whatever the input holds.
fn one_line(s: String) -> String {
    if s.contains(['\n', '\r', '\t']) {
        s.replace('\n', "\\n")
            .replace('\r', "\\r")
            .replace('\t', " ")
    } else {
        s
    }
}

impl Errors<'_> {
    fn unexpected(&mut self, loc: Loc, found: impl Into<String>, expected: impl Into<String>) {
        self.list.push(ParseError::Unexpected {
            file: self.file.to_string(),
            loc,
            found: one_line(found.into()),
            expected: expected.into(),
        });
    }

    fn unclosed(&mut self, loc: Loc, found: String, open: &Elem) {
        self.list.push(ParseError::Unclosed {
            file: self.file.to_string(),
            loc,
            found,
            item: format!("<{}>", open.name),
            opened: open.loc,
            expected: format!("`</{}>`", open.name),
        });
    }
}

/// Byte offset -> line:column (columns count characters).
struct LineIndex<'a> {
    src: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(src: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { src, starts }
    }

    fn loc(&self, at: usize) -> Loc {
        let line = self.starts.partition_point(|s| *s <= at).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        let col = self.src.get(start..at).map_or(0, |s| s.chars().count()) + 1;
        Loc {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
        }
    }
}

/// The place after `text` that starts at `loc`.
fn advance(loc: Loc, text: &str) -> Loc {
    match text.rfind('\n') {
        Some(nl) => Loc {
            line: loc.line + u32::try_from(text.matches('\n').count()).unwrap_or(0),
            col: u32::try_from(text.get(nl + 1..).map_or(0, |s| s.chars().count()) + 1)
                .unwrap_or(u32::MAX),
        },
        None => Loc {
            line: loc.line,
            col: loc.col + u32::try_from(text.chars().count()).unwrap_or(0),
        },
    }
}

/// Text where an element was expected: the place of its first non-blank character, and a
/// short quote of it for the message.
fn stray_text(loc: Loc, text: &str) -> (Loc, String) {
    let first = text.trim_start();
    let lead = text.len() - first.len();
    let at = advance(loc, text.get(..lead).unwrap_or(""));
    let found: String = first.chars().take_while(|c| *c != '\n').take(20).collect();
    (at, format!("text `{}`", found.trim_end()))
}

//! The element tree, with mismatched and missing end tags repaired the way the rest of the
//! file makes likely (each repair reported).

use super::token::{Tok, Token};
use super::{stray_text, Errors};
use crate::ast::Loc;

/// An element of the tree.
#[derive(Debug, Clone)]
pub(super) struct Elem {
    pub(super) name: String,
    pub(super) loc: Loc,
    /// Where it ends: its end tag, or where the repair closed it.
    pub(super) end: Loc,
    pub(super) children: Vec<Node>,
}

#[derive(Debug, Clone)]
pub(super) enum Node {
    Elem(Elem),
    Text {
        text: String,
        raw: Option<(usize, usize)>,
        loc: Loc,
    },
}

/// The element name with `_` read as `-` (the OFA QoS RFC mixes both).
pub(super) fn norm(name: &str) -> String {
    name.replace('_', "-")
}

/// Children each container element may hold (normalised names).
pub(super) fn allowed(container: &str) -> &'static [&'static str] {
    match container {
        "qos-policy" => &[
            "port-groups",
            "qos-setup",
            "qos-levels",
            "qos-match-rules",
            "qos-ulps",
        ],
        "port-groups" => &["port-group"],
        "port-group" => &[
            "name",
            "use",
            "port-guid",
            "port-name",
            "pkey",
            "partition",
            "node-type",
        ],
        "qos-setup" => &["sl2vl-tables", "vlarb-tables"],
        "sl2vl-tables" => &["sl2vl-scope"],
        "sl2vl-scope" => &[
            "group",
            "across",
            "across-from",
            "across-to",
            "from",
            "to",
            "sl2vl-table",
        ],
        "vlarb-tables" => &["vlarb-scope"],
        "vlarb-scope" => &[
            "group",
            "across",
            "to",
            "vlarb-high",
            "vlarb-low",
            "vl-high-limit",
        ],
        "qos-levels" => &["qos-level"],
        "qos-level" => &[
            "name",
            "sn",
            "use",
            "sl",
            "mtu-limit",
            "rate-limit",
            "packet-life",
            "path-bits",
            "pkey",
            "lossless",
        ],
        "qos-match-rules" => &["qos-match-rule"],
        "qos-match-rule" => &[
            "sn",
            "use",
            "qos-class",
            "tclass",
            "source",
            "destination",
            "service-id",
            "service",
            "pkey",
            "qos-level-name",
            "match-level",
        ],
        "qos-ulps" => &["ulp"],
        _ => &[],
    }
}

/// Build the element tree, repairing bad nesting (each repair reported).
pub(super) fn build_tree(tokens: &[Token], eof: Loc, errs: &mut Errors<'_>) -> Option<Elem> {
    let mut b = TreeBuilder {
        stack: Vec::new(),
        roots: Vec::new(),
        errs,
    };
    for (k, t) in tokens.iter().enumerate() {
        match &t.tok {
            Tok::Text { text, raw } => b.text(t.loc, text, *raw),
            Tok::Start { name, empty } => {
                let next = tokens.get(k + 1..).unwrap_or(&[]);
                b.start(t.loc, name, *empty, next);
            }
            Tok::End { name } => b.end(t.loc, name),
        }
    }
    b.finish(eof)
}

/// The open elements, innermost last, and the closed top-level ones.
struct TreeBuilder<'a, 'e> {
    stack: Vec<Elem>,
    roots: Vec<Elem>,
    errs: &'a mut Errors<'e>,
}

impl TreeBuilder<'_, '_> {
    /// Close the innermost open element at `at`.
    fn close(&mut self, at: Loc) {
        if let Some(mut e) = self.stack.pop() {
            e.end = at;
            match self.stack.last_mut() {
                Some(parent) => parent.children.push(Node::Elem(e)),
                None => self.roots.push(e),
            }
        }
    }

    /// Text goes into the open element; outside one only blanks and a `#` header may stand.
    fn text(&mut self, loc: Loc, text: &str, raw: Option<(usize, usize)>) {
        match self.stack.last_mut() {
            Some(top) => top.children.push(Node::Text {
                text: text.to_string(),
                raw,
                loc,
            }),
            None if text.trim().is_empty() => {}
            // `#` lines before the root: a shell-style header, as OpenSM's form allows.
            None if self.roots.is_empty()
                && text
                    .lines()
                    .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) => {}
            None => {
                let (at, found) = stray_text(loc, text);
                let expected = if self.roots.is_empty() {
                    "`<qos-policy>` (text is allowed only inside elements)"
                } else {
                    "end of file after `</qos-policy>`"
                };
                self.errs.unexpected(at, found, expected);
            }
        }
    }

    /// A start tag; `next` are the tokens after it.
    fn start(&mut self, loc: Loc, name: &str, empty: bool, next: &[Token]) {
        if self.stack.last().is_some_and(|top| top.name == name)
            && !self.nested_twin(loc, name, next)
        {
            return;
        }
        if self.stack.is_empty() && !self.roots.is_empty() {
            self.errs.unexpected(
                loc,
                format!("`<{name}>` after `</qos-policy>`"),
                "end of file (one `<qos-policy>` per file)",
            );
        }
        self.stack.push(Elem {
            name: name.to_string(),
            loc,
            end: loc,
            children: vec![],
        });
        if empty {
            self.close(loc);
        }
    }

    /// `<x>` directly inside an open `<x>`: the policy form never nests an element in itself,
    /// so an end tag is missing. A `/` was forgotten when what follows cannot go inside `<x>`
    /// (then this tag is taken as `</x>`: false); otherwise the previous `<x>` was left open
    /// and this one starts a sibling (true).
    fn nested_twin(&mut self, loc: Loc, name: &str, next: &[Token]) -> bool {
        if let Some(top) = self.stack.last() {
            self.errs.unclosed(loc, format!("`<{name}>`"), top);
        }
        let next_fits = next.iter().find_map(|t| match &t.tok {
            Tok::Start { name: n, .. } => Some(allowed(&norm(name)).contains(&norm(n).as_str())),
            Tok::End { .. } => Some(false),
            Tok::Text { .. } => None,
        });
        self.close(loc);
        next_fits == Some(true)
    }

    /// An end tag: closes its element (and, reported, any left open inside it); one that
    /// matches nothing open is reported.
    fn end(&mut self, loc: Loc, name: &str) {
        if self.stack.last().is_some_and(|e| e.name == name) {
            self.close(loc);
            return;
        }
        if let Some(depth) = self.stack.iter().rposition(|e| e.name == name) {
            // Elements opened inside it were never closed.
            while self.stack.len() > depth + 1 {
                if let Some(open) = self.stack.last() {
                    self.errs.unclosed(loc, format!("`</{name}>`"), open);
                }
                self.close(loc);
            }
            self.close(loc);
            return;
        }
        let Some(top) = self.stack.last() else {
            self.errs.unexpected(
                loc,
                format!("`</{name}>`"),
                "an element start: nothing is open here",
            );
            return;
        };
        self.errs.unexpected(
            loc,
            format!("`</{name}>`"),
            format!(
                "`</{}>` to close `<{}>` opened at {}",
                top.name, top.name, top.loc
            ),
        );
        // A misspelt end tag of a value element (`<mtu_limit>1</mtl_limit>`) closes it;
        // elsewhere the tag is dropped.
        if allowed(&norm(&top.name)).is_empty() && self.stack.len() > 1 {
            self.close(loc);
        }
    }

    /// Close what is still open at `eof` (reported) and return the root, which must be
    /// `<qos-policy>`.
    fn finish(mut self, eof: Loc) -> Option<Elem> {
        while let Some(open) = self.stack.last() {
            self.errs.unclosed(eof, "end of file".into(), open);
            self.close(eof);
        }
        let root = self.roots.into_iter().next();
        match &root {
            None => self.errs.unexpected(
                Loc { line: 1, col: 1 },
                "no element".to_string(),
                "`<qos-policy>`",
            ),
            Some(r) if r.name != "qos-policy" => {
                self.errs
                    .unexpected(r.loc, format!("`<{}>`", r.name), "`<qos-policy>`")
            }
            Some(_) => {}
        }
        root.filter(|r| r.name == "qos-policy")
    }
}

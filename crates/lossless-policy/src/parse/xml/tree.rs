//! The element tree, with mismatched and missing end tags repaired the way the rest of the
//! file makes likely (each repair reported).

use super::token::{Tok, Token};
use super::{advance, Errors};
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

/// The element name with `_` read as `-` (the seed mixes both).
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
    let mut stack: Vec<Elem> = Vec::new();
    let mut roots: Vec<Elem> = Vec::new();
    let close = |stack: &mut Vec<Elem>, roots: &mut Vec<Elem>, at: Loc| {
        if let Some(mut e) = stack.pop() {
            e.end = at;
            match stack.last_mut() {
                Some(parent) => parent.children.push(Node::Elem(e)),
                None => roots.push(e),
            }
        }
    };
    for (k, t) in tokens.iter().enumerate() {
        match &t.tok {
            Tok::Text { text, raw } => match stack.last_mut() {
                Some(top) => top.children.push(Node::Text {
                    text: text.clone(),
                    raw: *raw,
                    loc: t.loc,
                }),
                None if text.trim().is_empty() => {}
                // `#` lines before the root: a shell-style header, as OpenSM's form allows.
                None if roots.is_empty()
                    && text
                        .lines()
                        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) => {}
                None => {
                    let first = text.trim_start();
                    let lead = text.len() - first.len();
                    let loc = advance(t.loc, text.get(..lead).unwrap_or(""));
                    let found: String = first.chars().take_while(|c| *c != '\n').take(20).collect();
                    errs.unexpected(
                        loc,
                        format!("text `{}`", found.trim_end()),
                        if roots.is_empty() {
                            "`<qos-policy>` (text is allowed only inside elements)"
                        } else {
                            "end of file after `</qos-policy>`"
                        },
                    );
                }
            },
            Tok::Start { name, empty } => {
                // `<x>` directly inside an open `<x>`: the policy form never nests an element
                // in itself, so an end tag is missing. A `/` was forgotten when what follows
                // cannot go inside `<x>` (then this tag is taken as `</x>`); otherwise the
                // previous `<x>` was left open and this one starts a sibling.
                if let Some(top) = stack.last() {
                    if top.name == *name {
                        errs.unclosed(t.loc, format!("`<{name}>`"), top);
                        let next_fits = tokens.get(k + 1..).and_then(|r| {
                            r.iter().find_map(|t| match &t.tok {
                                Tok::Start { name: n, .. } => {
                                    Some(allowed(&norm(name)).contains(&norm(n).as_str()))
                                }
                                Tok::End { .. } => Some(false),
                                Tok::Text { .. } => None,
                            })
                        });
                        close(&mut stack, &mut roots, t.loc);
                        if next_fits != Some(true) {
                            continue;
                        }
                    }
                }
                if stack.is_empty() && !roots.is_empty() {
                    errs.unexpected(
                        t.loc,
                        format!("`<{name}>` after `</qos-policy>`"),
                        "end of file (one `<qos-policy>` per file)",
                    );
                }
                stack.push(Elem {
                    name: name.clone(),
                    loc: t.loc,
                    end: t.loc,
                    children: vec![],
                });
                if *empty {
                    close(&mut stack, &mut roots, t.loc);
                }
            }
            Tok::End { name } => {
                if stack.last().is_some_and(|e| e.name == *name) {
                    close(&mut stack, &mut roots, t.loc);
                    continue;
                }
                if let Some(depth) = stack.iter().rposition(|e| e.name == *name) {
                    // Elements opened inside it were never closed.
                    while stack.len() > depth + 1 {
                        if let Some(open) = stack.last() {
                            errs.unclosed(t.loc, format!("`</{name}>`"), open);
                        }
                        close(&mut stack, &mut roots, t.loc);
                    }
                    close(&mut stack, &mut roots, t.loc);
                    continue;
                }
                match stack.last() {
                    Some(top) => {
                        errs.unexpected(
                            t.loc,
                            format!("`</{name}>`"),
                            format!(
                                "`</{}>` to close `<{}>` opened at {}",
                                top.name, top.name, top.loc
                            ),
                        );
                        // A misspelt end tag of a value element (`<mtu_limit>1</mtl_limit>`)
                        // closes it; elsewhere the tag is dropped.
                        if allowed(&norm(&top.name)).is_empty() && stack.len() > 1 {
                            close(&mut stack, &mut roots, t.loc);
                        }
                    }
                    None => errs.unexpected(
                        t.loc,
                        format!("`</{name}>`"),
                        "an element start: nothing is open here",
                    ),
                }
            }
        }
    }
    while let Some(open) = stack.last() {
        errs.unclosed(eof, "end of file".into(), open);
        close(&mut stack, &mut roots, eof);
    }
    let mut roots = roots.into_iter();
    let root = roots.next();
    match &root {
        None => errs.unexpected(
            Loc { line: 1, col: 1 },
            "no element".to_string(),
            "`<qos-policy>`",
        ),
        Some(r) if r.name != "qos-policy" => {
            errs.unexpected(r.loc, format!("`<{}>`", r.name), "`<qos-policy>`")
        }
        Some(_) => {}
    }
    root.filter(|r| r.name == "qos-policy")
}

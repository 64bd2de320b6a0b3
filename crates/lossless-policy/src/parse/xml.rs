//! The seed's XML-like `<qos-policy>` form.
//!
//! Seed 001 writes its policy as XML and says a strict grammar should be used to parse it;
//! the grammar that became real is OpenSM's. So this form is OpenSM's language in XML
//! clothing: one element per OpenSM keyword, values in OpenSM's list and range syntax
//! (`<port-guid>0x10-0x1f, 0x30</port-guid>`), and the result is the same [`Policy`] the
//! OpenSM parser builds. What the seed's example writes differently is accepted where it
//! means the same thing:
//!
//! * `_` for `-` in element names (`<mtu_limit>`, `<qos_match_rules>`);
//! * `<sn>` for a level's name, `<match-level>` for `qos-level-name` (the seed names levels
//!   by number), `<tclass>` for `qos-class` and `<service>` for `service-id` in a rule,
//!   `HCA` for `CA` in `<node-type>`;
//! * `<to>` in a `<vlarb-scope>` (OpenSM has no port list there; the seed does).
//!
//! What has no meaning in OpenSM is refused with the reason (`<tclass>` in a level: OpenSM
//! levels carry no traffic class). Element text is taken as written: names keep their
//! blanks (`<name>Virtual Servers</name>`), lists split at commas. `<ulp>` holds one
//! qos-ulps line as OpenSM writes it (`<ulp>sdp, port-num 10000 : 2</ulp>`).
//!
//! The parse does not stop at the first mistake: the seed's own example has several, and a
//! user fixing them one run at a time would hate us. Tokens, then a tree (mismatched and
//! missing end tags repaired the way the rest of the file makes likely), then the policy;
//! every mistake is reported with its line:column and what was expected there.

use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::opensm::{parse_ulp, Ulp};
use crate::parse::values::{note_octal, port_name, vl_pairs, yes_no};
use crate::parse::ParseError;

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

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Start {
        name: String,
        empty: bool,
    },
    End {
        name: String,
    },
    /// Character data: the decoded text, and the source slice when it needed no decoding
    /// (then value scanners report exact columns).
    Text {
        text: String,
        raw: Option<(usize, usize)>,
    },
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    loc: Loc,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// A short quote of the source at `at`, for messages.
fn quote(src: &str, at: usize, max: usize) -> String {
    let s: String = src
        .get(at..)
        .unwrap_or("")
        .chars()
        .take_while(|c| !c.is_whitespace())
        .take(max)
        .collect();
    format!("`{s}`")
}

fn tokenize(src: &str, lines: &LineIndex<'_>, errs: &mut Errors<'_>) -> Vec<Token> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut text_start: Option<usize> = None;
    let mut raw = true;
    let flush = |out: &mut Vec<Token>,
                 text: &mut String,
                 start: &mut Option<usize>,
                 raw: &mut bool,
                 end: usize| {
        if let Some(s) = start.take() {
            out.push(Token {
                tok: Tok::Text {
                    text: std::mem::take(text),
                    raw: raw.then_some((s, end)),
                },
                loc: lines.loc(s),
            });
        }
        *raw = true;
    };
    let mut i = 0;
    while i < src.len() {
        let rest = src.get(i..).unwrap_or("");
        let Some(c) = rest.chars().next() else { break };
        if c == '&' {
            text_start.get_or_insert(i);
            match entity(rest) {
                Some((ch, len)) => {
                    text.push(ch);
                    raw = false;
                    i += len;
                }
                None => {
                    errs.unexpected(
                        lines.loc(i),
                        "`&`",
                        "an entity (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#NN;`); write \
                         `&amp;` for a literal `&`",
                    );
                    text.push('&');
                    raw = false;
                    i += 1;
                }
            }
            continue;
        }
        if c != '<' {
            text_start.get_or_insert(i);
            text.push(c);
            i += c.len_utf8();
            continue;
        }
        let loc = lines.loc(i);
        if rest.starts_with("<!--") {
            flush(&mut out, &mut text, &mut text_start, &mut raw, i);
            let body = i + 4;
            // XML: a comment ends at the first `--`, which must be followed by `>`.
            let mut k = body;
            loop {
                match src.get(k..).and_then(|r| r.find("--")) {
                    Some(off) => {
                        let at = k + off;
                        if src.get(at + 2..).is_some_and(|r| r.starts_with('>')) {
                            i = at + 3;
                            break;
                        }
                        errs.unexpected(
                            lines.loc(at),
                            "`--` inside a comment".to_string(),
                            "`-->` (XML allows `--` in a comment only as part of `-->`)",
                        );
                        k = at + 2;
                    }
                    None => {
                        errs.unexpected(
                            loc,
                            "a comment that is never closed".to_string(),
                            "`-->` to close the comment opened here",
                        );
                        i = src.len();
                        break;
                    }
                }
            }
            continue;
        }
        if rest.starts_with("<![CDATA[") {
            let body = i + 9;
            match src.get(body..).and_then(|r| r.find("]]>")) {
                Some(off) => {
                    text_start.get_or_insert(i);
                    text.push_str(src.get(body..body + off).unwrap_or(""));
                    raw = false;
                    i = body + off + 3;
                }
                None => {
                    errs.unexpected(loc, "a CDATA section that is never closed", "`]]>`");
                    i = src.len();
                }
            }
            continue;
        }
        if rest.starts_with("<!") {
            flush(&mut out, &mut text, &mut text_start, &mut raw, i);
            let hint = match rest.chars().nth(2) {
                Some(
                    d @ ('\u{2010}'..='\u{2015}'
                    | '\u{2212}'
                    | '\u{fe58}'
                    | '\u{fe63}'
                    | '\u{ff0d}'),
                ) => {
                    format!(
                        "`<!--` to open a comment (`{d}` is U+{:04X}, not the ASCII hyphen `-`)",
                        u32::from(d)
                    )
                }
                _ => "`<!--` to open a comment (`<!` must be followed by `--`)".to_string(),
            };
            errs.unexpected(loc, quote(src, i, 6), hint);
            // Skip what was meant as a comment: to its `-->` when that comes before any
            // other markup, else to the first `>`.
            let after = i + 2;
            let r = src.get(after..).unwrap_or("");
            let end_c = r.find("-->");
            let next_lt = r.find('<');
            i = match (end_c, next_lt) {
                (Some(e), Some(n)) if e < n => after + e + 3,
                (Some(e), None) => after + e + 3,
                _ => r.find('>').map_or(src.len(), |g| after + g + 1),
            };
            continue;
        }
        if rest.starts_with("<?") {
            flush(&mut out, &mut text, &mut text_start, &mut raw, i);
            match rest.find("?>") {
                Some(off) => i += off + 2,
                None => {
                    errs.unexpected(loc, quote(src, i, 12), "`?>` to close the declaration");
                    i = src.len();
                }
            }
            continue;
        }
        let closing = rest.starts_with("</");
        let name_at = i + if closing { 2 } else { 1 };
        let name: String = src
            .get(name_at..)
            .unwrap_or("")
            .chars()
            .take_while(|c| is_name_char(*c))
            .collect();
        if !name.chars().next().is_some_and(is_name_start) {
            // `a < b` in text: keep the `<` as text, say how to write it.
            errs.unexpected(
                loc,
                quote(src, i, 6),
                if closing {
                    "an element name after `</`"
                } else {
                    "an element name after `<` (write `&lt;` for a literal `<`)"
                },
            );
            text_start.get_or_insert(i);
            text.push('<');
            raw = false;
            i += 1;
            continue;
        }
        flush(&mut out, &mut text, &mut text_start, &mut raw, i);
        let mut k = name_at + name.len();
        let r = src.get(k..).unwrap_or("");
        let blanks = r.len() - r.trim_start().len();
        k += blanks;
        let r = src.get(k..).unwrap_or("");
        let mut empty = false;
        if !closing && r.starts_with("/>") {
            empty = true;
            k += 2;
        } else if r.starts_with('>') {
            k += 1;
        } else {
            let what = if closing {
                format!("`>` to end `</{name}`")
            } else {
                format!(
                    "`>` to end `<{name}` (the policy form has no attributes: values are \
                     element text)"
                )
            };
            errs.unexpected(lines.loc(k), quote(src, k, 12), what);
            match r.find('>') {
                Some(g) => {
                    empty = !closing && r.get(..g).is_some_and(|x| x.ends_with('/'));
                    k += g + 1;
                }
                None => k = src.len(),
            }
        }
        out.push(Token {
            tok: if closing {
                Tok::End { name }
            } else {
                Tok::Start { name, empty }
            },
            loc,
        });
        i = k;
    }
    flush(&mut out, &mut text, &mut text_start, &mut raw, src.len());
    out
}

/// `&...;` at the start of `s`: the character and the length of the reference.
fn entity(s: &str) -> Option<(char, usize)> {
    let end = s.get(..12.min(s.len()))?.find(';')?;
    let body = s.get(1..end)?;
    let c = match body {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let n = if let Some(h) = body.strip_prefix("#x").or_else(|| body.strip_prefix("#X")) {
                u32::from_str_radix(h, 16).ok()?
            } else {
                body.strip_prefix('#')?.parse().ok()?
            };
            char::from_u32(n)?
        }
    };
    Some((c, end + 1))
}

/// An element of the tree.
#[derive(Debug, Clone)]
struct Elem {
    name: String,
    loc: Loc,
    /// Where it ends: its end tag, or where the repair closed it.
    end: Loc,
    children: Vec<Node>,
}

#[derive(Debug, Clone)]
enum Node {
    Elem(Elem),
    Text {
        text: String,
        raw: Option<(usize, usize)>,
        loc: Loc,
    },
}

/// The element name with `_` read as `-` (the seed mixes both).
fn norm(name: &str) -> String {
    name.replace('_', "-")
}

/// Children each container element may hold (normalised names).
fn allowed(container: &str) -> &'static [&'static str] {
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
fn build_tree(tokens: &[Token], eof: Loc, errs: &mut Errors<'_>) -> Option<Elem> {
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

/// The text of a value element: its content and where its first non-blank character is.
struct Value<'s> {
    text: std::borrow::Cow<'s, str>,
    loc: Loc,
}

struct Builder<'a, 'e> {
    file: &'a str,
    src: &'a str,
    errs: &'e mut Errors<'a>,
    policy: &'e mut Policy,
    last_rule_sn: Option<(u64, Loc)>,
}

/// Single-valued children already seen in one element.
#[derive(Default)]
struct Once(Vec<(String, Loc)>);

impl<'a> Builder<'a, '_> {
    fn err(&mut self, mut e: ParseError) {
        match &mut e {
            ParseError::Unexpected { found, .. }
            | ParseError::OutOfRange { found, .. }
            | ParseError::Duplicate { found, .. }
            | ParseError::Missing { found, .. }
            | ParseError::Unclosed { found, .. } => *found = one_line(std::mem::take(found)),
        }
        self.errs.list.push(e);
    }

    fn unexpected(&mut self, loc: Loc, found: impl Into<String>, expected: impl Into<String>) {
        self.errs.unexpected(loc, found, expected);
    }

    /// Child elements of a container; text other than blanks is reported.
    fn elems<'t>(&mut self, e: &'t Elem) -> Vec<&'t Elem> {
        let mut v = Vec::new();
        let allowed_here = allowed(&norm(&e.name));
        for c in &e.children {
            match c {
                Node::Elem(x) => v.push(x),
                Node::Text { text, loc, .. } if !text.trim().is_empty() => {
                    let first = text.trim_start();
                    let at = advance(*loc, text.get(..text.len() - first.len()).unwrap_or(""));
                    let found: String = first.chars().take_while(|c| *c != '\n').take(20).collect();
                    self.unexpected(
                        at,
                        format!("text `{}`", found.trim_end()),
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

    fn not_allowed(&mut self, parent: &Elem, child: &Elem) {
        let why = match (norm(&parent.name).as_str(), norm(&child.name).as_str()) {
            ("qos-level", "tclass") => {
                " (the seed's level TClass: OpenSM levels carry no traffic class, it is matched \
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
    fn value(&mut self, e: &Elem, what: &str) -> Option<Value<'a>> {
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
    fn once(&mut self, seen: &mut Once, parent: &Elem, child: &Elem) -> bool {
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

    fn cursor<'v>(&self, v: &'v Value<'_>) -> Cursor<'v>
    where
        'a: 'v,
    {
        Cursor::at(self.file, &v.text, v.loc)
    }

    /// A scanner result: value, or the error recorded.
    fn ok<T>(&mut self, r: Result<T, ParseError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.err(e);
                None
            }
        }
    }

    fn policy_elem(&mut self, root: &Elem) {
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

    fn section(&mut self, e: &Elem, kind: SectionKind) {
        self.policy.sections.push((kind, e.loc));
    }

    /// The children of a list container that are `item` elements; others reported.
    fn items<'t>(&mut self, e: &'t Elem, item: &str) -> Vec<&'t Elem> {
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

    fn port_groups(&mut self, e: &Elem) {
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

    fn port_group(&mut self, e: &Elem) {
        let file = self.file;
        let mut g = PortGroup {
            name: Spanned::new(String::new(), e.loc),
            use_: None,
            port_guids: vec![],
            port_names: vec![],
            interfaces: vec![],
            pkeys: vec![],
            partitions: vec![],
            node_types: NodeTypes::default(),
            loc: e.loc,
        };
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
                "port-name" => {
                    for s in self.names(c, "a port name `<node description>/P<port>`") {
                        if s.value.contains('/') {
                            match port_name(file, &s.value, false, s.loc) {
                                Ok(p) => g.port_names.push(Spanned::new(p, s.loc)),
                                Err(err) => {
                                    self.err(err);
                                    ok = false;
                                }
                            }
                        } else {
                            g.interfaces.push(s);
                        }
                    }
                }
                "partition" => g.partitions.extend(self.names(c, "a partition name")),
                "node-type" => {
                    if let Some(v) = self.value(c, "node types") {
                        for s in split_list(&v) {
                            // The seed also writes HCA for CA.
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
                    }
                }
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

    fn missing(&mut self, e: &Elem, what: &str) {
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
    fn name(&mut self, e: &Elem, what: &str) -> Option<Spanned<String>> {
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
    fn names(&mut self, e: &Elem, what: &str) -> Vec<Spanned<String>> {
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

    fn ranges(&mut self, e: &Elem, what: &str) -> Option<Vec<NumRange>> {
        let v = self.value(e, what)?;
        let mut cur = self.cursor(&v);
        let r = cur.ranges(what, false, &mut self.policy.octal_numbers);
        self.ok(r)
    }

    fn number(&mut self, e: &Elem, what: &str) -> Option<(u64, Loc, String)> {
        let v = self.value(e, what)?;
        let mut cur = self.cursor(&v);
        let r = cur
            .number(what)
            .and_then(|(n, loc, raw)| cur.expect_end().map(|_| (n, loc, raw.to_string())));
        let (n, loc, raw) = self.ok(r)?;
        note_octal(&mut self.policy.octal_numbers, &raw, loc);
        Some((n, loc, raw))
    }

    fn port_set(&mut self, e: &Elem) -> Option<PortSet> {
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
        if let Some(bad) = r.iter().find(|r| r.hi >= 128) {
            self.err(ParseError::OutOfRange {
                file: self.file.to_string(),
                loc: bad.loc,
                found: bad.hi.to_string(),
                expected: format!("a port number below 128 in `<{}>`", e.name),
            });
            return None;
        }
        Some(PortSet::List(r))
    }

    fn qos_setup(&mut self, e: &Elem) {
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

    fn sl2vl_scope(&mut self, e: &Elem) {
        let mut s = Sl2VlScope {
            groups: vec![],
            across_from: vec![],
            across_to: vec![],
            from: PortSet::Unspecified,
            to: PortSet::Unspecified,
            table: [0; 16],
            table_loc: e.loc,
            loc: e.loc,
        };
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
                    match self.sl2vl_table(c) {
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

    fn sl2vl_table(&mut self, e: &Elem) -> Option<[u8; 16]> {
        let v = self.value(e, "16 VLs")?;
        let mut cur = self.cursor(&v);
        let r = cur.num_list("a VL (0-15)", &mut self.policy.octal_numbers);
        let vals = self.ok(r)?;
        if vals.len() != 16 {
            self.err(ParseError::OutOfRange {
                file: self.file.to_string(),
                loc: v.loc,
                found: format!("{} values", vals.len()),
                expected: "exactly 16 VLs, one per SL 0-15".to_string(),
            });
            return None;
        }
        let mut table = [0u8; 16];
        for (slot, x) in table.iter_mut().zip(&vals) {
            match u8::try_from(x.value).ok().filter(|v| *v < 16) {
                Some(vl) => *slot = vl,
                None => {
                    self.err(ParseError::OutOfRange {
                        file: self.file.to_string(),
                        loc: x.loc,
                        found: x.value.to_string(),
                        expected: "a VL from 0 to 15".to_string(),
                    });
                    return None;
                }
            }
        }
        Some(table)
    }

    fn vlarb_scope(&mut self, e: &Elem) {
        let mut s = VlArbScope {
            groups: vec![],
            across: vec![],
            to: PortSet::Unspecified,
            high: None,
            low: None,
            high_limit: None,
            loc: e.loc,
        };
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
                "vlarb-high" | "vlarb-low" => {
                    let Some(v) = self.value(c, "VL:weight pairs") else {
                        ok = false;
                        continue;
                    };
                    let mut cur = self.cursor(&v);
                    let r = vl_pairs(&mut cur, &mut self.policy.octal_numbers);
                    match self.ok(r) {
                        Some(p) if n == "vlarb-high" => s.high = Some(p),
                        Some(p) => s.low = Some(p),
                        None => ok = false,
                    }
                }
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

    fn level(&mut self, e: &Elem) {
        let mut l = QosLevel {
            name: Spanned::new(String::new(), e.loc),
            use_: None,
            sl: Spanned::new(0, e.loc),
            mtu_limit: None,
            rate_limit: None,
            packet_life: None,
            path_bits: vec![],
            pkeys: vec![],
            lossless: false,
            loc: e.loc,
        };
        let mut name = None;
        let mut sl = None;
        let mut ok = true;
        let mut seen = Once::default();
        for c in self.elems(e) {
            let n = norm(&c.name);
            if !matches!(n.as_str(), "path-bits" | "pkey")
                && allowed("qos-level").contains(&n.as_str())
                && !self.once(&mut seen, e, c)
            {
                continue;
            }
            match n.as_str() {
                "name" | "sn" => name = self.name(c, "a QoS level name"),
                "use" => l.use_ = self.value(c, "a description").map(|v| v.text.into()),
                "sl" | "mtu-limit" | "rate-limit" | "packet-life" => {
                    let Some((v, loc, raw)) = self.number(c, &format!("a number for `{n}`")) else {
                        ok = false;
                        continue;
                    };
                    let (lo, hi, meaning) = crate::parse::values::level_limits(&n);
                    if v < lo || v > hi {
                        self.err(ParseError::OutOfRange {
                            file: self.file.to_string(),
                            loc,
                            found: raw,
                            expected: meaning.to_string(),
                        });
                        ok = false;
                        continue;
                    }
                    let v = Spanned::new(v, loc);
                    match n.as_str() {
                        "sl" => sl = Some(v),
                        "mtu-limit" => l.mtu_limit = Some(v),
                        "rate-limit" => l.rate_limit = Some(v),
                        _ => l.packet_life = Some(v),
                    }
                }
                "path-bits" => match self.ranges(c, "a path-bits value or range") {
                    Some(r) => l.path_bits.extend(r),
                    None => ok = false,
                },
                "pkey" => match self.ranges(c, "a P_Key or P_Key range") {
                    Some(r) => l.pkeys.extend(r),
                    None => ok = false,
                },
                "lossless" => {
                    // `<lossless/>` or `<lossless>yes</lossless>`.
                    if c.children.iter().all(|x| match x {
                        Node::Text { text, .. } => text.trim().is_empty(),
                        Node::Elem(_) => false,
                    }) {
                        l.lossless = true;
                    } else if let Some(v) = self.value(c, "`yes` or `no`") {
                        let mut cur = self.cursor(&v);
                        let r = yes_no(&mut cur, "`<lossless>`").and_then(|b| {
                            cur.expect_end()?;
                            Ok(b)
                        });
                        match self.ok(r) {
                            Some(b) => l.lossless = b,
                            None => ok = false,
                        }
                    }
                }
                _ => self.not_allowed(e, c),
            }
        }
        match (name, sl) {
            (Some(n), Some(s)) => {
                l.name = n;
                l.sl = s;
                if ok {
                    self.policy.levels.push(l);
                }
            }
            (None, _) => self.missing(e, "`<name>` (or the seed's `<sn>`)"),
            (_, None) if ok => self.missing(e, "`<sl>`"),
            _ => {}
        }
    }

    fn rule(&mut self, e: &Elem) {
        let mut r = MatchRule {
            use_: None,
            qos_class: vec![],
            source: vec![],
            destination: vec![],
            service_id: vec![],
            pkey: vec![],
            level: Spanned::new(String::new(), e.loc),
            loc: e.loc,
        };
        let mut level = None;
        let mut ok = true;
        let mut seen = Once::default();
        for c in self.elems(e) {
            let n = norm(&c.name);
            if matches!(n.as_str(), "sn" | "use" | "qos-level-name" | "match-level")
                && !self.once(&mut seen, e, c)
            {
                continue;
            }
            match n.as_str() {
                "sn" => {
                    // Rules apply in file order; a number that says otherwise is a mistake.
                    if let Some((v, loc, _)) = self.number(c, "the rule's sequence number") {
                        if let Some((prev, ploc)) = self.last_rule_sn {
                            if v <= prev {
                                self.unexpected(
                                    loc,
                                    format!("`<sn>` {v} after `<sn>` {prev} at {ploc}"),
                                    format!(
                                        "a number above {prev}: rules apply in file order, \
                                         first match wins"
                                    ),
                                );
                            }
                        }
                        self.last_rule_sn = Some((v, loc));
                    }
                }
                "use" => r.use_ = self.value(c, "a description").map(|v| v.text.into()),
                "qos-level-name" | "match-level" => level = self.name(c, "a QoS level name"),
                "source" => r.source.extend(self.names(c, "a port group name")),
                "destination" => r.destination.extend(self.names(c, "a port group name")),
                "qos-class" | "tclass" | "service-id" | "service" | "pkey" => {
                    let what = match n.as_str() {
                        "qos-class" | "tclass" => "a QoS class or range",
                        "pkey" => "a P_Key or P_Key range",
                        _ => "a service ID or range",
                    };
                    match self.ranges(c, what) {
                        Some(v) => match n.as_str() {
                            "qos-class" | "tclass" => r.qos_class.extend(v),
                            "pkey" => r.pkey.extend(v),
                            _ => r.service_id.extend(v),
                        },
                        None => ok = false,
                    }
                }
                _ => self.not_allowed(e, c),
            }
        }
        match level {
            Some(l) => {
                r.level = l;
                if ok {
                    self.policy.rules.push(r);
                }
            }
            None => self.missing(e, "`<qos-level-name>` (or the seed's `<match-level>`)"),
        }
    }

    fn ulp(&mut self, e: &Elem) {
        let Some(v) = self.value(e, "a qos-ulps line such as `sdp, port-num 10000 : 2`") else {
            return;
        };
        let mut cur = self.cursor(&v);
        let Some(w) = cur.word() else {
            let err = cur.unexpected(
                "a ULP rule (default, sdp, rds, srp, iser, ipoib, any) as OpenSM writes it",
            );
            self.err(err);
            return;
        };
        let r = parse_ulp(&mut cur, w.value, w.loc, &mut self.policy.octal_numbers);
        match self.ok(r) {
            Some(Ulp::Default(sl)) => self.policy.ulp_default = Some(sl),
            Some(Ulp::Rule(u)) => self.policy.ulps.push(u),
            None => {}
        }
    }
}

fn merge_sets(a: PortSet, b: PortSet) -> PortSet {
    match (a, b) {
        (PortSet::List(mut a), PortSet::List(b)) => {
            a.extend(b);
            PortSet::List(a)
        }
        (PortSet::All, _) | (_, PortSet::All) => PortSet::All,
        (_, b) => b,
    }
}

/// Split a value at commas; items trimmed, each with its place.
fn split_list(v: &Value<'_>) -> Vec<Spanned<String>> {
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

fn list_tags(names: &[&str]) -> String {
    let tags: Vec<String> = names.iter().map(|n| format!("`<{n}>`")).collect();
    match tags.split_last() {
        None => "text".to_string(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{}, {last}", rest.join(", ")),
    }
}

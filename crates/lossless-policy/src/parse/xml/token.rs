//! Tokens of the XML-like form: tags, text (entities and CDATA decoded), comments and
//! declarations skipped; every malformed piece reported where it stands.

use super::{Errors, LineIndex};
use crate::ast::Loc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Tok {
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
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) loc: Loc,
}

pub(super) fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

pub(super) fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// A short quote of the source at `at`, for messages.
pub(super) fn quote(src: &str, at: usize, max: usize) -> String {
    let s: String = src
        .get(at..)
        .unwrap_or("")
        .chars()
        .take_while(|c| !c.is_whitespace())
        .take(max)
        .collect();
    format!("`{s}`")
}

pub(super) fn tokenize(src: &str, lines: &LineIndex<'_>, errs: &mut Errors<'_>) -> Vec<Token> {
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
pub(super) fn entity(s: &str) -> Option<(char, usize)> {
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

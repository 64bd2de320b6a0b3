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

pub(super) fn tokenize(src: &str, lines: &LineIndex<'_>, errs: &mut Errors<'_>) -> Vec<Token> {
    let mut t = Tokenizer {
        src,
        lines,
        errs,
        out: Vec::new(),
        text: String::new(),
        text_start: None,
        raw: true,
        i: 0,
    };
    while t.i < src.len() {
        let rest = src.get(t.i..).unwrap_or("");
        let Some(c) = rest.chars().next() else { break };
        match c {
            '&' => t.reference(rest),
            '<' => t.markup(rest),
            _ => t.char_data(c),
        }
    }
    t.flush(src.len());
    t.out
}

/// Where the tokenizer is, and the run of character data it is collecting.
struct Tokenizer<'a, 'e> {
    src: &'a str,
    lines: &'a LineIndex<'a>,
    errs: &'a mut Errors<'e>,
    out: Vec<Token>,
    text: String,
    /// Where the run of character data started, if one is open.
    text_start: Option<usize>,
    /// The run is the source as written (nothing decoded), so its slice can be kept.
    raw: bool,
    /// Byte offset of the next character.
    i: usize,
}

impl Tokenizer<'_, '_> {
    /// End the run of character data (if any) at `end` as one text token.
    fn flush(&mut self, end: usize) {
        if let Some(s) = self.text_start.take() {
            self.out.push(Token {
                tok: Tok::Text {
                    text: std::mem::take(&mut self.text),
                    raw: self.raw.then_some((s, end)),
                },
                loc: self.lines.loc(s),
            });
        }
        self.raw = true;
    }

    /// Add decoded text to the run (the run is no longer the source as written).
    fn decoded(&mut self, s: &str) {
        self.text_start.get_or_insert(self.i);
        self.text.push_str(s);
        self.raw = false;
    }

    fn char_data(&mut self, c: char) {
        self.text_start.get_or_insert(self.i);
        self.text.push(c);
        self.i += c.len_utf8();
    }

    /// `&...;`: a character reference; a bare `&` is reported and kept as text.
    fn reference(&mut self, rest: &str) {
        match entity(rest) {
            Some((ch, len)) => {
                self.decoded(ch.encode_utf8(&mut [0; 4]));
                self.i += len;
            }
            None => {
                self.errs.unexpected(
                    self.lines.loc(self.i),
                    "`&`",
                    "an entity (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&apos;`, `&#NN;`); write \
                     `&amp;` for a literal `&`",
                );
                self.decoded("&");
                self.i += 1;
            }
        }
    }

    /// Anything that starts with `<`.
    fn markup(&mut self, rest: &str) {
        if rest.starts_with("<!--") {
            self.comment();
        } else if rest.starts_with("<![CDATA[") {
            self.cdata();
        } else if rest.starts_with("<!") {
            self.bad_declaration(rest);
        } else if rest.starts_with("<?") {
            self.declaration(rest);
        } else {
            self.tag(rest);
        }
    }

    /// `<!-- ... -->`, skipped. XML: a comment ends at the first `--`, which must be
    /// followed by `>`.
    fn comment(&mut self) {
        let loc = self.lines.loc(self.i);
        self.flush(self.i);
        let mut k = self.i + 4;
        loop {
            let Some(off) = self.src.get(k..).and_then(|r| r.find("--")) else {
                self.errs.unexpected(
                    loc,
                    "a comment that is never closed".to_string(),
                    "`-->` to close the comment opened here",
                );
                self.i = self.src.len();
                return;
            };
            let at = k + off;
            if self.src.get(at + 2..).is_some_and(|r| r.starts_with('>')) {
                self.i = at + 3;
                return;
            }
            self.errs.unexpected(
                self.lines.loc(at),
                "`--` inside a comment".to_string(),
                "`-->` (XML allows `--` in a comment only as part of `-->`)",
            );
            k = at + 2;
        }
    }

    /// `<![CDATA[ ... ]]>`: its content is text, taken as written.
    fn cdata(&mut self) {
        let body = self.i + 9;
        match self.src.get(body..).and_then(|r| r.find("]]>")) {
            Some(off) => {
                self.decoded(self.src.get(body..body + off).unwrap_or(""));
                self.i = body + off + 3;
            }
            None => {
                self.errs.unexpected(
                    self.lines.loc(self.i),
                    "a CDATA section that is never closed",
                    "`]]>`",
                );
                self.i = self.src.len();
            }
        }
    }

    /// `<!` not followed by `--`: most likely a comment with a wrong dash; reported and
    /// skipped.
    fn bad_declaration(&mut self, rest: &str) {
        let i = self.i;
        self.flush(i);
        let hint = match rest.chars().nth(2) {
            Some(
                d @ ('\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}'),
            ) => {
                format!(
                    "`<!--` to open a comment (`{d}` is U+{:04X}, not the ASCII hyphen `-`)",
                    u32::from(d)
                )
            }
            _ => "`<!--` to open a comment (`<!` must be followed by `--`)".to_string(),
        };
        self.errs
            .unexpected(self.lines.loc(i), quote(self.src, i, 6), hint);
        // Skip what was meant as a comment: to its `-->` when that comes before any
        // other markup, else to the first `>`.
        let after = i + 2;
        let r = self.src.get(after..).unwrap_or("");
        let end_c = r.find("-->");
        let next_lt = r.find('<');
        self.i = match (end_c, next_lt) {
            (Some(e), Some(n)) if e < n => after + e + 3,
            (Some(e), None) => after + e + 3,
            _ => r.find('>').map_or(self.src.len(), |g| after + g + 1),
        };
    }

    /// `<? ... ?>` (the XML declaration), skipped.
    fn declaration(&mut self, rest: &str) {
        self.flush(self.i);
        match rest.find("?>") {
            Some(off) => self.i += off + 2,
            None => {
                self.errs.unexpected(
                    self.lines.loc(self.i),
                    quote(self.src, self.i, 12),
                    "`?>` to close the declaration",
                );
                self.i = self.src.len();
            }
        }
    }

    /// `<name>`, `<name/>` or `</name>`. A `<` not followed by a name is reported and kept
    /// as text (`a < b`).
    fn tag(&mut self, rest: &str) {
        let loc = self.lines.loc(self.i);
        let closing = rest.starts_with("</");
        let name_at = self.i + if closing { 2 } else { 1 };
        let name: String = self
            .src
            .get(name_at..)
            .unwrap_or("")
            .chars()
            .take_while(|c| is_name_char(*c))
            .collect();
        if !name.chars().next().is_some_and(is_name_start) {
            let expected = if closing {
                "an element name after `</`"
            } else {
                "an element name after `<` (write `&lt;` for a literal `<`)"
            };
            self.errs
                .unexpected(loc, quote(self.src, self.i, 6), expected);
            self.decoded("<");
            self.i += 1;
            return;
        }
        self.flush(self.i);
        let (end, empty) = self.tag_end(name_at + name.len(), closing, &name);
        self.out.push(Token {
            tok: if closing {
                Tok::End { name }
            } else {
                Tok::Start { name, empty }
            },
            loc,
        });
        self.i = end;
    }

    /// The `>` or `/>` that ends a tag whose name ends at `k`: where the tag ends, and
    /// whether it is an empty element. Anything else before the `>` is reported (the form
    /// has no attributes) and skipped.
    fn tag_end(&mut self, mut k: usize, closing: bool, name: &str) -> (usize, bool) {
        let r = self.src.get(k..).unwrap_or("");
        k += r.len() - r.trim_start().len();
        let r = self.src.get(k..).unwrap_or("");
        if !closing && r.starts_with("/>") {
            return (k + 2, true);
        }
        if r.starts_with('>') {
            return (k + 1, false);
        }
        let what = if closing {
            format!("`>` to end `</{name}`")
        } else {
            format!(
                "`>` to end `<{name}` (the policy form has no attributes: values are \
                 element text)"
            )
        };
        self.errs
            .unexpected(self.lines.loc(k), quote(self.src, k, 12), what);
        match r.find('>') {
            Some(g) => {
                let empty = !closing && r.get(..g).is_some_and(|x| x.ends_with('/'));
                (k + g + 1, empty)
            }
            None => (self.src.len(), false),
        }
    }
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

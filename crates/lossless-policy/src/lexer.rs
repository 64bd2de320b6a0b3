//! Value scanners for one line of an OpenSM policy file.
//!
//! OpenSM's flex lexer is line oriented in practice: every list ends at the newline, and a
//! keyword starts each line. We scan one line at a time with a cursor that knows its line
//! number, so every error names line:column, the token found and what was expected.

use crate::ast::{Loc, NumRange, Spanned};
use crate::parse::ParseError;

/// Section keywords OpenSM's lexer recognises anywhere in unquoted text (flex takes the
/// longest match at every position, so `my-qos-levels` splits into `my-` and a keyword).
pub const SECTION_KEYWORDS: &[&str] = &[
    "port-groups",
    "port-group",
    "qos-setup",
    "vlarb-tables",
    "vlarb-scope",
    "sl2vl-tables",
    "sl2vl-scope",
    "qos-levels",
    "qos-level",
    "qos-match-rules",
    "qos-match-rule",
    "qos-ulps",
];

/// A cursor over the text of one line (comment already removed), or over the text of one
/// XML element, which may span lines.
pub struct Cursor<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub pos: usize,
    pub line: u32,
    /// Column of `text`'s first character, minus one (0 for a whole line).
    pub col0: u32,
    /// What the end of `text` is called in messages.
    pub end: &'static str,
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

impl<'a> Cursor<'a> {
    pub fn new(file: &'a str, text: &'a str, line: u32) -> Self {
        Self {
            file,
            text,
            pos: 0,
            line,
            col0: 0,
            end: "end of line",
        }
    }

    /// A cursor over `text` that starts at `start` in the file.
    pub fn at(file: &'a str, text: &'a str, start: Loc) -> Self {
        Self {
            file,
            text,
            pos: 0,
            line: start.line,
            col0: start.col.saturating_sub(1),
            end: "the closing tag",
        }
    }

    pub fn loc_at(&self, pos: usize) -> Loc {
        let before = self.text.get(..pos).unwrap_or(self.text);
        let (line, col) = match before.rfind('\n') {
            Some(nl) => (
                self.line
                    .saturating_add(u32::try_from(before.matches('\n').count()).unwrap_or(0)),
                before.get(nl + 1..).map_or(0, |s| s.chars().count()) + 1,
            ),
            None => (self.line, before.chars().count() + 1 + self.col0 as usize),
        };
        Loc {
            line,
            col: u32::try_from(col).unwrap_or(u32::MAX),
        }
    }

    pub fn loc(&self) -> Loc {
        self.loc_at(self.pos)
    }

    pub fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or("")
    }

    pub fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    pub fn skip_blanks(&mut self) {
        while self.peek().is_some_and(is_blank) {
            self.bump();
        }
    }

    pub fn at_end(&self) -> bool {
        self.rest().chars().all(is_blank)
    }

    /// The token at the cursor, for error messages.
    pub fn token(&self) -> String {
        let r = self.rest().trim_start_matches(is_blank);
        if r.is_empty() {
            return self.end.to_string();
        }
        let first = r.chars().next().unwrap_or(' ');
        if first.is_ascii_alphanumeric() || first == '_' || first == '-' {
            let w: String = r
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || *c == '/')
                .collect();
            format!("`{w}`")
        } else {
            format!("`{first}`")
        }
    }

    pub fn unexpected(&self, expected: impl Into<String>) -> ParseError {
        let mut probe = Cursor::at(
            self.file,
            self.text,
            Loc {
                line: self.line,
                col: self.col0 + 1,
            },
        );
        probe.pos = self.pos;
        probe.end = self.end;
        probe.skip_blanks();
        ParseError::Unexpected {
            file: self.file.to_string(),
            loc: probe.loc(),
            found: self.token(),
            expected: expected.into(),
        }
    }

    /// A keyword-like word: letters, digits, `-` and `_`.
    pub fn word(&mut self) -> Option<Spanned<&'a str>> {
        self.skip_blanks();
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            self.bump();
        }
        if self.pos == start {
            return None;
        }
        Some(Spanned::new(
            self.text.get(start..self.pos).unwrap_or(""),
            self.loc_at(start),
        ))
    }

    pub fn eat(&mut self, c: char) -> bool {
        self.skip_blanks();
        if self.peek() == Some(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, c: char, expected: &str) -> Result<(), ParseError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.unexpected(expected))
        }
    }

    pub fn expect_end(&mut self) -> Result<(), ParseError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.unexpected(self.end))
        }
    }

    /// A number as OpenSM reads it (`strtoull(s, NULL, 0)`): `0x` hex, a leading `0` means
    /// octal, otherwise decimal. Returns the value, where it was and the text as written.
    pub fn number(&mut self, what: &str) -> Result<(u64, Loc, &'a str), ParseError> {
        self.skip_blanks();
        let start = self.pos;
        let loc = self.loc();
        let r = self.rest();
        if !r.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(self.unexpected(what));
        }
        let hex = r.starts_with("0x") || r.starts_with("0X");
        let value = if hex {
            self.pos += 2;
            let ds = self.pos;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.bump();
            }
            let digits = self.text.get(ds..self.pos).unwrap_or("");
            if digits.is_empty() {
                return Err(self.unexpected("hexadecimal digits after `0x`"));
            }
            u64::from_str_radix(digits, 16).map_err(|_| ParseError::OutOfRange {
                file: self.file.to_string(),
                loc,
                found: self.text.get(start..self.pos).unwrap_or("").to_string(),
                expected: "a number that fits in 64 bits".to_string(),
            })?
        } else {
            while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                self.bump();
            }
            let digits = self.text.get(start..self.pos).unwrap_or("");
            let parsed = if digits.len() > 1 && digits.starts_with('0') {
                // strtoull reads the longest octal prefix: "08" is 0, "010" is 8.
                let oct: String = digits
                    .chars()
                    .take_while(|c| ('0'..='7').contains(c))
                    .collect();
                u64::from_str_radix(&oct, 8)
            } else {
                digits.parse::<u64>()
            };
            parsed.map_err(|_| ParseError::OutOfRange {
                file: self.file.to_string(),
                loc,
                found: digits.to_string(),
                expected: "a number that fits in 64 bits".to_string(),
            })?
        };
        // A number must end at a delimiter: OpenSM would lex `10abc` as a number and text.
        if let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                return Err(self.unexpected(format!("a delimiter after the number in {what}")));
            }
        }
        Ok((value, loc, self.text.get(start..self.pos).unwrap_or("")))
    }

    /// `N` or `N-M`, then more after commas. Stops at end of line or, when `stop_colon`, at
    /// a `:` (left unconsumed). `octal` collects numbers written with a leading zero.
    pub fn ranges(
        &mut self,
        what: &str,
        stop_colon: bool,
        octal: &mut Vec<Spanned<String>>,
    ) -> Result<Vec<NumRange>, ParseError> {
        let mut out = Vec::new();
        loop {
            let (lo, loc, raw) = self.number(what)?;
            note_octal(raw, loc, octal);
            let mut r = NumRange {
                lo,
                hi: lo,
                reversed: false,
                loc,
            };
            if self.eat('-') {
                let (hi, hloc, raw) = self.number(&format!("the end of a range in {what}"))?;
                note_octal(raw, hloc, octal);
                if hi < lo {
                    r = NumRange {
                        lo: hi,
                        hi: lo,
                        reversed: true,
                        loc,
                    };
                } else {
                    r.hi = hi;
                }
            }
            out.push(r);
            if self.eat(',') {
                continue;
            }
            self.skip_blanks();
            if self.at_end() || (stop_colon && self.peek() == Some(':')) {
                return Ok(out);
            }
            let exp = if stop_colon {
                "`,`, `-` or `:`".to_string()
            } else {
                format!("`,`, `-` or {}", self.end)
            };
            return Err(self.unexpected(exp));
        }
    }

    /// Comma-separated numbers without ranges (sl2vl-table).
    pub fn num_list(
        &mut self,
        what: &str,
        octal: &mut Vec<Spanned<String>>,
    ) -> Result<Vec<Spanned<u64>>, ParseError> {
        let mut out = Vec::new();
        loop {
            let (v, loc, raw) = self.number(what)?;
            note_octal(raw, loc, octal);
            out.push(Spanned::new(v, loc));
            if self.eat(',') {
                continue;
            }
            if self.at_end() {
                return Ok(out);
            }
            return Err(self.unexpected(format!("`,` or {}", self.end)));
        }
    }

    /// A single string value. `description` keeps inner blanks (OpenSM's `use:`); names drop
    /// blanks outside quotes, exactly as OpenSM's lexer does.
    pub fn single_string(
        &mut self,
        what: &str,
        description: bool,
    ) -> Result<Spanned<(String, bool)>, ParseError> {
        self.skip_blanks();
        let loc = self.loc();
        if description {
            let s = self.rest().trim_matches(is_blank).replace('"', "");
            self.pos = self.text.len();
            return Ok(Spanned::new((s, false), loc));
        }
        let item = self.string_item(what)?;
        if self.peek() == Some(',') {
            return Err(self.unexpected(format!("end of line: {what} is a single name")));
        }
        Ok(item)
    }

    /// Comma-separated names (group lists, port names, partitions).
    pub fn string_list(&mut self, what: &str) -> Result<Vec<Spanned<(String, bool)>>, ParseError> {
        let mut out = vec![self.string_item(what)?];
        while self.eat(',') {
            out.push(self.string_item(what)?);
        }
        Ok(out)
    }

    /// One name up to `,` or end of line. Returns the name and whether unquoted blanks were
    /// dropped from inside it.
    fn string_item(&mut self, what: &str) -> Result<Spanned<(String, bool)>, ParseError> {
        self.skip_blanks();
        let loc = self.loc();
        let mut s = String::new();
        let mut dropped_blank = false;
        let mut pending_blank = false;
        let mut unquoted = String::new();
        while let Some(c) = self.peek() {
            if c == ',' {
                break;
            }
            if c == '"' {
                let qloc = self.loc();
                self.bump();
                let start = self.pos;
                while self.peek().is_some_and(|c| c != '"') {
                    self.bump();
                }
                if self.peek() != Some('"') {
                    return Err(ParseError::Unexpected {
                        file: self.file.to_string(),
                        loc: qloc,
                        found: "an unterminated quote".to_string(),
                        expected: "a closing `\"` on the same line".to_string(),
                    });
                }
                s.push_str(self.text.get(start..self.pos).unwrap_or(""));
                self.bump();
                if pending_blank {
                    dropped_blank = true;
                    pending_blank = false;
                }
                continue;
            }
            if is_blank(c) {
                if !s.is_empty() {
                    pending_blank = true;
                }
                self.bump();
                continue;
            }
            if pending_blank {
                dropped_blank = true;
                pending_blank = false;
            }
            s.push(c);
            unquoted.push(c);
            self.bump();
        }
        if s.is_empty() {
            return Err(self.unexpected(what.to_string()));
        }
        if let Some(kw) = SECTION_KEYWORDS.iter().find(|k| unquoted.contains(*k)) {
            return Err(ParseError::Unexpected {
                file: self.file.to_string(),
                loc,
                found: format!("keyword `{kw}` inside the name `{s}`"),
                expected: format!(
                    "{what} without OpenSM keywords (its lexer splits the name there and \
                     rejects the file); put the name in double quotes"
                ),
            });
        }
        Ok(Spanned::new((s, dropped_blank), loc))
    }
}

fn note_octal(raw: &str, loc: Loc, octal: &mut Vec<Spanned<String>>) {
    let b = raw.as_bytes();
    if b.len() > 1 && b[0] == b'0' && b[1] != b'x' && b[1] != b'X' {
        octal.push(Spanned::new(raw.to_string(), loc));
    }
}

/// Remove a `#` comment (outside double quotes) and a trailing CR.
pub fn strip_comment(line: &str) -> &str {
    let mut in_quote = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_quote = !in_quote,
            '#' if !in_quote => return line.get(..i).unwrap_or(""),
            _ => {}
        }
    }
    line.strip_suffix('\r').unwrap_or(line)
}

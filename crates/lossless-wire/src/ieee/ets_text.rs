//! ETS in one notation, everywhere a person reads or writes it: `dcbx show`, the lab,
//! `decode` print an [`EtsTable`] as `tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2
//! {6} strict` ([`EtsTable::summary`]), and `lossless dcbx set PORT ets '...'` reads the
//! same text back ([`EtsTable::parse`], also `str::parse`).
//!
//! ```text
//! table   = class *( ";" class ) [ ";" ]
//! class   = "tc" TC "{" [ PRIO *( "," PRIO ) ] "}" tsa [ SHARE "%" ]
//! tsa     = "strict" / "cbs" / "ets" / "vendor" / "tsa" CODE
//! ```
//!
//! TC and PRIO are 0..7, SHARE 0..100, CODE 0..255; spaces may go between any two
//! tokens. Every priority is in exactly one class; a class not written is strict with
//! no priority and a 0 % share; a share not written is 0 %. A strict class without a
//! priority is refused: the summary never writes one (mlx5 reports 100 % on each), so
//! what is accepted is exactly what the summary writes back. The table's own rules (the
//! shares sum to 100, no reserved TSA) are [`EtsTable::validate`]'s, not the notation's.

use std::str::FromStr;

use super::ets::{EtsTable, Tsa};

impl EtsTable {
    /// The table as every command writes one (`dcbx show`, the lab, `decode`): each
    /// traffic class that serves a priority or has a TSA other than strict, with its
    /// priorities, TSA and share: `tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6}
    /// strict`. A share is written when it is not 0 or the TSA is ETS; a TSA without a
    /// name is `tsa N`. A strict class without a priority is left out whatever its
    /// share (mlx5 reports 100 % on each). `(every class empty)` when none is left.
    /// [`EtsTable::parse`] reads it back.
    pub fn summary(&self) -> String {
        let mut out = Vec::new();
        for tc in 0..8u8 {
            let i = usize::from(tc);
            let prios: Vec<String> = (0..8u8)
                .filter(|&p| self.prio_tc[usize::from(p)] == tc)
                .map(|p| p.to_string())
                .collect();
            let (tsa, bw) = (self.tsa[i], self.tc_bw[i]);
            if prios.is_empty() && tsa == Tsa::STRICT {
                continue;
            }
            let name = tsa
                .name()
                .map_or_else(|| format!("tsa {}", tsa.0), str::to_string);
            let mut cell = format!("tc{tc} {{{}}} {name}", prios.join(","));
            if bw != 0 || tsa == Tsa::ETS {
                cell.push_str(&format!(" {bw}%"));
            }
            out.push(cell);
        }
        if out.is_empty() {
            "(every class empty)".into()
        } else {
            out.join("; ")
        }
    }

    /// Reads the notation [`EtsTable::summary`] writes: `tc0 {0,1,2,3,4,5,7} ets 50%;
    /// tc3 {6} ets 50%`. The first problem is returned with where it is (a byte offset
    /// into `text`) and what was found there. The table's own rules are not checked
    /// here: call [`EtsTable::validate`].
    pub fn parse(text: &str) -> Result<EtsTable, EtsTextError> {
        Parser { text, at: 0 }.table()
    }
}

impl FromStr for EtsTable {
    type Err = EtsTextError;

    fn from_str(text: &str) -> Result<EtsTable, EtsTextError> {
        EtsTable::parse(text)
    }
}

/// Why a text is not an ETS table in the one notation, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem} ({})", place(.offset, .found))]
pub struct EtsTextError {
    /// Byte offset into the text where the problem starts (its length: the end).
    pub offset: usize,
    /// What is there: the token (or character) at `offset`, empty at the end.
    pub found: String,
    pub problem: EtsTextProblem,
}

fn place(offset: &usize, found: &str) -> String {
    if found.is_empty() {
        format!("at the end, byte {offset}")
    } else {
        format!("at byte {offset}, {found:?}")
    }
}

/// What is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EtsTextProblem {
    /// A token of the grammar is missing; `expected` names what could come here.
    #[error("expected {expected}")]
    Expected { expected: &'static str },
    #[error("traffic class {0}: the classes are tc0..tc7")]
    TrafficClass(u64),
    #[error("tc{0} is written twice")]
    ClassTwice(u8),
    #[error("priority {0}: the priorities are 0..7")]
    Priority(u64),
    #[error("priority {priority} is already in tc{tc}")]
    PriorityTwice { priority: u8, tc: u8 },
    #[error("share {0}%: a share is 0..100 %")]
    Share(u64),
    #[error("tsa {0}: a TSA code is 0..255")]
    TsaCode(u64),
    #[error(
        "tc{0} is strict and serves no priority: such a class is not written (its share \
         cannot be shown); give it a priority, another TSA, or leave it out"
    )]
    EmptyStrict(u8),
    #[error("{} in no class: each of 0..7 is in one", unassigned(.0))]
    Unassigned(Vec<u8>),
}

/// `priority 6 is`, `priorities 3, 6 are`.
fn unassigned(priorities: &[u8]) -> String {
    let list: Vec<String> = priorities.iter().map(u8::to_string).collect();
    match list.as_slice() {
        [one] => format!("priority {one} is"),
        _ => format!("priorities {} are", list.join(", ")),
    }
}

struct Parser<'a> {
    text: &'a str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    /// The token at the current place, for an error: a word, a number, or one character.
    fn token(&self) -> String {
        let rest = self.rest();
        let Some(first) = rest.chars().next() else {
            return String::new();
        };
        if first.is_ascii_alphanumeric() {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '%')
                .collect()
        } else {
            first.to_string()
        }
    }

    fn error(&self, problem: EtsTextProblem) -> EtsTextError {
        self.error_at(self.at, problem)
    }

    /// The error of what starts at byte `at`.
    fn error_at(&self, at: usize, problem: EtsTextProblem) -> EtsTextError {
        let there = Parser {
            text: self.text,
            at,
        };
        EtsTextError {
            offset: at,
            found: there.token(),
            problem,
        }
    }

    fn expected(&self, expected: &'static str) -> EtsTextError {
        self.error(EtsTextProblem::Expected { expected })
    }

    /// Takes `s` (after spaces) if it is next.
    fn eat(&mut self, s: &str) -> bool {
        self.skip_space();
        if self.rest().starts_with(s) {
            self.at += s.len();
            true
        } else {
            false
        }
    }

    /// A decimal number (after spaces): its value (saturating) and where it starts.
    fn number(&mut self, expected: &'static str) -> Result<(u64, usize), EtsTextError> {
        self.skip_space();
        let digits = self.rest().bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(self.expected(expected));
        }
        let start = self.at;
        let value = self.rest()[..digits].bytes().fold(0u64, |v, d| {
            v.saturating_mul(10).saturating_add(u64::from(d - b'0'))
        });
        self.at += digits;
        Ok((value, start))
    }

    fn table(mut self) -> Result<EtsTable, EtsTextError> {
        let mut table = EtsTable::default();
        let mut written = [false; 8];
        let mut class_of: [Option<u8>; 8] = [None; 8];
        loop {
            self.class(&mut table, &mut written, &mut class_of)?;
            self.skip_space();
            if self.rest().is_empty() {
                break;
            }
            if !self.eat(";") {
                return Err(self.expected("\";\" between two classes, or the end"));
            }
            self.skip_space();
            if self.rest().is_empty() {
                break;
            }
        }
        let missing: Vec<u8> = (0..8u8)
            .filter(|&p| class_of[usize::from(p)].is_none())
            .collect();
        if !missing.is_empty() {
            return Err(self.error(EtsTextProblem::Unassigned(missing)));
        }
        Ok(table)
    }

    fn class(
        &mut self,
        table: &mut EtsTable,
        written: &mut [bool; 8],
        class_of: &mut [Option<u8>; 8],
    ) -> Result<(), EtsTextError> {
        self.skip_space();
        let class_at = self.at;
        if !self.eat("tc") {
            return Err(self.expected("a traffic class, tc0..tc7"));
        }
        let (tc, at) = self.number("the traffic class's number, tc0..tc7")?;
        let tc = match u8::try_from(tc) {
            Ok(tc) if tc < 8 => tc,
            _ => return Err(self.error_at(at, EtsTextProblem::TrafficClass(tc))),
        };
        if std::mem::replace(&mut written[usize::from(tc)], true) {
            return Err(self.error_at(at, EtsTextProblem::ClassTwice(tc)));
        }
        if !self.eat("{") {
            return Err(self.expected("\"{\" and the class's priorities"));
        }
        let mut serves = false;
        if !self.eat("}") {
            loop {
                let (p, at) = self.number("a priority, 0..7")?;
                let p = match u8::try_from(p) {
                    Ok(p) if p < 8 => p,
                    _ => return Err(self.error_at(at, EtsTextProblem::Priority(p))),
                };
                if let Some(other) = class_of[usize::from(p)] {
                    let problem = EtsTextProblem::PriorityTwice {
                        priority: p,
                        tc: other,
                    };
                    return Err(self.error_at(at, problem));
                }
                class_of[usize::from(p)] = Some(tc);
                table.prio_tc[usize::from(p)] = tc;
                serves = true;
                if self.eat("}") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.expected("\",\" and another priority, or \"}\""));
                }
            }
        }
        self.skip_space();
        let word: String = self
            .rest()
            .chars()
            .take_while(char::is_ascii_alphabetic)
            .collect();
        let tsa = match word.as_str() {
            "tsa" => {
                self.at += word.len();
                let (code, at) = self.number("the TSA's code, 0..255")?;
                Tsa(u8::try_from(code)
                    .map_err(|_| self.error_at(at, EtsTextProblem::TsaCode(code)))?)
            }
            w => match Tsa::from_name(w) {
                Some(t) => {
                    self.at += w.len();
                    t
                }
                None => {
                    return Err(self.expected("a TSA: strict, cbs, ets, vendor or tsa N"));
                }
            },
        };
        table.tsa[usize::from(tc)] = tsa;
        self.skip_space();
        if self.rest().starts_with(|c: char| c.is_ascii_digit()) {
            let (share, at) = self.number("a share")?;
            let share = match u8::try_from(share) {
                Ok(s) if s <= 100 => s,
                _ => return Err(self.error_at(at, EtsTextProblem::Share(share))),
            };
            if !self.eat("%") {
                return Err(self.expected("\"%\" after the share"));
            }
            table.tc_bw[usize::from(tc)] = share;
        } else if tsa == Tsa::ETS {
            // The summary always writes an ETS class's share: none read is a mistake,
            // not 0 %.
            return Err(self.expected("the ETS class's share, N%"));
        }
        if !serves && tsa == Tsa::STRICT {
            return Err(self.error_at(class_at, EtsTextProblem::EmptyStrict(tc)));
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn err(text: &str) -> (usize, String, String) {
        let e = EtsTable::parse(text).unwrap_err();
        (e.offset, e.found.clone(), e.problem.to_string())
    }

    #[test]
    fn the_summary_reads_back() {
        let text = "tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6} strict";
        let t = EtsTable::parse(text).unwrap();
        assert_eq!(t.prio_tc, [0, 0, 0, 1, 0, 0, 2, 0]);
        assert_eq!(t.tc_bw, [50, 50, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&t.tsa[..3], &[Tsa::ETS, Tsa::ETS, Tsa::STRICT]);
        assert_eq!(t.summary(), text);
        let spaced: EtsTable = " tc0{0, 1,2,4 ,5,7}ets 50 % ;tc1 {3} ets 50%;tc2 {6} strict ; "
            .parse()
            .unwrap();
        assert_eq!(spaced, t);
        let odd = EtsTable::parse("tc4 {} tsa 9; tc0 {0,1,2,3,4,5,6,7} vendor 100%").unwrap();
        assert_eq!(odd.tsa[4], Tsa(9));
        assert_eq!(
            odd.summary(),
            "tc0 {0,1,2,3,4,5,6,7} vendor 100%; tc4 {} tsa 9"
        );
    }

    #[test]
    fn each_error_says_what_where_and_why() {
        let cases: &[(&str, usize, &str, &str)] = &[
            ("", 0, "", "expected a traffic class, tc0..tc7"),
            ("tc8 {0} ets", 2, "8", "traffic class 8: the classes are tc0..tc7"),
            ("tc0 0,1", 4, "0", "expected \"{\" and the class's priorities"),
            ("tc0 {0,9} ets", 7, "9", "priority 9: the priorities are 0..7"),
            ("tc0 {0 1} ets", 7, "1", "expected \",\" and another priority, or \"}\""),
            ("tc0 {0,1,2,3,4,5,6,7} fast", 22, "fast", "expected a TSA: strict, cbs, ets, vendor or tsa N"),
            ("tc0 {0,1,2,3,4,5,6,7} ets 101%", 26, "101%", "share 101%: a share is 0..100 %"),
            ("tc0 {0,1,2,3,4,5,6,7} ets 50", 28, "", "expected \"%\" after the share"),
            ("tc0 {0,1,2,3,4,5,6,7} tsa 256", 26, "256", "tsa 256: a TSA code is 0..255"),
            ("tc0 {0,1,2,3} ets 50%; tc0 {4,5,6,7} ets 50%", 25, "0", "tc0 is written twice"),
            ("tc0 {0,1,2,3} ets 50%; tc1 {3,4,5,6,7} ets 50%", 28, "3", "priority 3 is already in tc0"),
            ("tc0 {0,1,2,3,4,5,6,7} ets 100% tc1", 31, "tc1", "expected \";\" between two classes, or the end"),
            ("tc0 {0,1,2,3,4,5,6,7} ets 100%; tc3 {} strict", 32, "tc3", "tc3 is strict and serves no priority: such a class is not written (its share cannot be shown); give it a priority, another TSA, or leave it out"),
            ("tc0 {0,1,2,4,5,7} ets 100%", 26, "", "priorities 3, 6 are in no class: each of 0..7 is in one"),
            ("tc0 {0,1,2,3,4,5,7} ets 100%", 28, "", "priority 6 is in no class: each of 0..7 is in one"),
        ];
        for &(text, offset, found, problem) in cases {
            assert_eq!(
                err(text),
                (offset, found.to_string(), problem.to_string()),
                "{text:?}"
            );
        }
        assert_eq!(
            EtsTable::parse("tc0 {0,9} ets").unwrap_err().to_string(),
            "priority 9: the priorities are 0..7 (at byte 7, \"9\")"
        );
        assert_eq!(
            EtsTable::parse("tc0 {0} ets 50").unwrap_err().to_string(),
            "expected \"%\" after the share (at the end, byte 14)"
        );
    }

    #[test]
    fn a_huge_number_is_an_error_not_an_overflow() {
        let e = EtsTable::parse("tc99999999999999999999999 {0} ets").unwrap_err();
        assert_eq!(e.problem, EtsTextProblem::TrafficClass(u64::MAX));
        assert_eq!(e.offset, 2);
    }
}

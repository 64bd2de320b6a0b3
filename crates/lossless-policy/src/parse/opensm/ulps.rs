//! `qos-ulps` lines, shared by both forms (the XML form's `<ulp>` holds the same line).

use super::state::State;
use super::Parser;
use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::values::{mask_pkeys, note_octal};
use crate::parse::ParseError;

impl Parser<'_> {
    pub(super) fn ulp_line(&mut self, cur: &mut Cursor<'_>) -> Result<(), ParseError> {
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

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
    let text = cur.text.trim().to_string();
    let name = first.to_ascii_lowercase();
    if name == "default" {
        cur.expect(':', "`:` after `default`")?;
        let sl = ulp_sl(cur, octal)?;
        cur.expect_end()?;
        return Ok(Ulp::Default(sl));
    }
    let ulp = Spanned::new(first, loc);
    let (kind, list_kw) = ulp_kind(cur, &name, ulp)?;
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
    let port_base = tcp_port_base(kind);
    if port_base.is_some() {
        check_tcp_ports(cur.file, &list)?;
    }
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
    fill_criteria(&mut rule, list, port_base.unwrap_or(0));
    Ok(Ulp::Rule(rule))
}

/// The ULP and its criterion: `<ulp> :` (the ULP's defaults) or `<ulp>, <criterion> <list> :`.
/// The keyword of the list that follows, if any, comes back with the kind.
fn ulp_kind<'c>(
    cur: &mut Cursor<'c>,
    name: &str,
    ulp: Spanned<&str>,
) -> Result<(UlpKind, Option<&'c str>), ParseError> {
    if cur.eat(':') {
        return plain_ulp_kind(cur, name, &ulp).map(|k| (k, None));
    }
    if cur.eat(',') {
        let Some(c) = cur.word() else {
            return Err(cur.unexpected("a ULP criterion"));
        };
        let kw = c.value;
        return criterion_ulp_kind(cur.file, name, &ulp, &c).map(|k| (k, Some(kw)));
    }
    match name {
        "sdp" | "rds" | "iser" | "ipoib" => {
            Err(cur.unexpected(format!("`:` or `,` after `{}`", ulp.value)))
        }
        "srp" | "any" => Err(cur.unexpected(format!("`,` after `{}`", ulp.value))),
        _ => Err(bad_ulp(cur.file, &ulp)),
    }
}

/// `<ulp> :` — the ULPs that have defaults without a criterion.
fn plain_ulp_kind(
    cur: &Cursor<'_>,
    name: &str,
    ulp: &Spanned<&str>,
) -> Result<UlpKind, ParseError> {
    match name {
        "sdp" => Ok(UlpKind::Sdp),
        "rds" => Ok(UlpKind::Rds),
        "iser" => Ok(UlpKind::Iser),
        "ipoib" => Ok(UlpKind::Ipoib),
        "srp" | "any" => Err(cur.unexpected(format!("`,` and a criterion after `{}`", ulp.value))),
        _ => Err(bad_ulp(cur.file, ulp)),
    }
}

/// `<ulp>, <criterion>` — each ULP takes its own criteria.
fn criterion_ulp_kind(
    file: &str,
    name: &str,
    ulp: &Spanned<&str>,
    c: &Spanned<&str>,
) -> Result<UlpKind, ParseError> {
    Ok(match (name, c.value) {
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
            let exp = match name {
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
        _ => return Err(bad_ulp(file, ulp)),
    })
}

fn bad_ulp(file: &str, ulp: &Spanned<&str>) -> ParseError {
    ParseError::Unexpected {
        file: file.to_string(),
        loc: ulp.loc,
        found: format!("`{}`", ulp.value),
        expected: State::Ulps.expected().to_string(),
    }
}

/// Service ID base of the ULPs whose list holds TCP port numbers.
fn tcp_port_base(kind: UlpKind) -> Option<u64> {
    match kind {
        UlpKind::SdpPort => Some(0x10000),
        UlpKind::RdsPort | UlpKind::IserPort => Some(0x0106_0000),
        _ => None,
    }
}

fn check_tcp_ports(file: &str, list: &[NumRange]) -> Result<(), ParseError> {
    match list.iter().find(|r| r.hi > 0xFFFF) {
        Some(bad) => Err(ParseError::OutOfRange {
            file: file.to_string(),
            loc: bad.loc,
            found: format!("{:#x}", bad.hi),
            expected: "a TCP port number from 0 to 0xFFFF".to_string(),
        }),
        None => Ok(()),
    }
}

/// What the rule matches: the ULP's well-known service IDs or P_Key, or the list as its
/// criterion says (TCP ports offset by `port_base` into service IDs).
fn fill_criteria(rule: &mut UlpRule, list: Vec<NumRange>, port_base: u64) {
    let loc = rule.loc;
    let one = |v: u64| NumRange {
        lo: v,
        hi: v,
        reversed: false,
        loc,
    };
    match rule.kind {
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
            rule.service_id = list
                .iter()
                .map(|r| NumRange {
                    lo: r.lo + port_base,
                    hi: r.hi + port_base,
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

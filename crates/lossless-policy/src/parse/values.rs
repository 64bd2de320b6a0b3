//! Values both policy forms read the same way: level limits, yes/no, P_Key masking, octal
//! notes, VL:weight pairs and `<node description>/P<port>` names.

use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::ParseError;

/// Allowed values of a level's numbers, and how to say so.
pub(crate) fn level_limits(kw: &str) -> (u64, u64, &'static str) {
    match kw {
        "sl" => (
            0,
            15,
            "an SL from 0 to 15 (OpenSM accepts more, then drops every path of this level)",
        ),
        "mtu-limit" => (1, 5, "an MTU enum from 1 (256) to 5 (4096)"),
        "rate-limit" => (2, 24, "a rate enum from 2 (2.5 Gb/s) to 24 (1200 Gb/s)"),
        _ => (
            0,
            63,
            "a packet life from 0 to 63 (6 bits in the PathRecord)",
        ),
    }
}

/// `yes`, `no`, `true` or `false` (any case).
pub(crate) fn yes_no(cur: &mut Cursor<'_>, what: &str) -> Result<bool, ParseError> {
    let expected = format!("`yes` or `no` after {what}");
    let Some(w) = cur.word() else {
        return Err(cur.unexpected(expected));
    };
    match w.value.to_ascii_lowercase().as_str() {
        "yes" | "true" => Ok(true),
        "no" | "false" => Ok(false),
        _ => Err(ParseError::Unexpected {
            file: cur.file.to_string(),
            loc: w.loc,
            found: format!("`{}`", w.value),
            expected,
        }),
    }
}

/// OpenSM keeps only the low 15 bits of P_Keys in policy lists (membership bit dropped).
pub fn mask_pkeys(list: Vec<NumRange>) -> Vec<NumRange> {
    list.into_iter()
        .map(|r| {
            let (a, b) = (r.lo & 0x7fff, r.hi & 0x7fff);
            NumRange {
                lo: a.min(b),
                hi: a.max(b),
                ..r
            }
        })
        .collect()
}

/// OpenSM's `__sort_reduce_rangearr`: ranges sorted by their start, overlapping and
/// adjacent ones merged. (The order OpenSM tries a level's P_Keys in.)
pub fn sort_reduce(mut list: Vec<NumRange>) -> Vec<NumRange> {
    list.sort_by_key(|r| (r.lo, r.hi));
    let mut out: Vec<NumRange> = Vec::with_capacity(list.len());
    for r in list {
        match out.last_mut() {
            Some(last) if r.lo <= last.hi || r.lo.checked_sub(1) == Some(last.hi) => {
                last.hi = last.hi.max(r.hi);
            }
            _ => out.push(r),
        }
    }
    out
}

/// P_Key ranges as OpenSM keeps them for levels, rules and port groups: the membership bit
/// stripped from each end (ends swapped if that reverses them), sorted, merged.
pub fn pkey_ranges(list: Vec<NumRange>) -> Vec<NumRange> {
    sort_reduce(mask_pkeys(list))
}

pub(crate) fn note_octal(octal: &mut Vec<Spanned<String>>, raw: &str, loc: Loc) {
    let b = raw.as_bytes();
    if b.len() > 1 && b[0] == b'0' && b[1] != b'x' && b[1] != b'X' {
        octal.push(Spanned::new(raw.to_string(), loc));
    }
}

pub(crate) fn vl_pairs(
    cur: &mut Cursor<'_>,
    octal: &mut Vec<Spanned<String>>,
) -> Result<Vec<VlWeight>, ParseError> {
    let mut out = Vec::new();
    loop {
        let (vl, loc, raw) = cur.number("a VL:weight pair")?;
        note_octal(octal, raw, loc);
        cur.expect(':', "`:` between VL and weight")?;
        let (weight, wloc, raw) = cur.number("a weight (0-255)")?;
        note_octal(octal, raw, wloc);
        out.push(VlWeight { vl, weight, loc });
        if cur.eat(',') {
            continue;
        }
        return cur.expect_end().map(|_| out);
    }
}

/// Split `<node description>/P<port>` on the last slash, as OpenSM does.
pub(crate) fn port_name(
    file: &str,
    s: &str,
    had_blank: bool,
    loc: Loc,
) -> Result<PortName, ParseError> {
    let bad = |expected: &str| ParseError::Unexpected {
        file: file.to_string(),
        loc,
        found: format!("`{s}`"),
        expected: expected.to_string(),
    };
    let Some(idx) = s.rfind('/') else {
        return Err(bad(
            "a port name `<node description>/P<port>` (no `/` found)",
        ));
    };
    let (node, port) = (&s[..idx], &s[idx + 1..]);
    let Some(num) = port.strip_prefix(['P', 'p']) else {
        return Err(bad("`/P<port>` at the end of the port name"));
    };
    let parsed = if let Some(h) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else {
        num.parse::<u64>().ok()
    };
    match parsed {
        Some(p) if p > 0 => Ok(PortName {
            node_desc: node.to_string(),
            port: p,
            had_blank,
        }),
        _ => Err(bad("a port number from 1 after `/P`")),
    }
}

/// The 16 VLs of an SL2VL table, one per SL, each 0-15. `loc` is where a wrong count is
/// reported.
pub(crate) fn sl2vl_table(
    file: &str,
    vals: &[Spanned<u64>],
    loc: Loc,
) -> Result<[u8; 16], ParseError> {
    if vals.len() != 16 {
        return Err(ParseError::OutOfRange {
            file: file.to_string(),
            loc,
            found: format!("{} values", vals.len()),
            expected: "exactly 16 VLs, one per SL 0-15".to_string(),
        });
    }
    let mut table = [0u8; 16];
    for (slot, v) in table.iter_mut().zip(vals) {
        *slot = u8::try_from(v.value)
            .ok()
            .filter(|v| *v < 16)
            .ok_or_else(|| ParseError::OutOfRange {
                file: file.to_string(),
                loc: v.loc,
                found: v.value.to_string(),
                expected: "a VL from 0 to 15".to_string(),
            })?;
    }
    Ok(table)
}

/// A `from`/`to` port list, every port below 128; `place` names the list in the error
/// (`` `from` `` or `` `<from>` ``).
pub(crate) fn port_list(
    file: &str,
    list: Vec<NumRange>,
    place: &str,
) -> Result<PortSet, ParseError> {
    if let Some(bad) = list.iter().find(|r| r.hi >= 128) {
        return Err(ParseError::OutOfRange {
            file: file.to_string(),
            loc: bad.loc,
            found: bad.hi.to_string(),
            expected: format!("a port number below 128 in {place}"),
        });
    }
    Ok(PortSet::List(list))
}

/// A second `from`/`to` in one scope adds to the first; `*` in either means every port.
pub(crate) fn merge_sets(a: PortSet, b: PortSet) -> PortSet {
    match (a, b) {
        (PortSet::List(mut a), PortSet::List(b)) => {
            a.extend(b);
            PortSet::List(a)
        }
        (PortSet::All, _) | (_, PortSet::All) => PortSet::All,
        (_, b) => b,
    }
}

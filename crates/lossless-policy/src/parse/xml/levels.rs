//! `<qos-level>` items.

use super::build::{Builder, Once, Value};
use super::tree::{allowed, norm, Elem, Node};
use crate::ast::*;
use crate::parse::values::{level_limits, yes_no};
use crate::parse::ParseError;

/// A level's name and SL, kept apart until the level ends (both are required).
#[derive(Default)]
struct Required {
    name: Option<Spanned<String>>,
    sl: Option<Spanned<u64>>,
}

impl Builder<'_, '_> {
    pub(super) fn level(&mut self, e: &Elem) {
        let mut l = QosLevel::empty(e.loc);
        let mut req = Required::default();
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
            ok &= self.level_child(e, c, &n, &mut l, &mut req);
        }
        match (req.name, req.sl) {
            (Some(n), Some(s)) => {
                l.name = n;
                l.sl = s;
                if ok {
                    self.policy.levels.push(l);
                }
            }
            (None, _) => self.missing(e, "`<name>` (or the OFA QoS RFC's `<sn>`)"),
            (_, None) if ok => self.missing(e, "`<sl>`"),
            _ => {}
        }
    }

    /// One child `c` (normalised name `n`) of the level `e`; false when it was wrong.
    fn level_child(
        &mut self,
        e: &Elem,
        c: &Elem,
        n: &str,
        l: &mut QosLevel,
        req: &mut Required,
    ) -> bool {
        match n {
            "name" | "sn" => req.name = self.name(c, "a QoS level name"),
            "use" => l.use_ = self.value(c, "a description").map(|v| v.text.into()),
            "sl" | "mtu-limit" | "rate-limit" | "packet-life" => {
                let Some(v) = self.level_number(c, n) else {
                    return false;
                };
                match n {
                    "sl" => req.sl = Some(v),
                    "mtu-limit" => l.mtu_limit = Some(v),
                    "rate-limit" => l.rate_limit = Some(v),
                    _ => l.packet_life = Some(v),
                }
            }
            "path-bits" => match self.ranges(c, "a path-bits value or range") {
                Some(r) => l.path_bits.extend(r),
                None => return false,
            },
            "pkey" => match self.ranges(c, "a P_Key or P_Key range") {
                Some(r) => l.pkeys.extend(r),
                None => return false,
            },
            // `<lossless/>` or `<lossless>yes</lossless>`.
            "lossless" if is_blank(c) => l.lossless = true,
            "lossless" => {
                // A `<lossless>` that holds elements is reported by `value` and leaves the
                // level as it is; a wrong word makes the level wrong.
                if let Some(v) = self.value(c, "`yes` or `no`") {
                    match self.yes_no_value(&v) {
                        Some(b) => l.lossless = b,
                        None => return false,
                    }
                }
            }
            _ => self.not_allowed(e, c),
        }
        true
    }

    /// `<sl>`, `<mtu-limit>`, `<rate-limit>`, `<packet-life>`: a number within its limits.
    fn level_number(&mut self, c: &Elem, n: &str) -> Option<Spanned<u64>> {
        let (v, loc, raw) = self.number(c, &format!("a number for `{n}`"))?;
        let (lo, hi, meaning) = level_limits(n);
        if v < lo || v > hi {
            self.err(ParseError::OutOfRange {
                file: self.file.to_string(),
                loc,
                found: raw,
                expected: meaning.to_string(),
            });
            return None;
        }
        Some(Spanned::new(v, loc))
    }

    /// `yes` or `no` (any case, `true`/`false` too) and nothing after it.
    fn yes_no_value(&mut self, v: &Value<'_>) -> Option<bool> {
        let mut cur = self.cursor(v);
        let r = yes_no(&mut cur, "`<lossless>`").and_then(|b| {
            cur.expect_end()?;
            Ok(b)
        });
        self.ok(r)
    }
}

/// An element with nothing but blanks in it (`<lossless/>`).
fn is_blank(c: &Elem) -> bool {
    c.children.iter().all(|x| match x {
        Node::Text { text, .. } => text.trim().is_empty(),
        Node::Elem(_) => false,
    })
}

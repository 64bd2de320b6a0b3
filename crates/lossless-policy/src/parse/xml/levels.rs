//! `<qos-level>` items.

use super::build::{Builder, Once};
use super::tree::{allowed, Node};
use super::tree::{norm, Elem};
use crate::ast::*;
use crate::parse::values::yes_no;
use crate::parse::ParseError;

impl Builder<'_, '_> {
    pub(super) fn level(&mut self, e: &Elem) {
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
}

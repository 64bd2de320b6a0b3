//! `qos-level` items.

use super::state::State;
use super::Parser;
use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::values::{level_limits, note_octal, yes_no};
use crate::parse::ParseError;

impl Parser<'_> {
    pub(super) fn level_attr(
        &mut self,
        cur: &mut Cursor<'_>,
        kw: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        let item = "qos-level";
        match kw {
            "name" => {
                let name = self.single(cur, "name", item, loc, "a QoS level name", false)?;
                self.level_name = Some(name);
            }
            "use" => {
                let s = self.single(cur, "use", item, loc, "a description", true)?;
                if let Some(l) = self.level.as_mut() {
                    l.use_ = Some(s.value);
                }
            }
            "sl" | "mtu-limit" | "rate-limit" | "packet-life" => self.level_number(cur, kw, loc)?,
            // Ends its own line: the extension is noted only once the value is whole.
            "lossless" => return self.level_lossless(cur, loc),
            "path-bits" | "pkey" => self.level_ranges(cur, kw)?,
            _ => return Err(self.unknown_attr(State::Level, kw, loc)),
        }
        cur.expect_end()
    }

    /// `sl`, `mtu-limit`, `rate-limit`, `packet-life`: one number each, within its limits.
    fn level_number(&mut self, cur: &mut Cursor<'_>, kw: &str, loc: Loc) -> Result<(), ParseError> {
        let key: &'static str = match kw {
            "sl" => "sl",
            "mtu-limit" => "mtu-limit",
            "rate-limit" => "rate-limit",
            _ => "packet-life",
        };
        self.once(cur, key, "qos-level", loc)?;
        let (n, nloc, raw) = cur.number(&format!("a number for `{kw}`"))?;
        note_octal(&mut self.policy.octal_numbers, raw, nloc);
        let (lo, hi, meaning) = level_limits(kw);
        if n < lo || n > hi {
            return Err(ParseError::OutOfRange {
                file: self.file.to_string(),
                loc: nloc,
                found: raw.to_string(),
                expected: meaning.to_string(),
            });
        }
        let v = Spanned::new(n, nloc);
        if kw == "sl" {
            self.level_sl = Some(v);
        } else if let Some(l) = self.level.as_mut() {
            match kw {
                "mtu-limit" => l.mtu_limit = Some(v),
                "rate-limit" => l.rate_limit = Some(v),
                _ => l.packet_life = Some(v),
            }
        }
        Ok(())
    }

    /// `lossless: yes|no`, this tool's extension (noted, so `check` can warn that OpenSM
    /// rejects it).
    fn level_lossless(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        self.once(cur, "lossless", "qos-level", loc)?;
        let v = yes_no(cur, "`lossless`")?;
        cur.expect_end()?;
        self.policy
            .extensions
            .push(Spanned::new("lossless:".to_string(), loc));
        if let Some(l) = self.level.as_mut() {
            l.lossless = v;
        }
        Ok(())
    }

    /// `path-bits` and `pkey`: lists of values and ranges, added to what the level has.
    fn level_ranges(&mut self, cur: &mut Cursor<'_>, kw: &str) -> Result<(), ParseError> {
        self.colon(cur, kw)?;
        let what = if kw == "path-bits" {
            "a path-bits value or range"
        } else {
            "a P_Key or P_Key range"
        };
        let r = cur.ranges(what, false, &mut self.policy.octal_numbers)?;
        if let Some(l) = self.level.as_mut() {
            if kw == "path-bits" {
                l.path_bits.extend(r);
            } else {
                l.pkeys.extend(r);
            }
        }
        Ok(())
    }

    pub(super) fn end_level(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        cur.expect_end()?;
        let (_, opened) = self.state();
        let Some(mut l) = self.level.take() else {
            return Err(self.unknown_attr(State::Level, "end-qos-level", loc));
        };
        let Some(sl) = self.level_sl.take() else {
            return Err(self.missing("qos-level", opened, loc, "end-qos-level", "`sl`"));
        };
        let Some(name) = self.level_name.take() else {
            return Err(self.missing("qos-level", opened, loc, "end-qos-level", "`name`"));
        };
        l.sl = sl;
        l.name = name;
        self.policy.levels.push(l);
        self.pop();
        Ok(())
    }
}

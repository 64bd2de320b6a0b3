//! `qos-match-rule` items.

use super::state::State;
use super::Parser;
use crate::ast::*;
use crate::lexer::Cursor;
use crate::parse::ParseError;

impl Parser<'_> {
    pub(super) fn rule_attr(
        &mut self,
        cur: &mut Cursor<'_>,
        kw: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        let item = "qos-match-rule";
        match kw {
            "use" => {
                let s = self.single(cur, "use", item, loc, "a description", true)?;
                if let Some(r) = self.rule.as_mut() {
                    r.use_ = Some(s.value);
                }
            }
            "qos-level-name" => {
                let name =
                    self.single(cur, "qos-level-name", item, loc, "a QoS level name", false)?;
                self.rule_level = Some(name);
            }
            "source" | "destination" => {
                self.colon(cur, kw)?;
                let names = self.names(cur, "a port group name")?;
                if let Some(r) = self.rule.as_mut() {
                    if kw == "source" {
                        r.source.extend(names);
                    } else {
                        r.destination.extend(names);
                    }
                }
            }
            "qos-class" | "service-id" | "pkey" => {
                self.colon(cur, kw)?;
                let what = match kw {
                    "qos-class" => "a QoS class or range",
                    "service-id" => "a service ID or range",
                    _ => "a P_Key or P_Key range",
                };
                let v = cur.ranges(what, false, &mut self.policy.octal_numbers)?;
                if let Some(r) = self.rule.as_mut() {
                    match kw {
                        "qos-class" => r.qos_class.extend(v),
                        "service-id" => r.service_id.extend(v),
                        _ => r.pkey.extend(v),
                    }
                }
            }
            _ => return Err(self.unknown_attr(State::Rule, kw, loc)),
        }
        cur.expect_end()
    }

    pub(super) fn end_rule(&mut self, cur: &mut Cursor<'_>, loc: Loc) -> Result<(), ParseError> {
        cur.expect_end()?;
        let (_, opened) = self.state();
        let Some(mut r) = self.rule.take() else {
            return Err(self.unknown_attr(State::Rule, "end-qos-match-rule", loc));
        };
        let Some(level) = self.rule_level.take() else {
            return Err(self.missing(
                "qos-match-rule",
                opened,
                loc,
                "end-qos-match-rule",
                "`qos-level-name`",
            ));
        };
        r.level = level;
        self.policy.rules.push(r);
        self.pop();
        Ok(())
    }
}

//! `<qos-match-rule>` and `<ulp>` items.

use super::build::{Builder, Once};
use super::tree::{norm, Elem};
use crate::ast::*;
use crate::parse::opensm::{parse_ulp, Ulp};

impl Builder<'_, '_> {
    pub(super) fn rule(&mut self, e: &Elem) {
        let mut r = MatchRule::empty(e.loc);
        let mut level = None;
        let mut ok = true;
        let mut seen = Once::default();
        for c in self.elems(e) {
            let n = norm(&c.name);
            if matches!(n.as_str(), "sn" | "use" | "qos-level-name" | "match-level")
                && !self.once(&mut seen, e, c)
            {
                continue;
            }
            match n.as_str() {
                "sn" => {
                    // Rules apply in file order; a number that says otherwise is a mistake.
                    if let Some((v, loc, _)) = self.number(c, "the rule's sequence number") {
                        if let Some((prev, ploc)) = self.last_rule_sn {
                            if v <= prev {
                                self.unexpected(
                                    loc,
                                    format!("`<sn>` {v} after `<sn>` {prev} at {ploc}"),
                                    format!(
                                        "a number above {prev}: rules apply in file order, \
                                         first match wins"
                                    ),
                                );
                            }
                        }
                        self.last_rule_sn = Some((v, loc));
                    }
                }
                "use" => r.use_ = self.value(c, "a description").map(|v| v.text.into()),
                "qos-level-name" | "match-level" => level = self.name(c, "a QoS level name"),
                "source" => r.source.extend(self.names(c, "a port group name")),
                "destination" => r.destination.extend(self.names(c, "a port group name")),
                "qos-class" | "tclass" | "service-id" | "service" | "pkey" => {
                    let what = match n.as_str() {
                        "qos-class" | "tclass" => "a QoS class or range",
                        "pkey" => "a P_Key or P_Key range",
                        _ => "a service ID or range",
                    };
                    match self.ranges(c, what) {
                        Some(v) => match n.as_str() {
                            "qos-class" | "tclass" => r.qos_class.extend(v),
                            "pkey" => r.pkey.extend(v),
                            _ => r.service_id.extend(v),
                        },
                        None => ok = false,
                    }
                }
                _ => self.not_allowed(e, c),
            }
        }
        match level {
            Some(l) => {
                r.level = l;
                if ok {
                    self.policy.rules.push(r);
                }
            }
            None => self.missing(
                e,
                "`<qos-level-name>` (or the OFA QoS RFC's `<match-level>`)",
            ),
        }
    }

    pub(super) fn ulp(&mut self, e: &Elem) {
        let Some(v) = self.value(e, "a qos-ulps line such as `sdp, port-num 10000 : 2`") else {
            return;
        };
        let mut cur = self.cursor(&v);
        let Some(w) = cur.word() else {
            let err = cur.unexpected(
                "a ULP rule (default, sdp, rds, srp, iser, ipoib, any) as OpenSM writes it",
            );
            self.err(err);
            return;
        };
        let r = parse_ulp(&mut cur, w.value, w.loc, &mut self.policy.octal_numbers);
        match self.ok(r) {
            Some(Ulp::Default(sl)) => self.policy.ulp_default = Some(sl),
            Some(Ulp::Rule(u)) => self.policy.ulps.push(u),
            None => {}
        }
    }
}

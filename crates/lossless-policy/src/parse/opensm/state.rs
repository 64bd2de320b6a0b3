//! Where the OpenSM parser is: the open item, what may come next, and keywords seen once.

use crate::ast::Loc;
use crate::parse::ParseError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Top,
    PortGroups,
    PortGroup,
    QosSetup,
    VlarbTables,
    VlarbScope,
    Sl2vlTables,
    Sl2vlScope,
    Levels,
    Level,
    Rules,
    Rule,
    Ulps,
}

impl State {
    pub(super) fn expected(self) -> &'static str {
        match self {
            State::Top => {
                "a section: port-groups, qos-setup, qos-levels, qos-match-rules or qos-ulps"
            }
            State::PortGroups => "port-group or end-port-groups",
            State::PortGroup => {
                "name, use, port-guid, port-name, pkey, partition, node-type or end-port-group"
            }
            State::QosSetup => "vlarb-tables, sl2vl-tables or end-qos-setup",
            State::VlarbTables => "vlarb-scope or end-vlarb-tables",
            State::VlarbScope => {
                "group, across, vlarb-high, vlarb-low, vl-high-limit or end-vlarb-scope"
            }
            State::Sl2vlTables => "sl2vl-scope or end-sl2vl-tables",
            State::Sl2vlScope => {
                "group, across, across-from, across-to, from, to, sl2vl-table or end-sl2vl-scope"
            }
            State::Levels => "qos-level or end-qos-levels",
            State::Level => {
                "name, use, sl, mtu-limit, rate-limit, packet-life, path-bits, pkey, lossless or \
                 end-qos-level"
            }
            State::Rules => "qos-match-rule or end-qos-match-rules",
            State::Rule => {
                "use, qos-class, source, destination, service-id, pkey, qos-level-name or \
                 end-qos-match-rule"
            }
            State::Ulps => "a ULP rule (default, sdp, rds, srp, iser, ipoib, any) or end-qos-ulps",
        }
    }

    pub(super) fn closer(self) -> &'static str {
        match self {
            State::Top => "",
            State::PortGroups => "end-port-groups",
            State::PortGroup => "end-port-group",
            State::QosSetup => "end-qos-setup",
            State::VlarbTables => "end-vlarb-tables",
            State::VlarbScope => "end-vlarb-scope",
            State::Sl2vlTables => "end-sl2vl-tables",
            State::Sl2vlScope => "end-sl2vl-scope",
            State::Levels => "end-qos-levels",
            State::Level => "end-qos-level",
            State::Rules => "end-qos-match-rules",
            State::Rule => "end-qos-match-rule",
            State::Ulps => "end-qos-ulps",
        }
    }

    pub(super) fn opener(self) -> &'static str {
        self.closer().trim_start_matches("end-")
    }
}

/// Attribute keyword seen once per item, remembered to report duplicates.
#[derive(Default)]
pub(super) struct Seen {
    keys: Vec<(&'static str, Loc)>,
}

impl Seen {
    pub(super) fn once(
        &mut self,
        file: &str,
        key: &'static str,
        item: &str,
        loc: Loc,
    ) -> Result<(), ParseError> {
        if let Some((_, first)) = self.keys.iter().find(|(k, _)| *k == key) {
            return Err(ParseError::Duplicate {
                file: file.to_string(),
                loc,
                found: key.to_string(),
                item: item.to_string(),
                first: *first,
                expected: format!("one `{key}` per {item}"),
            });
        }
        self.keys.push((key, loc));
        Ok(())
    }
}

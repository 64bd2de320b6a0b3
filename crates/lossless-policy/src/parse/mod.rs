//! Policy parsers: OpenSM's `qos-policy.conf` and the OFA QoS RFC's XML form, `<qos-policy>`.

pub mod opensm;
pub(crate) mod values;
pub mod xml;

use crate::ast::{Loc, Policy};
use serde::Serialize;

/// Why a policy file could not be parsed. Every variant names the file, the place, the
/// offending token and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ParseError {
    #[error("{file}:{loc}: unexpected {found}, expected {expected}")]
    Unexpected {
        file: String,
        loc: Loc,
        found: String,
        expected: String,
    },
    #[error("{file}:{loc}: `{found}` is out of range, expected {expected}")]
    OutOfRange {
        file: String,
        loc: Loc,
        found: String,
        expected: String,
    },
    #[error(
        "{file}:{loc}: second `{found}` in this {item} (first at {first}), expected {expected}"
    )]
    Duplicate {
        file: String,
        loc: Loc,
        found: String,
        item: String,
        first: Loc,
        expected: String,
    },
    #[error("{file}:{loc}: {item} opened at {opened} ends without {expected}; found `{found}`")]
    Missing {
        file: String,
        loc: Loc,
        found: String,
        item: String,
        opened: Loc,
        expected: String,
    },
    #[error("{file}:{loc}: found {found} while `{item}` opened at {opened} is still open, expected {expected}")]
    Unclosed {
        file: String,
        loc: Loc,
        found: String,
        item: String,
        opened: Loc,
        expected: String,
    },
}

impl ParseError {
    pub fn loc(&self) -> Loc {
        match self {
            ParseError::Unexpected { loc, .. }
            | ParseError::OutOfRange { loc, .. }
            | ParseError::Duplicate { loc, .. }
            | ParseError::Missing { loc, .. }
            | ParseError::Unclosed { loc, .. } => *loc,
        }
    }
}

/// Which form a policy file is written in: the XML-like form when its first meaningful
/// token is `<` (blank lines and `#` comment lines skipped), else OpenSM's.
pub fn is_xml(src: &str) -> bool {
    src.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.starts_with('<'))
}

/// Parse either form; the first error.
pub fn parse_policy(file: &str, src: &str) -> Result<Policy, ParseError> {
    if is_xml(src) {
        xml::parse(file, src)
    } else {
        opensm::parse(file, src)
    }
}

/// Parse either form; every error the parser can find (the XML form recovers and goes on,
/// OpenSM's form stops at the first, as OpenSM does).
pub fn parse_policy_all(file: &str, src: &str) -> Result<Policy, Vec<ParseError>> {
    if is_xml(src) {
        xml::parse_all(file, src)
    } else {
        opensm::parse(file, src).map_err(|e| vec![e])
    }
}

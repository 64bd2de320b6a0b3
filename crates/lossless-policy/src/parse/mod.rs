//! Policy parsers: OpenSM's `qos-policy.conf` and the seed's XML-like `<qos-policy>` form.

pub mod opensm;
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

/// Parse either form: a file whose first meaningful character is `<` is the XML-like form.
pub fn parse_policy(file: &str, src: &str) -> Result<Policy, ParseError> {
    let first = src
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    match first {
        Some(l) if l.starts_with('<') => xml::parse(file, src),
        _ => opensm::parse(file, src),
    }
}

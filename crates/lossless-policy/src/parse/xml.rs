//! The seed's XML-like `<qos-policy>` form.

use crate::ast::{Loc, Policy};
use crate::parse::ParseError;

/// Parse the XML-like form.
pub fn parse(file: &str, _src: &str) -> Result<Policy, ParseError> {
    Err(ParseError::Unexpected {
        file: file.to_string(),
        loc: Loc { line: 1, col: 1 },
        found: "`<`".to_string(),
        expected: "the OpenSM format (the XML-like form is not supported yet)".to_string(),
    })
}

//! The one decode error type (what was wrong, in which field, at which
//! offset) and the one emit error type (a value whose length the wire cannot
//! carry).

use std::fmt;

/// A malformed input, located precisely.
///
/// `offset` counts bytes from the start of the buffer handed to the outermost
/// parser (for a frame: from the first byte of the destination MAC), so a user
/// can find the byte in a hex dump. `field` names the field in the terms of the
/// standard (`"lldp.ttl"`, `"dcbx.pg.percent"`, ...).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
pub struct DecodeError {
    pub offset: usize,
    pub field: &'static str,
    pub kind: DecodeErrorKind,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}: {}", self.field, self.offset, self.kind)
    }
}

impl DecodeError {
    pub fn new(offset: usize, field: &'static str, kind: DecodeErrorKind) -> Self {
        DecodeError {
            offset,
            field,
            kind,
        }
    }

    /// The same error seen from an enclosing buffer that starts `base` bytes earlier.
    pub fn shifted(mut self, base: usize) -> Self {
        self.offset += base;
        self
    }
}

/// Why the input is malformed. Each variant carries the values a user needs to
/// see what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecodeErrorKind {
    /// Fewer bytes than the field needs.
    #[error("truncated: need {needed} bytes, {available} available")]
    Truncated { needed: usize, available: usize },
    /// A length field claims more bytes than its container holds.
    #[error("length {length} exceeds the {available} bytes left in the enclosing TLV")]
    LengthBeyondContainer { length: usize, available: usize },
    /// A length that is not the fixed size the standard gives.
    #[error("length {length}, expected {expected}")]
    BadLength { length: usize, expected: usize },
    /// A length below the minimum for this TLV.
    #[error("length {length} is below the minimum {minimum}")]
    TooShort { length: usize, minimum: usize },
    /// A zero-length sub-TLV (lldpad drops the whole LLDPDU for it).
    #[error("zero-length sub-TLV")]
    ZeroLength,
    /// A second instance of something that may occur once; `first_offset` is where the first was.
    #[error("duplicate (first seen at offset {first_offset})")]
    Duplicate { first_offset: usize },
    /// Non-padding bytes after the End of LLDPDU TLV.
    #[error("TLV type {tlv_type} after End of LLDPDU")]
    TlvAfterEnd { tlv_type: u8 },
    /// No End of LLDPDU TLV before the data ran out.
    #[error("no End of LLDPDU TLV")]
    MissingEnd,
    /// A mandatory TLV is missing or out of place.
    #[error("expected {expected} TLV here, found TLV type {found}")]
    Misordered { expected: &'static str, found: u8 },
    /// A mandatory TLV occurs where only it may not.
    #[error("mandatory {tlv} TLV repeated or out of order")]
    UnexpectedMandatory { tlv: &'static str },
    /// A field whose value the standard does not allow. In JSON the reason is
    /// `detail`: an error object's `reason` is the whole error in words.
    #[error("bad value {value}: {reason}")]
    BadValue {
        value: u64,
        #[serde(rename = "detail")]
        reason: &'static str,
    },
    /// Not the protocol this parser handles (wrong Ethertype, OUI, opcode...).
    #[error("not this protocol: {reason}")]
    NotThisProtocol {
        #[serde(rename = "detail")]
        reason: &'static str,
    },
    /// An Internet checksum (RFC 1071) that does not match the bytes it covers.
    #[error("checksum 0x{found:04x}, computed 0x{computed:04x}")]
    Checksum { computed: u16, found: u16 },
}

impl DecodeErrorKind {
    /// The kind by name, as JSON tags it (`truncated`, `bad_length`, `bad_value`, ...):
    /// a label for counters.
    pub fn name(&self) -> &'static str {
        match self {
            DecodeErrorKind::Truncated { .. } => "truncated",
            DecodeErrorKind::LengthBeyondContainer { .. } => "length_beyond_container",
            DecodeErrorKind::BadLength { .. } => "bad_length",
            DecodeErrorKind::TooShort { .. } => "too_short",
            DecodeErrorKind::ZeroLength => "zero_length",
            DecodeErrorKind::Duplicate { .. } => "duplicate",
            DecodeErrorKind::TlvAfterEnd { .. } => "tlv_after_end",
            DecodeErrorKind::MissingEnd => "missing_end",
            DecodeErrorKind::Misordered { .. } => "misordered",
            DecodeErrorKind::UnexpectedMandatory { .. } => "unexpected_mandatory",
            DecodeErrorKind::BadValue { .. } => "bad_value",
            DecodeErrorKind::NotThisProtocol { .. } => "not_this_protocol",
            DecodeErrorKind::Checksum { .. } => "checksum",
        }
    }
}

/// A value that cannot be written as the standard's bytes.
///
/// Emitters refuse such a value rather than truncate a length field or mask
/// a field, either of which would put on the wire something other than what
/// was asked. Field names are the parser's (`"lldp.dcbx"`, `"lldp.chassis_id"`)
/// for lengths, and the configuration's (`"ets.tc_bw"`) for values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EmitError {
    /// A length outside what its TLV's length field, or the standard, allows.
    #[error("{field}: length {length} is outside {min}..={max}")]
    Length {
        field: &'static str,
        length: usize,
        min: usize,
        max: usize,
    },
    /// A value the standard does not allow (what `validate()` refuses).
    #[error("{0}")]
    Value(crate::InvalidValue),
}

impl EmitError {
    /// `Ok` when `min <= length <= max`, else the error naming `field`.
    pub fn check(field: &'static str, length: usize, min: usize, max: usize) -> Result<(), Self> {
        if (min..=max).contains(&length) {
            Ok(())
        } else {
            Err(EmitError::Length {
                field,
                length,
                min,
                max,
            })
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::DecodeErrorKind as K;

    /// `name()` is the tag JSON gives the kind, for every kind.
    #[test]
    fn kind_names_are_the_json_tags() {
        let all = [
            K::Truncated {
                needed: 1,
                available: 0,
            },
            K::LengthBeyondContainer {
                length: 1,
                available: 0,
            },
            K::BadLength {
                length: 1,
                expected: 2,
            },
            K::TooShort {
                length: 1,
                minimum: 2,
            },
            K::ZeroLength,
            K::Duplicate { first_offset: 0 },
            K::TlvAfterEnd { tlv_type: 1 },
            K::MissingEnd,
            K::Misordered {
                expected: "TTL",
                found: 1,
            },
            K::UnexpectedMandatory { tlv: "TTL" },
            K::BadValue {
                value: 1,
                reason: "r",
            },
            K::NotThisProtocol { reason: "r" },
            K::Checksum {
                computed: 1,
                found: 2,
            },
        ];
        for k in all {
            let v = serde_json::to_value(&k).unwrap();
            assert_eq!(v["kind"], k.name(), "{k:?}");
        }
    }
}

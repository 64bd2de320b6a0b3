//! Why one key's value is refused by its rule ([`super::RoceSetting::check`],
//! [`super::PfcWatchdogSetting::check`]): the same words from the file reader, the
//! control socket and the CLI; the caller adds where.

use super::priorities::PriorityError;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// An integer outside the key's range.
    #[error("{value} is out of range {lo}..={hi} ({what})")]
    OutOfRange {
        value: i64,
        lo: i64,
        hi: i64,
        what: &'static str,
    },
    /// Not an integer where one is expected.
    #[error("expected {what}, an integer {lo}..={hi}")]
    NotInteger {
        what: &'static str,
        lo: i64,
        hi: i64,
    },
    /// Milliseconds outside the key's range.
    #[error("{value} ms is out of range {lo}..={hi}")]
    MsOutOfRange { value: i64, lo: u32, hi: u32 },
    /// Not an integer where milliseconds are expected.
    #[error("expected milliseconds, an integer {lo}..={hi}")]
    NotMs { lo: u32, hi: u32 },
    #[error("expected a boolean")]
    NotBoolean,
    /// A priority of a list.
    #[error(transparent)]
    Priority(#[from] PriorityError),
    /// Not a list where priorities are expected; `hint` follows the words.
    #[error("expected a list of priorities 0..=7{hint}")]
    NotPriorities { hint: &'static str },
    /// A word the key does not know (`given` as the file quotes it).
    #[error("unknown {what} {given}; expected {expected}")]
    UnknownWord {
        what: &'static str,
        given: String,
        expected: &'static str,
    },
    /// Not a word where one of `expected` is.
    #[error("expected {expected}")]
    NotWord { expected: &'static str },
    /// A key the section does not have.
    #[error("unknown key `{key}`; expected one of {}", .keys.join(", "))]
    UnknownKey {
        key: String,
        keys: &'static [&'static str],
    },
}

/// A key's value refused, with the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {error}")]
pub struct KeyError {
    pub key: &'static str,
    pub error: SettingError,
}

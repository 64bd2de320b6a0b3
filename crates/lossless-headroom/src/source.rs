//! Where a figure comes from, so `--explain` can say why each term has its value: a seed
//! (the specification), a table (seed 003's 802.3 tables, the 802.3 reaction limits in
//! REFERENCE.md), an assumption we make and state, or the user's own flag.

use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Seed,
    Table,
    Assumption,
    User,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Source {
    pub kind: SourceKind,
    /// Where exactly, or what was assumed and why.
    #[serde(rename = "ref")]
    pub reference: &'static str,
}

impl Source {
    pub const fn seed(reference: &'static str) -> Self {
        Source {
            kind: SourceKind::Seed,
            reference,
        }
    }
    pub const fn table(reference: &'static str) -> Self {
        Source {
            kind: SourceKind::Table,
            reference,
        }
    }
    pub const fn assumption(reference: &'static str) -> Self {
        Source {
            kind: SourceKind::Assumption,
            reference,
        }
    }
    pub const fn user() -> Self {
        Source {
            kind: SourceKind::User,
            reference: "given on the command line",
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceKind::Seed => "seed",
            SourceKind::Table => "table",
            SourceKind::Assumption => "assumption",
            SourceKind::User => "user",
        })
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.reference)
    }
}

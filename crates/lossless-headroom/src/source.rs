//! Where a figure comes from, so `--explain` can say why each term has its value: a document
//! that states it (the PFC Delay Value Constraint Model, Adaptive PFC Headroom,
//! draft-he-rtgwg-wan-pfc-00), a table (the PFC Delay Value Constraint Model's IEEE 802.3
//! tables, the IEEE 802.3 annex 31B PAUSE reaction limits), an assumption we make and state,
//! or the user's own flag.

use std::fmt;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Document,
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
    pub const fn document(reference: &'static str) -> Self {
        Source {
            kind: SourceKind::Document,
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
            SourceKind::Document => "document",
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

//! The node's typed errors at its boundary: why a change request is refused (and
//! what in the change), why a reload is, and why the caller could not start the relay
//! or open a measurement socket (inputs). Each refusal maps to the control socket's [`ErrorKind`] here, in
//! one place; its text is the answer's `message`.

use std::path::PathBuf;

use lossless_dcbx::ConfigError;

use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::InvalidValue;

use crate::config::{ConfigFileError, PriorityError, RuleError, RuleSelector, SettingError};
use crate::protocol::{ErrorKind, FeatureName, Response};

/// No port by that name; `known`: the ports the node manages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no port {port:?}; managed ports: {}", known_ports(.known))]
pub struct NoSuchPort {
    pub port: String,
    pub known: Vec<String>,
}

fn known_ports(known: &[String]) -> String {
    if known.is_empty() {
        "none".to_string()
    } else {
        known.join(", ")
    }
}

/// Why `dcbx set`, `dcbx reset`, `roce set` or `roce reset` is refused (nothing
/// changed), or could not run once persisted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SetError {
    #[error(transparent)]
    NoSuchPort(#[from] NoSuchPort),
    /// The change itself is refused.
    #[error("{port}: {error}; nothing changed")]
    Change { port: String, error: ChangeError },
    /// `roce set` without a key.
    #[error("{port}: nothing to change: give KEY=VALUE; nothing changed")]
    NoRoceKey { port: String },
    /// A `roce set` value of a type no key takes (an object, null, a float).
    #[error("{port}: roce.{key}: {value} is not a value the key takes; nothing changed")]
    RoceValue {
        port: String,
        key: String,
        value: String,
    },
    /// A `roce set` value refused by the key's rule.
    #[error("{port}: roce.{key}: {error}; nothing changed")]
    Roce {
        port: String,
        key: String,
        error: SettingError,
    },
    /// The port's configuration with the change is refused.
    #[error("{port}: {error}; nothing changed")]
    Invalid { port: String, error: ConfigError },
    /// The port went away while the change was being persisted (it is kept for its
    /// return).
    #[error("port {port:?} went away")]
    WentAway { port: String },
}

impl SetError {
    /// The refusal as the control socket's answer.
    pub fn response(&self) -> Response {
        Response::err(self.kind(), self.to_string())
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            SetError::NoSuchPort(_) | SetError::WentAway { .. } => ErrorKind::NoSuchPort,
            SetError::Change { .. }
            | SetError::NoRoceKey { .. }
            | SetError::RoceValue { .. }
            | SetError::Roce { .. }
            | SetError::Invalid { .. } => ErrorKind::InvalidConfig,
        }
    }
}

/// Why a reload (or SIGHUP) is refused; the running configuration stays.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The file could not be read, or is not a valid configuration.
    #[error(transparent)]
    File(#[from] ConfigFileError),
    /// The file is empty: most likely caught half written.
    #[error(
        "{}: the file is empty (0 bytes; caught while being written?): refused, the running \
         configuration stays (a file that selects no port says so with at least a comment)",
        .path.display()
    )]
    Empty { path: PathBuf },
    /// A staying port's new configuration is refused.
    #[error("{port}: {error}")]
    Port { port: String, error: ConfigError },
}

impl ReloadError {
    /// The refusal as the control socket's answer.
    pub fn response(&self) -> Response {
        Response::err(self.kind(), self.to_string())
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            ReloadError::File(_) | ReloadError::Empty { .. } | ReloadError::Port { .. } => {
                ErrorKind::InvalidConfig
            }
        }
    }
}

/// Why the relay's data path did not start (the answer to `Output::StartRelay`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayStartError {
    /// The relay host refused the section (an interface, a socket, its program).
    #[error("relay: {0}")]
    Host(#[from] lossless_relay::ConfigError),
    /// The data path's thread could not be started.
    #[error("relay thread: {0}")]
    Thread(String),
}

/// Why a port's measurement socket could not be opened (the answer to
/// `Output::OpenMeasure`): the system's error and its words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct MeasureOpenError {
    pub kind: std::io::ErrorKind,
    pub message: String,
}

impl From<std::io::Error> for MeasureOpenError {
    fn from(e: std::io::Error) -> Self {
        MeasureOpenError {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// Why a `dcbx set` change is refused: the setting (`pfc.priorities`, `app_add[0]`,
/// `ets.tc_bw`) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangeError {
    /// A field of another feature.
    #[error("`{field}` does not apply to {} (only to {})", .feature.name(), names(.owners))]
    OtherFeature {
        field: &'static str,
        feature: FeatureName,
        owners: &'static [FeatureName],
    },
    #[error("nothing to change: the change gives no {} setting", .0.name())]
    Nothing(FeatureName),
    /// A list of priorities refused by the file's rule.
    #[error("{field}: {error}")]
    Priority { field: String, error: PriorityError },
    /// A per-priority (or per-class) table without 8 values.
    #[error("{field}: expected 8 values ({what}), found {found}")]
    NotEight {
        field: &'static str,
        what: &'static str,
        found: usize,
    },
    /// The APP rules given whole, refused by their rules.
    #[error(transparent)]
    Rules(RuleError),
    #[error("{field}: {selector} {protocol} names no priority to add")]
    NoPriorityToAdd {
        field: String,
        selector: RuleSelector,
        protocol: u16,
    },
    /// A rule to add refused by the table's rules.
    #[error("{field} ({selector} {protocol} -> {priorities}): {error}")]
    Add {
        field: String,
        selector: RuleSelector,
        protocol: u16,
        priorities: PriorityMap,
        error: RuleError,
    },
    /// A rule to remove that is not there (`rules`: those that are).
    #[error("{field}: there is no rule for {selector} {protocol} (the rules: {})", listed(.rules))]
    NoSuchRule {
        field: String,
        selector: RuleSelector,
        protocol: u16,
        rules: Vec<String>,
    },
    /// A rule to remove on priorities it is not on.
    #[error("{field}: {selector} {protocol} is on priorities {have}, not {given}")]
    NotOnPriorities {
        field: String,
        selector: RuleSelector,
        protocol: u16,
        have: PriorityMap,
        given: PriorityMap,
    },
    #[error("ets.tcs: give the table per traffic class (tcs) or as prio_tc/tc_bw/tsa, not both")]
    EtsBothForms,
    /// A class of `ets.tcs` refused by the file's rule.
    #[error("ets.tcs[{index}].{key}: {reason}")]
    Class {
        index: usize,
        key: &'static str,
        reason: String,
    },
    /// The ETS tables refused by their rules.
    #[error("{}", ets_refusal(.0))]
    Ets(InvalidValue),
}

fn names(features: &[FeatureName]) -> String {
    let names: Vec<&str> = features.iter().map(|f| f.name()).collect();
    names.join(", ")
}

fn listed(rules: &[String]) -> String {
    if rules.is_empty() {
        "none".to_string()
    } else {
        rules.join(", ")
    }
}

/// An ETS refusal as the file words it: the field (and element), why, the value.
fn ets_refusal(e: &InvalidValue) -> String {
    let at = match e.index {
        Some(i) => format!("{}[{i}]", e.field),
        None => e.field.to_string(),
    };
    match (e.field, e.index) {
        ("ets.tc_bw", None) => format!("{at}: {} (they sum to {})", e.reason, e.value),
        _ => format!("{at}: {} (found {})", e.reason, e.value),
    }
}

//! `reload`: what the configuration file changed.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::request::FeatureName;

/// `reload`: what changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReloadResult {
    pub config: Option<String>,
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: usize,
    /// What became of the relay's data path: none, unchanged, started, restarted,
    /// stopped or failed.
    pub relay: Cow<'static, str>,
    /// Runtime changes (`dcbx set`) that run instead of a different value in the file.
    pub shadowed: Vec<Shadowed>,
}

/// A port's feature whose runtime change runs instead of the file's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shadowed {
    pub port: String,
    pub feature: FeatureName,
    /// This reload changed the file's value, which therefore does not run.
    pub file_changed: bool,
    /// The same for a person, with the command that gives the file's value back.
    pub message: String,
}

//! Reading the configuration file (its parsing is the node core's:
//! [`DaemonConfig::parse`]).

use std::io;
use std::path::Path;

use lossless_node::config::{ConfigFileError, DaemonConfig};

/// The file's text; None when there is no file, which means every default (as an
/// empty file does). Any other read error is refused.
pub fn read(path: &Path) -> Result<Option<String>, ConfigFileError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigFileError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Reads and parses the file at `path` (a missing file: every default).
pub fn load(path: &Path) -> Result<DaemonConfig, ConfigFileError> {
    match read(path)? {
        Some(text) => DaemonConfig::parse(&text, path),
        None => Ok(DaemonConfig::default()),
    }
}

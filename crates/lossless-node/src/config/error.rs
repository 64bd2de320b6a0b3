//! What goes wrong with a configuration file, located to its line and column.

use std::path::PathBuf;

/// Why the configuration file was refused. Every variant displays as one line
/// that names the file; syntax and value errors add `LINE:COLUMN` (1-based,
/// columns in characters) and value errors the key path:
///
/// ```text
/// /etc/lossless/losslessd.toml:12:11: ports."eth0".pg.percent: percentages sum to 90, must be 100
/// ```
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// The file could not be read (a missing one included).
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The text is not TOML (this includes a key given twice).
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// The TOML is well formed but a key or value is refused.
    #[error("{}:{line}:{column}: {key}: {reason}", path.display())]
    Invalid {
        path: PathBuf,
        line: usize,
        column: usize,
        key: String,
        reason: String,
    },
    /// More than one key or value is refused: every one of them, in file order, one
    /// line each (each an [`ConfigFileError::Invalid`]).
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Several(Vec<ConfigFileError>),
}

impl ConfigFileError {
    /// The single errors: itself, or each of [`ConfigFileError::Several`].
    pub fn errors(&self) -> Vec<&ConfigFileError> {
        match self {
            ConfigFileError::Several(list) => list.iter().collect(),
            one => vec![one],
        }
    }
}

/// A refused key or value, before it is placed in a file: `at` is a byte
/// offset into the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fault {
    pub at: usize,
    pub key: String,
    pub reason: String,
}

/// Runs `f` on every item, keeping each refusal and going on with the next, so that
/// every mistake of a file is reported, not the first only. `f` gets the list too,
/// for the refusals of a nested table.
pub(crate) fn each<T>(
    items: Result<Vec<T>, Fault>,
    faults: &mut Vec<Fault>,
    mut f: impl FnMut(T, &mut Vec<Fault>) -> Result<(), Fault>,
) {
    match items {
        Err(e) => faults.push(e),
        Ok(items) => {
            for item in items {
                if let Err(e) = f(item, faults) {
                    faults.push(e);
                }
            }
        }
    }
}

/// 1-based line and column (in characters) of byte offset `at` in `text`.
/// An offset past the end or inside a character is moved back to the
/// nearest character boundary.
pub(crate) fn line_column(text: &str, at: usize) -> (usize, usize) {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::line_column;

    #[test]
    fn positions_are_one_based_in_characters() {
        let text = "a = 1\nb = \"é\"x\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 4), (1, 5));
        assert_eq!(line_column(text, 6), (2, 1));
        // After the two-byte é: column counts it once.
        assert_eq!(line_column(text, 13), (2, 7));
        // Inside the é, and past the end: clamped, no panic.
        assert_eq!(line_column(text, 11), (2, 6));
        assert_eq!(line_column(text, 1000), (3, 1));
    }
}

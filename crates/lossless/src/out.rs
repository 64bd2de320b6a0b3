//! Standard output, for every command alike: a reader that went away (`| head`,
//! `| jq` that quit) ends the command quietly with status 0, as it ends `cat`; any
//! other write error is a failure (status 1).

use std::fmt;
use std::io::{self, Write};

use crate::error::CliError;

/// Writes `text` to stdout and flushes it.
pub fn emit(text: &str) -> Result<(), CliError> {
    write(format_args!("{text}"))
}

/// Writes formatted text to stdout and flushes it; what [`outln!`] expands to.
pub fn write(args: fmt::Arguments) -> Result<(), CliError> {
    let mut out = io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.flush())
        .map_err(|e| failed("writing output", e))
}

/// The error for a failed write of `what`: the reader going away is not reported.
pub fn failed(what: &str, e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::reader_gone()
    } else {
        CliError::failure(what, e)
    }
}

/// `println!` to stdout through [`write`]: evaluates to `Result<(), CliError>`.
macro_rules! outln {
    () => {
        $crate::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use outln;

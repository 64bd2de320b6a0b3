//! How the CLI fails: one line on stderr, `lossless: <what>: <why>`, and an
//! exit status scripts can branch on (2: the user's input or usage is wrong,
//! 1: anything else).

use std::fmt;
use std::process::ExitCode;

/// A failed command: what was being done, why it failed, which exit status.
#[derive(Debug)]
pub struct CliError {
    pub what: String,
    pub why: String,
    pub kind: ErrorKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad usage or input the user can fix (missing file, not a capture): exit 2.
    Input,
    /// Anything else (an output that cannot be written, ...): exit 1.
    Failure,
    /// Standard output's reader went away (`| head`): nothing to report, exit 0.
    ReaderGone,
}

impl CliError {
    pub fn input(what: impl Into<String>, why: impl fmt::Display) -> Self {
        CliError {
            what: what.into(),
            why: why.to_string(),
            kind: ErrorKind::Input,
        }
    }

    pub fn failure(what: impl Into<String>, why: impl fmt::Display) -> Self {
        CliError {
            what: what.into(),
            why: why.to_string(),
            kind: ErrorKind::Failure,
        }
    }

    /// Standard output's reader went away ([`ErrorKind::ReaderGone`]).
    pub fn reader_gone() -> Self {
        CliError {
            what: "writing output".into(),
            why: "the reader went away".into(),
            kind: ErrorKind::ReaderGone,
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self.kind {
            ErrorKind::Input => 2,
            ErrorKind::Failure => 1,
            ErrorKind::ReaderGone => 0,
        }
    }

    /// Prints the error to stderr (unless the reader went away) and returns the exit
    /// status. A reason of several lines (every mistake of a refused configuration
    /// file) prints as that many errors, each in the house format.
    pub fn report(&self) -> ExitCode {
        if self.kind != ErrorKind::ReaderGone {
            for line in self.why.lines() {
                eprintln!("lossless: {}: {line}", self.what);
            }
        }
        ExitCode::from(self.exit_code())
    }
}

impl CliError {
    /// As [`CliError::report`], for a command asked for JSON (`-j`, `--json`): one
    /// JSON object on stderr, `{"error": {"what", "why", "lines", "exit"}}` (`lines`:
    /// each reason of a several-line `why`), so a script reading JSON gets JSON
    /// whether the command worked or not; standard output stays empty.
    pub fn report_json(&self) -> ExitCode {
        if self.kind != ErrorKind::ReaderGone {
            let v = serde_json::json!({
                "error": {
                    "what": self.what,
                    "why": self.why,
                    "lines": self.why.lines().collect::<Vec<_>>(),
                    "exit": self.exit_code(),
                }
            });
            eprintln!("{v}");
        }
        ExitCode::from(self.exit_code())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "lossless: {}: {}", self.what, self.why)
    }
}

/// `--help` and `--version` go to stdout with status 0; usage errors are
/// reworded into the house format and exit 2 (clap's own status for them).
pub fn clap_exit(e: clap::Error, json: bool) -> ExitCode {
    use clap::error::ErrorKind as K;
    match e.kind() {
        K::DisplayHelp | K::DisplayVersion => {
            // Help goes to stdout; if stdout is gone there is no one to tell.
            let _ = e.print();
            ExitCode::SUCCESS
        }
        K::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{}", e.render());
            eprintln!("lossless: usage: a command is required (see the list above)");
            ExitCode::from(2)
        }
        _ if json => {
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            CliError::input("usage", text.trim_end()).report_json()
        }
        _ => {
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("lossless: usage: {text}");
            if !text.ends_with('\n') {
                eprintln!();
            }
            ExitCode::from(2)
        }
    }
}

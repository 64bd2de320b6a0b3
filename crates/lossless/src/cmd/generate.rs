//! `lossless completions SHELL` and `lossless man DIR`: shell completions and man
//! pages generated from the command line's own clap definitions (clap_complete,
//! clap_mangen), so they never drift from what the binary accepts.

use std::io::Write;
use std::path::PathBuf;

use clap_complete::Shell;

use crate::error::CliError;

/// Arguments of `lossless completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Arguments of `lossless man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing): lossless.1 and one
    /// page per command and subcommand (lossless-dcbx-set.1, ...).
    #[arg(value_name = "DIR", value_hint = clap::ValueHint::DirPath)]
    pub dir: PathBuf,
}

pub const COMPLETIONS_AFTER_HELP: &str = "\
Examples:
  lossless completions bash > /usr/share/bash-completion/completions/lossless
  lossless completions zsh > /usr/local/share/zsh/site-functions/_lossless
  lossless completions fish > ~/.config/fish/completions/lossless.fish
  source <(lossless completions bash)       this shell only";

pub const MAN_AFTER_HELP: &str = "\
Examples:
  lossless man /usr/local/share/man/man1 && man lossless-dcbx-set
  lossless man /tmp/man && man -l /tmp/man/lossless-decode.1";

/// Writes the completion script of `cmd` for `args.shell` to stdout.
pub fn completions(args: CompletionsArgs, mut cmd: clap::Command) -> Result<(), CliError> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "lossless", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .map_err(|e| crate::out::failed("writing output", e))
}

/// Writes a man page for `cmd` and each of its subcommands into `args.dir`.
pub fn man(args: ManArgs, cmd: clap::Command) -> Result<(), CliError> {
    let dir = args.dir.display().to_string();
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| CliError::input(&dir, format!("cannot create: {e}")))?;
    clap_mangen::generate_to(cmd, &args.dir)
        .map_err(|e| CliError::failure(&dir, format!("cannot write the pages: {e}")))
}

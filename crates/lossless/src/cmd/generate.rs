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
    clap_mangen::generate_to(cmd.clone(), &args.dir)
        .map_err(|e| CliError::failure(&dir, format!("cannot write the pages: {e}")))?;
    // The pages clap_mangen wrote (one per command, `lossless-dcbx-set.1`): their
    // indented blocks (examples, tables) kept as written.
    let mut pages = Vec::new();
    page_names(&cmd, cmd.get_name().to_string(), &mut pages);
    for name in pages {
        let path = args.dir.join(format!("{name}.1"));
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        std::fs::write(&path, verbatim_blocks(&text))
            .map_err(|e| CliError::failure(&dir, format!("cannot write {name}.1: {e}")))?;
    }
    Ok(())
}

/// The page names clap_mangen gives a command and its subcommands (help excepted).
fn page_names(cmd: &clap::Command, name: String, out: &mut Vec<String>) {
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        page_names(sub, format!("{name}-{}", sub.get_name()), out);
    }
    out.push(name);
}

/// Roff text with each run of indented lines (an example, a table of `--help`) set
/// no-fill (`.nf` ... `.fi`): roff would otherwise fill and justify them, and an
/// example's columns would run together at the terminal's width.
pub fn verbatim_blocks(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len() + 64);
    let mut open = false;
    for line in roff.lines() {
        let indented = line.starts_with("  ");
        if indented && !open {
            out.push_str(".nf\n");
            open = true;
        } else if !indented && open {
            out.push_str(".fi\n");
            open = false;
        }
        out.push_str(line);
        out.push('\n');
    }
    if open {
        out.push_str(".fi\n");
    }
    out
}

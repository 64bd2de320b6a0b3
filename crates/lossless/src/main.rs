//! `lossless`: the command line of the lossless control plane.
//!
//! Adding a subcommand: one variant in [`Command`] (its doc comment is the
//! help text, with an example), one module under `src/cmd/` with an `Args`
//! struct and a `run(args) -> Result<(), error::CliError>`, one arm in `main`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;
mod error;

/// Control plane for lossless Ethernet: LLDP, CEE DCBX and PFC.
///
/// Offline commands need no daemon and no root.
#[derive(Debug, Parser)]
#[command(
    name = "lossless",
    version,
    propagate_version = true,
    after_help = "\
Examples:
  lossless lab                            the simulated fabric: two agents negotiating DCBX
  lossless decode capture.pcapng          decode LLDP/DCBX/PFC frames, readable
  lossless decode capture.pcap --json     the same, one JSON object per frame
  lossless help decode                    everything about one command

Exit status: 0 success, 2 bad usage or unreadable input, 1 any other failure."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Decode every frame of a pcap or pcapng capture: LLDP, CEE DCBX, PFC, PAUSE.
    ///
    /// Example: lossless decode lldp.pcapng --json | jq .dcbx.pfc
    #[command(
        long_about = cmd::decode::LONG_ABOUT,
        after_help = cmd::decode::AFTER_HELP
    )]
    Decode(cmd::decode::Args),
    /// Run the simulated fabric: real DCBX agents on simulated links, virtual clock.
    ///
    /// Example: lossless lab --scenario mismatch
    #[command(long_about = cmd::lab::LONG_ABOUT, after_help = cmd::lab::AFTER_HELP)]
    Lab(cmd::lab::Args),
    /// Check, compile, resolve and explain an OpenSM QoS policy offline.
    ///
    /// Example: lossless policy resolve qos-policy.conf --fabric net --src Hca1 --dst Hca2
    #[command(after_help = cmd::policy::AFTER_HELP)]
    Policy(cmd::policy::Args),
    /// PFC headroom: the Delay Value of a link, term by term, in bits, bytes and cells.
    ///
    /// Example: lossless headroom calc --speed 100G --cable 30m --medium fiber --explain
    #[command(long_about = cmd::headroom::LONG_ABOUT)]
    Headroom(cmd::headroom::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return error::clap_exit(e),
    };
    let result = match cli.command {
        Command::Decode(args) => cmd::decode::run(args),
        Command::Lab(args) => cmd::lab::run(args),
        Command::Policy(args) => cmd::policy::run(args),
        Command::Headroom(args) => cmd::headroom::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => e.report(),
    }
}

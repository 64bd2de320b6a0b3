//! `lossless`: the command line of the lossless control plane.
//!
//! Adding a subcommand: one variant in [`Command`] (its doc comment is the
//! help text, with an example), one module under `src/cmd/` with an `Args`
//! struct and a `run(args) -> Result<(), error::CliError>`, one arm in `main`.

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod cmd;
mod error;
mod out;

/// Control plane for lossless Ethernet: LLDP, DCBX (IEEE 802.1Qaz and CEE DCBX) and PFC.
///
/// Offline commands (decode, lab, policy, profile, headroom) need no daemon and
/// no root; status, neighbors, dcbx, counters, events and reload talk to a
/// running losslessd over its control socket (--socket); doctor reads the host and
/// asks the daemon when one answers.
#[derive(Debug, Parser)]
#[command(
    name = "lossless",
    version,
    propagate_version = true,
    after_help = "\
Examples:
  lossless lab                            the simulated fabric: two agents negotiating DCBX
  lossless lab --scenario wan-relay       PFC relayed across a WAN, DC2 to DC1 (draft-he-rtgwg-wan-pfc-00)
  lossless decode capture.pcapng          decode LLDP/DCBX/PFC frames, readable
  lossless decode capture.pcap --json     the same, one JSON object per frame
  lossless status                         ports of the running losslessd and what is wrong
  lossless -j status | jq .healthy        false when any port has a problem
  lossless dcbx show eth0                 the DCBX version, admin, peer and operational DCBX of a port
  lossless dcbx set eth0 pfc --priorities 3,4 --willing no
  lossless dcbx set eth0 app add dscp 26 3
  lossless dcbx set eth0 ets --tc 0:0,1,2,4,5,7:50 --tc 1:3:50 --tc 2:6:strict
  lossless dcbx reset eth0 ets            the configuration file's ETS again
  lossless profile roce --port 'enp65s0f*'   RoCEv2 lossless (PFC, ETS, DSCP APP) as a config section
  lossless events --follow                DCBX notifications as they happen
  lossless pfc show eth0                  PFC frames per priority, time paused, the storm watchdog
  lossless relay show                     PFC relayed across the WAN (draft-he-rtgwg-wan-pfc-00), drops by reason
  lossless doctor                         a RoCE host checked end to end: ok / problem / unknown, and the fix
  lossless help decode                    everything about one command

Exit status: 0 success, 2 bad usage or unreadable input, 1 any other failure."
)]
struct Cli {
    /// JSON output: the same as the command's own --json (as `ip -j`, `dcb -j`).
    #[arg(short = 'j', long = "json")]
    json: bool,
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
    /// Ready-made configurations: `profile roce` for RoCEv2 lossless (PFC, ETS, DSCP APP).
    ///
    /// Example: lossless profile roce --port 'enp65s0f*' >> /etc/lossless/losslessd.toml
    #[command(subcommand)]
    Profile(cmd::profile::ProfileCommand),
    /// PFC headroom: the Delay Value of a link, term by term, in bits, bytes and cells.
    ///
    /// Example: lossless headroom calc --speed 100G --cable 30m --medium fiber --explain
    #[command(long_about = cmd::headroom::LONG_ABOUT)]
    Headroom(cmd::headroom::Args),
    /// The running daemon and one line per port: link, DCBX version, NIC, health.
    ///
    /// MODE is the DCBX version that runs: ieee (IEEE 802.1Qaz) or cee (CEE DCBX), with
    /// "(auto)" when the port picks it from what the peer speaks. APPLY is what reaches
    /// the NIC (none, or dcbnl's state). HEALTH is ok, or each problem in words, one per
    /// line: the link down, no DCBX peer, a feature in error, not operational or not in
    /// sync (with why), a failed dcbnl programming. What the configuration turns off is
    /// not a problem. --json has `healthy` per port and for the daemon.
    ///
    /// Example: lossless status --json | jq '.ports[] | select(.healthy | not) | .problems'
    Status(cmd::daemon::JsonArg),
    /// LLDP neighbours per port, as the daemon's remote MIB holds them: system name,
    /// port id and description, chassis, MAC, TTL, DCBX.
    ///
    /// Example: lossless neighbors eth0
    Neighbors(cmd::daemon::PortArgs),
    /// Show, change or reset DCBX on the daemon's ports (IEEE 802.1Qaz and CEE DCBX).
    #[command(subcommand)]
    Dcbx(cmd::dcbx::DcbxCommand),
    /// LLDP (802.1AB MIB), DCBX and socket counters per port.
    ///
    /// Example: lossless counters --json
    Counters(cmd::daemon::PortArgs),
    /// The daemon's recent notifications (CEE DCBX and IEEE 802.1Qaz, peer changes); --follow streams.
    ///
    /// Example: lossless events --follow --json
    Events(cmd::daemon::EventsArgs),
    /// Re-read the daemon's configuration file (as SIGHUP). A bad file is refused
    /// and the running configuration stays; unchanged ports are not disturbed.
    Reload(cmd::daemon::JsonArg),
    /// PFC per priority on the daemon's ports: frames and rates each way, time paused, the
    /// storm watchdog.
    #[command(subcommand)]
    Pfc(cmd::pfc::PfcCommand),
    /// Set or reset a port's RoCE host settings at run time (RDMA CM's ToS and RoCE mode,
    /// ECN, the CNP's marking, link pause, the firmware LLDP agent), persisted.
    #[command(subcommand)]
    Roce(cmd::roce::RoceCommand),
    /// The PFC relay of draft-he-rtgwg-wan-pfc-00 in the daemon: ports, counters, drops, storm
    /// ceiling, buffer.
    #[command(subcommand)]
    Relay(cmd::relay::RelayCommand),
    /// Check a RoCE host end to end: one line per check, ok / problem / unknown, with the
    /// evidence and the fix.
    ///
    /// Example: lossless doctor enp65s0f0np0
    #[command(long_about = cmd::doctor::LONG_ABOUT, after_help = cmd::doctor::AFTER_HELP)]
    Doctor(cmd::doctor::Args),
    /// A completion script for bash, zsh, fish, elvish or PowerShell, on stdout.
    #[command(after_help = cmd::generate::COMPLETIONS_AFTER_HELP)]
    Completions(cmd::generate::CompletionsArgs),
    /// Man pages: lossless(1) and one per command and subcommand, written into DIR.
    #[command(after_help = cmd::generate::MAN_AFTER_HELP)]
    Man(cmd::generate::ManArgs),
}

fn main() -> ExitCode {
    let mut cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // A usage error of a command asked for JSON: JSON too.
            let json = std::env::args().skip(1).any(|a| a == "-j" || a == "--json");
            return error::clap_exit(e, json);
        }
    };
    if cli.json {
        match json_flag(&mut cli.command) {
            Ok(flag) => *flag = true,
            Err(e) => return e.report_json(),
        }
    }
    // `-j` or the command's own `--json`: a failure is reported as JSON too.
    let json = json_flag(&mut cli.command).is_ok_and(|f| *f);
    let result = match cli.command {
        Command::Decode(args) => cmd::decode::run(args),
        Command::Lab(args) => cmd::lab::run(args),
        Command::Policy(args) => cmd::policy::run(args),
        Command::Profile(c) => cmd::profile::run(c),
        Command::Headroom(args) => cmd::headroom::run(args),
        Command::Status(args) => cmd::daemon::status(args),
        Command::Neighbors(args) => cmd::daemon::neighbors(args),
        Command::Dcbx(c) => cmd::dcbx::run(c),
        Command::Counters(args) => cmd::daemon::counters(args),
        Command::Events(args) => cmd::daemon::events(args),
        Command::Reload(args) => cmd::daemon::reload(args),
        Command::Pfc(c) => cmd::pfc::run(c),
        Command::Relay(c) => cmd::relay::run(c),
        Command::Roce(c) => cmd::roce::run(c),
        Command::Doctor(args) => return cmd::doctor::run(args),
        Command::Completions(args) => cmd::generate::completions(args, Cli::command()),
        Command::Man(args) => cmd::generate::man(args, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if json => e.report_json(),
        Err(e) => e.report(),
    }
}

/// The command's own `--json`, which `lossless -j COMMAND` sets; an error for a
/// command without a JSON form.
fn json_flag(command: &mut Command) -> Result<&mut bool, error::CliError> {
    use cmd::dcbx::DcbxCommand as D;
    use cmd::headroom::Sub as H;
    use cmd::policy::PolicyCmd as P;
    Ok(match command {
        Command::Decode(a) => &mut a.json,
        Command::Lab(a) => &mut a.json,
        Command::Policy(a) => match &mut a.cmd {
            P::Check(c) => &mut c.inputs.json,
            P::Compile(c) => &mut c.inputs.json,
            P::Resolve(c) | P::Explain(c) => &mut c.inputs.json,
        },
        Command::Profile(cmd::profile::ProfileCommand::Roce(a)) => {
            if !a.apply_to_daemon {
                return Err(error::CliError::input(
                    "--json",
                    "`profile roce` prints a configuration section (TOML); it has a JSON \
                     form only with --apply-to-daemon",
                ));
            }
            &mut a.json
        }
        Command::Headroom(a) => match &mut a.command {
            H::Calc(c) => &mut c.json,
            H::Compare(c) => &mut c.json,
            H::Show(c) => &mut c.json,
        },
        Command::Status(a) | Command::Reload(a) => &mut a.json,
        Command::Neighbors(a) | Command::Counters(a) => &mut a.json,
        Command::Events(a) => &mut a.json,
        Command::Dcbx(D::Show(a)) => &mut a.json,
        Command::Dcbx(D::Set(a)) => &mut a.json,
        Command::Dcbx(D::Reset(a)) => &mut a.json,
        Command::Relay(cmd::relay::RelayCommand::Show(a)) => &mut a.json,
        Command::Pfc(cmd::pfc::PfcCommand::Show(a)) => &mut a.json,
        Command::Doctor(a) => &mut a.json,
        Command::Roce(cmd::roce::RoceCommand::Set(a)) => &mut a.json,
        Command::Roce(cmd::roce::RoceCommand::Reset(a)) => &mut a.json,
        Command::Completions(_) | Command::Man(_) => {
            return Err(error::CliError::input(
                "--json",
                "completions and man pages are shell scripts and roff, with no JSON form",
            ))
        }
    })
}

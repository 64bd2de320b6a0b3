//! `lossless lab`: the simulated fabric, running the real DCBX agents (and,
//! for `wan-relay`, the real PFC relay) on a virtual clock. No root, no
//! hardware.

use std::io::Write;
use std::path::PathBuf;

use lossless_lab::pcap::write_captures;
use lossless_lab::scenario::{self, Options, RunError, SCENARIOS};
use lossless_lab::wan_relay::{tunnel_named, TUNNELS};

use crate::error::CliError;

pub const LONG_ABOUT: &str = "\
Run a simulated fabric: real DCBX agents (the code losslessd runs) on simulated links, on \
a virtual clock. Prints a timeline of every frame (IEEE 802.1Qaz ETS, PFC and APP TLVs, or \
CEE DCBX SeqNo/AckNo and feature flags), every state change and operator action, then the \
final state of each agent: the DCBX version it runs and why, and per feature whether it is \
willing, agreed (CEE: Syncd), operational, in error, what configuration it runs and why. \
Runs in milliseconds; the same seed gives the same run.

The wan-relay scenario runs the PFC relay of draft-he-rtgwg-wan-pfc-00 instead: DC2-GW - PE2 - \
P - PE1 - DC1-GW, the PEs being the relay core, P a router that forwards by the outer header \
only. It follows a PFC frame hop by hop, measures the forwarding delay, sends illegal frames \
and a PFC storm into PE2 and sizes DC2-GW's buffer for the delay, once per tunnel kind \
(--tunnel for one).";

pub const AFTER_HELP: &str = "\
Examples:
  lossless lab                           IEEE 802.1Qaz: a host takes a switch's ETS, PFC, APP (\"ieee\")
  lossless lab --scenario auto-cee-peer  a host in auto mode falls back to a CEE-only switch
  lossless lab --scenario willing        CEE DCBX: a host takes a switch's PG, PFC, APP
  lossless lab --scenario mismatch       CEE, neither willing, different PFC: both report the mismatch
  lossless lab --scenario lossy --seed 3
  lossless lab --list                    every scenario and what it shows
  lossless lab --json | jq '.agents[1].ieee.pfc.oper'
  lossless lab --scenario wan-relay --tunnel srv6 --wan-delay 2ms
  lossless lab --scenario wan-relay --pcap-dir /tmp/relay    one pcap per link and tunnel
  lossless lab --scenario wan-relay --json | jq '.wan_relay[].pause.end_to_end_ns'";

/// Arguments of `lossless lab`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scenario to run (see --list).
    #[arg(long, short, default_value = scenario::DEFAULT, value_name = "NAME")]
    pub scenario: String,
    /// Seed for the simulated loss.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// List the scenarios and exit.
    #[arg(long)]
    pub list: bool,
    /// Print the report as one JSON object.
    #[arg(short = 'j', long)]
    pub json: bool,
    /// wan-relay: run one tunnel kind only (default: every kind).
    #[arg(long, value_name = "KIND", value_parser = tunnel_names())]
    pub tunnel: Option<String>,
    /// wan-relay: one-way WAN delay from PE2 to PE1 (default 1ms, about 200 km of fibre).
    #[arg(long, value_name = "DURATION")]
    pub wan_delay: Option<String>,
    /// Write what crossed the simulated wire as pcap files into DIR (created if
    /// missing): <scenario>.pcap, or for wan-relay <tunnel>-<link>.pcap per link.
    #[arg(long, value_name = "DIR")]
    pub pcap_dir: Option<PathBuf>,
}

fn tunnel_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(TUNNELS.map(|t| t.name))
}

/// Longest WAN delay taken: far beyond any terrestrial path (20,000 km is
/// about 100 ms), short enough that a run stays quick.
const MAX_WAN_DELAY_MS: u64 = 10_000;

fn wan_delay(text: &str) -> Result<std::time::Duration, CliError> {
    let d = lossless_headroom::units::parse_duration(text)
        .map_err(|e| CliError::input("--wan-delay", e))?;
    // The simulation counts whole nanoseconds.
    let ns = d.0.div_ceil(1000);
    if ns > MAX_WAN_DELAY_MS * 1_000_000 {
        return Err(CliError::input(
            "--wan-delay",
            format!("{text:?}: longer than {MAX_WAN_DELAY_MS} ms"),
        ));
    }
    Ok(std::time::Duration::from_nanos(ns))
}

pub fn run(args: Args) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let write_err = |e: std::io::Error| crate::out::failed("writing the report", e);
    if args.list {
        if args.json {
            let text =
                serde_json::to_string(SCENARIOS).map_err(|e| CliError::failure("encoding", e))?;
            writeln!(out, "{text}").map_err(write_err)?;
        } else {
            let width = SCENARIOS.iter().map(|s| s.name.len()).max().unwrap_or(0);
            for s in SCENARIOS {
                writeln!(out, "{:<width$}  {}", s.name, s.description).map_err(write_err)?;
            }
        }
        return Ok(());
    }
    let options = Options {
        tunnel: args
            .tunnel
            .as_deref()
            .and_then(tunnel_named)
            .map(|t| t.kind),
        wan_delay: args.wan_delay.as_deref().map(wan_delay).transpose()?,
    };
    let what = format!("--scenario {}", args.scenario);
    let report = scenario::run_with(&args.scenario, args.seed, &options).map_err(|e| match e {
        RunError::Unknown(_) | RunError::NotApplicable { .. } => CliError::input(what, e),
        RunError::Relay(_) => CliError::failure(what, e),
    })?;
    if let Some(dir) = &args.pcap_dir {
        let written = write_captures(dir, &report.captures)
            .map_err(|e| CliError::failure("--pcap-dir", e))?;
        let mut err = std::io::stderr().lock();
        for (path, c) in written.iter().zip(&report.captures) {
            // The report goes to stdout; the files written are a note on stderr.
            let _ = writeln!(err, "wrote {} ({} frames)", path.display(), c.frames.len());
        }
    }
    if args.json {
        let text = serde_json::to_string(&report).map_err(|e| CliError::failure("encoding", e))?;
        writeln!(out, "{text}").map_err(write_err)?;
    } else {
        write!(out, "{}", report.render_text()).map_err(write_err)?;
    }
    Ok(())
}

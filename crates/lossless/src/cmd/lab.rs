//! `lossless lab`: the simulated fabric, running the real DCBX agents on a
//! virtual clock. No root, no hardware.

use std::io::Write;

use lossless_lab::scenario::{self, SCENARIOS};

use crate::error::CliError;

pub const LONG_ABOUT: &str = "\
Run a simulated fabric: real DCBX agents (the code losslessd runs) on simulated links, on \
a virtual clock. Prints a timeline of every frame (SeqNo/AckNo and feature flags), every \
state change and operator action, then the final operational state of each agent: per \
feature whether it is willing, Syncd, operational, in error, what configuration it runs and \
why. Runs in milliseconds; the same seed gives the same run.";

pub const AFTER_HELP: &str = "\
Examples:
  lossless lab                         two agents, one willing, negotiating (scenario \"willing\")
  lossless lab --scenario mismatch     neither willing, different PFC: both report the mismatch
  lossless lab --scenario lossy --seed 3
  lossless lab --list                  every scenario and what it shows
  lossless lab --json | jq '.agents[1].pfc.oper.priorities'";

/// Arguments of `lossless lab`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scenario to run (see --list).
    #[arg(long, short, default_value = "willing", value_name = "NAME")]
    pub scenario: String,
    /// Seed for the simulated loss.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// List the scenarios and exit.
    #[arg(long)]
    pub list: bool,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let write_err = |e: std::io::Error| CliError::failure("writing the report", e);
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
    let report = scenario::run(&args.scenario, args.seed)
        .map_err(|e| CliError::input(format!("--scenario {}", args.scenario), e))?;
    if args.json {
        let text = serde_json::to_string(&report).map_err(|e| CliError::failure("encoding", e))?;
        writeln!(out, "{text}").map_err(write_err)?;
    } else {
        write!(out, "{}", report.render_text()).map_err(write_err)?;
    }
    Ok(())
}

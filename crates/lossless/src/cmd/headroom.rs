//! `lossless headroom calc`: the PFC headroom a link needs, from first principles (the Delay
//! Value of the PFC Delay Value Constraint Model, the WAN condition of
//! draft-he-rtgwg-wan-pfc-00). Offline, no daemon.

use std::io::Write;

use lossless_headroom::cells::Alpha;
use lossless_headroom::dv::{parse_higher_layer, Inputs};
use lossless_headroom::medium::parse_medium;
use lossless_headroom::units::{
    parse_bytes, parse_delay, parse_duration, parse_frame, parse_length, parse_rate, Rate,
    UnitError,
};
use lossless_headroom::wan::Wan;
use lossless_headroom::{calc, phy, CalcError, Request};

use crate::error::CliError;

pub const LONG_ABOUT: &str = "\
PFC headroom: how much buffer a receiver must keep free on each lossless priority so that \
nothing is dropped between deciding to send PFC and the last bit the peer still sends.";

pub const CALC_LONG_ABOUT: &str = "\
Compute the PFC Delay Value (DV) of a link, term by term, as the PFC Delay Value Constraint \
Model (Mark Gravel, HP, 2009) defines it:

  DV = 2*max_frame_size + PFC_frame_size + 2*cable_delay + ID_s1 + ID_s2 + HD_s2 (+ response_s2)

and turn it into bytes, buffer cells (--cell-size, scaled by --alpha) and, for a given \
per-priority buffer (--buffer), xoff/xon thresholds. Every term has a default from that model, \
from Adaptive PFC Headroom (Lily Lv, Huawei) or from an assumption that --explain states, and \
every term can be overridden, so any worked example can be typed in. For a \
data-center-interconnect link, --wan-delay adds the condition of draft-he-rtgwg-wan-pfc-00: \
reserved buffer > (receive rate - send rate) x PFC forwarding delay across the WAN.

Units: lengths 100m, 2.5km; times 500ns, 5us, 1.5ms; rates 10G, 100Gb/s; sizes 9216, 32KiB, \
12MB; delays in bit times (37888 or 37888bt), pause quanta (74q, 512 bit times each) or a time \
(1.5us, converted at --speed); frames in octets (2000; 20 octets of preamble, SFD and gap are \
added) or bit times (16160bt).";

pub const CALC_AFTER_HELP: &str = "\
Examples:
  lossless headroom calc --speed 100G --cable 5m --medium twinax
  lossless headroom calc --speed 400G --cable 2km --medium fiber --cell-size 256 --buffer 1MB

  The PFC Delay Value Constraint Model's worked example (153,064 bit times, about 19.1 KB),
  every figure typed in:
  lossless headroom calc --speed 10G --cable 100m --medium cat6 --max-frame 2000 \\
      --pfc-frame 64 --interface-delay 37888 --higher-layer-delay 33184 --explain
  ... or from the tables: --higher-layer-delay macsec+pipelining

  IEEE 802.1Q-2018 Annex N, as Adaptive PFC Headroom quotes it (126,024 bit times):
  lossless headroom calc --speed 10G --cable 100m --medium 0.6c --max-frame 16160bt \\
      --pfc-frame 672bt --interface-delay 37888 --higher-layer-delay 6144

  A data-center interconnect: 80 km of fibre, 2 ms of PFC forwarding delay across the WAN:
  lossless headroom calc --speed 100G --cable 80km --medium fiber --wan-delay 2ms

  lossless headroom calc --speed 25G --cable 3m --medium dac --json | jq .dv_bytes

Media: fiber (5 ns/m), copper or twinax (4.8 ns/m), cat6 (0.6c), a velocity (0.66c) or a \
delay per metre (5.2ns/m).
10G PHYs (--phy): 10gbase-t (default, worst case), 10gbase-r, 10gbase-r-xaui, 10gbase-lx4, \
10gbase-cx4.
Exit status: 0 success, 2 bad input (the message names the flag).";

/// Arguments of `lossless headroom`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

// Parsed once per run: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Compute the Delay Value, headroom, cells and thresholds of one link.
    ///
    /// Example: lossless headroom calc --speed 100G --cable 30m --medium fiber --explain
    #[command(long_about = CALC_LONG_ABOUT, after_help = CALC_AFTER_HELP)]
    Calc(CalcArgs),
    /// Static table vs model vs adaptive: SONiC's table, the PFC Delay Value Constraint Model,
    /// Adaptive PFC Headroom, side by side.
    ///
    /// Example: lossless headroom compare --speeds 100G,400G --lengths 5m,500m,10km,80km
    #[command(
        long_about = super::headroom_compare::LONG_ABOUT,
        after_help = super::headroom_compare::AFTER_HELP
    )]
    Compare(super::headroom_compare::CompareArgs),
    /// Adaptive headroom per port, from the running losslessd: the last measured round
    /// trip, its sizing (X, DV, cells) and what reached the NIC.
    ///
    /// Example: lossless headroom show eth0 --json
    #[command(after_help = super::headroom_show::AFTER_HELP)]
    Show(super::daemon::PortArgs),
}

/// Arguments of `lossless headroom calc`.
#[derive(Debug, clap::Args)]
pub struct CalcArgs {
    /// Line rate: 1G to 800G (10G, 25G, 100G, 400G, ...).
    #[arg(long, value_name = "RATE")]
    pub speed: String,
    /// Cable length: 3m, 100m, 10km.
    #[arg(long, value_name = "LENGTH")]
    pub cable: String,
    /// fiber, copper, twinax, cat6, a velocity (0.6c) or ns per metre (5ns/m).
    #[arg(long, value_name = "MEDIUM", default_value = "fiber")]
    pub medium: String,
    /// A 10G PHY from the PFC Delay Value Constraint Model's table 1 (default: 10gbase-t over
    /// XAUI, the worst case).
    #[arg(long, value_name = "PHY")]
    pub phy: Option<String>,
    /// Maximum frame: octets (2000; default) or bit times (16160bt).
    #[arg(long, value_name = "SIZE")]
    pub max_frame: Option<String>,
    /// PFC frame: octets (64; default) or bit times (672bt).
    #[arg(long, value_name = "SIZE")]
    pub pfc_frame: Option<String>,
    /// Interface delay per station (tx + rx): bit times, pause quanta (74q) or time.
    #[arg(long, value_name = "DELAY")]
    pub interface_delay: Option<String>,
    /// The peer's interface delay, when it differs from this station's.
    #[arg(long, value_name = "DELAY")]
    pub peer_interface_delay: Option<String>,
    /// Higher-layer delay: macsec, pipelining, none, a figure, joined with +.
    #[arg(long, value_name = "DELAY")]
    pub higher_layer_delay: Option<String>,
    /// Extra PFC response time of the peer (pause quanta, bit times or time); default 0.
    #[arg(long, value_name = "DELAY")]
    pub response_time: Option<String>,
    /// Buffer cell (chunk) size in bytes.
    #[arg(long, value_name = "SIZE", default_value = "160")]
    pub cell_size: String,
    /// Multiplier on the need before rounding to cells (at least 1).
    #[arg(long, value_name = "FACTOR", default_value = "1")]
    pub alpha: String,
    /// Per-priority buffer: also print xoff and xon thresholds.
    #[arg(long, value_name = "SIZE")]
    pub buffer: Option<String>,
    /// Gap between xoff and xon (default: two maximum frames).
    #[arg(long, value_name = "SIZE", requires = "buffer")]
    pub xon_gap: Option<String>,
    /// PFC forwarding delay across the WAN, one way (draft-he-rtgwg-wan-pfc-00): 2ms.
    #[arg(long, value_name = "TIME")]
    pub wan_delay: Option<String>,
    /// Average receive rate of the priority at the gateway (default: --speed).
    #[arg(long, value_name = "RATE", requires = "wan_delay")]
    pub wan_rx_rate: Option<String>,
    /// Average send rate of the priority onward (default: 0, the worst case).
    #[arg(long, value_name = "RATE", requires = "wan_delay")]
    pub wan_tx_rate: Option<String>,
    /// List every term, its value and its source.
    #[arg(long)]
    pub explain: bool,
    /// Print one JSON object (dv_bit_times, dv_bytes, every term).
    #[arg(short = 'j', long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    match args.command {
        Sub::Calc(a) => run_calc(a),
        Sub::Compare(a) => super::headroom_compare::run(a),
        Sub::Show(a) => super::headroom_show::show(&a.socket.path.clone(), a),
    }
}

/// Parses one flag's value, naming the flag when it fails.
fn flag<T>(
    name: &str,
    value: &str,
    parse: impl FnOnce(&str) -> Result<T, UnitError>,
) -> Result<T, CliError> {
    parse(value).map_err(|e| CliError::input(name, e))
}

fn opt<T>(
    name: &str,
    value: &Option<String>,
    parse: impl FnOnce(&str) -> Result<T, UnitError>,
) -> Result<Option<T>, CliError> {
    value.as_deref().map(|v| flag(name, v, parse)).transpose()
}

fn build(a: &CalcArgs) -> Result<Request, CliError> {
    let speed = flag("--speed", &a.speed, parse_rate)?;
    if speed < Rate(1_000_000_000) || speed > Rate(800_000_000_000) {
        return Err(CliError::input(
            "--speed",
            format!("{:?}: outside 1G..800G", a.speed),
        ));
    }
    let cable = flag("--cable", &a.cable, parse_length)?;
    let medium = flag("--medium", &a.medium, parse_medium)?;
    let mut inputs = Inputs::new(speed, cable, medium);
    inputs.phy = match &a.phy {
        Some(p) => Some(phy::find_phy(p).ok_or_else(|| {
            let names: Vec<&str> = phy::PHYS_10G.iter().map(|p| p.name).collect();
            CliError::input(
                "--phy",
                format!("{p:?}: unknown PHY; expected one of {}", names.join(", ")),
            )
        })?),
        None => None,
    };
    inputs.max_frame = opt("--max-frame", &a.max_frame, parse_frame)?;
    inputs.pfc_frame = opt("--pfc-frame", &a.pfc_frame, parse_frame)?;
    inputs.interface_delay = opt("--interface-delay", &a.interface_delay, parse_delay)?;
    inputs.peer_interface_delay = opt(
        "--peer-interface-delay",
        &a.peer_interface_delay,
        parse_delay,
    )?;
    inputs.higher_layer_delay = opt(
        "--higher-layer-delay",
        &a.higher_layer_delay,
        parse_higher_layer,
    )?;
    inputs.response_time = opt("--response-time", &a.response_time, parse_delay)?;

    let mut req = Request::new(inputs);
    req.cell = flag("--cell-size", &a.cell_size, parse_bytes)?;
    if req.cell.0 == 0 {
        return Err(CliError::input(
            "--cell-size",
            format!("{:?}: a cell holds at least one byte", a.cell_size),
        ));
    }
    req.alpha = flag("--alpha", &a.alpha, Alpha::parse)?;
    req.buffer = opt("--buffer", &a.buffer, parse_bytes)?;
    req.xon_gap = opt("--xon-gap", &a.xon_gap, parse_bytes)?;
    if let Some(d) = opt("--wan-delay", &a.wan_delay, parse_duration)? {
        req.wan = Some(Wan {
            delay: d,
            rx_rate: opt("--wan-rx-rate", &a.wan_rx_rate, parse_rate)?.unwrap_or(speed),
            tx_rate: opt("--wan-tx-rate", &a.wan_tx_rate, parse_rate)?.unwrap_or(Rate(0)),
        });
    }
    Ok(req)
}

fn run_calc(a: CalcArgs) -> Result<(), CliError> {
    let req = build(&a)?;
    let report = calc(&req).map_err(|e| match e {
        CalcError::Buffer(_) => CliError::input("--buffer", &e),
        CalcError::Dv(_) => CliError::input("headroom calc", &e),
    })?;
    let mut out = std::io::stdout().lock();
    let write_err = |e: std::io::Error| crate::out::failed("writing the result", e);
    if a.json {
        let text = serde_json::to_string(&report).map_err(|e| CliError::failure("encoding", e))?;
        writeln!(out, "{text}").map_err(write_err)?;
    } else {
        write!(out, "{}", report.render_text(a.explain)).map_err(write_err)?;
    }
    Ok(())
}

//! `lossless headroom compare`: three answers to "how much headroom does this link need",
//! side by side for a set of speeds and cable lengths: a vendor's static table (SONiC's,
//! for the Mellanox SN4700), the PFC Delay Value Constraint Model, and Adaptive PFC
//! Headroom's sizing of a measured round trip (here on simulated links).

use std::fmt::Write as _;
use std::io::Write as _;

use lossless_headroom::cells::Alpha;
use lossless_headroom::dv::{Inputs, TermKind};
use lossless_headroom::medium::{parse_medium, Medium};
use lossless_headroom::phy;
use lossless_headroom::sizing::SizingConfig;
use lossless_headroom::source::SourceKind;
use lossless_headroom::static_table::{Row as StaticRow, StaticTable, SONIC_SN4700};
use lossless_headroom::units::{
    grouped, parse_bytes, parse_length, parse_rate, Bytes, Duration, Length, Rate, UnitError,
};
use lossless_headroom::{calc, Request};
use lossless_lab::headroom::{measure, LinkOutcome, LinkSpec};
use serde::Serialize;

use crate::error::CliError;

pub const LONG_ABOUT: &str = "\
Compare three answers to \"how much PFC headroom does this link need\", for every speed and \
cable length asked (default: 100G and 400G over 5 m, 500 m, 10 km and 80 km of fibre):

  static    what a vendor's static table gives: SONiC's pg_profile_lookup.ini for the Mellanox \
SN4700 (sonic-buildimage, hwsku ACS-MSN4700), its xoff column, which is the headroom in bytes. \
SONiC looks a port up by its speed and cable length exactly as written; the table lists 5m, \
40m and 300m only, so any other length gets \"No PG profile configured for speed ... and \
cable length ...\" and the port gets no lossless profile at all.
  model     the Delay Value of the PFC Delay Value Constraint Model (Mark Gravel, HP, 2009) \
for the link, every term at its default (see `lossless headroom calc --explain`), in bit times, \
then bytes rounded up to buffer cells.
  adaptive  Adaptive PFC Headroom (Lily Lv, Huawei): the round trip measured on the link \
(here: the real measurement sessions on simulated links whose delay is cable + interface \
delay each way), DV = speed x round trip + 2 x MaxFrame + PFCFrame, rounded up to cells.

The last column is how far the static table is from the model where it has an answer: \
positive is buffer reserved for nothing (over-provisioned), negative is frames that can be \
dropped (under-provisioned).

Why the adaptive column equals the model here: the simulator injects the model's own delays, \
so there is nothing for the measurement to correct. On a real link the measurement replaces \
the model's assumptions (interface delays, the medium's velocity, the cable's length). The \
model's higher-layer delay at the peer (HD_s2; one pipelined maximum frame, 16,160 bit times, \
at speeds other than 100G, where Adaptive PFC Headroom's figure already includes it) is not \
on the measured path and Adaptive PFC Headroom's DV does not add it, so there the adaptive \
column is lower by exactly that term.";

pub const AFTER_HELP: &str = "\
Examples:
  lossless headroom compare
  lossless headroom compare --lengths 5m,40m,300m,500m     the table's own lengths, and one more
  lossless headroom compare --speeds 25G,100G --medium twinax --lengths 1m,3m,5m
  lossless headroom compare --cell 256 --alpha 1.25
  lossless headroom compare --json | jq '.[] | select(.static_error)'

Lists are comma-separated; units as in `lossless headroom calc` (100G, 2.5G; 5m, 2.5km). \
--speeds takes rates the model knows (1G, 2.5G, 5G, 10G, 25G, 40G, 50G, 100G, 200G, 400G, \
800G); at most 64 links in all.

JSON: an array, one object per link, every key always present (null where there is no \
value): speed_bps, cable_m, medium, static_bytes (the table's xoff) or static_error (SONiC's \
message), static_row, static_minus_model_bytes, static_over_provision_pct, \
model_dv_bit_times, model_hd_bit_times, model_interface_delay_bit_times, model_headroom_bytes, model_headroom_cells, \
adaptive_round_trip_ps, adaptive_dv_bit_times, adaptive_headroom_bytes, \
adaptive_headroom_cells, cell_bytes, alpha.
Exit status: 0 success, 2 bad input (the message names the flag and the item), 1 a link the \
simulated measurement could not finish.";

/// Arguments of `lossless headroom compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Line rates, comma-separated.
    #[arg(long, value_name = "RATE,...", default_value = "100G,400G")]
    pub speeds: String,
    /// Cable lengths, comma-separated.
    #[arg(long, value_name = "LENGTH,...", default_value = "5m,500m,10km,80km")]
    pub lengths: String,
    /// fiber, copper, twinax, cat6, a velocity (0.6c) or ns per metre (5ns/m).
    #[arg(long, value_name = "MEDIUM", default_value = "fiber")]
    pub medium: String,
    /// Buffer cell (chunk) size in bytes, for the model and the adaptive sizing.
    #[arg(long, value_name = "SIZE", default_value = "160")]
    pub cell: String,
    /// Multiplier on the need before rounding to cells (at least 1).
    #[arg(long, value_name = "FACTOR", default_value = "1")]
    pub alpha: String,
    /// Print a JSON array, one object per link.
    #[arg(short = 'j', long)]
    pub json: bool,
}

/// More links than this and the lab's per-link MAC addresses would repeat; nobody needs
/// a table that long.
const MAX_LINKS: usize = 64;

/// The static table compared against.
const TABLE: &StaticTable = &SONIC_SN4700;

/// One link's three answers: the `--json` schema.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    pub speed_bps: u64,
    pub cable_m: f64,
    pub medium: &'static str,
    /// The static table's xoff for the link, bytes; null when it has no row.
    pub static_bytes: Option<u64>,
    /// SONiC's message when it has no row; null otherwise.
    pub static_error: Option<String>,
    /// The whole row used (speed_mbps, cable, size, xon, xoff, threshold).
    pub static_row: Option<StaticRow>,
    /// static_bytes - model_headroom_bytes: positive over-, negative under-provisioned.
    pub static_minus_model_bytes: Option<i64>,
    /// The same as a percentage of model_headroom_bytes.
    pub static_over_provision_pct: Option<f64>,
    pub model_dv_bit_times: u64,
    /// The model's HD_s2: a term a round-trip measurement does not see.
    pub model_hd_bit_times: u64,
    /// The model's interface delay per station (ID_s1).
    pub model_interface_delay_bit_times: u64,
    pub model_headroom_bytes: u64,
    pub model_headroom_cells: u64,
    /// The measured round trip (minimum filter), picoseconds; null if not measured.
    pub adaptive_round_trip_ps: Option<u64>,
    pub adaptive_dv_bit_times: Option<u64>,
    pub adaptive_headroom_bytes: Option<u64>,
    pub adaptive_headroom_cells: Option<u64>,
    pub cell_bytes: u64,
    pub alpha: f64,
    #[serde(skip)]
    interface_delay_source: SourceKind,
    #[serde(skip)]
    speed: Rate,
    #[serde(skip)]
    cable: Length,
}

/// The validated request.
struct Plan {
    speeds: Vec<Rate>,
    lengths: Vec<Length>,
    medium: Medium,
    sizing: SizingConfig,
}

/// Splits a comma-separated flag and parses each item, naming the flag and the item.
fn list<T>(
    flag: &str,
    value: &str,
    parse: impl Fn(&str) -> Result<T, UnitError>,
) -> Result<Vec<T>, CliError> {
    let items: Vec<&str> = value.split(',').collect();
    let n = items.len();
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            if item.trim().is_empty() {
                return Err(CliError::input(
                    flag,
                    format!(
                        "item {} of {n} in {value:?} is empty; expected a comma-separated list \
                         such as {}",
                        i + 1,
                        if flag == "--speeds" {
                            "100G,400G"
                        } else {
                            "5m,500m,10km"
                        }
                    ),
                ));
            }
            parse(item).map_err(|e| CliError::input(flag, format!("item {} of {n}: {e}", i + 1)))
        })
        .collect()
}

fn plan(a: &CompareArgs) -> Result<Plan, CliError> {
    let speeds = list("--speeds", &a.speeds, parse_rate)?;
    for (i, s) in speeds.iter().enumerate() {
        if phy::profile(*s).is_none() {
            let known: Vec<&str> = phy::SPEEDS.iter().map(|p| p.label).collect();
            return Err(CliError::input(
                "--speeds",
                format!(
                    "item {} of {}: {s}: no interface-delay figure for this speed, so neither \
                     the model nor the simulated link can be built; expected one of {}",
                    i + 1,
                    speeds.len(),
                    known.join(", ")
                ),
            ));
        }
    }
    let lengths = list("--lengths", &a.lengths, parse_length)?;
    let links = speeds.len() * lengths.len();
    if links > MAX_LINKS {
        return Err(CliError::input(
            "--speeds/--lengths",
            format!(
                "{} speeds x {} lengths = {links} links; at most {MAX_LINKS}",
                speeds.len(),
                lengths.len()
            ),
        ));
    }
    let medium = parse_medium(&a.medium).map_err(|e| CliError::input("--medium", e))?;
    let cell = parse_bytes(&a.cell).map_err(|e| CliError::input("--cell", e))?;
    if cell == Bytes(0) {
        return Err(CliError::input(
            "--cell",
            format!("{:?}: a cell holds at least one byte", a.cell),
        ));
    }
    let alpha = Alpha::parse(&a.alpha).map_err(|e| CliError::input("--alpha", e))?;
    let sizing = SizingConfig {
        alpha,
        cell,
        ..SizingConfig::default()
    };
    Ok(Plan {
        speeds,
        lengths,
        medium,
        sizing,
    })
}

/// Computes every row: the table lookup, the model, and one simulator run measuring all
/// links at once.
fn rows(p: &Plan) -> Result<Vec<CompareRow>, CliError> {
    let specs: Vec<LinkSpec> = p
        .speeds
        .iter()
        .flat_map(|&speed| {
            p.lengths.iter().map(move |&cable| LinkSpec {
                label: format!("{speed} {cable}"),
                speed,
                cable,
                medium: p.medium,
            })
        })
        .collect();
    let measured = measure(&specs, &p.sizing).map_err(|e| CliError::input("--speeds", e))?;
    specs
        .iter()
        .zip(measured)
        .map(|(spec, outcome)| row(spec, &outcome, &p.sizing))
        .collect()
}

fn row(spec: &LinkSpec, o: &LinkOutcome, sizing: &SizingConfig) -> Result<CompareRow, CliError> {
    let mut req = Request::new(Inputs::new(spec.speed, spec.cable, spec.medium));
    req.alpha = sizing.alpha;
    req.cell = sizing.cell;
    let model = calc(&req).map_err(|e| CliError::input(spec.label.clone(), e))?;
    let hd = model
        .terms
        .iter()
        .filter(|t| matches!(t.kind, TermKind::HigherLayerDelay | TermKind::PeerResponse))
        .map(|t| t.bit_times)
        .sum();
    let id = model
        .terms
        .iter()
        .find(|t| t.kind == TermKind::InterfaceDelayLocal)
        .copied()
        .ok_or_else(|| CliError::failure(spec.label.clone(), "the model has no ID_s1 term"))?;
    let lookup = TABLE.lookup(spec.speed, spec.cable);
    let static_bytes = lookup.as_ref().ok().map(|r| r.xoff);
    let model_bytes = model.headroom.bytes;
    let diff = static_bytes.map(|s| s as i64 - model_bytes as i64);
    Ok(CompareRow {
        speed_bps: spec.speed.0,
        cable_m: spec.cable.0 as f64 / 1e6,
        medium: spec.medium.name,
        static_bytes,
        static_error: lookup.as_ref().err().map(|e| e.to_string()),
        static_row: lookup.ok().copied(),
        static_minus_model_bytes: diff,
        static_over_provision_pct: diff
            .map(|d| (d as f64 * 1000.0 / model_bytes.max(1) as f64).round() / 10.0),
        model_dv_bit_times: model.dv_bit_times,
        model_hd_bit_times: hd,
        model_interface_delay_bit_times: id.bit_times,
        model_headroom_bytes: model_bytes,
        model_headroom_cells: model.headroom.cells,
        adaptive_round_trip_ps: o.measured.map(|m| m.round_trip.0),
        adaptive_dv_bit_times: o.adaptive.map(|n| n.dv_bit_times),
        adaptive_headroom_bytes: o.adaptive.map(|n| n.headroom.bytes),
        adaptive_headroom_cells: o.adaptive.map(|n| n.headroom.cells),
        cell_bytes: model.headroom.cell_bytes,
        alpha: model.headroom.alpha,
        interface_delay_source: id.source.kind,
        speed: spec.speed,
        cable: spec.cable,
    })
}

fn signed(n: i64) -> String {
    let s = grouped(n.unsigned_abs());
    if n < 0 {
        format!("-{s}")
    } else {
        format!("+{s}")
    }
}

/// The readable table and the notes that make it honest.
fn render(rows: &[CompareRow], medium: &Medium, sizing: &SizingConfig) -> String {
    const HEAD: [&str; 8] = [
        "speed",
        "cable",
        "static xoff",
        "model DV (bt)",
        "model B (cells)",
        "measured RTT",
        "adaptive B (cells)",
        "static vs model",
    ];
    let bytes_cells = |b: u64, c: u64| format!("{} ({})", grouped(b), grouped(c));
    let grid: Vec<[String; 8]> = rows
        .iter()
        .map(|r| {
            let verdict = match (r.static_minus_model_bytes, r.static_over_provision_pct) {
                (Some(d), Some(pct)) => format!(
                    "{} B ({}{pct:.1} %) {}",
                    signed(d),
                    if pct >= 0.0 { "+" } else { "" },
                    match d {
                        1.. => "over",
                        0 => "exact",
                        _ => "UNDER",
                    }
                ),
                _ => "no answer".to_string(),
            };
            [
                r.speed.to_string(),
                r.cable.to_string(),
                r.static_bytes
                    .map_or("no PG profile".to_string(), |b| format!("{} B", grouped(b))),
                grouped(r.model_dv_bit_times),
                bytes_cells(r.model_headroom_bytes, r.model_headroom_cells),
                r.adaptive_round_trip_ps
                    .map_or("-".to_string(), |ps| Duration(ps).to_string()),
                match (r.adaptive_headroom_bytes, r.adaptive_headroom_cells) {
                    (Some(b), Some(c)) => bytes_cells(b, c),
                    _ => "not measured".to_string(),
                },
                verdict,
            ]
        })
        .collect();
    let mut width = HEAD.map(str::len);
    for line in &grid {
        for (w, cell) in width.iter_mut().zip(line) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |cells: [&str; 8]| {
        let mut l = String::new();
        for (i, (c, w)) in cells.iter().zip(width).enumerate() {
            let sep = match i {
                0 => "",
                2 | 3 | 5 | 7 => " | ",
                _ => " ",
            };
            if i == 7 {
                let _ = write!(l, "{sep}{c}");
            } else {
                let _ = write!(l, "{sep}{c:>w$}");
            }
        }
        l
    };

    let mut o = String::new();
    let _ = writeln!(
        o,
        "PFC headroom per lossless priority over {medium}; cells of {} B, alpha {}",
        sizing.cell.0,
        sizing.alpha.as_f64()
    );
    let _ = writeln!(o);
    let head = line(HEAD);
    let _ = writeln!(o, "{head}");
    let _ = writeln!(o, "{}", "-".repeat(head.len()));
    for cells in &grid {
        let _ = writeln!(o, "{}", line(cells.each_ref().map(String::as_str)));
    }

    let src = &TABLE.source;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "static:   SONiC's table for the {} SN4700 (hwsku {}), its xoff column: the bytes held",
        TABLE.vendor, TABLE.hwsku
    );
    let _ = writeln!(
        o,
        "          above the xoff point for what is still in flight (the headroom), compared byte for byte"
    );
    let _ = writeln!(
        o,
        "          with the model's reservation. {}",
        src.repository
    );
    let _ = writeln!(o, "          {} @ {}", src.path, &src.commit[..12]);
    let _ = writeln!(
        o,
        "          SONiC's Mellanox dynamic model scales in-flight bytes by a cell occupancy; --alpha plays"
    );
    let _ = writeln!(o, "          that part here (1: none).");
    let _ = writeln!(
        o,
        "          SONiC matches speed and cable length exactly; this table lists {} only:",
        TABLE.cables().join(", ")
    );
    let mut missing = false;
    for r in rows {
        if let Some(e) = &r.static_error {
            missing = true;
            let _ = writeln!(o, "            {} {}: {e}", r.speed, r.cable);
        }
    }
    if !missing {
        let _ = writeln!(o, "            (every link asked is listed)");
    }
    let _ = writeln!(
        o,
        "model:    the PFC Delay Value Constraint Model, every term at its default\n          \
         (`lossless headroom calc --explain`);"
    );
    let mut ids: Vec<String> = Vec::new();
    for r in rows {
        let id = format!(
            "{} {} bit times ({})",
            r.speed,
            grouped(r.model_interface_delay_bit_times),
            r.interface_delay_source
        );
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let _ = writeln!(
        o,
        "          interface delay per station: {}",
        ids.join(", ")
    );
    let _ = writeln!(
        o,
        "adaptive: Adaptive PFC Headroom on the measured round trip:\n          \
         DV = speed x RTT + 2 x MaxFrame + PFCFrame"
    );
    let _ = writeln!(
        o,
        "note:     the adaptive column equals the model here because the simulator injects the model's"
    );
    let _ = writeln!(
        o,
        "          delays (cable + interface delay each way, to its 1 ns resolution); on a real link the"
    );
    let _ = writeln!(o, "          measurement replaces the model's assumptions.");
    let mut hd: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r.model_hd_bit_times > 0) {
        let s = format!("{} {} bit times", r.speed, grouped(r.model_hd_bit_times));
        if !hd.contains(&s) {
            hd.push(s);
        }
    }
    if !hd.is_empty() {
        let _ = writeln!(
            o,
            "          Except the model's HD_s2 ({}): the peer's higher-layer delay",
            hd.join(", ")
        );
        let _ = writeln!(
            o,
            "          is not on the measured path and Adaptive PFC Headroom's DV does not add it, so"
        );
        let _ = writeln!(o, "          the adaptive DV is lower by that term there.");
    }
    o
}

pub fn run(a: CompareArgs) -> Result<(), CliError> {
    let p = plan(&a)?;
    let rows = rows(&p)?;
    let unmeasured: Vec<String> = rows
        .iter()
        .filter(|r| r.adaptive_round_trip_ps.is_none())
        .map(|r| format!("{} {}", r.speed, r.cable))
        .collect();
    let mut out = std::io::stdout().lock();
    let write_err = |e: std::io::Error| crate::out::failed("writing the result", e);
    if a.json {
        let text =
            serde_json::to_string_pretty(&rows).map_err(|e| CliError::failure("encoding", e))?;
        writeln!(out, "{text}").map_err(write_err)?;
    } else {
        write!(out, "{}", render(&rows, &p.medium, &p.sizing)).map_err(write_err)?;
    }
    if !unmeasured.is_empty() {
        return Err(CliError::failure(
            "headroom compare",
            format!(
                "the simulated measurement completed no round on {} within a minute of virtual \
                 time (a round trip that long is beyond what a round with the default session \
                 settings waits for)",
                unmeasured.join(", ")
            ),
        ));
    }
    Ok(())
}

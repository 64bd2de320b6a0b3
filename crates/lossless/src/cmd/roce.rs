//! `lossless roce set PORT KEY=VALUE...` and `lossless roce reset PORT`: the RoCE host
//! settings beyond DCB at run time, persisted as `dcbx set` is, over the file's
//! `[ports."X".roce]`. Each value is checked here by the file's own rule before it goes
//! to the daemon, which checks it again.

use std::collections::BTreeMap;

use lossless_node::config::{RawValue, RoceSetting, ROCE_KEYS};
use lossless_node::protocol::Request;
use lossless_node::roce::RoceView;

use super::daemon::{call, print_json, SocketArg};
use super::table::Table;
use crate::error::CliError;
use crate::out::emit;

pub const AFTER_HELP: &str = "\
Keys (the file's [ports.\"X\".roce] keys, docs/config.md):
  tos=0..255            RDMA CM's default ToS (DSCP << 2 | ECN: 106 is DSCP 26, ECT(0))
  roce_mode=v1|v2       RDMA CM's default RoCE version
  traffic_class=0..255  the ToS of verbs applications (mlx5_ib's tc/N/traffic_class)
  ecn_rp=3,4 | none     ECN reaction point on exactly these priorities
  ecn_np=3,4 | none     ECN notification point (CNPs sent) on exactly these priorities
  cnp_dscp=0..63        the DSCP of the CNPs the NIC sends
  cnp_priority=0..7     their 802.1p priority
  global_pause=off|on   802.3x link pause (off: it defeats PFC)
  fw_lldp_agent=off|on  the NIC firmware's LLDP agent (ice, i40e private flags)
The daemon writes each where the host differs, reads it back and shows it in `lossless
status`; the change persists across restarts until `lossless roce reset PORT`.

Examples:
  lossless roce set enp65s0f0np0 tos=106 roce_mode=v2 ecn_rp=3 ecn_np=3
  lossless roce set enp65s0f0np0 global_pause=off
  lossless roce reset enp65s0f0np0";

#[derive(Debug, clap::Subcommand)]
pub enum RoceCommand {
    /// Set RoCE host settings of a port at run time (persisted).
    ///
    /// Example: lossless roce set enp65s0f0np0 tos=106 roce_mode=v2
    #[command(after_help = AFTER_HELP)]
    Set(SetArgs),
    /// Drop a port's runtime RoCE host settings: the file's run again.
    ///
    /// Example: lossless roce reset enp65s0f0np0
    Reset(ResetArgs),
}

#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The port (interface name).
    pub port: String,
    /// KEY=VALUE, one or more.
    #[arg(required = true, value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Print the port's RoCE view as JSON.
    #[arg(short = 'j', long)]
    pub json: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

#[derive(Debug, clap::Args)]
pub struct ResetArgs {
    /// The port (interface name).
    pub port: String,
    /// Print the port's RoCE view as JSON.
    #[arg(short = 'j', long)]
    pub json: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

/// A command-line value as the file's rule takes it: on/off/yes/no/true/false, a
/// number, a list of numbers (`3,4`, `none` for the empty one), else a word.
fn raw(key: &str, text: &str) -> RawValue {
    let list = matches!(key, "ecn_rp" | "ecn_np");
    match text {
        "on" | "yes" | "true" => return RawValue::Bool(true),
        "off" | "no" | "false" => return RawValue::Bool(false),
        "none" | "[]" if list => return RawValue::List(Vec::new()),
        _ => {}
    }
    if list {
        let t = text.trim_start_matches('[').trim_end_matches(']');
        if let Ok(v) = t
            .split(',')
            .map(|p| p.trim().parse::<i64>())
            .collect::<Result<Vec<i64>, _>>()
        {
            return RawValue::List(v);
        }
    }
    match text.parse::<i64>() {
        Ok(v) => RawValue::Int(v),
        Err(_) => RawValue::Str(text.to_string()),
    }
}

fn json(v: &RawValue) -> serde_json::Value {
    match v {
        RawValue::Bool(b) => (*b).into(),
        RawValue::Int(i) => (*i).into(),
        RawValue::Str(s) => s.clone().into(),
        RawValue::List(l) => l.clone().into(),
    }
}

/// The settings given, each checked by the file's rule.
pub fn parse(args: &[String]) -> Result<BTreeMap<String, serde_json::Value>, CliError> {
    let mut out = BTreeMap::new();
    for a in args {
        let Some((key, value)) = a.split_once('=') else {
            return Err(CliError::input(
                format!("roce set: {a:?}"),
                format!("is not KEY=VALUE (keys: {})", ROCE_KEYS.join(", ")),
            ));
        };
        let v = raw(key, value);
        RoceSetting::check(key, &v)
            .map_err(|why| CliError::input(format!("roce set: {key}"), why))?;
        if out.insert(key.to_string(), json(&v)).is_some() {
            return Err(CliError::input(
                format!("roce set: {key}"),
                "is given twice",
            ));
        }
    }
    Ok(out)
}

pub fn run(cmd: RoceCommand) -> Result<(), CliError> {
    let (v, json_out, port) = match cmd {
        RoceCommand::Set(a) => {
            let settings = parse(&a.settings)?;
            let v = call(
                &a.socket.path,
                "roce set",
                &Request::RoceSet {
                    port: a.port.clone(),
                    settings,
                },
            )?;
            (v, a.json, a.port)
        }
        RoceCommand::Reset(a) => {
            let v = call(
                &a.socket.path,
                "roce reset",
                &Request::RoceReset {
                    port: a.port.clone(),
                },
            )?;
            (v, a.json, a.port)
        }
    };
    if json_out {
        return print_json(&v);
    }
    let view: RoceView =
        serde_json::from_value(v).map_err(|e| CliError::failure("the daemon's answer", e))?;
    let mut t = Table::new(["ROCE SETTING", "CONFIGURED", "HOST", "STATE"]);
    for s in view.settings.iter().filter(|s| s.configured.is_some()) {
        t.row([
            s.key.clone(),
            s.configured.clone().unwrap_or_default(),
            s.held.clone().unwrap_or_else(|| "-".into()),
            s.state.replace('_', " "),
        ]);
    }
    emit(&format!(
        "{port}: RoCE host settings persisted; the daemon writes what the host does not \
         hold now (`lossless status` shows the outcome)\n{}",
        t.render_within(110)
    ))
}

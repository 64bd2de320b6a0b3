//! Commands that talk to a running losslessd over its control socket:
//! `status`, `neighbors`, `dcbx show|set`, `counters`, `events`, `reload`.
//! Every command has `--json` (the daemon's result object, schema in
//! docs/daemon.md); the default is an aligned table.

use std::path::Path;

use clap::{Subcommand, ValueEnum};
use lossless_client::{Client, ClientError};
use lossless_node::protocol::{FeatureChange, FeatureName, Request};
use serde_json::Value;

use crate::cmd::table::Table;
use crate::error::CliError;

pub const SOCKET_HELP: &str =
    "Control socket of the daemon [env: LOSSLESS_SOCKET] [default: /run/lossless/losslessd.sock]";

#[derive(Debug, clap::Args)]
pub struct PortArgs {
    /// Only this port.
    pub port: Option<String>,
    /// Print the daemon's JSON result instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct JsonArg {
    /// Print the daemon's JSON result instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// Keep streaming events as they happen (one line each) until interrupted.
    #[arg(short, long)]
    pub follow: bool,
    /// One JSON object per line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum DcbxCommand {
    /// Admin, peer and operational configuration per feature, with Syncd,
    /// Error, Willing, SeqNo/AckNo and the reason for each feature's state.
    ///
    /// Example: lossless dcbx show eth0 --json | jq '.ports[0].pfc.oper.priorities'
    Show(PortArgs),
    /// Change a feature's administrative settings on a port. Takes effect at
    /// once, persists in the daemon's state directory and survives restarts.
    ///
    /// Examples:
    ///   lossless dcbx set eth0 pfc --priorities 3,4 --willing no
    ///   lossless dcbx set eth0 pg --pgid 0,0,0,1,1,1,15,2 --percent 25,75,0,0,0,0,0,0
    ///   lossless dcbx set eth0 app --enable no
    #[command(verbatim_doc_comment)]
    Set(SetArgs),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Feature {
    /// Priority Groups (bandwidth allocation).
    Pg,
    /// Priority-based Flow Control.
    Pfc,
    /// Application priorities.
    App,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum YesNo {
    Yes,
    No,
}

impl From<YesNo> for bool {
    fn from(v: YesNo) -> bool {
        matches!(v, YesNo::Yes)
    }
}

#[derive(Debug, clap::Args)]
pub struct SetArgs {
    /// The port (interface name).
    pub port: String,
    /// The feature to change.
    pub feature: Feature,
    /// Turn the feature on or off locally.
    #[arg(long, value_name = "yes|no")]
    pub enable: Option<YesNo>,
    /// Accept the configuration of a not-willing peer.
    #[arg(long, value_name = "yes|no")]
    pub willing: Option<YesNo>,
    /// Send this feature to the peer (and look at the peer's).
    #[arg(long, value_name = "yes|no")]
    pub advertise: Option<YesNo>,
    /// pfc: the priorities with PFC on, e.g. 3,4 ("none" for no priority).
    #[arg(long, value_name = "LIST")]
    pub priorities: Option<String>,
    /// pg: PGID of priorities 0..7 (0..7, or 15 for strict priority).
    #[arg(long, value_name = "8 PGIDS", value_delimiter = ',')]
    pub pgid: Option<Vec<u8>>,
    /// pg: bandwidth percentage of PGs 0..7, summing to 100.
    #[arg(long, value_name = "8 PERCENTS", value_delimiter = ',')]
    pub percent: Option<Vec<u8>>,
    /// Print the port's new DCBX state as JSON.
    #[arg(long)]
    pub json: bool,
}

fn connect(socket: &Path) -> Result<Client, CliError> {
    Client::connect(socket).map_err(|e| CliError::failure("losslessd", e))
}

pub(crate) fn call(socket: &Path, what: &str, req: &Request) -> Result<Value, CliError> {
    let mut c = connect(socket)?;
    c.call(req).map_err(|e| match e {
        ClientError::Daemon(body) => {
            use lossless_node::protocol::ErrorKind as K;
            match body.kind {
                K::NoSuchPort | K::InvalidConfig | K::BadRequest => {
                    CliError::input(what.to_string(), body.message)
                }
                _ => CliError::failure(what.to_string(), body.message),
            }
        }
        e => CliError::failure(what.to_string(), e),
    })
}

pub(crate) fn print_json(v: &Value) -> Result<(), CliError> {
    let s = serde_json::to_string_pretty(v).map_err(|e| CliError::failure("json", e))?;
    println!("{s}");
    Ok(())
}

pub fn status(socket: &Path, args: JsonArg) -> Result<(), CliError> {
    let v = call(socket, "status", &Request::Status)?;
    if args.json {
        return print_json(&v);
    }
    let d = &v["daemon"];
    println!(
        "losslessd {} pid {}, up {:.0} s, start #{}, config {}, state {}",
        s(&d["version"]),
        d["pid"],
        d["uptime_s"].as_f64().unwrap_or_default(),
        d["boots"],
        d["config"].as_str().unwrap_or("(none: defaults)"),
        s(&d["state_dir"]),
    );
    let mut t = Table::new([
        "PORT", "LINK", "ADMIN", "DCBX", "PEER", "SYNCD", "NBRS", "HARDWARE",
    ]);
    for p in arr(&v["ports"]) {
        t.row([
            s(&p["port"]),
            updown(&p["link_up"]),
            s(&p["admin_status"]),
            if !b(&p["dcbx_enabled"]) {
                "disabled".into()
            } else if b(&p["dcbx_active"]) {
                "active".into()
            } else {
                "inactive".into()
            },
            yn(&p["peer_present"]),
            yn(&p["all_syncd"]),
            p["neighbors"].to_string(),
            hardware(&p["hardware"]),
        ]);
    }
    t.print();
    Ok(())
}

fn hardware(h: &Value) -> String {
    match h["mode"].as_str() {
        Some("report_only") => "report only (apply = none)".into(),
        Some("probing") => "dcbnl: probing the NIC".into(),
        Some("dcbnl") => match h["error"].as_str() {
            Some(e) => format!("dcbnl ERROR: {e}"),
            None => format!("dcbnl, applied {}x", h["applied"]),
        },
        Some("unsupported") => format!("no dcbnl: report only ({})", s(&h["reason"])),
        _ => h.to_string(),
    }
}

pub fn neighbors(socket: &Path, args: PortArgs) -> Result<(), CliError> {
    let v = call(
        socket,
        "neighbors",
        &Request::Neighbors {
            port: args.port.clone(),
        },
    )?;
    if args.json {
        return print_json(&v);
    }
    let mut t = Table::new([
        "PORT", "CHASSIS", "PORT ID", "MAC", "TTL", "EXPIRES", "SYSTEM", "DCBX",
    ]);
    for p in arr(&v["ports"]) {
        for n in arr(&p["neighbors"]) {
            t.row([
                s(&p["port"]),
                s(&n["chassis_id"]),
                s(&n["port_id"]),
                s(&n["mac"]),
                n["ttl"].to_string(),
                format!("{:.0}s", n["expires_in_s"].as_f64().unwrap_or_default()),
                n["system_name"].as_str().unwrap_or("-").to_string(),
                s(&n["dcbx"]),
            ]);
        }
    }
    t.print();
    Ok(())
}

pub fn dcbx(socket: &Path, cmd: DcbxCommand) -> Result<(), CliError> {
    match cmd {
        DcbxCommand::Show(args) => {
            let v = call(
                socket,
                "dcbx show",
                &Request::DcbxShow {
                    port: args.port.clone(),
                },
            )?;
            if args.json {
                return print_json(&v);
            }
            for p in arr(&v["ports"]) {
                print_port_dcbx(p);
            }
            Ok(())
        }
        DcbxCommand::Set(args) => {
            let change = change(&args)?;
            let port = args.port.clone();
            let v = call(
                socket,
                &format!("dcbx set {port}"),
                &Request::DcbxSet { port, change },
            )?;
            if args.json {
                return print_json(&v);
            }
            print_port_dcbx(&v);
            Ok(())
        }
    }
}

fn change(a: &SetArgs) -> Result<FeatureChange, CliError> {
    let feature = match a.feature {
        Feature::Pg => FeatureName::Pg,
        Feature::Pfc => FeatureName::Pfc,
        Feature::App => FeatureName::App,
    };
    let priorities = match &a.priorities {
        None => None,
        Some(s) if s == "none" || s.is_empty() => Some(Vec::new()),
        Some(s) => Some(
            s.split(',')
                .map(|p| {
                    p.trim().parse::<u8>().map_err(|_| {
                        CliError::input(
                            "--priorities",
                            format!("{p:?} is not a priority (0..=7, comma separated, or none)"),
                        )
                    })
                })
                .collect::<Result<Vec<u8>, _>>()?,
        ),
    };
    let wrong = |flag: &str, set: bool, only: &str| {
        if set {
            Err(CliError::input(
                flag.to_string(),
                format!("only applies to {only}, not {}", feature_name(feature)),
            ))
        } else {
            Ok(())
        }
    };
    if feature != FeatureName::Pfc {
        wrong("--priorities", priorities.is_some(), "pfc")?;
    }
    if feature != FeatureName::Pg {
        wrong("--pgid", a.pgid.is_some(), "pg")?;
        wrong("--percent", a.percent.is_some(), "pg")?;
    }
    for (flag, v) in [("--pgid", &a.pgid), ("--percent", &a.percent)] {
        if let Some(v) = v {
            if v.len() != 8 {
                return Err(CliError::input(
                    flag,
                    format!("needs 8 comma-separated values, got {}", v.len()),
                ));
            }
        }
    }
    let c = FeatureChange {
        feature,
        enable: a.enable.map(bool::from),
        willing: a.willing.map(bool::from),
        advertise: a.advertise.map(bool::from),
        priorities,
        pgid: a.pgid.clone(),
        percent: a.percent.clone(),
        app: None,
    };
    if c == (FeatureChange {
        feature,
        ..FeatureChange::default()
    }) {
        return Err(CliError::input(
            "dcbx set",
            "nothing to change: give --enable, --willing, --advertise or the feature's values",
        ));
    }
    Ok(c)
}

fn feature_name(f: FeatureName) -> &'static str {
    match f {
        FeatureName::Pg => "pg",
        FeatureName::Pfc => "pfc",
        FeatureName::App => "app",
    }
}

fn print_port_dcbx(p: &Value) {
    let c = &p["control"];
    println!(
        "{}: DCBX {}, peer {}, SeqNo {} AckNo {} RcvdAckNo {}, version {}/{}",
        s(&p["port"]),
        if !b(&p["dcbx_enabled"]) {
            "disabled"
        } else if b(&p["dcbx_active"]) {
            "active"
        } else {
            "inactive"
        },
        if b(&p["peer_present"]) {
            "present"
        } else {
            "absent"
        },
        c["seq"],
        c["ack"],
        c["rcvd_ack"],
        c["oper_version"],
        c["max_version"],
    );
    let mut t = Table::new([
        "FEATURE", "ENABLE", "WILLING", "ADV", "PEER-W", "OPER", "SYNCD", "ERROR", "SOURCE",
        "REASON",
    ]);
    for f in ["pg", "pfc", "app"] {
        let x = &p[f];
        t.row([
            f.to_string(),
            yn(&x["enable"]),
            yn(&x["willing"]),
            yn(&x["advertise"]),
            opt_yn(&x["peer_willing"]),
            yn(&x["oper_mode"]),
            yn(&x["syncd"]),
            yn(&x["error"]),
            s(&p["source"][f]),
            s(&x["reason_text"]),
        ]);
    }
    t.print();
    let mut t = Table::new(["FEATURE", "", "CONFIG"]);
    for f in ["pg", "pfc", "app"] {
        for which in ["desired", "peer", "oper"] {
            t.row([
                if which == "desired" { f } else { "" }.to_string(),
                which.to_string(),
                render_cfg(f, &p[f][which]),
            ]);
        }
    }
    t.print();
    println!();
}

/// A feature configuration in one line.
fn render_cfg(feature: &str, c: &Value) -> String {
    if c.is_null() {
        return "-".into();
    }
    let list = |v: &Value| {
        arr(v)
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match feature {
        "pfc" => {
            let p = list(&c["priorities"]);
            format!(
                "priorities {}  (tcs {})",
                if p.is_empty() { "none".into() } else { p },
                c["num_tcs"]
            )
        }
        "pg" => format!(
            "pgid {}  percent {}  (tcs {})",
            list(&c["pgid"]),
            list(&c["percent"]),
            c["num_tcs"]
        ),
        _ => {
            let entries: Vec<String> = arr(&c["entries"])
                .iter()
                .map(|e| {
                    let proto = e["protocol"].as_u64().unwrap_or_default();
                    format!(
                        "{} {proto:#06x} -> {}",
                        e["selector"]
                            .as_str()
                            .map_or(e["selector"].to_string(), str::to_owned),
                        list(&e["priorities"])
                    )
                })
                .collect();
            if entries.is_empty() {
                "(empty)".into()
            } else {
                entries.join("; ")
            }
        }
    }
}

pub fn counters(socket: &Path, args: PortArgs) -> Result<(), CliError> {
    let v = call(
        socket,
        "counters",
        &Request::Counters {
            port: args.port.clone(),
        },
    )?;
    if args.json {
        return print_json(&v);
    }
    let mut t = Table::new([
        "PORT",
        "TX",
        "RX",
        "RX-ERR",
        "DISCARD",
        "TLV-DISC",
        "TLV-UNREC",
        "AGEOUTS",
        "DCBX-IN",
        "SEQ-CHG",
        "PEER-LOSS",
        "TX-ERR",
        "MACCTL",
    ]);
    for p in arr(&v["ports"]) {
        let (l, d, io) = (&p["lldp"], &p["dcbx"], &p["io"]);
        t.row([
            s(&p["port"]),
            l["frames_out"].to_string(),
            l["frames_in"].to_string(),
            l["frames_in_errors"].to_string(),
            l["frames_discarded"].to_string(),
            l["tlvs_discarded"].to_string(),
            l["tlvs_unrecognized"].to_string(),
            l["ageouts"].to_string(),
            d["tlvs_in"].to_string(),
            d["seq_changes"].to_string(),
            d["peer_losses"].to_string(),
            io["tx_errors"].to_string(),
            io["mac_control_rx"].to_string(),
        ]);
    }
    t.print();
    Ok(())
}

pub fn events(socket: &Path, args: EventsArgs) -> Result<(), CliError> {
    let mut c = connect(socket)?;
    let v = c
        .call(&Request::Events {
            follow: args.follow,
        })
        .map_err(|e| CliError::failure("events", e))?;
    for e in arr(&v["events"]) {
        print_event(e, args.json);
    }
    if args.follow {
        while let Some(e) = c.next_event().map_err(|e| CliError::failure("events", e))? {
            print_event(&e, args.json);
        }
    }
    Ok(())
}

fn print_event(e: &Value, json: bool) {
    if json {
        println!("{e}");
        return;
    }
    let mut rest = e.clone();
    let mut take = |k: &str| rest.as_object_mut().and_then(|o| o.remove(k));
    let time = take("time").and_then(|t| t.as_f64()).unwrap_or_default();
    let port = take("port").map(|p| s(&p)).unwrap_or_default();
    let kind = take("event").map(|p| s(&p)).unwrap_or_default();
    let detail = match rest.as_object() {
        Some(o) if !o.is_empty() => o
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_owned)))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    };
    println!("{time:.3} {port:<10} {kind:<28} {detail}");
}

pub fn reload(socket: &Path, args: JsonArg) -> Result<(), CliError> {
    let v = call(socket, "reload", &Request::Reload)?;
    if args.json {
        return print_json(&v);
    }
    let names = |k: &str| {
        let l: Vec<String> = arr(&v[k]).iter().map(s).collect();
        if l.is_empty() {
            "-".into()
        } else {
            l.join(", ")
        }
    };
    println!(
        "reloaded {}: changed {}; added {}; removed {}; unchanged {}",
        v["config"].as_str().unwrap_or("(defaults)"),
        names("changed"),
        names("added"),
        names("removed"),
        v["unchanged"]
    );
    Ok(())
}

pub(crate) fn arr(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

pub(crate) fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        v => v.to_string(),
    }
}

fn b(v: &Value) -> bool {
    v.as_bool().unwrap_or(false)
}

fn yn(v: &Value) -> String {
    if b(v) { "yes" } else { "no" }.into()
}

fn opt_yn(v: &Value) -> String {
    match v.as_bool() {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "-".into(),
    }
}

fn updown(v: &Value) -> String {
    if b(v) { "up" } else { "down" }.into()
}

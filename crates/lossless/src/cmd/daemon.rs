//! Commands that talk to a running losslessd over its control socket:
//! `status`, `neighbors`, `counters`, `events`, `reload` (`dcbx` is in dcbx.rs).
//! Every command has `--json` (the daemon's result object, schema in
//! docs/daemon.md); the default is an aligned table.

use std::path::{Path, PathBuf};

use lossless_client::{Client, ClientError};
use lossless_node::protocol::Request;
use serde_json::Value;

use crate::cmd::table::Table;
use crate::error::CliError;
use crate::out::emit;

pub const SOCKET_HELP: &str =
    "Control socket of the daemon [env: LOSSLESS_SOCKET] [default: /run/lossless/losslessd.sock]";

/// `--socket`: only the commands that talk to losslessd have it (global below them,
/// so it may follow a sub-subcommand: `dcbx set eth0 pfc ... --socket PATH`).
#[derive(Debug, Clone, clap::Args)]
pub struct SocketArg {
    #[arg(long = "socket", global = true, value_name = "PATH", env = "LOSSLESS_SOCKET",
          default_value = lossless_node::protocol::DEFAULT_SOCKET, help = SOCKET_HELP,
          hide_default_value = true, hide_env = true, value_hint = clap::ValueHint::FilePath)]
    pub path: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct PortArgs {
    /// Only this port.
    pub port: Option<String>,
    /// Print the daemon's JSON result instead of a table.
    #[arg(short = 'j', long)]
    pub json: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

#[derive(Debug, clap::Args)]
pub struct JsonArg {
    /// Print the daemon's JSON result instead of a table.
    #[arg(short = 'j', long)]
    pub json: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// Keep streaming events as they happen (one line each) until interrupted.
    #[arg(short, long)]
    pub follow: bool,
    /// One JSON object per line.
    #[arg(short = 'j', long)]
    pub json: bool,
    #[command(flatten)]
    pub socket: SocketArg,
}

fn connect(socket: &Path) -> Result<Client, CliError> {
    Client::connect(socket).map_err(|e| CliError::failure("losslessd", e))
}

pub(crate) fn call(socket: &Path, what: &str, req: &Request) -> Result<Value, CliError> {
    let mut c = connect(socket)?;
    let v = c.call(req).map_err(|e| match e {
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
    })?;
    // A change that runs but whose persistence is not durable says so.
    if let Some(w) = v.get("warning").and_then(Value::as_str) {
        eprintln!("{what}: warning: {w}");
    }
    Ok(v)
}

pub(crate) fn print_json(v: &Value) -> Result<(), CliError> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| CliError::failure("json", e))?;
    s.push('\n');
    emit(&s)
}

pub fn status(args: JsonArg) -> Result<(), CliError> {
    let socket = &args.socket.path;
    let v = call(socket, "status", &Request::Status)?;
    if args.json {
        return print_json(&v);
    }
    let d = &v["daemon"];
    let head = format!(
        "losslessd {} pid {}, up {:.0} s, start #{}, config {}, state {}\n",
        s(&d["version"]),
        d["pid"],
        d["uptime_s"].as_f64().unwrap_or_default(),
        d["boots"],
        d["config"].as_str().unwrap_or("(none: defaults)"),
        s(&d["state_dir"]),
    );
    let head = match d["config_refused"].as_str() {
        Some(why) => {
            format!("{head}config refused at the last reload, the one before it runs: {why}\n")
        }
        None => head,
    };
    let head = match d["state_problem"]["message"].as_str() {
        Some(why) if d["state_problem"]["reason"] == "not_durable" => {
            format!("{head}state directory: {why}\n")
        }
        Some(why) => format!("{head}state directory: {why}: runtime changes are refused\n"),
        None => head,
    };
    let head = match &d["state_set_aside"] {
        Value::Object(s) => format!(
            "{head}state file refused at start ({}), {}: running on the configuration file\n",
            s.get("why").and_then(Value::as_str).unwrap_or_default(),
            match s.get("moved_to").and_then(Value::as_str) {
                Some(to) => format!("moved to {to}"),
                None => "left in place".to_string(),
            }
        ),
        _ => head,
    };
    let mut t = Table::new(["PORT", "LINK", "DCBX", "MODE", "NBRS", "APPLY", "HEALTH"]);
    for p in arr(&v["ports"]) {
        let problems: Vec<String> = arr(&p["problems"]).iter().map(s).collect();
        let mut health = problems.iter();
        t.row([
            s(&p["port"]),
            updown(&p["link_up"]),
            dcbx(p),
            mode(&p["mode"]),
            p["neighbors"].to_string(),
            apply(&p["hardware"]),
            health.next().cloned().unwrap_or_else(|| "ok".into()),
        ]);
        // Each further problem on a line of its own, under HEALTH.
        for more in health {
            let mut row: [String; 7] = Default::default();
            row[6] = more.clone();
            t.row(row);
        }
    }
    emit(&(head + &t.render_within(100) + &roce_table(&v)))
}

/// The RoCE host settings of the ports that have an RDMA device or configure one:
/// what the file asks, what the host holds, how it stands.
fn roce_table(v: &Value) -> String {
    let mut t = Table::new(["PORT", "ROCE SETTING", "CONFIGURED", "HOST", "STATE"]);
    let mut rows = 0;
    for p in arr(&v["ports"]) {
        let Ok(view) = serde_json::from_value::<lossless_node::roce::RoceView>(p["roce"].clone())
        else {
            continue;
        };
        let port = s(&p["port"]);
        let dev = view
            .rdma_device
            .as_ref()
            .map(|d| format!("{d}/{}", view.rdma_port.unwrap_or(1)));
        for st in &view.settings {
            if dev.is_none() && st.configured.is_none() {
                continue;
            }
            let name = match &dev {
                Some(d) => format!("{port} ({d})"),
                None => port.clone(),
            };
            let state = match &st.refused {
                Some(why) => format!("{}: {why}", st.state),
                None => st.state.replace('_', " "),
            };
            t.row([
                name,
                st.key.clone(),
                st.configured.clone().unwrap_or_else(|| "-".into()),
                st.held.clone().unwrap_or_else(|| "-".into()),
                state,
            ]);
            rows += 1;
        }
    }
    if rows == 0 {
        return String::new();
    }
    format!("\n{}", t.render_within(120))
}

/// Whether DCBX runs: `active`, `inactive` (link down), `disabled` (the file's
/// `dcbx.enabled`), or off because LLDP does not run both ways.
fn dcbx(p: &Value) -> String {
    let admin = s(&p["admin_status"]);
    if !b(&p["dcbx_enabled"]) {
        "disabled".into()
    } else if admin != "rxtx" {
        format!("off (lldp {admin})")
    } else if b(&p["dcbx_active"]) {
        "active".into()
    } else {
        "inactive".into()
    }
}

/// `ieee`, `cee`, or with `(auto)` when the version is the peer's choice.
fn mode(m: &Value) -> String {
    match m["configured"].as_str() {
        Some("auto") => format!("{} (auto)", s(&m["running"])),
        _ => s(&m["running"]),
    }
}

/// What reaches the NIC (`apply`): `none`, or dcbnl's state; why it fails is in HEALTH.
fn apply(h: &Value) -> String {
    match h["mode"].as_str() {
        Some("report_only") => "none".into(),
        Some("probing") => "probing".into(),
        Some("dcbnl") if h["error"].is_string() => "dcbnl failed".into(),
        Some("dcbnl") => "dcbnl".into(),
        Some("unsupported") => "no dcbnl".into(),
        _ => h.to_string(),
    }
}

pub fn neighbors(args: PortArgs) -> Result<(), CliError> {
    let socket = &args.socket.path;
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
    // As a switch shows its LLDP neighbours: who (system name), which port of it
    // (port id and description), then the MSAP's chassis and what it speaks.
    let mut t = Table::new([
        "PORT",
        "SYSTEM",
        "PORT ID",
        "PORT DESCR",
        "CHASSIS",
        "MAC",
        "TTL",
        "EXPIRES",
        "DCBX",
        "ROLE",
    ]);
    for p in arr(&v["ports"]) {
        for n in arr(&p["neighbors"]) {
            t.row([
                s(&p["port"]),
                s(&n["system_name"]),
                s(&n["port_id"]),
                s(&n["port_description"]),
                s(&n["chassis_id"]),
                s(&n["mac"]),
                n["ttl"].to_string(),
                format!("{:.0}s", n["expires_in_s"].as_f64().unwrap_or_default()),
                s(&n["dcbx"]),
                role(n),
            ]);
        }
    }
    emit(&t.render())
}

/// A neighbour's part in the multiple-neighbour rule: `negotiated`, `holding 12s`,
/// `set aside`, `alone`.
fn role(n: &Value) -> String {
    match (n["role"].as_str(), n["holds_port_s"].as_f64()) {
        (Some("holding"), Some(left)) => format!("holding {left:.0}s"),
        (Some(r), _) => r.replace('_', " "),
        (None, _) => "-".into(),
    }
}

pub fn counters(args: PortArgs) -> Result<(), CliError> {
    let socket = &args.socket.path;
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
        "HOLD-EXP",
        "DCBX-IN",
        "SEQ-CHG",
        "PEER-LOSS",
        "TX-ERR",
        "MACCTL",
        "K-DROP",
        "BUDGET",
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
            l["neighbor_hold_expiries"].to_string(),
            d["tlvs_in"].to_string(),
            d["seq_changes"].to_string(),
            d["peer_losses"].to_string(),
            io["tx_errors"].to_string(),
            io["mac_control_rx"].to_string(),
            // Absent from an older daemon's answer.
            io.get("kernel_drops").map_or("-".into(), Value::to_string),
            io.get("rx_over_budget")
                .map_or("-".into(), Value::to_string),
        ]);
    }
    let mut text = t.render();
    // K-DROP is what a port's own socket dropped; the ports without one share two.
    if let Some(shared) = v.get("shared_socket") {
        text.push_str(&format!(
            "shared packet sockets: {} frames dropped by the kernel, receive buffer {} bytes\n",
            shared["kernel_drops"], shared["rcvbuf_bytes"]
        ));
    }
    emit(&text)
}

pub fn events(args: EventsArgs) -> Result<(), CliError> {
    let socket = &args.socket.path;
    let mut c = connect(socket)?;
    let v = c
        .call(&Request::Events {
            follow: args.follow,
        })
        .map_err(|e| CliError::failure("events", e))?;
    for e in arr(&v["events"]) {
        emit(&event_line(e, args.json))?;
    }
    if args.follow {
        while let Some(e) = c.next_event().map_err(|e| CliError::failure("events", e))? {
            emit(&event_line(&e, args.json))?;
        }
    }
    Ok(())
}

fn event_line(e: &Value, json: bool) -> String {
    if json {
        return format!("{e}\n");
    }
    let mut rest = e.clone();
    let mut take = |k: &str| rest.as_object_mut().and_then(|o| o.remove(k));
    let time = take("time").and_then(|t| t.as_f64()).unwrap_or_default();
    let time = event_time(time);
    let port = take("port").map(|p| s(&p)).unwrap_or_default();
    let kind = take("event").map(|p| s(&p)).unwrap_or_default();
    let detail = lossless_node::event_words::event_words(&rest);
    format!("{time} {port:<10} {kind:<28} {detail}\n")
}

/// An event's time (seconds since the epoch, as the JSON has it) as the daemon's log
/// lines write theirs: RFC 3339 in UTC, to the millisecond.
fn event_time(unix: f64) -> String {
    let at = std::time::Duration::try_from_secs_f64(unix.max(0.0)).unwrap_or_default();
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + at).to_string()
}

pub fn reload(args: JsonArg) -> Result<(), CliError> {
    let socket = &args.socket.path;
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
    let mut text = format!(
        "reloaded {}: changed {}; added {}; removed {}; unchanged {}\n",
        v["config"].as_str().unwrap_or("(defaults)"),
        names("changed"),
        names("added"),
        names("removed"),
        v["unchanged"]
    );
    // Each runtime change that runs instead of the file's value, on a line of its own.
    for s in arr(&v["shadowed"]) {
        text.push_str(&format!("{}\n", s["message"].as_str().unwrap_or_default()));
    }
    emit(&text)
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

pub(crate) fn b(v: &Value) -> bool {
    v.as_bool().unwrap_or(false)
}

pub(crate) fn yn(v: &Value) -> String {
    if b(v) { "yes" } else { "no" }.into()
}

pub(crate) fn opt_yn(v: &Value) -> String {
    match v.as_bool() {
        Some(true) => "yes".into(),
        Some(false) => "no".into(),
        None => "-".into(),
    }
}

fn updown(v: &Value) -> String {
    if b(v) { "up" } else { "down" }.into()
}

//! Commands that talk to a running losslessd over its control socket:
//! `status`, `neighbors`, `counters`, `events`, `reload` (`dcbx` is in dcbx.rs).
//! Every command has `--json` (the daemon's result object, schema in
//! docs/daemon.md); the default is an aligned table.

use std::path::{Path, PathBuf};

use lossless_client::{Client, ClientError};
use lossless_dcbx::lldp::rx::NeighborSummary;
use lossless_dcbx::status::ModeStatus;
use lossless_dcbx::{AdminStatus, DcbxMode};
use lossless_proto::{
    CountersResult, EventRecord, Hardware, PortNeighbors, PortSummary, Ports, ReloadResult,
    Request, StateDirReason, StatusResult,
};
use serde::Deserialize;
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
          default_value = lossless_proto::DEFAULT_SOCKET, help = SOCKET_HELP,
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

/// A client's error as the CLI reports it: the daemon's refusal of the input (no such
/// port, a bad request) is the user's (exit 2), anything else a failure (exit 1).
fn client_error(what: &str, e: ClientError) -> CliError {
    match e {
        ClientError::Daemon(body) => {
            use lossless_proto::ErrorKind as K;
            match body.kind {
                K::NoSuchPort | K::InvalidConfig | K::BadRequest => {
                    CliError::input(what.to_string(), body.message)
                }
                _ => CliError::failure(what.to_string(), body.message),
            }
        }
        e => CliError::failure(what.to_string(), e),
    }
}

/// Connects and asks with one of the client's typed methods.
pub(crate) fn ask<T>(
    socket: &Path,
    what: &str,
    f: impl FnOnce(&mut Client) -> Result<T, ClientError>,
) -> Result<T, CliError> {
    let mut c = connect(socket)?;
    f(&mut c).map_err(|e| client_error(what, e))
}

pub(crate) fn call(socket: &Path, what: &str, req: &Request) -> Result<Value, CliError> {
    let mut c = connect(socket)?;
    let v = c.call(req).map_err(|e| client_error(what, e))?;
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

/// Sends `req` and reads its result as the view `T` the request answers with; the
/// daemon's JSON comes back too, as it was sent (what `--json` prints).
pub(crate) fn call_typed<T: serde::de::DeserializeOwned>(
    socket: &Path,
    what: &str,
    req: &Request,
) -> Result<(Value, T), CliError> {
    let v = call(socket, what, req)?;
    let t = T::deserialize(&v).map_err(|e| {
        CliError::failure(
            what.to_string(),
            format!("the daemon's answer does not read as this version's view: {e}"),
        )
    })?;
    Ok((v, t))
}

pub fn status(args: JsonArg) -> Result<(), CliError> {
    let socket = &args.socket.path;
    let (v, st): (Value, StatusResult) = call_typed(socket, "status", &Request::Status)?;
    if args.json {
        return print_json(&v);
    }
    let d = &st.daemon;
    let head = format!(
        "losslessd {} pid {}, up {:.0} s, start #{}, config {}, state {}\n",
        d.version,
        d.pid,
        d.uptime_s,
        d.boots,
        d.config.as_deref().unwrap_or("(none: defaults)"),
        d.state_dir,
    );
    let head = match &d.config_refused {
        Some(why) => {
            format!("{head}config refused at the last reload, the one before it runs: {why}\n")
        }
        None => head,
    };
    let head = match &d.state_problem {
        Some(p) if p.reason == StateDirReason::NotDurable => {
            format!("{head}state directory: {}\n", p.message)
        }
        Some(p) => format!(
            "{head}state directory: {}: runtime changes are refused\n",
            p.message
        ),
        None => head,
    };
    let head = match &d.state_set_aside {
        Some(s) => format!(
            "{head}state file refused at start ({}), {}: running on the configuration file\n",
            s.why,
            match &s.moved_to {
                Some(to) => format!("moved to {to}"),
                None => "left in place".to_string(),
            }
        ),
        None => head,
    };
    // The daemon's own problems no port row shows (an interface named on the command
    // line that does not exist, a section matching nothing, no port at all): the
    // rows alone would all say ok.
    let mut head = head;
    for problem in &st.health.problems {
        let a_ports = st
            .ports
            .iter()
            .any(|p| problem.starts_with(&format!("{}: ", p.summary.port)));
        let in_head = [
            "the configuration file was refused",
            "state directory (",
            "state file refused",
        ]
        .iter()
        .any(|start| problem.starts_with(start));
        if !a_ports && !in_head {
            head.push_str(&format!("not ok: {problem}\n"));
        }
    }
    let mut t = Table::new(["PORT", "LINK", "DCBX", "MODE", "NBRS", "APPLY", "HEALTH"]);
    for p in &st.ports {
        let sum = &p.summary;
        let mut health = p.health.problems.iter();
        t.row([
            sum.port.clone(),
            updown(sum.link_up),
            dcbx(sum),
            mode(&p.mode),
            sum.neighbors.to_string(),
            apply(&sum.hardware),
            health.next().cloned().unwrap_or_else(|| "ok".into()),
        ]);
        // Each further problem on a line of its own, under HEALTH.
        for more in health {
            let mut row: [String; 7] = Default::default();
            row[6] = more.clone();
            t.row(row);
        }
    }
    emit(&(head + &t.render_within(100) + &roce_table(&st)))
}

/// The RoCE host settings of the ports that have an RDMA device or configure one:
/// what the file asks, what the host holds, how it stands.
fn roce_table(st: &StatusResult) -> String {
    let mut t = Table::new(["PORT", "ROCE SETTING", "CONFIGURED", "HOST", "STATE"]);
    let mut rows = 0;
    for p in &st.ports {
        let view = &p.summary.roce;
        let port = p.summary.port.clone();
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
fn dcbx(p: &PortSummary) -> String {
    if !p.dcbx_enabled {
        "disabled".into()
    } else if p.admin_status != AdminStatus::RxTx {
        format!("off (lldp {})", admin_name(p.admin_status))
    } else if p.dcbx_active {
        "active".into()
    } else {
        "inactive".into()
    }
}

/// LLDP's admin status as the JSON (and the file) names it.
fn admin_name(a: AdminStatus) -> String {
    serde_json::to_value(a)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// `ieee`, `cee`, or with `(auto)` when the version is the peer's choice.
fn mode(m: &ModeStatus) -> String {
    let running = m.running.name();
    match m.configured {
        DcbxMode::Auto => format!("{running} (auto)"),
        _ => running.into(),
    }
}

/// What reaches the NIC (`apply`): `none`, or dcbnl's state; why it fails is in HEALTH.
fn apply(h: &Hardware) -> String {
    match h {
        Hardware::ReportOnly => "none".into(),
        Hardware::Probing => "probing".into(),
        Hardware::Dcbnl { error: Some(_), .. } => "dcbnl failed".into(),
        Hardware::Dcbnl { error: None, .. } => "dcbnl".into(),
        Hardware::Unsupported { .. } => "no dcbnl".into(),
    }
}

pub fn neighbors(args: PortArgs) -> Result<(), CliError> {
    let socket = &args.socket.path;
    let (v, nb): (Value, Ports<PortNeighbors>) = call_typed(
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
    let dash = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    for p in &nb.ports {
        for n in &p.neighbors {
            t.row([
                p.port.clone(),
                dash(&n.system_name),
                n.port_id.clone(),
                dash(&n.port_description),
                n.chassis_id.clone(),
                n.mac.to_string(),
                n.ttl.to_string(),
                format!("{:.0}s", n.expires_in_s),
                n.dcbx.to_string(),
                role(n),
            ]);
        }
    }
    emit(&t.render())
}

/// A neighbour's part in the multiple-neighbour rule: `negotiated`, `holding 12s`,
/// `set aside`, `alone`.
fn role(n: &NeighborSummary) -> String {
    match (&*n.role, n.holds_port_s) {
        ("holding", Some(left)) => format!("holding {left:.0}s"),
        (r, _) => r.replace('_', " "),
    }
}

pub fn counters(args: PortArgs) -> Result<(), CliError> {
    let socket = &args.socket.path;
    let (v, c): (Value, CountersResult) = call_typed(
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
    for p in &c.ports {
        let (l, d, io) = (&p.lldp, &p.dcbx, &p.io);
        t.row([
            p.port.clone(),
            l.frames_out.to_string(),
            l.frames_in.to_string(),
            l.frames_in_errors.to_string(),
            l.frames_discarded.to_string(),
            l.tlvs_discarded.to_string(),
            l.tlvs_unrecognized.to_string(),
            l.ageouts.to_string(),
            l.neighbor_hold_expiries.to_string(),
            d.tlvs_in.to_string(),
            d.seq_changes.to_string(),
            d.peer_losses.to_string(),
            io.tx_errors.to_string(),
            io.mac_control_rx.to_string(),
            io.kernel_drops.to_string(),
            io.rx_over_budget.to_string(),
        ]);
    }
    let mut text = t.render();
    // K-DROP is what a port's own socket dropped; the ports without one share two.
    if let Some(shared) = &c.shared_socket {
        text.push_str(&format!(
            "shared packet sockets: {} frames dropped by the kernel, receive buffer {} bytes\n",
            shared.kernel_drops,
            shared
                .rcvbuf_bytes
                .map_or_else(|| "null".to_string(), |b| b.to_string())
        ));
    }
    emit(&text)
}

pub fn events(args: EventsArgs) -> Result<(), CliError> {
    let socket = &args.socket.path;
    let mut c = connect(socket)?;
    // Each event on its own: one of a kind this CLI does not know (a newer daemon's;
    // additions are allowed) is shown as it came, never fails the others.
    let show = |raw: &Value| -> Result<(), CliError> {
        if args.json {
            emit(&format!("{raw}\n"))
        } else {
            emit(&event_line(raw))
        }
    };
    let v = c
        .call(&Request::Events {
            follow: args.follow,
        })
        .map_err(|e| CliError::failure("events", e))?;
    for raw in v
        .get("events")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        show(raw)?;
    }
    if args.follow {
        while let Some(e) = c.next_event().map_err(|e| CliError::failure("events", e))? {
            show(&e)?;
        }
    }
    Ok(())
}

/// A line of `events --follow`: an event, or the daemon saying the subscriber fell
/// behind.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Streamed {
    Record(EventRecord),
    Lagged { missed: u64 },
}

/// `time port kind detail`, the detail each field of the event as `key=value`
/// ([`lossless_node::event_words`]). A line this version's types do not read (a
/// newer daemon's event) is shown from its JSON by the same words.
fn event_line(raw: &Value) -> String {
    let (time, port, mut body) = match Streamed::deserialize(raw) {
        Ok(Streamed::Record(r)) => (
            r.time,
            r.port,
            serde_json::to_value(&r.event).unwrap_or_default(),
        ),
        Ok(Streamed::Lagged { missed }) => {
            // The daemon stamps no time on it: when this CLI read it.
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let time = event_time(now);
            return format!("{time} {:<10} {:<28} missed={missed}\n", "", "lagged");
        }
        Err(_) => {
            let mut body = raw.clone();
            let obj = body.as_object_mut();
            let time = obj
                .as_ref()
                .and_then(|o| o.get("time"))
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let port = obj
                .and_then(|o| o.remove("port"))
                .and_then(|p| p.as_str().map(str::to_owned))
                .unwrap_or_default();
            if let Some(o) = body.as_object_mut() {
                o.remove("time");
            }
            (time, port, body)
        }
    };
    let time = event_time(time);
    let kind = body
        .as_object_mut()
        .and_then(|o| o.remove("event"))
        .and_then(|k| k.as_str().map(str::to_owned))
        .unwrap_or_default();
    let detail = lossless_node::event_words::event_words(&body);
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
    let (v, r): (Value, ReloadResult) = call_typed(socket, "reload", &Request::Reload)?;
    if args.json {
        return print_json(&v);
    }
    let names = |l: &[String]| {
        if l.is_empty() {
            "-".into()
        } else {
            l.join(", ")
        }
    };
    let mut text = format!(
        "reloaded {}: changed {}; added {}; removed {}; unchanged {}\n",
        r.config.as_deref().unwrap_or("(defaults)"),
        names(&r.changed),
        names(&r.added),
        names(&r.removed),
        r.unchanged
    );
    // Each runtime change that runs instead of the file's value, on a line of its own.
    for s in &r.shadowed {
        text.push_str(&format!("{}\n", s.message));
    }
    emit(&text)
}

fn updown(up: bool) -> String {
    if up { "up" } else { "down" }.into()
}

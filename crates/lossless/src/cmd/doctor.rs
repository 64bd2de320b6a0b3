//! `lossless doctor [PORT] [--json]`: one verdict on a RoCE host. This module gathers
//! the facts (the running daemon's answers, the RoCE host settings under the sysfs
//! root through lossless-host, the NIC's DCB state through dcbnl, the netdev's MTU, the
//! driver's ethtool statistics); `lossless_node::doctor` judges them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lossless_client::Client;
use lossless_node::doctor::{
    check_port, Daemon, DaemonPort, GivenClass, NicFacts, PortFacts, Report, Status,
};
use lossless_node::hardware::{DcbBuffer, IeeePfc, NicState};
use lossless_node::protocol::Request;
use lossless_node::roce::Reading;
use lossless_sys::dcbnl::{self as sys_dcb, DcbErrorKind, Dcbnl};
use lossless_sys::ethtool::EthtoolStats;
use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::AppPriority;
use serde::Deserialize;
use serde_json::Value;

use super::daemon::SocketArg;
use super::table::Table;
use crate::error::CliError;
use crate::out::emit;

pub const LONG_ABOUT: &str = "\
Checks a RoCE host end to end, one line per check and port: ok, problem or unknown, with \
the evidence and the command that fixes it. With a running losslessd it also checks what \
only the daemon knows (the DCBX agreement with the peer, the peer's TLVs, the headroom \
measured, the PFC watchdog); without one, the host's own settings. A fact that cannot be \
read makes its check unknown, with why; never ok.";

pub const AFTER_HELP: &str = "\
Examples:
  lossless doctor                        every port of the running losslessd (without one: every
                                         netdev with an RDMA device)
  lossless doctor enp65s0f0np0           one port
  lossless doctor --json | jq '.checks[] | select(.status != \"ok\")'
  lossless doctor --sysfs /host/sys      the host's /sys mounted elsewhere (a container)
  lossless doctor --priority 3 --dscp af31   RoCE's class when neither the daemon nor the
                                         NIC's APP table says it

The checks, per port:
  roce_class    RoCE's priority and DSCP, and where they were read: the APP entries of the
                configuration losslessd runs, else the NIC's APP table, else --priority/--dscp
  dcbx          DCBX agreed with the peer (or static mode)
  pfc           PFC on RoCE's priority here and at the peer
  app           RoCE's DSCP and UDP 4791 map to that priority (in operation; the peer's too)
  nic           the NIC holds PFC and the DSCP entry (dcbnl read-back)
  trust         the NIC classifies by DSCP
  tos           RDMA CM's default ToS (and the verbs traffic class) carry RoCE's DSCP
  roce_mode     RDMA CM's default RoCE mode is RoCE v2
  ecn           ECN (DCQCN) on RoCE's priority at the reaction and notification points
  cnp           CNPs leave on a priority without PFC, in a strict class
  global_pause  802.3x link pause off
  fw_agent      no NIC firmware LLDP/DCBX agent competing with the host's
  mtu           the MTU against the peer's maximum frame size and the headroom's max_frame
  headroom      the buffer holds the headroom the link needs (measured by losslessd)
  watchdog      the PFC storm watchdog is on and sees counters
  discards      no frames discarded on a PFC priority (ethtool per-priority statistics)

--json: {\"ok\": bool, \"checks\": [{\"port\", \"check\", \"status\", \"evidence\", \"fix\"}], \"daemon\",
\"sysfs\"}; status is ok, problem or unknown, fix null when ok.
The host is read under --sysfs (configfs at PATH/kernel/config, debugfs at
PATH/kernel/debug), as losslessd --sysfs. Run as root in the ports' network namespace:
dcbnl and ethtool need it.
Exit status: 0 every check ok, 1 a problem, 2 no problem but something could not be
checked (or nothing to check, or bad usage).";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only this port (default: the daemon's ports; without a daemon, every netdev with
    /// an RDMA device under the sysfs root).
    pub port: Option<String>,
    /// {"ok", "checks": [...]} instead of the table.
    #[arg(short = 'j', long)]
    pub json: bool,
    /// The sysfs root the host is read under: configfs at PATH/kernel/config, debugfs at
    /// PATH/kernel/debug.
    #[arg(long, value_name = "PATH", default_value = "/sys", value_hint = clap::ValueHint::DirPath)]
    pub sysfs: PathBuf,
    /// RoCE's priority (0..=7), when neither the daemon nor the NIC's APP table gives it.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=7))]
    pub priority: Option<u8>,
    /// RoCE's DSCP (0..=63 or a name: af31, cs6, ...), with --priority.
    #[arg(long, requires = "priority", value_parser = parse_dscp)]
    pub dscp: Option<u8>,
    #[command(flatten)]
    pub socket: SocketArg,
}

fn parse_dscp(s: &str) -> Result<u8, String> {
    match super::dscp::parse(s) {
        Some(v) if v < 64 => Ok(v as u8),
        Some(v) => Err(format!("{v}: a DSCP has 6 bits (0..=63)")),
        None => Err(format!(
            "{s:?}: not a DSCP (a number 0..=63, or af31, ef, cs6, ...)"
        )),
    }
}

pub fn run(args: Args) -> ExitCode {
    match gather_and_judge(&args) {
        Ok((report, text)) => match emit(&text) {
            Ok(()) => ExitCode::from(report.exit_code()),
            Err(e) => e.report(),
        },
        Err(e) => e.report(),
    }
}

/// The daemon's answers, once for every port.
struct Answers {
    words: String,
    /// The ports losslessd manages, from `status`.
    ports: Vec<String>,
    status: Value,
    dcbx: Value,
    headroom: Option<Value>,
    pfc: Option<Value>,
    neighbors: Option<Value>,
}

fn ask(socket: &Path) -> Result<Answers, String> {
    let mut c = Client::connect(socket).map_err(|e| e.to_string())?;
    let status = c.call(&Request::Status).map_err(|e| e.to_string())?;
    let dcbx = c
        .call(&Request::DcbxShow { port: None })
        .map_err(|e| e.to_string())?;
    // Absent from an older daemon: those checks are then unknown.
    let headroom = c.call(&Request::HeadroomShow { port: None }).ok();
    let pfc = c.call(&Request::PfcShow { port: None }).ok();
    let neighbors = c.call(&Request::Neighbors { port: None }).ok();
    // Read once; a status that does not read is said, not taken for "no ports"
    // (which would send the operator to add a section the daemon already has).
    let line = StatusLine::deserialize(&status)
        .map_err(|e| format!("losslessd's status could not be read: {e}"))?;
    let words = format!(
        "losslessd {} pid {} on {}",
        line.daemon.version.as_deref().unwrap_or("?"),
        line.daemon.pid.map_or("?".to_string(), |p| p.to_string()),
        socket.display()
    );
    Ok(Answers {
        words,
        ports: line.ports.into_iter().map(|p| p.port).collect(),
        status,
        dcbx,
        headroom,
        pfc,
        neighbors,
    })
}

/// What doctor reads of `status` itself (the rest goes to the checks' facts): typed,
/// and every field optional, so a daemon older or newer than this CLI still reads.
#[derive(Debug, Default, serde::Deserialize)]
struct StatusLine {
    #[serde(default)]
    daemon: DaemonLine,
    #[serde(default)]
    ports: Vec<PortLine>,
}

#[derive(Debug, Default, serde::Deserialize)]
struct DaemonLine {
    version: Option<String>,
    pid: Option<u32>,
}

#[derive(Debug, serde::Deserialize)]
struct PortLine {
    port: String,
}

/// The netdevs under the root that have an RDMA device.
fn rdma_netdevs(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(root.join("class/net"))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            std::fs::read_dir(e.path().join("device/infiniband"))
                .is_ok_and(|mut d| d.next().is_some())
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn gather_and_judge(args: &Args) -> Result<(Report, String), CliError> {
    let socket = &args.socket.path;
    let root = &args.sysfs;
    let answers = ask(socket);
    let daemon_ports = answers
        .as_ref()
        .map(|a| a.ports.clone())
        .unwrap_or_default();
    let ports = match &args.port {
        Some(p) => {
            if !daemon_ports.contains(p) && !root.join("class/net").join(p).exists() {
                return Err(CliError::input(
                    "doctor",
                    format!(
                        "{p}: no such port ({} does not exist{})",
                        root.join("class/net").join(p).display(),
                        match &answers {
                            Ok(_) => ", and losslessd does not manage it",
                            Err(_) => "",
                        }
                    ),
                ));
            }
            vec![p.clone()]
        }
        None if !daemon_ports.is_empty() => daemon_ports.clone(),
        None => rdma_netdevs(root),
    };
    if ports.is_empty() {
        return Err(CliError::input(
            "doctor",
            format!(
                "nothing to check: {}, and no netdev under {} has an RDMA device; name a port \
                 (lossless doctor PORT)",
                match &answers {
                    Ok(a) => format!("{} manages no port", a.words),
                    Err(e) => format!("no daemon answers on {} ({e})", socket.display()),
                },
                root.join("class/net").display()
            ),
        ));
    }
    let mut host = lossless_host::Host::new(root);
    let mut dcbnl = Dcbnl::open().map_err(|e| e.to_string());
    let stats = EthtoolStats::open().map_err(|e| e.to_string());
    let given = args.priority.map(|priority| GivenClass {
        priority,
        dscp: args.dscp,
    });
    let mut checks = Vec::new();
    for port in &ports {
        let daemon = match &answers {
            Err(e) => Daemon::Without {
                why: format!("no daemon answers on {} ({e})", socket.display()),
                fix: "start losslessd (systemctl start losslessd), or give its socket with \
                      --socket"
                    .into(),
            },
            Ok(a) if !daemon_ports.contains(port) => Daemon::Without {
                why: format!(
                    "{} does not manage {port} (it manages: {})",
                    a.words,
                    if daemon_ports.is_empty() {
                        "none".to_string()
                    } else {
                        daemon_ports.join(", ")
                    }
                ),
                fix: format!(
                    "add [ports.\"{port}\"] to losslessd's configuration, then `lossless reload`"
                ),
            },
            Ok(a) => match DaemonPort::from_answers(
                port,
                a.words.clone(),
                &a.status,
                &a.dcbx,
                a.headroom.as_ref(),
                a.pfc.as_ref(),
                a.neighbors.as_ref(),
            ) {
                Ok(d) => Daemon::Port(Box::new(d)),
                Err(e) => Daemon::Without {
                    why: format!("losslessd's answer could not be read: {e}"),
                    fix: format!("lossless dcbx show {port} --json"),
                },
            },
        };
        let facts = PortFacts {
            port: port.clone(),
            sysfs: root.display().to_string(),
            host: host.read(port),
            nic: nic(&mut dcbnl, port),
            mtu: mtu(root, port),
            stats: statistics(&stats, port),
            daemon,
            given,
        };
        checks.extend(check_port(&facts));
    }
    let report = Report::new(checks);
    let daemon_words = answers.as_ref().map(|a| a.words.clone()).ok();
    let text = if args.json {
        let mut v = serde_json::to_value(&report).map_err(|e| CliError::failure("json", e))?;
        v["daemon"] = daemon_words.map_or(Value::Null, Value::String);
        v["sysfs"] = Value::String(root.display().to_string());
        let mut s = serde_json::to_string_pretty(&v).map_err(|e| CliError::failure("json", e))?;
        s.push('\n');
        s
    } else {
        let head = match (&answers, daemon_words) {
            (_, Some(w)) => format!("{w}; the host under {}\n", root.display()),
            (Err(e), None) => format!(
                "no daemon answers on {} ({e}): the host's own settings only, under {}\n",
                socket.display(),
                root.display()
            ),
            (Ok(_), None) => String::new(),
        };
        head + &render(&report)
    };
    Ok((report, text))
}

/// The table: a row per check, its fix on a row of its own under the evidence.
pub fn render(r: &Report) -> String {
    let mut t = Table::new(["PORT", "CHECK", "STATUS", "EVIDENCE"]);
    for c in &r.checks {
        t.row([
            c.port.clone(),
            c.check.clone(),
            c.status.word().to_string(),
            c.evidence.clone(),
        ]);
        if let Some(fix) = &c.fix {
            t.row([
                String::new(),
                String::new(),
                String::new(),
                format!("fix: {fix}"),
            ]);
        }
    }
    let n = |s: Status| r.count(s);
    let plural = |n: usize, w: &str| {
        if n == 1 {
            w.to_string()
        } else {
            format!("{w}s")
        }
    };
    format!(
        "{}{} checks: {} ok, {} {}, {} unknown\n",
        t.render_within(120),
        r.checks.len(),
        n(Status::Ok),
        n(Status::Problem),
        plural(n(Status::Problem), "problem"),
        n(Status::Unknown)
    )
}

/// What dcbnl says the NIC holds.
fn nic(dcbnl: &mut Result<Dcbnl, String>, port: &str) -> Reading<NicFacts> {
    let d = match dcbnl {
        Ok(d) => d,
        Err(e) => return Reading::Failed(format!("dcbnl socket: {e}")),
    };
    match d.get_ieee_state(port) {
        Ok(s) => Reading::Value(nic_facts(s)),
        Err(e) if e.kind() == DcbErrorKind::Unsupported => Reading::NotExposed(e.to_string()),
        Err(e) => Reading::Failed(e.to_string()),
    }
}

fn app(a: sys_dcb::DcbApp) -> AppPriority {
    AppPriority {
        priority: a.priority,
        selector: lossless_wire::ieee::Selector(a.selector.0),
        protocol: a.protocol,
    }
}

/// `DCB_CMD_IEEE_GET` as the node's NIC state (as losslessd's convert.rs reads it),
/// with the peer's objects.
fn nic_facts(s: sys_dcb::IeeeState) -> NicFacts {
    NicFacts {
        peer_pfc: s.peer_pfc.map(|p| PriorityMap(p.enabled)),
        peer_apps: s
            .peer_apps
            .clone()
            .map(|v| v.into_iter().map(app).collect()),
        state: NicState {
            ets: s.ets.map(|e| lossless_wire::ieee::EtsTable {
                prio_tc: e.prio_tc,
                tc_bw: e.tc_tx_bw,
                tsa: e.tc_tsa.map(|t| lossless_wire::ieee::Tsa(t.0)),
            }),
            pfc: s.pfc.map(|p| IeeePfc {
                cap: p.cap,
                enabled: p.enabled,
                mbc: p.mbc,
                delay: p.delay,
                requests: p.requests,
                indications: p.indications,
            }),
            apps: s.apps.into_iter().map(app).collect(),
            trust: s.trust.map(|t| t.into_iter().map(|sel| sel.0).collect()),
            buffer: s.buffer.map(|b| DcbBuffer {
                prio2buffer: b.prio2buffer,
                buffer_size: b.buffer_size,
                total_size: b.total_size,
            }),
            dcbx: s.dcbx.map(|m| m.0),
            cee: None,
        },
    }
}

/// `class/net/IF/mtu` under the root.
fn mtu(root: &Path, port: &str) -> Reading<u32> {
    let path = root.join("class/net").join(port).join("mtu");
    match std::fs::read_to_string(&path) {
        Ok(t) => match t.trim().parse() {
            Ok(v) => Reading::Value(v),
            Err(_) => Reading::Failed(format!("{} holds {t:?}: not an MTU", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Reading::NotExposed(format!("{} does not exist", path.display()))
        }
        Err(e) => Reading::Failed(format!("reading {}: {e}", path.display())),
    }
}

/// The driver's statistics (`ethtool -S`).
fn statistics(stats: &Result<EthtoolStats, String>, port: &str) -> Reading<Vec<(String, u64)>> {
    let s = match stats {
        Ok(s) => s,
        Err(e) => return Reading::Failed(format!("ethtool socket: {e}")),
    };
    let read = || -> std::io::Result<Vec<(String, u64)>> {
        let n = s.count(port)?;
        let names = s.names(port, n)?;
        let mut buf = Vec::new();
        let values = s.values(port, n, &mut buf)?;
        Ok(names.into_iter().zip(values.iter().copied()).collect())
    };
    match read() {
        Ok(v) => Reading::Value(v),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            Reading::NotExposed(format!("the driver has no statistics ({e})"))
        }
        Err(e) => Reading::Failed(format!("ethtool -S {port}: {e}")),
    }
}

//! `lossless profile roce`: the usual RoCEv2 lossless configuration, as a section of
//! losslessd's configuration file or applied to a running daemon.
//!
//! What it configures (docs/config.md, "RoCEv2 profile"):
//!
//! * PFC on the data priority only (3): RoCEv2 needs a lossless class, and only one;
//! * three traffic classes: TC 1 the data priority with its ETS share (50 %), TC 2 the
//!   CNP priority (6) strict, so that congestion notifications never wait behind data
//!   PFC has paused; TC 0 every other priority, ETS with the rest;
//! * APP: DSCP 26 (AF31) -> 3 for data, DSCP 48 (CS6) -> 6 for CNPs, UDP 4791 -> 3
//!   (the NIC classifies RoCEv2 by its UDP port where it cannot by DSCP);
//! * CEE DCBX's priority groups the same way (data PG 1, CNP strict PG 15), so a port
//!   that falls back to CEE DCBX runs the same classes;
//! * willing: yes. A host's port faces a switch that owns the fabric's QoS and pushes
//!   it; these values are what the port runs when the switch sends none. `--willing
//!   no` is for a port that must impose them (host to host, or a willing switch).
//!
//! The printed section goes through losslessd's own configuration reader before it
//! is printed, and `--apply-to-daemon` sends the same values as `dcbx set` changes,
//! so the file, the socket and this command follow one set of rules.

use std::path::Path;

use clap::ValueEnum;
use lossless_node::config::{AppRule, AppRules, DaemonConfig, RuleSelector};
use lossless_node::protocol::{EtsChange, FeatureChange, FeatureName, Request, TcChange};
use lossless_proto::{Changed, DcbxView, Hardware, StatusResult};
use lossless_wire::app_name::{self, AppMatch};
use lossless_wire::cee::{PriorityMap, DCBX_OUI};
use lossless_wire::ieee::Tsa;

use crate::cmd::daemon::{call_typed, print_json};
use crate::cmd::dcbx::YesNo;
use crate::cmd::dscp;
use crate::error::CliError;
use crate::out::emit;

pub const AFTER_HELP: &str = "\
Examples:
  lossless profile roce                                  [defaults] section, priority 3, DSCP 26
  lossless profile roce --port 'enp65s0f*' >> /etc/lossless/losslessd.toml
  lossless profile roce --priority 4 --dscp af41 --cnp-priority 6 --cnp-dscp cs6
  lossless profile roce --port enp65s0f0np0 --apply-to-daemon    the same, to the running daemon
  lossless profile roce --mode lossy                     ECN only, no PFC (a lossy RoCE fabric)

What it writes: PFC on the data priority; ETS traffic classes: TC 1 = data (ETS,
--bandwidth %), TC 2 = CNP (strict), TC 0 = every other priority (ETS, the rest);
APP: DSCP -> priority for data and CNP, UDP 4791 -> data priority (IEEE 802.1Qaz;
CEE DCBX gets the UDP port entry, it has no DSCP selector); CEE DCBX priority
groups to match. The host's RoCE settings beyond DCB (roce.*): RDMA CM's and the
verbs' ToS (the data DSCP with ECT(0)), RoCE v2, ECN on the data priority, the CNP's
DSCP and priority, 802.3x pause off; each written by losslessd only where the host
differs (docs/roce.md). --mode lossy: no PFC, the rest the same. Willing by default: a host's port takes the switch's configuration
when the switch pushes one, these values otherwise (--willing no imposes them).

With --apply-to-daemon the values go to every port of the running losslessd that
--port matches (all of them without --port) as `dcbx set` changes: persisted, they
survive restarts; `lossless dcbx reset PORT` gives the file's values back. The APP
list replaces the port's. Each port's line then says whether the daemon programs
its NIC: with apply = \"none\" (the default) only the DCBX advertisement changes and
the NIC is not programmed (set apply = \"dcbnl\" in the configuration); --json adds
apply, nic_programmed and hardware to each port's object. The roce.* settings are not
runtime changes: put the printed lines in the file and reload.";

#[derive(Debug, clap::Subcommand)]
pub enum ProfileCommand {
    /// RoCEv2 lossless: PFC on one priority, DSCP/UDP 4791 APP entries, ETS classes
    /// for data and CNP.
    ///
    /// Example: lossless profile roce --port 'enp65s0f*'
    #[command(after_help = AFTER_HELP)]
    Roce(RoceArgs),
}

#[derive(Debug, clap::Args)]
pub struct RoceArgs {
    /// The priority of RoCEv2 data: PFC on, its own traffic class.
    #[arg(long, default_value_t = 3, value_name = "0..7")]
    pub priority: u8,
    /// The DSCP RoCEv2 data is marked with (number or name: 26, af31).
    #[arg(long, default_value = "26", value_name = "DSCP")]
    pub dscp: String,
    /// The priority of congestion notification packets (CNP): strict, no PFC.
    #[arg(long, default_value_t = 6, value_name = "0..7")]
    pub cnp_priority: u8,
    /// The DSCP CNPs are marked with (number or name: 48, cs6).
    #[arg(long, default_value = "48", value_name = "DSCP")]
    pub cnp_dscp: String,
    /// The data class's ETS bandwidth share, in percent (the other priorities get the
    /// rest).
    #[arg(long, default_value_t = 50, value_name = "1..99")]
    pub bandwidth: u8,
    /// Take the peer's (switch's) configuration when it pushes one (yes), or impose
    /// this one (no).
    #[arg(long, default_value = "yes", value_name = "yes|no")]
    pub willing: YesNo,
    /// The interfaces: a name or a glob (`enp65s0f*`); without it, `[defaults]` (every
    /// port).
    #[arg(long, value_name = "GLOB")]
    pub port: Option<String>,
    /// lossless: PFC on the data priority, ECN on it too (DCQCN); lossy: ECN only, no
    /// PFC anywhere (for switches that run RoCE lossy). The earlier values auto, ieee and
    /// cee are taken as --dcbx-mode's, with a warning.
    #[arg(long, value_enum, default_value = "lossless")]
    pub mode: ClassMode,
    /// Also set `dcbx.mode` (default: the file's, auto).
    #[arg(long, value_enum)]
    pub dcbx_mode: Option<ModeArg>,
    /// Apply to the running losslessd (its ports that --port matches) instead of
    /// printing; its control socket is LOSSLESS_SOCKET, or the default
    /// /run/lossless/losslessd.sock, unless `--socket PATH` follows this option.
    #[arg(long)]
    pub apply_to_daemon: bool,
    /// The daemon's control socket, with --apply-to-daemon only (so not listed: the
    /// printing form has no daemon).
    #[arg(long, value_name = "PATH", requires = "apply_to_daemon", hide = true)]
    pub socket: Option<std::path::PathBuf>,
    /// With --apply-to-daemon: print each port's new DCBX state as JSON.
    #[arg(short = 'j', long, requires = "apply_to_daemon")]
    pub json: bool,
}

/// How the RoCE class runs (`--mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClassMode {
    Lossless,
    Lossy,
    /// Old spellings of --dcbx-mode.
    #[value(hide = true)]
    Auto,
    #[value(hide = true)]
    Ieee,
    #[value(hide = true)]
    Cee,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Auto,
    Ieee,
    Cee,
}

impl ModeArg {
    fn mode(self) -> lossless_dcbx::DcbxMode {
        match self {
            ModeArg::Auto => lossless_dcbx::DcbxMode::Auto,
            ModeArg::Ieee => lossless_dcbx::DcbxMode::Ieee,
            ModeArg::Cee => lossless_dcbx::DcbxMode::Cee,
        }
    }
}

/// The profile's values, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Roce {
    pub priority: u8,
    pub dscp: u8,
    pub cnp_priority: u8,
    pub cnp_dscp: u8,
    pub bandwidth: u8,
    pub willing: bool,
    pub mode: Option<lossless_dcbx::DcbxMode>,
    /// PFC on the data priority (lossless) or none (lossy: ECN only).
    pub lossless: bool,
}

fn refuse(flag: &str, why: impl std::fmt::Display) -> CliError {
    CliError::input(format!("profile roce: {flag}"), why)
}

fn dscp_arg(flag: &str, text: &str) -> Result<u8, CliError> {
    let v = dscp::parse(text).ok_or_else(|| {
        refuse(
            flag,
            format!(
                "{text:?} is not a DSCP: a number 0..63 or one of {}",
                dscp::names()
            ),
        )
    })?;
    u8::try_from(v).ok().filter(|v| *v <= 63).ok_or_else(|| {
        refuse(
            flag,
            format!("{v} is not a DSCP: the field has 6 bits, 0..63"),
        )
    })
}

impl Roce {
    pub fn from_args(a: &RoceArgs) -> Result<Roce, CliError> {
        for (flag, p) in [
            ("--priority", a.priority),
            ("--cnp-priority", a.cnp_priority),
        ] {
            if p > 7 {
                return Err(refuse(flag, format!("{p} is not a priority: 0..7")));
            }
        }
        if a.priority == a.cnp_priority {
            return Err(refuse(
                "--cnp-priority",
                format!(
                    "{} is also the data priority (--priority): CNPs need a priority of their \
                     own, without PFC, or they wait behind the data they are to slow down",
                    a.cnp_priority
                ),
            ));
        }
        let dscp = dscp_arg("--dscp", &a.dscp)?;
        let cnp_dscp = dscp_arg("--cnp-dscp", &a.cnp_dscp)?;
        if dscp == cnp_dscp {
            return Err(refuse(
                "--cnp-dscp",
                format!(
                    "{} is also the data DSCP (--dscp): a DSCP maps to one priority, so data \
                     and CNPs need different DSCPs",
                    dscp::show(u64::from(cnp_dscp))
                ),
            ));
        }
        if !(1..=99).contains(&a.bandwidth) {
            return Err(refuse(
                "--bandwidth",
                format!(
                    "{} %: the data class and the other traffic each need a share, 1..99",
                    a.bandwidth
                ),
            ));
        }
        let old = match a.mode {
            ClassMode::Auto => Some(ModeArg::Auto),
            ClassMode::Ieee => Some(ModeArg::Ieee),
            ClassMode::Cee => Some(ModeArg::Cee),
            ClassMode::Lossless | ClassMode::Lossy => None,
        };
        if let Some(m) = old {
            if a.dcbx_mode.is_some() {
                return Err(refuse(
                    "--mode",
                    "is lossless or lossy; the DCBX version is --dcbx-mode's",
                ));
            }
            eprintln!(
                "lossless: profile roce: --mode {0} is the DCBX version: taken as --dcbx-mode \
                 {0} (--mode is now lossless or lossy)",
                m.mode().name()
            );
        }
        Ok(Roce {
            lossless: a.mode != ClassMode::Lossy,
            priority: a.priority,
            dscp,
            cnp_priority: a.cnp_priority,
            cnp_dscp,
            bandwidth: a.bandwidth,
            willing: a.willing.into(),
            mode: a.dcbx_mode.or(old).map(ModeArg::mode),
        })
    }

    /// The priorities of TC 0: all but data and CNP.
    fn others(&self) -> Vec<u8> {
        (0..8)
            .filter(|p| *p != self.priority && *p != self.cnp_priority)
            .collect()
    }

    fn pgid(&self) -> [u8; 8] {
        let mut pgid = [0u8; 8];
        pgid[usize::from(self.priority)] = 1;
        pgid[usize::from(self.cnp_priority)] = 15;
        pgid
    }

    fn tcs(&self) -> Vec<TcChange> {
        vec![
            TcChange {
                tc: 0,
                priorities: self.others(),
                bandwidth: 100 - self.bandwidth,
                tsa: Some(Tsa::ETS),
            },
            TcChange {
                tc: 1,
                priorities: vec![self.priority],
                bandwidth: self.bandwidth,
                tsa: Some(Tsa::ETS),
            },
            TcChange {
                tc: 2,
                priorities: vec![self.cnp_priority],
                bandwidth: 0,
                tsa: Some(Tsa::STRICT),
            },
        ]
    }

    /// The section: `[defaults]` or `[ports."GLOB"]`, commented.
    pub fn to_toml(&self, port: Option<&str>) -> String {
        let list = |v: &[u8]| v.iter().map(u8::to_string).collect::<Vec<_>>().join(", ");
        let w = self.willing;
        let header = match port {
            Some(p) => format!("[ports.{}]", lossless_node::config::toml_string(p)),
            None => "[defaults]".to_string(),
        };
        let mut out = format!(
            "# RoCEv2 lossless profile (`lossless profile roce`): data on priority {p}, \
             DSCP {d};\n# CNPs on priority {c}, DSCP {cd}.\n# willing = {w}: {why}.\n{header}\n",
            p = self.priority,
            d = dscp::show(u64::from(self.dscp)),
            c = self.cnp_priority,
            cd = dscp::show(u64::from(self.cnp_dscp)),
            why = if w {
                "the switch's configuration runs when it pushes one, this one otherwise"
            } else {
                "this configuration is imposed on a willing peer"
            },
        );
        if let Some(m) = self.mode {
            out.push_str(&format!("dcbx.mode = \"{}\"\n", m.name()));
        }
        if self.lossless {
            out.push_str(&format!(
                "pfc = {{ enable = true, willing = {w}, priorities = [{}] }}  # lossless: RoCEv2 data only\n",
                self.priority
            ));
        } else {
            out.push_str(&format!(
                "pfc = {{ enable = true, willing = {w}, priorities = [] }}  # lossy RoCE: no PFC, ECN only\n"
            ));
        }
        out.push_str(&format!(
            "ets.willing = {w}\nets.tcs = [\n    \
             {{ tc = 0, priorities = [{}], bandwidth = {}, tsa = \"ets\" }},  # everything else\n    \
             {{ tc = 1, priorities = [{}], bandwidth = {}, tsa = \"ets\" }},  # RoCEv2 data\n    \
             {{ tc = 2, priorities = [{}], tsa = \"strict\" }},  # CNP\n]\n",
            list(&self.others()),
            100 - self.bandwidth,
            self.priority,
            self.bandwidth,
            self.cnp_priority,
        ));
        out.push_str(&format!(
            "# CEE DCBX (a peer that speaks only CEE): the same classes as priority groups\n\
             pg = {{ willing = {w}, pgid = [{}], percent = [{}, {}, 0, 0, 0, 0, 0, 0] }}\n",
            list(&self.pgid()),
            100 - self.bandwidth,
            self.bandwidth
        ));
        let entry =
            |m, protocol: u8, priority| app_name::app_entry(m, u16::from(protocol), priority);
        out.push_str(&format!(
            "app.willing = {w}\napp.entries = [\n    \
             {{ selector = \"dscp\", protocol = {}, priority = {} }},  # {}: RoCEv2 data\n    \
             {{ selector = \"dscp\", protocol = {}, priority = {} }},  # {}: CNP\n    \
             {{ selector = \"udp\", protocol = 4791, priority = {} }},  # {}: RoCEv2 by UDP port\n]\n",
            self.dscp,
            self.priority,
            entry(AppMatch::Dscp, self.dscp, self.priority),
            self.cnp_dscp,
            self.cnp_priority,
            entry(AppMatch::Dscp, self.cnp_dscp, self.cnp_priority),
            self.priority,
            app_name::app_entry(AppMatch::Udp, 4791, self.priority),
        ));
        out.push_str(&self.roce_toml());
        out
    }

    /// The ToS RoCE leaves with: the data DSCP, ECN-capable (ECT(0)).
    pub fn tos(&self) -> u8 {
        (self.dscp << 2) | 2
    }

    /// The RoCE host settings beyond DCB (`roce.*`).
    fn roce_toml(&self) -> String {
        format!(
            "# The host's RoCE settings beyond DCB: RDMA CM and verbs send DSCP {d} with \
             ECT(0) (ToS {t}),\n# RoCE v2; DCQCN (ECN) on the data priority; CNPs DSCP {cd} \
             on priority {c}; no link-level pause{lossy}.\n\
             roce.tos = {t}\nroce.roce_mode = \"v2\"\nroce.traffic_class = {t}\n\
             roce.ecn_rp = [{p}]\nroce.ecn_np = [{p}]\nroce.cnp_dscp = {cd}\n\
             roce.cnp_priority = {c}\nroce.global_pause = false\n",
            d = self.dscp,
            t = self.tos(),
            p = self.priority,
            cd = self.cnp_dscp,
            c = self.cnp_priority,
            lossy = if self.lossless {
                ""
            } else {
                " (lossy RoCE: congestion control alone)"
            },
        )
    }

    /// The same values as `dcbx set` changes, one per feature.
    pub fn changes(&self) -> Vec<FeatureChange> {
        let w = Some(self.willing);
        let rule = |selector, protocol, p: u8| AppRule {
            selector,
            protocol,
            priorities: PriorityMap(1 << (p & 7)),
            oui: DCBX_OUI,
        };
        let mut out = vec![
            FeatureChange {
                feature: FeatureName::Pfc,
                enable: Some(true),
                willing: w,
                priorities: Some(if self.lossless {
                    vec![self.priority]
                } else {
                    Vec::new()
                }),
                ..FeatureChange::default()
            },
            FeatureChange {
                feature: FeatureName::Ets,
                willing: w,
                ets: Some(Box::new(EtsChange {
                    tcs: Some(self.tcs()),
                    ..EtsChange::default()
                })),
                ..FeatureChange::default()
            },
            FeatureChange {
                feature: FeatureName::Pg,
                willing: w,
                pgid: Some(self.pgid().to_vec()),
                percent: Some(vec![100 - self.bandwidth, self.bandwidth, 0, 0, 0, 0, 0, 0]),
                ..FeatureChange::default()
            },
            FeatureChange {
                feature: FeatureName::App,
                willing: w,
                app: Some(AppRules {
                    entries: vec![
                        rule(RuleSelector::Dscp, self.dscp.into(), self.priority),
                        rule(RuleSelector::Dscp, self.cnp_dscp.into(), self.cnp_priority),
                        rule(RuleSelector::Udp, 4791, self.priority),
                    ],
                }),
                ..FeatureChange::default()
            },
        ];
        if let Some(m) = self.mode {
            out.push(FeatureChange {
                feature: FeatureName::Mode,
                mode: Some(m),
                ..FeatureChange::default()
            });
        }
        out
    }
}

pub fn run(cmd: ProfileCommand) -> Result<(), CliError> {
    let ProfileCommand::Roce(args) = cmd;
    let socket = args
        .socket
        .clone()
        .or_else(|| std::env::var_os("LOSSLESS_SOCKET").map(Into::into))
        .unwrap_or_else(|| lossless_node::protocol::DEFAULT_SOCKET.into());
    let socket = socket.as_path();
    let roce = Roce::from_args(&args)?;
    let text = roce.to_toml(args.port.as_deref());
    // The daemon's own reader, so that what is printed is what losslessd accepts.
    let cfg =
        DaemonConfig::parse(&text, Path::new("<profile roce>")).map_err(|e| refuse("--port", e))?;
    if !args.apply_to_daemon {
        return emit(&text);
    }
    let (_, status): (_, StatusResult) =
        call_typed(socket, "profile roce: status", &Request::Status)?;
    let ports: Vec<String> = status
        .ports
        .iter()
        .map(|p| p.summary.port.clone())
        .filter(|name| args.port.is_none() || cfg.selects(name))
        .collect();
    if ports.is_empty() {
        let all: Vec<String> = status
            .ports
            .iter()
            .map(|p| p.summary.port.clone())
            .collect();
        return Err(refuse(
            "--port",
            format!(
                "{} matches no port of the daemon (its ports: {}); nothing changed",
                args.port.as_deref().unwrap_or("*"),
                if all.is_empty() {
                    "none".into()
                } else {
                    all.join(", ")
                }
            ),
        ));
    }
    for port in &ports {
        let hardware = status
            .ports
            .iter()
            .find(|p| p.summary.port == *port)
            .map(|p| &p.summary.hardware);
        let nic = Nic::of(hardware);
        let mut last: Option<(serde_json::Value, Changed<DcbxView>)> = None;
        for (i, change) in roce.changes().into_iter().enumerate() {
            let feature = change.feature.name();
            let answer = call_typed(
                socket,
                &format!("profile roce: {port}: {feature}"),
                &Request::DcbxSet {
                    port: port.clone(),
                    change,
                },
            )
            .map_err(|mut e| {
                if i > 0 {
                    e.why.push_str(&format!(
                        " (the features before {feature} were applied; `lossless dcbx reset \
                         {port}` drops them)"
                    ));
                }
                e
            })?;
            last = Some(answer);
        }
        let Some((mut json, view)) = last else {
            continue;
        };
        if args.json {
            // The port as `dcbx set` answers it, and what becomes of its NIC.
            if let Some(p) = json.as_object_mut() {
                p.insert("apply".into(), nic.apply.into());
                p.insert("nic_programmed".into(), nic.programmed.into());
                p.insert(
                    "hardware".into(),
                    serde_json::to_value(hardware).unwrap_or_default(),
                );
            }
            print_json(&json)?;
        } else {
            emit(&format!(
                "{port}: RoCEv2 profile applied (pfc, ets, pg, app{}): data priority {}, \
                 CNP priority {}; mode {}\n{port}: {}\n{port}: the RoCE host settings \
                 (roce.*) come from the file: `lossless profile roce --port {port}` prints them\n",
                if roce.mode.is_some() { ", mode" } else { "" },
                roce.priority,
                roce.cnp_priority,
                view.view.dcbx.mode.running.name(),
                nic.text,
            ))?;
        }
    }
    Ok(())
}

/// Whether the daemon programs a port's NIC, from its `status` (`hardware`, what the
/// APPLY column shows): with `apply = "none"` (the default), or a device without dcbnl,
/// the profile changes what the port advertises and nothing in the NIC.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Nic {
    /// The port's `apply`: `none` or `dcbnl`.
    apply: &'static str,
    /// The daemon programs the NIC: `apply = "dcbnl"`, the device answers dcbnl, and
    /// its last programming did not fail.
    programmed: bool,
    /// What that means, in a sentence.
    text: String,
}

impl Nic {
    fn of(hardware: Option<&Hardware>) -> Nic {
        let none = |text: String| Nic {
            apply: "dcbnl",
            programmed: false,
            text,
        };
        match hardware {
            Some(Hardware::ReportOnly) => Nic {
                apply: "none",
                programmed: false,
                text: "applied to the DCBX advertisement only: apply = \"none\", the NIC was \
                       not programmed; set apply = \"dcbnl\" in the configuration to program it"
                    .into(),
            },
            Some(Hardware::Unsupported { reason }) => none(format!(
                "applied to the DCBX advertisement only: apply = \"dcbnl\", but the NIC was not \
                 programmed: it has no dcbnl ({reason})"
            )),
            Some(Hardware::Probing) => none(
                "applied to the DCBX advertisement; the NIC is not programmed yet: apply = \
                 \"dcbnl\", and the daemon has not had its answer to the dcbnl probe \
                 (`lossless status` shows APPLY dcbnl once it programs it)"
                    .into(),
            ),
            Some(Hardware::Dcbnl { error: Some(e), .. }) => none(format!(
                "apply = \"dcbnl\": the daemon programs the NIC with the negotiated \
                 configuration, but its last programming failed: {e} (`lossless status` shows \
                 whether this one takes)"
            )),
            Some(Hardware::Dcbnl { error: None, .. }) => Nic {
                apply: "dcbnl",
                programmed: true,
                text: "apply = \"dcbnl\": the daemon programs the NIC with the negotiated \
                       configuration"
                    .into(),
            },
            None => Nic {
                apply: "unknown",
                programmed: false,
                text: "whether the NIC was programmed is unknown: the daemon's status does not \
                       have the port"
                    .into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Nic;
    use lossless_proto::Hardware;
    use serde_json::json;

    /// The NIC as `status` says it in `hardware`.
    fn of(v: serde_json::Value) -> Nic {
        Nic::of(Some(
            &serde_json::from_value::<Hardware>(v).expect("a status hardware object"),
        ))
    }

    #[test]
    fn only_a_port_the_daemon_programs_says_so() {
        let none = of(json!({"mode": "report_only"}));
        assert_eq!((none.apply, none.programmed), ("none", false));
        assert!(none.text.contains("the NIC was not programmed"), "{none:?}");
        for h in [
            json!({"mode": "probing"}),
            json!({"mode": "unsupported", "reason": "no ops"}),
            json!({"mode": "dcbnl", "applied": 3, "error": "EINVAL"}),
        ] {
            let n = of(h.clone());
            assert_eq!((n.apply, n.programmed), ("dcbnl", false), "{h}");
        }
        let yes = of(json!({"mode": "dcbnl", "applied": 3}));
        assert_eq!((yes.apply, yes.programmed), ("dcbnl", true));
        assert!(!Nic::of(None).programmed);
    }
}

//! Named lab scenarios: what `lossless lab --scenario NAME` runs.
//!
//! Each builds a small simulated fabric, runs the real agents on the virtual
//! clock and returns a [`Report`]: the timeline of frames and state changes and
//! the final state of every agent (for `wan-relay`: the relay path's steps,
//! [`crate::wan_relay`]), and what crossed the wire, for pcaps.

use std::fmt::Write;

use lossless_dcbx::{DcbxMode, Duration, Instant, PortConfig, PortStatus, Reason};
use lossless_wire::cee::{
    AppConfig, AppEntry, AppSelector, PfcConfig, PgConfig, PriorityMap, DCBX_OUI,
};
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::headroom::{build_links, outcomes, run_until_measured, LinkOutcome, LinkSpec};
use crate::pcap::Capture;
use crate::sim::{LogEntry, PathProps, Sim};
use crate::wan_relay::{RelayRun, WanRelayConfig};
use lossless_headroom::sizing::SizingConfig;
use lossless_node::protocol::DaemonEvent;
use lossless_relay::example::Kind;

/// A scenario's name and what it shows.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ScenarioInfo {
    pub name: &'static str,
    pub description: &'static str,
}

/// Every scenario, the default first.
pub const SCENARIOS: &[ScenarioInfo] = &[
    ScenarioInfo {
        name: "willing",
        description: "Two agents on one link: a switch (not willing) with PFC on priorities 3,4, \
                      PG 25/75 and an APP table; a host (willing) with defaults adopts them.",
    },
    ScenarioInfo {
        name: "mismatch",
        description: "Neither end willing, different PFC priorities: both report the mismatch \
                      (Error set, PFC off) while PG stays operational (PG is never compared).",
    },
    ScenarioInfo {
        name: "lossy",
        description: "The willing scenario over a link losing 30% of frames in each direction \
                      with 5 ms delay: the fast retransmissions still converge.",
    },
    ScenarioInfo {
        name: "change",
        description: "After convergence the switch moves PFC to priority 5; the new SeqNo is \
                      acknowledged and the host follows.",
    },
    ScenarioInfo {
        name: "headroom",
        description: "Adaptive PFC headroom (seed 004) on four 100G links of 5 m twinax, 500 m, \
                      10 km and 80 km fibre: both ends advertise the capability in the PFC \
                      sub-TLV, measure T1..T4, and size headroom from the measured round trip, \
                      next to seed 003's model for the same link.",
    },
    ScenarioInfo {
        name: "peer-loss",
        description: "After convergence the switch disables LLDP transmit: its shutdown LLDPDU \
                      makes the host drop the peer and fall back to its own configuration.",
    },
    ScenarioInfo {
        name: "wan-relay",
        description: "Seed 002's PFC relay across a WAN: DC2-GW - PE2 - P - PE1 - DC1-GW with \
                      1 ms of WAN (--wan-delay), per tunnel (SRv6, SRv6 reduced, VXLAN over IPv4 and IPv6, \
                      SR-MPLS): a pause arriving at DC1-GW with PE1's source MAC and its \
                      priorities and times intact, the forwarding delay, illegal frames dropped \
                      at PE2 by reason, a storm under the ceiling, the gateway buffer.",
    },
];

/// One agent at the end of a run.
#[derive(Debug, Clone, Serialize)]
pub struct AgentReport {
    pub name: String,
    pub mac: MacAddr,
    #[serde(flatten)]
    pub status: PortStatus,
}

/// One line of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineRow {
    /// Seconds since the start of the run.
    pub t: f64,
    /// Agent name, or "-" for operator actions.
    pub node: String,
    /// "tx", "lost", "event" or "action".
    pub kind: &'static str,
    pub text: String,
}

/// The result of running a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: &'static str,
    pub description: &'static str,
    pub seed: u64,
    /// When every agent first had a DCBX peer and all features Syncd (seconds).
    pub converged_at: Option<f64>,
    pub frames_sent: u64,
    pub frames_lost: u64,
    pub agents: Vec<AgentReport>,
    pub timeline: Vec<TimelineRow>,
    /// Adaptive headroom per link (the `headroom` scenario).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headroom: Vec<LinkOutcome>,
    /// One run per tunnel kind (the `wan-relay` scenario).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wan_relay: Vec<RelayRun>,
    /// What crossed the simulated wire: one capture for a DCBX scenario, one
    /// per link and tunnel for `wan-relay` (not in the JSON).
    #[serde(skip)]
    pub captures: Vec<Capture>,
}

/// The name is not a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownScenario(pub String);

impl std::fmt::Display for UnknownScenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = SCENARIOS.iter().map(|s| s.name).collect();
        write!(
            f,
            "unknown scenario {:?}; known: {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownScenario {}

/// Settings a scenario may take besides its seed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `wan-relay`: run this tunnel kind only (default: every kind).
    pub tunnel: Option<Kind>,
    /// `wan-relay`: one-way WAN delay, PE to PE (default 1 ms).
    pub wan_delay: Option<Duration>,
}

/// A scenario that cannot run as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Unknown(#[from] UnknownScenario),
    #[error("{option} applies to the wan-relay scenario only")]
    NotApplicable {
        option: &'static str,
        scenario: String,
    },
    #[error("relay configuration: {0}")]
    Relay(#[from] lossless_relay::ConfigError),
}

/// The switch side of the CEE demos: not willing, PFC 3,4, PG 0-2:PG0 3-5:PG1 6:strict
/// 7:PG2; CEE DCBX only.
pub fn switch_config() -> PortConfig {
    let mut c = PortConfig::new(MacAddr([0x02, 0, 0, 0, 0, 0x0a]));
    c.system_name = Some("switch".into());
    c.dcbx.mode = DcbxMode::Cee;
    c.dcbx.pg.willing = false;
    c.dcbx.pg.cfg = PgConfig {
        pgid: [0, 0, 0, 1, 1, 1, 15, 2],
        percent: [25, 75, 0, 0, 0, 0, 0, 0],
        num_tcs: 8,
    };
    c.dcbx.pfc.willing = false;
    c.dcbx.pfc.cfg = PfcConfig {
        priorities: PriorityMap(0b0001_1000),
        num_tcs: 8,
    };
    c.dcbx.app.willing = false;
    let mut entries = lossless_wire::cee::AppTable::new();
    entries.push(AppEntry {
        selector: AppSelector::ETHERTYPE,
        protocol: 0x8906,
        oui: DCBX_OUI,
        priorities: PriorityMap(0b0000_1000),
    });
    entries.push(AppEntry {
        selector: AppSelector::PORT,
        protocol: 4791,
        oui: DCBX_OUI,
        priorities: PriorityMap(0b0001_0000),
    });
    c.dcbx.app.cfg = AppConfig { entries };
    c
}

/// The host side of the CEE demos: defaults (every feature willing, PFC on no
/// priority); CEE DCBX only.
pub fn host_config() -> PortConfig {
    let mut c = PortConfig::new(MacAddr([0x02, 0, 0, 0, 0, 0x0b]));
    c.system_name = Some("host".into());
    c.dcbx.mode = DcbxMode::Cee;
    c
}

/// Every agent has a DCBX peer and every feature is Syncd and settled.
pub fn converged(sim: &Sim) -> bool {
    (0..sim.node_count()).all(|n| {
        let a = sim.agent(n);
        let settled = |r: Reason| !matches!(r, Reason::WaitingForAck | Reason::VersionMismatch);
        a.peer_present()
            && a.all_syncd()
            && settled(a.pg().reason)
            && settled(a.pfc().reason)
            && settled(a.app().reason)
    })
}

/// The links of the `headroom` scenario.
pub fn headroom_links() -> Vec<LinkSpec> {
    use lossless_headroom::medium::{FIBER, TWINAX};
    let g100 = lossless_headroom::units::Rate(100_000_000_000);
    let m = |metres: u64| lossless_headroom::units::Length(metres * 1_000_000);
    [
        ("5m", 5, TWINAX),
        ("500m", 500, FIBER),
        ("10km", 10_000, FIBER),
        ("80km", 80_000, FIBER),
    ]
    .into_iter()
    .map(|(label, metres, medium)| LinkSpec {
        label: label.to_string(),
        speed: g100,
        cable: m(metres),
        medium,
    })
    .collect()
}

fn run_headroom(info: &ScenarioInfo, seed: u64) -> Report {
    let mut sim = Sim::new(seed).with_capture();
    let specs = headroom_links();
    let sizing = SizingConfig::default();
    // The links above are within the model's range; a failure is a bug in this file.
    let switches = build_links(&mut sim, &specs).expect("valid links");
    let converged_at = sim.run_until_true(Instant::from_secs_f64(60.0), converged);
    run_until_measured(&mut sim, &switches);
    let mut r = report(info, seed, &sim, converged_at);
    r.headroom = outcomes(&sim, &specs, &switches, &sizing).expect("valid links");
    r
}

fn run_wan_relay(info: &ScenarioInfo, seed: u64, options: &Options) -> Result<Report, RunError> {
    let mut cfg = WanRelayConfig::default();
    if let Some(kind) = options.tunnel {
        cfg.tunnels = vec![kind];
    }
    if let Some(d) = options.wan_delay {
        cfg.wan_delay = d;
    }
    let (runs, captures) = crate::wan_relay::run(&cfg)?;
    Ok(Report {
        scenario: info.name,
        description: info.description,
        seed,
        converged_at: None,
        frames_sent: captures.iter().map(|c| c.frames.len() as u64).sum(),
        frames_lost: 0,
        agents: Vec::new(),
        timeline: Vec::new(),
        headroom: Vec::new(),
        wan_relay: runs,
        captures,
    })
}

/// Runs a scenario by name with its defaults.
pub fn run(name: &str, seed: u64) -> Result<Report, UnknownScenario> {
    match run_with(name, seed, &Options::default()) {
        Ok(r) => Ok(r),
        Err(RunError::Unknown(e)) => Err(e),
        // The defaults are valid for every scenario; anything else is a bug here.
        Err(e) => panic!("scenario {name} with its defaults: {e}"),
    }
}

/// Runs a scenario by name with `options`.
pub fn run_with(name: &str, seed: u64, options: &Options) -> Result<Report, RunError> {
    let info = SCENARIOS
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| UnknownScenario(name.to_string()))?;
    if name == "wan-relay" {
        return run_wan_relay(info, seed, options);
    }
    for (set, option) in [
        (options.tunnel.is_some(), "--tunnel"),
        (options.wan_delay.is_some(), "--wan-delay"),
    ] {
        if set {
            return Err(RunError::NotApplicable {
                option,
                scenario: name.to_string(),
            });
        }
    }
    if name == "headroom" {
        return Ok(run_headroom(info, seed));
    }
    let mut sim = Sim::new(seed).with_capture();
    // The configurations above are valid; a failure here is a bug in this file.
    let mut switch_cfg = switch_config();
    let mut host_cfg = host_config();
    if name == "mismatch" {
        host_cfg.dcbx.pfc.willing = false;
        host_cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b0000_1000);
        host_cfg.dcbx.pg.willing = false;
    }
    let a = sim
        .add_agent("switch", switch_cfg.clone())
        .expect("valid switch config");
    let b = sim.add_agent("host", host_cfg).expect("valid host config");
    let link = sim.connect(a, b);
    let props = if name == "lossy" {
        PathProps {
            delay: Duration::from_millis(5),
            loss: 0.3,
        }
    } else {
        PathProps {
            delay: Duration::from_micros(10),
            loss: 0.0,
        }
    };
    sim.set_link_props(a, b, props);
    sim.set_link(link, true);
    let converged_at = sim.run_until_true(Instant::from_secs_f64(60.0), converged);
    match name {
        "change" => {
            sim.run_for(Duration::from_secs(5));
            switch_cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b0010_0000);
            sim.set_config(a, switch_cfg).expect("valid change");
            sim.run_for(Duration::from_secs(5));
        }
        "peer-loss" => {
            sim.run_for(Duration::from_secs(5));
            switch_cfg.admin_status = lossless_dcbx::AdminStatus::RxOnly;
            sim.set_config(a, switch_cfg).expect("valid change");
            sim.run_for(Duration::from_secs(5));
        }
        _ => sim.run_for(Duration::from_secs(5)),
    }
    Ok(report(info, seed, &sim, converged_at))
}

fn report(info: &ScenarioInfo, seed: u64, sim: &Sim, converged_at: Option<Instant>) -> Report {
    let timeline = sim
        .log()
        .iter()
        // Measurement frames (96 per port and round) would drown the timeline; their
        // results are the "delay" rows.
        .filter(|e| !matches!(e, LogEntry::Sent { summary, .. } if summary.starts_with("delay ")))
        // The node's own events that the timeline's other rows already say (port and
        // link changes, configuration reloads) are left out.
        .filter(|e| {
            !matches!(
                e,
                LogEntry::Node {
                    event: DaemonEvent::PortAdded { .. }
                        | DaemonEvent::PortRemoved { .. }
                        | DaemonEvent::LinkChanged { .. }
                        | DaemonEvent::ConfigChanged { .. },
                    ..
                }
            )
        })
        .map(|e| match e {
            LogEntry::Sent { at, from, summary } => TimelineRow {
                t: at.since_epoch().as_secs_f64(),
                node: sim.name(*from).to_string(),
                kind: "tx",
                text: summary.clone(),
            },
            LogEntry::Lost { at, from, to } => TimelineRow {
                t: at.since_epoch().as_secs_f64(),
                node: sim.name(*from).to_string(),
                kind: "lost",
                text: format!("frame to {} lost", sim.name(*to)),
            },
            LogEntry::Event { at, node, event } => TimelineRow {
                t: at.since_epoch().as_secs_f64(),
                node: sim.name(*node).to_string(),
                kind: "event",
                text: serde_json::to_string(event).unwrap_or_default(),
            },
            LogEntry::Action { at, what } => TimelineRow {
                t: at.since_epoch().as_secs_f64(),
                node: "-".to_string(),
                kind: "action",
                text: what.clone(),
            },
            LogEntry::Measure { at, node, event } => TimelineRow {
                t: at.since_epoch().as_secs_f64(),
                node: sim.name(*node).to_string(),
                kind: "delay",
                text: serde_json::to_string(event).unwrap_or_default(),
            },
            LogEntry::Node { at, node, event } => TimelineRow {
                t: at.since_epoch().as_secs_f64(),
                node: sim.name(*node).to_string(),
                kind: "node",
                text: serde_json::to_string(event).unwrap_or_default(),
            },
        })
        .collect();
    let stats = sim.stats();
    Report {
        scenario: info.name,
        description: info.description,
        seed,
        converged_at: converged_at.map(|t| t.since_epoch().as_secs_f64()),
        frames_sent: stats.frames_sent,
        frames_lost: stats.frames_lost,
        agents: (0..sim.node_count())
            .map(|n| AgentReport {
                name: sim.name(n).to_string(),
                mac: sim.agent(n).mac(),
                status: sim.agent(n).status(),
            })
            .collect(),
        timeline,
        headroom: Vec::new(),
        wan_relay: Vec::new(),
        captures: vec![Capture {
            name: info.name.to_string(),
            frames: sim.capture().to_vec(),
        }],
    }
}

impl Report {
    /// The report for people: timeline, then the final state per agent and feature.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "scenario {}: {}", self.scenario, self.description);
        if !self.wan_relay.is_empty() {
            s.push_str(&crate::wan_relay::render(&self.wan_relay));
            return s;
        }
        let _ = writeln!(s, "\ntimeline (virtual clock, seconds):");
        let width = self
            .timeline
            .iter()
            .map(|r| r.node.len())
            .max()
            .unwrap_or(1);
        for r in &self.timeline {
            let _ = writeln!(
                s,
                "  {:>10.6}  {:<width$}  {:<6} {}",
                r.t, r.node, r.kind, r.text
            );
        }
        let _ = writeln!(s);
        match self.converged_at {
            Some(t) => {
                let _ = writeln!(
                    s,
                    "converged at {:.6} s ({} frames sent, {} lost in all)",
                    t, self.frames_sent, self.frames_lost
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "did not converge ({} frames sent, {} lost)",
                    self.frames_sent, self.frames_lost
                );
            }
        }
        for a in &self.agents {
            let st = &a.status;
            let _ = writeln!(
                s,
                "\n{} ({}): DCBX {}, peer {}, SeqNo {} AckNo {} RcvdAckNo {}",
                a.name,
                a.mac,
                if st.dcbx_active { "active" } else { "inactive" },
                if st.peer_present { "present" } else { "absent" },
                st.control.seq,
                st.control.ack,
                st.control.rcvd_ack
            );
            let yn = |b: bool| if b { "yes" } else { "no" };
            let on = |b: bool| if b { "on" } else { "off" };
            let (pg, pfc, app) = (&st.pg, &st.pfc, &st.app);
            let pg_cfg = format!(
                "pgid {} pct {}",
                pg.oper
                    .pgid
                    .iter()
                    .map(|g| format!("{g:x}"))
                    .collect::<String>(),
                pg.oper
                    .percent
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            );
            let app_cfg: Vec<String> = app
                .oper
                .entries
                .iter()
                .map(|e| {
                    let sel = e.selector.name().unwrap_or("?");
                    format!("{sel} {:#06x}->{}", e.protocol, e.priorities)
                })
                .collect();
            let app_cfg = if app_cfg.is_empty() {
                "(none)".to_string()
            } else {
                app_cfg.join(", ")
            };
            let rows = [
                [
                    "feat",
                    "willing",
                    "syncd",
                    "oper",
                    "error",
                    "operational config",
                    "why",
                ]
                .map(String::from),
                [
                    "pg",
                    yn(pg.willing),
                    yn(pg.syncd),
                    on(pg.oper_mode),
                    yn(pg.error),
                    &pg_cfg,
                    pg.reason_text,
                ]
                .map(String::from),
                [
                    "pfc",
                    yn(pfc.willing),
                    yn(pfc.syncd),
                    on(pfc.oper_mode),
                    yn(pfc.error),
                    &format!("priorities {}", pfc.oper.priorities),
                    pfc.reason_text,
                ]
                .map(String::from),
                [
                    "app",
                    yn(app.willing),
                    yn(app.syncd),
                    on(app.oper_mode),
                    yn(app.error),
                    &app_cfg,
                    app.reason_text,
                ]
                .map(String::from),
            ];
            let mut widths = [0usize; 7];
            for r in &rows {
                for (w, c) in widths.iter_mut().zip(r) {
                    *w = (*w).max(c.len());
                }
            }
            for r in &rows {
                let mut line = String::from(" ");
                for (i, (c, w)) in r.iter().zip(widths).enumerate() {
                    line.push(' ');
                    if i == 6 {
                        line.push_str(c);
                    } else {
                        let _ = write!(line, "{c:<w$}");
                    }
                }
                let _ = writeln!(s, "{line}");
            }
        }
        if !self.headroom.is_empty() {
            s.push_str(&render_headroom(&self.headroom));
        }
        s
    }
}

/// The adaptive-headroom table: per link, what was injected, measured and sized.
pub fn render_headroom(rows: &[LinkOutcome]) -> String {
    use lossless_headroom::units::grouped;
    let mut s = String::from(
        "\nadaptive headroom (seed 004), switch end of each link, alpha 1, 160-byte cells:\n",
    );
    let header = [
        "link",
        "one-way",
        "measured RTT",
        "X (bits)",
        "DV (bits)",
        "headroom",
        "model DV",
    ];
    let mut table = vec![header.map(String::from).to_vec()];
    for o in rows {
        let (rtt, x, dv, h) = match (&o.measured, &o.adaptive) {
            (Some(m), Some(n)) => (
                format!("{:.3} us", m.round_trip.0 as f64 / 1e6),
                grouped(n.x_bit_times),
                grouped(n.dv_bit_times),
                format!(
                    "{} B ({} cells)",
                    grouped(n.headroom.bytes),
                    n.headroom.cells
                ),
            ),
            _ => ("not measured".into(), "-".into(), "-".into(), "-".into()),
        };
        table.push(vec![
            format!("{} {}", o.label, o.medium),
            format!("{:.3} us", o.injected_one_way_ns as f64 / 1e3),
            rtt,
            x,
            dv,
            h,
            grouped(o.model_dv_bit_times),
        ]);
    }
    let mut widths = vec![0usize; header.len()];
    for r in &table {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    for r in &table {
        let mut line = String::from(" ");
        for (c, w) in r.iter().zip(&widths) {
            let _ = write!(line, " {c:<w$}");
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s.push_str(
        "  model DV: seed 003's equation with its defaults for the same link. The simulated paths\n  \
         carry exactly the model's cable and interface delays, so the two agree to rounding; on a\n  \
         real link the measurement replaces the model's assumptions (see `lossless headroom compare`).\n",
    );
    s
}

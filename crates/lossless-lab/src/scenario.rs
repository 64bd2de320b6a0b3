//! Named lab scenarios: what `lossless lab --scenario NAME` runs.
//!
//! Each builds a small simulated fabric, runs the real agents on the virtual
//! clock and returns a [`Report`]: the timeline of frames and state changes and
//! the final state of every agent (for `wan-relay`: the relay path's steps,
//! [`crate::wan_relay`]), and what crossed the wire, for pcaps.

mod ieee;
pub mod pfc_storm;
mod render;
pub mod roce_discards;

use lossless_dcbx::{Duration, Instant, PortStatus};
use lossless_wire::cee::PriorityMap;
use lossless_wire::MacAddr;
use serde::Serialize;

pub use crate::agents::{converged, converged_nodes, host_config, switch_config};
use crate::headroom::{build_links, outcomes, run_until_measured, LinkOutcome, LinkSpec};
use crate::pcap::Capture;
use crate::sim::{LogEntry, NodeId, PathProps, Sim};
pub use crate::timeline::TimelineRow;
use crate::wan_relay::{RelayRun, WanRelayConfig};
use lossless_headroom::sizing::SizingConfig;
use lossless_node::health::Health;
use lossless_node::protocol::DaemonEvent;
use lossless_relay::example::Kind;

pub use ieee::{
    dual_pdu, ieee_host_config, ieee_switch_config, roce_app_table, roce_ets_table, NXOS_MAC,
};
pub use render::render_headroom;

/// Every scenario the lab runs: one name each ([`SCENARIOS`] holds the name and the
/// description), matched whole wherever a scenario is run, so a new one cannot fall
/// through to another's run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scenario {
    Ieee,
    IeeeBothWilling,
    AutoCeePeer,
    Dual,
    Willing,
    Mismatch,
    Lossy,
    Change,
    Headroom,
    PeerLoss,
    PfcStorm,
    RoceDiscards,
    WanRelay,
}

impl Scenario {
    /// The scenario named `name`, as `--scenario` takes it.
    pub fn from_name(name: &str) -> Result<Scenario, UnknownScenario> {
        SCENARIOS
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.scenario)
            .ok_or_else(|| UnknownScenario(name.to_string()))
    }

    /// Its row of [`SCENARIOS`].
    pub fn info(self) -> &'static ScenarioInfo {
        SCENARIOS
            .iter()
            .find(|s| s.scenario == self)
            .unwrap_or(&SCENARIOS[0])
    }
}

/// A scenario's name and what it shows.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ScenarioInfo {
    #[serde(skip)]
    pub scenario: Scenario,
    pub name: &'static str,
    pub description: &'static str,
}

/// The scenario `lossless lab` runs when given none.
pub const DEFAULT: &str = "ieee";

/// Every scenario, the default first.
pub const SCENARIOS: &[ScenarioInfo] = &[
    ScenarioInfo {
        scenario: Scenario::Ieee,
        name: "ieee",
        description: "IEEE 802.1Qaz on one link: a switch (mode ieee, nothing willing) with ETS \
                      priority 3 (RoCE) on TC 1 and 6 (CNP) on strict TC 2, TCs 0/1 at 50/50 %, \
                      sent as a recommendation too, PFC on 3, APP DSCP 26 and UDP 4791 on 3; a \
                      host (mode auto, willing, defaults) runs the recommendation and the \
                      switch's PFC, and merges its APP entries.",
    },
    ScenarioInfo {
        scenario: Scenario::IeeeBothWilling,
        name: "ieee-both-willing",
        description: "IEEE 802.1Qaz, both ends willing, PFC on 3 at the switch (02:00:00:00:00:0a) \
                      and on 3,4 at the host (02:00:00:00:00:0b): by IEEE 802.1Q-2018 D.3.3 the \
                      lower MAC takes the peer's PFC, so 3,4 runs on both ends.",
    },
    ScenarioInfo {
        scenario: Scenario::AutoCeePeer,
        name: "auto-cee-peer",
        description: "A host in mode auto next to a CEE-only switch: it starts in IEEE 802.1Qaz, \
                      falls back to CEE DCBX on the switch's first LLDPDU and negotiates CEE; a \
                      link reset brings it back to IEEE first, and it falls back again.",
    },
    ScenarioInfo {
        scenario: Scenario::Dual,
        name: "dual",
        description: "A host in mode auto next to a peer sending CEE and IEEE 802.1Qaz TLVs in \
                      one LLDPDU, as NX-OS does (a scripted sender): the host answers in IEEE \
                      and runs the peer's recommendation, PFC and APP.",
    },
    ScenarioInfo {
        scenario: Scenario::Willing,
        name: "willing",
        description: "CEE DCBX on one link: a switch (not willing) with PFC on priorities 3,4, \
                      PG 25/75 and an APP table; a host (willing) with defaults adopts them.",
    },
    ScenarioInfo {
        scenario: Scenario::Mismatch,
        name: "mismatch",
        description: "CEE DCBX, neither end willing, different PFC priorities: both report the \
                      mismatch (Error set, PFC off) while PG stays operational (PG is never \
                      compared).",
    },
    ScenarioInfo {
        scenario: Scenario::Lossy,
        name: "lossy",
        description: "The willing scenario over a link losing 30% of frames in each direction \
                      with 5 ms delay: the fast retransmissions still converge.",
    },
    ScenarioInfo {
        scenario: Scenario::Change,
        name: "change",
        description: "CEE DCBX: after convergence the switch moves PFC to priority 5; the new \
                      SeqNo is acknowledged and the host follows.",
    },
    ScenarioInfo {
        scenario: Scenario::Headroom,
        name: "headroom",
        description: "Adaptive PFC Headroom on four 100G links of 5 m twinax, 500 m, \
                      10 km and 80 km fibre: both ends advertise the capability in the PFC \
                      sub-TLV, measure T1..T4, and size headroom from the measured round trip, \
                      next to the PFC Delay Value Constraint Model for the same link.",
    },
    ScenarioInfo {
        scenario: Scenario::PeerLoss,
        name: "peer-loss",
        description: "CEE DCBX: after convergence the switch disables LLDP transmit: its \
                      shutdown LLDPDU makes the host drop the peer and fall back to its own \
                      configuration.",
    },
    ScenarioInfo {
        scenario: Scenario::PfcStorm,
        name: "pfc-storm",
        description: "A PFC storm: the switch gets stuck sending XOFF on priority 3 at 5 s; the \
                      host's PFC watchdog (detection 200 ms, restoration 200 ms, read every \
                      200 ms, action forward) declares the storm, turns PFC off on priority 3 \
                      through dcbnl so the class goes lossy, and puts it back 200 ms after the \
                      switch recovers at 8 s.",
    },
    ScenarioInfo {
        scenario: Scenario::RoceDiscards,
        name: "roce-discards",
        description: "A ConnectX host (mlx5: drops per priority, the RDMA device's hw counters) \
                      running the switch's PFC on priority 3, DCQCN marking and CNPs flowing; \
                      at 120 s its receive buffer on priority 3 overflows (headroom too small, \
                      or a peer that ignores the pause): 20 drops a second \
                      (rx_prio3_discards), RoCE packets out of sequence and sequence error \
                      NAKs; the host's metrics scraped every minute for 20 minutes, on which \
                      dist/prometheus's LosslessPfcPriorityDiscards and \
                      LosslessRoceRetransmissionsRising fire.",
    },
    ScenarioInfo {
        scenario: Scenario::WanRelay,
        name: "wan-relay",
        description: "draft-he-rtgwg-wan-pfc-00's PFC relay across a WAN: DC2-GW - PE2 - P - PE1 - DC1-GW with \
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
    /// Its port's health as losslessd's `status` gives it (`lossless_node::health`).
    pub health: Health,
    #[serde(flatten)]
    pub status: PortStatus,
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
    /// What the PFC watchdog did and when (the `pfc-storm` scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_storm: Option<pfc_storm::StormRun>,
    /// The host's metrics as the priority overflows (the `roce-discards` scenario).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roce_discards: Option<roce_discards::DiscardsRun>,
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
    let all: Vec<NodeId> = (0..sim.node_count()).collect();
    let mut r = report(info, seed, &sim, converged_at, &all);
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
        pfc_storm: None,
        roce_discards: None,
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
    let scenario = Scenario::from_name(name)?;
    let info = scenario.info();
    if scenario == Scenario::WanRelay {
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
    use Scenario as S;
    match scenario {
        S::Headroom => Ok(run_headroom(info, seed)),
        S::Ieee | S::IeeeBothWilling | S::AutoCeePeer => Ok(ieee::run_pair(info, seed)),
        S::Dual => Ok(ieee::run_dual(info, seed)),
        S::PfcStorm => Ok(pfc_storm::run(info, seed)),
        S::RoceDiscards => Ok(roce_discards::run(info, seed)),
        S::WanRelay => run_wan_relay(info, seed, options),
        S::Willing | S::Mismatch | S::Lossy | S::Change | S::PeerLoss => {
            Ok(run_cee_pair(info, seed))
        }
    }
}

/// `willing`, `mismatch`, `lossy`, `change` and `peer-loss`: CEE DCBX between a
/// switch and a host on one link.
fn run_cee_pair(info: &ScenarioInfo, seed: u64) -> Report {
    let scenario = info.scenario;
    let mut sim = Sim::new(seed).with_capture();
    // The configurations above are valid; a failure here is a bug in this file.
    let mut switch_cfg = switch_config();
    let mut host_cfg = host_config();
    if scenario == Scenario::Mismatch {
        host_cfg.dcbx.pfc.willing = false;
        host_cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b0000_1000);
        host_cfg.dcbx.pg.willing = false;
    }
    let a = sim
        .add_agent("switch", switch_cfg.clone())
        .expect("valid switch config");
    let b = sim.add_agent("host", host_cfg).expect("valid host config");
    let link = sim.connect(a, b);
    let props = if scenario == Scenario::Lossy {
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
    match scenario {
        Scenario::Change => {
            sim.run_for(Duration::from_secs(5));
            switch_cfg.dcbx.pfc.cfg.priorities = PriorityMap(0b0010_0000);
            sim.set_config(a, switch_cfg).expect("valid change");
            sim.run_for(Duration::from_secs(5));
        }
        Scenario::PeerLoss => {
            sim.run_for(Duration::from_secs(5));
            switch_cfg.admin_status = lossless_dcbx::AdminStatus::RxOnly;
            sim.set_config(a, switch_cfg).expect("valid change");
            sim.run_for(Duration::from_secs(5));
        }
        _ => sim.run_for(Duration::from_secs(5)),
    }
    report(info, seed, &sim, converged_at, &[a, b])
}

/// The report of a run; `agents` are the nodes whose final state it shows (a
/// scripted peer has none to show: its frames are in the timeline).
fn report(
    info: &ScenarioInfo,
    seed: u64,
    sim: &Sim,
    converged_at: Option<Instant>,
    agents: &[NodeId],
) -> Report {
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
        // A scripted peer's own state is not part of the run: its frames are.
        .filter(|e| match e {
            LogEntry::Event { node, .. }
            | LogEntry::Measure { node, .. }
            | LogEntry::Node { node, .. }
            | LogEntry::Pfc { node, .. } => agents.contains(node),
            _ => true,
        })
        .filter_map(|e| {
            Some(match e {
                LogEntry::Sent {
                    at, from, summary, ..
                } => TimelineRow {
                    t: at.since_epoch().as_secs_f64(),
                    node: sim.name(*from).to_string(),
                    kind: "tx",
                    text: summary.clone(),
                    event: None,
                },
                LogEntry::Lost { at, from, to } => TimelineRow {
                    t: at.since_epoch().as_secs_f64(),
                    node: sim.name(*from).to_string(),
                    kind: "lost",
                    text: format!("frame to {} lost", sim.name(*to)),
                    event: None,
                },
                LogEntry::Event { at, node, event } => TimelineRow::event(
                    at.since_epoch().as_secs_f64(),
                    sim.name(*node).to_string(),
                    "event",
                    event,
                ),
                LogEntry::Action { at, what } => TimelineRow {
                    t: at.since_epoch().as_secs_f64(),
                    node: "-".to_string(),
                    kind: "action",
                    text: what.clone(),
                    event: None,
                },
                LogEntry::Measure { at, node, event } => TimelineRow::event(
                    at.since_epoch().as_secs_f64(),
                    sim.name(*node).to_string(),
                    "delay",
                    event,
                ),
                LogEntry::Node { at, node, event } => TimelineRow::event(
                    at.since_epoch().as_secs_f64(),
                    sim.name(*node).to_string(),
                    "node",
                    event,
                ),
                LogEntry::Pfc { at, node, event } => TimelineRow::event(
                    at.since_epoch().as_secs_f64(),
                    sim.name(*node).to_string(),
                    "pfc",
                    event,
                ),
                // The relay's data path, routers and gateways are the wan-relay
                // scenario's, which reports them its own way.
                LogEntry::Relay { .. }
                | LogEntry::Routed { .. }
                | LogEntry::Unrouted { .. }
                | LogEntry::Accepted { .. }
                | LogEntry::Refused { .. } => return None,
            })
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
        agents: agents
            .iter()
            .map(|&n| AgentReport {
                name: sim.name(n).to_string(),
                mac: sim.agent(n).mac(),
                health: sim.port(n).health(),
                status: sim.agent(n).status(),
            })
            .collect(),
        timeline,
        headroom: Vec::new(),
        wan_relay: Vec::new(),
        pfc_storm: None,
        roce_discards: None,
        captures: vec![Capture {
            name: info.name.to_string(),
            frames: sim.capture().to_vec(),
        }],
    }
}

#[cfg(test)]
mod scenario_names {
    use super::*;

    #[test]
    fn each_scenario_has_one_row_and_its_name_finds_it() {
        for row in SCENARIOS {
            assert_eq!(row.scenario.info().name, row.name);
            assert_eq!(Scenario::from_name(row.name), Ok(row.scenario));
        }
        let all: std::collections::HashSet<Scenario> =
            SCENARIOS.iter().map(|s| s.scenario).collect();
        assert_eq!(all.len(), SCENARIOS.len(), "a scenario listed twice");
        assert!(Scenario::from_name("nope").is_err());
        assert_eq!(SCENARIOS[0].name, DEFAULT);
    }
}

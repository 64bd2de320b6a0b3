//! The Ethernet profile: the same policy drives DCB on Ethernet ports, as `losslessd`
//! configuration for both DCBX versions (CEE priority groups, IEEE 802.1Qaz ETS).
//!
//! The mapping (docs/policy.md, "Ethernet profile"):
//!
//! * a QoS level's SL is its 802.1p priority, so levels use SL 0-7 (module `levels`);
//! * ports are interface names: the `port-name` entries of port groups that have no
//!   `/P<port>` (`port-name: enp65s0f0`), plus `--ports` (module `ports`);
//! * the priority group of priority P on a port is the VL the port's SL2VL table gives SL P
//!   (the last `sl2vl-scope` whose `group` holds the port, as for IB; identity without one),
//!   so those VLs must be 0-7 (module `scopes`);
//! * a priority group's bandwidth share is the VLArb weight of its VL (the last matching
//!   `vlarb-scope`; `vlarb-high` and `vlarb-low` weights added, since CEE has one weighted
//!   table), split over the groups that carry a priority; without a scope, equal shares
//!   (module `bandwidth`);
//! * IEEE 802.1Qaz ETS means the same as the priority groups: traffic class = PG, its
//!   bandwidth the PG's share (module `ets`);
//! * levels marked lossless (`lossless: yes`, `<lossless/>`, or `--lossless LEVEL`) put PFC on
//!   their priority, on every port;
//! * `qos-class` rules become IEEE 802.1Qaz APP entries, DSCP (TClass >> 2) -> the level's
//!   priority (module `app`).
//!
//! Criteria that only mean something on an InfiniBand fabric (GUIDs, node types, partitions,
//! `across`, port numbers in `from`/`to`) are left out, each with a note. The result is
//! written as losslessd's `[ports."NAME"]` sections by [`EthConfig::to_toml`] (module `render`).

mod app;
mod bandwidth;
mod ets;
mod levels;
mod ports;
mod render;
mod scopes;

use crate::ast::{Loc, NameIndex, Policy};
use crate::check::{Diagnostic, Emit, Severity};
use serde::Serialize;

pub use app::EthApp;
pub use ets::EthEts;
use ports::Interface;

/// Where findings about the options (`--ports`, `--lossless`) point: the top of the file.
const TOP: Loc = Loc { line: 1, col: 1 };

/// One level as Ethernet sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthLevel {
    pub name: String,
    pub priority: u8,
    pub lossless: bool,
    pub loc: Loc,
}

/// The DCBX configuration of one interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthPort {
    pub name: String,
    /// PGID of priority 0..7.
    pub pgid: [u8; 8],
    /// Bandwidth percentage of PG 0..7; sums to 100.
    pub percent: [u8; 8],
    /// IEEE 802.1Qaz ETS meaning the same: traffic class = priority group.
    pub ets: EthEts,
    /// Priorities with PFC on, ascending.
    pub pfc: Vec<u8>,
    /// IEEE 802.1Qaz APP entries from the `qos-class` rules: DSCP -> priority.
    pub app: Vec<EthApp>,
    /// Port groups holding this interface.
    pub groups: Vec<String>,
    /// The scopes that set its tables (None: the defaults).
    pub sl2vl_scope: Option<Loc>,
    pub vlarb_scope: Option<Loc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EthConfig {
    pub levels: Vec<EthLevel>,
    pub ports: Vec<EthPort>,
}

/// What to compile besides the policy.
#[derive(Debug, Clone, Default)]
pub struct EthOptions {
    /// Interfaces to configure besides those the policy names.
    pub ports: Vec<String>,
    /// Levels to treat as lossless besides those the policy marks.
    pub lossless: Vec<String>,
}

/// Compile the policy for Ethernet. `Err` holds the errors; notes come with either.
///
/// The diagnostics come in this order: levels and qos-ulps, ports, scopes, APP entries,
/// then each port's bandwidth.
pub fn compile_ethernet(
    file: &str,
    policy: &Policy,
    opts: &EthOptions,
) -> (Option<EthConfig>, Vec<Diagnostic>) {
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut d = |severity: Severity, code: &'static str, loc: Loc, message: String| {
        diags.push(Diagnostic {
            severity,
            code,
            file: file.to_string(),
            loc,
            message,
        })
    };
    let names = policy.names();
    let levels = levels::levels(policy, &names, &opts.lossless, &mut d);
    let pfc = levels::pfc(&levels);
    let used = levels::used(policy, &levels);
    let ifaces = ports::interfaces(policy, &opts.ports, &mut d);
    scopes::sl2vl_notes(policy, &names, &ifaces, &mut d);
    scopes::vlarb_notes(policy, &mut d);
    let apps = app::entries(policy, &names, &levels, &ifaces, &mut d);
    let ports: Vec<EthPort> = ifaces
        .iter()
        .zip(apps)
        .map(|(iface, app)| port(policy, &names, iface, &used, &pfc, app, &mut d))
        .collect();
    let failed = diags.iter().any(|x| x.severity == Severity::Error);
    let cfg = (!failed).then_some(EthConfig { levels, ports });
    (cfg, diags)
}

/// The configuration of one interface: its priority groups from the last sl2vl-scope that
/// holds it, their bandwidth from the last vlarb-scope, PFC and APP as given.
fn port(
    policy: &Policy,
    names: &NameIndex,
    iface: &Interface,
    used: &[bool; 8],
    pfc: &[u8],
    app: Vec<EthApp>,
    d: &mut Emit<'_>,
) -> EthPort {
    let sl2vl = scopes::last_sl2vl(policy, names, &iface.name);
    let vlarb = scopes::last_vlarb(policy, names, &iface.name);
    let pgid = scopes::priority_groups(sl2vl);
    let weights = bandwidth::weights(&iface.name, &pgid, vlarb, used, d);
    let percent = bandwidth::percentages(&weights);
    EthPort {
        name: iface.name.clone(),
        pgid,
        percent,
        ets: ets::from_pg(&pgid, &percent),
        pfc: pfc.to_vec(),
        app,
        groups: ports::groups_of(policy, &iface.name),
        sl2vl_scope: sl2vl.map(|s| s.loc),
        vlarb_scope: vlarb.map(|s| s.loc),
    }
}

//! The lab's stock agents (the CEE switch and host of the demos) and when
//! agents on a simulator have converged: shared by the scenarios, the
//! adaptive-headroom links, the tests and the benches.

use lossless_dcbx::{DcbxMode, PortConfig, Reason, Version};
use lossless_wire::cee::{
    AppConfig, AppEntry, AppSelector, PfcConfig, PgConfig, PriorityMap, DCBX_OUI,
};
use lossless_wire::MacAddr;

use crate::sim::{NodeId, Sim};

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

/// Every agent has a DCBX peer and every feature of the version it runs agrees
/// with it (CEE: Syncd and settled; IEEE 802.1Qaz: agreed).
pub fn converged(sim: &Sim) -> bool {
    (0..sim.node_count()).all(|n| agent_converged(sim, n))
}

/// [`converged`] for some of the nodes (the others may be scripted).
pub fn converged_nodes(sim: &Sim, nodes: &[NodeId]) -> bool {
    nodes.iter().all(|&n| agent_converged(sim, n))
}

fn agent_converged(sim: &Sim, n: NodeId) -> bool {
    let a = sim.agent(n);
    let settled = |r: Reason| !matches!(r, Reason::WaitingForAck | Reason::VersionMismatch);
    a.peer_present()
        && a.all_syncd()
        && (a.running() == Version::Ieee
            || settled(a.pg().reason) && settled(a.pfc().reason) && settled(a.app().reason))
}

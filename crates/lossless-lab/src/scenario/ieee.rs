//! The IEEE 802.1Qaz scenarios: `ieee`, `ieee-both-willing`, `auto-cee-peer`,
//! `dual`, and the configurations they use.

use lossless_dcbx::ieee::EtsAdmin;
use lossless_dcbx::{DcbxMode, Duration, Instant, PortConfig};
use lossless_wire::cee::{self, CeeDcbx, Control, FeatureHeader, FeatureTlv};
use lossless_wire::ieee::{
    AppPriority, AppPriorityTable, EtsConfig, EtsRecommendation, EtsTable, IeeeDcbx, PfcConfig,
    PriorityMap, Selector, Tsa,
};
use lossless_wire::MacAddr;

use super::{converged_nodes, report, Report, Scenario, ScenarioInfo};
use crate::scripted::{ScriptedPdu, ScriptedPeer};
use crate::sim::{PathProps, Sim};

/// The switch's ETS table: priority 3 (RoCE data) on TC 1, priority 6 (CNP) on
/// TC 2, the rest on TC 0; TCs 0 and 1 share the link 50/50 by ETS, TC 2 is strict.
pub fn roce_ets_table() -> EtsTable {
    let mut tsa = [Tsa::STRICT; 8];
    tsa[0] = Tsa::ETS;
    tsa[1] = Tsa::ETS;
    EtsTable {
        prio_tc: [0, 0, 0, 1, 0, 0, 2, 0],
        tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa,
    }
}

/// The switch's APP table: DSCP 26 and RoCEv2 (UDP 4791) on priority 3.
pub fn roce_app_table() -> AppPriorityTable {
    let mut t = AppPriorityTable::new();
    for (selector, protocol) in [(Selector::DSCP, 26), (Selector::UDP, 4791)] {
        // Two entries always fit.
        let _ = t.push(AppPriority {
            priority: 3,
            selector,
            protocol,
        });
    }
    t
}

/// The switch of the IEEE scenarios: `mode = "ieee"`, nothing willing; ETS
/// [`roce_ets_table`], sent as the recommendation too; PFC on priority 3; APP
/// [`roce_app_table`].
pub fn ieee_switch_config() -> PortConfig {
    let mut c = PortConfig::new(MacAddr([0x02, 0, 0, 0, 0, 0x0a]));
    c.system_name = Some("switch".into());
    c.dcbx.mode = DcbxMode::Ieee;
    c.dcbx.ieee.ets.willing = false;
    c.dcbx.ieee.ets.cfg = EtsAdmin {
        table: roce_ets_table(),
        ..EtsAdmin::default()
    };
    c.dcbx.pfc.willing = false;
    c.dcbx.pfc.cfg = cee::PfcConfig {
        priorities: PriorityMap(0b0000_1000),
        num_tcs: 8,
    };
    c.dcbx.app.willing = false;
    c.dcbx.ieee.app = roce_app_table();
    c
}

/// The host of the IEEE scenarios: the defaults (`mode = "auto"`, every feature
/// willing, PFC on no priority, every priority on TC 0, no APP entry).
pub fn ieee_host_config() -> PortConfig {
    let mut c = PortConfig::new(MacAddr([0x02, 0, 0, 0, 0, 0x0b]));
    c.system_name = Some("host".into());
    c
}

/// The MAC of the `dual` scenario's scripted peer.
pub const NXOS_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x0c]);

/// What the `dual` scenario's peer sends, as NX-OS does: the CEE DCBX TLV (SeqNo
/// 1, the CEE switch's PG, PFC and APP, nothing willing) and the IEEE 802.1Qaz TLVs
/// ([`ieee_switch_config`]'s ETS, recommendation, PFC and APP) in one LLDPDU.
pub fn dual_pdu() -> ScriptedPdu {
    let sw = super::switch_config();
    let header = FeatureHeader::new(true, false);
    let cee = CeeDcbx::new(
        Control {
            oper_version: 0,
            max_version: 0,
            seq: 1,
            ack: 0,
        },
        Some(FeatureTlv::new(header, sw.dcbx.pg.cfg)),
        Some(FeatureTlv::new(header, sw.dcbx.pfc.cfg)),
        Some(FeatureTlv::new(header, sw.dcbx.app.cfg)),
    );
    let ieee = IeeeDcbx::new(
        Some(EtsConfig {
            willing: false,
            cbs: false,
            max_tcs: 8,
            table: roce_ets_table(),
        }),
        Some(EtsRecommendation {
            table: roce_ets_table(),
        }),
        Some(PfcConfig {
            willing: false,
            mbc: false,
            cap: 8,
            enabled: PriorityMap(0b0000_1000),
            headroom_measurement: false,
        }),
        Some(roce_app_table()),
    );
    ScriptedPdu {
        system_name: Some("nxos".into()),
        cee: Some(cee),
        ieee,
        ..ScriptedPdu::new(NXOS_MAC)
    }
}

const LINK: PathProps = PathProps {
    delay: Duration::from_micros(10),
    loss: 0.0,
};

fn limit(sim: &Sim) -> Instant {
    sim.now() + Duration::from_secs(60)
}

/// `ieee`, `ieee-both-willing` and `auto-cee-peer`: a switch and a host on one link.
pub(super) fn run_pair(info: &ScenarioInfo, seed: u64) -> Report {
    let mut sim = Sim::new(seed).with_capture();
    let (switch_cfg, host_cfg) = match info.scenario {
        Scenario::IeeeBothWilling => {
            let mut sw = ieee_switch_config();
            sw.dcbx.ieee.ets.willing = true;
            sw.dcbx.ieee.ets.cfg.recommend = Some(true);
            sw.dcbx.pfc.willing = true;
            sw.dcbx.app.willing = true;
            let mut host = ieee_host_config();
            host.dcbx.pfc.cfg.priorities = PriorityMap(0b0001_1000);
            (sw, host)
        }
        Scenario::AutoCeePeer => (super::switch_config(), ieee_host_config()),
        _ => (ieee_switch_config(), ieee_host_config()),
    };
    // The configurations above are valid; a failure here is a bug in this file.
    let a = sim.add_agent("switch", switch_cfg).expect("valid switch");
    let b = sim.add_agent("host", host_cfg).expect("valid host");
    let link = sim.connect(a, b);
    sim.set_link_props(a, b, LINK);
    sim.set_link(link, true);
    let both = [a, b];
    let converged_at = sim.run_until_true(limit(&sim), |s| converged_nodes(s, &both));
    sim.run_for(Duration::from_secs(5));
    if info.scenario == Scenario::AutoCeePeer {
        // A link reset: the auto port starts over in IEEE and falls back again.
        sim.set_link(link, false);
        sim.run_for(Duration::from_secs(1));
        sim.set_link(link, true);
        let l = limit(&sim);
        sim.run_until_true(l, |s| converged_nodes(s, &both));
        sim.run_for(Duration::from_secs(5));
    }
    report(info, seed, &sim, converged_at, &both)
}

/// `dual`: the host (auto) next to a scripted peer sending CEE and IEEE TLVs.
pub(super) fn run_dual(info: &ScenarioInfo, seed: u64) -> Report {
    let mut sim = Sim::new(seed).with_capture();
    let host = sim
        .add_agent("host", ieee_host_config())
        .expect("valid host");
    let mut peer = ScriptedPeer::add(&mut sim, "nxos", NXOS_MAC);
    let link = sim.connect(host, peer.node);
    sim.set_link_props(host, peer.node, LINK);
    sim.set_link(link, true);
    // The dual PDU is built from valid configurations.
    let frame = dual_pdu().frame().expect("the dual LLDPDU emits");
    // NX-OS's default LLDP timer: every 30 s.
    peer.schedule(frame, sim.now(), Duration::from_secs(30));
    let l = limit(&sim);
    let converged_at = peer.run_until_true(&mut sim, l, |s| converged_nodes(s, &[host]));
    let end = sim.now() + Duration::from_secs(5);
    peer.run_until(&mut sim, end);
    report(info, seed, &sim, converged_at, &[host])
}

#![allow(clippy::unwrap_used)]
//! The RoCE host settings beyond DCB (`[ports."X".roce]`), on the virtual clock with
//! the node core losslessd runs and the lab's model of a ConnectX host:
//!
//! - what the file configures and the host does not hold is written once, and only
//!   that (a value the host already holds is not written; nothing unconfigured is);
//! - a setting the host refuses is named with its answer and not written again;
//! - a change behind the daemon's back is drift: written back with `nic_drift =
//!   "repair"`, a problem with `"report"`;
//! - a ToS that leaves RoCE in a class the configuration does not make lossless, a
//!   setting the host does not expose, and a firmware LLDP agent are problems.

use lossless_dcbx::{Duration, PortConfig};
use lossless_lab::nic::Driver;
use lossless_lab::roce_host::RoceHostModel;
use lossless_lab::scenario::{ieee_host_config, ieee_switch_config};
use lossless_lab::{NodeId, Sim};
use lossless_node::config::{Apply, PortSettings, RoceMode, RoceSetting, RoceSettings};
use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::nic::DriftPolicy;
use lossless_node::protocol::Request;
use lossless_node::roce::FwAgent;
use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, AppPriorityTable, Selector};
use lossless_wire::MacAddr;
use serde_json::{json, Value};

/// The RoCE host: PFC on 3, DSCP 26 on 3, CNP DSCP 48 on 6.
fn roce_host(roce: RoceSettings) -> PortSettings {
    let mut c: PortConfig = ieee_host_config();
    c.dcbx.pfc.cfg.priorities = PriorityMap(1 << 3);
    let mut t = AppPriorityTable::new();
    for (d, p) in [(26, 3), (48, 6)] {
        t.push(AppPriority {
            priority: p,
            selector: Selector::DSCP,
            protocol: d,
        })
        .unwrap();
    }
    c.dcbx.ieee.app = t;
    let mut s = PortSettings::from_port_config(&c);
    s.apply = Apply::Dcbnl;
    s.roce = roce;
    s
}

/// What `lossless profile roce` writes: ToS 106, RoCE v2, ECN on 3, CNPs DSCP 48 on 6,
/// link pause off.
fn profile() -> RoceSettings {
    RoceSettings {
        tos: Some(106),
        roce_mode: Some(RoceMode::V2),
        traffic_class: Some(106),
        ecn_rp: Some(PriorityMap(1 << 3)),
        ecn_np: Some(PriorityMap(1 << 3)),
        cnp_dscp: Some(48),
        cnp_priority: Some(6),
        global_pause: Some(false),
        fw_lldp_agent: None,
    }
}

fn lab(host: PortSettings, model: RoceHostModel) -> (Sim, NodeId) {
    let mut sim = Sim::new(1);
    let sw = PortSettings::from_port_config(&ieee_switch_config());
    let switch = sim
        .add_node(
            "switch",
            MacAddr([2, 0, 0, 0, 0, 0x0a]),
            sw,
            Driver::NoDcbnl,
        )
        .unwrap();
    let node = sim
        .add_node(
            "host",
            MacAddr([2, 0, 0, 0, 0, 0x0b]),
            host,
            Driver::Dcbnl { buffer: None },
        )
        .unwrap();
    sim.nic_mut(node).roce = model;
    let seg = sim.connect(switch, node);
    sim.set_link(seg, true);
    sim.run_for(Duration::from_secs(3));
    (sim, node)
}

fn port_status(sim: &mut Sim, node: NodeId) -> Value {
    let r = sim.request(node, Request::Status);
    assert!(r.ok, "{r:?}");
    r.result.unwrap()["ports"][0].clone()
}

fn events(sim: &mut Sim, node: NodeId, kind: &str) -> Vec<Value> {
    let r = sim.request(node, Request::Events { follow: false });
    r.result.unwrap()["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == kind)
        .cloned()
        .collect()
}

fn setting<'a>(port: &'a Value, key: &str) -> &'a Value {
    port["roce"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
        .unwrap()
}

#[test]
fn what_the_file_configures_is_written_once_and_only_what_differs() {
    let (mut sim, host) = lab(roce_host(profile()), RoceHostModel::connectx("mlx5_0"));
    let m = &sim.nic(host).roce;
    assert_eq!(m.tos, 106);
    assert_eq!(m.roce_mode, RoceMode::V2);
    assert_eq!(m.ecn_rp, Some(PriorityMap(1 << 3)));
    assert!(!m.pause.unwrap().rx && !m.pause.unwrap().tx);
    // CNP DSCP 48 and priority 6 are what the NIC holds from power-on: not written.
    assert_eq!(
        m.writes,
        vec![
            RoceSetting::Tos(106),
            RoceSetting::RoceMode(RoceMode::V2),
            RoceSetting::TrafficClass(106),
            RoceSetting::EcnRp(PriorityMap(1 << 3)),
            RoceSetting::EcnNp(PriorityMap(1 << 3)),
            RoceSetting::GlobalPause(false),
        ]
    );
    let port = port_status(&mut sim, host);
    assert_eq!(port["problems"], json!([]), "{port:#}");
    assert_eq!(port["roce"]["rdma_device"], "mlx5_0");
    assert_eq!(setting(&port, "tos")["state"], "ok");
    assert_eq!(setting(&port, "tos")["held"], "106 (DSCP 26, ECT(0))");
    assert_eq!(setting(&port, "fw_lldp_agent")["state"], "unmanaged");
    let applied = events(&mut sim, host, "roce_applied");
    assert_eq!(applied.len(), 1, "{applied:#?}");
    assert_eq!(
        applied[0]["settings"][0],
        "roce.tos = 106 (DSCP 26, ECT(0))"
    );
    // Read every 30 s, nothing written again.
    sim.run_for(Duration::from_secs(120));
    assert_eq!(sim.nic(host).roce.writes.len(), 6);
    let metrics = sim.metrics(host);
    assert!(
        metrics.contains("lossless_roce_setting_held{port=\"p0\",setting=\"tos\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("lossless_roce_writes_total{port=\"p0\"} 6"),
        "{metrics}"
    );
}

#[test]
fn nothing_configured_nothing_written_and_a_lossy_tos_is_named() {
    let (mut sim, host) = lab(
        roce_host(RoceSettings::default()),
        RoceHostModel::connectx("mlx5_0"),
    );
    assert_eq!(sim.nic(host).roce.writes, vec![]);
    let port = port_status(&mut sim, host);
    // RDMA CM sends with ToS 0: DSCP 0, which the configuration does not make
    // lossless (DSCP 26 on 3 is).
    assert_eq!(
        port["problems"],
        json!([
            "RDMA CM's default ToS is 0 (DSCP 0, not ECT), a DSCP the configuration does not \
             make lossless (lossless DSCP: 26): that RoCE traffic is lossy (set roce.tos and \
             roce.traffic_class to 106)",
            "the verbs traffic class is 0 (DSCP 0, not ECT), a DSCP the configuration does not \
             make lossless (lossless DSCP: 26): that RoCE traffic is lossy (set roce.tos and \
             roce.traffic_class to 106)"
        ]),
        "{port:#}"
    );
    assert_eq!(setting(&port, "tos")["state"], "unmanaged");
    let metrics = sim.metrics(host);
    assert!(
        metrics.contains("lossless_port_problem{port=\"p0\",problem=\"lossy_tos\"} 1"),
        "{metrics}"
    );
    // configfs not mounted: RDMA CM's ToS cannot be read, which is not knowing, not ok.
    let mut model = RoceHostModel::connectx("mlx5_0");
    model.rdma_cm = false;
    model.traffic_class = Some(106);
    let (mut sim, host) = lab(roce_host(RoceSettings::default()), model);
    assert_eq!(
        port_status(&mut sim, host)["problems"],
        json!([
            "RDMA CM's default ToS could not be read (no rdma_cm in configfs (not mounted, \
                or rdma_cm not loaded)): whether RoCE leaves in a lossless class is not known"
        ])
    );
    // A host without an RDMA device has no RoCE to judge.
    let (mut sim, host) = lab(roce_host(RoceSettings::default()), RoceHostModel::default());
    assert_eq!(port_status(&mut sim, host)["problems"], json!([]));
}

#[test]
fn a_refused_setting_is_named_and_not_written_again() {
    let mut model = RoceHostModel::connectx("mlx5_0");
    model.refuse.insert(
        "roce_mode",
        HardwareError {
            kind: HardwareErrorKind::Refused,
            message: "writing \"RoCE v2\" to .../default_roce_mode: Invalid argument".into(),
            code: Some("EINVAL".into()),
        },
    );
    let (mut sim, host) = lab(roce_host(profile()), model);
    let port = port_status(&mut sim, host);
    let problems = port["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{port:#}");
    assert_eq!(
        problems[0],
        "roce.roce_mode = RoCE v2 is configured, but the host holds IB/RoCE v1: the write was \
         refused (EINVAL: writing \"RoCE v2\" to .../default_roce_mode: Invalid argument)"
    );
    assert_eq!(setting(&port, "roce_mode")["state"], "refused");
    assert_eq!(events(&mut sim, host, "roce_refused").len(), 1);
    let writes = sim.nic(host).roce.writes.len();
    sim.run_for(Duration::from_secs(120));
    assert_eq!(sim.nic(host).roce.writes.len(), writes);
    assert_eq!(events(&mut sim, host, "roce_refused").len(), 1);
}

#[test]
fn a_setting_changed_behind_the_daemons_back_is_drift() {
    for policy in [DriftPolicy::Repair, DriftPolicy::Report] {
        let mut s = roce_host(profile());
        s.nic_drift = policy;
        let (mut sim, host) = lab(s, RoceHostModel::connectx("mlx5_0"));
        assert_eq!(port_status(&mut sim, host)["problems"], json!([]));
        // `cma_roce_tos -d mlx5_0 -t 0`, as someone would.
        sim.nic_mut(host).roce.tos = 0;
        sim.run_for(Duration::from_secs(31));
        let drift = events(&mut sim, host, "roce_drift");
        assert_eq!(drift.len(), 1, "{drift:#?}");
        assert_eq!(
            drift[0]["settings"],
            json!(["roce.tos = 106 (DSCP 26, ECT(0)) became 0 (DSCP 0, not ECT)"])
        );
        let port = port_status(&mut sim, host);
        match policy {
            DriftPolicy::Repair => {
                assert_eq!(drift[0]["repairing"], true);
                assert_eq!(sim.nic(host).roce.tos, 106);
                assert_eq!(port["problems"], json!([]), "{port:#}");
            }
            DriftPolicy::Report => {
                assert_eq!(drift[0]["repairing"], false);
                assert_eq!(sim.nic(host).roce.tos, 0);
                assert!(
                    port["problems"][0].as_str().unwrap().starts_with(
                        "roce.tos = 106 (DSCP 26, ECT(0)) is configured, but the host holds 0"
                    ),
                    "{port:#}"
                );
            }
        }
    }
}

#[test]
fn a_setting_the_host_does_not_expose_is_a_problem_when_configured() {
    // Inbox mlx5: no per-priority ECN files, no verbs traffic class.
    let mut model = RoceHostModel::connectx("mlx5_0");
    model.ecn_rp = None;
    model.ecn_np = None;
    model.traffic_class = None;
    let (mut sim, host) = lab(roce_host(profile()), model);
    let port = port_status(&mut sim, host);
    let problems: Vec<&str> = port["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(
        problems,
        vec![
            "roce.traffic_class = 106 (DSCP 26, ECT(0)) is configured, but this host does not \
             expose it (no verbs traffic class file)",
            "roce.ecn_rp = [3] is configured, but this host does not expose it (no per-priority \
             ECN files)",
            "roce.ecn_np = [3] is configured, but this host does not expose it (no per-priority \
             ECN files)",
        ],
        "{port:#}"
    );
    assert_eq!(setting(&port, "ecn_rp")["state"], "not_exposed");
}

#[test]
fn a_firmware_lldp_agent_is_named_and_turned_off_when_asked() {
    let mut model = RoceHostModel::connectx("irdma0");
    model.driver = "ice".into();
    model.fw_agent = Some(FwAgent {
        flag: "fw-lldp-agent".into(),
        on: true,
    });
    let (mut sim, host) = lab(roce_host(RoceSettings::default()), model.clone());
    let port = port_status(&mut sim, host);
    assert!(
        port["problems"].as_array().unwrap().iter().any(|p| p
            == "the NIC firmware's LLDP agent is on (private flag fw-lldp-agent): it takes the \
                LLDP frames, so this daemon's LLDPDUs may never reach the wire (set \
                roce.fw_lldp_agent = false)"),
        "{port:#}"
    );
    let roce = RoceSettings {
        fw_lldp_agent: Some(false),
        tos: Some(106),
        traffic_class: Some(106),
        ..RoceSettings::default()
    };
    let (mut sim, host) = lab(roce_host(roce), model);
    assert!(!sim.nic(host).roce.fw_agent.as_ref().unwrap().on);
    assert_eq!(port_status(&mut sim, host)["problems"], json!([]));
}

#![allow(clippy::unwrap_used)]
//! `lossless doctor`'s judgement (`lossless_node::doctor`) on the answers of the node
//! core losslessd runs, on the virtual clock: the daemon's answers (`status`, `dcbx
//! show`, `headroom show`, `pfc show`, `neighbors`) read as the CLI reads them, the
//! host's RoCE settings and the NIC from the lab's model of a ConnectX host.
//!
//! - a host running `lossless profile roce` beside a switch imposing the same is ok on
//!   every check the lab can answer;
//! - the switch moving PFC to 4 (the willing host follows, and programs its NIC) makes
//!   `pfc` a problem at both ends and `nic` one (the NIC runs PFC on 4, not RoCE's 3).

use lossless_dcbx::{Duration, PortConfig};
use lossless_lab::nic::Driver;
use lossless_lab::roce_host::RoceHostModel;
use lossless_lab::scenario::{ieee_host_config, ieee_switch_config};
use lossless_lab::{NodeId, Sim};
use lossless_node::config::{Apply, PortSettings, RoceMode, RoceSettings};
use lossless_node::doctor::{
    check_port, Check, Daemon, DaemonPort, NicFacts, PortFacts, Report, Status,
};
use lossless_node::protocol::{FeatureChange, FeatureName, Request};
use lossless_node::roce::Reading;
use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, AppPriorityTable, Selector};
use lossless_wire::MacAddr;
use serde_json::Value;

/// RoCE on 3 (DSCP 26 and UDP 4791), CNPs DSCP 48 on 6; the profile's host settings.
fn roce_host() -> PortSettings {
    let mut c: PortConfig = ieee_host_config();
    c.dcbx.pfc.cfg.priorities = PriorityMap(1 << 3);
    let mut t = AppPriorityTable::new();
    for (sel, proto, p) in [
        (Selector::DSCP, 26, 3),
        (Selector::DSCP, 48, 6),
        (Selector::UDP, 4791, 3),
    ] {
        t.push(AppPriority {
            priority: p,
            selector: sel,
            protocol: proto,
        })
        .unwrap();
    }
    c.dcbx.ieee.app = t;
    let mut s = PortSettings::from_port_config(&c);
    s.apply = Apply::Dcbnl;
    s.roce = RoceSettings {
        tos: Some(106),
        roce_mode: Some(RoceMode::V2),
        traffic_class: Some(106),
        ecn_rp: Some(PriorityMap(1 << 3)),
        ecn_np: Some(PriorityMap(1 << 3)),
        cnp_dscp: Some(48),
        cnp_priority: Some(6),
        global_pause: Some(false),
        fw_lldp_agent: None,
    };
    s.pfc_watchdog.enabled = true;
    s
}

fn lab() -> (Sim, NodeId, NodeId) {
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
    let host = sim
        .add_node(
            "host",
            MacAddr([2, 0, 0, 0, 0, 0x0b]),
            roce_host(),
            Driver::Dcbnl { buffer: None },
        )
        .unwrap();
    sim.nic_mut(host).roce = RoceHostModel::connectx("mlx5_0");
    let seg = sim.connect(switch, host);
    sim.set_link(seg, true);
    sim.run_for(Duration::from_secs(3));
    (sim, switch, host)
}

fn answer(sim: &mut Sim, node: NodeId, req: Request) -> Value {
    let r = sim.request(node, req);
    assert!(r.ok, "{r:?}");
    r.result.unwrap()
}

/// The facts `lossless doctor` gathers, from the lab: the daemon's answers as the CLI
/// asks them (every port at once), the host and the NIC from the models.
fn facts(sim: &mut Sim, node: NodeId) -> PortFacts {
    let status = answer(sim, node, Request::Status);
    let port = status["ports"][0]["port"].as_str().unwrap().to_string();
    let dcbx = answer(sim, node, Request::DcbxShow { port: None });
    let headroom = answer(sim, node, Request::HeadroomShow { port: None });
    let pfc = answer(sim, node, Request::PfcShow { port: None });
    let neighbors = answer(sim, node, Request::Neighbors { port: None });
    let d = DaemonPort::from_answers(
        &port,
        "the lab's node".into(),
        &status,
        &dcbx,
        Some(&headroom),
        Some(&pfc),
        Some(&neighbors),
    )
    .unwrap();
    let nic = sim.nic(node).state().unwrap();
    PortFacts {
        port,
        sysfs: "/sys".into(),
        host: sim.nic(node).roce.read(),
        nic: Reading::Value(NicFacts {
            state: nic,
            peer_pfc: None,
            peer_apps: None,
        }),
        mtu: Reading::Value(1500),
        stats: Reading::Value(vec![("rx_prio3_discards".into(), 0)]),
        daemon: Daemon::Port(Box::new(d)),
        given: None,
    }
}

fn verdicts(checks: &[Check]) -> Vec<(String, Status)> {
    checks.iter().map(|c| (c.check.clone(), c.status)).collect()
}

fn check<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks.iter().find(|c| c.check == name).unwrap()
}

#[test]
fn a_roce_host_beside_a_switch_imposing_the_same_is_ok_where_the_lab_can_answer() {
    let (mut sim, _, host) = lab();
    let f = facts(&mut sim, host);
    let checks = check_port(&f);
    let not_ok: Vec<&Check> = checks.iter().filter(|c| c.status != Status::Ok).collect();
    // The lab's switch sends no Maximum Frame Size TLV, and neither end measures
    // the headroom: those two cannot be checked, and say so.
    assert_eq!(
        not_ok.iter().map(|c| c.check.as_str()).collect::<Vec<_>>(),
        ["mtu", "headroom"],
        "{checks:#?}"
    );
    assert!(
        check(&checks, "mtu")
            .evidence
            .contains("carry no IEEE 802.3 Maximum Frame Size TLV"),
        "{checks:#?}"
    );
    assert_eq!(
        check(&checks, "headroom").evidence,
        "the link's need is not measured: headroom.measure is off for this port"
    );
    assert_eq!(
        check(&checks, "roce_class").evidence,
        "RoCE runs on priority 3, DSCP 26 (udp 4791 (RoCEv2) -> 3, dscp 26 (AF31) -> 3), \
         from the APP entries of the configuration losslessd runs"
    );
    assert_eq!(Report::new(checks).exit_code(), 2);
}

#[test]
fn the_switch_moving_pfc_to_4_is_a_pfc_problem_at_both_ends() {
    let (mut sim, switch, host) = lab();
    let st = answer(&mut sim, switch, Request::Status);
    let port = st["ports"][0]["port"].as_str().unwrap().to_string();
    let change = FeatureChange {
        feature: FeatureName::Pfc,
        priorities: Some(vec![4]),
        ..Default::default()
    };
    answer(&mut sim, switch, Request::DcbxSet { port, change });
    sim.run_for(Duration::from_secs(3));
    let f = facts(&mut sim, host);
    let checks = check_port(&f);
    let pfc = check(&checks, "pfc");
    assert_eq!(pfc.status, Status::Problem, "{checks:#?}");
    assert!(
        pfc.evidence.contains("PFC on 4 here, in operation (willing: running the peer's configuration): not on RoCE's priority 3")
            && pfc.evidence.contains("the peer's PFC on 4: not on 3"),
        "{}",
        pfc.evidence
    );
    // The host programmed what it runs: the NIC agrees with it (PFC on 4).
    let nic = check(&checks, "nic");
    assert_eq!(nic.status, Status::Problem, "{checks:#?}");
    assert!(
        nic.evidence.contains("the NIC runs PFC on 4, not on 3"),
        "{}",
        nic.evidence
    );
    // The CNP priority 6 still has no PFC; the watchdog watches the configured 3 and
    // the negotiated 4; DCBX agreed (on the switch's configuration).
    for name in ["cnp", "watchdog", "dcbx"] {
        assert!(
            verdicts(&checks).contains(&(name.to_string(), Status::Ok)),
            "{name}: {checks:#?}"
        );
    }
    assert!(check(&checks, "watchdog").evidence.contains("watching 3,4"));
}

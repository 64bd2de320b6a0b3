#![allow(clippy::unwrap_used)]
//! One definition of a port's health (`lossless_node::health`), as `status`, the
//! metrics and the lab's report give it, on the virtual clock: a CEE PFC mismatch is
//! unhealthy although every feature is Syncd; a negotiated link is healthy in either
//! DCBX version; a link down, a link with no DCBX peer and a NIC that refuses its
//! programming say so in words.

mod common;
use common::*;

use lossless_dcbx::{AdminStatus, Duration};
use lossless_lab::nic::Driver;
use lossless_lab::scenario;
use lossless_lab::Sim;
use lossless_node::config::{Apply, PortSettings};
use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::protocol::Request;
use lossless_wire::cee::PriorityMap;
use lossless_wire::MacAddr;
use serde_json::{json, Value};

const MISMATCH: &str = "pfc: error, configurations incompatible (mismatch)";

fn status(sim: &mut Sim, node: usize) -> Value {
    let r = sim.request(node, Request::Status);
    assert!(r.ok, "{r:?}");
    r.result.unwrap()
}

fn healthy_gauge(sim: &Sim, node: usize) -> String {
    sim.metrics(node)
        .lines()
        .find(|l| l.starts_with("lossless_port_healthy{"))
        .unwrap_or_else(|| panic!("no lossless_port_healthy:\n{}", sim.metrics(node)))
        .to_string()
}

/// CEE DCBX, neither end willing, PFC 3,4 against 3.
fn mismatch() -> Pair {
    let mut host = host();
    host.dcbx.pfc.willing = false;
    host.dcbx.pfc.cfg.priorities = PriorityMap(0b0000_1000);
    host.dcbx.pg.willing = false;
    let mut p = up_pair(switch(), host);
    p.sim.run_for(Duration::from_secs(5));
    p
}

#[test]
fn a_cee_pfc_mismatch_is_unhealthy_though_every_feature_is_syncd() {
    let mut p = mismatch();
    for node in [p.a, p.b] {
        let s = status(&mut p.sim, node);
        let port = &s["ports"][0];
        // The old view: every feature Syncd, which is true and says nothing of the error.
        assert_eq!(port["all_syncd"], true, "{port:#}");
        assert_eq!(port["healthy"], false, "{port:#}");
        assert_eq!(port["problems"], json!([MISMATCH]), "{port:#}");
        assert_eq!(port["health"], MISMATCH);
        assert_eq!(s["healthy"], false, "{s:#}");
        assert_eq!(s["problems"], json!([format!("p0: {MISMATCH}")]));
        assert_eq!(
            healthy_gauge(&p.sim, node),
            "lossless_port_healthy{port=\"p0\"} 0"
        );
    }
}

#[test]
fn negotiated_links_are_healthy_in_either_version() {
    for (a, b) in [(switch(), host()), (ieee_switch(), ieee_host())] {
        let mut p = converged_pair(a, b);
        p.sim.run_for(Duration::from_secs(2));
        for node in [p.a, p.b] {
            let s = status(&mut p.sim, node);
            let port = &s["ports"][0];
            assert_eq!(port["healthy"], true, "{port:#}");
            assert_eq!(port["health"], "ok");
            assert_eq!(port["problems"], json!([]));
            assert_eq!(s["healthy"], true);
            assert_eq!(s["problems"], json!([]));
            assert_eq!(
                healthy_gauge(&p.sim, node),
                "lossless_port_healthy{port=\"p0\"} 1"
            );
        }
    }
}

#[test]
fn link_down_and_no_peer_are_named() {
    let mut p = converged_pair(switch(), host());
    p.sim.set_link(p.seg, false);
    p.sim.run_for(Duration::from_secs(1));
    let port = status(&mut p.sim, p.a)["ports"][0].clone();
    assert_eq!(port["problems"], json!(["link down"]), "{port:#}");

    // The peer's LLDP is off: nothing is heard on a link that is up.
    let mut quiet = host();
    quiet.admin_status = AdminStatus::Disabled;
    let mut p = up_pair(switch(), quiet);
    p.sim.run_for(Duration::from_secs(5));
    let port = status(&mut p.sim, p.a)["ports"][0].clone();
    assert_eq!(
        port["problems"],
        json!(["no DCBX peer heard since link up"]),
        "{port:#}"
    );
    // The quiet end runs no DCBX because its file says so: nothing is wrong there.
    let port = status(&mut p.sim, p.b)["ports"][0].clone();
    assert_eq!(port["healthy"], true, "{port:#}");
    assert_eq!(port["problems"], json!([]), "{port:#}");
}

#[test]
fn a_refused_dcbnl_programming_is_a_problem() {
    let mut sim = Sim::new(1);
    let mut a = PortSettings::from_port_config(&switch());
    a.apply = Apply::Dcbnl;
    let b = PortSettings::from_port_config(&host());
    let na = sim
        .add_node(
            "switch",
            MacAddr([2, 0, 0, 0, 0, 0x0a]),
            a,
            Driver::Dcbnl { buffer: None },
        )
        .unwrap();
    let nb = sim
        .add_node("host", MacAddr([2, 0, 0, 0, 0, 0x0b]), b, Driver::NoDcbnl)
        .unwrap();
    sim.nic_mut(na).refuse = Some(HardwareError::new(
        HardwareErrorKind::Refused,
        "PFC_SCFG: the driver refused the value (EINVAL)",
    ));
    let seg = sim.connect(na, nb);
    sim.set_link(seg, true);
    sim.run_for(Duration::from_secs(3));
    let port = status(&mut sim, na)["ports"][0].clone();
    assert_eq!(port["healthy"], false, "{port:#}");
    assert_eq!(
        port["problems"],
        json!(["dcbnl programming failed: PFC_SCFG: the driver refused the value (EINVAL)"]),
        "{port:#}"
    );
}

#[test]
fn the_lab_report_prints_each_agents_health() {
    let r = scenario::run("mismatch", 1).unwrap();
    let text = r.render_text();
    assert_eq!(
        text.matches(&format!("\n  health: {MISMATCH}\n")).count(),
        2,
        "{text}"
    );
    let v = serde_json::to_value(&r).unwrap();
    for a in v["agents"].as_array().unwrap() {
        assert_eq!(a["health"]["healthy"], false, "{a:#}");
        assert_eq!(a["health"]["problems"], json!([MISMATCH]));
    }
    for name in ["willing", "ieee"] {
        let r = scenario::run(name, 1).unwrap();
        let text = r.render_text();
        assert_eq!(text.matches("\n  health: ok\n").count(), 2, "{text}");
    }
}

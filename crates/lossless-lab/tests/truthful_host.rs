#![allow(clippy::unwrap_used)]
//! A host's health says "ok" only when the traffic its configuration calls lossless
//! is lossless, on the virtual clock with the node core losslessd runs:
//!
//! - a RoCE class left on a priority whose PFC the switch took away is a problem;
//! - a driver that takes DSCP APP entries only (mlx5, ice, hns3) gets every entry it
//!   takes, each refused one is named with the driver's answer, and the trust order
//!   still goes through; RoCEv2 classified by DSCP is not a problem;
//! - the NIC read back: an entry removed behind the daemon's back is drift, repaired
//!   (`nic_drift = "repair"`) or reported (`"report"`);
//! - the NIC is not programmed again with what it holds (ice flaps its link for each
//!   programming);
//! - `mode = "static"` runs the file's configuration beside a neighbour that sends no
//!   DCBX, healthy; a neighbour whose DCBX TLVs differ is reported.

use lossless_dcbx::{DcbxMode, Duration, PortConfig};
use lossless_lab::nic::Driver;
use lossless_lab::scenario::{host_config, ieee_host_config, ieee_switch_config, switch_config};
use lossless_lab::{NodeId, Sim};
use lossless_node::config::{Apply, PortSettings};
use lossless_node::nic::DriftPolicy;
use lossless_node::protocol::Request;
use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, AppPriorityTable, Selector};
use lossless_wire::MacAddr;
use serde_json::{json, Value};

fn app(selector: Selector, protocol: u16, priority: u8) -> AppPriority {
    AppPriority {
        priority,
        selector,
        protocol,
    }
}

fn table(entries: &[AppPriority]) -> AppPriorityTable {
    let mut t = AppPriorityTable::new();
    for e in entries {
        t.push(*e).unwrap();
    }
    t
}

/// The RoCE host: willing, PFC on 3, DSCP 26 and UDP 4791 on 3, CNP DSCP 48 on 6.
fn roce_host() -> PortConfig {
    let mut c = ieee_host_config();
    c.dcbx.pfc.cfg.priorities = PriorityMap(1 << 3);
    c.dcbx.ieee.app = table(&[
        app(Selector::DSCP, 26, 3),
        app(Selector::DSCP, 48, 6),
        app(Selector::UDP, 4791, 3),
    ]);
    c
}

struct Lab {
    sim: Sim,
    switch: NodeId,
    host: NodeId,
    seg: lossless_lab::SegmentId,
}

/// A switch node (no dcbnl) and a host node whose NIC is programmed.
fn lab(switch: PortConfig, host: PortSettings, dscp_only: bool) -> Lab {
    lab_with(switch, host, Driver::Dcbnl { buffer: None }, dscp_only)
}

/// [`lab`] with the host's driver.
fn lab_with(switch: PortConfig, host: PortSettings, driver: Driver, dscp_only: bool) -> Lab {
    let mut sim = Sim::new(1);
    let sw = PortSettings::from_port_config(&switch);
    let switch = sim
        .add_node(
            "switch",
            MacAddr([2, 0, 0, 0, 0, 0x0a]),
            sw,
            Driver::NoDcbnl,
        )
        .unwrap();
    let host = sim
        .add_node("host", MacAddr([2, 0, 0, 0, 0, 0x0b]), host, driver)
        .unwrap();
    sim.nic_mut(host).dscp_only = dscp_only;
    let seg = sim.connect(switch, host);
    sim.set_link(seg, true);
    sim.run_for(Duration::from_secs(3));
    Lab {
        sim,
        switch,
        host,
        seg,
    }
}

fn dcbnl(c: &PortConfig) -> PortSettings {
    let mut s = PortSettings::from_port_config(c);
    s.apply = Apply::Dcbnl;
    s
}

fn port_status(sim: &mut Sim, node: NodeId) -> Value {
    let r = sim.request(node, Request::Status);
    assert!(r.ok, "{r:?}");
    r.result.unwrap()["ports"][0].clone()
}

#[test]
fn a_roce_class_on_a_priority_the_switch_took_pfc_from_is_unhealthy() {
    // The switch (not willing) runs PFC on 4 and sends no APP entries, as lldpad
    // told `-T -V PFC enabled=4` does.
    let mut sw = ieee_switch_config();
    sw.dcbx.pfc.cfg.priorities = PriorityMap(1 << 4);
    sw.dcbx.ieee.app = AppPriorityTable::new();
    let mut l = lab(sw, dcbnl(&roce_host()), false);
    // The host did what IEEE 802.1Qaz says: it runs the switch's PFC ...
    assert_eq!(l.sim.nic(l.host).ieee_pfc, Some(1 << 4));
    // ... and its RoCE classes still go to 3, which has no PFC now.
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["healthy"], false, "{port:#}");
    let lossy = "carries a class the configuration makes lossless, but priority 3 has no PFC \
                 in operation (PFC on 4: willing: running the peer's configuration): that \
                 traffic is lossy";
    assert_eq!(
        port["problems"],
        json!([
            format!("APP dscp 26 (AF31) -> 3 {lossy}"),
            format!("APP udp 4791 (RoCEv2) -> 3 {lossy}"),
        ]),
        "{port:#}"
    );
    // The CNP (DSCP 48 -> 6) is no lossless class: not named.
    let metrics = l.sim.metrics(l.host);
    assert!(
        metrics.contains("lossless_port_healthy{port=\"p0\"} 0"),
        "{metrics}"
    );

    // The same switch with PFC on 3: nothing to say.
    let mut sw = ieee_switch_config();
    sw.dcbx.ieee.app = AppPriorityTable::new();
    let mut l = lab(sw, dcbnl(&roce_host()), false);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["problems"], json!([]), "{port:#}");
    let _ = l.switch;
}

#[test]
fn a_dscp_only_driver_gets_every_entry_it_takes_and_each_refusal_is_named() {
    let mut l = lab(ieee_switch_config(), dcbnl(&roce_host()), true);
    let nic = l.sim.nic(l.host).clone();
    // Every DSCP entry reached the NIC, and the trust order after them, although
    // the UDP entry between them was refused.
    assert!(
        nic.apps.contains(&app(Selector::DSCP, 26, 3)),
        "{:?}",
        nic.apps
    );
    assert!(
        nic.apps.contains(&app(Selector::DSCP, 48, 6)),
        "{:?}",
        nic.apps
    );
    assert!(!nic.apps.contains(&app(Selector::UDP, 4791, 3)));
    assert_eq!(nic.trust, Some(lossless_node::hardware::Trust::DscpThenPcp));
    // RoCEv2 is classified by its DSCP on this NIC: no problem.
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["problems"], json!([]), "{port:#}");
    // `dcbx show` reads the NIC back and says what it holds and what it refused.
    let r = l.sim.request(l.host, Request::DcbxShow { port: None });
    let nic = r.result.unwrap()["ports"][0]["nic"].clone();
    assert_eq!(nic["read_s_ago"], json!(0.0), "{nic:#}");
    assert_eq!(nic["pfc"], json!([3]), "{nic:#}");
    assert_eq!(nic["trust"], json!(["dscp", "pcp"]), "{nic:#}");
    assert_eq!(nic["apps"].as_array().unwrap().len(), 2, "{nic:#}");
    assert_eq!(
        nic["refused"][0]["text"],
        "APP udp 4791 (RoCEv2) -> 3: refused by the driver (EINVAL)"
    );
    assert_eq!(nic["refused"][0]["covered"], true);
    assert_eq!(nic["dscp_only"], true);
    // Nothing sent again for the refused entry, however long it runs.
    let programs = l.sim.nic(l.host).ieee_programs;
    l.sim.run_for(Duration::from_secs(120));
    assert_eq!(l.sim.nic(l.host).ieee_programs, programs);

    // FCoE has no DSCP to fall back on: its refused entry is a problem, by name.
    let mut host = roce_host();
    host.dcbx.pfc.cfg.priorities = PriorityMap((1 << 3) | (1 << 4));
    host.dcbx.ieee.app = table(&[
        app(Selector::DSCP, 26, 3),
        app(Selector::ETHERTYPE, 0x8906, 4),
    ]);
    let mut sw = ieee_switch_config();
    sw.dcbx.pfc.cfg.priorities = PriorityMap((1 << 3) | (1 << 4));
    let mut l = lab(sw, dcbnl(&host), true);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(
        port["problems"],
        json!(["APP ethertype 0x8906 (FCoE) -> 4: refused by the driver (EINVAL): not in the NIC"]),
        "{port:#}"
    );
}

fn events(sim: &mut Sim, node: NodeId) -> Vec<Value> {
    let r = sim.request(node, Request::Events { follow: false });
    assert!(r.ok, "{r:?}");
    r.result.unwrap()["events"].as_array().unwrap().clone()
}

#[test]
fn an_entry_removed_behind_the_daemons_back_is_drift_repaired_or_reported() {
    for policy in [DriftPolicy::Repair, DriftPolicy::Report] {
        let mut host = dcbnl(&roce_host());
        host.nic_drift = policy;
        let mut l = lab(ieee_switch_config(), host, false);
        let gone = app(Selector::DSCP, 26, 3);
        assert!(l.sim.nic(l.host).apps.contains(&gone));
        // `dcb app del dev p0 dscp-prio 26:3`, as someone would.
        l.sim.nic_mut(l.host).apps.retain(|a| *a != gone);
        l.sim.run_for(Duration::from_secs(31));
        let drift: Vec<Value> = events(&mut l.sim, l.host)
            .into_iter()
            .filter(|e| e["event"] == "nic_drift")
            .collect();
        assert_eq!(drift.len(), 1, "{drift:#?}");
        assert_eq!(
            drift[0]["differences"],
            json!(["APP dscp 26 (AF31) -> 3: no longer in the NIC's table"])
        );
        let port = port_status(&mut l.sim, l.host);
        match policy {
            DriftPolicy::Repair => {
                assert_eq!(drift[0]["repairing"], true);
                assert!(l.sim.nic(l.host).apps.contains(&gone));
                assert_eq!(port["problems"], json!([]), "{port:#}");
            }
            DriftPolicy::Report => {
                assert_eq!(drift[0]["repairing"], false);
                assert!(!l.sim.nic(l.host).apps.contains(&gone));
                assert_eq!(
                    port["problems"],
                    json!(["read back: APP dscp 26 (AF31) -> 3: no longer in the NIC's table"]),
                    "{port:#}"
                );
            }
        }
    }
}

#[test]
fn what_the_nic_holds_is_not_programmed_again_after_a_link_flap() {
    let mut l = lab(ieee_switch_config(), dcbnl(&roce_host()), false);
    let programs = l.sim.nic(l.host).ieee_programs;
    assert!(programs >= 1);
    for _ in 0..3 {
        l.sim.set_link(l.seg, false);
        l.sim.run_for(Duration::from_secs(1));
        l.sim.set_link(l.seg, true);
        l.sim.run_for(Duration::from_secs(3));
    }
    assert_eq!(l.sim.nic(l.host).ieee_programs, programs);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["problems"], json!([]), "{port:#}");
}

#[test]
fn static_mode_is_healthy_beside_a_switch_without_dcbx_and_reports_one_that_differs() {
    // A SONiC-like neighbour: LLDP, no DCBX TLV.
    let mut sw = ieee_switch_config();
    sw.dcbx.enabled = false;
    let mut host = roce_host();
    host.dcbx.mode = DcbxMode::Static;
    let mut l = lab(sw.clone(), dcbnl(&host), false);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["healthy"], true, "{port:#}");
    // The file's configuration is in the NIC.
    let nic = l.sim.nic(l.host);
    assert_eq!(nic.ieee_pfc, Some(1 << 3));
    assert!(nic.apps.contains(&app(Selector::DSCP, 26, 3)));
    // In auto mode the same neighbour leaves the host without a peer: unhealthy.
    let mut l = lab(sw, dcbnl(&roce_host()), false);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(
        port["problems"],
        json!(["the LLDP neighbour sends no DCBX TLV"]),
        "{port:#}"
    );

    // A neighbour that does send DCBX, with PFC on 4: followed in auto mode, and
    // in static mode reported, not followed.
    let mut sw = ieee_switch_config();
    sw.dcbx.pfc.cfg.priorities = PriorityMap(1 << 4);
    let mut l = lab(sw, dcbnl(&host), false);
    assert_eq!(l.sim.nic(l.host).ieee_pfc, Some(1 << 3));
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(
        port["problems"],
        json!([
            "static mode: the neighbour's DCBX TLVs differ from the configuration (PFC on 4 \
                there, on 3 here): one end is not configured like the other"
        ]),
        "{port:#}"
    );
}

/// A CEE APP table of one entry.
fn cee_table(
    selector: lossless_wire::cee::AppSelector,
    protocol: u16,
    priority: u8,
) -> lossless_wire::cee::AppTable {
    let mut t = lossless_wire::cee::AppTable::new();
    t.push(lossless_wire::cee::AppEntry {
        selector,
        protocol,
        oui: lossless_wire::cee::DCBX_OUI,
        priorities: PriorityMap(1 << priority),
    });
    t
}

#[test]
fn cee_too_a_roce_class_on_a_priority_without_pfc_is_unhealthy() {
    use lossless_wire::cee::AppSelector;
    // A willing CEE host: PFC on 3, RoCEv2 (port 4791) on 3.
    let mut host = host_config();
    host.dcbx.pfc.cfg.priorities = PriorityMap(1 << 3);
    host.dcbx.app.cfg.entries = cee_table(AppSelector::PORT, 4791, 3);
    // The CEE switch (not willing) runs PFC on 4 only and its APP table has FCoE on
    // 4 and no RoCEv2 entry: the willing host takes that table, and RoCE keeps the
    // host's priority 3, without PFC. (With the lab switch's own table, RoCEv2 on 4,
    // the host would run RoCE on 4 with PFC: nothing to say.)
    let mut sw = switch_config();
    sw.dcbx.pfc.cfg.priorities = PriorityMap(1 << 4);
    sw.dcbx.app.cfg.entries = cee_table(AppSelector::ETHERTYPE, 0x8906, 4);
    let mut l = lab(sw, dcbnl(&host), false);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(
        port["problems"],
        json!([
            "APP port 4791 (RoCEv2) -> 3 carries a class the configuration makes lossless, \
                but not every one of its priorities has PFC in operation (PFC on 4: willing: \
                running the peer's configuration): that traffic is lossy"
        ]),
        "{port:#}"
    );
}

#[test]
fn cnps_on_a_priority_with_pfc_and_pfc_in_a_starved_class_are_problems() {
    // The switch (not willing) runs PFC on 3 and 6: CNPs (DSCP 48 -> 6) on the host
    // now run with PFC.
    let mut sw = ieee_switch_config();
    sw.dcbx.pfc.cfg.priorities = PriorityMap((1 << 3) | (1 << 6));
    sw.dcbx.ieee.app = AppPriorityTable::new();
    let mut l = lab(sw, dcbnl(&roce_host()), false);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(
        port["problems"],
        json!([
            "CNPs (APP dscp 48 (CS6) -> 6) run on a priority with PFC: congestion \
                notifications can be paused behind the data they are about; give them a \
                priority without PFC"
        ]),
        "{port:#}"
    );

    // The switch recommends ETS that gives RoCE's class nothing: PFC priority 3 sits
    // in a class with 0 %.
    let mut sw = ieee_switch_config();
    sw.dcbx.ieee.app = AppPriorityTable::new();
    sw.dcbx.ieee.ets.cfg.table.tc_bw = [100, 0, 0, 0, 0, 0, 0, 0];
    let mut l = lab(sw, dcbnl(&roce_host()), false);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(
        port["problems"],
        json!([
            "PFC priority 3 is in traffic class 1, an ETS class with 0 % of the bandwidth: \
                it may never be sent"
        ]),
        "{port:#}"
    );
}

#[test]
fn a_watchdog_without_counters_says_what_it_cannot_see() {
    // The host's NIC has no dcbnl (a veth, a virtual NIC): no PFC counters from the
    // driver, so the watchdog counts the PFC frames the host receives (issue 29, item
    // 11) and says what that leaves unseen: the pauses this NIC sends, and, with none
    // received yet, maybe every pause (a NIC that handles PFC in hardware passes none
    // up). Never "no counters" any more. With a dcbnl NIC, nothing is said.
    for (driver, rx_only) in [
        (Driver::NoDcbnl, true),
        (Driver::Dcbnl { buffer: None }, false),
    ] {
        let mut host = PortSettings::from_port_config(&roce_host());
        host.pfc_watchdog.enabled = true;
        let mut l = lab_with(ieee_switch_config(), host, driver, false);
        let port = port_status(&mut l.sim, l.host);
        let problems = port["problems"].as_array().unwrap();
        let said = problems.iter().any(|p| {
            let p = p.as_str().unwrap();
            p.starts_with("the PFC watchdog counts the PFC frames the host receives")
                && p.contains("pauses this NIC sends are never seen")
        });
        assert_eq!(said, rx_only, "{driver:?}: {port:#}");
        assert!(
            !problems
                .iter()
                .any(|p| p.as_str().unwrap().contains("sees no counters")),
            "{driver:?}: {port:#}"
        );
        assert_eq!(port["healthy"], !rx_only, "{driver:?}: {port:#}");
    }
}

#[test]
fn cee_too_the_nic_is_read_back_and_drift_repaired() {
    // A willing CEE host, programmed through dcbnl, beside the lab's CEE switch.
    let mut l = lab(switch_config(), dcbnl(&host_config()), false);
    let programmed = l.sim.nic(l.host).cee.len();
    assert!(programmed >= 1);
    let r = l.sim.request(l.host, Request::DcbxShow { port: None });
    let v = r.result.unwrap()["ports"][0].clone();
    assert_eq!(v["mode"]["running"], "cee", "{v:#}");
    let cee = &v["nic"]["cee"];
    assert_eq!(cee["pfc"], 0b0001_1000, "{v:#}");
    assert_eq!(cee["pfc_state"], true);
    assert_eq!(cee["pg"][0], json!([0, 0, 0, 1, 1, 1, 15, 2]));
    assert_eq!(v["nic"]["differences"], json!([]));
    // Someone switches PFC off on the NIC behind the daemon's back (lldpad's
    // `dcbtool sc IF pfc e:0` would).
    let last = l.sim.nic(l.host).cee.last().copied().unwrap();
    l.sim.nic_mut(l.host).cee.push((None, last.1));
    l.sim.run_for(Duration::from_secs(31));
    let drift: Vec<Value> = events(&mut l.sim, l.host)
        .into_iter()
        .filter(|e| e["event"] == "nic_drift")
        .collect();
    assert_eq!(drift.len(), 1, "{drift:#?}");
    assert_eq!(
        drift[0]["differences"],
        json!(["the NIC runs PFC on none, not on 3,4 as programmed"])
    );
    // Programmed back: PFC on 3,4 again, nothing to say.
    let nic = l.sim.nic(l.host);
    assert_eq!(nic.cee.len(), programmed + 2);
    assert_eq!(
        nic.cee.last().unwrap().0.map(|p| p.priorities),
        Some(PriorityMap(0b0001_1000))
    );
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["problems"], json!([]), "{port:#}");
}

#[test]
fn a_nic_that_cannot_be_read_back_is_not_ok() {
    let mut l = lab(ieee_switch_config(), dcbnl(&roce_host()), false);
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["problems"], json!([]), "{port:#}");
    // The driver stops answering IEEE_GET: what the NIC holds is no longer known.
    l.sim.nic_mut(l.host).read_fails = Some(lossless_node::hardware::HardwareError::new(
        lossless_node::hardware::HardwareErrorKind::Timeout,
        "p0: DCB_CMD_IEEE_GET: no dcbnl reply within 2s",
    ));
    l.sim.run_for(Duration::from_secs(31));
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(
        port["problems"],
        json!([
            "the NIC could not be read back (p0: DCB_CMD_IEEE_GET: no dcbnl reply within \
                2s): what it holds is not known"
        ]),
        "{port:#}"
    );
    // It answers again: the next read clears it.
    l.sim.nic_mut(l.host).read_fails = None;
    l.sim.run_for(Duration::from_secs(31));
    let port = port_status(&mut l.sim, l.host);
    assert_eq!(port["problems"], json!([]), "{port:#}");
}

#[test]
fn a_programming_held_for_the_peer_is_not_ok_until_it_goes() {
    // No DCBX peer on the link (the switch's LLDP is off): the programming waits
    // 3 s after link-up for one, and status says so meanwhile.
    let mut sw = ieee_switch_config();
    sw.admin_status = lossless_dcbx::AdminStatus::Disabled;
    let mut sim = Sim::new(1);
    let s = sim
        .add_node(
            "switch",
            MacAddr([2, 0, 0, 0, 0, 0x0a]),
            PortSettings::from_port_config(&sw),
            Driver::NoDcbnl,
        )
        .unwrap();
    let h = sim
        .add_node(
            "host",
            MacAddr([2, 0, 0, 0, 0, 0x0b]),
            dcbnl(&roce_host()),
            Driver::Dcbnl { buffer: None },
        )
        .unwrap();
    let seg = sim.connect(s, h);
    sim.set_link(seg, true);
    sim.run_for(Duration::from_secs(1));
    let problems = port_status(&mut sim, h)["problems"].clone();
    assert!(
        problems.as_array().unwrap().iter().any(|p| p
            .as_str()
            .unwrap()
            .starts_with("dcbnl: the programming waits for the DCBX peer")),
        "{problems:#}"
    );
    assert_eq!(sim.nic(h).ieee_programs, 0);
    sim.run_for(Duration::from_secs(3));
    assert_eq!(sim.nic(h).ieee_programs, 1);
    let problems = port_status(&mut sim, h)["problems"].clone();
    assert_eq!(problems, json!(["no DCBX peer heard since link up"]));
}

#![allow(clippy::unwrap_used)]
//! Two nodes (the node core losslessd runs) on a 100 ns link of the lab, measuring it,
//! with a modelled NIC on node A (no NIC with a DCB buffer exists on the test
//! machines). No root, no sockets.
//!
//! What it checks: the headroom measured on the link reaches the NIC as the IEEE PFC
//! delay and as the size of the DCB buffers that hold PFC priorities, with the
//! driver's priority-to-buffer map kept and its other buffers left alone; and where
//! the driver has no buffer, `headroom show`, the metrics and the events say why.

use lossless_dcbx::{DcbxMode, Duration, Version};
use lossless_lab::nic::Driver;
use lossless_lab::{LogEntry, PathProps, Sim};
use lossless_node::config::{
    AppRule, AppRules, Apply, HeadroomSettings, PortSettings, RuleSelector,
};
use lossless_node::hardware::{DcbBuffer, Trust};
use lossless_node::protocol::{DaemonEvent, FeatureChange, FeatureName, Request};
use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, EtsTable, Selector, Tsa};
use lossless_wire::MacAddr;
use serde_json::Value;

/// One way, each direction.
const DELAY: Duration = Duration::from_nanos(100);

/// Priorities 3 and 4 (PFC) in buffer 1, the others in buffer 0, on a 1 MiB port.
const DRIVER: DcbBuffer = DcbBuffer {
    prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
    buffer_size: [262_144, 65_536, 0, 0, 0, 0, 0, 0],
    total_size: 1_048_576,
};

/// Node A (0): `apply = "dcbnl"`, PFC on 3 and 4, not willing, with `driver`; node B
/// (1): the defaults. Both measure at 100G.
fn pair(driver: Driver) -> Sim {
    let mut sim = Sim::new(1);
    let headroom = HeadroomSettings {
        speed: Some(100_000_000_000),
        ..HeadroomSettings::default()
    };
    let mut a = PortSettings {
        apply: Apply::Dcbnl,
        headroom,
        ..PortSettings::default()
    };
    a.dcbx.pfc.willing = false;
    a.dcbx.pfc.cfg.priorities = PriorityMap(0b0001_1000);
    a.dcbx.headroom_measurement = true;
    let mut b = PortSettings {
        headroom,
        ..PortSettings::default()
    };
    b.dcbx.headroom_measurement = true;
    let na = sim
        .add_node("va", MacAddr([2, 0, 0, 0, 0, 0x0a]), a, driver)
        .unwrap();
    let nb = sim
        .add_node("vb", MacAddr([2, 0, 0, 0, 0, 0x0b]), b, Driver::NoDcbnl)
        .unwrap();
    let seg = sim.connect(na, nb);
    sim.set_link_props(
        na,
        nb,
        PathProps {
            delay: DELAY,
            loss: 0.0,
        },
    );
    sim.set_link(seg, true);
    sim
}

fn show(sim: &mut Sim) -> Value {
    let r = sim.request(0, Request::HeadroomShow { port: None });
    r.result.unwrap()["ports"][0].clone()
}

fn hardware_events(sim: &Sim) -> Vec<Value> {
    sim.log()
        .iter()
        .filter_map(|e| match e {
            LogEntry::Node {
                node: 0,
                event: ev @ DaemonEvent::HeadroomHardware { .. },
                ..
            } => Some(serde_json::to_value(ev).unwrap()),
            _ => None,
        })
        .collect()
}

#[test]
fn headroom_reaches_the_pfc_delay_and_the_dcb_buffer() {
    let mut s = pair(Driver::Dcbnl {
        buffer: Some(DRIVER),
    });
    s.run_for(Duration::from_secs(3));
    let h = show(&mut s);
    // The virtual link's round trip, exactly: 2 x 100 ns; X = 100G x 200 ns.
    assert_eq!(h["last"]["round_trip_ns"], 200.0, "{h:#}");
    let x = h["need"]["x_bit_times"].as_u64().unwrap();
    assert_eq!(x, 20_000);
    let bytes = h["applied"]["bytes"].as_u64().unwrap();
    // DV = 20,000 + 2 x 16,160 + 672 bit times = 6,624 bytes, 42 cells of 160.
    assert_eq!(bytes, 42 * 160);
    assert_eq!(h["hardware"]["state"], "applied");
    assert_eq!(h["hardware"]["pfc_delay_bits"], 20_000);
    assert_eq!(s.nic(0).pfc_sets, vec![(0b0001_1000, 20_000)]);

    // 6,720 bytes is below the driver's 64 KiB in buffer 1: nothing to write, and
    // the buffer is reported as holding the headroom.
    assert!(
        s.nic(0).buffer_sets.is_empty(),
        "{:?}",
        s.nic(0).buffer_sets
    );
    assert_eq!(h["buffer"]["state"], "sized", "{h:#}");
    assert_eq!(h["buffer"]["written"], false);
    assert_eq!(h["buffer"]["lossless"], serde_json::json!([1]));
    assert_eq!(h["buffer"]["floor"][1], 65_536);

    // A driver whose lossless buffer is smaller than the headroom gets it grown,
    // its map and its other buffer kept; a PFC change re-sizes for the new priorities.
    let mut small = DRIVER;
    small.buffer_size[1] = 4_096;
    let mut s = pair(Driver::Dcbnl {
        buffer: Some(small),
    });
    s.run_for(Duration::from_secs(3));
    let sets = &s.nic(0).buffer_sets;
    assert_eq!(sets.len(), 1, "{sets:?}");
    let w = sets[0];
    assert_eq!(w.prio2buffer, DRIVER.prio2buffer);
    assert_eq!(w.buffer_size, [262_144, 6_720, 0, 0, 0, 0, 0, 0]);
    let h = show(&mut s);
    assert_eq!(h["buffer"]["state"], "sized");
    assert_eq!(h["buffer"]["written"], true);
    assert_eq!(h["buffer"]["buffer_size"][1], 6_720);
    assert_eq!(h["buffer"]["floor"][1], 4_096);
    let ev = hardware_events(&s);
    let last = ev.last().unwrap();
    assert_eq!(last["buffer"]["state"], "sized", "{last}");
    assert_eq!(last["pfc_delay"]["pfc_delay_bits"], 20_000);
    let metrics = s.metrics(0);
    for line in [
        "lossless_headroom_pfc_delay_bit_times{port=\"p0\"} 20000",
        "lossless_headroom_buffer_state{port=\"p0\",state=\"sized\",reason=\"\"} 1",
        "lossless_headroom_buffer_bytes{port=\"p0\",buffer=\"1\"} 6720",
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line}:\n{metrics}");
    }

    // PFC moves to priorities 0 and 7, which live in buffer 0: the delay is set for
    // them, and buffer 0 (256 KiB) already holds the headroom.
    let r = s.request(
        0,
        Request::DcbxSet {
            port: "p0".into(),
            change: FeatureChange {
                feature: FeatureName::Pfc,
                priorities: Some(vec![0, 7]),
                ..FeatureChange::default()
            },
        },
    );
    assert!(r.ok, "{r:?}");
    s.run_for(Duration::from_secs(3));
    let pfc_sets = &s.nic(0).pfc_sets;
    assert_eq!(
        pfc_sets.last(),
        Some(&(0b1000_0001, 20_000)),
        "{pfc_sets:?}"
    );
    assert_eq!(s.nic(0).buffer_sets.len(), 1);
    let h = show(&mut s);
    assert_eq!(h["buffer"]["lossless"], serde_json::json!([0]), "{h:#}");
    assert_eq!(h["buffer"]["written"], false);
    // The change was persisted before it ran.
    assert!(s.persisted(0).ports["p0"].pfc.is_some());
}

#[test]
fn a_driver_without_a_buffer_is_reported_with_the_reason() {
    let mut s = pair(Driver::Dcbnl { buffer: None });
    s.run_for(Duration::from_secs(3));
    let h = show(&mut s);
    assert_eq!(h["hardware"]["state"], "applied", "{h:#}");
    let reason = "driver exposes no DCB buffer: no DCB_ATTR_DCB_BUFFER in IEEE_GET";
    assert_eq!(h["buffer"]["state"], "unsupported");
    assert_eq!(h["buffer"]["reason"], reason);
    assert!(s.nic(0).buffer_sets.is_empty());
    let ev = hardware_events(&s);
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["buffer"]["reason"], reason);
    let metrics = s.metrics(0);
    let line = format!(
        "lossless_headroom_buffer_state{{port=\"p0\",state=\"unsupported\",reason=\"{reason}\"}} 1"
    );
    assert!(metrics.lines().any(|l| l == line), "{metrics}");
}

/// A change the state directory cannot persist is refused and changes nothing.
#[test]
fn a_change_that_cannot_be_persisted_changes_nothing() {
    let mut s = pair(Driver::Dcbnl {
        buffer: Some(DRIVER),
    });
    s.run_for(Duration::from_secs(3));
    let before = s.agent(0).config().clone();
    let programmed = s.nic(0).cee.len();
    s.set_persist_fails(0, true);
    let r = s.request(
        0,
        Request::DcbxSet {
            port: "p0".into(),
            change: FeatureChange {
                feature: FeatureName::Pfc,
                priorities: Some(vec![5]),
                ..FeatureChange::default()
            },
        },
    );
    assert!(!r.ok);
    let e = r.error.unwrap();
    assert_eq!(
        serde_json::to_value(e.kind).unwrap(),
        "persist",
        "{}",
        e.message
    );
    assert!(e.message.contains("nothing changed"), "{}", e.message);
    s.run_for(Duration::from_secs(3));
    assert_eq!(s.agent(0).config(), &before);
    assert_eq!(s.nic(0).cee.len(), programmed);
    assert!(s.persisted(0).ports.is_empty());
}

// ---- IEEE 802.1Qaz ---------------------------------------------------------------

/// An APP entry that another tool (lldptool, `dcb app`) put in the NIC before.
const FOREIGN: AppPriority = AppPriority {
    priority: 2,
    selector: Selector::ETHERTYPE,
    protocol: 0x8914,
};

fn rule(selector: RuleSelector, protocol: u16, priority: u8) -> AppRule {
    AppRule {
        selector,
        protocol,
        priorities: PriorityMap(1 << priority),
        oui: lossless_wire::cee::DCBX_OUI,
    }
}

/// A switch's settings: not willing, PFC on 3, ETS with a recommendation (priority 3
/// in class 1 at 50 %, CNP priority 6 in class 2, strict), APP DSCP 26 and UDP 4791 ->
/// 3; IEEE (auto mode, which a node peer answers in IEEE).
fn ieee_switch() -> PortSettings {
    let mut s = PortSettings::default();
    s.dcbx.pfc.willing = false;
    s.dcbx.pfc.cfg.priorities = PriorityMap(1 << 3);
    s.dcbx.ieee.ets.willing = false;
    s.dcbx.ieee.ets.cfg.table = EtsTable {
        prio_tc: [0, 0, 0, 1, 0, 0, 2, 0],
        tc_bw: [50, 50, 0, 0, 0, 0, 0, 0],
        tsa: [
            Tsa::ETS,
            Tsa::ETS,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
            Tsa::STRICT,
        ],
    };
    s.dcbx.app.willing = false;
    s.set_app(AppRules {
        entries: vec![
            rule(RuleSelector::Dscp, 26, 3),
            rule(RuleSelector::Udp, 4791, 3),
        ],
    });
    s
}

/// Node 0: a willing host with `apply = "dcbnl"` and `driver` (holding FOREIGN, with
/// or without a trust table); node 1: the switch.
fn ieee_pair(trust_table: bool) -> Sim {
    let mut sim = Sim::new(2);
    let host = PortSettings {
        apply: Apply::Dcbnl,
        ..PortSettings::default()
    };
    let h = sim
        .add_node(
            "host",
            MacAddr([2, 0, 0, 0, 0, 0x0b]),
            host,
            Driver::Dcbnl { buffer: None },
        )
        .unwrap();
    {
        let nic = sim.nic_mut(h);
        nic.apps.push(FOREIGN);
        nic.has_trust = trust_table;
    }
    let s = sim
        .add_node(
            "switch",
            MacAddr([2, 0, 0, 0, 0, 0x0a]),
            ieee_switch(),
            Driver::NoDcbnl,
        )
        .unwrap();
    let seg = sim.connect(h, s);
    sim.set_link_props(
        h,
        s,
        PathProps {
            delay: DELAY,
            loss: 0.0,
        },
    );
    sim.set_link(seg, true);
    sim.run_for(Duration::from_secs(2));
    sim
}

#[test]
fn ieee_configuration_reaches_the_nic_and_only_our_app_entries_change() {
    let mut s = ieee_pair(true);
    let sw = ieee_switch();
    assert_eq!(s.agent(0).running(), Version::Ieee);
    let nic = s.nic(0);
    assert_eq!(nic.dcbx_mode, Some(Version::Ieee));
    // The host is willing: it runs the switch's recommendation and PFC.
    let ets = nic.ets.expect("ETS programmed");
    assert_eq!(ets.table, sw.dcbx.ieee.ets.cfg.table);
    assert!(ets.willing);
    assert_eq!(nic.ieee_pfc, Some(1 << 3));
    // The switch's entries merged into the host's (empty) table, beside FOREIGN.
    let dscp = AppPriority {
        priority: 3,
        selector: Selector::DSCP,
        protocol: 26,
    };
    let udp = AppPriority {
        priority: 3,
        selector: Selector::UDP,
        protocol: 4791,
    };
    assert_eq!(nic.apps, [FOREIGN, dscp, udp]);
    // A DSCP entry: the NIC trusts DSCP, then PCP.
    assert_eq!(nic.trust, Some(Trust::DscpThenPcp));
    assert!(nic.app_deletes.is_empty());

    // The switch drops UDP 4791: the host deletes exactly that entry, one request.
    let mut fewer = sw.clone();
    fewer.set_app(AppRules {
        entries: vec![rule(RuleSelector::Dscp, 26, 3)],
    });
    s.write_settings(1, fewer).unwrap();
    s.run_for(Duration::from_secs(2));
    let nic = s.nic(0);
    assert_eq!(nic.app_deletes, [udp]);
    assert_eq!(nic.apps, [FOREIGN, dscp]);

    // The host is told to run CEE: it tells the NIC, and withdraws its IEEE entries
    // (the foreign one stays) and the DSCP trust it set.
    let mut cee = s.settings(0).clone();
    cee.dcbx.mode = DcbxMode::Cee;
    s.write_settings(0, cee).unwrap();
    s.run_for(Duration::from_secs(2));
    let nic = s.nic(0);
    assert_eq!(nic.dcbx_mode, Some(Version::Cee));
    assert_eq!(nic.apps, [FOREIGN]);
    assert_eq!(nic.app_deletes, [udp, dscp]);
    assert_eq!(nic.trust, Some(Trust::Pcp));
    let r = s.request(0, Request::Status);
    let hw = &r.result.unwrap()["ports"][0]["hardware"];
    assert_eq!(hw["mode"], "dcbnl", "{hw}");
    assert!(hw.get("error").is_none(), "{hw}");
}

#[test]
fn a_driver_without_a_trust_table_is_not_an_error() {
    let s = ieee_pair(false);
    let nic = s.nic(0);
    assert_eq!(nic.trust, None);
    assert_eq!(nic.apps.len(), 3);
    assert_eq!(s.port(0).ieee_hw.trust_supported, Some(false));
    let errors: u64 = s.port(0).hw_errors.iter().map(|(_, n)| n).sum();
    assert_eq!(errors, 0);
}

/// promtool accepts the node's metrics text, with every family populated: IEEE with a
/// dcbnl NIC, a measured headroom and a sized buffer on one node, CEE on another.
#[test]
fn promtool_accepts_the_metrics() {
    if !lossless_testkit::require(
        "promtool_accepts_the_metrics",
        &[lossless_testkit::Oracle::Promtool],
    ) {
        return;
    }
    let mut ieee = ieee_pair(true);
    let mut measured = pair(Driver::Dcbnl {
        buffer: Some(DRIVER),
    });
    measured.run_for(Duration::from_secs(3));
    ieee.run_for(Duration::from_secs(1));
    // A malformed LLDPDU from node 1: its Chassis ID TLV claims 7 bytes, 1 follows.
    let mut junk = vec![
        0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 0x0b, 0x88, 0xcc,
    ];
    junk.extend([0x02, 0x07, 0x04]);
    ieee.send_frame(1, junk);
    ieee.run_for(Duration::from_millis(10));
    let counted: Vec<_> = ieee.agent(0).decode_errors().iter().collect();
    assert_eq!(counted.len(), 1, "{counted:?}");
    let (field, kind, n) = counted[0];
    assert!(ieee.metrics(0).contains(&format!(
        "lossless_decode_errors_total{{port=\"p0\",field=\"{field}\",kind=\"{kind}\"}} {n}"
    )));
    for (sim, node) in [(&ieee, 0), (&measured, 0), (&measured, 1)] {
        let text = sim.metrics(node);
        for family in [
            "lossless_dcbx_mode",
            "lossless_dcbx_ieee_tlvs_invalid_total",
            "lossless_decode_errors_total",
            "lossless_hardware_errors_total",
            "lossless_dcbx_syncd",
        ] {
            assert!(text.contains(family), "{family}:\n{text}");
        }
        if let Err(e) = lossless_testkit::promtool_check_metrics(&text) {
            panic!("promtool check metrics:\n{e}\n---\n{text}");
        }
    }
}

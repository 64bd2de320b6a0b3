//! The checks on facts laid by hand: a healthy RoCE host (with and without a daemon),
//! then each fact made wrong, or unreadable, one at a time.

use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{AppPriority, EtsTable, Selector, Tsa};
use serde_json::{json, Value};

use super::class::{decide, Source};
use super::*;
use crate::config::RoceMode;
use crate::hardware::{DcbBuffer, IeeePfc, NicState};
use crate::roce::{FwAgent, HostRoce, Pause, RdmaPort, Reading};

fn dscp(d: u16, p: u8) -> AppPriority {
    AppPriority {
        priority: p,
        selector: Selector::DSCP,
        protocol: d,
    }
}

fn udp(port: u16, p: u8) -> AppPriority {
    AppPriority {
        priority: p,
        selector: Selector::UDP,
        protocol: port,
    }
}

/// RoCE on 3 (DSCP 26), CNPs on 6 (DSCP 48) in a strict class: what `lossless profile
/// roce` sets up.
fn ets() -> EtsTable {
    EtsTable {
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
    }
}

fn host() -> HostRoce {
    HostRoce {
        driver: Some("mlx5_core".into()),
        rdma: Some(RdmaPort {
            device: "mlx5_0".into(),
            port: 1,
        }),
        tos: Reading::Value(106),
        roce_mode: Reading::Value(RoceMode::V2),
        traffic_class: Reading::Value(106),
        ecn_rp: Reading::Value(PriorityMap(1 << 3)),
        ecn_np: Reading::Value(PriorityMap(1 << 3)),
        cnp_dscp: Reading::Value(48),
        cnp_priority: Reading::Value(6),
        pause: Reading::Value(Pause::default()),
        fw_agent: Reading::Value(None),
    }
}

fn nic() -> NicFacts {
    NicFacts {
        state: NicState {
            ets: Some(ets()),
            pfc: Some(IeeePfc {
                cap: 8,
                enabled: 1 << 3,
                ..IeeePfc::default()
            }),
            apps: vec![dscp(26, 3), dscp(48, 6)],
            trust: None,
            buffer: Some(DcbBuffer {
                prio2buffer: [0, 0, 0, 1, 0, 0, 0, 0],
                buffer_size: [131_072, 262_144, 0, 0, 0, 0, 0, 0],
                total_size: 1 << 20,
            }),
            dcbx: Some(0x09),
            cee: None,
        },
        peer_pfc: None,
        peer_apps: None,
    }
}

fn without_daemon() -> PortFacts {
    PortFacts {
        port: "eth0".into(),
        sysfs: "/sys".into(),
        host: host(),
        nic: Reading::Value(nic()),
        mtu: Reading::Value(4200),
        stats: Reading::Value(vec![
            ("rx_prio0_discards".into(), 12),
            ("rx_prio3_discards".into(), 0),
            ("rx_prio3_buf_discard".into(), 0),
            ("rx_prio3_cong_discard".into(), 0),
        ]),
        daemon: Daemon::Without {
            why: "no daemon answers on /run/lossless/losslessd.sock (connection refused)".into(),
            fix: "start losslessd".into(),
        },
        given: None,
    }
}

fn ieee_feature(oper: Value, peer: Value) -> Value {
    json!({
        "enable": true, "advertise": true, "willing": true, "oper": oper, "oper_mode": true,
        "agreed": true, "error": false, "peer": peer,
        "reason_text": "willing: running the peer's configuration",
    })
}

fn cee_feature(oper: Value) -> Value {
    json!({
        "enable": true, "advertise": true, "oper": oper, "oper_mode": false, "syncd": false,
        "error": false, "peer": null, "reason_text": "DCBX is not running on this port",
    })
}

fn apps_json(apps: &[AppPriority]) -> Value {
    serde_json::to_value(apps).unwrap()
}

/// The daemon's answers for one port `eth0`, shaped as `status`, `dcbx show`, `headroom
/// show`, `pfc show` and `neighbors` give them.
struct Answers {
    status: Value,
    dcbx: Value,
    headroom: Value,
    pfc: Value,
    neighbors: Value,
}

fn answers() -> Answers {
    let ets = serde_json::to_value(ets()).unwrap();
    let app = [dscp(26, 3), dscp(48, 6), udp(4791, 3)];
    let priorities: Vec<Value> = (0..8u8)
        .map(|p| {
            json!({"priority": p, "pfc": p == 3, "rx_frames": 0, "tx_frames": 0,
                   "rx_rate": 0.0, "tx_rate": 0.0, "rx_paused": null, "tx_paused": null,
                   "state": if p == 3 { "ok" } else { "off" }, "forced_off": false,
                   "storms": 0, "restorations": 0,
                   "discards": [{"kind": "no_buffer", "total": 0, "rate": 0.0},
                                {"kind": "host_congestion", "total": 0, "rate": 0.0}]})
        })
        .collect();
    Answers {
        status: json!({"daemon": {"version": "0.1.0", "pid": 7},
            "ports": [{"port": "eth0", "link_up": true, "admin_status": "rxtx", "neighbors": 1,
                       "hardware": {"mode": "dcbnl", "applied": 1}}]}),
        dcbx: json!({"ports": [{
            "port": "eth0", "dcbx_enabled": true, "dcbx_active": true, "peer_present": true,
            "all_syncd": true, "any_error": false,
            "mode": {"configured": "auto", "running": "ieee", "reason_text": "auto"},
            "ieee": {
                "ets": ieee_feature(ets.clone(), ets),
                "pfc": ieee_feature(json!([3]), json!([3])),
                "app": ieee_feature(apps_json(&app), apps_json(&app[..1])),
                "peer_tlvs": {"pfc": {"cap": 8, "enabled": [3], "mbc": false, "willing": false},
                              "app": apps_json(&[dscp(26, 3), udp(4791, 3)])},
            },
            "pg": cee_feature(json!({"pgid": [0, 0, 0, 1, 0, 0, 15, 0],
                                      "percent": [50, 50, 0, 0, 0, 0, 0, 0], "num_tcs": 8})),
            "pfc": cee_feature(json!({"priorities": [3], "num_tcs": 8})),
            "app": cee_feature(json!({"entries": []})),
            "app_rules": {"entries": [
                {"selector": "dscp", "protocol": 26, "priorities": [3]},
                {"selector": "dscp", "protocol": 48, "priorities": [6]},
                {"selector": "udp", "protocol": 4791, "priorities": [3]},
            ]},
        }]}),
        headroom: json!({"ports": [{"port": "eth0", "running": true, "max_frame_octets": 4222,
            "need": {"x_bit_times": 20000, "headroom": {"bytes": 40960}},
            "applied": {"bytes": 40960},
            "buffer": {"state": "sized", "headroom_bytes": 40960}, "failures": 0}]}),
        pfc: json!({"ports": [{"port": "eth0", "available": true, "source": "dcbnl",
            "interval_ms": 200, "samples": 50, "failures": 0,
            "discontinuities": {"resets": 0, "wraps": 0, "vanished": 0},
            "watchdog": {"enabled": true, "action": "alert", "detection_ms": 200,
                         "restoration_ms": 200, "priorities": [3]},
            "priorities": priorities}]}),
        neighbors: json!({"ports": [{"port": "eth0",
            "neighbors": [{"chassis_id": "sw1", "max_frame_size": 4222}]}]}),
    }
}

fn daemon_port(a: &Answers) -> DaemonPort {
    DaemonPort::from_answers(
        "eth0",
        "losslessd 0.1.0 pid 7 on /run/lossless/losslessd.sock".into(),
        &a.status,
        &a.dcbx,
        Some(&a.headroom),
        Some(&a.pfc),
        Some(&a.neighbors),
    )
    .unwrap()
}

fn with_daemon(a: &Answers) -> PortFacts {
    PortFacts {
        daemon: Daemon::Port(Box::new(daemon_port(a))),
        ..without_daemon()
    }
}

fn d(f: &mut PortFacts) -> &mut DaemonPort {
    match &mut f.daemon {
        Daemon::Port(p) => p,
        Daemon::Without { .. } => unreachable!(),
    }
}

fn check<'a>(checks: &'a [Check], name: &str) -> &'a Check {
    checks.iter().find(|c| c.check == name).unwrap()
}

fn status_of(f: &PortFacts, name: &str) -> (Status, String, Option<String>) {
    let checks = check_port(f);
    let c = check(&checks, name);
    (c.status, c.evidence.clone(), c.fix.clone())
}

/// Asserts the check's status, and that its evidence (and fix) hold the words given.
#[track_caller]
fn expect(f: &PortFacts, name: &str, status: Status, evidence: &str, fix: &str) {
    let (s, e, x) = status_of(f, name);
    assert_eq!(s, status, "{name}: {e} / fix {x:?}");
    assert!(e.contains(evidence), "{name}: {e:?} lacks {evidence:?}");
    match (status, x) {
        (Status::Ok, x) => assert_eq!(x, None, "{name}: ok with a fix"),
        (_, Some(x)) => assert!(x.contains(fix), "{name}: fix {x:?} lacks {fix:?}"),
        (_, None) => panic!("{name}: {status:?} without a fix"),
    }
}

#[test]
fn a_healthy_host_with_a_daemon_is_ok_on_every_check() {
    let f = with_daemon(&answers());
    let r = Report::new(check_port(&f));
    let not_ok: Vec<&Check> = r.checks.iter().filter(|c| c.status != Status::Ok).collect();
    assert!(not_ok.is_empty(), "{not_ok:#?}");
    assert_eq!(r.checks.len(), CHECKS.len());
    assert!(r.ok);
    assert_eq!(r.exit_code(), 0);
    expect(
        &f,
        "roce_class",
        Status::Ok,
        "priority 3, DSCP 26 (udp 4791 (RoCEv2) -> 3, dscp 26 (AF31) -> 3), from the APP \
         entries of the configuration losslessd runs",
        "",
    );
    expect(
        &f,
        "dcbx",
        Status::Ok,
        "IEEE 802.1Qaz with the peer (mode auto): ETS, PFC and APP agreed",
        "",
    );
    expect(
        &f,
        "trust",
        Status::Ok,
        "mlx5_core reports no trust order",
        "",
    );
    expect(
        &f,
        "mtu",
        Status::Ok,
        "the peer takes frames up to 4222 octets",
        "",
    );
    expect(
        &f,
        "watchdog",
        Status::Ok,
        "watching 3, counters from dcbnl",
        "",
    );
    expect(
        &f,
        "discards",
        Status::Ok,
        "no discards on PFC priority 3 since losslessd watches the port (50 readings every \
         200 ms)",
        "",
    );
}

#[test]
fn without_a_daemon_the_host_is_checked_and_what_only_the_daemon_knows_is_unknown() {
    let f = without_daemon();
    let r = Report::new(check_port(&f));
    let by = |s: Status| -> Vec<&str> {
        r.checks
            .iter()
            .filter(|c| c.status == s)
            .map(|c| c.check.as_str())
            .collect()
    };
    assert_eq!(by(Status::Problem), Vec::<&str>::new(), "{r:#?}");
    assert_eq!(
        by(Status::Unknown),
        ["dcbx", "pfc", "mtu", "headroom", "watchdog"],
        "{r:#?}"
    );
    assert!(!r.ok);
    assert_eq!(r.exit_code(), 2);
    // The class came from the NIC's APP table: no udp 4791 there (mlx5 takes DSCP
    // entries only), so from the DSCP that RDMA CM's ToS carries.
    expect(
        &f,
        "roce_class",
        Status::Ok,
        "priority 3, DSCP 26 (dscp 26 (AF31) -> 3), from the NIC's APP table (dcbnl), no \
         daemon to ask",
        "",
    );
    expect(
        &f,
        "dcbx",
        Status::Unknown,
        "no daemon answers on /run/lossless/losslessd.sock (connection refused): what DCBX \
         agreed with the peer is known to losslessd",
        "start losslessd",
    );
    expect(
        &f,
        "pfc",
        Status::Unknown,
        "PFC on 3 here, in the NIC; the peer's PFC is not known",
        "check PFC on priority 3 in the switch's configuration",
    );
    expect(
        &f,
        "nic",
        Status::Ok,
        "the NIC runs PFC on 3; it holds dscp 26 (AF31) -> 3",
        "",
    );
    // Discards on priority 0 (no PFC) are the lossy class's business.
    expect(
        &f,
        "discards",
        Status::Ok,
        "no discards on PFC priority 3",
        "",
    );
}

#[test]
fn a_firmware_agent_reporting_the_peer_gives_the_peers_pfc_without_a_daemon() {
    let mut f = without_daemon();
    let mut n = nic();
    n.peer_pfc = Some(PriorityMap(1 << 4));
    f.nic = Reading::Value(n);
    expect(
        &f,
        "pfc",
        Status::Problem,
        "the peer's PFC on 4: not on 3",
        "turn PFC on for priority 3 on the peer's port",
    );
}

#[test]
fn a_firmware_agent_reporting_the_peer_gives_the_peers_app_without_a_daemon() {
    let mut f = without_daemon();
    let mut n = nic();
    n.peer_apps = Some(vec![dscp(26, 0)]);
    f.nic = Reading::Value(n);
    expect(
        &f,
        "app",
        Status::Problem,
        "the peer sends dscp 26",
        "map RoCE to priority 3 on the switch port facing eth0 as well",
    );
}

#[test]
fn each_check_fails_on_its_fact() {
    let a = answers();
    let base = with_daemon(&a);
    // roce_class: the daemon's APP entries classify nothing.
    let mut f = base.clone();
    d(&mut f).dcbx.app_rules = Default::default();
    expect(
        &f,
        "roce_class",
        Status::Problem,
        "send neither udp 4791 nor a DSCP other than the CNPs' (48) to a PFC priority",
        "lossless profile roce --port eth0 --apply-to-daemon",
    );
    // ... and every check that needs the class says so.
    expect(
        &f,
        "pfc",
        Status::Unknown,
        "RoCE's priority is not known",
        "roce_class",
    );
    // The watchdog too (failed on the old code: ok, whatever it watched).
    expect(
        &f,
        "watchdog",
        Status::Unknown,
        "whether it watches RoCE's cannot be said",
        "roce_class",
    );

    // dcbx: no peer; a feature not agreed; static mode is fine.
    let mut f = base.clone();
    d(&mut f).dcbx.peer_present = false;
    d(&mut f).dcbx.ieee.pfc.reason_text = "no DCBX peer heard since link up".into();
    expect(
        &f,
        "dcbx",
        Status::Problem,
        "no DCBX peer: no DCBX peer heard since link up",
        "lossless dcbx set eth0 mode static",
    );
    // A neighbour that sends LLDP without DCBX (SONiC): static mode first.
    d(&mut f).neighbor_dcbx = vec!["none".into()];
    expect(
        &f,
        "dcbx",
        Status::Problem,
        "no DCBX peer: the LLDP neighbour sends no DCBX TLV",
        "facing a switch that sends LLDP without DCBX (SONiC): lossless dcbx set eth0 mode \
         static; or",
    );
    let mut f = base.clone();
    d(&mut f).dcbx.ieee.pfc.agreed = false;
    d(&mut f).dcbx.ieee.pfc.error = true;
    d(&mut f).dcbx.ieee.pfc.reason_text = "neither side takes the other's configuration".into();
    expect(
        &f,
        "dcbx",
        Status::Problem,
        "pfc: error, neither side takes the other's configuration",
        "lossless dcbx show eth0",
    );
    let mut f = base.clone();
    d(&mut f).dcbx.mode.configured = "static".into();
    d(&mut f).dcbx.peer_present = false;
    d(&mut f).dcbx.ieee.peer_tlvs = Default::default();
    d(&mut f).dcbx.ieee.pfc.peer = None;
    expect(&f, "dcbx", Status::Ok, "static mode", "");
    // ... and then the peer's PFC cannot be seen.
    expect(
        &f,
        "pfc",
        Status::Unknown,
        "the neighbour sends no IEEE 802.1Qaz PFC TLV (static mode)",
        "switch's configuration",
    );
    let mut f = base.clone();
    d(&mut f).link_up = false;
    expect(
        &f,
        "dcbx",
        Status::Problem,
        "the link is down",
        "ip link set eth0 up",
    );

    // pfc: the switch pushed PFC on 4 and the willing host took it.
    let mut f = base.clone();
    d(&mut f).dcbx.ieee.pfc.oper = PriorityMap(1 << 4);
    d(&mut f).dcbx.ieee.peer_tlvs.pfc = Some(facts::PeerPfc {
        enabled: PriorityMap(1 << 4),
    });
    let (s, e, x) = status_of(&f, "pfc");
    assert_eq!(s, Status::Problem);
    assert!(
        e.contains("PFC on 4 here, in operation (willing: running the peer's configuration): not on RoCE's priority 3")
            && e.contains("the peer's PFC on 4: not on 3"),
        "{e}"
    );
    let x = x.unwrap();
    assert!(
        x.contains("lossless dcbx set eth0 pfc --willing no --priorities 3")
            && x.contains("turn PFC on for priority 3 on the peer's port"),
        "{x}"
    );
    // ... which the NIC still running PFC on 3 differs from.
    expect(
        &f,
        "nic",
        Status::Problem,
        "losslessd runs PFC on 4 in operation, the NIC on 3",
        "lossless dcbx show eth0",
    );

    // app: no udp 4791 in operation; the peer sends RoCE's DSCP elsewhere.
    let mut f = base.clone();
    d(&mut f).dcbx.ieee.app.oper = vec![dscp(26, 3), dscp(48, 6)];
    expect(
        &f,
        "app",
        Status::Problem,
        "no APP entry for udp 4791 (RoCEv2) in operation",
        "lossless dcbx set eth0 app add udp 4791 3",
    );
    // app: RoCE's DSCP to two priorities (the NIC keeps one of them): not ok. Failed
    // on the old code, which took any entry to 3 as enough.
    let mut f = base.clone();
    d(&mut f).dcbx.ieee.app.oper = vec![dscp(26, 3), dscp(26, 5), dscp(48, 6), udp(4791, 3)];
    expect(
        &f,
        "app",
        Status::Problem,
        "DSCP 26 goes to more than one priority",
        "lossless dcbx set eth0 app del dscp 26 5",
    );
    // app: RoCE's DSCP sent elsewhere only: the fix deletes that entry as well as
    // adding 3's (adding alone left two priorities, a problem the next run named).
    let mut f = base.clone();
    d(&mut f).dcbx.ieee.app.oper = vec![dscp(26, 5), dscp(48, 6), udp(4791, 3)];
    expect(
        &f,
        "app",
        Status::Problem,
        "dscp 26 (AF31) -> 5 in operation: not to 3",
        "lossless dcbx set eth0 app del dscp 26 5; lossless dcbx set eth0 app add dscp 26 3",
    );
    let mut f = base.clone();
    d(&mut f).dcbx.ieee.peer_tlvs.app = Some(vec![dscp(26, 4)]);
    expect(
        &f,
        "app",
        Status::Problem,
        "the peer sends dscp 26 (AF31) -> 4",
        "map RoCE to priority 3 on the switch port facing eth0",
    );

    // nic: PFC not on 3, no DSCP entry; no dcbnl; apply = "none".
    let mut f = base.clone();
    let mut n = nic();
    n.state.pfc = Some(IeeePfc::default());
    n.state.apps = vec![];
    f.nic = Reading::Value(n);
    expect(
        &f,
        "nic",
        Status::Problem,
        "the NIC runs PFC on no priority, not on 3",
        "nic row",
    );
    d(&mut f).hardware = crate::protocol::Hardware::ReportOnly;
    expect(
        &f,
        "nic",
        Status::Problem,
        "it holds no entry for DSCP 26",
        "apply = \"dcbnl\"",
    );
    let mut f = without_daemon();
    f.nic = Reading::NotExposed("the driver does not support DCB netlink (EOPNOTSUPP)".into());
    expect(
        &f,
        "nic",
        Status::Unknown,
        "RoCE's priority is not known",
        "roce_class",
    );
    f.given = Some(GivenClass {
        priority: 3,
        dscp: Some(26),
    });
    expect(
        &f,
        "nic",
        Status::Problem,
        "the NIC has no DCB netlink",
        "a NIC with DCB (dcbnl)",
    );
    expect(
        &f,
        "roce_class",
        Status::Ok,
        "given on the command line",
        "",
    );

    // trust: a trust table with PCP first; a driver without one that is not known to
    // trust DSCP; mlx5 without a DSCP entry.
    let mut f = base.clone();
    let mut n = nic();
    n.state.trust = Some(vec![255, 5]);
    f.nic = Reading::Value(n);
    expect(
        &f,
        "trust",
        Status::Problem,
        "the NIC trusts pcp first (trust order: pcp, dscp)",
        "dcb apptrust set dev eth0 order dscp pcp",
    );
    let mut f = base.clone();
    f.host.driver = Some("bnxt_en".into());
    expect(
        &f,
        "trust",
        Status::Unknown,
        "the driver (bnxt_en) reports no trust order",
        "dcb apptrust set dev eth0 order dscp pcp",
    );
    let mut f = base.clone();
    let mut n = nic();
    n.state.apps = vec![];
    f.nic = Reading::Value(n);
    expect(
        &f,
        "trust",
        Status::Problem,
        "trusts PCP until it holds a DSCP APP entry",
        "dcb app add dev eth0 dscp-prio 26:3",
    );

    // tos: RDMA CM's ToS 0; the verbs traffic class unset; no RDMA device.
    let mut f = base.clone();
    f.host.tos = Reading::Value(0);
    expect(
        &f,
        "tos",
        Status::Problem,
        "RDMA CM's default ToS on mlx5_0 port 1 is 0 (DSCP 0, not ECT), not DSCP 26",
        "lossless roce set eth0 tos=106",
    );
    let mut f = without_daemon();
    f.sysfs = "/host/sys".into();
    f.host.tos = Reading::Value(0);
    f.host.traffic_class = Reading::Value(0);
    let (s, _, x) = status_of(&f, "tos");
    assert_eq!(s, Status::Problem);
    assert_eq!(
        x.unwrap(),
        "mkdir -p /host/sys/kernel/config/rdma_cm/mlx5_0 && echo 106 > \
         /host/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos; echo 106 > \
         /host/sys/class/infiniband/mlx5_0/tc/1/traffic_class"
    );
    let mut f = base.clone();
    f.host.rdma = None;
    expect(
        &f,
        "tos",
        Status::Unknown,
        "eth0 has no RDMA device (/sys/class/net/eth0/device/infiniband has no entry)",
        "load the RDMA driver",
    );

    // roce_mode.
    let mut f = base.clone();
    f.host.roce_mode = Reading::Value(RoceMode::V1);
    expect(
        &f,
        "roce_mode",
        Status::Problem,
        "is IB/RoCE v1",
        "lossless roce set eth0 roce_mode=v2",
    );

    // ecn: not on 3 at the reaction point; not exposed (inbox mlx5).
    let mut f = base.clone();
    f.host.ecn_rp = Reading::Value(PriorityMap(0));
    expect(
        &f,
        "ecn",
        Status::Problem,
        "ECN reaction point (rate limiting) on no priority: not on 3",
        "lossless roce set eth0 ecn_rp=3",
    );
    let mut f = base.clone();
    f.host.ecn_np = Reading::NotExposed("no ecn/ directory".into());
    expect(
        &f,
        "ecn",
        Status::Unknown,
        "ECN notification point (CNPs) per priority is not exposed: no ecn/ directory",
        "ROCE_CC_PRIO_MASK",
    );

    // cnp: on the PFC priority; on a priority in an ETS class; its DSCP mapped
    // elsewhere.
    let mut f = base.clone();
    f.host.cnp_priority = Reading::Value(3);
    expect(
        &f,
        "cnp",
        Status::Problem,
        "priority 3 has PFC",
        "lossless roce set eth0 cnp_priority=6",
    );
    let mut f = base.clone();
    f.host.cnp_priority = Reading::Value(5);
    expect(
        &f,
        "cnp",
        Status::Problem,
        "traffic class 0, ETS 50 % (as the NIC holds it): not a strict class",
        "--tc 0:0,1,2,4,6,7:50 --tc 1:3:50 --tc 2:5:strict",
    );
    let mut f = base.clone();
    d(&mut f).dcbx.app_rules.entries[1].priorities = PriorityMap(1 << 5);
    expect(
        &f,
        "cnp",
        Status::Problem,
        "the APP entries send the CNPs' DSCP elsewhere: dscp 48 (CS6) -> 5",
        "lossless dcbx set eth0 app add dscp 48 6",
    );

    // global_pause.
    let mut f = base.clone();
    f.host.pause = Reading::Value(Pause {
        autoneg: false,
        rx: true,
        tx: true,
    });
    expect(
        &f,
        "global_pause",
        Status::Problem,
        "802.3x link pause is on (rx, tx)",
        "lossless roce set eth0 global_pause=off",
    );

    // fw_agent: ice's flag on; mlx5's firmware DCBX.
    let mut f = without_daemon();
    f.host.fw_agent = Reading::Value(Some(FwAgent {
        flag: "fw-lldp-agent".into(),
        on: true,
    }));
    expect(
        &f,
        "fw_agent",
        Status::Problem,
        "the NIC firmware's LLDP agent is on (private flag fw-lldp-agent)",
        "ethtool --set-priv-flags eth0 fw-lldp-agent off",
    );
    f.host.fw_agent = Reading::Value(Some(FwAgent {
        flag: "disable-fw-lldp".into(),
        on: true,
    }));
    expect(
        &f,
        "fw_agent",
        Status::Problem,
        "private flag disable-fw-lldp",
        "ethtool --set-priv-flags eth0 disable-fw-lldp on",
    );
    let mut f = base.clone();
    let mut n = nic();
    n.state.dcbx = Some(0x0a);
    f.nic = Reading::Value(n);
    expect(
        &f,
        "fw_agent",
        Status::Problem,
        "the NIC's firmware runs DCBX (dcbnl DCBX mode 0x0a, LLD_MANAGED)",
        "dcb dcbx set dev eth0 host ieee",
    );

    // mtu: the peer takes smaller frames; the headroom sized for smaller frames.
    let mut f = base.clone();
    d(&mut f).peer_max_frame = Some(1522);
    expect(
        &f,
        "mtu",
        Status::Problem,
        "the peer takes frames up to 1522 octets",
        "ip link set eth0 mtu 1504",
    );
    let mut f = base.clone();
    d(&mut f).peer_max_frame = Some(9216);
    expect(
        &f,
        "mtu",
        Status::Problem,
        "the peer sends frames up to 9216 octets",
        "ip link set eth0 mtu 9198",
    );
    let mut f = base.clone();
    d(&mut f).headroom.as_mut().unwrap().max_frame_octets = Some(2000);
    expect(
        &f,
        "mtu",
        Status::Problem,
        "the headroom is sized for 2000-octet frames",
        "headroom.max_frame = 4222",
    );
    let mut f = base.clone();
    d(&mut f).peer_max_frame = None;
    expect(
        &f,
        "mtu",
        Status::Unknown,
        "carry no IEEE 802.3 Maximum Frame Size TLV",
        "compare with the MTU of the switch port facing eth0",
    );

    // headroom: the buffer smaller than the need; measurement off.
    let mut f = base.clone();
    let h = d(&mut f).headroom.as_mut().unwrap();
    h.buffer = Some(facts::BufferFacts {
        state: "does_not_fit".into(),
        headroom_bytes: Some(40960),
        reason: Some("the buffers would need 2 MB, the port has 1 MB".into()),
        error: None,
    });
    expect(
        &f,
        "headroom",
        Status::Problem,
        "it does not fit the port's buffer: the buffers would need 2 MB",
        "fewer PFC priorities",
    );
    let mut f = base.clone();
    let h = d(&mut f).headroom.as_mut().unwrap();
    h.buffer = Some(facts::BufferFacts {
        state: "off".into(),
        headroom_bytes: None,
        reason: Some("apply = \"none\"".into()),
        error: None,
    });
    h.need.as_mut().unwrap().headroom.bytes = 300_000;
    h.applied = Some(facts::HeadroomBytes { bytes: 300_000 });
    expect(
        &f,
        "headroom",
        Status::Problem,
        "the NIC's smallest buffer holding a PFC priority is 262144 bytes",
        "headroom.buffer = true",
    );
    let mut f = base.clone();
    *d(&mut f).headroom.as_mut().unwrap() = facts::HeadroomFacts {
        off: true,
        reason: Some("headroom.measure is off for this port".into()),
        ..Default::default()
    };
    expect(
        &f,
        "headroom",
        Status::Unknown,
        "the link's need is not measured: headroom.measure is off for this port",
        "headroom.measure = true",
    );

    // watchdog: off; blind; watching another priority.
    let mut f = base.clone();
    d(&mut f).pfc.as_mut().unwrap().watchdog.enabled = false;
    expect(
        &f,
        "watchdog",
        Status::Problem,
        "the PFC storm watchdog is off",
        "[ports.\"eth0\".pfc_watchdog] enabled = true",
    );
    let mut f = base.clone();
    let v = d(&mut f).pfc.as_mut().unwrap();
    v.available = false;
    v.reason = Some("the driver reports no PFC counters".into());
    expect(
        &f,
        "watchdog",
        Status::Problem,
        "sees no counters (the driver reports no PFC counters)",
        "a driver that reports PFC counters",
    );
    let mut f = base.clone();
    d(&mut f).pfc.as_mut().unwrap().watchdog.priorities = vec![4];
    expect(
        &f,
        "watchdog",
        Status::Problem,
        "the watchdog watches 4, not RoCE's priority 3",
        "pfc_watchdog.priorities = [3]",
    );

    // discards, with the daemon: what it saw while watching (the driver's lifetime
    // counters holding older ones are named, not held against the port).
    let mut f = base.clone();
    let q = &mut d(&mut f).pfc.as_mut().unwrap().priorities[3];
    q.discards[0].total = 7;
    q.discards[0].rate = Some(2.0);
    expect(
        &f,
        "discards",
        Status::Problem,
        "frames discarded on PFC priority 3 since losslessd watches the port (50 readings \
         every 200 ms): priority 3 no_buffer 7, priority 3 host_congestion 0; 2/s now",
        "lossless headroom show eth0",
    );
    let mut f = base.clone();
    f.stats = Reading::Value(vec![("rx_prio3_buf_discard".into(), 9)]);
    expect(
        &f,
        "discards",
        Status::Ok,
        "(the driver's counters since it loaded hold earlier ones: rx_prio3_buf_discard = 9)",
        "",
    );
    // discards, without the daemon's counters: the driver's since it loaded; a driver
    // without per-priority statistics.
    let mut f = base.clone();
    for q in &mut d(&mut f).pfc.as_mut().unwrap().priorities {
        q.discards.clear();
    }
    f.stats = Reading::Value(vec![
        ("rx_prio3_discards".into(), 0),
        ("rx_prio3_buf_discard".into(), 17),
    ]);
    expect(
        &f,
        "discards",
        Status::Problem,
        "frames were discarded on PFC priority 3 since the driver's counters started: \
         rx_prio3_buf_discard = 17",
        "lossless headroom show eth0",
    );
    let mut f = without_daemon();
    f.host.driver = Some("ice".into());
    f.stats = Reading::Value(vec![("rx_priority_3_xoff.nic".into(), 4)]);
    expect(
        &f,
        "discards",
        Status::Unknown,
        "the driver (ice) reports no per-priority discard statistic for PFC priority 3",
        "ethtool -S eth0",
    );
}

/// A fact that could not be read never makes its check ok.
#[test]
fn an_unreadable_fact_makes_its_check_unknown_never_ok() {
    fn failed<T>() -> Reading<T> {
        Reading::Failed("reading: Permission denied".to_string())
    }
    type Spoil = Box<dyn Fn(&mut PortFacts)>;
    let cases: Vec<(&str, Spoil)> = vec![
        ("tos", Box::new(|f| f.host.tos = failed())),
        (
            "roce_mode",
            Box::new(|f| f.host.roce_mode = Reading::Failed("x".into())),
        ),
        (
            "ecn",
            Box::new(|f| f.host.ecn_rp = Reading::Failed("x".into())),
        ),
        ("cnp", Box::new(|f| f.host.cnp_dscp = failed())),
        (
            "global_pause",
            Box::new(|f| f.host.pause = Reading::Failed("x".into())),
        ),
        (
            "fw_agent",
            Box::new(|f| f.host.fw_agent = Reading::Failed("x".into())),
        ),
        ("mtu", Box::new(|f| f.mtu = Reading::Failed("x".into()))),
        (
            "discards",
            Box::new(|f| {
                f.stats = Reading::Failed("x".into());
                // ... and no counters from the daemon either.
                if let Daemon::Port(p) = &mut f.daemon {
                    if let Some(v) = p.pfc.as_mut() {
                        v.priorities.iter_mut().for_each(|q| q.discards.clear());
                    }
                }
            }),
        ),
        ("trust", Box::new(|f| f.nic = Reading::Failed("x".into()))),
        // mlx5 has no agent flag: whether its firmware runs DCBX is the NIC's to say.
        (
            "fw_agent",
            Box::new(|f| {
                f.host.fw_agent = Reading::Value(None);
                f.nic = Reading::Failed("x".into());
            }),
        ),
    ];
    for base in [with_daemon(&answers()), without_daemon()] {
        for (name, spoil) in &cases {
            let mut f = base.clone();
            // Keep the class known: it is what the others are judged against.
            f.given = Some(GivenClass {
                priority: 3,
                dscp: Some(26),
            });
            spoil(&mut f);
            let (s, e, x) = status_of(&f, name);
            assert_eq!(s, Status::Unknown, "{name}: {e}");
            assert!(x.is_some(), "{name}: unknown without a fix");
        }
    }
    // Nothing read at all, no daemon: every check unknown, exit 2.
    let f = PortFacts {
        host: HostRoce::default(),
        nic: Reading::Failed("dcbnl socket: Permission denied".into()),
        mtu: Reading::Failed("x".into()),
        stats: Reading::Failed("x".into()),
        ..without_daemon()
    };
    let r = Report::new(check_port(&f));
    let ok: Vec<&Check> = r.checks.iter().filter(|c| c.status == Status::Ok).collect();
    assert!(ok.is_empty(), "{ok:#?}");
    assert_eq!(r.exit_code(), 2);
}

#[test]
fn the_class_is_read_from_udp_4791_then_the_tos_then_the_pfc_priority() {
    let pfc = Some(PriorityMap(1 << 3));
    // udp 4791 decides the priority; the DSCP is the ToS's when it maps there.
    let c = decide(
        &[udp(4791, 4), dscp(26, 3), dscp(34, 4), dscp(36, 4)],
        pfc,
        Some(36),
        Some(48),
        Source::Nic,
    )
    .unwrap();
    assert_eq!((c.priority, c.dscp), (4, Some(36)));
    // Without udp 4791: the ToS's DSCP.
    let c = decide(
        &[dscp(26, 3), dscp(48, 6)],
        pfc,
        Some(26),
        None,
        Source::Nic,
    )
    .unwrap();
    assert_eq!((c.priority, c.dscp), (3, Some(26)));
    // Without either: the one PFC priority DSCP entries (not the CNPs') map to.
    let c = decide(&[dscp(26, 3), dscp(48, 6)], pfc, Some(0), None, Source::Nic).unwrap();
    assert_eq!((c.priority, c.dscp), (3, Some(26)));
    // Two PFC priorities with DSCP entries: not decided.
    assert_eq!(
        decide(
            &[dscp(26, 3), dscp(34, 4)],
            Some(PriorityMap(0b11000)),
            None,
            None,
            Source::Nic
        ),
        None
    );
    // The CNPs' DSCP alone classifies nothing.
    assert_eq!(
        decide(
            &[dscp(48, 6)],
            Some(PriorityMap(1 << 6)),
            None,
            None,
            Source::Nic
        ),
        None
    );
}

#[test]
fn discard_statistics_are_read_by_priority() {
    assert_eq!(discard_priority("rx_prio3_discards"), Some(3));
    assert_eq!(discard_priority("rx_prio7_buf_discard"), Some(7));
    assert_eq!(discard_priority("rx_prio0_cong_discard"), Some(0));
    assert_eq!(discard_priority("rx_prio3_pause"), None);
    assert_eq!(discard_priority("rx_prio8_discards"), None);
    assert_eq!(discard_priority("rx_prio_discards"), None);
    assert_eq!(discard_priority("tx_prio3_discards"), None);
    assert_eq!(discard_priority("rx_prio33_discards"), None);
}

#[test]
fn the_report_serialises_as_documented() {
    let r = Report::new(check_port(&without_daemon()));
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["ok"], false);
    let c = &v["checks"][0];
    let mut keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["check", "evidence", "fix", "port", "status"]);
    assert_eq!(c["status"], "ok");
    assert_eq!(c["fix"], Value::Null);
    let back: Report = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

#[test]
fn an_answer_missing_a_field_is_refused_with_where() {
    let mut a = answers();
    a.dcbx["ports"][0]["ieee"]
        .as_object_mut()
        .unwrap()
        .remove("pfc");
    let e = DaemonPort::from_answers("eth0", String::new(), &a.status, &a.dcbx, None, None, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("dcbx show of eth0: missing field `pfc`"),
        "{e}"
    );
    let e = DaemonPort::from_answers("eth1", String::new(), &a.status, &a.dcbx, None, None, None)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "status has no port eth1");
}

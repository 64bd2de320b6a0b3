#![allow(clippy::unwrap_used)]
//! losslessd and the host's RoCE settings beyond DCB, on lossless-testkit's emulated
//! host tree (sysfs, configfs, debugfs laid as the kernel lays them for a ConnectX
//! port, E810's irdma, ...; the kernel's write semantics enforced by the emulated
//! driver library), found through `--sysfs ROOT`:
//!
//! - `lossless profile roce` whole: each RoCE setting the host does not hold is written,
//!   exactly once, and nothing else (the driver's log lists every file write); link
//!   pause turned off through ethtool netlink;
//! - no `[roce]` settings: not one file written, the held values shown, and RDMA CM's
//!   ToS 0 named as RoCE leaving lossy;
//! - a value the kernel refuses (RoCE v1 on E810, whose irdma has RoCE v2 only) is
//!   named with the kernel's answer;
//! - a device that goes and comes back (a driver reload) gets its settings again;
//! - `lossless roce set` writes at once, persists across a restart, and `roce reset`
//!   gives the file's values back; a value out of range is refused by the same rule
//!   at the CLI and at the socket.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::sysfs::{HostTree, Port};
use lossless_testkit::{LogEntry, Model};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(20);

/// A host daemon on `vb` (its NIC `model`, its host tree laid for `port`, found with
/// `--sysfs`) with configuration `conf`, beside an IEEE switch.
struct RoceRig {
    // Drop order: the daemons before the tree and the directory.
    net: SwitchHost,
    shim: ShimEnv,
    tree: HostTree,
    _dir: TempDir,
}

impl RoceRig {
    /// A ConnectX port (mlx5_0) with NVIDIA's driver package.
    fn connectx(conf: &str) -> RoceRig {
        let port = Port::new("vb", Model::Mlx5, "0000:41:00.0")
            .ofed()
            .ibdev("mlx5_0");
        RoceRig::start(port, Model::Mlx5, conf)
    }

    fn start(port: Port, model: Model, conf: &str) -> RoceRig {
        let dir = TempDir::new();
        let tree = HostTree::new(&[port]).unwrap();
        let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"])
            .model(model)
            .sysfs(tree.root());
        let root = tree.root().to_str().unwrap().to_string();
        let net = SwitchHost::start_args(dir.path(), IEEE_SWITCH, conf, &shim, &["--sysfs", &root]);
        RoceRig {
            net,
            shim,
            tree,
            _dir: dir,
        }
    }
}

/// The port's RoCE settings once every configured one stands as `done` says.
fn settled(net: &SwitchHost, done: impl Fn(&Value) -> bool) -> Value {
    let t0 = std::time::Instant::now();
    loop {
        let p = net.host.call(&Request::Status)["ports"][0].clone();
        if done(&p) {
            return p;
        }
        assert!(
            t0.elapsed() < LIMIT,
            "not settled in {LIMIT:?}: {p:#}\ndaemon log:\n{}",
            net.host.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn setting<'a>(port: &'a Value, key: &str) -> &'a Value {
    port["roce"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
        .unwrap()
}

/// The file operations the log lists: (command, path under the root, value written).
fn file_ops(log: &[LogEntry]) -> Vec<(String, String, String)> {
    log.iter()
        .filter(|e| e.cmd.starts_with("SYSFS_") && e.cmd != "SYSFS_OPEN")
        .map(|e| {
            (
                e.cmd.clone(),
                e.path().unwrap_or_default().to_string(),
                String::from_utf8_lossy(&e.value().unwrap_or_default())
                    .trim_end()
                    .to_string(),
            )
        })
        .collect()
}

const PROFILE_KEYS: [&str; 8] = [
    "global_pause",
    "tos",
    "roce_mode",
    "traffic_class",
    "ecn_rp",
    "ecn_np",
    "cnp_dscp",
    "cnp_priority",
];

#[test]
fn the_roce_profile_writes_what_the_host_does_not_hold_and_nothing_else() {
    if !require(
        "the_roce_profile_writes_what_the_host_does_not_hold_and_nothing_else",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let rig = RoceRig::connectx(&roce_profile_with_host("vb", ""));
    let (tree, shim) = (&rig.tree, &rig.shim);
    let net = &rig.net;
    let port = settled(net, |p| {
        PROFILE_KEYS.iter().all(|k| setting(p, k)["state"] == "ok")
    });
    assert_eq!(port["roce"]["rdma_device"], "mlx5_0", "{port:#}");
    // 802.3x pause, on at power-on, turned off through ethtool netlink.
    let (_, rx, tx) = shim.state("vb").unwrap().pause();
    assert!(!rx && !tx, "{}", shim.log_text());
    assert_eq!(setting(&port, "global_pause")["held"], "rx off, tx off");
    assert_eq!(setting(&port, "tos")["held"], "106 (DSCP 26, ECT(0))");
    assert_eq!(
        tree.read_file("kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos")
            .unwrap(),
        "106\n"
    );
    assert_eq!(
        tree.read_file("class/infiniband/mlx5_0/tc/1/traffic_class")
            .unwrap(),
        "Global tclass=106\n"
    );
    // What was written: the group made, the ToS (RoCE v2 is the device's default and
    // is not written), the verbs traffic class, ECN off on every priority but 3 at
    // both points; CNP DSCP 48 and priority 6 are the NIC's own values, not written.
    let mut ops = file_ops(&shim.log());
    ops.sort();
    let pci = "devices/pci0000:00/0000:41:00.0";
    let mut want: Vec<(String, String, String)> = vec![
        (
            "SYSFS_MKDIR".into(),
            "kernel/config/rdma_cm/mlx5_0".into(),
            String::new(),
        ),
        (
            "SYSFS_WRITE".into(),
            "kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos".into(),
            "106".into(),
        ),
        (
            "SYSFS_WRITE".into(),
            format!("{pci}/infiniband/mlx5_0/tc/1/traffic_class"),
            "106".into(),
        ),
    ];
    for point in ["roce_rp", "roce_np"] {
        for p in [0, 1, 2, 4, 5, 6, 7] {
            want.push((
                "SYSFS_WRITE".into(),
                format!("{pci}/net/vb/ecn/{point}/enable/{p}"),
                "0".into(),
            ));
        }
    }
    want.sort();
    assert_eq!(ops, want, "{}", shim.log_text());
    let applied: Vec<Value> = net.host.call(&Request::Events { follow: false })["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "roce_applied")
        .cloned()
        .collect();
    assert!(!applied.is_empty(), "{applied:#?}");
    // `lossless status` shows them.
    let out = net.host.cli(&["status"]);
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains("vb (mlx5_0/1)") && out.contains("106 (DSCP 26, ECT(0))"),
        "{out}"
    );
}

#[test]
fn without_roce_settings_nothing_is_written_and_a_lossy_tos_is_named() {
    if !require(
        "without_roce_settings_nothing_is_written_and_a_lossy_tos_is_named",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let rig = RoceRig::connectx(&roce_profile("vb", ""));
    let (tree, shim) = (&rig.tree, &rig.shim);
    let net = &rig.net;
    let port = settled(net, |p| setting(p, "tos")["state"] == "unmanaged");
    assert_eq!(setting(&port, "roce_mode")["held"], "RoCE v2", "{port:#}");
    assert_eq!(setting(&port, "ecn_rp")["held"], "[0, 1, 2, 3, 4, 5, 6, 7]");
    assert_eq!(setting(&port, "cnp_dscp")["held"], "48");
    let problems = port["problems"].as_array().unwrap();
    assert!(
        problems.iter().any(|p| p
            .as_str()
            .unwrap()
            .starts_with("RDMA CM's default ToS is 0 (DSCP 0, not ECT), a DSCP the configuration does not make lossless")),
        "{port:#}"
    );
    assert_eq!(file_ops(&shim.log()), vec![], "{}", shim.log_text());
    assert!(!tree.path("kernel/config/rdma_cm/mlx5_0").exists());
}

#[test]
fn a_value_the_kernel_refuses_is_named_with_its_answer() {
    if !require(
        "a_value_the_kernel_refuses_is_named_with_its_answer",
        EMULATED_DRIVER,
    ) {
        return;
    }
    // E810: irdma's ports have RoCE v2 GIDs only.
    let conf = roce_profile("vb", "") + "roce.tos = 106\nroce.roce_mode = \"v1\"\n";
    let rig = RoceRig::start(
        Port::new("vb", Model::Ice, "0000:17:00.0").ibdev("irdma0"),
        Model::Ice,
        &conf,
    );
    let shim = &rig.shim;
    let net = &rig.net;
    let port = settled(net, |p| setting(p, "roce_mode")["state"] == "refused");
    assert_eq!(setting(&port, "tos")["state"], "ok", "{port:#}");
    let mode = setting(&port, "roce_mode");
    assert_eq!(mode["held"], "RoCE v2");
    let refused = mode["refused"].as_str().unwrap();
    assert!(
        refused.starts_with("EINVAL: writing \"IB/RoCE v1\" to ")
            && refused.ends_with("default_roce_mode: Invalid argument (os error 22)"),
        "{refused}"
    );
    assert!(
        port["problems"].as_array().unwrap().iter().any(|p| p
            .as_str()
            .unwrap()
            .starts_with("roce.roce_mode = IB/RoCE v1 is configured, but the host holds RoCE v2: the write was refused (EINVAL")),
        "{port:#}"
    );
    // Refused once, and the refusal kept: the write is in the log once.
    let writes = shim
        .log()
        .iter()
        .filter(|e| e.path().is_some_and(|p| p.ends_with("default_roce_mode")) && !e.ok())
        .count();
    assert_eq!(writes, 1, "{}", shim.log_text());
}

#[test]
fn a_device_that_comes_back_gets_its_settings_again() {
    if !require(
        "a_device_that_comes_back_gets_its_settings_again",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let rig = RoceRig::connectx(&roce_profile_with_host("vb", ""));
    let (tree, shim) = (&rig.tree, &rig.shim);
    let net = &rig.net;
    settled(net, |p| setting(p, "tos")["state"] == "ok");
    let tos_writes = |shim: &ShimEnv| {
        shim.log()
            .iter()
            .filter(|e| {
                e.cmd == "SYSFS_WRITE"
                    && e.ok()
                    && e.path().is_some_and(|p| p.ends_with("default_roce_tos"))
            })
            .count()
    };
    assert_eq!(
        tos_writes(shim),
        1,
        "{}\n{}",
        shim.log_text(),
        net.host.log()
    );
    // A driver reload: the netdev and the RDMA device go, and come back at their
    // power-on values (RDMA CM's ToS 0 again).
    net.nb.ip(&["link", "del", "vb"]);
    tree.unplug("vb").unwrap();
    wait_for(LIMIT, "the port gone", || {
        let st = net.host.call(&Request::Status);
        st["ports"].as_array()?.is_empty().then_some(())
    });
    tree.replug("vb").unwrap();
    assert_eq!(
        tree.read_file("kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos")
            .unwrap(),
        "0\n"
    );
    let veth = lossless_testkit::Veth::new(
        &net.na,
        "va",
        "02:00:00:00:00:0a",
        &net.nb,
        "vb",
        "02:00:00:00:00:0b",
    );
    veth.up(&net.na, &net.nb);
    // The port comes back and gets its settings again, without waiting for a read.
    let port = settled(net, |p| {
        p["port"] == "vb" && setting(p, "tos")["state"] == "ok"
    });
    assert_eq!(setting(&port, "ecn_rp")["state"], "ok", "{port:#}");
    assert_eq!(
        tree.read_file("kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos")
            .unwrap(),
        "106\n"
    );
    assert_eq!(tos_writes(shim), 2, "{}", shim.log_text());
}

#[test]
fn roce_set_at_run_time_is_written_persisted_and_reset() {
    if !require(
        "roce_set_at_run_time_is_written_persisted_and_reset",
        EMULATED_DRIVER,
    ) {
        return;
    }
    // The file gives ToS 106 only.
    let conf = roce_profile("vb", "") + "roce.tos = 106\n";
    let mut rig = RoceRig::connectx(&conf);
    let tree = &rig.tree;
    let net = &mut rig.net;
    settled(net, |p| setting(p, "tos")["state"] == "ok");
    // A value the file's rule refuses is refused by the CLI, and by the daemon when
    // sent to its socket directly, with the same words; nothing changes.
    let out = net.host.cli(&["roce", "set", "vb", "tos=300"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("300 is out of range 0..=255 (a ToS byte: DSCP << 2 | ECN)"),
        "{err}"
    );
    let mut c = lossless_client::Client::connect(&net.host.socket).unwrap();
    let refused = c
        .call(&Request::RoceSet {
            port: "vb".into(),
            settings: [("cnp_dscp".to_string(), serde_json::json!(64))].into(),
        })
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("vb: roce.cnp_dscp: 64 is out of range 0..=63 (a DSCP); nothing changed"),
        "{refused}"
    );
    // `lossless roce set`: written at once, over the file's.
    let out = net.host.cli(&[
        "roce",
        "set",
        "vb",
        "tos=104",
        "ecn_np=3",
        "global_pause=off",
    ]);
    assert!(out.status.success(), "{out:?}");
    let port = settled(net, |p| {
        setting(p, "tos")["state"] == "ok"
            && setting(p, "tos")["configured"] == "104 (DSCP 26, not ECT)"
            && setting(p, "ecn_np")["state"] == "ok"
    });
    assert_eq!(setting(&port, "ecn_rp")["state"], "unmanaged", "{port:#}");
    assert_eq!(
        tree.read_file("kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos")
            .unwrap(),
        "104\n"
    );
    // Persisted: a restarted daemon runs it.
    let state = std::fs::read_to_string(net.host.state.join("state.json")).unwrap();
    assert!(state.contains("\"roce\""), "{state}");
    net.host.stop();
    tree.write_file("kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos", "0")
        .unwrap();
    net.host.spawn();
    settled(net, |p| {
        setting(p, "tos")["configured"] == "104 (DSCP 26, not ECT)"
            && setting(p, "tos")["state"] == "ok"
    });
    // `lossless roce reset`: the file's 106 again.
    let out = net.host.cli(&["roce", "reset", "vb"]);
    assert!(out.status.success(), "{out:?}");
    settled(net, |p| {
        setting(p, "tos")["configured"] == "106 (DSCP 26, ECT(0))"
            && setting(p, "tos")["state"] == "ok"
            && setting(p, "ecn_np")["state"] == "unmanaged"
    });
    let state = std::fs::read_to_string(net.host.state.join("state.json")).unwrap();
    assert!(!state.contains("\"roce\""), "{state}");
}

#[test]
fn inbox_mlx5_takes_the_cnp_marking_through_debugfs_and_has_no_per_priority_ecn() {
    if !require(
        "inbox_mlx5_takes_the_cnp_marking_through_debugfs_and_has_no_per_priority_ecn",
        EMULATED_DRIVER,
    ) {
        return;
    }
    // The inbox driver: no ecn/ files, no tc/ traffic class; debugfs cc_params.
    let conf =
        roce_profile("vb", "") + "roce.cnp_dscp = 46\nroce.cnp_priority = 5\nroce.ecn_rp = [3]\n";
    let rig = RoceRig::start(
        Port::new("vb", Model::Mlx5, "0000:41:00.0").ibdev("mlx5_0"),
        Model::Mlx5,
        &conf,
    );
    let tree = &rig.tree;
    let net = &rig.net;
    let port = settled(net, |p| {
        setting(p, "cnp_dscp")["state"] == "ok" && setting(p, "cnp_priority")["state"] == "ok"
    });
    let cc = "kernel/debug/mlx5/0000:41:00.0/cc_params";
    assert_eq!(
        tree.read_file(&format!("{cc}/np_cnp_dscp")).unwrap(),
        "46\n"
    );
    assert_eq!(tree.read_file(&format!("{cc}/np_cnp_prio")).unwrap(), "5\n");
    assert_eq!(setting(&port, "ecn_rp")["state"], "not_exposed", "{port:#}");
    assert_eq!(setting(&port, "traffic_class")["state"], "not_exposed");
    assert!(
        port["problems"].as_array().unwrap().iter().any(|p| p
            .as_str()
            .unwrap()
            .starts_with("roce.ecn_rp = [3] is configured, but this host does not expose it (no per-priority ECN reaction point:")),
        "{port:#}"
    );
}

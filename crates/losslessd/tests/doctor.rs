#![allow(clippy::unwrap_used)]
//! `lossless doctor` on an emulated ConnectX host (lossless-testkit's host tree under
//! `--sysfs`, the emulated mlx5 driver answering dcbnl and ethtool), run in the host's
//! namespace as an operator would, against real peers:
//!
//! - beside lldpad (IEEE 802.1Qaz, not willing) with losslessd running `lossless
//!   profile roce`: every check the daemon can see ok; then discards on the PFC
//!   priority, lldpad moving PFC to 4, the UDP 4791 entry withdrawn: each a problem,
//!   and the fix doctor names puts it right;
//! - beside lldpd (LLDP, no DCBX): no DCBX peer, RDMA CM's ToS 0, link pause on, the
//!   watchdog off: problems, each fixed by the command doctor gives; lldpd's Maximum
//!   Frame Size TLV against the MTU, both ways;
//! - without a daemon: the host and the NIC only; the class from the NIC's APP table;
//!   the `dcb`, `ethtool` and shell commands doctor prints fix what they name;
//! - a NIC firmware LLDP agent (ice) named and turned off;
//! - the headroom against the need two losslessd measure, in and over the buffer;
//! - exit 2 with nothing to check, or a port that is not there.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::*;
use lossless_testkit::sysfs::{HostTree, Port};
use lossless_testkit::{output_text, Lldpd, Model};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(20);

/// One run of `lossless doctor --json` in `ns` under the emulated driver.
struct Run {
    code: i32,
    json: Value,
}

impl Run {
    fn check(&self, name: &str) -> &Value {
        self.json["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no check {name}: {:#}", self.json))
    }

    fn status(&self, name: &str) -> &str {
        self.check(name)["status"].as_str().unwrap()
    }

    fn evidence(&self, name: &str) -> &str {
        self.check(name)["evidence"].as_str().unwrap()
    }

    fn fix(&self, name: &str) -> &str {
        self.check(name)["fix"].as_str().unwrap_or("")
    }

    /// Every check's status, in order.
    fn statuses(&self) -> Vec<(String, String)> {
        self.json["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["check"].as_str().unwrap().to_string(),
                    c["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    /// Asserts the check's status and that its evidence holds `words`.
    #[track_caller]
    fn expect(&self, name: &str, status: &str, words: &str) {
        assert_eq!(self.status(name), status, "{name}: {:#}", self.check(name));
        assert!(
            self.evidence(name).contains(words),
            "{name}: {:?} lacks {words:?}",
            self.evidence(name)
        );
    }
}

/// The command line doctor runs under: the emulated driver, in `ns`.
fn doctor_command(ns: &Netns, shim: &ShimEnv, args: &[&str]) -> Output {
    let mut c = ns.command(lossless_bin());
    shim.apply(&mut c);
    c.arg("doctor")
        .args(args)
        .output()
        .expect("run lossless doctor")
}

fn doctor(ns: &Netns, shim: &ShimEnv, socket: &Path, root: &Path, args: &[&str]) -> Run {
    let mut all = vec![
        "--json",
        "--socket",
        socket.to_str().unwrap(),
        "--sysfs",
        root.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let out = doctor_command(ns, shim, &all);
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor's JSON: {e}\n{}", output_text(&out)));
    Run {
        code: out.status.code().unwrap_or(-1),
        json,
    }
}

/// Runs doctor until `done` accepts the run.
fn doctor_until(
    what: &str,
    ns: &Netns,
    shim: &ShimEnv,
    socket: &Path,
    root: &Path,
    done: impl Fn(&Run) -> bool,
) -> Run {
    let t0 = std::time::Instant::now();
    loop {
        let r = doctor(ns, shim, socket, root, &[]);
        if done(&r) {
            return r;
        }
        assert!(
            t0.elapsed() < LIMIT,
            "{what}: not in {LIMIT:?}: {:#}",
            r.json
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A fix that is one `lossless` command line, run against the daemon.
fn run_lossless_fix(d: &Daemon, fix: &str) {
    let args: Vec<&str> = fix
        .strip_prefix("lossless ")
        .unwrap_or_else(|| panic!("not a lossless command: {fix}"))
        .split_whitespace()
        .collect();
    let out = d.cli(&args);
    assert!(out.status.success(), "{fix}: {}", output_text(&out));
}

/// A fix that is a shell command line (`dcb ...`, `ethtool ...`, `mkdir ... && echo
/// ...`), run in `ns` under the emulated driver, as an operator would paste it.
fn run_shell_fix(ns: &Netns, shim: &ShimEnv, fix: &str) {
    let mut c = ns.command("sh");
    shim.apply(&mut c);
    let out = c.args(["-c", fix]).output().expect("sh");
    assert!(out.status.success(), "{fix}: {}", output_text(&out));
}

/// The emulated ConnectX port `vb` (mlx5 with NVIDIA's driver package, RDMA device
/// mlx5_0) and the driver that answers for it.
fn connectx(dir: &Path) -> (HostTree, ShimEnv) {
    let tree = HostTree::new(&[Port::new("vb", Model::Mlx5, "0000:41:00.0")
        .ofed()
        .ibdev("mlx5_0")])
    .unwrap();
    let shim = ShimEnv::new(&dir.join("driver"), &["vb"])
        .model(Model::Mlx5)
        .sysfs(tree.root());
    (tree, shim)
}

/// losslessd on `vb` (namespace B, the host tree under `--sysfs`) with `conf`; the
/// peer's side `va` in namespace A; the link up.
struct Host {
    d: Daemon,
    /// `va` in `link.a` (the switch's side), `vb` in `link.b` (the host's).
    link: lossless_testkit::Pair,
    conf: std::path::PathBuf,
}

impl Host {
    fn start(dir: &Path, conf: &str, shim: &ShimEnv, root: &Path) -> Host {
        let link = lossless_testkit::Pair::up();
        let file = dir.join("host.toml");
        std::fs::write(&file, conf).unwrap();
        let d = Daemon::start_with_env(
            &link.b,
            &dir.join("host"),
            &[
                "--config",
                file.to_str().unwrap(),
                "--sysfs",
                root.to_str().unwrap(),
            ],
            &shim.vars(),
        );
        Host {
            d,
            link,
            conf: file,
        }
    }
}

/// lldpad, not willing, runs PFC on `priorities`.
fn lldpad_pfc(l: &LldpadPeer, priorities: &str) {
    let enabled = format!("enabled={priorities}");
    l.lldptool_ok(&[
        "-T",
        "-i",
        "va",
        "-V",
        "PFC",
        "enableTx=yes",
        "willing=no",
        &enabled,
    ]);
}

#[test]
fn beside_lldpad_every_check_the_daemon_sees_is_ok_and_each_fault_is_named_and_fixed() {
    if !require(
        "beside_lldpad_every_check_the_daemon_sees_is_ok_and_each_fault_is_named_and_fixed",
        LLDPAD_PEER,
    ) {
        return;
    }
    let dir = TempDir::new();
    let (tree, shim) = connectx(dir.path());
    let root = tree.root();
    let conf = roce_profile_with_host("vb", "pfc_watchdog.enabled = true");
    let h = Host::start(dir.path(), &conf, &shim, root);
    let l = LldpadPeer::start(&h.link.a, "va", Mode::Ieee);
    lldpad_pfc(&l, "3");
    l.lldptool_ok(&["-T", "-i", "va", "-V", "APP", "enableTx=yes", "app=3,5,26"]);
    let sock = &h.d.socket;
    let r = doctor_until(
        "everything the daemon sees ok",
        &h.link.b,
        &shim,
        sock,
        root,
        |r| {
            [
                "dcbx",
                "pfc",
                "nic",
                "cnp",
                "tos",
                "global_pause",
                "watchdog",
                "discards",
            ]
            .iter()
            .all(|c| r.status(c) == "ok")
        },
    );
    let want: Vec<(String, String)> = [
        ("roce_class", "ok"),
        ("dcbx", "ok"),
        ("pfc", "ok"),
        ("app", "ok"),
        ("nic", "ok"),
        ("trust", "ok"),
        ("tos", "ok"),
        ("roce_mode", "ok"),
        ("ecn", "ok"),
        ("cnp", "ok"),
        ("global_pause", "ok"),
        ("fw_agent", "ok"),
        // lldpad sends no Maximum Frame Size TLV; nothing measures the headroom.
        ("mtu", "unknown"),
        ("headroom", "unknown"),
        ("watchdog", "ok"),
        ("discards", "ok"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(r.statuses(), want, "{:#}", r.json);
    assert_eq!(r.code, 2, "no problem, two checks not made");
    assert_eq!(r.json["ok"], false);
    r.expect(
        "roce_class",
        "ok",
        "priority 3, DSCP 26 (udp 4791 (RoCEv2) -> 3, dscp 26 (AF31) -> 3), from the APP \
         entries of the configuration losslessd runs",
    );
    r.expect("dcbx", "ok", "IEEE 802.1Qaz with the peer (mode auto)");
    r.expect("pfc", "ok", "the peer's PFC on 3");
    r.expect(
        "nic",
        "ok",
        "the NIC runs PFC on 3; it holds dscp 26 (AF31) -> 3",
    );
    r.expect("trust", "ok", "mlx5_core reports no trust order");
    r.expect(
        "tos",
        "ok",
        "RDMA CM's default ToS on mlx5_0 port 1 is 106 (DSCP 26, ECT(0))",
    );
    r.expect(
        "discards",
        "ok",
        "no discards on PFC priority 3 since losslessd watches the port",
    );
    assert!(r.json["daemon"].as_str().unwrap().starts_with("losslessd "));

    // lldpad's IEEE 802.3 Maximum Frame Size TLV (its netdev's MTU of 1500): the same
    // frames as this end's MTU.
    l.lldptool_ok(&["-T", "-i", "va", "-V", "MTU", "enableTx=yes"]);
    let r = doctor_until(
        "lldpad's maximum frame size",
        &h.link.b,
        &shim,
        sock,
        root,
        |r| r.status("mtu") != "unknown",
    );
    r.expect(
        "mtu",
        "ok",
        "MTU 1500: frames up to 1518 octets (1522 with a VLAN tag); the peer takes frames \
         up to 1518 octets",
    );
    // Jumbo frames on lldpad's side only: it would send what this end drops.
    h.link.a.ip(&["link", "set", "va", "mtu", "9000"]);
    let r = doctor_until("lldpad's jumbo frames", &h.link.b, &shim, sock, root, |r| {
        r.status("mtu") != "ok"
    });
    r.expect("mtu", "problem", "the peer sends frames up to 9018 octets");
    assert_eq!(
        r.fix("mtu"),
        "ip link set vb mtu 9000 (or lower the switch port's MTU)"
    );
    h.link.a.ip(&["link", "set", "va", "mtu", "1500"]);
    doctor_until("lldpad's MTU back", &h.link.b, &shim, sock, root, |r| {
        r.status("mtu") == "ok"
    });

    // lldpad moves PFC to 4: the willing host follows, and RoCE's 3 is lossy.
    lldpad_pfc(&l, "4");
    let r = doctor_until("PFC on 4", &h.link.b, &shim, sock, root, |r| {
        r.status("pfc") == "problem" && r.evidence("nic").contains("the NIC runs PFC on 4")
    });
    r.expect("pfc", "problem", "the peer's PFC on 4: not on 3");
    assert!(
        r.fix("pfc")
            .contains("lossless dcbx set vb pfc --willing no --priorities 3"),
        "{}",
        r.fix("pfc")
    );
    r.expect("nic", "problem", "the NIC runs PFC on 4, not on 3");
    assert_eq!(r.code, 1);
    lldpad_pfc(&l, "3");
    doctor_until("PFC on 3 again", &h.link.b, &shim, sock, root, |r| {
        r.status("pfc") == "ok" && r.status("nic") == "ok"
    });

    // The UDP 4791 entry withdrawn at run time; doctor's fix puts it back.
    let out = h.d.cli(&["dcbx", "set", "vb", "app", "del", "udp", "4791"]);
    assert!(out.status.success(), "{}", output_text(&out));
    let r = doctor_until("no udp 4791", &h.link.b, &shim, sock, root, |r| {
        r.status("app") == "problem"
    });
    r.expect(
        "app",
        "problem",
        "no APP entry for udp 4791 (RoCEv2) in operation",
    );
    assert_eq!(r.fix("app"), "lossless dcbx set vb app add udp 4791 3");
    run_lossless_fix(&h.d, r.fix("app"));
    let r = doctor_until("udp 4791 back", &h.link.b, &shim, sock, root, |r| {
        r.status("app") == "ok"
    });
    assert_eq!(r.code, 2, "{:#}", r.json);

    // Discards on the PFC priority: the lossless guarantee broken, as the daemon's
    // counters saw it; still named once the driver's counter is back at 0 (it counted
    // them while watching).
    shim.set_stat("vb", "rx_prio3_buf_discard", 9);
    let r = doctor_until("the discards seen", &h.link.b, &shim, sock, root, |r| {
        r.status("discards") == "problem"
    });
    r.expect(
        "discards",
        "problem",
        "frames discarded on PFC priority 3 since losslessd watches the port",
    );
    assert!(
        r.evidence("discards").contains("priority 3 host_buffer 9"),
        "{}",
        r.evidence("discards")
    );
    assert!(r.fix("discards").contains("lossless headroom show vb"));
    assert_eq!(r.code, 1);
    shim.set_stat("vb", "rx_prio3_buf_discard", 0);
    let r = doctor(&h.link.b, &shim, sock, root, &[]);
    r.expect("discards", "problem", "priority 3 host_buffer 9");
}

/// The `lossless ...` command lines in a fix (several are joined with "; ").
fn lossless_commands(fix: &str) -> Vec<String> {
    fix.split("; ")
        .filter_map(|part| part.find("lossless ").map(|i| part[i..].to_string()))
        .map(|c| c.trim_end_matches(')').to_string())
        .collect()
}

#[test]
fn beside_lldpd_the_faults_of_a_fresh_host_are_named_and_doctors_fixes_fix_them() {
    if !require(
        "beside_lldpd_the_faults_of_a_fresh_host_are_named_and_doctors_fixes_fix_them",
        &[Oracle::Netns, Oracle::Lldpd, Oracle::Gcc],
    ) {
        return;
    }
    let dir = TempDir::new();
    let (tree, shim) = connectx(dir.path());
    let root = tree.root();
    // The DCB part of the profile only: the host's RoCE settings as the driver left them.
    let h = Host::start(dir.path(), &roce_profile("vb", ""), &shim, root);
    let lldpd = Lldpd::start(&h.link.a, "va");
    lldpd.wait_neighbor(LIMIT, |_| true);
    let sock = &h.d.socket;
    // Without a DCBX peer the NIC is programmed 3 s after link-up.
    let r = doctor_until(
        "the neighbour in view, the NIC programmed",
        &h.link.b,
        &shim,
        sock,
        root,
        |r| r.evidence("dcbx").contains("sends no DCBX TLV") && r.status("nic") == "ok",
    );
    // The table, as docs/roce.md shows it (`--nocapture`).
    let text = |args: &[&str]| {
        let mut all = vec![
            "--socket",
            sock.to_str().unwrap(),
            "--sysfs",
            root.to_str().unwrap(),
        ];
        all.extend_from_slice(args);
        output_text(&doctor_command(&h.link.b, &shim, &all))
    };
    eprintln!("$ lossless doctor\n{}", text(&[]));
    r.expect(
        "dcbx",
        "problem",
        "no DCBX peer: the LLDP neighbour sends no DCBX TLV",
    );
    assert!(
        r.fix("dcbx")
            .starts_with("facing a switch that sends LLDP without DCBX (SONiC): lossless dcbx set vb mode static;"),
        "{}",
        r.fix("dcbx")
    );
    r.expect(
        "tos",
        "problem",
        "RDMA CM's default ToS on mlx5_0 port 1 is 0 (DSCP 0, not ECT), not DSCP 26",
    );
    assert_eq!(
        r.fix("tos"),
        "lossless roce set vb tos=106; lossless roce set vb traffic_class=106"
    );
    r.expect(
        "global_pause",
        "problem",
        "802.3x link pause is on (rx, tx)",
    );
    r.expect("watchdog", "problem", "the PFC storm watchdog is off");
    // lldpd sends no Maximum Frame Size TLV on a veth.
    r.expect(
        "mtu",
        "unknown",
        "carry no IEEE 802.3 Maximum Frame Size TLV",
    );
    // What the driver holds at power-on and the daemon programmed is fine.
    for c in [
        "roce_class",
        "nic",
        "trust",
        "roce_mode",
        "ecn",
        "cnp",
        "fw_agent",
    ] {
        assert_eq!(r.status(c), "ok", "{c}: {:#}", r.check(c));
    }
    assert_eq!(r.code, 1);

    // The fixes doctor gives, as given.
    for check in ["dcbx", "tos", "global_pause"] {
        let fix = r.fix(check).to_string();
        for c in lossless_commands(&fix) {
            run_lossless_fix(&h.d, &c);
        }
    }
    assert!(r
        .fix("watchdog")
        .starts_with("[ports.\"vb\".pfc_watchdog] enabled = true in losslessd's configuration"));
    let mut conf = std::fs::read_to_string(&h.conf).unwrap();
    conf.push_str("\n[ports.\"vb\".pfc_watchdog]\nenabled = true\n");
    std::fs::write(&h.conf, conf).unwrap();
    let out = h.d.cli(&["reload"]);
    assert!(out.status.success(), "{}", output_text(&out));
    let r = doctor_until("the fixes to hold", &h.link.b, &shim, sock, root, |r| {
        ["dcbx", "tos", "global_pause", "watchdog"]
            .iter()
            .all(|c| r.status(c) == "ok")
    });
    eprintln!("$ lossless doctor\n{}", text(&[]));
    r.expect("dcbx", "ok", "static mode (dcbx.mode = \"static\")");
    // Static mode: the neighbour's PFC is not on the wire to see.
    r.expect(
        "pfc",
        "unknown",
        "the neighbour sends no IEEE 802.1Qaz PFC TLV (static mode)",
    );
    assert_eq!(r.code, 2, "{:#}", r.json);

    // lldpd made to send a Maximum Frame Size TLV (1518: an MTU of 1500), then a
    // jumbo one (9216) this end's MTU of 1500 cannot take.
    lldpd.configure(&[
        "lldp",
        "custom-tlv",
        "oui",
        "00,12,0f",
        "subtype",
        "4",
        "oui-info",
        "05,ee",
    ]);
    let r = doctor_until(
        "lldpd's maximum frame size",
        &h.link.b,
        &shim,
        sock,
        root,
        |r| r.status("mtu") != "unknown",
    );
    r.expect("mtu", "ok", "the peer takes frames up to 1518 octets");
    lldpd.configure(&[
        "lldp",
        "custom-tlv",
        "replace",
        "oui",
        "00,12,0f",
        "subtype",
        "4",
        "oui-info",
        "24,00",
    ]);
    let r = doctor_until("lldpd's jumbo frames", &h.link.b, &shim, sock, root, |r| {
        r.status("mtu") == "problem"
    });
    r.expect("mtu", "problem", "the peer sends frames up to 9216 octets");
    assert_eq!(
        r.fix("mtu"),
        "ip link set vb mtu 9198 (or lower the switch port's MTU)"
    );
}

#[test]
fn without_a_daemon_the_host_and_the_nic_are_checked_and_the_printed_commands_fix_them() {
    if !require(
        "without_a_daemon_the_host_and_the_nic_are_checked_and_the_printed_commands_fix_them",
        &[Oracle::Netns, Oracle::Gcc, Oracle::Dcb],
    ) {
        return;
    }
    let dir = TempDir::new();
    let (tree, shim) = connectx(dir.path());
    let root = tree.root();
    // Namespace B with `vb` (its peer `va` in A): no daemon anywhere.
    let lossless_testkit::Pair {
        a: _na,
        b: nb,
        veth: _veth,
    } = lossless_testkit::Pair::up();
    let sock = dir.path().join("no-daemon.sock");
    let r = doctor(&nb, &shim, &sock, root, &[]);
    assert_eq!(r.json["daemon"], Value::Null);
    assert_eq!(r.json["sysfs"], root.to_str().unwrap());
    // The port found as the netdev with an RDMA device; the NIC at power-on has no APP
    // entry and no PFC: RoCE is not classified.
    assert_eq!(r.check("roce_class")["port"], "vb");
    r.expect(
        "roce_class",
        "problem",
        "the NIC's APP table sends neither udp 4791 nor a DSCP other than the CNPs' (48) to \
         a PFC priority (entries: none)",
    );
    assert!(r
        .evidence("roce_class")
        .starts_with("no daemon answers on "));
    let fix = r.fix("roce_class");
    for c in [
        "dcb app add dev vb dscp-prio 26:3",
        "dcb pfc set dev vb prio-pfc 3:on",
    ] {
        assert!(fix.contains(c), "{fix}");
        run_shell_fix(&nb, &shim, c);
    }
    r.expect("dcbx", "unknown", "known to losslessd");
    assert_eq!(r.code, 1);

    let r = doctor(&nb, &shim, &sock, root, &[]);
    r.expect(
        "roce_class",
        "ok",
        "priority 3, DSCP 26 (dscp 26 (AF31) -> 3), from the NIC's APP table (dcbnl), no \
         daemon to ask",
    );
    r.expect(
        "nic",
        "ok",
        "the NIC runs PFC on 3; it holds dscp 26 (AF31) -> 3",
    );
    r.expect(
        "trust",
        "ok",
        "it trusts DSCP from its first DSCP APP entry on",
    );
    let r0 = root.to_str().unwrap();
    r.expect("tos", "problem", "is 0 (DSCP 0, not ECT), not DSCP 26");
    assert_eq!(
        r.fix("tos"),
        format!(
            "mkdir -p {r0}/kernel/config/rdma_cm/mlx5_0 && echo 106 > \
             {r0}/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos; echo 106 > \
             {r0}/class/infiniband/mlx5_0/tc/1/traffic_class"
        )
    );
    r.expect(
        "global_pause",
        "problem",
        "802.3x link pause is on (rx, tx)",
    );
    assert_eq!(r.fix("global_pause"), "ethtool -A vb rx off tx off");
    // mlx5's power-on ETS: every class vendor-defined.
    r.expect(
        "cnp",
        "problem",
        "traffic class 6, TSA 255 (as the NIC holds it): not a strict class",
    );
    assert!(
        r.fix("cnp").starts_with("dcb ets set dev vb prio-tc "),
        "{}",
        r.fix("cnp")
    );
    assert_eq!(r.code, 1);
    for c in ["tos", "global_pause", "cnp"] {
        run_shell_fix(&nb, &shim, r.fix(c));
    }
    let r = doctor(&nb, &shim, &sock, root, &[]);
    r.expect(
        "tos",
        "ok",
        "RDMA CM's default ToS on mlx5_0 port 1 is 106 (DSCP 26, ECT(0))",
    );
    r.expect("global_pause", "ok", "802.3x link pause off both ways");
    r.expect("cnp", "ok", "traffic class 2, strict (as the NIC holds it)");

    // RoCE v1 and ECN off on 3 at the notification point, behind everyone's back.
    run_shell_fix(
        &nb,
        &shim,
        &format!(
            "echo 'IB/RoCE v1' > {r0}/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode; \
             echo 0 > {r0}/class/net/vb/ecn/roce_np/enable/3"
        ),
    );
    let r = doctor(&nb, &shim, &sock, root, &[]);
    r.expect("roce_mode", "problem", "is IB/RoCE v1");
    r.expect(
        "ecn",
        "problem",
        "ECN notification point (CNPs) on 0,1,2,4,5,6,7: not on 3",
    );
    for c in ["roce_mode", "ecn"] {
        run_shell_fix(&nb, &shim, r.fix(c));
    }
    let r = doctor(&nb, &shim, &sock, root, &[]);
    let not_ok: Vec<(String, String)> = r
        .statuses()
        .into_iter()
        .filter(|(_, s)| s != "ok")
        .collect();
    let unknown = |c: &str| (c.to_string(), "unknown".to_string());
    assert_eq!(
        not_ok,
        ["dcbx", "pfc", "mtu", "headroom", "watchdog"].map(unknown),
        "{:#}",
        r.json
    );
    assert_eq!(r.code, 2);

    // The same as a table: a line per check, the fix under the evidence.
    let out = doctor_command(
        &nb,
        &shim,
        &["--socket", sock.to_str().unwrap(), "--sysfs", r0],
    );
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("no daemon answers on "), "{text}");
    assert!(
        lines[0].ends_with(&format!("the host's own settings only, under {r0}")),
        "{text}"
    );
    assert!(
        lines[1].starts_with("PORT  CHECK         STATUS   EVIDENCE"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("vb    roce_class    ok       RoCE runs on priority 3"),
        "{text}"
    );
    assert!(
        text.contains(
            "\n                             fix: start losslessd (systemctl start losslessd)"
        ),
        "{text}"
    );
    assert_eq!(
        *lines.last().unwrap(),
        "16 checks: 11 ok, 0 problems, 5 unknown",
        "{text}"
    );
}

#[test]
fn a_nic_firmware_lldp_agent_is_named_and_turned_off() {
    if !require(
        "a_nic_firmware_lldp_agent_is_named_and_turned_off",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let dir = TempDir::new();
    // E810 (ice, irdma) with its firmware LLDP agent on, as it ships.
    let tree =
        HostTree::new(&[Port::new("vb", Model::Ice, "0000:17:00.0").ibdev("irdma0")]).unwrap();
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"])
        .model(Model::Ice)
        .fw_agent(&["vb"])
        .sysfs(tree.root());
    // Namespace B with `vb` (its peer `va` in A): no daemon anywhere.
    let lossless_testkit::Pair {
        a: _na,
        b: nb,
        veth: _veth,
    } = lossless_testkit::Pair::up();
    let sock = dir.path().join("no-daemon.sock");
    let r = doctor(&nb, &shim, &sock, tree.root(), &["vb"]);
    r.expect(
        "fw_agent",
        "problem",
        "the NIC firmware's LLDP agent is on (private flag fw-lldp-agent)",
    );
    r.expect(
        "fw_agent",
        "problem",
        "the NIC's firmware runs DCBX (dcbnl DCBX mode",
    );
    let fix = r.fix("fw_agent").to_string();
    let flag = "ethtool --set-priv-flags vb fw-lldp-agent off";
    assert!(fix.starts_with(flag), "{fix}");
    run_shell_fix(&nb, &shim, flag);
    let r = doctor(&nb, &shim, &sock, tree.root(), &["vb"]);
    r.expect(
        "fw_agent",
        "ok",
        "the firmware LLDP agent is off (private flag fw-lldp-agent); the host runs DCBX",
    );
    assert!(!shim.state("vb").unwrap().fw_agent());
}

#[test]
fn the_headroom_two_daemons_measure_is_checked_against_the_buffer() {
    if !require(
        "the_headroom_two_daemons_measure_is_checked_against_the_buffer",
        EMULATED_DRIVER,
    ) {
        return;
    }
    const HEADROOM: &str = "\nmeasure = true\nspeed = \"100G\"\n";
    let switch = format!("{IEEE_SWITCH}\n[ports.\"va\".headroom]{HEADROOM}");
    let host = format!(
        "{}\n[ports.\"vb\".headroom]{HEADROOM}",
        roce_profile_with_host("vb", "pfc_watchdog.enabled = true")
    );
    // One 256 KiB buffer holding every priority; then a port whose buffer is 4 KiB.
    for (buffer, fits) in [
        ("1", true),
        (
            "total=4096 size=2048,2048,0,0,0,0,0,0 prio2buffer=0,0,0,0,0,0,0,0",
            false,
        ),
    ] {
        let dir = TempDir::new();
        let (tree, shim) = connectx(dir.path());
        let shim = shim.buffer(Some(buffer));
        let root = tree.root();
        let net = SwitchHost::start_args(
            dir.path(),
            &switch,
            &host,
            &shim,
            &["--sysfs", root.to_str().unwrap()],
        );
        let sock = &net.host.socket;
        let r = doctor_until("the headroom measured", &net.nb, &shim, sock, root, |r| {
            r.evidence("headroom").contains("the link needs") && r.status("headroom") != "unknown"
        });
        if fits {
            r.expect(
                "headroom",
                "ok",
                "every NIC buffer holding a PFC priority holds at least",
            );
            // The headroom is sized for 2000-octet frames: jumbo frames (an MTU of
            // 9000) would overrun it.
            r.expect(
                "mtu",
                "unknown",
                "the headroom is sized for 2000-octet frames",
            );
            tree.write_file("class/net/vb/mtu", "9000\n").unwrap();
            let r = doctor(&net.nb, &shim, sock, root, &[]);
            r.expect(
                "mtu",
                "problem",
                "the headroom is sized for 2000-octet frames",
            );
            assert!(
                r.fix("mtu")
                    .starts_with("set headroom.max_frame = 9022 in [ports.\"vb\"]"),
                "{}",
                r.fix("mtu")
            );
        } else {
            r.expect("headroom", "problem", "it does not fit the port's buffer");
            assert_eq!(r.code, 1);
        }
    }
}

#[test]
fn nothing_to_check_or_no_such_port_is_exit_2() {
    if !require(
        "nothing_to_check_or_no_such_port_is_exit_2",
        &[Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let empty = dir.path().join("sys");
    std::fs::create_dir_all(empty.join("class/net")).unwrap();
    let sock = dir.path().join("no-daemon.sock");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(lossless_bin())
            .arg("doctor")
            .args([
                "--socket",
                sock.to_str().unwrap(),
                "--sysfs",
                empty.to_str().unwrap(),
            ])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(&[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with("lossless: doctor: nothing to check: no daemon answers on ")
            && err.contains("no netdev under ")
            && err.contains("has an RDMA device; name a port (lossless doctor PORT)"),
        "{err}"
    );
    let (code, err) = run(&["eth9"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with("lossless: doctor: eth9: no such port ("),
        "{err}"
    );
    let (code, err) = run(&["--dscp", "26"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--priority"), "{err}");
}

#![allow(clippy::unwrap_used)]
//! dist/losslessd.service: `systemd-analyze verify` accepts it, `systemd-analyze
//! security` rates it OK, and losslessd works inside its sandbox. The machine has no
//! systemd to run the unit, so the sandbox is checked piece by piece on a real run:
//! the daemon runs with the unit's capability bounding set (setpriv), under strace,
//! doing what it does in service (two DCBX ports against a peer daemon, dcbnl, the
//! headroom measurement, the PFC relay with frames crossing, metrics, the CLI, a
//! change persisted, reloads, a link flap, SIGTERM); then every system call it made
//! must be in the unit's SystemCallFilter, every socket family in
//! RestrictAddressFamilies, every path it wrote under its state or runtime directory
//! (ProtectSystem=strict), every /proc path one the unit shows (with ProcSubset=pid:
//! only its own), every /dev path one PrivateDevices=yes leaves.
//!
//! The run is [`common::rig`]'s.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::rig::{Rig, RigOptions};
use common::*;
use lossless_testkit::{
    systemd_security, systemd_verify, unit_syscalls_allowed, unit_values, Trace,
};

const WAIT: Duration = Duration::from_secs(20);

fn unit_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/losslessd.service");
    std::fs::read_to_string(path).unwrap()
}

/// The unit with its ExecStart binary replaced by the one built here, in `dir`.
fn unit_with_built_binary(dir: &Path) -> PathBuf {
    let text = unit_text().replace(
        "/usr/local/sbin/losslessd",
        losslessd_bin().to_str().unwrap(),
    );
    let path = dir.join("losslessd.service");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_unit_verifies_and_rates_ok() {
    let unit = unit_text();
    // What the sandbox is made of (the security table scores these, among others).
    assert_eq!(
        unit_values(&unit, "CapabilityBoundingSet"),
        ["CAP_NET_RAW CAP_NET_ADMIN"]
    );
    assert_eq!(
        unit_values(&unit, "AmbientCapabilities"),
        ["CAP_NET_RAW CAP_NET_ADMIN"]
    );
    assert_eq!(
        unit_values(&unit, "RestrictAddressFamilies"),
        ["AF_UNIX AF_NETLINK AF_PACKET AF_INET AF_INET6"]
    );
    assert_eq!(unit_values(&unit, "ProtectSystem"), ["strict"]);
    assert_eq!(unit_values(&unit, "StateDirectory"), ["lossless"]);
    assert_eq!(unit_values(&unit, "RuntimeDirectory"), ["lossless"]);
    assert!(unit_values(&unit, "ReadWritePaths").is_empty());
    assert!(!unit_values(&unit, "SystemCallFilter").is_empty());

    if !lossless_testkit::require(
        "the_unit_verifies_and_rates_ok",
        &[lossless_testkit::Oracle::SystemdAnalyze],
    ) {
        return;
    }
    let dir = TempDir::new();
    let path = unit_with_built_binary(dir.path());
    if let Err(e) = systemd_verify(&path) {
        panic!("systemd-analyze verify:\n{e}");
    }
    let (score, rating, table) = systemd_security(&path);
    assert!(
        score <= 2.5 && rating == "OK",
        "exposure {score} {rating}:\n{table}"
    );
}

/// The RoCE drop-in (dist/losslessd-roce.conf) reads with the unit, and opens of /sys
/// only where the RoCE host settings live.
#[test]
fn the_roce_drop_in_verifies_and_opens_only_the_roce_paths() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/losslessd-roce.conf"),
    )
    .unwrap();
    assert_eq!(
        unit_values(&text, "ReadWritePaths"),
        [
            "-/sys/kernel/config/rdma_cm",
            "-/sys/devices",
            "-/sys/kernel/debug/mlx5"
        ]
    );
    if !lossless_testkit::require(
        "the_roce_drop_in_verifies_and_opens_only_the_roce_paths",
        &[lossless_testkit::Oracle::SystemdAnalyze],
    ) {
        return;
    }
    verify_drop_in("roce.conf", &text, "ReadWritePathz=/x");
}

/// `text` as the drop-in `name` of the unit (with this build's binary) passes
/// systemd-analyze verify, and is read: with `misspelt` (a key systemd does not know)
/// added, verify names that key.
fn verify_drop_in(name: &str, text: &str, misspelt: &str) {
    let dir = TempDir::new();
    let path = unit_with_built_binary(dir.path());
    let dropins = dir.path().join("losslessd.service.d");
    std::fs::create_dir(&dropins).unwrap();
    std::fs::write(dropins.join(name), text).unwrap();
    if let Err(e) = lossless_testkit::systemd_verify_with_dropins(&path) {
        panic!("systemd-analyze verify with the drop-in {name}:\n{e}");
    }
    std::fs::write(dropins.join(name), format!("{text}{misspelt}\n")).unwrap();
    let e = lossless_testkit::systemd_verify_with_dropins(&path).unwrap_err();
    let key = misspelt.split('=').next().unwrap_or(misspelt);
    assert!(e.contains(&format!("Unknown key '{key}'")), "{e}");
}

/// The fleet drop-in (dist/losslessd-fleet.conf) reads with the unit and only adds to
/// the unit's address allow-list: the unit allows localhost alone, the drop-in the
/// scrapers' network, nothing else.
#[test]
fn the_fleet_drop_in_verifies_and_only_widens_the_address_allow_list() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/losslessd-fleet.conf"),
    )
    .unwrap();
    let unit = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/losslessd.service"),
    )
    .unwrap();
    assert_eq!(unit_values(&unit, "IPAddressAllow"), ["localhost"]);
    assert_eq!(unit_values(&unit, "IPAddressDeny"), ["any"]);
    let keys: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with('['))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
        .collect();
    assert_eq!(keys, ["IPAddressAllow"], "{text}");
    assert_eq!(unit_values(&text, "IPAddressAllow"), ["10.0.0.0/8"]);
    if !lossless_testkit::require(
        "the_fleet_drop_in_verifies_and_only_widens_the_address_allow_list",
        &[lossless_testkit::Oracle::SystemdAnalyze],
    ) {
        return;
    }
    verify_drop_in("fleet.conf", &text, "IPAddressAlow=any");
}

/// The capabilities of the bounding set, as setpriv names them (`+net_raw,...`).
fn setpriv_caps(unit: &str) -> String {
    let caps = unit_values(unit, "CapabilityBoundingSet").join(" ");
    let list: Vec<String> = caps
        .split_whitespace()
        .map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase()))
        .collect();
    format!("-all,{}", list.join(","))
}

/// A capability bitmask from `CapBnd:` in /proc/PID/status.
fn cap_bounding(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let hex = status
        .lines()
        .find_map(|l| l.strip_prefix("CapBnd:"))
        .unwrap()
        .trim();
    u64::from_str_radix(hex, 16).unwrap()
}

fn cli_ok(d: &Daemon, args: &[&str]) -> String {
    let out = d.cli(args);
    assert!(
        out.status.success(),
        "lossless {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the traced daemon does: everything it does in service, once.
fn exercise(rig: &Rig) {
    let h = &rig.h;
    rig.up();
    assert_eq!(rig.relay_frames(), 5, "{}", h.log());
    Rig::scrape(&rig.nh);
    for args in [
        &["status"][..],
        &["neighbors"],
        &["counters"],
        &["events"],
        &["dcbx", "show"],
        &["headroom", "show"],
        &["relay", "show"],
        &["dcbx", "set", "va1", "pfc", "--priorities", "3,4"],
        &["dcbx", "reset", "va1"],
        &["reload"],
    ] {
        cli_ok(h, args);
    }
    // SIGHUP, then a link flap.
    let pid = h.pid().unwrap().to_string();
    sh(&["kill", "-HUP", &pid]);
    rig.nh.ip(&["link", "set", "va1", "down"]);
    wait_for(WAIT, "va1 down", || {
        (h.dcbx("va1")["peer_present"] == false).then_some(())
    });
    rig.nh.ip(&["link", "set", "va1", "up"]);
    wait_for(WAIT, "va1 to converge again", || {
        converged(&h.dcbx("va1")).then_some(())
    });
}

/// Whether a service with `PrivateDevices=yes` (and `ProcSubset=pid` when `pid_only`)
/// may read `path`.
fn allowed_special_read(path: &str, pid_only: bool) -> bool {
    if let Some(rest) = path.strip_prefix("/proc/").filter(|_| pid_only) {
        let first = rest.split('/').next().unwrap_or("");
        return first == "self" || first == "thread-self" || first.parse::<u32>().is_ok();
    }
    if let Some(dev) = path.strip_prefix("/dev/") {
        return ["null", "zero", "full", "random", "urandom", "tty"].contains(&dev);
    }
    true
}

#[test]
fn the_daemon_runs_within_the_units_sandbox() {
    let test = "the_daemon_runs_within_the_units_sandbox";
    if !lossless_testkit::require(test, &[lossless_testkit::Oracle::Netns])
        || !lossless_testkit::require(test, &[lossless_testkit::Oracle::Strace])
        || !lossless_testkit::require(test, &[lossless_testkit::Oracle::SystemdAnalyze])
    {
        return;
    }
    let unit = unit_text();
    let dir = TempDir::new();
    let trace_file = dir.path().join("trace");
    let caps = setpriv_caps(&unit);
    let wrapper = [
        "strace",
        "-f",
        "-qq",
        "-o",
        trace_file.to_str().unwrap(),
        "setpriv",
        "--bounding-set",
        &caps,
        "--no-new-privs",
        "--",
    ];
    let mut rig = Rig::start(RigOptions {
        va1: "pfc = { priorities = [3], willing = false }",
        wrapper: &wrapper,
        ..RigOptions::default()
    });
    // The daemon runs with the unit's bounding set and nothing more.
    let pid = rig.h.pid().unwrap();
    assert_eq!(
        cap_bounding(pid),
        (1 << 12) | (1 << 13),
        "CAP_NET_ADMIN (12) and CAP_NET_RAW (13) only"
    );
    exercise(&rig);
    assert_eq!(rig.h.stop(), Some(0), "{}", rig.h.log());
    let home = rig.h.dir.clone();

    let text = std::fs::read_to_string(&trace_file).unwrap();
    let trace = Trace::parse(&text, losslessd_bin().to_str().unwrap());

    // Every system call, in the unit's filter.
    let allowed = unit_syscalls_allowed(&unit);
    let refused: BTreeSet<&String> = trace.syscalls.difference(&allowed).collect();
    assert!(
        refused.is_empty(),
        "system calls the unit's SystemCallFilter refuses: {refused:?} (all made: {:?})",
        trace.syscalls
    );
    // Every socket family, in RestrictAddressFamilies.
    let families: BTreeSet<String> = unit_values(&unit, "RestrictAddressFamilies")
        .join(" ")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let other: BTreeSet<&String> = trace.families.difference(&families).collect();
    assert!(
        other.is_empty(),
        "socket families outside RestrictAddressFamilies: {other:?}"
    );
    assert!(trace.families.contains("AF_PACKET"), "{:?}", trace.families);
    // ProtectSystem=strict: writes only where StateDirectory and RuntimeDirectory
    // (here: --state-dir and --socket, both under the daemon's directory) are.
    let home = home.to_str().unwrap();
    let outside: Vec<&String> = trace
        .written
        .iter()
        .filter(|p| !p.starts_with(home))
        .collect();
    assert!(
        outside.is_empty(),
        "written outside the state and runtime directories: {outside:?}"
    );
    assert!(
        trace.written.iter().any(|p| p.ends_with("state.json")),
        "{:?}",
        trace.written
    );
    // PrivateDevices=yes, and ProcSubset=pid if the unit says so.
    let pid_only = unit_values(&unit, "ProcSubset") == ["pid"];
    let hidden: Vec<&String> = trace
        .read
        .iter()
        .filter(|p| !allowed_special_read(p, pid_only))
        .collect();
    assert!(
        hidden.is_empty(),
        "read what the unit hides (PrivateDevices=yes, ProcSubset=pid: {pid_only}): {hidden:?}"
    );
    eprintln!(
        "{} system calls, all allowed: {:?}\nsocket families: {:?}\nwritten: {:?}",
        trace.syscalls.len(),
        trace.syscalls,
        trace.families,
        trace.written
    );
}

/// `socket_group` needs CAP_CHOWN, which the unit does not grant: without it the
/// daemon refuses to start and says what is missing; with it (root, every
/// capability) the socket is the group's, mode 0660.
#[test]
fn socket_group_needs_cap_chown_and_says_so() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::process::Command;
    if !lossless_testkit::require(
        "socket_group_needs_cap_chown_and_says_so",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let conf = dir.path().join("g.toml");
    std::fs::write(&conf, "[daemon]\nsocket_group = \"daemon\"\n").unwrap();
    let ns = Netns::new();
    let socket = dir.path().join("u/sock");
    let out = ns
        .command("setpriv")
        .args(["--bounding-set", &setpriv_caps(&unit_text()), "--"])
        .arg(losslessd_bin())
        .arg("--config")
        .arg(&conf)
        .arg("--socket")
        .arg(&socket)
        .arg("--state-dir")
        .arg(dir.path().join("u/state"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "losslessd: control socket {}: socket_group \"daemon\": giving the socket to the \
             group failed (Operation not permitted (os error 1)): socket_group needs CAP_CHOWN",
            socket.display()
        )),
        "{err}"
    );

    let d = Daemon::start(
        &ns,
        &dir.path().join("root"),
        &["--config", conf.to_str().unwrap()],
    );
    let meta = std::fs::metadata(&d.socket).unwrap();
    let daemon_gid = Command::new("getent")
        .args(["group", "daemon"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split(':')
                .nth(2)
                .unwrap()
                .trim()
                .parse::<u32>()
                .unwrap()
        })
        .unwrap();
    assert_eq!(meta.gid(), daemon_gid);
    assert_eq!(meta.permissions().mode() & 0o777, 0o660);
}

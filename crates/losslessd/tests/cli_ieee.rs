#![allow(clippy::unwrap_used)]
//! The operator's IEEE 802.1Qaz commands against real daemons: `lossless dcbx
//! set/reset/show`, `lossless status` and `lossless profile roce`, over a veth pair
//! between two network namespaces; the profile's output checked by `losslessd
//! --check`.

mod common;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use common::*;
use serde_json::Value;

/// Side A: IEEE 802.1Qaz only, not willing: PFC on 3, ETS (3 alone in TC 1, 6 strict
/// in TC 2), APP DSCP 26 -> 3, DSCP 48 -> 6, UDP 4791 -> 3. Side B runs the defaults
/// (auto, willing), so it takes A's configuration.
const CONFIG_A: &str = r#"
[defaults.timers]
msg_tx_interval = 1

[ports."va"]
dcbx.mode = "ieee"
pfc = { willing = false, priorities = [3] }
ets = { willing = false, prio_tc = [0, 0, 0, 1, 0, 0, 2, 0], tc_bw = [50, 50, 0, 0, 0, 0, 0, 0], tsa = ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"] }
app.willing = false
app.entries = [
    { selector = "dscp", protocol = 26, priority = 3 },
    { selector = "dscp", protocol = 48, priority = 6 },
    { selector = "udp", protocol = 4791, priority = 3 },
]
"#;

struct Pair {
    // Drop order: daemons before their namespaces.
    a: Daemon,
    b: Daemon,
    _na: Netns,
    _nb: Netns,
    dir: TempDir,
}

fn pair() -> Pair {
    let dir = TempDir::new();
    let lossless_testkit::Pair {
        a: na,
        b: nb,
        veth: _veth,
    } = lossless_testkit::Pair::down();
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, CONFIG_A).unwrap();
    let a = Daemon::start(
        &na,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
    );
    let b = Daemon::start(&nb, &dir.path().join("b"), &["--interface", "vb"]);
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    Pair {
        a,
        b,
        _na: na,
        _nb: nb,
        dir,
    }
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn err(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The CLI succeeded; its stdout.
fn ok(out: Output) -> String {
    assert!(out.status.success(), "{}{}", text(&out), err(&out));
    text(&out)
}

/// The CLI refused with exit status 2; its stderr.
fn refused(out: Output) -> String {
    assert_eq!(out.status.code(), Some(2), "{}{}", text(&out), err(&out));
    err(&out)
}

/// Runs of blanks as one: table cells compared without their padding.
fn squash(s: &str) -> String {
    s.split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn json(out: Output) -> Value {
    serde_json::from_str(&ok(out)).expect("json")
}

/// `port`'s `dcbx show --json`, through the CLI.
fn show(d: &Daemon, port: &str) -> Value {
    json(d.cli(&["dcbx", "show", port, "--json"]))["ports"][0].clone()
}

/// Waits until `f` holds for `port` of `d`; returns the port.
fn wait_port(d: &Daemon, port: &str, what: &str, f: impl Fn(&Value) -> bool) -> Value {
    wait_every(
        Duration::from_secs(8),
        Duration::from_millis(50),
        what,
        || {
            let v = d.dcbx(port);
            f(&v).then_some(v)
        },
    )
}

fn nums(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// IEEE APP entries as (selector, protocol, priority).
fn app(v: &Value) -> Vec<(String, u64, u64)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["selector"].as_str().unwrap_or("?").to_string(),
                        e["protocol"].as_u64().unwrap(),
                        e["priority"].as_u64().unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn e(sel: &str, proto: u64, prio: u64) -> (String, u64, u64) {
    (sel.to_string(), proto, prio)
}

#[test]
fn ieee_settings_change_show_persist_and_reset_through_the_cli() {
    if !require(
        "ieee_settings_change_show_persist_and_reset_through_the_cli",
        &[Oracle::Netns],
    ) {
        return;
    }
    let mut p = pair();
    let b = wait_port(&p.b, "vb", "B to agree with A", |v| {
        converged(v) && nums(&v["ieee"]["pfc"]["oper"]) == [3]
    });
    assert_eq!(b["mode"]["running"], "ieee");
    assert_eq!(
        app(&b["ieee"]["app"]["oper"]),
        [e("dscp", 26, 3), e("dscp", 48, 6), e("udp", 4791, 3)]
    );

    // status: MODE and HEALTH from the core, text and JSON.
    let st = ok(p.b.cli(&["status"]));
    let lines: Vec<&str> = st.lines().collect();
    assert!(lines[1].starts_with("PORT"), "{st}");
    let col = lines[1].find("MODE").unwrap();
    assert_eq!(&lines[2][col..col + 11], "ieee (auto)", "{st}");
    let col = lines[1].find("HEALTH").unwrap();
    assert_eq!(&lines[2][col..], "ok", "{st}");
    let st = ok(p.a.cli(&["status"]));
    let col = st.lines().nth(1).unwrap().find("MODE").unwrap();
    assert_eq!(&st.lines().nth(2).unwrap()[col..col + 5], "ieee ", "{st}");
    let st = json(p.b.cli(&["status", "--json"]));
    assert_eq!(st["ports"][0]["mode"]["configured"], "auto");
    assert_eq!(st["ports"][0]["any_error"], false);
    assert_eq!(st["ports"][0]["all_syncd"], true);
    assert_eq!(st["ports"][0]["healthy"], true);

    // dcbx show: the IEEE features, admin/peer/oper, DSCPs by name.
    let out = ok(p.b.cli(&["dcbx", "show", "vb"]));
    assert!(
        out.starts_with("vb: DCBX active, IEEE 802.1Qaz, peer present, all agreed"),
        "{out}"
    );
    assert!(
        out.contains("running ieee: auto: IEEE 802.1Qaz until"),
        "{out}"
    );
    for line in [
        "peer tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6} strict (max TCs 8, CBS no)",
        "peer-rec tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6} strict",
        "pfc admin priorities none (willing yes, MBC no, cap 8)",
        "peer priorities 3 (willing no, MBC no, cap 8)",
        "oper dscp 26 (AF31) -> 3; dscp 48 (CS6) -> 6; udp 4791 (RoCEv2) -> 3",
        "ets yes yes yes no yes yes no config willing: running the peer's ETS recommendation",
    ] {
        assert!(squash(&out).contains(line), "{line:?} not in\n{out}");
    }
    assert!(
        !out.contains("SeqNo"),
        "no CEE control state while IEEE runs\n{out}"
    );

    // ETS per traffic class on A: B (willing) runs it.
    let out = ok(p.a.cli(&[
        "dcbx",
        "set",
        "va",
        "ets",
        "--tc",
        "0:0,1,2,4,5,7:40",
        "--tc",
        "1:3:60",
        "--tc",
        "2:6:strict",
    ]));
    assert!(
        squash(&out).contains("admin tc0 {0,1,2,4,5,7} ets 40%; tc1 {3} ets 60%; tc2 {6} strict"),
        "{out}"
    );
    wait_port(&p.b, "vb", "B to run the new ETS", |v| {
        nums(&v["ieee"]["ets"]["oper"]["tc_bw"]) == [40, 60, 0, 0, 0, 0, 0, 0]
    });
    // The table form says the same; an invalid one is refused, nothing changed.
    let set = json(p.a.cli(&[
        "dcbx",
        "set",
        "va",
        "ets",
        "--prio-tc",
        "0,0,0,1,0,0,2,0",
        "--tc-bw",
        "40,60,0,0,0,0,0,0",
        "--tsa",
        "ets,ets,strict,strict,strict,strict,strict,strict",
        "--json",
    ]));
    assert_eq!(
        nums(&set["ieee"]["ets"]["admin"]["tc_bw"]),
        [40, 60, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(set["source"]["ets"], "runtime");
    let e1 = refused(p.a.cli(&["dcbx", "set", "va", "ets", "--tc-bw", "50,40,0,0,0,0,0,0"]));
    assert!(
        e1.contains("lossless: dcbx set: va: ets.tc_bw: the eight percentages must sum to 100")
            && e1.contains("(they sum to 90); nothing changed"),
        "{e1}"
    );
    let e1 = refused(p.a.cli(&["dcbx", "set", "va", "ets", "--tsa", "ets,fair"]));
    assert!(e1.contains("--tsa: \"fair\" is not a TSA"), "{e1}");

    // APP rules one at a time: added, removed, refused.
    ok(p.a.cli(&["dcbx", "set", "va", "app", "add", "dscp", "ef", "5"]));
    ok(p.a.cli(&["dcbx", "set", "va", "app", "del", "dscp", "48"]));
    // Two changes, each its own LLDPDU: wait for the second to be run too.
    let want = [e("dscp", 26, 3), e("udp", 4791, 3), e("dscp", 46, 5)];
    let b = wait_port(&p.b, "vb", "B to run the new APP entries", |v| {
        app(&v["ieee"]["app"]["oper"]) == want
    });
    assert_eq!(app(&b["ieee"]["app"]["oper"]), want);
    let e1 = refused(p.a.cli(&["dcbx", "set", "va", "app", "add", "dscp", "64", "3"]));
    assert!(
        e1.contains("DSCP 64 is outside 0..63; nothing changed"),
        "{e1}"
    );
    let e1 = refused(p.a.cli(&["dcbx", "set", "va", "app", "del", "dscp", "48"]));
    assert!(
        e1.contains("there is no rule for dscp 48 (the rules: dscp 26, udp 4791, dscp 46)"),
        "{e1}"
    );
    let e1 = refused(p.a.cli(&["dcbx", "set", "va", "app", "add", "dscp", "af99", "3"]));
    assert!(e1.contains("\"af99\" is not a DSCP"), "{e1}");

    // PFC: priorities refused as the file refuses them; MBC.
    let e1 = refused(p.a.cli(&["dcbx", "set", "va", "pfc", "--priorities", "3,3"]));
    // Refused before it reaches the daemon, by the file's rule (tests/validation.rs
    // sends the same list over the socket).
    assert!(
        e1.contains("--priorities: priority 3 is listed twice"),
        "{e1}"
    );
    let bad = p.dir.path().join("bad.toml");
    std::fs::write(&bad, "[ports.\"va\"]\npfc.priorities = [3, 3]\n").unwrap();
    let check = Command::new(losslessd_bin())
        .args(["--config", bad.to_str().unwrap(), "--check"])
        .output()
        .unwrap();
    assert!(
        err(&check).contains("priority 3 is listed twice"),
        "{}",
        err(&check)
    );
    ok(p.a.cli(&[
        "dcbx",
        "set",
        "va",
        "pfc",
        "--priorities",
        "4",
        "--mbc",
        "yes",
    ]));
    let b = wait_port(&p.b, "vb", "B to run PFC 4", |v| {
        nums(&v["ieee"]["pfc"]["oper"]) == [4]
    });
    assert_eq!(b["ieee"]["peer_tlvs"]["pfc"]["mbc"], true);
    let out = ok(p.b.cli(&["dcbx", "show", "vb"]));
    assert!(
        squash(&out).contains("peer priorities 4 (willing no, MBC yes, cap 8)"),
        "{out}"
    );

    // Mode: A to CEE DCBX, B (auto) follows; back.
    ok(p.a.cli(&["dcbx", "set", "va", "mode", "cee"]));
    wait_port(&p.b, "vb", "B to fall back to CEE", |v| {
        v["mode"]["running"] == "cee" && converged(v)
    });
    let st = ok(p.b.cli(&["status"]));
    let col = st.lines().nth(1).unwrap().find("MODE").unwrap();
    assert_eq!(
        &st.lines().nth(2).unwrap()[col..col + 10],
        "cee (auto)",
        "{st}"
    );
    let out = ok(p.a.cli(&["dcbx", "show", "va"]));
    assert!(out.contains("va: DCBX active, CEE DCBX"), "{out}");
    assert!(out.contains("configured cee (runtime)"), "{out}");
    assert!(out.contains("SeqNo"), "{out}");
    assert!(
        out.contains("(the rules dscp 26 (AF31), dscp 46 (EF) are sent in IEEE 802.1Qaz only"),
        "{out}"
    );

    // The changes survive a restart of A (persisted first).
    p.a.stop();
    p.a.spawn();
    let a = show(&p.a, "va");
    assert_eq!(a["source"]["mode"], "runtime");
    assert_eq!(a["mode"]["configured"], "cee");
    assert_eq!(a["source"]["ets"], "runtime");
    assert_eq!(a["ieee_admin"]["pfc_mbc"], true);
    assert_eq!(a["app_rules"]["entries"].as_array().unwrap().len(), 3);

    // dcbx reset: the mode, then everything; the file's values run again.
    let out = ok(p.a.cli(&["dcbx", "reset", "va", "mode"]));
    assert!(out.contains("configured ieee (config)"), "{out}");
    wait_port(&p.b, "vb", "B back on IEEE", |v| {
        v["mode"]["running"] == "ieee" && converged(v)
    });
    let a = json(p.a.cli(&["dcbx", "reset", "va", "--json"]));
    for f in ["pg", "pfc", "app", "ets", "mode"] {
        assert_eq!(a["source"][f], "config", "{f}");
    }
    let state = std::fs::read_to_string(p.a.state.join("state.json")).unwrap();
    assert!(!state.contains("\"va\""), "{state}");
    wait_port(&p.b, "vb", "B to run the file's values again", |v| {
        nums(&v["ieee"]["pfc"]["oper"]) == [3]
            && app(&v["ieee"]["app"]["oper"]).contains(&e("dscp", 48, 6))
            && nums(&v["ieee"]["ets"]["oper"]["tc_bw"]) == [50, 50, 0, 0, 0, 0, 0, 0]
    });
    let e1 = refused(p.a.cli(&["dcbx", "reset", "nope"]));
    assert!(e1.contains("no port \"nope\"; managed ports: va"), "{e1}");
}

#[test]
fn profile_roce_applies_to_a_running_daemon() {
    if !require("profile_roce_applies_to_a_running_daemon", &[Oracle::Netns]) {
        return;
    }
    let p = pair();
    wait_port(&p.b, "vb", "B to agree with A", converged);
    let out = ok(p.a.cli(&[
        "profile",
        "roce",
        "--priority",
        "4",
        "--dscp",
        "af41",
        "--cnp-priority",
        "7",
        "--willing",
        "no",
        "--port",
        "v?",
        "--apply-to-daemon",
    ]));
    assert!(out.starts_with("va: RoCEv2 profile applied"), "{out}");
    // Each feature of the profile is its own change: wait for the last one too.
    let want = [e("dscp", 34, 4), e("dscp", 48, 7), e("udp", 4791, 4)];
    let b = wait_port(&p.b, "vb", "B to run the profile", |v| {
        converged(v)
            && nums(&v["ieee"]["pfc"]["oper"]) == [4]
            && app(&v["ieee"]["app"]["oper"]) == want
    });
    assert_eq!(
        app(&b["ieee"]["app"]["oper"]),
        [e("dscp", 34, 4), e("dscp", 48, 7), e("udp", 4791, 4)]
    );
    let ets = &b["ieee"]["ets"]["oper"];
    assert_eq!(nums(&ets["prio_tc"]), [0, 0, 0, 0, 1, 0, 0, 2]);
    assert_eq!(nums(&ets["tc_bw"]), [50, 50, 0, 0, 0, 0, 0, 0]);
    assert_eq!(ets["tsa"][2], "strict");
    let a = show(&p.a, "va");
    for f in ["pg", "pfc", "app", "ets"] {
        assert_eq!(a["source"][f], "runtime", "{f}");
    }
    // A reader that goes away (`| head`) ends the output quietly, no panic.
    for cmd in [&["dcbx", "show"][..], &["status"][..], &["events"][..]] {
        let mut child = Command::new(lossless_bin())
            .args(cmd)
            .arg("--socket")
            .arg(&p.a.socket)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {}", err(&out));
        assert!(out.stderr.is_empty(), "{cmd:?}: {}", err(&out));
    }
    let e1 = refused(p.a.cli(&["profile", "roce", "--port", "x*", "--apply-to-daemon"]));
    assert!(
        e1.contains("x* matches no port of the daemon (its ports: va); nothing changed"),
        "{e1}"
    );
}

/// `profile roce --apply-to-daemon` on a port with `apply = "none"` (the default) sets
/// what the port advertises, and the NIC is never told: the CLI says so, in text and in
/// JSON (`nic_programmed`), rather than report the host lossless. The same on a port with
/// `apply = "dcbnl"` whose device has no dcbnl (a veth). Fails on the old code, which
/// printed "RoCEv2 profile applied" alone for both.
#[test]
fn profile_roce_says_when_the_nic_is_not_programmed() {
    if !require(
        "profile_roce_says_when_the_nic_is_not_programmed",
        &[Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let host = Netns::new();
    let peer = Netns::new();
    for (name, other, i) in [("va", "pa", 0), ("vc", "pc", 1)] {
        Veth::new(
            &host,
            name,
            &format!("02:00:00:00:00:0{i}"),
            &peer,
            other,
            &format!("02:00:00:00:01:0{i}"),
        );
    }
    let conf = dir.path().join("host.toml");
    std::fs::write(
        &conf,
        "[ports.\"va\"]\n\n[ports.\"vc\"]\napply = \"dcbnl\"\n",
    )
    .unwrap();
    let d = Daemon::start(
        &host,
        &dir.path().join("d"),
        &["--config", conf.to_str().unwrap()],
    );
    // vc's dcbnl probe answered (a veth has none).
    wait_for(Duration::from_secs(5), "vc's dcbnl probe", || {
        let st = d.call(&lossless_node::protocol::Request::Status);
        let ports = st["ports"].as_array()?;
        let vc = ports.iter().find(|p| p["port"] == "vc")?;
        (ports.len() == 2 && vc["hardware"]["mode"] == "unsupported").then_some(())
    });

    let out = ok(d.cli(&["profile", "roce", "--port", "v?", "--apply-to-daemon"]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert!(lines[0].starts_with("va: RoCEv2 profile applied"), "{out}");
    assert_eq!(
        lines[1],
        "va: applied to the DCBX advertisement only: apply = \"none\", the NIC was not \
         programmed; set apply = \"dcbnl\" in the configuration to program it",
        "{out}"
    );
    // The host's RoCE settings are the file's, not runtime changes: said for each port.
    assert_eq!(
        lines[2],
        "va: the RoCE host settings (roce.*) come from the file: `lossless profile roce \
         --port va` prints them",
        "{out}"
    );
    assert!(lines[3].starts_with("vc: RoCEv2 profile applied"), "{out}");
    assert!(
        lines[4].starts_with(
            "vc: applied to the DCBX advertisement only: apply = \"dcbnl\", but the NIC was \
             not programmed: it has no dcbnl"
        ),
        "{out}"
    );

    for (port, apply, hardware) in [
        ("va", "none", "report_only"),
        ("vc", "dcbnl", "unsupported"),
    ] {
        let v = json(d.cli(&[
            "profile",
            "roce",
            "--port",
            port,
            "--apply-to-daemon",
            "--json",
        ]));
        // The port as `dcbx set` answers it, and whether the daemon programs its NIC.
        assert_eq!(v["port"], port, "{v:#}");
        assert_eq!(v["nic_programmed"], false, "{port}: {v:#}");
        assert_eq!(v["apply"], apply, "{port}: {v:#}");
        assert_eq!(v["hardware"]["mode"], hardware, "{port}: {v:#}");
        // The port's DCBX state is there as before.
        assert_eq!(nums(&v["pfc"]["desired"]["priorities"]), [3], "{v:#}");
    }
}

/// Runs `lossless profile roce ARGS` and `losslessd --check` on what it printed.
fn profile(dir: &Path, name: &str, args: &[&str]) -> (String, Output) {
    let out = Command::new(lossless_bin())
        .args(["profile", "roce"])
        .args(args)
        .output()
        .unwrap();
    let toml = ok(out);
    let file = dir.join(name);
    std::fs::write(&file, &toml).unwrap();
    let check = Command::new(losslessd_bin())
        .args(["--config", file.to_str().unwrap(), "--check"])
        .output()
        .unwrap();
    (toml, check)
}

#[test]
fn profile_roce_is_a_section_losslessd_accepts() {
    let dir = TempDir::new();
    for (i, args) in [
        &[][..],
        &["--port", "enp65s0f*"][..],
        &[
            "--priority",
            "5",
            "--dscp",
            "cs4",
            "--cnp-priority",
            "0",
            "--cnp-dscp",
            "46",
        ][..],
        &[
            "--willing",
            "no",
            "--bandwidth",
            "80",
            "--mode",
            "ieee",
            "--port",
            "eth0",
        ][..],
    ]
    .iter()
    .enumerate()
    {
        let (toml, check) = profile(dir.path(), &format!("p{i}.toml"), args);
        assert!(check.status.success(), "{args:?}: {}\n{toml}", err(&check));
        assert_eq!(
            text(&check),
            format!(
                "{}: configuration is valid\n",
                dir.path().join(format!("p{i}.toml")).display()
            )
        );
        let cfg = lossless_node::config::DaemonConfig::parse(&toml, Path::new("p.toml")).unwrap();
        let port = cfg.port(if args.contains(&"eth0") {
            "eth0"
        } else {
            "enp65s0f1"
        });
        let d = port.dcbx();
        let (prio, cnp, dscp, cnp_dscp, bw, willing) = match i {
            2 => (5u8, 0u8, 32u16, 46u16, 50u8, true),
            3 => (3, 6, 26, 48, 80, false),
            _ => (3, 6, 26, 48, 50, true),
        };
        assert_eq!(
            d.pfc.cfg.priorities.priorities().collect::<Vec<_>>(),
            [prio]
        );
        assert_eq!(d.pfc.willing, willing);
        assert_eq!(d.ieee.ets.willing, willing);
        let t = d.ieee.ets.cfg.table;
        for p in 0..8u8 {
            let tc = if p == prio {
                1
            } else if p == cnp {
                2
            } else {
                0
            };
            assert_eq!(t.prio_tc[usize::from(p)], tc, "{args:?} priority {p}");
        }
        assert_eq!(t.tc_bw[..3], [100 - bw, bw, 0]);
        assert_eq!(
            t.tsa[..3]
                .iter()
                .map(|t| t.name().unwrap())
                .collect::<Vec<_>>(),
            ["ets", "ets", "strict"]
        );
        let rules: Vec<(String, u16, Vec<u8>)> = port
            .app
            .entries
            .iter()
            .map(|r| {
                (
                    r.selector.to_string(),
                    r.protocol,
                    r.priorities.priorities().collect(),
                )
            })
            .collect();
        assert_eq!(
            rules,
            [
                ("dscp".to_string(), dscp, vec![prio]),
                ("dscp".to_string(), cnp_dscp, vec![cnp]),
                ("udp".to_string(), 4791, vec![prio]),
            ]
        );
        assert_eq!(d.pg.cfg.pgid[usize::from(prio)], 1);
        assert_eq!(d.pg.cfg.pgid[usize::from(cnp)], 15);
        if i == 3 {
            assert_eq!(d.mode, lossless_dcbx::DcbxMode::Ieee);
        }
    }

    // Nonsense is refused with the flag and the reason, nothing printed.
    for (args, why) in [
        (
            &["--cnp-priority", "3"][..],
            "--cnp-priority: 3 is also the data priority",
        ),
        (
            &["--dscp", "64"][..],
            "--dscp: 64 is not a DSCP: the field has 6 bits, 0..63",
        ),
        (
            &["--cnp-dscp", "af31"][..],
            "--cnp-dscp: 26 (AF31) is also the data DSCP",
        ),
        (
            &["--priority", "8"][..],
            "--priority: 8 is not a priority: 0..7",
        ),
        (&["--bandwidth", "100"][..], "--bandwidth: 100 %"),
        (&["--dscp", "fast"][..], "\"fast\" is not a DSCP"),
    ] {
        let out = Command::new(lossless_bin())
            .args(["profile", "roce"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(err(&out).contains(why), "{args:?}: {}", err(&out));
    }
}

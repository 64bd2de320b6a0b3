#![allow(clippy::unwrap_used)]
//! Two losslessd over a veth pair, each in its own network namespace: they
//! converge, changes propagate, link flaps, kill -9 and restarts behave, the
//! CLI shows it, and tshark decodes what goes over the wire.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use lossless_node::protocol::{FeatureChange, FeatureName, Request};
use serde_json::Value;

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";

/// Side A: CEE DCBX only, not willing, PFC on 3 and 4, PG 0-2 -> PG0 25 %, 3-5 -> PG1
/// 75 %, 6 strict, 7 -> PG2; a 1 s interval and TTL 3 s so ageing is testable. Side B
/// runs the defaults (`mode = "auto"`), so it falls back to CEE for A.
const CONFIG_A: &str = r#"
[defaults.timers]
msg_tx_interval = 1
msg_tx_hold = 3

[defaults.dcbx]
mode = "cee"

[ports."va"]
pfc = { willing = false, priorities = [3, 4] }
pg = { willing = false, pgid = [0, 0, 0, 1, 1, 1, 15, 2], percent = [25, 75, 0, 0, 0, 0, 0, 0] }
"#;

struct Pair {
    // Drop order: daemons before the namespaces they live in.
    a: Daemon,
    b: Daemon,
    na: Netns,
    nb: Netns,
    _dir: TempDir,
}

fn pair() -> Pair {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, CONFIG_A).expect("config");
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
        na,
        nb,
        _dir: dir,
    }
}

fn wait_converged(d: &Daemon, port: &str, limit: Duration) -> Value {
    wait_for(limit, &format!("{port} to converge"), || {
        let v = d.dcbx(port);
        converged(&v).then_some(v)
    })
}

#[test]
fn two_daemons_converge_change_flap_age_out_and_restart() {
    if !require(
        "two_daemons_converge_change_flap_age_out_and_restart",
        &[Oracle::Netns],
    ) {
        return;
    }
    let mut p = pair();

    // Convergence: B (willing) runs A's PFC and PG; both in sync.
    let b = wait_converged(&p.b, "vb", Duration::from_secs(5));
    wait_converged(&p.a, "va", Duration::from_secs(5));
    assert_eq!(priorities(&b["pfc"]["oper"]), [3, 4], "{b:#}");
    assert_eq!(priorities(&b["pfc"]["peer"]), [3, 4]);
    assert_eq!(priorities(&b["pfc"]["desired"]), Vec::<u64>::new());
    assert_eq!(b["pfc"]["oper_mode"], true);
    assert_eq!(b["pfc"]["willing"], true);
    assert_eq!(b["pfc"]["peer_willing"], false);
    assert_eq!(
        b["pg"]["oper"]["pgid"],
        serde_json::json!([0, 0, 0, 1, 1, 1, 15, 2])
    );
    assert_eq!(
        b["pg"]["oper"]["percent"],
        serde_json::json!([25, 75, 0, 0, 0, 0, 0, 0])
    );
    let a = p.a.dcbx("va");
    assert_eq!(priorities(&a["pfc"]["oper"]), [3, 4]);
    assert_eq!(a["pfc"]["peer_willing"], true);
    assert_eq!(a["pfc"]["error"], false);

    // A change on A (through the CLI) propagates to B.
    let out =
        p.a.cli(&["dcbx", "set", "va", "pfc", "--priorities", "2,5", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let set: Value = serde_json::from_slice(&out.stdout).expect("dcbx set --json");
    assert_eq!(priorities(&set["pfc"]["desired"]), [2, 5]);
    assert_eq!(set["source"]["pfc"], "runtime");
    wait_for(Duration::from_secs(5), "B to adopt PFC 2,5", || {
        let v = p.b.dcbx("vb");
        (converged(&v) && priorities(&v["pfc"]["oper"]) == [2, 5]).then_some(())
    });

    // Link down: both lose the peer at once; up: they converge again.
    p.na.ip(&["link", "set", "va", "down"]);
    wait_for(Duration::from_secs(2), "B to see link down", || {
        let v = p.b.call(&Request::Status);
        (v["ports"][0]["link_up"] == false && v["ports"][0]["peer_present"] == false).then_some(())
    });
    let t0 = Instant::now();
    p.na.ip(&["link", "set", "va", "up"]);
    wait_converged(&p.b, "vb", Duration::from_secs(5));
    wait_converged(&p.a, "va", Duration::from_secs(5));
    eprintln!("re-converged {:?} after link up", t0.elapsed());

    // kill -9 of A: B ages A out when the TTL (3 s) runs out, not before.
    p.a.kill9();
    let killed = Instant::now();
    wait_for(Duration::from_secs(6), "B to age A out", || {
        let v = p.b.call(&Request::Neighbors {
            port: Some("vb".into()),
        });
        v["ports"][0]["neighbors"]
            .as_array()?
            .is_empty()
            .then_some(())
    });
    let aged = killed.elapsed();
    assert!(
        aged >= Duration::from_millis(1900) && aged <= Duration::from_millis(3500),
        "aged out after {aged:?}; TTL 3 s after the last frame (sent every 1 s)"
    );
    let c = p.b.call(&Request::Counters {
        port: Some("vb".into()),
    });
    assert_eq!(c["ports"][0]["lldp"]["ageouts"], 1, "{c:#}");

    // Restart of A: it comes back with the persisted runtime change (2,5),
    // and a SeqNo in a new range.
    p.a.spawn();
    let b = wait_for(
        Duration::from_secs(5),
        "re-convergence after restart",
        || {
            let v = p.b.dcbx("vb");
            (converged(&v) && priorities(&v["pfc"]["oper"]) == [2, 5]).then_some(v)
        },
    );
    let a = p.a.dcbx("va");
    assert_eq!(a["source"]["pfc"], "runtime");
    assert_eq!(priorities(&a["pfc"]["desired"]), [2, 5]);
    assert!(a["control"]["seq"].as_u64().unwrap() > 65536, "{a:#}");
    assert_eq!(b["control"]["ack"], a["control"]["seq"]);
    let status = p.a.call(&Request::Status);
    assert_eq!(status["daemon"]["boots"], 2);
}

#[test]
fn sigterm_sends_a_shutdown_lldpdu() {
    if !require("sigterm_sends_a_shutdown_lldpdu", &[Oracle::Netns]) {
        return;
    }
    let mut p = pair();
    wait_converged(&p.b, "vb", Duration::from_secs(5));
    let code = p.a.stop();
    assert_eq!(code, Some(0), "{}", p.a.log());
    // The shutdown LLDPDU removes A at once (TTL would take 3 s).
    let v = wait_for(Duration::from_millis(500), "B to drop A", || {
        let v = p.b.call(&Request::Events { follow: false });
        v["events"]
            .as_array()?
            .iter()
            .find(|e| e["event"] == "neighbor_removed")
            .cloned()
    });
    assert_eq!(v["why"], "shutdown", "{v:#}");
    assert!(!p.a.socket.exists(), "socket file removed at exit");
}

#[test]
fn cli_tables_and_json_schema() {
    if !require("cli_tables_and_json_schema", &[Oracle::Netns]) {
        return;
    }
    let p = pair();
    wait_converged(&p.b, "vb", Duration::from_secs(5));
    wait_converged(&p.a, "va", Duration::from_secs(5));

    // The control socket: root's, nobody else's (no socket_group configured).
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::metadata(&p.b.socket).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(meta.uid(), 0);

    let out = p.b.cli(&["status"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[1].starts_with("PORT"), "{text}");
    let row = lines[2];
    for word in ["vb", "up", "active", "cee (auto)", "none", "ok"] {
        assert!(row.contains(word), "{word:?} not in {row:?}");
    }
    // Columns line up: every header starts where its cells start.
    let col = lines[1].find("APPLY").unwrap();
    assert_eq!(&row[col..col + 4], "none");
    let col = lines[1].find("HEALTH").unwrap();
    assert_eq!(&row[col..], "ok");

    let out = p.b.cli(&["dcbx", "show", "vb", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let port = &v["ports"][0];
    for f in ["pg", "pfc", "app"] {
        for k in ["desired", "peer", "oper"] {
            assert!(port[f][k].is_object(), "{f}.{k}: {port:#}");
        }
        for k in ["oper_mode", "syncd", "error", "willing", "peer_willing"] {
            assert!(port[f][k].is_boolean(), "{f}.{k}: {port:#}");
        }
    }
    assert!(port["pfc"]["oper"]["priorities"].is_array());
    assert!(port["pg"]["oper"]["pgid"].is_array());
    assert!(port["pg"]["oper"]["percent"].is_array());

    let out = p.b.cli(&["dcbx", "show", "vb"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("priorities 3,4"), "{text}");

    let out = p.b.cli(&["neighbors", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["ports"][0]["neighbors"][0]["mac"], MAC_A);

    let out = p.b.cli(&["counters", "vb", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v["ports"][0]["lldp"]["frames_in"].as_u64().unwrap() >= 1);

    // Errors: unknown port (exit 2, names the ports), bad values (exit 2, nothing changed).
    let out = p.b.cli(&["dcbx", "show", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no port \"nope\"") && err.contains("vb"),
        "{err}"
    );
    let out =
        p.b.cli(&["dcbx", "set", "vb", "pg", "--percent", "50,40,0,0,0,0,0,0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing changed"), "{err}");
    assert_eq!(p.b.dcbx("vb")["source"]["pg"], "config");
    let out = p.b.cli(&["dcbx", "set", "vb", "pfc", "--priorities", "9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of range"));

    // No daemon: a clear error, exit 1.
    let out = Command::new(lossless_bin())
        .args(["status", "--socket", "/nonexistent/sock"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is losslessd running"));
}

#[test]
fn events_follow_streams_changes() {
    if !require("events_follow_streams_changes", &[Oracle::Netns]) {
        return;
    }
    let p = pair();
    wait_converged(&p.b, "vb", Duration::from_secs(5));
    let mut follow = Command::new(lossless_bin())
        .args(["events", "--follow", "--json"])
        .arg("--socket")
        .arg(&p.b.socket)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Its lines, as they come: the backlog first (the convergence's events), which
    // proves the subscription is in place before the change is made.
    let stdout = follow.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx
                .send(serde_json::from_str(&line).expect("json line"))
                .is_err()
            {
                break;
            }
        }
    });
    let mut lines = vec![rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the backlog's first event")];
    p.a.call(&Request::DcbxSet {
        port: "va".into(),
        change: FeatureChange {
            feature: FeatureName::Pfc,
            priorities: Some(vec![6]),
            ..FeatureChange::default()
        },
    });
    wait_for(Duration::from_secs(5), "B to adopt PFC 6", || {
        (priorities(&p.b.dcbx("vb")["pfc"]["oper"]) == [6]).then_some(())
    });
    let streamed =
        |e: &Value| e["event"] == "oper_changed" && e["feature"] == "pfc" && e["port"] == "vb";
    let deadline = Instant::now() + Duration::from_secs(5);
    while !lines.iter().any(streamed) && Instant::now() < deadline {
        if let Ok(e) = rx.recv_timeout(Duration::from_millis(100)) {
            lines.push(e);
        }
    }
    let _ = follow.kill();
    let _ = follow.wait();
    assert!(lines.iter().any(streamed), "{lines:#?}");
    assert!(lines.iter().all(|e| e["time"].as_f64().unwrap() > 1.7e9));
}

#[test]
fn reload_applies_a_new_file_and_refuses_a_bad_one() {
    if !require(
        "reload_applies_a_new_file_and_refuses_a_bad_one",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = pair();
    wait_converged(&p.b, "vb", Duration::from_secs(5));
    let conf = p.a.args[1].clone();
    let before = p.a.dcbx("va");

    // A bad file: precise errors, every one of them, exit 2, nothing changes.
    let bad = format!("{}\nbogus = 1\n", CONFIG_A.replace("[3, 4]", "[3, 9]"));
    std::fs::write(&conf, bad).unwrap();
    let out = p.a.cli(&["reload"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("lossless: reload: ")
            && lines[0].contains(&conf)
            && lines[0].contains("pfc.priorities"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("lossless: reload: ") && lines[1].contains("bogus: unknown key"),
        "{err}"
    );
    let after = p.a.dcbx("va");
    assert_eq!(after["pfc"]["desired"], before["pfc"]["desired"]);
    assert_eq!(after["control"]["seq"], before["control"]["seq"]);

    // A good file: the port changes and the peer follows.
    std::fs::write(&conf, CONFIG_A.replace("[3, 4]", "[1]")).unwrap();
    let out = p.a.cli(&["reload", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["changed"], serde_json::json!(["va"]));
    wait_for(Duration::from_secs(5), "B to adopt PFC 1", || {
        (priorities(&p.b.dcbx("vb")["pfc"]["oper"]) == [1]).then_some(())
    });

    // The same file again: nothing disturbed, SeqNo unchanged.
    let seq = p.a.dcbx("va")["control"]["seq"].clone();
    let out = p.a.cli(&["reload", "--json"]);
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["changed"], serde_json::json!([]));
    assert_eq!(r["unchanged"], 1);
    assert_eq!(p.a.dcbx("va")["control"]["seq"], seq);

    // SIGHUP does the same.
    std::fs::write(&conf, CONFIG_A.replace("[3, 4]", "[7]")).unwrap();
    Command::new("kill")
        .args(["-HUP", &p.a.pid().unwrap().to_string()])
        .status()
        .unwrap();
    wait_for(Duration::from_secs(5), "B to adopt PFC 7", || {
        (priorities(&p.b.dcbx("vb")["pfc"]["oper"]) == [7]).then_some(())
    });
}

#[test]
fn sighup_on_an_empty_file_keeps_every_port() {
    if !require("sighup_on_an_empty_file_keeps_every_port", &[Oracle::Netns]) {
        return;
    }
    let p = pair();
    wait_converged(&p.b, "vb", Duration::from_secs(5));
    let conf = p.a.args[1].clone();
    // An editor that truncates the file and has not written it yet.
    std::fs::write(&conf, "").unwrap();
    Command::new("kill")
        .args(["-HUP", &p.a.pid().unwrap().to_string()])
        .status()
        .unwrap();
    let line = wait_for(Duration::from_secs(5), "the reload to be refused", || {
        p.a.log()
            .lines()
            .find(|l| l.contains("SIGHUP: configuration refused"))
            .map(str::to_string)
    });
    assert!(line.contains("the file is empty"), "{line}");
    let ports = p.a.call(&Request::Status)["ports"].clone();
    assert_eq!(ports.as_array().map(Vec::len), Some(1), "{ports}");
    // `lossless reload` says the same, and exits 2.
    let out = p.a.cli(&["reload"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the file is empty"));
    // B still negotiates with A's unchanged configuration.
    assert_eq!(priorities(&p.b.dcbx("vb")["pfc"]["oper"]), [3, 4]);
}

#[test]
fn interface_added_later_and_removed() {
    if !require("interface_added_later_and_removed", &[Oracle::Netns]) {
        return;
    }
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    // Both daemons start before their interfaces exist.
    let a = Daemon::start(&na, &dir.path().join("a"), &["--interface", "va"]);
    let b = Daemon::start(&nb, &dir.path().join("b"), &["--interface", "vb"]);
    assert_eq!(a.call(&Request::Status)["ports"], serde_json::json!([]));
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    wait_converged(&b, "vb", Duration::from_secs(5));
    na.ip(&["link", "del", "va"]);
    wait_for(Duration::from_secs(2), "both ports to go", || {
        let pa = a.call(&Request::Status)["ports"].as_array()?.len();
        let pb = b.call(&Request::Status)["ports"].as_array()?.len();
        (pa == 0 && pb == 0).then_some(())
    });
}

#[test]
fn tshark_decodes_what_was_configured() {
    if !require(
        "tshark_decodes_what_was_configured",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        return;
    }
    let p = pair();
    wait_converged(&p.b, "vb", Duration::from_secs(5));
    let pcap = p._dir.path().join("vb.pcap");
    let mut cap = lossless_testkit::Capture::start(&p.nb, "vb", "ether proto 0x88cc", &pcap);
    // A change makes both sides send at once.
    p.a.call(&Request::DcbxSet {
        port: "va".into(),
        change: FeatureChange {
            feature: FeatureName::Pfc,
            priorities: Some(vec![1, 6]),
            ..FeatureChange::default()
        },
    });
    // B runs what A's LLDPDU carried: that frame was on vb, where the capture is; stop
    // drains what the capture has not written yet.
    wait_for(Duration::from_secs(5), "B to adopt PFC 1,6", || {
        (priorities(&p.b.dcbx("vb")["pfc"]["oper"]) == [1, 6]).then_some(())
    });
    cap.stop();
    let rows = lossless_testkit::tshark_fields(
        &pcap,
        &["-Y", "eth.src == 02:00:00:00:00:0a"],
        &[
            "lldp.dcbx.control.seq",
            "lldp.dcbx.feature.willing",
            "lldp.dcbx.feature.pfc.prio1",
            "lldp.dcbx.feature.pfc.prio3",
            "lldp.dcbx.feature.pfc.prio6",
            "lldp.dcbx.feature.pg.pgid_prio6",
            "lldp.dcbx.feature.pg.per1",
            "_ws.expert",
        ],
    );
    let f: Vec<&str> = rows
        .rows
        .last()
        .unwrap_or_else(|| panic!("no frames from A in {}", pcap.display()))
        .iter()
        .map(String::as_str)
        .collect();
    let last = f.join("|");
    assert_eq!(f[1], "0,0,1", "PG, PFC not willing; APP willing: {last}");
    assert_eq!(
        (f[2], f[3], f[4]),
        ("1", "0", "1"),
        "PFC on 1 and 6: {last}"
    );
    assert_eq!((f[5], f[6]), ("15", "75"), "{last}");
    assert_eq!(f[7], "", "tshark found something malformed: {last}");
}

#[test]
fn metrics_endpoint_serves_prometheus_text() {
    if !require(
        "metrics_endpoint_serves_prometheus_text",
        &[Oracle::Netns, Oracle::Promtool],
    ) {
        return;
    }
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let a = Daemon::start(
        &na,
        &dir.path().join("a"),
        &["--interface", "va", "--metrics", "127.0.0.1:9717"],
    );
    let _b = Daemon::start(&nb, &dir.path().join("b"), &["--interface", "vb"]);
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    wait_converged(&a, "va", Duration::from_secs(5));
    let reply = http_get(&na, "127.0.0.1:9717", "/metrics");
    assert!(
        reply.head.starts_with("HTTP/1.1 200 OK\r\n"),
        "{}",
        reply.head
    );
    assert!(reply
        .head
        .contains("Content-Type: text/plain; version=0.0.4"));
    let text = reply.body.as_str();
    for line in [
        "lossless_ports 1",
        "lossless_link_up{port=\"va\"} 1",
        "lossless_dcbx_peer_present{port=\"va\"} 1",
        "lossless_dcbx_syncd{port=\"va\",feature=\"pfc\"} 1",
        "lossless_hardware_apply{port=\"va\",mode=\"report_only\"} 1",
        "lossless_dcbx_convergence_seconds_count 1",
        "# TYPE lossless_lldp_frames_out_total counter",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    // Every sample line is NAME{labels} VALUE with a numeric value, and promtool
    // accepts the whole text.
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let (_, v) = l.rsplit_once(' ').unwrap();
        assert!(v.parse::<f64>().is_ok() || v == "+Inf", "bad sample {l:?}");
    }
    if let Err(e) = promtool_check_metrics(text) {
        panic!("promtool check metrics:\n{e}\n---\n{text}");
    }
    assert!(metric(text, "lossless_lldp_frames_in_total{port=\"va\"}") >= 1.0);
    assert_eq!(http_get(&na, "127.0.0.1:9717", "/other").status, 404);
}

/// examples/losslessd.toml as shipped, on interfaces with its names: the
/// RoCE ports (apply = "dcbnl" on veth: reported, not programmed) negotiate
/// with a willing peer; the management port runs LLDP only.
#[test]
fn the_example_config_runs() {
    if !require("the_example_config_runs", &[Oracle::Netns]) {
        return;
    }
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/losslessd.toml");
    let dir = TempDir::new();
    let host = Netns::new();
    let leaf = Netns::new();
    for (i, name) in ["enp65s0f0np0", "enp65s0f1np1", "eno1"].iter().enumerate() {
        Veth::new(
            &host,
            name,
            &format!("02:00:00:00:01:0{i}"),
            &leaf,
            &format!("leaf{i}"),
            &format!("02:00:00:00:02:0{i}"),
        );
    }
    let h = Daemon::start(
        &host,
        &dir.path().join("host"),
        &[
            "--config",
            example.to_str().unwrap(),
            "--metrics",
            "127.0.0.1:9718",
        ],
    );
    // The second leaf sends LLDP and no DCBX, as SONiC does: the example's static port.
    let leaf_cfg = dir.path().join("leaf.toml");
    std::fs::write(
        &leaf_cfg,
        "[ports.\"leaf*\"]\n[ports.\"leaf1\"]\ndcbx.enabled = false\n",
    )
    .unwrap();
    let _l = Daemon::start(
        &leaf,
        &dir.path().join("leaf"),
        &["--config", leaf_cfg.to_str().unwrap()],
    );
    for i in 0..3 {
        leaf.ip(&["link", "set", &format!("leaf{i}"), "up"]);
    }
    for name in ["enp65s0f0np0", "enp65s0f1np1", "eno1"] {
        host.ip(&["link", "set", name, "up"]);
    }
    let st = wait_for(Duration::from_secs(5), "the RoCE ports to converge", || {
        let v = h.call(&Request::Status);
        let ports = v["ports"].as_array()?;
        let f0 = ports.iter().find(|p| p["port"] == "enp65s0f0np0")?;
        let f1 = ports.iter().find(|p| p["port"] == "enp65s0f1np1")?;
        // The static port's only problem is the veth's lack of dcbnl: no DCBX
        // peer is asked of it, and its LLDP-only neighbour is what it is for.
        let f1_ok = f1["neighbors"] == 1
            && f1["problems"].as_array()?.iter().all(|x| {
                x.as_str().is_some_and(|t| {
                    t.starts_with("dcbnl:") && t.ends_with("nothing is programmed")
                })
            });
        (ports.len() == 3 && f0["all_syncd"] == true && f1_ok).then_some(v)
    });
    for p in st["ports"].as_array().unwrap() {
        let name = p["port"].as_str().unwrap();
        let mode = &p["hardware"]["mode"];
        if name.starts_with("enp65s0f") {
            assert_eq!(mode, "unsupported", "{p:#}");
        } else {
            assert_eq!(mode, "report_only", "{p:#}");
        }
    }
    let d = h.dcbx("enp65s0f1np1");
    assert_eq!(priorities(&d["pfc"]["desired"]), [3]);
    // Static: the configuration's IEEE 802.1Qaz objects run, the RoCEv2 classes and
    // DSCP entries, nothing negotiated.
    assert_eq!(d["mode"]["configured"], "static", "{d:#}");
    assert_eq!(d["mode"]["running"], "ieee", "{d:#}");
    assert_eq!(d["dcbx_active"], false, "{d:#}");
    assert_eq!(d["ieee"]["pfc"]["reason"], "static", "{d:#}");
    assert_eq!(
        d["ieee"]["ets"]["oper"]["prio_tc"],
        serde_json::json!([0, 0, 0, 1, 0, 0, 2, 0])
    );
    let app: Vec<(u64, u64)> = d["ieee"]["app"]["oper"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["selector"] == "dscp")
        .map(|e| {
            (
                e["protocol"].as_u64().unwrap(),
                e["priority"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(app, [(26, 3), (48, 6)]);
}

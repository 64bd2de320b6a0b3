#![allow(clippy::unwrap_used)]
//! Health on real daemons: two losslessd over veth in CEE DCBX, neither willing, with
//! different PFC priorities. Every feature is Syncd, yet PFC runs nowhere: `status`
//! must say so (HEALTH, `healthy`), through the CLI whether `--json`/`-j` comes before
//! or after the command; once the two agree, the port is healthy again.

mod common;

use std::process::Output;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";
const MISMATCH: &str = "pfc: error, configurations incompatible (mismatch)";

/// CEE DCBX, PFC not willing on `priorities`.
fn config(port: &str, priorities: &str) -> String {
    format!(
        "[defaults.dcbx]\nmode = \"cee\"\n\n[ports.\"{port}\"]\n\
         pfc = {{ willing = false, priorities = [{priorities}] }}\n"
    )
}

struct Pair {
    a: Daemon,
    b: Daemon,
    _na: Netns,
    _nb: Netns,
    _dir: TempDir,
}

fn mismatched_pair() -> Pair {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let start = |ns: &Netns, port: &str, prios: &str| {
        let conf = dir.path().join(format!("{port}.toml"));
        std::fs::write(&conf, config(port, prios)).unwrap();
        Daemon::start(
            ns,
            &dir.path().join(port),
            &["--config", conf.to_str().unwrap()],
        )
    };
    let a = start(&na, "va", "3, 4");
    let b = start(&nb, "vb", "3");
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    Pair {
        a,
        b,
        _na: na,
        _nb: nb,
        _dir: dir,
    }
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json_of(out: Output) -> Value {
    serde_json::from_str(&ok(out)).expect("JSON")
}

#[test]
fn a_cee_pfc_mismatch_is_unhealthy_in_status() {
    if !lossless_testkit::require(
        "a_cee_pfc_mismatch_is_unhealthy_in_status",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let p = mismatched_pair();
    for (d, port) in [(&p.a, "va"), (&p.b, "vb")] {
        wait_for(Duration::from_secs(5), "PFC in error", || {
            let v = d.dcbx(port);
            (v["peer_present"] == true && v["pfc"]["error"] == true).then_some(())
        });
    }
    let a = &p.a;

    // The JSON: every feature Syncd (so all_syncd stays true, as documented), but not
    // healthy, per port and for the daemon, with the problem in words.
    let v = json_of(a.cli(&["status", "--json"]));
    let port = &v["ports"][0];
    assert_eq!(port["all_syncd"], true, "{v:#}");
    assert_eq!(port["any_error"], true);
    assert_eq!(port["healthy"], false);
    assert_eq!(port["health"], MISMATCH);
    assert_eq!(port["problems"], json!([MISMATCH]));
    assert_eq!(v["healthy"], false);
    assert_eq!(v["problems"], json!([format!("va: {MISMATCH}")]));

    // -j / --json before the command, -j after it: the same document.
    let shape = |v: &Value| (v["healthy"].clone(), v["ports"][0]["problems"].clone());
    for args in [
        &["-j", "status"][..],
        &["--json", "status"],
        &["status", "-j"],
    ] {
        assert_eq!(shape(&json_of(a.cli(args))), shape(&v), "{args:?}");
    }
    for args in [
        &["--json", "dcbx", "show", "va"][..],
        &["-j", "dcbx", "show", "va"],
        &["dcbx", "show", "va", "-j"],
    ] {
        let d = json_of(a.cli(args));
        assert_eq!(d["ports"][0]["pfc"]["error"], true, "{args:?}: {d:#}");
    }
    let r = json_of(a.cli(&["-j", "reload"]));
    assert_eq!(r["unchanged"], 1, "{r:#}");

    // The table: HEALTH says what is wrong, within 100 columns.
    let text = ok(a.cli(&["status"]));
    let lines: Vec<&str> = text.lines().collect();
    let head = lines[1];
    assert!(
        head.starts_with("PORT") && head.ends_with("HEALTH"),
        "{text}"
    );
    let col = head.find("HEALTH").unwrap();
    assert_eq!(&lines[2][col..], MISMATCH, "{text}");
    for l in &lines[1..] {
        assert!(l.chars().count() <= 100, "wider than 100 columns: {l:?}");
    }

    // B takes A's priorities: both ends healthy.
    ok(p.b.cli(&["dcbx", "set", "vb", "pfc", "--priorities", "3,4"]));
    for d in [&p.a, &p.b] {
        wait_for(Duration::from_secs(5), "healthy", || {
            let v = json_of(d.cli(&["-j", "status"]));
            (v["healthy"] == true).then_some(())
        });
        let v = json_of(d.cli(&["status", "--json"]));
        assert_eq!(v["ports"][0]["health"], "ok", "{v:#}");
        assert_eq!(v["problems"], json!([]));
        let text = ok(d.cli(&["status"]));
        assert!(text.lines().nth(2).unwrap().ends_with("  ok"), "{text}");
    }
}

/// Two ports of one daemon joined by a veth pair (a looped cable between two ports of
/// a host): each receives the LLDPDUs the other sends, which carry this host's MSAP.
/// They must not make a neighbour that agrees on everything, health `ok`: they are
/// discarded, counted, and the ports are unhealthy with a reason of their own.
#[test]
fn our_own_lldpdus_coming_back_are_a_loop() {
    if !require("our_own_lldpdus_coming_back_are_a_loop", &[Oracle::Netns]) {
        return;
    }
    let dir = TempDir::new();
    let ns = Netns::new();
    Veth::new(&ns, "la", MAC_A, &ns, "lb", MAC_B);
    let conf = dir.path().join("loop.toml");
    std::fs::write(&conf, "[ports.\"la\"]\n[ports.\"lb\"]\n").unwrap();
    let d = Daemon::start(
        &ns,
        &dir.path().join("d"),
        &[
            "--config",
            conf.to_str().unwrap(),
            "--metrics",
            "127.0.0.1:9717",
        ],
    );
    ns.ip(&["link", "set", "la", "up"]);
    ns.ip(&["link", "set", "lb", "up"]);
    let ports = wait_for(Duration::from_secs(5), "both ports to see the loop", || {
        let s = d.call(&lossless_node::protocol::Request::Status);
        let ports = s["ports"].as_array()?.clone();
        ports
            .iter()
            .all(|p| p["health"].as_str().is_some_and(|h| h.contains("loop:")))
            .then_some(ports)
    });
    for p in &ports {
        let other = if p["port"] == "la" { "lb" } else { "la" };
        assert_eq!(p["healthy"], json!(false), "{p}");
        assert!(
            p["health"]
                .as_str()
                .unwrap()
                .contains(&format!("Chassis ID and Port ID of {other} (this host's)")),
            "{p}"
        );
    }
    // No neighbour was made of them.
    let n = d.call(&lossless_node::protocol::Request::Neighbors { port: None });
    for p in n.as_array().or(n["ports"].as_array()).unwrap() {
        assert_eq!(p["neighbors"], json!([]), "{p}");
    }
    let c = d.call(&lossless_node::protocol::Request::Counters { port: None });
    let rx_own = |port: &str| {
        c["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["port"] == port)
            .map(|p| p["io"]["rx_own_lldpdus"].as_u64().unwrap())
            .unwrap()
    };
    assert!(rx_own("la") >= 1 && rx_own("lb") >= 1, "{c}");
    let text = http_get(&ns, "127.0.0.1:9717", "/metrics").body;
    for port in ["la", "lb"] {
        assert_eq!(
            metric(
                &text,
                &format!("lossless_port_problem{{port=\"{port}\",problem=\"looped\"}}")
            ),
            1.0
        );
        assert!(
            metric(
                &text,
                &format!("lossless_port_rx_own_lldpdus_total{{port=\"{port}\"}}")
            ) >= 1.0
        );
    }
}

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Clean exits and restarts: SIGTERM exits promptly once the shutdown LLDPDUs are out,
//! temporary files of a killed state write are removed at the next start, and a reload
//! that removes a port reports it once, as removed.

mod common;

use std::time::{Duration, Instant};

use common::fanout::{ports, FanoutDaemons};
use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::Fanout;

/// Fails on the old code: each packet socket's close waited for its own RCU grace
/// period, one after the other (about 1 s for 64 ports, 2 s for 128), after the
/// shutdown LLDPDUs were out.
#[test]
fn sigterm_with_64_ports_sends_every_shutdown_lldpdu_and_exits_within_half_a_second() {
    if !require(
        "sigterm_with_64_ports_sends_every_shutdown_lldpdu_and_exits_within_half_a_second",
        &[Oracle::Netns],
    ) {
        return;
    }
    let n = 64;
    // `_dir` holds the state directories and sockets for as long as the test runs.
    let FanoutDaemons {
        f,
        mut hub,
        leaf,
        dir: _dir,
    } = FanoutDaemons::start(n, "");
    f.up();
    // Every leaf port has the hub as its neighbour.
    wait_every(
        Duration::from_secs(20),
        Duration::from_millis(50),
        "every leaf port to see the hub",
        || {
            let v = leaf.call(&Request::Status);
            let p = ports(&v);
            (p.len() == n && p.iter().all(|p| p["neighbors"] == 1)).then_some(())
        },
    );
    let t0 = Instant::now();
    assert_eq!(hub.stop(), Some(0));
    let took = t0.elapsed();
    // The shutdown LLDPDUs went out on every port: the leaf forgot the hub at once
    // (without them it would keep it for the TTL, 120 s).
    wait_every(
        Duration::from_secs(2),
        Duration::from_millis(20),
        "every leaf port to forget the hub",
        || {
            let v = leaf.call(&Request::Status);
            ports(&v).iter().all(|p| p["neighbors"] == 0).then_some(())
        },
    );
    assert!(
        took < Duration::from_millis(500),
        "SIGTERM to exit took {took:?} with {n} ports"
    );
}

/// Fails on the old code: `.state.json.PID.N.tmp` files of writes killed half-way
/// stayed in the state directory for ever.
#[test]
fn temporary_files_of_killed_state_writes_are_removed_at_start() {
    if !require(
        "temporary_files_of_killed_state_writes_are_removed_at_start",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = lossless_testkit::Pair::down();
    let dir = TempDir::new();
    let mut d = Daemon::start(&pair.a, &dir.path().join("a"), &["--interface", "va"]);
    let out = d.cli(&["dcbx", "set", "va", "pfc", "--priorities", "3"]);
    assert!(out.status.success());
    d.kill9();
    // What a write killed before its rename leaves, and files that are not ours.
    let state = d.state.clone();
    let leftovers = [".state.json.4242.0.tmp", ".state.json.99.17.tmp"];
    for f in leftovers {
        std::fs::write(state.join(f), "{\"half\":").unwrap();
    }
    let keep = ["notes.txt", ".state.json.tmp.keep", "state.json.1.2.tmp"];
    for f in keep {
        std::fs::write(state.join(f), "mine").unwrap();
    }
    d.spawn();
    for f in leftovers {
        assert!(!state.join(f).exists(), "{f} left behind");
    }
    for f in keep {
        assert!(state.join(f).exists(), "{f} removed");
    }
    assert!(
        d.log()
            .contains("removed 2 temporary files of interrupted state writes"),
        "{}",
        d.log()
    );
    // The state itself survived.
    assert_eq!(priorities(&d.dcbx("va")["pfc"]["desired"]), [3]);
}

/// Fails on the old code: a port the new file no longer selects was first reconfigured
/// to the defaults (`changed`, a `config_changed` event) and then removed.
#[test]
fn a_reload_that_removes_a_port_reports_it_once_as_removed() {
    if !require(
        "a_reload_that_removes_a_port_reports_it_once_as_removed",
        &[Oracle::Netns],
    ) {
        return;
    }
    let f = Fanout::new(2);
    let dir = TempDir::new();
    let conf = dir.path().join("hub.toml");
    let both = "[ports.\"p0\"]\npfc = { priorities = [3] }\n\n\
                [ports.\"p1\"]\npfc = { priorities = [4] }\n";
    std::fs::write(&conf, both).unwrap();
    let d = Daemon::start(
        &f.hub,
        &dir.path().join("hub"),
        &["--config", conf.to_str().unwrap()],
    );
    assert_eq!(ports(&d.call(&Request::Status)).len(), 2);
    std::fs::write(&conf, "[ports.\"p0\"]\npfc = { priorities = [3] }\n").unwrap();
    let before = d.call(&Request::Events { follow: false })["events"]
        .as_array()
        .map_or(0, Vec::len);
    let r = d.call(&Request::Reload);
    assert_eq!(r["removed"], serde_json::json!(["p1"]), "{r}");
    assert_eq!(r["changed"], serde_json::json!([]), "{r}");
    assert_eq!(r["unchanged"], 1, "{r}");
    let events = d.call(&Request::Events { follow: false })["events"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let p1: Vec<&str> = events[before..]
        .iter()
        .filter(|e| e["port"] == "p1")
        .filter_map(|e| e["event"].as_str())
        // The PFC counter reader reports on its own schedule (its first reading may
        // land here); the reload's own events are what is asserted.
        .filter(|e| *e != "pfc_counters")
        .collect();
    assert_eq!(p1, ["port_removed"], "{events:?}");
    // The CLI names it once.
    std::fs::write(&conf, both).unwrap();
    d.call(&Request::Reload);
    std::fs::write(&conf, "[ports.\"p0\"]\npfc = { priorities = [3] }\n").unwrap();
    let out = d.cli(&["reload"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("changed -; added -; removed p1; unchanged 1"),
        "{text}"
    );
    assert_eq!(
        d.log().matches("port removed port=p1").count(),
        2,
        "{}",
        d.log()
    );
}

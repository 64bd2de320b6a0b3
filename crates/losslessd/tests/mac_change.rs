#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The host's MAC changes under a running losslessd (`ip link set dev va address ..`):
//! its LLDP identity (Chassis and Port ID, the MAC by default) changes with it. The
//! peer, a second losslessd, must drop the old identity at once and negotiate with the
//! new one, not report "more than one neighbour" and then follow the stale one until
//! its TTL (120 s) runs out. tshark is the oracle for what went over the wire: the
//! shutdown LLDPDU (TTL 0) of the old identity, before the new identity's first
//! LLDPDU.

mod common;

use std::time::{Duration, Instant};

use common::*;
use lossless_node::protocol::Request;
use serde_json::{json, Value};

const OLD: &str = "02:00:00:00:00:0a";
const NEW: &str = "02:00:00:00:00:aa";
const MAC_B: &str = "02:00:00:00:00:0b";

/// A: not willing, PFC on 3 and 4, the default timers (every 30 s, TTL 120 s).
const CONFIG_A: &str = "[ports.\"va\"]\npfc = { willing = false, priorities = [3, 4] }\n";

fn chassis_ids(b: &Daemon) -> Vec<String> {
    let v = b.call(&Request::Neighbors {
        port: Some("vb".into()),
    });
    v["ports"][0]["neighbors"]
        .as_array()
        .map(|n| {
            n.iter()
                .map(|n| n["chassis_id"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn events(d: &Daemon) -> Vec<Value> {
    let v = d.call(&Request::Events { follow: false });
    v["events"].as_array().cloned().unwrap_or_default()
}

/// Fails on the old code: no shutdown for the old identity, and the peer held both
/// (`too_many_neighbors` for 30 s, then PFC from the stale one until 120 s).
#[test]
fn a_mac_change_retires_the_old_identity_and_the_peer_follows_at_once() {
    if !require(
        "a_mac_change_retires_the_old_identity_and_the_peer_follows_at_once",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        return;
    }
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", OLD, &nb, "vb", MAC_B);
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, CONFIG_A).unwrap();
    let _a = Daemon::start(
        &na,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
    );
    let b = Daemon::start(&nb, &dir.path().join("b"), &["--interface", "vb"]);
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    wait_for(Duration::from_secs(10), "B to agree with A", || {
        let v = b.dcbx("vb");
        (converged(&v) && chassis_ids(&b) == [OLD]).then_some(())
    });
    let before = events(&b).len();

    let pcap = dir.path().join("vb.pcap");
    let mut cap = lossless_testkit::Capture::start(&nb, "vb", "ether proto 0x88cc", &pcap);
    let t0 = Instant::now();
    na.ip(&["link", "set", "dev", "va", "address", NEW]);
    let took = wait_every(
        Duration::from_secs(10),
        Duration::from_millis(5),
        "B to hold A's new identity alone and agree with it",
        || {
            let v = b.dcbx("vb");
            (chassis_ids(&b) == [NEW] && converged(&v)).then(|| t0.elapsed())
        },
    );
    // The old code held both identities for 30 s (the wait above fails): how soon B
    // holds the new one alone is a figure, not a check.
    eprintln!("B on A's new identity alone {took:?} after the change");
    let since: Vec<Value> = events(&b).split_off(before);
    let removed = since
        .iter()
        .find(|e| e["event"] == "neighbor_removed")
        .unwrap_or_else(|| panic!("no neighbor_removed: {since:#?}"));
    assert_eq!(
        (removed["chassis_id"].as_str(), removed["why"].as_str()),
        (Some(OLD), Some("shutdown")),
        "{removed:#}"
    );
    assert!(
        !since
            .iter()
            .any(|e| e["event"] == "too_many_neighbors" && e["active"] == true),
        "{since:#?}"
    );
    // And it stays there (the old identity does not come back).
    let v = b.dcbx("vb");
    assert_eq!(v["ieee"]["pfc"]["oper"], json!([3, 4]), "{v:#}");

    // What went over the wire, as tshark reads it: the old identity's shutdown
    // (TTL 0, from the old MAC) once, before the new identity's first LLDPDU. B
    // has them all (it holds the new identity alone); `stop` lets libpcap hand
    // the capture its last block of them before it ends.
    cap.stop();
    let rows = lossless_testkit::tshark_fields(
        &pcap,
        &["-Y", &format!("eth.src == {OLD} || eth.src == {NEW}")],
        &[
            "eth.src",
            "lldp.chassis.id.mac",
            "lldp.time_to_live",
            "_ws.expert",
        ],
    );
    let rows: Vec<Vec<&str>> = rows
        .rows
        .iter()
        .map(|r| r.iter().map(String::as_str).collect())
        .collect();
    let shutdowns: Vec<usize> = (0..rows.len()).filter(|&i| rows[i][2] == "0").collect();
    assert_eq!(shutdowns.len(), 1, "{rows:?}");
    let s = shutdowns[0];
    assert_eq!(
        (rows[s][0], rows[s][1], rows[s][3]),
        (OLD, OLD, ""),
        "{rows:?}"
    );
    let first_new = rows
        .iter()
        .position(|r| r[1] == NEW)
        .unwrap_or_else(|| panic!("no LLDPDU of the new identity: {rows:?}"));
    assert!(
        s < first_new,
        "the shutdown after the new identity: {rows:?}"
    );
    assert_eq!(rows[first_new][0], NEW, "{rows:?}");
    assert_ne!(rows[first_new][2], "0", "{rows:?}");
}

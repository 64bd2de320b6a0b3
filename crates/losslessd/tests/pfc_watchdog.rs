#![allow(clippy::unwrap_used)]
//! The PFC storm watchdog on real interfaces: losslessd under lossless-testkit's
//! emulated DCB driver, whose IEEE PFC counters the test drives (a peer stuck pausing
//! priority 3). Checked on the driver's own state and log: the storm is detected within
//! the detection time and one reading interval, `forward` turns PFC off on priority 3
//! only (4 stays on), the delay allowance is kept, restoration puts PFC back exactly;
//! with `apply = "none"` the storm is reported and no request reaches the driver; on a
//! veth without a DCB driver the counters are reported unavailable, with why.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use lossless_node::protocol::Request;
use serde_json::Value;

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";
const DETECTION_MS: f64 = 200.0;
const RESTORATION_MS: f64 = 300.0;
const INTERVAL_MS: f64 = 100.0;
/// The test writes the counters every 10 ms, and the daemon runs on a shared
/// machine: what its event's time may lag behind the rule.
const SLACK_MS: f64 = 100.0;

const SWITCH: &str = r#"
[ports."va"]
dcbx.mode = "ieee"
pfc = { willing = false, priorities = [3, 4] }
"#;

fn host(apply: &str) -> String {
    format!(
        r#"
[ports."vb"]
apply = "{apply}"

[ports."vb".pfc_watchdog]
enabled = true
action = "forward"
priorities = [3]
detection_ms = {DETECTION_MS}
restoration_ms = {RESTORATION_MS}
interval_ms = {INTERVAL_MS}
"#
    )
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A stuck peer: priority 3's indications count up by 200 every 10 ms while `on`.
struct Stuck {
    on: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Stuck {
    fn start(shim: &ShimEnv) -> Stuck {
        let (on, stop) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let (on2, stop2) = (on.clone(), stop.clone());
        let dir = shim.dir().to_path_buf();
        let thread = std::thread::spawn(move || {
            let shim = ShimEnv::new(&dir, &["vb"]);
            let mut n = 1000u64;
            while !stop2.load(Ordering::SeqCst) {
                if on2.load(Ordering::SeqCst) {
                    n += 200;
                }
                let mut ind = [0u64; 8];
                ind[3] = n;
                ind[4] = 77;
                shim.set_pfc_counters("vb", [5; 8], ind);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Stuck {
            on,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Stuck {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The readings of vb's counters the host's daemon has taken (`pfc show`'s
/// `samples`).
fn samples(d: &Daemon) -> u64 {
    d.call(&Request::PfcShow {
        port: Some("vb".into()),
    })["ports"][0]["samples"]
        .as_u64()
        .unwrap_or(0)
}

/// Waits until the daemon has taken `n` more readings: what a negative check waits
/// for (no storm, nothing sent) instead of a fixed time.
fn wait_readings(d: &Daemon, n: u64) {
    let from = samples(d);
    wait_for(
        Duration::from_secs(5),
        "more readings of the counters",
        || (samples(d) >= from + n).then_some(()),
    );
}

fn events(d: &Daemon, kind: &str) -> Vec<Value> {
    let v = d.call(&Request::Events { follow: false });
    v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == kind)
        .cloned()
        .collect()
}

struct Pair {
    // Drop order: the daemons before the driver's directory.
    net: SwitchHost,
    shim: ShimEnv,
    dir: TempDir,
}

fn pair(apply: &str) -> Pair {
    let dir = TempDir::new();
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"]);
    // Quiet counters before the daemon's first reading.
    let mut ind = [0u64; 8];
    ind[3] = 1000;
    ind[4] = 77;
    shim.set_pfc_counters("vb", [5; 8], ind);
    let net = SwitchHost::start(dir.path(), SWITCH, &host(apply), &shim);
    Pair { net, shim, dir }
}

#[test]
fn a_storm_is_detected_forwarded_and_restored_on_the_driver() {
    if !lossless_testkit::require(
        "a_storm_is_detected_forwarded_and_restored_on_the_driver",
        lossless_testkit::oracle::EMULATED_DRIVER,
    ) {
        return;
    }
    let p = pair("dcbnl");
    let pfc_en = || p.shim.state("vb").map(|s| s.ieee_pfc_en());
    wait_for(Duration::from_secs(5), "PFC 3,4 programmed", || {
        (pfc_en() == Some(0x18)).then_some(())
    });
    let stuck = Stuck::start(&p.shim);
    // Three readings of quiet counters: more than the detection needs.
    wait_readings(&p.net.host, 3);
    assert!(
        events(&p.net.host, "pfc_storm").is_empty(),
        "no storm while quiet"
    );
    stuck.on.store(true, Ordering::SeqCst);
    let began = unix_now();
    wait_for(Duration::from_secs(3), "PFC off on 3 only", || {
        (pfc_en() == Some(0x10)).then_some(())
    });
    let storm = events(&p.net.host, "pfc_storm");
    assert_eq!(storm.len(), 1, "{storm:?}");
    let s = &storm[0];
    assert_eq!(
        (s["priority"].as_u64(), s["direction"].as_str()),
        (Some(3), Some("rx"))
    );
    assert_eq!(
        (s["action"].as_str(), s["pfc_off"].as_bool()),
        (Some("forward"), Some(true))
    );
    assert!(s["readings"].as_u64().unwrap() >= 2, "{s}");
    assert!(s["window_ms"].as_f64().unwrap() >= DETECTION_MS, "{s}");
    let latency = (s["time"].as_f64().unwrap() - began) * 1e3;
    assert!(
        latency <= DETECTION_MS + INTERVAL_MS + SLACK_MS,
        "detected {latency:.0} ms after the storm began: {s}"
    );
    let show = p.net.host.cli(&["pfc", "show", "vb"]);
    let text = String::from_utf8_lossy(&show.stdout);
    println!("$ lossless pfc show vb\n{text}");
    assert!(show.status.success(), "{text}");
    assert!(
        text.contains("storm rx") && text.contains("pfc-off"),
        "{text}"
    );
    let json = p.net.host.call(&Request::PfcShow { port: None });
    let prio3 = &json["ports"][0]["priorities"][3];
    assert_eq!(prio3["state"], "storm", "{json}");
    assert_eq!(
        (
            prio3["pfc"].as_bool(),
            json["ports"][0]["priorities"][4]["pfc"].as_bool()
        ),
        (Some(false), Some(true))
    );
    let status = p.net.host.call(&Request::Status);
    assert!(status.to_string().contains("\"pfc_storm\":[3]"), "{status}");
    // Unhealthy while it storms, with the reason, per port and for the daemon.
    let problem = "PFC storm on priority 3 (the peer keeps pausing it): PFC turned off on it \
                   by the watchdog until the storm is over";
    assert_eq!(status["healthy"], false, "{status}");
    assert_eq!(
        status["problems"],
        serde_json::json!([format!("vb: {problem}")]),
        "{status}"
    );
    assert_eq!(status["ports"][0]["problems"], serde_json::json!([problem]));
    let text = String::from_utf8_lossy(&p.net.host.cli(&["status"]).stdout).to_string();
    println!("$ lossless status\n{text}");
    assert!(text.contains("PFC storm on priority 3"), "{text}");

    stuck.on.store(false, Ordering::SeqCst);
    let quiet = unix_now();
    wait_for(Duration::from_secs(3), "PFC back on 3", || {
        (pfc_en() == Some(0x18)).then_some(())
    });
    let over = events(&p.net.host, "pfc_storm_over");
    for e in events(&p.net.host, "pfc_storm").iter().chain(&over) {
        println!("{e}");
    }
    assert_eq!(over.len(), 1, "{over:?}");
    let status = p.net.host.call(&Request::Status);
    assert_eq!(
        status["healthy"], true,
        "healthy again after the storm: {status}"
    );
    let o = &over[0];
    assert_eq!(
        (o["reason"].as_str(), o["pfc_restored"].as_bool()),
        (Some("quiet"), Some(true))
    );
    let after = (o["time"].as_f64().unwrap() - quiet) * 1e3;
    assert!(
        (RESTORATION_MS - SLACK_MS..=RESTORATION_MS + INTERVAL_MS + SLACK_MS).contains(&after),
        "restored {after:.0} ms after the peer went quiet: {o}"
    );
    // What the driver was told: PFC 0x18, 0x10, 0x18, each keeping the delay allowance.
    let sets: Vec<(String, String)> = p
        .shim
        .log()
        .iter()
        .filter_map(|e| {
            Some((
                e.field("pfc.en")?.to_string(),
                e.field("pfc.delay")?.to_string(),
            ))
        })
        .collect();
    let en: Vec<&str> = sets.iter().map(|(e, _)| e.as_str()).collect();
    let w = en
        .iter()
        .position(|e| *e == "0x10")
        .unwrap_or_else(|| panic!("{sets:?}"));
    assert_eq!(en[w - 1], "0x18", "{sets:?}");
    assert_eq!(en.last(), Some(&"0x18"), "{sets:?}");
    assert!(
        sets.iter().all(|(_, d)| *d == sets[0].1),
        "delay changed: {sets:?}"
    );
    drop(stuck);
    let _ = &p.dir;
}

#[test]
fn with_apply_none_a_storm_is_reported_and_nothing_reaches_the_driver() {
    if !lossless_testkit::require(
        "with_apply_none_a_storm_is_reported_and_nothing_reaches_the_driver",
        lossless_testkit::oracle::EMULATED_DRIVER,
    ) {
        return;
    }
    let p = pair("none");
    let stuck = Stuck::start(&p.shim);
    stuck.on.store(true, Ordering::SeqCst);
    let storm = wait_for(Duration::from_secs(3), "the storm event", || {
        events(&p.net.host, "pfc_storm").into_iter().next()
    });
    assert_eq!(storm["pfc_off"].as_bool(), Some(false), "{storm}");
    assert!(
        storm["note"]
            .as_str()
            .unwrap_or("")
            .contains("apply = \"none\""),
        "{storm}"
    );
    // Readings after the storm's: a request would have followed the one that found it.
    wait_readings(&p.net.host, 3);
    assert!(
        p.shim.log().is_empty(),
        "requests reached the driver:\n{}",
        p.shim.log_text()
    );
    let metrics = p.net.host.call(&Request::PfcShow {
        port: Some("vb".into()),
    });
    assert_eq!(metrics["ports"][0]["priorities"][3]["forced_off"], false);
}

#[test]
fn a_veth_without_a_dcb_driver_reports_the_counters_unavailable_and_why() {
    if !lossless_testkit::require(
        "a_veth_without_a_dcb_driver_reports_the_counters_unavailable",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let d = Daemon::start(&na, &dir.path().join("a"), &["--interface", "va"]);
    na.ip(&["link", "set", "va", "up"]);
    let v = wait_for(Duration::from_secs(5), "a reading", || {
        let v = d.call(&Request::PfcShow {
            port: Some("va".into()),
        });
        (v["ports"][0]["failures"].as_u64() >= Some(1)).then_some(v)
    });
    let p = &v["ports"][0];
    assert_eq!(p["available"], false, "{v}");
    let reason = p["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("dcbnl") && reason.contains("ethtool"),
        "{reason}"
    );
    let text = String::from_utf8_lossy(&d.cli(&["pfc", "show"]).stdout).to_string();
    assert!(text.contains("counters unavailable: dcbnl"), "{text}");
}

#[test]
fn counters_that_go_backwards_or_wrap_are_counted_and_never_a_storm() {
    if !lossless_testkit::require(
        "counters_that_go_backwards_or_wrap_are_counted_and_never_a_storm",
        lossless_testkit::oracle::EMULATED_DRIVER,
    ) {
        return;
    }
    let p = pair("none");
    let set = |v: u64| {
        let mut ind = [0u64; 8];
        ind[3] = v;
        ind[4] = 77;
        p.shim.set_pfc_counters("vb", [5; 8], ind);
    };
    let show = || {
        p.net.host.call(&Request::PfcShow {
            port: Some("vb".into()),
        })["ports"][0]
            .clone()
    };
    // A driver that keeps resetting its counter, for far longer than the detection
    // time: read naively (the difference of two readings), every reading would show
    // new pauses (1000 - 10, or 10 - 1000 wrapped to a huge number).
    // Each value read at least once before the next (two readings: one may have
    // begun before the value was set).
    for _ in 0..10 {
        set(10);
        wait_readings(&p.net.host, 2);
        set(1000);
        wait_readings(&p.net.host, 2);
    }
    // Quiet readings, so that the jump below is one rise on its own (after the last
    // 10 -> 1000, a jump on the next reading would be a second reading with new
    // pauses: a storm by the rule).
    wait_readings(&p.net.host, 3);
    // A 32-bit counter that passes its top once: 100 frames to the top, the top
    // itself (the counter goes through 0), 50 after.
    set(u64::from(u32::MAX) - 100);
    let rx_frames = |v: &serde_json::Value| v["priorities"][3]["rx_frames"].as_u64();
    let near_top = wait_for(Duration::from_secs(3), "a reading near the top", || {
        rx_frames(&show()).filter(|t| *t >= u64::from(u32::MAX) - 2000)
    });
    set(50);
    let v = wait_for(Duration::from_secs(3), "the wrap counted", || {
        let v = show();
        (v["discontinuities"]["wraps"].as_u64() == Some(1)).then_some(v)
    });
    wait_readings(&p.net.host, 3);
    assert!(
        events(&p.net.host, "pfc_storm").is_empty(),
        "a discontinuity was taken for a storm: {:?}",
        events(&p.net.host, "pfc_storm")
    );
    let resets = v["discontinuities"]["resets"].as_u64().unwrap_or(0);
    assert!(resets >= 3, "resets counted: {v}");
    let kinds: Vec<String> = events(&p.net.host, "pfc_counter_discontinuity")
        .iter()
        .filter(|e| e["counter"] == "rx_pause" && e["priority"] == 3)
        .map(|e| e["kind"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        kinds.contains(&"reset".to_string()) && kinds.contains(&"wrap".to_string()),
        "{kinds:?}"
    );
    // The totals never went down: the wrap added exactly what passed the top.
    assert_eq!(
        rx_frames(&v).map(|t| t - near_top),
        Some(100 + 1 + 50),
        "rx frames across the wrap: {v}"
    );
    assert_eq!(v["priorities"][3]["state"], "ok", "{v}");
    let status = p.net.host.call(&Request::Status);
    assert_eq!(status["healthy"], true, "{status}");
}

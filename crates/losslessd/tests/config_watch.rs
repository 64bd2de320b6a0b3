#![allow(clippy::unwrap_used)]
//! The configuration file watched, as a Kubernetes ConfigMap mounts it: the file a link
//! into `..data`, itself a link to a directory of the version, swapped atomically for a
//! new one. A new version reloads (as SIGHUP does); a broken one is refused, said in
//! `status` (the daemon's `config_refused`, a node health problem) and in the metrics,
//! and the configuration before it keeps running; the next good one clears it.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;

const LIMIT: Duration = Duration::from_secs(20);

/// Writes version `n` of the ConfigMap into `dir` and points `..data` at it with one
/// rename, as the kubelet does.
fn publish(dir: &Path, n: u32, text: &str) {
    let version = dir.join(format!("..v{n}"));
    std::fs::create_dir(&version).unwrap();
    std::fs::write(version.join("losslessd.toml"), text).unwrap();
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(format!("..v{n}"), &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("..data")).unwrap();
}

fn pfc_admin(d: &Daemon) -> Vec<u64> {
    d.dcbx("vb")["ieee"]["pfc"]["admin"]
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_u64).collect())
        .unwrap_or_default()
}

#[test]
fn a_configmap_update_reloads_and_a_broken_one_is_refused_and_said() {
    if !require(
        "a_configmap_update_reloads_and_a_broken_one_is_refused_and_said",
        &[lossless_testkit::Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let lossless_testkit::Pair { a: _na, b: nb, .. } = lossless_testkit::Pair::up();
    let map = dir.path().join("config");
    std::fs::create_dir(&map).unwrap();
    publish(&map, 1, "[ports.\"vb\"]\npfc.priorities = [3]\n");
    let file = map.join("losslessd.toml");
    std::os::unix::fs::symlink("..data/losslessd.toml", &file).unwrap();
    nb.ip(&["link", "set", "lo", "up"]);
    let addr = "127.0.0.1:9717";
    let d = Daemon::start(
        &nb,
        &dir.path().join("d"),
        &["--config", file.to_str().unwrap(), "--metrics", addr],
    );
    let refused = || metric_value(&scrape_metrics(&nb, addr), "lossless_config_refused");
    assert_eq!(refused(), Some(0.0));
    assert_eq!(pfc_admin(&d), [3]);

    // A new version: taken without a signal.
    publish(&map, 2, "[ports.\"vb\"]\npfc.priorities = [3, 4]\n");
    wait_for(LIMIT, "the new version running", || {
        (pfc_admin(&d) == [3, 4]).then_some(())
    });

    // A broken one: refused, said, the one before runs.
    publish(&map, 3, "[ports.\"vb\"]\npfc.priorities = [3, 9]\n");
    let status = wait_for(LIMIT, "the refusal said", || {
        let st = d.call(&Request::Status);
        st["daemon"]["config_refused"].is_string().then_some(st)
    });
    let why = status["daemon"]["config_refused"].as_str().unwrap();
    assert!(why.contains("pfc.priorities"), "{why}");
    assert_eq!(status["healthy"], false, "{status:#}");
    let problems: Vec<&str> = status["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("the configuration file was refused at its last reload (")),
        "{problems:?}"
    );
    assert_eq!(pfc_admin(&d), [3, 4]);
    let out = d.cli(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("config refused at the last reload, the one before it runs:"),
        "{text}"
    );
    assert_eq!(refused(), Some(1.0));

    // The next good one clears it.
    publish(&map, 4, "[ports.\"vb\"]\npfc.priorities = [4]\n");
    wait_for(LIMIT, "the good version running", || {
        let st = d.call(&Request::Status);
        (pfc_admin(&d) == [4] && st["daemon"].get("config_refused").is_none()).then_some(())
    });
    let st = d.call(&Request::Status);
    assert!(!st["problems"].to_string().contains("refused"), "{st:#}");
    assert_eq!(refused(), Some(0.0));
}

//! `lossless lab`: the README's main job. Runs the binary and reads its JSON.

use std::process::Command;

fn lab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("lab")
        .args(args)
        .output()
        .expect("run lossless");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn default_scenario_shows_the_willing_host_adopting_the_switch() {
    let (code, stdout, _) = lab(&["--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(v["scenario"], "willing");
    assert!(v["converged_at"].as_f64().expect("converged") < 0.001);
    let host = &v["agents"][1];
    assert_eq!(host["name"], "host");
    for f in ["pg", "pfc", "app"] {
        assert_eq!(host[f]["syncd"], true, "{f}");
        assert_eq!(host[f]["oper_mode"], true, "{f}");
        assert_eq!(host[f]["error"], false, "{f}");
        assert_eq!(host[f]["willing"], true, "{f}");
        assert_eq!(host[f]["peer_willing"], false, "{f}");
    }
    assert_eq!(host["pfc"]["oper"]["priorities"], serde_json::json!([3, 4]));
    assert_eq!(host["pfc"]["desired"]["priorities"], serde_json::json!([]));
    assert_eq!(
        host["pg"]["oper"]["pgid"],
        serde_json::json!([0, 0, 0, 1, 1, 1, 15, 2])
    );
    assert_eq!(
        host["pg"]["oper"]["percent"],
        serde_json::json!([25, 75, 0, 0, 0, 0, 0, 0])
    );
    let switch = &v["agents"][0];
    assert_eq!(switch["pfc"]["peer"]["priorities"], serde_json::json!([]));
    assert_eq!(switch["control"]["seq"], 1);
    assert!(v["timeline"].as_array().expect("timeline").len() > 4);
}

#[test]
fn human_report_has_timeline_and_final_state() {
    let (code, stdout, _) = lab(&[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("timeline"));
    assert!(stdout.contains("seq 1 ack 1"));
    assert!(stdout.contains("willing: running the peer's configuration"));
}

#[test]
fn every_listed_scenario_runs_and_mismatch_reports_errors() {
    let (code, list, _) = lab(&["--list"]);
    assert_eq!(code, 0);
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        let (code, stdout, stderr) = lab(&["--scenario", name, "--json"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        if name == "mismatch" {
            for a in v["agents"].as_array().expect("agents") {
                assert_eq!(a["pfc"]["error"], true);
                assert_eq!(a["pfc"]["oper_mode"], false);
                assert_eq!(a["pfc"]["reason"], "incompatible");
                assert_eq!(a["pg"]["oper_mode"], true, "PG is never compared");
            }
        }
    }
}

#[test]
fn unknown_scenario_is_a_usage_error() {
    let (code, _, stderr) = lab(&["--scenario", "nope"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("lossless: --scenario nope: unknown scenario"),
        "{stderr}"
    );
}

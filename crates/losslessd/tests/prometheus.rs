#![allow(clippy::unwrap_used)]
//! dist/prometheus/ and dist/grafana/ against promtool and a live losslessd:
//!
//! * the alerting and recording rules pass `promtool check rules` and their unit tests
//!   (`promtool test rules`), which cover every alert firing and not firing and every
//!   recording rule;
//! * on [`common::rig`]'s daemons (a PFC mismatch on va1: neither end willing, PFC on 3
//!   at one end and 4 at the other), `/metrics` passes `promtool check metrics`, carries
//!   the series operators graph (PFC per side and priority, DCBX events per port, LLDP
//!   neighbours), every metric the rules and the dashboard use is one the daemons
//!   export, every dashboard query parses, and the alerts evaluated by promtool on the
//!   scraped series fire exactly where the ports are wrong.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::rig::{Rig, RigOptions};
use common::*;
use lossless_testkit::{
    exposition_names, exposition_samples, promtool_check_metrics, promtool_run,
};
use yaml_rust2::{Yaml, YamlLoader};

fn dist() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist")
}

fn yaml(path: &Path) -> Yaml {
    let text = std::fs::read_to_string(path).unwrap();
    YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .remove(0)
}

/// Every rule of a rules file: (`alert` or `record` name, expr).
fn rules(path: &Path) -> Vec<(String, String)> {
    let doc = yaml(path);
    let mut out = Vec::new();
    for group in doc["groups"].as_vec().unwrap() {
        for rule in group["rules"].as_vec().unwrap() {
            let name = rule["alert"]
                .as_str()
                .or(rule["record"].as_str())
                .unwrap()
                .to_string();
            out.push((name, rule["expr"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// The `lossless_...` metric names in a PromQL expression (recording rules' names,
/// `lossless:` or `instance...:lossless_...:...`, are not metrics and not matched).
fn metric_names(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("lossless_") {
        let start = i + at;
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        let before = start.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(end);
        let part_of_word =
            before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':');
        if !part_of_word && after != Some(&b':') {
            names.insert(expr[start..end].to_string());
        }
        i = end;
    }
    names
}

#[test]
fn rules_pass_promtool_and_their_tests_cover_every_rule() {
    let test = "rules_pass_promtool_and_their_tests_cover_every_rule";
    let dir = dist().join("prometheus");
    if !lossless_testkit::require(test, &[lossless_testkit::Oracle::Promtool]) {
        return;
    }
    let checked = promtool_run(&dir, &["check", "rules", "alerts.yml", "recording.yml"])
        .unwrap_or_else(|e| panic!("promtool check rules:\n{e}"));
    assert!(checked.contains("SUCCESS: 20 rules found"), "{checked}");
    let tests = dir.join("tests");
    // fleet.test.yml: two hosts, one each side of a link, under one Prometheus.
    let ran = promtool_run(
        &tests,
        &[
            "test",
            "rules",
            "alerts.test.yml",
            "recording.test.yml",
            "fleet.test.yml",
        ],
    )
    .unwrap_or_else(|e| panic!("promtool test rules:\n{e}"));
    assert_eq!(ran.matches("SUCCESS").count(), 3, "{ran}");

    // Every alert has a case where it fires and one where it does not.
    let mut cases: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for t in yaml(&tests.join("alerts.test.yml"))["tests"]
        .as_vec()
        .unwrap()
    {
        for case in t["alert_rule_test"].as_vec().unwrap() {
            let name = case["alertname"].as_str().unwrap().to_string();
            let fired = !case["exp_alerts"].as_vec().unwrap().is_empty();
            let c = cases.entry(name).or_default();
            if fired {
                c.0 += 1;
            } else {
                c.1 += 1;
            }
        }
    }
    let alerts = rules(&dir.join("alerts.yml"));
    assert!(alerts.len() >= 6, "{alerts:?}");
    for (alert, _) in &alerts {
        let (fires, quiet) = cases.get(alert).copied().unwrap_or_default();
        assert!(
            fires > 0 && quiet > 0,
            "{alert}: {fires} firing and {quiet} silent cases in alerts.test.yml"
        );
    }
    // Every recording rule is evaluated by a test.
    let tested: BTreeSet<String> = yaml(&tests.join("recording.test.yml"))["tests"]
        .as_vec()
        .unwrap()
        .iter()
        .flat_map(|t| t["promql_expr_test"].as_vec().unwrap().clone())
        .map(|c| c["expr"].as_str().unwrap().trim().to_string())
        .collect();
    for (record, _) in rules(&dir.join("recording.yml")) {
        assert!(tested.contains(&record), "{record} has no promql_expr_test");
    }
}

/// The dashboard's queries: (panel title, expr), template variables replaced by what
/// Grafana would put there.
fn dashboard_queries() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dist().join("grafana/lossless.json")).unwrap();
    let d: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut out = Vec::new();
    for p in d["panels"].as_array().unwrap() {
        if p["type"] == "row" {
            continue;
        }
        let title = p["title"].as_str().unwrap().to_string();
        let targets = p["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "panel {title:?} has no query");
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        for t in targets {
            let expr = t["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "5m")
                .replace("$instance", ".*")
                .replace("$port", ".*");
            out.push((title.clone(), expr));
        }
    }
    for v in d["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            // label_values(SELECTOR, label): the selector is a query of its own.
            let selector = q
                .strip_prefix("label_values(")
                .and_then(|r| r.rsplit_once(','))
                .map(|(s, _)| s.replace("$instance", ".*"))
                .unwrap_or_else(|| panic!("variable query {q}"));
            out.push((format!("variable {}", v["name"]), selector));
        }
    }
    out
}

/// Each scraped sample as a promtool input series, constant for 20 minutes, with the
/// `instance` and `job` labels a scrape adds.
fn input_series(instance: &str, body: &str) -> String {
    let mut yaml = String::new();
    for (series, value) in exposition_samples(body) {
        let target = format!("instance=\"{instance}\",job=\"lossless\"");
        let series = match series.split_once('{') {
            Some((name, labels)) => format!("{name}{{{target},{labels}"),
            None => format!("{series}{{{target}}}"),
        };
        let values = vec![value.as_str(); 21].join(" ");
        yaml.push_str(&format!(
            "      - series: '{}'\n        values: '{values}'\n",
            series.replace('\'', "''")
        ));
    }
    yaml
}

#[test]
fn live_metrics_serve_the_dashboard_and_the_rules() {
    let test = "live_metrics_serve_the_dashboard_and_the_rules";
    if !lossless_testkit::require(test, &[lossless_testkit::Oracle::Netns])
        || !lossless_testkit::require(test, &[lossless_testkit::Oracle::Promtool])
    {
        return;
    }
    let rig = Rig::start(RigOptions {
        va1: "pfc = { priorities = [3], willing = false }",
        vb1: "pfc = { priorities = [4], willing = false }",
        shim: true,
        ..RigOptions::default()
    });
    rig.up();
    assert_eq!(rig.relay_frames(), 5);
    let h = Rig::scrape(&rig.nh);
    let p = Rig::scrape(&rig.np);
    for (who, body) in [("h", &h), ("p", &p)] {
        if let Err(e) = promtool_check_metrics(body) {
            panic!("promtool check metrics ({who}):\n{e}\n---\n{body}");
        }
    }

    // What operators graph, as the daemon sees it.
    for line in [
        // va1 runs PFC on 3; its peer, not willing, advertises 4.
        "lossless_pfc_enabled{port=\"va1\",side=\"admin\",priority=\"3\"} 1",
        "lossless_pfc_enabled{port=\"va1\",side=\"oper\",priority=\"3\"} 1",
        "lossless_pfc_enabled{port=\"va1\",side=\"oper\",priority=\"4\"} 0",
        "lossless_pfc_enabled{port=\"va1\",side=\"peer\",priority=\"3\"} 0",
        "lossless_pfc_enabled{port=\"va1\",side=\"peer\",priority=\"4\"} 1",
        "lossless_dcbx_peer_willing{port=\"va1\",feature=\"pfc\"} 0",
        // va0: PFC on 3, agreed with a willing peer.
        "lossless_pfc_enabled{port=\"va0\",side=\"peer\",priority=\"3\"} 1",
        "lossless_dcbx_peer_willing{port=\"va0\",feature=\"pfc\"} 1",
        "lossless_lldp_neighbors{port=\"va0\"} 1",
        "lossless_lldp_neighbors{port=\"va1\"} 1",
        "lossless_dcbx_active{port=\"va0\"} 1",
        "lossless_hardware_apply{port=\"va0\",mode=\"dcbnl\"} 1",
    ] {
        assert!(h.contains(line), "{line:?} missing:\n{h}");
    }
    let sample = |body: &str, key: &str| -> f64 {
        exposition_samples(body)
            .into_iter()
            .find(|(s, _)| s == key)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or_else(|| panic!("{key} missing"))
    };
    assert!(
        sample(
            &h,
            "lossless_dcbx_events_total{port=\"va0\",kind=\"syncd\"}"
        ) >= 1.0
    );
    let need = sample(&h, "lossless_headroom_need_bytes{port=\"va0\"}");
    let held = sample(&h, "lossless_headroom_bytes{port=\"va0\"}");
    let buffer = sample(
        &h,
        "lossless_headroom_buffer_bytes{port=\"va0\",buffer=\"1\"}",
    );
    assert!(
        need > 0.0 && need <= held && held <= buffer,
        "{need} {held} {buffer}"
    );

    // Every metric the rules and the dashboard use is exported: by these daemons, or
    // (exported only where this rig is not) by the test that says so.
    let elsewhere = [(
        "lossless_metrics_tls_certificate_not_after_seconds",
        "metrics_fleet.rs", // only behind TLS
    )];
    for (name, test) in elsewhere {
        let text = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join(test),
        )
        .unwrap();
        assert!(text.contains(name), "{test} does not check {name}");
    }
    let exported: BTreeSet<String> = exposition_names(&h)
        .into_iter()
        .chain(exposition_names(&p))
        .chain(elsewhere.iter().map(|(n, _)| n.to_string()))
        .collect();
    let mut used = Vec::new();
    for file in ["alerts.yml", "recording.yml"] {
        for (name, expr) in rules(&dist().join("prometheus").join(file)) {
            used.push((format!("{file}: {name}"), expr));
        }
    }
    let queries = dashboard_queries();
    assert!(queries.len() >= 30, "{}", queries.len());
    used.extend(queries.iter().cloned());
    for (what, expr) in &used {
        let names = metric_names(expr);
        assert!(!names.is_empty(), "{what}: no lossless metric in {expr}");
        let missing: Vec<&String> = names.difference(&exported).collect();
        assert!(
            missing.is_empty(),
            "{what}: {missing:?} not exported by losslessd (in {expr})"
        );
    }

    // Every dashboard query parses: promtool checks them as recording rules.
    let dir = TempDir::new();
    let mut file = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, (_, expr)) in queries.iter().enumerate() {
        file.push_str(&format!(
            "      - record: dashboard:query_{i}\n        expr: {}\n",
            serde_json::to_string(expr).unwrap()
        ));
    }
    std::fs::write(dir.path().join("dashboard.yml"), &file).unwrap();
    promtool_run(dir.path(), &["check", "rules", "dashboard.yml"])
        .unwrap_or_else(|e| panic!("dashboard queries:\n{e}\n{file}"));

    // The alerts on the live series: exactly va1's PFC (on h) and vb1's (on p).
    let alerts = dist().join("prometheus/alerts.yml");
    let test_file = format!(
        "rule_files:\n  - {}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n{}{}\
         \x20   promql_expr_test:\n      - expr: count by (instance, alertname, port) (ALERTS{{alertstate=\"firing\"}})\n\
         \x20       eval_time: 10m\n        exp_samples:\n{}",
        alerts.display(),
        input_series("h", &h),
        input_series("p", &p),
        [("h", "va1"), ("p", "vb1")]
            .iter()
            .flat_map(|(instance, port)| {
                ["LosslessDcbxError", "LosslessDcbxNotSynced", "LosslessPfcMismatch"]
                    .map(|alert| {
                        format!(
                            "          - labels: '{{instance=\"{instance}\",alertname=\"{alert}\",port=\"{port}\"}}'\n            value: 1\n"
                        )
                    })
            })
            .collect::<String>()
    );
    std::fs::write(dir.path().join("live.test.yml"), &test_file).unwrap();
    promtool_run(dir.path(), &["test", "rules", "live.test.yml"])
        .unwrap_or_else(|e| panic!("the alerts on the live series:\n{e}"));
}

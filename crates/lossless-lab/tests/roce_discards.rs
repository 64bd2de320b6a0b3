//! The `roce-discards` scenario on the virtual clock: a ConnectX host whose buffer on
//! PFC priority 3 overflows at 120 s. The drops and retransmissions show in the host's
//! metrics as they rise (promtool checks the text), in `pfc show`, and
//! dist/prometheus's alert rules, evaluated by promtool on the scraped series, fire:
//! drops on the PFC priority at once, retransmissions rising after their 10 minutes;
//! ECN marks answered with CNPs never.

use std::collections::BTreeMap;
use std::path::Path;

use lossless_lab::scenario::roce_discards::{
    simulate, DROP_RATE, OUT_OF_SEQUENCE_RATE, OVERFLOW_AT, PRIORITY, SCRAPE, SEQ_ERR_RATE,
};
use lossless_testkit::{exposition_samples, promtool_check_metrics, promtool_run, TempDir};

#[test]
fn drops_on_the_pfc_priority_rise_in_the_metrics_and_fire_the_alert() {
    let (_, _, converged, run) = simulate(1);
    assert!(converged.is_some(), "the host ran the switch's PFC");
    assert_eq!(run.scrapes.len(), 21);
    for pair in run.scrapes.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        if b.at <= OVERFLOW_AT {
            assert_eq!((b.discards, b.retransmissions), (0, 0), "{b:?}");
        } else {
            // Exactly what the NIC dropped and the RDMA device counted in a minute.
            assert_eq!(
                b.discards - a.discards,
                (DROP_RATE * SCRAPE) as u64,
                "{b:?}"
            );
            assert_eq!(
                b.retransmissions - a.retransmissions,
                ((OUT_OF_SEQUENCE_RATE + SEQ_ERR_RATE) * SCRAPE) as u64,
                "{b:?}"
            );
        }
        assert!(
            b.ecn_marked > a.ecn_marked && b.cnp_sent > a.cnp_sent,
            "{b:?}"
        );
    }
    let last = run.scrapes.last().expect("scrapes");
    assert!(last.text.contains(&format!(
        "lossless_priority_discards_total{{port=\"p0\",priority=\"{PRIORITY}\",kind=\"no_buffer\"}} {}",
        last.discards
    )));
    assert!(last
        .text
        .contains("lossless_roce_counters_available{port=\"p0\",device=\"mlx5_0\"} 1"));

    // pfc show: the drops on 3 only, PFC on there, the RDMA device's counters.
    let v = &run.pfc_show;
    let p3 = &v.priorities[usize::from(PRIORITY)];
    assert!(p3.pfc);
    assert_eq!(p3.discards_total(), Some(last.discards));
    assert!(
        p3.discard_rate()
            .is_some_and(|r| (r - DROP_RATE).abs() < 1.0),
        "{p3:?}"
    );
    for p in v.priorities.iter().filter(|p| p.priority != PRIORITY) {
        assert_eq!(p.discards_total(), Some(0), "{p:?}");
    }
    let roce = v.roce.as_ref().expect("the RDMA device's counters");
    assert_eq!(roce.device.as_deref(), Some("mlx5_0"));
    assert_eq!(roce.counters.len(), 13);

    if !lossless_testkit::require(
        "drops_on_the_pfc_priority_rise_in_the_metrics_and_fire_the_alert",
        &[lossless_testkit::Oracle::Promtool],
    ) {
        return;
    }
    if let Err(e) = promtool_check_metrics(&last.text) {
        panic!("promtool check metrics:\n{e}\n---\n{}", last.text);
    }

    // Every series over the scrapes, one a minute.
    let mut series: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (i, sc) in run.scrapes.iter().enumerate() {
        for (s, v) in exposition_samples(&sc.text) {
            let values = series.entry(s).or_default();
            values.resize(i, "_".to_string());
            values.push(v);
        }
    }
    let mut input = String::new();
    for (s, mut values) in series {
        values.resize(run.scrapes.len(), "_".to_string());
        let labelled = match s.split_once('{') {
            Some((name, labels)) => format!("{name}{{instance=\"lab\",job=\"lossless\",{labels}"),
            None => format!("{s}{{instance=\"lab\",job=\"lossless\"}}"),
        };
        input.push_str(&format!(
            "      - series: '{}'\n        values: '{}'\n",
            labelled.replace('\'', "''"),
            values.join(" ")
        ));
    }
    let firing = |at: &str, alerts: &[&str]| {
        let mut t = format!(
            "      - expr: count by (instance, alertname, port) (ALERTS{{alertstate=\"firing\"}})\n        eval_time: {at}\n        exp_samples:"
        );
        if alerts.is_empty() {
            t.push_str(" []\n");
        } else {
            t.push('\n');
            for a in alerts {
                t.push_str(&format!(
                    "          - labels: '{{instance=\"lab\",alertname=\"{a}\",port=\"p0\"}}'\n            value: 1\n"
                ));
            }
        }
        t
    };
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/prometheus/alerts.yml");
    let file = format!(
        "rule_files:\n  - {}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n{input}    promql_expr_test:\n{}{}{}{}",
        rules.display(),
        firing("2m", &[]),
        firing("4m", &["LosslessPfcPriorityDiscards"]),
        firing("10m", &["LosslessPfcPriorityDiscards"]),
        firing(
            "15m",
            &["LosslessPfcPriorityDiscards", "LosslessRoceRetransmissionsRising"]
        ),
    );
    let dir = TempDir::new();
    std::fs::write(dir.path().join("lab.test.yml"), &file).expect("write");
    promtool_run(dir.path(), &["test", "rules", "lab.test.yml"])
        .unwrap_or_else(|e| panic!("the alerts on the lab's series:\n{e}"));
}

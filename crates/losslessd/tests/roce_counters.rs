#![allow(clippy::unwrap_used)]
//! The RoCE and congestion counters on the PFC counters' thread:
//!
//! - losslessd on lossless-testkit's emulated ConnectX host (the RDMA device's
//!   `hw_counters` laid as mlx5_ib lays them, found through `--sysfs ROOT`; mlx5's
//!   ethtool statistics answered by the emulated driver): the drops on a priority and
//!   the RDMA device's CNP, ECN and retransmission counters show in `lossless pfc show`
//!   and in /metrics as they move (promtool checks the text), and the alert rules of
//!   dist/prometheus/, evaluated by promtool on the scraped series, fire exactly where
//!   the counters say: drops on the PFC priority, ECN marks with no CNP sent;
//! - each emulated driver's statistics, as Debian's ethtool lists them, are classified
//!   as the driver's source means them (the PFC pauses of ice, i40e, bnxt and hns3,
//!   mlx5's drops per priority).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use common::*;
use lossless_node::pfc::names::{classify, PfcStat};
use lossless_node::pfc::Counter;
use lossless_node::protocol::Request;
use lossless_testkit::oracle::ETHTOOL_TOOL;
use lossless_testkit::sysfs::{HostTree, Port};
use lossless_testkit::{
    dcb_tool, ethtool_tool, exposition_samples, output_text, promtool_run, Model, Pair,
};
use serde_json::Value;

const METRICS: &str = "127.0.0.1:9719";
const LIMIT: Duration = Duration::from_secs(10);

/// `pfc show vb` once `done` holds.
fn shown(net: &SwitchHost, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    wait_for(LIMIT, what, || {
        let v = net.host.call(&Request::PfcShow {
            port: Some("vb".into()),
        })["ports"][0]
            .clone();
        done(&v).then_some(v)
    })
}

fn discards(v: &Value, priority: usize, kind: &str) -> Option<u64> {
    v["priorities"][priority]["discards"]
        .as_array()?
        .iter()
        .find(|d| d["kind"] == kind)?["total"]
        .as_u64()
}

fn roce_total(v: &Value, name: &str) -> Option<u64> {
    v["roce"]["counters"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)?["total"]
        .as_u64()
}

/// Each scraped sample as a promtool input series: `before` for minutes 0..=4,
/// `after` from minute 5 to 25, with the labels a scrape adds.
fn two_scrapes(before: &str, after: &str) -> String {
    let before: BTreeMap<String, String> = exposition_samples(before).into_iter().collect();
    let mut yaml = String::new();
    for (series, value) in exposition_samples(after) {
        let Some(was) = before.get(&series) else {
            continue;
        };
        let labelled = match series.split_once('{') {
            Some((name, labels)) => format!("{name}{{instance=\"h\",job=\"lossless\",{labels}"),
            None => format!("{series}{{instance=\"h\",job=\"lossless\"}}"),
        };
        let values = [vec![was.as_str(); 5], vec![value.as_str(); 21]]
            .concat()
            .join(" ");
        yaml.push_str(&format!(
            "      - series: '{}'\n        values: '{values}'\n",
            labelled.replace('\'', "''")
        ));
    }
    yaml
}

#[test]
fn drops_cnps_ecn_marks_and_retransmissions_show_as_they_move_and_fire_the_alerts() {
    let test = "drops_cnps_ecn_marks_and_retransmissions_show_as_they_move_and_fire_the_alerts";
    if !require(test, EMULATED_DRIVER) || !require(test, &[Oracle::Promtool]) {
        return;
    }
    let dir = TempDir::new();
    let tree = HostTree::new(&[Port::new("vb", Model::Mlx5, "0000:41:00.0")
        .ofed()
        .ibdev("mlx5_0")])
    .unwrap();
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"])
        .model(Model::Mlx5)
        .sysfs(tree.root());
    let root = tree.root().to_str().unwrap().to_string();
    let net = SwitchHost::start_args(
        dir.path(),
        IEEE_SWITCH,
        &roce_profile_with_host("vb", ""),
        &shim,
        &["--sysfs", &root, "--metrics", METRICS],
    );
    // Power-on: every counter 0, the device named, mlx5's three kinds of drop on
    // every priority.
    let v = shown(&net, "the RDMA counters", |v| {
        v["roce"]["counters"]
            .as_array()
            .is_some_and(|c| c.len() == 13)
            && discards(v, 3, "no_buffer").is_some()
    });
    assert_eq!(v["roce"]["device"], "mlx5_0", "{v:#}");
    assert_eq!(v["roce"]["rdma_port"], 1, "{v:#}");
    assert_eq!(v["priorities"][3]["pfc"], true, "{v:#}");
    for p in 0..8 {
        for kind in ["no_buffer", "host_buffer", "host_congestion"] {
            assert_eq!(discards(&v, p, kind), Some(0), "{p} {kind}: {v:#}");
        }
    }
    // The emulated ConnectX resets its link when programmed: the peer is back first.
    wait_for(
        Duration::from_secs(40),
        "the peer back after the link reset",
        || converged(&net.host.dcbx("vb")).then_some(()),
    );
    let before = scrape_metrics(&net.nb, METRICS);

    // The switch marks, the host sends no CNP; priority 3 overflows; packets are lost
    // and sent again.
    shim.set_stat("vb", "rx_prio3_discards", 5);
    shim.set_stat("vb", "rx_prio3_cong_discard", 2);
    for (name, value) in [
        ("np_ecn_marked_roce_packets", 1000),
        ("out_of_sequence", 3),
        ("local_ack_timeout_err", 2),
        ("rp_cnp_handled", 40),
    ] {
        tree.set_counter("mlx5_0", name, value).unwrap();
    }
    let v = shown(&net, "the counters moved", |v| {
        discards(v, 3, "no_buffer") == Some(5)
            && discards(v, 3, "host_congestion") == Some(2)
            && roce_total(v, "np_ecn_marked_roce_packets") == Some(1000)
            && roce_total(v, "out_of_sequence") == Some(3)
            && roce_total(v, "local_ack_timeout_err") == Some(2)
            && roce_total(v, "rp_cnp_handled") == Some(40)
    });
    assert_eq!(roce_total(&v, "np_cnp_sent"), Some(0), "{v:#}");
    assert_eq!(discards(&v, 4, "no_buffer"), Some(0), "{v:#}");
    let show = net.host.cli(&["pfc", "show", "vb"]);
    let text = String::from_utf8_lossy(&show.stdout);
    println!("$ lossless pfc show vb\n{text}");
    assert!(show.status.success(), "{text}");
    let row = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start:?} row:\n{text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("3 ")[..2], ["3", "on"], "{text}");
    assert_eq!(row("3 ")[10], "7", "drops of every kind on 3: {text}");
    assert_eq!(row("4 ")[10], "0", "{text}");
    assert!(
        text.contains("vb: RoCE counters of mlx5_0 port 1 (hw_counters)"),
        "{text}"
    );
    assert_eq!(
        row("ecn_marked")[1..3],
        ["np_ecn_marked_roce_packets", "1000"]
    );
    assert_eq!(row("cnp_sent")[1..3], ["np_cnp_sent", "0"]);
    assert_eq!(
        row("retransmission (out_of_sequence)")[2..4],
        ["out_of_sequence", "3"]
    );

    let after = scrape_metrics(&net.nb, METRICS);
    println!(
        "$ curl -s {METRICS}/metrics | grep -E '^lossless_(roce_(cnp|ecn|retrans|counters)|priority_discards)' | grep -v ' 0$'"
    );
    let ours = [
        "lossless_roce_cnp_",
        "lossless_roce_ecn_",
        "lossless_roce_retransmissions_",
        "lossless_roce_counters_available",
        "lossless_priority_discards_",
    ];
    for l in after
        .lines()
        .filter(|l| ours.iter().any(|m| l.starts_with(m)) && !l.ends_with(" 0"))
    {
        println!("{l}");
    }
    if let Err(e) = promtool_check_metrics(&after) {
        panic!("promtool check metrics:\n{e}\n---\n{after}");
    }
    for (series, want) in [
        (
            "lossless_priority_discards_total{port=\"vb\",priority=\"3\",kind=\"no_buffer\"}",
            5.0,
        ),
        (
            "lossless_priority_discards_total{port=\"vb\",priority=\"3\",kind=\"host_congestion\"}",
            2.0,
        ),
        (
            "lossless_priority_discards_total{port=\"vb\",priority=\"3\",kind=\"host_buffer\"}",
            0.0,
        ),
        (
            "lossless_roce_ecn_marked_total{port=\"vb\",counter=\"np_ecn_marked_roce_packets\"}",
            1000.0,
        ),
        (
            "lossless_roce_cnp_sent_total{port=\"vb\",counter=\"np_cnp_sent\"}",
            0.0,
        ),
        (
            "lossless_roce_cnp_handled_total{port=\"vb\",counter=\"rp_cnp_handled\"}",
            40.0,
        ),
        (
            "lossless_roce_retransmissions_total{port=\"vb\",reason=\"out_of_sequence\",counter=\"out_of_sequence\"}",
            3.0,
        ),
        (
            "lossless_roce_retransmissions_total{port=\"vb\",reason=\"ack_timeout\",counter=\"local_ack_timeout_err\"}",
            2.0,
        ),
        (
            "lossless_roce_counters_available{port=\"vb\",device=\"mlx5_0\"}",
            1.0,
        ),
    ] {
        assert_eq!(metric(&after, series), want, "{series}");
    }

    // They keep moving: the metrics follow.
    shim.set_stat("vb", "rx_prio3_discards", 12);
    tree.set_counter("mlx5_0", "out_of_sequence", 9).unwrap();
    wait_for(LIMIT, "the metrics follow", || {
        let m = scrape_metrics(&net.nb, METRICS);
        (metric_value(
            &m,
            "lossless_priority_discards_total{port=\"vb\",priority=\"3\",kind=\"no_buffer\"}",
        ) == Some(12.0)
            && metric_value(
                &m,
                "lossless_roce_retransmissions_total{port=\"vb\",reason=\"out_of_sequence\",counter=\"out_of_sequence\"}",
            ) == Some(9.0))
        .then_some(())
    });

    // The rules on these series: the scrape before for five minutes, the one after
    // from then on. The drops on PFC priority 3 fire at once, for the five minutes
    // they are in the window; the ECN marks without a CNP after five minutes, while
    // the marks are in their ten; nothing else ever.
    let rules = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dist/prometheus/alerts.yml");
    let firing = |at: &str, alert: &str| {
        format!(
            "      - expr: count by (instance, alertname, port) (ALERTS{{alertstate=\"firing\"}})\n\
             \x20       eval_time: {at}\n        exp_samples:\n\
             \x20         - labels: '{{instance=\"h\",alertname=\"{alert}\",port=\"vb\"}}'\n            value: 1\n"
        )
    };
    let expected =
        firing("8m", "LosslessPfcPriorityDiscards") + &firing("12m", "LosslessRoceEcnWithoutCnp");
    let file = format!(
        "rule_files:\n  - {}\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n{}\
         \x20   promql_expr_test:\n      - expr: count by (instance, alertname, port) (ALERTS{{alertstate=\"firing\"}})\n\
         \x20       eval_time: 4m\n        exp_samples: []\n\
         {expected}\
         \x20     - expr: count by (instance, alertname, port) (ALERTS{{alertstate=\"firing\"}})\n\
         \x20       eval_time: 25m\n        exp_samples: []\n\
         \x20     - expr: ALERTS{{alertname=\"LosslessPfcPriorityDiscards\",alertstate=\"firing\"}}\n\
         \x20       eval_time: 6m\n        exp_samples:\n\
         \x20         - labels: '{{__name__=\"ALERTS\",alertname=\"LosslessPfcPriorityDiscards\",alertstate=\"firing\",instance=\"h\",job=\"lossless\",port=\"vb\",priority=\"3\",severity=\"critical\"}}'\n\
         \x20           value: 1\n",
        rules.display(),
        two_scrapes(&before, &after),
    );
    std::fs::write(dir.path().join("live.test.yml"), &file).unwrap();
    promtool_run(dir.path(), &["test", "rules", "live.test.yml"])
        .unwrap_or_else(|e| panic!("the alerts on the live series:\n{e}\n{file}"));
}

/// What `ethtool -S` lists, by name.
fn ethtool_names(out: &str) -> Vec<String> {
    out.lines()
        .skip_while(|l| !l.starts_with("NIC statistics:"))
        .skip(1)
        .filter_map(|l| l.trim().split_once(": ").map(|(n, _)| n.to_string()))
        .collect()
}

#[test]
fn each_drivers_statistics_are_read_as_its_source_means_them() {
    let test = "each_drivers_statistics_are_read_as_its_source_means_them";
    if !require(test, ETHTOOL_TOOL) || !require(test, &[Oracle::Dcb]) {
        return;
    }
    use Counter::*;
    let all = |cs: &[Counter]| -> BTreeSet<(Counter, u8)> {
        cs.iter()
            .flat_map(|c| (0..8).map(move |p| (*c, p)))
            .collect()
    };
    let pauses = all(&[RxPause, TxPause]);
    let mut bnxt = all(&[
        RxPause,
        TxPause,
        RxPauseDuration,
        TxPauseDuration,
        RxPauseTransitions,
        TxPauseTransitions,
    ]);
    let mlx5 = all(&[RxDiscards, RxHostBufferDiscards, RxHostCongestionDiscards]);
    let mut mlx5_pfc3 = mlx5.clone();
    for c in [
        RxPause,
        TxPause,
        RxPauseDuration,
        TxPauseDuration,
        RxPauseTransitions,
    ] {
        mlx5_pfc3.insert((c, 3));
    }
    // (model, PFC on 3, the counters its names are, whether it has a storm counter)
    type Case = (Model, bool, BTreeSet<(Counter, u8)>, bool);
    let cases: [Case; 8] = [
        (Model::Mlx5, false, mlx5, true),
        (Model::Mlx5, true, mlx5_pfc3, true),
        (Model::Ice, false, pauses.clone(), false),
        (Model::I40e, false, pauses.clone(), false),
        (Model::Bnxt, false, std::mem::take(&mut bnxt), false),
        (Model::Hns3, false, pauses.clone(), false),
        (Model::Ixgbe, false, pauses, false),
        (Model::Generic, false, BTreeSet::new(), false),
    ];
    for (model, pfc3, want, storm) in cases {
        let tmp = TempDir::new();
        let shim = ShimEnv::new(&tmp.path().join("driver"), &["va"]).model(model);
        let p = Pair::up();
        if pfc3 {
            let o = dcb_tool(
                &p.a,
                &shim,
                &["pfc", "set", "dev", "va", "prio-pfc", "3:on"],
            );
            assert!(o.status.success(), "{}", output_text(&o));
        }
        let o = ethtool_tool(&p.a, &shim, &["-S", "va"]);
        assert!(o.status.success(), "{model}: {}", output_text(&o));
        let names = ethtool_names(&String::from_utf8_lossy(&o.stdout));
        assert!(!names.is_empty(), "{model}: {}", output_text(&o));
        let mut got = BTreeSet::new();
        let mut storms = 0;
        for n in &names {
            match classify(n) {
                Some(PfcStat::Counter(c, p)) => {
                    assert!(got.insert((c, p)), "{model}: {c:?} {p} twice ({n})");
                }
                Some(PfcStat::Storm) => storms += 1,
                None => {}
            }
        }
        assert_eq!(got, want, "{model} (PFC on 3: {pfc3}): {names:?}");
        assert_eq!(storms, usize::from(storm), "{model}");
    }
}

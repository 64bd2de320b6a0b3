//! The differential tester, bounded: generated fabrics, partitions, policies and opensm.conf
//! settings run on the real OpenSM + ibsim, every PathRecord asked and every port table read
//! back compared with ours, until 4,000 answers and tables are compared (seed 1, under a
//! minute). Longer runs and other seeds: `cargo run --release -p lossless-policy --example
//! difftest -- --seed N --cases N` (docs/policy.md).
//!
//! The test also checks that the tester finds a disagreement when there is one: a case whose
//! opensm.conf we read differently (its subnet_timeout removed from our copy) must give
//! `path pkt_life` disagreements.

mod harness;

use harness::difftest::run;
use harness::gen::Case;

#[test]
fn generated_cases_equal_opensm() {
    if !lossless_testkit::opensm_available("generated_cases_equal_opensm") {
        return;
    }
    let report = run(1, 4000, 2);
    eprint!("{}", report.summary());
    assert!(report.errors.is_empty(), "{}", report.summary());
    assert!(report.compared >= 4000, "{}", report.summary());
    assert_eq!(report.unexplained(), 0, "{}", report.summary());
}

#[test]
fn tester_sees_a_planted_difference() {
    if !lossless_testkit::opensm_available("tester_sees_a_planted_difference") {
        return;
    }
    let mut case = Case::generate(7);
    case.conf.retain(|l| !l.starts_with("subnet_timeout"));
    case.conf.push("subnet_timeout 5".into());
    case.tables = false;
    let mut s = case.scenario();
    // OpenSM runs with subnet_timeout 5; we are told 18 (OpenSM's default).
    let theirs = s.opensm_conf.clone();
    s.opensm_conf = theirs.replace("subnet_timeout 5", "");
    let planted = harness::Scenario {
        opensm_conf: theirs,
        ..s.clone()
    };
    let obs = harness::observe(&planted).expect("OpenSM runs");
    let (_, d) = harness::compare(&s, &obs).expect("ours loads");
    assert!(
        d.iter().any(|x| x.class.starts_with("path pkt_life")),
        "no packet-life disagreement found: {d:?}"
    );
}

//! The differential tester, bounded: generated fabrics, partitions, policies and opensm.conf
//! settings run on the real OpenSM + ibsim (on every kind of node: the SM's port is `SELF`
//! and the default partition's full member), every PathRecord asked and every port table read
//! back compared with ours, until 4,000 answers and tables are compared (seed 1, under a
//! minute). Longer runs and other seeds: `cargo run --release -p lossless-policy --example
//! difftest -- --seed N --cases N` (docs/policy.md).
//!
//! The tests also check that the tester finds a disagreement when there is one, and that the
//! minimiser shrinks it: a case whose opensm.conf we are given differently (its
//! subnet_timeout removed from our copy) must give `path pkt_life` disagreements.

mod harness;

use harness::difftest::{run, run_scenario};
use harness::gen::Case;
use harness::minimise::minimise;

#[test]
fn generated_cases_equal_opensm() {
    if !lossless_testkit::require(
        "generated_cases_equal_opensm",
        &[lossless_testkit::Oracle::OpenSm],
    ) {
        return;
    }
    let report = run(1, 4000, 2);
    eprint!("{}", report.summary());
    assert!(report.errors.is_empty(), "{}", report.summary());
    assert!(report.compared >= 4000, "{}", report.summary());
    assert_eq!(report.unexplained(), 0, "{}", report.summary());
    // The SM ran on every kind of node, named where it is not the first (OpenSM under
    // SIM_HOST, we given --sm), and every answer still agreed.
    for kind in [
        "CA (not first, named)",
        "switch, enhanced port 0 (not first, named)",
        "switch, base port 0 (not first, named)",
        "router (not first, named)",
        "CA (first node, assumed)",
    ] {
        assert!(
            report.by_sm.contains_key(kind),
            "no fabric with the SM on a {kind}:\n{}",
            report.summary()
        );
    }
}

/// A difference planted on our side (we are told another subnet_timeout than OpenSM runs
/// with) is found, classed, and shrunk by the minimiser to a smaller case that still shows
/// it, written as a scenario directory that loads back.
#[test]
fn tester_finds_and_shrinks_a_planted_difference() {
    if !lossless_testkit::require(
        "tester_finds_and_shrinks_a_planted_difference",
        &[lossless_testkit::Oracle::OpenSm],
    ) {
        return;
    }
    let mut case = Case::generate(7);
    case.conf.retain(|l| !l.starts_with("subnet_timeout"));
    case.conf.push("subnet_timeout 5".into());
    let mut ours = case.conf.clone();
    ours.retain(|l| l != "subnet_timeout 5");
    case.plant = Some(ours);
    let out = run_scenario(&case.scenario()).expect("OpenSM runs");
    let d = out
        .disagreements
        .iter()
        .find(|x| x.class.starts_with("path pkt_life"))
        .unwrap_or_else(|| panic!("no packet-life disagreement: {:?}", out.disagreements))
        .clone();
    let (small, d2) = minimise(&case, &d, 60);
    assert_eq!(d2.class, d.class);
    assert!(
        small.nodes.len() < case.nodes.len() && small.only.len() == 1,
        "not shrunk: {} nodes of {}, {} pairs",
        small.nodes.len(),
        case.nodes.len(),
        small.only.len()
    );
    let dir = lossless_testkit::TempDir::new();
    let s = small.scenario();
    s.write(dir.path()).expect("write");
    let back = harness::Scenario::load(dir.path()).expect("reads back");
    assert_eq!(
        (back.net, back.optsets, back.only),
        (s.net, s.optsets, s.only)
    );
}

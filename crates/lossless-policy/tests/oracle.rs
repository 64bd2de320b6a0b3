//! Equivalence with the real OpenSM: ibsim simulates the fabric, OpenSM runs with the policy,
//! saquery asks for PathRecords between every ordered pair of end ports with each option set
//! of the scenario, smpquery reads back every port's SL2VL and VL arbitration tables (written
//! whole, as OpenSM writes them), and every answer and table must equal ours: routed by the LFTs dump_lfts
//! reads from the switches OpenSM programmed, and (scenarios marked `min-hop`) by our min-hop
//! routes too. On the `parallel` fabric min-hop cannot know which of two unequal links OpenSM
//! chose, and the test shows it: min-hop answers differ there, LFT answers do not.
//!
//! Every directory under `tests/oracle/` is a scenario (see `harness/scenario.rs`); the
//! differential tester's minimiser writes its reproducers there too. The answers are
//! OpenSM's, asked at every run, never recorded in the repository.
//!
//! Needs the Debian packages opensm, ibsim-utils and infiniband-diags (no root: every run
//! has its own ibsim socket name). Without them the test fails, unless LOSSLESS_SKIP_ORACLES=1.

mod harness;

use harness::compare::{compare_paths, Ours};
use harness::{compare, observe, oracle_dir, Scenario};
use lossless_policy::fabric::topo;
use std::collections::BTreeSet;

fn recipe(name: &str, policy: String) -> Scenario {
    Scenario {
        name: name.into(),
        net: include_str!("data/net").into(),
        policy: Some(policy),
        partitions: Some(include_str!("data/partitions.conf").into()),
        opensm_conf: include_str!("data/opensm.conf").into(),
        optsets: [
            "none",
            "--service_id 0x11234",
            "--pkey 0x1234",
            "--pkey 0xffff",
            "--sl 1",
            "--sl 7",
            "--sl 15",
        ]
        .map(String::from)
        .to_vec(),
        tables: true,
        min_hop: true,
        ..Scenario::default()
    }
}

/// ibnetdiscover (our parser on the real tool's output) sees the links of the net file.
fn same_links(s: &Scenario, disc: &str) -> Result<(), String> {
    let df = topo::parse("ibnetdiscover.out", disc).map_err(|e| e.to_string())?;
    let nf = topo::parse("net", &s.net).map_err(|e| e.to_string())?;
    let links = |f: &lossless_policy::fabric::Fabric| {
        f.nodes
            .iter()
            .flat_map(|n| {
                n.ports
                    .iter()
                    .filter(|p| p.peer.is_some())
                    .map(move |p| (n.desc.clone(), p.num, p.width, p.speed))
            })
            .collect::<BTreeSet<_>>()
    };
    if links(&df) == links(&nf) {
        Ok(())
    } else {
        Err(format!("{}: ibnetdiscover and net disagree", s.name))
    }
}

/// One scenario: (answers and tables compared, disagreements).
fn run(s: &Scenario) -> (usize, Vec<String>) {
    let obs = observe(s).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    assert!(!obs.paths.is_empty(), "{}: OpenSM gave no answers", s.name);
    if let Err(e) = same_links(s, &obs.ibnetdiscover) {
        return (0, vec![e]);
    }
    if s.name == "sl20" {
        // OpenSM's defect, recorded: the Compute->Storage level (SL 20) gives no path.
        let k = (
            "Hca1/P1".to_string(),
            "Hca2/P1".to_string(),
            "none".to_string(),
        );
        assert_eq!(
            obs.paths.get(&k),
            Some(&None),
            "OpenSM answered a level with SL 20"
        );
        return (0, vec![]);
    }
    if s.name == "parallel" {
        let ours = Ours::load(s).expect("parallel loads");
        let min_hop = compare_paths(s, &ours, &obs, false);
        if min_hop.is_empty() {
            return (
                0,
                vec![
                    "parallel: min-hop gave OpenSM's answers everywhere, so this fabric does \
                      not show what LFT routes add"
                        .into(),
                ],
            );
        }
        eprintln!(
            "parallel: {} of {} min-hop answers differ from OpenSM, none with its LFTs, e.g. {}",
            min_hop.len(),
            obs.paths.len(),
            min_hop[0].text
        );
    }
    let (n, d) = compare(s, &obs).unwrap_or_else(|e| panic!("{}: {e}", s.name));
    (
        n,
        d.into_iter()
            .map(|d| format!("[{}] {}", d.class, d.text))
            .collect(),
    )
}

#[test]
fn opensm_equivalence() {
    if !lossless_testkit::require("opensm_equivalence", &[lossless_testkit::Oracle::OpenSm]) {
        return;
    }
    // A policy OpenSM rejects for a syntax error: it then runs with no policy at all. We refuse
    // the file instead, and our no-policy answers must equal OpenSM's.
    let broken = include_str!("data/qos-policy.conf")
        .replace("qos-level-name: SdpLvl", "qos-level-nam: SdpLvl");
    let err =
        lossless_policy::parse_policy("qos-policy.conf", &broken).expect_err("we refuse the typo");
    assert!(err.to_string().contains("`qos-level-nam`"), "{err}");
    // `sl: 20`: OpenSM accepts it and then drops every path of that level. We refuse it.
    let sl20 = include_str!("data/qos-policy.conf").replace("sl: 1\n", "sl: 20\n");
    let err = lossless_policy::parse_policy("qos-policy.conf", &sl20).expect_err("we refuse sl 20");
    assert!(err.to_string().contains("`20`"), "{err}");

    let mut scenarios = vec![
        recipe("recipe", include_str!("data/qos-policy.conf").into()),
        Scenario {
            policy_rejected: true,
            ..recipe("syntax-error", broken)
        },
        Scenario {
            optsets: vec!["none".into()],
            ..recipe("sl20", sl20)
        },
    ];
    scenarios.extend(Scenario::all(&oracle_dir()));
    // Two at a time: OpenSM's start-up is short, the diags' queries dominate.
    let queue = std::sync::Mutex::new(scenarios);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for _ in 0..2 {
            sc.spawn(|| loop {
                let Some(s) = queue.lock().expect("queue").pop() else {
                    break;
                };
                let r = run(&s);
                results.lock().expect("results").push((s.name.clone(), r));
            });
        }
    });
    let mut all = Vec::new();
    let mut total = 0;
    for (name, (n, d)) in results.into_inner().expect("results") {
        eprintln!("{name}: {n} compared, {} differ", d.len());
        total += n;
        all.extend(d);
    }
    assert!(
        all.is_empty(),
        "{} of {total} answers and tables differ from OpenSM:\n{}",
        all.len(),
        all.join("\n")
    );
    eprintln!("{total} of our answers and tables equal OpenSM's");
}

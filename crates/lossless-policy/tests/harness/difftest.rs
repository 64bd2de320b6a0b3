//! The differential tester: generated cases run on the real OpenSM and compared with ours,
//! disagreements counted by class, the first of each class shrunk to a reproducer.

use super::compare::{compare, Disagreement, Ours};
use super::gen::Case;
use super::observe::{observe, Observed};
use super::scenario::Scenario;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

/// Classes we differ in on purpose (docs/policy.md, "Where we differ from OpenSM, and
/// why"; `check` reports each as an error).
pub const EXPLAINED: &[&str] = &["policy refused by us, accepted by OpenSM: SL above 15"];

/// What kind of refusal of ours an error is.
fn refusal_kind(e: &str) -> &'static str {
    if e.contains("expected an SL from 0 to 15") {
        "SL above 15"
    } else if e.contains("reads past the switch's port table") {
        "port beyond a switch's count"
    } else {
        "other"
    }
}

/// One generated case: OpenSM's answers and tables against ours.
pub struct Outcome {
    /// PathRecords OpenSM answered with a record (the rest: no path).
    pub answered: usize,
    /// OpenSM refused the policy (and so did we): compared without one.
    pub policy_rejected: bool,
    pub compared: usize,
    pub queries: usize,
    pub disagreements: Vec<Disagreement>,
}

/// Compare a scenario; when OpenSM refused the policy, ours must too (then both answer
/// without it).
pub fn run_scenario(s: &Scenario) -> Result<Outcome, String> {
    let obs: Observed = observe(s)?;
    let ours_refuses = Ours::load(s).err();
    let mut s = s.clone();
    match (obs.policy_error.as_deref(), ours_refuses) {
        (None, Some(e)) => {
            return Ok(Outcome {
                answered: 0,
                policy_rejected: false,
                compared: 1,
                queries: obs.queries,
                disagreements: vec![Disagreement {
                    class: format!(
                        "policy refused by us, accepted by OpenSM: {}",
                        refusal_kind(&e)
                    ),
                    text: format!("{}: {}", s.name, e.lines().next().unwrap_or("")),
                    key: Default::default(),
                }],
            })
        }
        (Some(opensm), None) => {
            return Ok(Outcome {
                answered: 0,
                policy_rejected: false,
                compared: 1,
                queries: obs.queries,
                disagreements: vec![Disagreement {
                    class: "policy accepted by us, refused by OpenSM".into(),
                    text: format!("{}: OpenSM: {opensm}", s.name),
                    key: Default::default(),
                }],
            })
        }
        (Some(_), Some(_)) => s.policy_rejected = true,
        (None, None) => {}
    }
    let (compared, disagreements) = compare(&s, &obs)?;
    Ok(Outcome {
        answered: obs.paths.values().filter(|p| p.is_some()).count(),
        policy_rejected: s.policy_rejected,
        compared,
        queries: obs.queries,
        disagreements,
    })
}

/// The seed of the i-th case of a run.
pub fn case_seed(seed: u64, i: u64) -> u64 {
    seed.wrapping_mul(1_000_003).wrapping_add(i)
}

#[derive(Debug, Default)]
pub struct Report {
    pub fabrics: usize,
    /// Fabrics whose policy OpenSM and we both refused (compared without a policy).
    pub rejected_policies: usize,
    pub compared: usize,
    /// PathRecords OpenSM answered with a record.
    pub answered: usize,
    pub queries: usize,
    pub by_class: BTreeMap<String, usize>,
    /// Fabrics compared by where the SM ran ([`Case::sm_kind`]).
    pub by_sm: BTreeMap<String, usize>,
    /// The first disagreement of each class, with its case.
    pub first: BTreeMap<String, (Case, Disagreement)>,
    pub errors: Vec<String>,
    pub seconds: f64,
}

impl Report {
    pub fn unexplained(&self) -> usize {
        self.by_class
            .iter()
            .filter(|(c, _)| !EXPLAINED.iter().any(|e| c.starts_with(e)))
            .map(|(_, n)| n)
            .sum()
    }

    pub fn summary(&self) -> String {
        let mut t = format!(
            "{} cases compared (PathRecord answers, {} of them a path, and port tables) on {} \
             generated fabrics ({} policies refused by OpenSM and by us), {} diag queries, in {:.1} s ({:.1} cases/s, \
             {:.2} fabrics/s); {} disagreements ({} unexplained)\n",
            self.compared,
            self.answered,
            self.fabrics,
            self.rejected_policies,
            self.queries,
            self.seconds,
            self.compared as f64 / self.seconds.max(1e-9),
            self.fabrics as f64 / self.seconds.max(1e-9),
            self.by_class.values().sum::<usize>(),
            self.unexplained()
        );
        for (k, n) in &self.by_sm {
            t.push_str(&format!("  {n:6}  fabrics with the SM on a {k}\n"));
        }
        for (c, n) in &self.by_class {
            let why = if EXPLAINED.iter().any(|e| c.starts_with(e)) {
                "  (on purpose: docs/policy.md)"
            } else {
                ""
            };
            t.push_str(&format!("  {n:6}  {c}{why}\n"));
        }
        for (c, (case, d)) in &self.first {
            t.push_str(&format!("  first [{c}] seed {}: {}\n", case.seed, d.text));
        }
        for e in &self.errors {
            t.push_str(&format!("  error: {e}\n"));
        }
        t
    }
}

/// Generated cases from `seed` on `threads` threads until `cases` answers and tables are
/// compared (at least one fabric).
pub fn run(seed: u64, cases: usize, threads: usize) -> Report {
    let t0 = Instant::now();
    let report = Mutex::new(Report::default());
    let next = Mutex::new(0u64);
    std::thread::scope(|sc| {
        for _ in 0..threads.max(1) {
            sc.spawn(|| loop {
                let i = {
                    let done = report.lock().expect("report").compared;
                    let mut n = next.lock().expect("next");
                    if done >= cases && *n > 0 {
                        break;
                    }
                    *n += 1;
                    *n - 1
                };
                let case = Case::generate(case_seed(seed, i));
                let out = run_scenario(&case.scenario());
                let mut r = report.lock().expect("report");
                match out {
                    Ok(o) => {
                        r.fabrics += 1;
                        *r.by_sm.entry(case.sm_kind()).or_default() += 1;
                        r.rejected_policies += usize::from(o.policy_rejected);
                        r.compared += o.compared;
                        r.answered += o.answered;
                        r.queries += o.queries;
                        for d in o.disagreements {
                            *r.by_class.entry(d.class.clone()).or_default() += 1;
                            if !r.first.contains_key(&d.class) {
                                r.first.insert(d.class.clone(), (case.clone(), d));
                            }
                        }
                    }
                    Err(e) => r.errors.push(format!("seed {}: {e}", case.seed)),
                }
            });
        }
    });
    let mut r = report.into_inner().expect("report");
    r.seconds = t0.elapsed().as_secs_f64();
    r
}

//! The differential tester against the real OpenSM: generated fabrics, partitions, policies
//! and opensm.conf settings, each run on OpenSM 3.3 + ibsim, its PathRecords (saquery) and
//! port tables (smpquery) compared with `resolve` and `compile`.
//!
//! ```text
//! cargo run --release -p lossless-policy --example difftest -- --seed 1 --cases 1000
//!     [--threads 2] [--minimise DIR] [--budget 150]
//! ```
//!
//! Prints the cases compared, the disagreements by class and the seconds taken; exits 1 when
//! a disagreement is not one we make on purpose. `--minimise DIR` shrinks the first
//! disagreement of each class to a small reproducer, written as an oracle scenario directory
//! under DIR (put it under crates/lossless-policy/tests/oracle/ and the oracle test runs it).
//! Needs the Debian packages opensm, ibsim-utils and infiniband-diags.

#[path = "../tests/harness/mod.rs"]
mod harness;

use harness::minimise::minimise;
use std::path::PathBuf;

fn main() {
    let mut seed = 1u64;
    let mut cases = 1000usize;
    let mut threads = 2usize;
    let mut budget = 150usize;
    let mut out: Option<PathBuf> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |what: &str| -> String {
            it.next().cloned().unwrap_or_else(|| {
                eprintln!("difftest: {a} needs {what}");
                std::process::exit(2)
            })
        };
        let num = |s: String| -> u64 {
            s.parse().unwrap_or_else(|_| {
                eprintln!("difftest: `{s}` is not a number");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--seed" => seed = num(val("a number")),
            "--cases" => cases = num(val("a number")) as usize,
            "--threads" => threads = num(val("a number")) as usize,
            "--budget" => budget = num(val("a number")) as usize,
            "--minimise" | "--minimize" => out = Some(PathBuf::from(val("a directory"))),
            _ => {
                eprintln!(
                    "difftest: unknown argument `{a}`, expected --seed N, --cases N, \
                     --threads N, --minimise DIR or --budget N"
                );
                std::process::exit(2)
            }
        }
    }
    if !lossless_testkit::require("difftest", &[lossless_testkit::Oracle::OpenSm]) {
        return;
    }
    let report = harness::difftest::run(seed, cases, threads);
    print!("seed {seed}: {}", report.summary());
    if let Some(dir) = &out {
        for (class, (case, d)) in &report.first {
            let (small, d) = minimise(case, d, budget);
            let slug: String = class
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            let mut s = small.scenario();
            s.name = format!("{slug}-seed-{}", case.seed);
            s.about.push(format!("[{class}] {}", d.text));
            let path = dir.join(&s.name);
            match s.write(&path) {
                Ok(()) => println!("reproducer: {}", path.display()),
                Err(e) => eprintln!("difftest: {}: {e}", path.display()),
            }
        }
    }
    if report.unexplained() > 0 || !report.errors.is_empty() {
        std::process::exit(1);
    }
}

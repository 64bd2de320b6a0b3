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

use clap::Parser;
use harness::minimise::minimise;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "difftest",
    about = "Generated cases compared with the real OpenSM"
)]
struct Args {
    /// The run's seed: case i is generated from it and i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop once this many answers and tables are compared.
    #[arg(long, default_value_t = 1000)]
    cases: usize,
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Shrink the first disagreement of each class into a scenario directory under DIR.
    #[arg(long, visible_alias = "minimize", value_name = "DIR")]
    minimise: Option<PathBuf>,
    /// OpenSM runs the minimiser may make per disagreement.
    #[arg(long, default_value_t = 150)]
    budget: usize,
}

fn main() {
    let Args {
        seed,
        cases,
        threads,
        minimise: out,
        budget,
    } = Args::parse();
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

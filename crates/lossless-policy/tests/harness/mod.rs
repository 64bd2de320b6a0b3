//! The OpenSM oracle harness shared by `tests/oracle.rs`, `tests/difftest.rs` and
//! `examples/difftest.rs`: scenarios (a directory each under `tests/oracle/`), running
//! OpenSM + ibsim on one and asking it (`observe`), comparing our answers and tables with
//! its (`compare`), and the differential tester's generator and minimiser.
#![allow(dead_code, unused_imports)]

pub mod compare;
pub mod difftest;
pub mod gen;
pub mod minimise;
pub mod observe;
pub mod scenario;

pub use compare::{compare, Disagreement};
pub use observe::{observe, Observed};
pub use scenario::Scenario;

/// Where the scenario directories live.
pub fn oracle_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle")
}

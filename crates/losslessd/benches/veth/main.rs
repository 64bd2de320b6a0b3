//! losslessd on veth, against lldpad in the same run (needs root, lldpad, gcc):
//!
//!   cargo bench -p losslessd --bench veth              everything
//!   cargo bench -p losslessd --bench veth -- pair      only losslessd <-> losslessd
//!   (sections: pair, anchor, ieee, auto-cee, ieee-anchor, mixed, restart,
//!   scale, headroom; headroom runs only when named)
//!
//! * pair:    link-up -> agreed operational PFC on both ends, two losslessd
//!   in CEE DCBX (`mode = "cee"` on both).
//! * anchor:  the same for two lldpads (CEE), the figure to beat.
//! * ieee:    two losslessd in IEEE 802.1Qaz (`mode = "ieee"`): link-up ->
//!   both ends agreed (`all_syncd`) on PFC 3,4 and on the ETS table that A
//!   recommends and B (willing) runs.
//! * auto-cee: an auto port (the default) against a losslessd with
//!   `mode = "cee"`: link-up -> the auto port has fallen back to CEE and both
//!   agree on PFC, as in pair; with pair in the same run, the difference (the
//!   fallback's cost) in time and in LLDPDUs sent.
//! * ieee-anchor: two lldpads in IEEE 802.1Qaz mode, A not willing (ETS
//!   configuration and recommendation, PFC 3,4), B willing: link-up -> B's
//!   driver runs A's ETS and PFC and A has received B's TLVs saying so.
//! * mixed:   lldpad on one end, losslessd on the other.
//! * restart: losslessd stopped (SIGTERM, or kill -9) and started again ->
//!   both ends agreed again, timed from the new process's start; 10 s apart,
//!   so that the peer's 802.1AB transmit credit is full as in any real
//!   restart (back to back, the peer's rate limiter sets the pace: ~1 s).
//! * scale:   one losslessd with BENCH_PORTS ports (default 512; e.g.
//!   BENCH_PORTS=4096), peers a second losslessd in another namespace,
//!   simultaneous link-up -> all converged; then CPU and RSS over a
//!   steady-state window (BENCH_STEADY_S, default 30 s).
//! * headroom: two losslessd measuring the link (Adaptive PFC Headroom),
//!   link-up -> both ports show a measured headroom, against the floor "settles
//!   within 1 s of link-up with at most 100 frames per port"; the measurement
//!   frames each port sent and received, counted once both rounds are over; the
//!   same after a link flap. BENCH_RUNS runs (default and minimum 20);
//!   BENCH_DEBUG=1 prints each run; BENCH_HEADROOM_LINE=100us puts the delay
//!   line between the two (two veth pairs, as in tests/headroom.rs).
//!
//! Wall times are measured from just before the `ip link set up` (or the
//! spawn) to the first poll that sees the agreement, polling the control
//! socket every 0.5 ms (dcbtool every 10 ms for lldpad, which is itself
//! slower to answer). The daemon's own figure (`last_convergence_ms`: link
//! event to every feature Syncd) is printed beside it.
#![allow(clippy::unwrap_used)]

#[path = "../../tests/common/mod.rs"]
mod common;
mod headroom;
mod lldpad;
mod measure;
mod pair;
mod restart;
mod scale;

use common::*;
use headroom::headroom;
use lldpad::{anchor, ieee_anchor, mixed};
use measure::median;
use pair::{auto_cee, ieee, pair, Samples};
use restart::restart;
use scale::scale;

pub const MAC_A: &str = "02:00:00:00:00:0a";
pub const MAC_B: &str = "02:00:00:00:00:0b";

pub const NOT_WILLING: &str = "[ports.\"va\"]\npfc = { willing = false, priorities = [3, 4] }\n";
pub const CEE: &str = "dcbx = { mode = \"cee\" }\n";

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| filter.is_empty() || filter.iter().any(|f| f == s);
    // lldpad (under the emulated driver) only for the sections that run it.
    let with_lldpad = ["anchor", "ieee-anchor", "mixed"].iter().any(|s| want(s));
    let needs: &[Oracle] = if with_lldpad {
        LLDPAD_PEER
    } else {
        &[Oracle::Netns]
    };
    if !require("veth bench", needs) {
        return;
    }
    println!("machine: {}", machine());
    let runs: usize = env_or("BENCH_RUNS", 20);
    let lldpad_runs: usize = env_or("BENCH_RUNS_LLDPAD", 3);
    let ports: usize = env_or("BENCH_PORTS", 512);
    let mut pair_samples = Samples::default();
    if want("pair") {
        pair_samples = pair(runs);
    }
    let pair_wall = median(&pair_samples.wall);
    if want("anchor") {
        anchor(lldpad_runs);
    }
    let pair_frames = want("pair").then(|| pair_samples.frames.clone());
    if want("ieee") {
        ieee(runs);
    }
    if want("auto-cee") {
        auto_cee(runs, pair_frames.as_deref(), pair_wall);
    }
    if want("ieee-anchor") {
        ieee_anchor(lldpad_runs);
    }
    if want("mixed") {
        mixed(lldpad_runs);
    }
    if want("restart") {
        restart(runs.min(5));
    }
    if want("scale") {
        scale(ports);
    }
    // Not part of "everything": name it.
    if filter.iter().any(|f| f == "headroom") {
        headroom(runs.max(20));
    }
}

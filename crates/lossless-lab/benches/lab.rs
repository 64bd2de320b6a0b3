//! Lab benchmarks (a bench binary, not a timed test): prints the figures and the machine.
//!
//! `cargo bench -p lossless-lab --bench lab`
//!
//! 1. Convergence on a zero-delay-equivalent link (1 us), no loss: frames on the
//!    wire and round trips until both ends are Syncd with the agreed OperCfg,
//!    for an agent starting after its peer and for a simultaneous link-up.
//! 2. 1,000 link pairs for one simulated hour: wall time.

use std::time::Instant as Wall;

use lossless_dcbx::{Duration, Instant};
use lossless_lab::scenario::{converged, host_config, switch_config};
use lossless_lab::{PathProps, Sim};
use lossless_wire::MacAddr;

fn convergence(staggered: bool) -> (u64, f64) {
    let delay = Duration::from_micros(1);
    let mut sim = Sim::new(1).without_log();
    let a = sim.add_agent("switch", switch_config()).expect("valid");
    let b = sim.add_agent("host", host_config()).expect("valid");
    let seg = sim.connect(a, b);
    sim.set_link_props(a, b, PathProps { delay, loss: 0.0 });
    let start;
    let sent0;
    if staggered {
        sim.set_node_link(b, true);
        sim.run_until(Instant::from_secs_f64(0.5));
        start = sim.now();
        sent0 = sim.stats().frames_sent;
        sim.set_node_link(a, true);
    } else {
        start = sim.now();
        sent0 = 0;
        sim.set_link(seg, true);
    }
    let t = sim
        .run_until_true(Instant::from_secs_f64(10.0), converged)
        .expect("converges");
    let rtt = 2.0 * delay.as_secs_f64();
    (
        sim.stats().frames_sent - sent0,
        (t - start).as_secs_f64() / rtt,
    )
}

fn thousand_pairs_one_hour() -> (f64, u64) {
    let mut sim = Sim::new(7).without_log();
    sim.set_default_path(PathProps {
        delay: Duration::from_micros(5),
        loss: 0.0,
    });
    let mut segs = Vec::new();
    for i in 0..1000u32 {
        let mut s = switch_config();
        let mut h = host_config();
        let [x, y, z, w] = i.to_be_bytes();
        s.mac = MacAddr([2, 0xa, x, y, z, w]);
        h.mac = MacAddr([2, 0xb, x, y, z, w]);
        let a = sim.add_agent("s", s).expect("valid");
        let b = sim.add_agent("h", h).expect("valid");
        segs.push(sim.connect(a, b));
    }
    let wall = Wall::now();
    for seg in segs {
        sim.set_link(seg, true);
    }
    sim.run_until(Instant::from_secs_f64(3600.0));
    assert!(converged(&sim));
    (wall.elapsed().as_secs_f64(), sim.stats().frames_sent)
}

fn main() {
    // `cargo bench` passes --bench; ignore arguments.
    println!("machine: {}", lossless_testkit::machine());
    let (frames, rtts) = convergence(true);
    println!(
        "convergence, agent started after its peer: {frames} frames on the wire, {rtts:.2} round trips"
    );
    let (frames, rtts) = convergence(false);
    println!(
        "convergence, simultaneous link-up: {frames} frames on the wire, {rtts:.2} round trips"
    );
    let (secs, frames) = thousand_pairs_one_hour();
    println!(
        "1,000 link pairs x 1 simulated hour: {secs:.2} s wall time ({frames} frames, {:.0} frames/s)",
        frames as f64 / secs
    );
}

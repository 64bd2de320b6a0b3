#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The wall clock steps back under a flooded port: the port, moved to a packet socket
//! of its own, must still hear every frame. The daemon's wall clock is stepped with
//! lossless-testkit's `ClockStep` (a preloaded library shifts the daemon's
//! `clock_gettime(CLOCK_REALTIME)`; the kernel's clock and the receive stamps it puts
//! on frames are untouched, and so is the machine's clock): from the step on, the
//! daemon reads the wall clock 20 s later than the kernel stamps frames, as after a
//! real step back of 20 s of the system clock (chrony's `makestep`, a VM resume)
//! since its last reading.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::clock::ClockStep;
use lossless_testkit::{pfc_frame, Injector};
use serde_json::Value;

/// The step: longer than every wait below, so that the old code cannot pass by
/// waiting it out.
const STEP_S: i64 = 20;

/// `fa`'s I/O counters, and the shared sockets' kernel drops.
fn counters(d: &Daemon) -> (Value, u64) {
    let c = d.call(&Request::Counters {
        port: Some("fa".into()),
    });
    let shared = c["shared_socket"]["kernel_drops"].as_u64().unwrap_or(0);
    (c["ports"][0]["io"].clone(), shared)
}

/// Every MAC Control frame `fa` was sent, read (within the budget or past it) or
/// counted as dropped by the kernel.
fn accounted(d: &Daemon) -> Option<(u64, Value)> {
    let (io, shared) = counters(d);
    let seen = io["mac_control_rx"].as_u64()?
        + io["rx_over_budget"].as_u64()?
        + io["kernel_drops"].as_u64()?
        + shared;
    Some((seen, io))
}

/// Fails on the old code: the switch to the port's own socket compared the kernel's
/// stamps with a wall-clock reading of the daemon's, so after the step every frame of
/// the own socket looked older than the switch and was skipped, uncounted: the
/// flood's frames after the switch, and 1,000 more after it, never arrived.
#[test]
fn a_wall_clock_step_back_leaves_a_flooded_port_hearing_every_frame() {
    if !require(
        "a_wall_clock_step_back_leaves_a_flooded_port_hearing_every_frame",
        &[Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let hub = Netns::new();
    let leaf = Netns::new();
    let link = Veth::new(
        &hub,
        "fa",
        "02:00:00:00:0f:0a",
        &leaf,
        "fb",
        "02:00:00:00:0f:0b",
    );
    link.up(&hub, &leaf);
    let conf = dir.path().join("hub.toml");
    std::fs::write(&conf, "[ports.\"fa\"]\n").unwrap();
    let clock = ClockStep::new(dir.path());
    let d = Daemon::start_with_env(
        &hub,
        &dir.path().join("hub"),
        &["--config", conf.to_str().unwrap()],
        &clock.vars(),
    );
    wait_for(Duration::from_secs(10), "fa open", || {
        accounted(&d).filter(|(_, io)| io["rcvbuf_bytes"].is_u64())
    });
    clock.step(STEP_S);

    // A flood: past the budget the port gets its own socket, mid-flood.
    let fb = Injector::open(&leaf, "fb");
    let frame = pfc_frame();
    let n = 20_000;
    for _ in 0..n {
        fb.send(&frame);
    }
    let (_, io) = wait_every(
        Duration::from_secs(10),
        Duration::from_millis(50),
        "every flooded frame read or counted as dropped",
        || {
            let (seen, io) = accounted(&d)?;
            assert!(seen <= n, "more than sent: {io}");
            (seen == n).then_some((seen, io))
        },
    );
    assert_eq!(io["own_socket"], true, "{io}");
    eprintln!("after {n} frames: {io}");

    // And long after the switch: only the own socket carries them.
    for _ in 0..1_000 {
        fb.send(&frame);
    }
    let (_, io) = wait_every(
        Duration::from_secs(10),
        Duration::from_millis(50),
        "the frames after the switch",
        || accounted(&d).filter(|(seen, _)| *seen == n + 1_000),
    );
    eprintln!("after 1,000 more: {io}");
    // The copies both sockets read at the switch, skipped once each.
    assert!(io["own_socket_skipped"].is_u64(), "{io}");
}

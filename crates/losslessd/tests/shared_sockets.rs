#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The ports share their packet sockets: however many ports a daemon runs, its
//! namespace holds two (LLDP, MAC Control), because the kernel walks every packet
//! socket of a namespace on each device event; a port flooded past its receive
//! budget gets one of its own, and the other ports go on converging.

mod common;

use std::time::Duration;

use common::fanout::{ports, FanoutDaemons};
use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::packet_sockets;

/// Fails on the old code: a socket per port, 2 x 256 in the two namespaces (and a
/// link-up of 4,096 ports 2.6 times as slow as without them).
#[test]
fn two_hundred_and_fifty_six_ports_converge_on_two_packet_sockets_per_daemon() {
    if !require(
        "two_hundred_and_fifty_six_ports_converge_on_two_packet_sockets_per_daemon",
        &[Oracle::Netns],
    ) {
        return;
    }
    let n = 256;
    // `_dir` holds the state directories and sockets for as long as the test runs.
    let FanoutDaemons {
        f,
        hub,
        leaf,
        dir: _dir,
    } = FanoutDaemons::start(n, "pfc = { willing = false, priorities = [3, 4] }\n");
    f.up();
    wait_every(
        Duration::from_secs(30),
        Duration::from_millis(100),
        "every port of both daemons converged",
        || {
            let all = |d: &Daemon| {
                let p = ports(&d.call(&Request::Status));
                p.len() == n && p.iter().all(|p| p["all_syncd"] == true)
            };
            (all(&hub) && all(&leaf)).then_some(())
        },
    );
    // The leaf adopted the hub's PFC on every port.
    for p in ports(&leaf.call(&Request::Status)) {
        let d = leaf.dcbx(p["port"].as_str().unwrap());
        assert_eq!(d["ieee"]["pfc"]["oper"], serde_json::json!([3, 4]), "{d}");
    }
    assert_eq!(packet_sockets(&f.hub), 2, "the hub's namespace");
    assert_eq!(packet_sockets(&f.leaf), 2, "the leaf's namespace");
    let c = hub.call(&Request::Counters { port: None });
    assert!(
        ports(&c).iter().all(|p| p["io"]["own_socket"] == false),
        "no port was flooded"
    );
    assert_eq!(
        c["shared_socket"]["kernel_drops"], 0,
        "{}",
        c["shared_socket"]
    );
}

/// A port flooded past its budget reads its own sockets from then on (the third and
/// fourth in the namespace: one per EtherType, LLDP and MAC Control), the other port
/// still converges, and every flooded frame is accounted for exactly once: read,
/// refused past the budget, or dropped by the kernel on one socket or the other.
#[test]
fn a_flooded_port_gets_its_own_socket_and_every_frame_is_counted_once() {
    if !require(
        "a_flooded_port_gets_its_own_socket_and_every_frame_is_counted_once",
        &[Oracle::Netns],
    ) {
        return;
    }
    let rig = common::flood::FloodRig::start("", &losslessd_bin());
    assert_eq!(packet_sockets(&rig.hub), 2);
    let n = 20_000;
    rig.send_pfc_frames(n);
    let (io, shared_drops) = wait_every(
        Duration::from_secs(30),
        Duration::from_millis(50),
        "every flooded frame read or counted as dropped",
        || {
            let c = rig.daemon.call(&Request::Counters {
                port: Some("fa".into()),
            });
            let io = c["ports"][0]["io"].clone();
            let shared = c["shared_socket"]["kernel_drops"].as_u64()?;
            let seen = io["mac_control_rx"].as_u64()?
                + io["rx_over_budget"].as_u64()?
                + io["kernel_drops"].as_u64()?
                + shared;
            assert!(seen <= n, "more than sent: {io} shared drops {shared}");
            (seen == n).then_some((io, shared))
        },
    );
    assert_eq!(io["own_socket"], true, "{io}");
    assert_eq!(
        packet_sockets(&rig.hub),
        4,
        "the shared two and fa's own two (LLDP, MAC Control)"
    );
    println!("fa: {io}, shared sockets dropped {shared_drops}");
    let took = rig.peer_converges(Duration::from_secs(10));
    assert!(took.is_some(), "pa did not converge beside the flooded fa");
    let pa = rig.daemon.call(&Request::Counters {
        port: Some("pa".into()),
    });
    assert_eq!(pa["ports"][0]["io"]["own_socket"], false);
}

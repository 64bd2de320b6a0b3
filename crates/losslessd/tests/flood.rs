#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! A device on one link floods the daemon with LLDPDUs from ever new MSAPs, as fast as
//! this machine can send them: a real DCBX peer on another port still converges, and
//! the flood's frames are counted (`counters`: BUDGET and `io.rx_over_budget`, the
//! metric `lossless_port_rx_over_budget_total`). A PFC storm on a port does not keep a
//! new peer from converging there.
//!
//! The tests assert what happens (the peer converges while the flood or storm is
//! refused past the budget, the flooded port reads sockets of its own); how long it
//! takes is the bench's (`cargo bench -p losslessd --bench flood`, and `-- storm`):
//! a wall-clock bound in a debug build on a shared machine measures the machine.

mod common;

use std::time::Duration;

use common::flood::{agreed_within, peer_link, FloodRig, LEAF_CONFIG};
use common::*;
use lossless_testkit::Flood;

/// Fails on the old code: every flooded frame went through the agent (some 8 us each,
/// one receive call per frame) and through the one queue every port shares, so the
/// peer's frames on the other port waited behind thousands of the flood's (seconds,
/// or no convergence within 10 s; without a flood it takes a few milliseconds, and
/// the bench measures it under the flood).
#[test]
fn a_peer_converges_on_another_port_while_one_port_is_flooded() {
    if !require(
        "a_peer_converges_on_another_port_while_one_port_is_flooded",
        &[Oracle::Netns],
    ) {
        return;
    }
    // The budget of `fa` starts when its port is added, after this.
    let t0 = std::time::Instant::now();
    let rig = FloodRig::start("[daemon]\nmetrics = \"127.0.0.1:9718\"\n", &losslessd_bin());
    let mut flood = rig.flood();
    // The flood reaches the daemon (read, or refused past the budget), and goes on
    // long enough to fill the socket's buffer.
    wait_for(Duration::from_secs(10), "the flood counted", || {
        let io = rig.flooded_io();
        let seen = io["rx_frames"].as_u64()? + io["rx_over_budget"].as_u64().unwrap_or(0);
        (seen > 10_000).then_some(())
    });
    std::thread::sleep(Duration::from_millis(500));
    let took = rig.peer_converges(Duration::from_secs(10));
    let sent_so_far = flood.sent();
    let sent = flood.stop();
    let took = took.unwrap_or_else(|| {
        panic!(
            "pa did not converge within 10 s under a flood of {sent_so_far} frames: {}\n{}",
            rig.daemon.dcbx("pa"),
            rig.daemon.log()
        )
    });
    let own = rig.own_ms();
    eprintln!(
        "under a flood of {sent_so_far} frames: pa converged in {took:?} (own figure {own:?} ms)"
    );
    // The flood no longer shares pa's queue: fa reads a socket of its own.
    let io = rig.flooded_io();
    assert_eq!(io["own_socket"], true, "{io}");

    // Every flooded frame the daemon read is counted, and none processed beyond the
    // budget (200 at once, 100 a second). The counts only grow, up to what was sent:
    // no need to wait for the last frames.
    let over = io["rx_over_budget"].as_u64().unwrap();
    let read = io["rx_frames"].as_u64().unwrap();
    let kernel = io["kernel_drops"].as_u64().unwrap();
    assert!(over + read + kernel <= sent, "{io} of {sent} sent");
    // The burst, and 100 a second for as long as the port has existed at most.
    let allowed = 200 + (100.0 * t0.elapsed().as_secs_f64()).ceil() as u64;
    assert!(
        read <= allowed,
        "past the budget ({allowed} in {:?}): {io}",
        t0.elapsed()
    );
    // The table and the metric say the same.
    let out = rig.daemon.cli(&["counters", "fa"]);
    let table = String::from_utf8(out.stdout).unwrap();
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let col = head.iter().position(|h| *h == "BUDGET").expect(&table);
    let shown: u64 = row[col].parse().unwrap();
    assert!(shown >= over, "{table}");
    let text = scrape_metrics(&rig.hub, "127.0.0.1:9718");
    let m = metric(&text, "lossless_port_rx_over_budget_total{port=\"fa\"}");
    assert!(m >= over as f64, "{m} < {over}");
    // And the log says why (at the next reading of the socket counters).
    wait_every(
        Duration::from_secs(15),
        Duration::from_millis(50),
        "the log line of the frames dropped unread",
        || {
            rig.daemon
                .log()
                .contains("frames were dropped unread: the port's receive budget was spent")
                .then_some(())
        },
    );
}

/// A PFC storm on a port from a device it has no peer in (a stranger on the link,
/// or a NIC storming as its host boots) spends the port's budget for such frames,
/// not its LLDPDUs': a DCBX peer that starts while the storm goes on converges.
/// Fails on the old code, where both drew on one budget: the peer's LLDPDUs got
/// through at some 100 a second among hundreds of thousands of PFC frames, and the
/// port found no peer within 10 s. How long it takes is the bench's (`-- storm`).
///
/// The port reads sockets of its own under the storm, and their receive buffers are
/// the smallest the daemon takes (`packet_rcvbuf_bytes` 64 KiB): the storm overflows
/// the own MAC Control socket's before the peer starts, and the own LLDP socket drops
/// nothing (`kernel_drops_lldp` 0): the peer's LLDPDUs are read, every one. Fails on
/// the old code, where the port's own socket was one for both EtherTypes: the storm
/// kept its buffer full and the kernel dropped the peer's LLDPDUs in it (at 4 MiB, the
/// bench found no peer within 10 s in 1 of 5 runs).
#[test]
fn a_new_peer_converges_on_a_port_under_a_pfc_storm() {
    if !require(
        "a_new_peer_converges_on_a_port_under_a_pfc_storm",
        &[Oracle::Netns],
    ) {
        return;
    }
    let (hub, leaf, dir) = (Netns::new(), Netns::new(), TempDir::new());
    let link = peer_link(&hub, &leaf);
    let conf = |name: &str, text: &str| {
        let p = dir.path().join(format!("{name}.toml"));
        std::fs::write(&p, text).unwrap();
        p
    };
    let hub_conf = conf(
        "hub",
        "[daemon]\npacket_rcvbuf_bytes = 65536\n\n[ports.\"pa\"]\n",
    );
    let leaf_conf = conf("leaf", LEAF_CONFIG);
    let daemon = Daemon::start(
        &hub,
        &dir.path().join("hub"),
        &["--config", hub_conf.to_str().unwrap()],
    );
    link.up(&hub, &leaf);
    let mut storm = Flood::pfc(&leaf, "pb");
    let io = || {
        daemon.call(&lossless_node::protocol::Request::Counters {
            port: Some("pa".into()),
        })["ports"][0]["io"]
            .clone()
    };
    // The budget for frames from others than a peer is spent.
    wait_for(Duration::from_secs(10), "the storm past the budget", || {
        (io()["rx_over_budget"].as_u64()? > 10_000).then_some(())
    });
    // The port reads its own sockets, and the storm overflows the MAC Control one's
    // buffer (the kernel counts what it dropped: `kernel_drops`).
    wait_for(
        Duration::from_secs(10),
        "the own socket overflowing",
        || {
            let io = io();
            (io["own_socket"] == true && io["kernel_drops"].as_u64()? > 0).then_some(())
        },
    );
    let over_before = io()["rx_over_budget"].as_u64().unwrap();
    let t0 = std::time::Instant::now();
    let peer = Daemon::start(
        &leaf,
        &dir.path().join("leaf"),
        &["--config", leaf_conf.to_str().unwrap()],
    );
    let took = agreed_within(&daemon, t0, Duration::from_secs(10));
    // Read before the storm stops: the port was refusing it while the peer converged.
    let io_now = io;
    let io = io_now();
    // Under the storm still, the peer's first LLDPDUs (fast transmission, one a
    // second): every one it sent is read, none dropped in the kernel. The old code's
    // one own socket for both EtherTypes, its buffer full of PFC frames, dropped some
    // (in 5 of 6 runs of this test: 5 or 6 of the 8 sent read in 10 s).
    let lldpdus = took.map(|_| every_lldpdu_read(&daemon, &peer));
    let drops = io_now();
    let sent = storm.stop();
    let took = took.unwrap_or_else(|| {
        panic!(
            "pa found no peer within 10 s under a storm of {sent} PFC frames: {io}\n{}\n{}",
            daemon.dcbx("pa"),
            daemon.log()
        )
    });
    eprintln!("under a PFC storm of {sent} frames: pa converged {took:?} after the peer started");
    // The storm went on past the budget the whole time: refused frames kept coming
    // while the peer's LLDPDUs, a bucket of their own, got through.
    let over = io["rx_over_budget"].as_u64().unwrap();
    assert!(
        over > over_before,
        "no frame refused past the budget while the peer converged ({over_before} before): {io}"
    );
    assert_eq!(daemon.dcbx("pa")["peer_present"], true);
    let lldpdus = lldpdus.expect("converged").unwrap_or_else(|(read, sent)| {
        panic!("pa read {read} of the {sent} LLDPDUs the peer sent under the storm: {drops}")
    });
    // The proof: the storm's frames were dropped in the MAC Control socket's buffer,
    // none in the LLDP one's (the peer's LLDPDUs wait there alone).
    let (all, lldp) = (
        drops["kernel_drops"].as_u64().unwrap(),
        drops["kernel_drops_lldp"].as_u64().unwrap(),
    );
    eprintln!(
        "pa read all {lldpdus} LLDPDUs; its own sockets dropped {all} frames, {lldp} of them LLDPDUs"
    );
    assert!(all > 0, "the storm overflowed no own socket: {drops}");
    assert_eq!(lldp, 0, "the own LLDP socket dropped LLDPDUs: {drops}");
    drop(peer);
}

/// Waits (10 s at most) until `hub`'s `pa` has read every LLDPDU `peer` sent on `pb`,
/// 4 at least: how many, or (read, sent) as last seen.
fn every_lldpdu_read(hub: &Daemon, peer: &Daemon) -> Result<u64, (u64, u64)> {
    let lldp = |d: &Daemon, port: &str| {
        d.call(&lossless_node::protocol::Request::Counters {
            port: Some(port.into()),
        })["ports"][0]["lldp"]
            .clone()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        // Read first, sent second: read <= sent, equal once none is on its way.
        let read = lldp(hub, "pa")["frames_in"].as_u64().unwrap();
        let sent = lldp(peer, "pb")["frames_out"].as_u64().unwrap();
        if sent >= 4 && read == sent {
            return Ok(sent);
        }
        if std::time::Instant::now() > deadline {
            return Err((read, sent));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A device that copies the DCBX peer's identity (its LLDPDU, byte for byte, and PFC
/// frames from its MAC: XOFFs for priority 3) floods `fa` while a peer comes up on
/// `pa` (issue 29, item 1). The peer's frames are budgeted too: past its allowance
/// they are dropped unread and counted as the peer's, `fa` reads a socket of its own,
/// and the shared sockets, which `pa`'s frames go through, drop nothing. Every PFC
/// frame read is counted per priority, and with the driver's counters missing (veth)
/// they are the watchdog's (item 11): it sees the storm.
///
/// Fails on the old code: the peer's identity was never charged, so `fa` stayed on
/// the shared sockets (`own_socket` false), which dropped millions of frames, and
/// `pa` took 1.3 to 1.9 s to converge instead of milliseconds (`--bench flood --
/// peer` measures that); no `rx_peer_over_budget`, no `host` counts, a blind watchdog.
#[test]
fn a_flood_with_the_peer_s_identity_is_budgeted_and_moves_the_port_to_its_own_socket() {
    if !require(
        "a_flood_with_the_peer_s_identity_is_budgeted_and_moves_the_port_to_its_own_socket",
        &[Oracle::Netns],
    ) {
        return;
    }
    let (rig, lldpdu) = FloodRig::start_peered(
        "[defaults.pfc_watchdog]\nenabled = true\npriorities = [3]\n",
        &losslessd_bin(),
    );
    let mut flood = rig.peer_flood(&lldpdu);
    // The flood reaches the daemon: read, or refused past the budget.
    wait_for(Duration::from_secs(10), "the flood counted", || {
        let io = rig.flooded_io();
        let seen = io["rx_frames"].as_u64()? + io["rx_over_budget"].as_u64().unwrap_or(0);
        (seen > 20_000).then_some(())
    });
    std::thread::sleep(Duration::from_millis(500));
    let took = rig.peer_converges(Duration::from_secs(10));
    let sent = flood.stop();
    let counters = rig
        .daemon
        .call(&lossless_node::protocol::Request::Counters { port: None });
    let io = rig.flooded_io();
    let took = took.unwrap_or_else(|| {
        panic!(
            "pa did not converge within 10 s under a flood of {sent} frames: {io}\n{}",
            rig.daemon.log()
        )
    });
    eprintln!(
        "under a flood of {sent} frames with the peer's identity: pa converged in {took:?}; {io}"
    );
    assert_eq!(io["own_socket"], true, "{io}");
    let (over, peer_over) = (
        io["rx_over_budget"].as_u64().unwrap(),
        io["rx_peer_over_budget"].as_u64().unwrap_or(0),
    );
    assert!(peer_over > 10_000 && peer_over <= over, "{io}");
    assert_eq!(
        counters["shared_socket"]["kernel_drops"], 0,
        "the shared sockets lost nothing: {counters}"
    );
    // fa's peer is still its peer: the copies that were read changed nothing.
    assert_eq!(rig.daemon.dcbx("fa")["peer_present"], true);
    // The XOFFs: each one read is counted (those past the budget too), and they are
    // the watchdog's counters.
    let pfc = rig.daemon.call(&lossless_node::protocol::Request::PfcShow {
        port: Some("fa".into()),
    })["ports"][0]
        .clone();
    assert_eq!(pfc["source"], "host", "{pfc}");
    let xoff = pfc["host"]["xoff"][3].as_u64().unwrap();
    let read = io["mac_control_rx"].as_u64().unwrap();
    assert!(
        xoff >= read && xoff > 10_000,
        "{xoff} counted, {read} processed: {pfc}"
    );
    assert!(
        pfc["priorities"][3]["storms"].as_u64().unwrap() >= 1,
        "{pfc}"
    );
    assert_eq!(pfc["priorities"][3]["direction"], "rx", "{pfc}");
}

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Frames the kernel drops on a port's packet socket (its receive buffer full while the
//! daemon is busy) are counted (`PACKET_STATISTICS`) and shown: `counters --json`, the
//! table's K-DROP column, `lossless_packet_socket_drops_total` and the buffer's size
//! in `lossless_packet_socket_rcvbuf_bytes`, a WARN in the log. The default buffer takes
//! a burst of thousands of frames whole. A flood from the peer's namespace, sent as
//! fast as a packet socket can.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_sys::link::if_nametoindex;
use lossless_sys::PacketSocket;
use serde_json::Value;

/// A PFC frame (MAC Control, 0x8808) from vb: what the daemon reads and counts, and
/// nothing else.
fn pfc_frame() -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x0b, 0x88, 0x08, 0x01, 0x01]);
    f.resize(60, 0);
    f
}

/// Sends `n` PFC frames on vb, back to back, once the daemon on va sees its link up
/// (before that it reads frames but does not count them: they are for a link it
/// believes down).
fn flood(pair: &lossless_testkit::Pair, d: &Daemon, n: u64) {
    wait_for(Duration::from_secs(5), "va up in the daemon", || {
        (d.call(&Request::Status)["ports"][0]["link_up"] == true).then_some(())
    });
    let sock = pair
        .b
        .run(|| PacketSocket::open(if_nametoindex("vb")?))
        .unwrap();
    let frame = pfc_frame();
    for _ in 0..n {
        sock.send(&frame).unwrap();
    }
}

fn io_counters(d: &Daemon) -> Value {
    d.call(&Request::Counters { port: None })["ports"][0]["io"].clone()
}

/// Waits until the daemon has accounted for all `n` frames: read, or dropped by the
/// kernel (nothing else is sent to va).
fn accounted(d: &Daemon, n: u64) -> Value {
    let mut last = Value::Null;
    wait_every(
        Duration::from_secs(30),
        Duration::from_millis(50),
        "every frame read or counted as dropped",
        || {
            last = io_counters(d);
            // Read, refused past the receive budget (vb is no DCBX peer), or dropped.
            let read = last["mac_control_rx"].as_u64()? + last["rx_over_budget"].as_u64()?;
            let dropped = last["kernel_drops"].as_u64()?;
            assert!(read + dropped <= n, "more than sent: {last}");
            (read + dropped == n).then_some(())
        },
    );
    last
}

/// Fails on the old code: the kernel's drops were not read at all (the issue saw
/// 90,741 frames dropped while `counters` showed 1 receive error).
#[test]
fn a_flooded_small_buffer_shows_its_drops_in_counters_the_table_and_metrics() {
    if !require(
        "a_flooded_small_buffer_shows_its_drops_in_counters_the_table_and_metrics",
        &[Oracle::Netns, Oracle::Promtool],
    ) {
        return;
    }
    let pair = lossless_testkit::Pair::up();
    let dir = TempDir::new();
    let conf = dir.path().join("a.toml");
    std::fs::write(
        &conf,
        "[daemon]\npacket_rcvbuf_bytes = 65536\nmetrics = \"127.0.0.1:9717\"\n\n[ports.\"va\"]\n",
    )
    .unwrap();
    let d = Daemon::start(
        &pair.a,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
    );
    // As root the buffer is what was asked (SO_RCVBUFFORCE), which the kernel doubles.
    assert_eq!(io_counters(&d)["rcvbuf_bytes"], 131072);
    let n = 30_000;
    flood(&pair, &d, n);
    let io = accounted(&d, n);
    let drops = io["kernel_drops"].as_u64().unwrap();
    assert!(drops > 0, "a 128 KiB buffer took {n} frames whole: {io}");

    // The table: K-DROP, the same number.
    let out = d.cli(&["counters"]);
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let mut lines = table.lines();
    let head: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let col = head.iter().position(|h| *h == "K-DROP").expect(&table);
    assert_eq!(row[col], drops.to_string(), "{table}");

    // The metrics, checked by promtool.
    let text = scrape_metrics(&pair.a, "127.0.0.1:9717");
    assert_eq!(
        metric(&text, "lossless_packet_socket_drops_total{port=\"va\"}"),
        drops as f64
    );
    assert_eq!(
        metric(&text, "lossless_packet_socket_rcvbuf_bytes{port=\"va\"}"),
        131072.0
    );
    if let Err(e) = promtool_check_metrics(&text) {
        panic!("promtool check metrics:\n{e}\n---\n{text}");
    }
    // And the log says so.
    assert!(
        d.log().contains(
            "the kernel dropped frames for this port: the packet socket's receive buffer was full"
        ),
        "{}",
        d.log()
    );
}

/// Fails on the old code: the kernel's default buffer (212,992 bytes) held a few
/// hundred small frames; a burst of 3,000 lost most of them.
#[test]
fn the_default_buffer_takes_a_burst_of_thousands_of_frames_whole() {
    if !require(
        "the_default_buffer_takes_a_burst_of_thousands_of_frames_whole",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = lossless_testkit::Pair::up();
    let dir = TempDir::new();
    let d = Daemon::start(&pair.a, &dir.path().join("a"), &["--interface", "va"]);
    assert_eq!(io_counters(&d)["rcvbuf_bytes"], 2 * 4 * 1024 * 1024);
    let n = 3_000;
    flood(&pair, &d, n);
    let io = accounted(&d, n);
    assert_eq!(io["kernel_drops"], 0, "{io}");
    // Every frame was read: processed (the first ones) or refused past the receive
    // budget (vb is no DCBX peer).
    let read = io["mac_control_rx"].as_u64().unwrap() + io["rx_over_budget"].as_u64().unwrap();
    assert_eq!(read, n, "{io}");
    // The budget's burst (200), and what 100 a second adds while the burst lasts.
    let processed = io["mac_control_rx"].as_u64().unwrap();
    assert!((200..300).contains(&processed), "{io}");
}

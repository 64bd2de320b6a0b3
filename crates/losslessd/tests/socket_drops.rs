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
use lossless_sys::batch::{BatchOptions, BatchSocket, Filter};
use lossless_sys::link::if_nametoindex;
use serde_json::Value;

/// Sends `n` PFC frames on vb, 64 per `sendmmsg` (or one at a time, `pace` apart),
/// once the daemon on va sees its link up (before that it reads frames but does not
/// count them: they are for a link it believes down).
fn flood(pair: &lossless_testkit::Pair, d: &Daemon, n: u64, pace: Option<Duration>) {
    wait_for(Duration::from_secs(5), "va up in the daemon", || {
        (d.call(&Request::Status)["ports"][0]["link_up"] == true).then_some(())
    });
    let sock = pair
        .b
        .run(|| {
            let opts = BatchOptions {
                rcvbuf: 1 << 16,
                ..BatchOptions::default()
            };
            BatchSocket::open(if_nametoindex("vb")?, Filter::MacControl, opts)
        })
        .unwrap();
    let frame = lossless_testkit::pfc_frame();
    let mut sent = 0;
    while sent < n {
        let k = if pace.is_some() {
            1
        } else {
            (n - sent).min(64)
        };
        // A full device queue refuses a batch: try again.
        if let Ok(k) = sock.send_batch((0..k).map(|_| frame.as_slice())) {
            sent += k as u64;
        }
        if let Some(pace) = pace {
            std::thread::sleep(pace);
        }
    }
}

fn io_counters(d: &Daemon) -> Value {
    d.call(&Request::Counters { port: None })["ports"][0]["io"].clone()
}

/// Waits until the daemon has accounted for all `n` frames: read, or dropped by the
/// kernel on the port's own socket or (before the flood gave the port its own) on the
/// shared one (nothing else is sent to va). Returns the port's counters and the
/// shared sockets' drops.
fn accounted(d: &Daemon, n: u64) -> (Value, u64) {
    let mut last = (Value::Null, 0);
    wait_every(
        Duration::from_secs(30),
        Duration::from_millis(50),
        "every frame read or counted as dropped",
        || {
            let c = d.call(&Request::Counters { port: None });
            last = (
                c["ports"][0]["io"].clone(),
                c["shared_socket"]["kernel_drops"].as_u64()?,
            );
            let io = &last.0;
            // Read, refused past the receive budget (vb is no DCBX peer), or dropped.
            let read = io["mac_control_rx"].as_u64()? + io["rx_over_budget"].as_u64()?;
            let dropped = io["kernel_drops"].as_u64()? + last.1;
            assert!(read + dropped <= n, "more than sent: {last:?}");
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
    // Past the receive budget (200 at once) va reads a socket of its own. Sent slowly,
    // so that no frame is in the kernel's backlog when it switches (a frame stamped
    // before the switch and dropped for room after it would be counted twice; see
    // port_sockets.rs), then the flood, on that socket alone.
    let slow = 250;
    flood(&pair, &d, slow, Some(Duration::from_micros(200)));
    let (io, shared_drops) = accounted(&d, slow);
    assert_eq!(io["own_socket"], true, "{io}");
    assert_eq!(shared_drops, 0, "{io}");
    let n = 30_000;
    flood(&pair, &d, n, None);
    let (io, _) = accounted(&d, slow + n);
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
    flood(&pair, &d, n, None);
    let (io, shared_drops) = accounted(&d, n);
    assert_eq!((&io["kernel_drops"], shared_drops), (&0.into(), 0), "{io}");
    // Every frame was read: processed (the first ones) or refused past the receive
    // budget (vb is no DCBX peer).
    let read = io["mac_control_rx"].as_u64().unwrap() + io["rx_over_budget"].as_u64().unwrap();
    assert_eq!(read, n, "{io}");
    // The budget's burst (200), and what 100 a second adds while the burst lasts.
    let processed = io["mac_control_rx"].as_u64().unwrap();
    assert!((200..300).contains(&processed), "{io}");
}

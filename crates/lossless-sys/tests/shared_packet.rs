#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! `SharedPacketSocket` against the kernel: one socket receives its EtherType from
//! every interface of the namespace, names the interface of each frame and stamps
//! it, takes nothing else, drops the excluded interfaces' frames in the kernel, and
//! sends on the interface it is told.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use lossless_sys::batch::{wait_any, RxBatch};
use lossless_sys::link::if_nametoindex;
use lossless_sys::packet::{ETH_P_LLDP, LLDP_MULTICAST};
use lossless_sys::shared_packet::SharedPacketSocket;
use lossless_sys::PacketSocket;
use lossless_testkit::Veth;

mod common;
use common::*;

/// Frames (interface, first payload byte) until `want` or 1 s.
fn recv(s: &SharedPacketSocket, want: usize) -> Vec<(u32, u8, Option<u64>)> {
    let mut batch = RxBatch::new(64, 2048);
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(1);
    while got.len() < want && Instant::now() < deadline {
        wait_any(&[s.as_fd()], Some(Duration::from_millis(50))).unwrap();
        s.recv_batch(&mut batch).unwrap();
        for i in 0..batch.len() {
            got.push((batch.ifindex(i), batch.get(i).unwrap()[14], batch.stamp(i)));
        }
    }
    got
}

#[test]
fn one_socket_hears_every_interface_but_the_excluded_ones() {
    if !require(
        "one_socket_hears_every_interface_but_the_excluded_ones",
        &[Oracle::Netns],
    ) {
        return;
    }
    let a = Netns::new();
    let b = Netns::new();
    let links = [
        Veth::new(&a, "x0", "02:00:00:00:01:0a", &b, "y0", "02:00:00:00:01:0b"),
        Veth::new(&a, "x1", "02:00:00:00:02:0a", &b, "y1", "02:00:00:00:02:0b"),
    ];
    for l in &links {
        l.up(&a, &b);
    }
    let (shared, x0, x1) = a
        .run(|| {
            let s = SharedPacketSocket::open(ETH_P_LLDP, LLDP_MULTICAST)?;
            let (x0, x1) = (if_nametoindex("x0")?, if_nametoindex("x1")?);
            s.join(x0)?;
            s.join(x1)?;
            Ok::<_, std::io::Error>((s, x0, x1))
        })
        .unwrap();
    let senders: Vec<PacketSocket> = ["y0", "y1"]
        .iter()
        .map(|n| b.run(|| PacketSocket::open(if_nametoindex(n)?)).unwrap())
        .collect();
    let lldp = |tag: u8| eth(LLDP_MULTICAST, MAC_B, &[0x88cc], &[tag; 46]);
    let pfc = eth([0x01, 0x80, 0xc2, 0, 0, 1], MAC_B, &[0x8808], &[0x01, 0x01]);

    // Both interfaces heard, each frame with its interface and a receive time; MAC
    // Control is another socket's EtherType.
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    senders[0].send(&lldp(1)).unwrap();
    senders[1].send(&pfc).unwrap();
    senders[1].send(&lldp(2)).unwrap();
    let got = recv(&shared, 2);
    assert_eq!(
        got.iter().map(|g| (g.0, g.1)).collect::<Vec<_>>(),
        [(x0, 1), (x1, 2)]
    );
    for (_, _, stamp) in &got {
        let t = stamp.expect("SO_TIMESTAMPNS");
        assert!(t >= before && t < before + 1_000_000_000, "{t} vs {before}");
    }

    // x1 excluded: its frames stop in the kernel (PACKET_STATISTICS counts only what
    // the filter accepted), x0's still come.
    shared.stats().unwrap();
    shared.exclude(&[x1]).unwrap();
    senders[1].send(&lldp(3)).unwrap();
    senders[0].send(&lldp(4)).unwrap();
    let got = recv(&shared, 2);
    assert_eq!(
        got.iter().map(|g| (g.0, g.1)).collect::<Vec<_>>(),
        [(x0, 4)]
    );
    assert_eq!(shared.stats().unwrap().packets, 1);

    // Sent on the interface named: y1 hears it, y0 does not.
    shared.exclude(&[]).unwrap();
    let frame = eth(LLDP_MULTICAST, MAC_A, &[0x88cc], &[9; 46]);
    shared.send(x1, &frame).unwrap();
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(1);
    let heard = loop {
        if let Ok(n) = senders[1].recv(&mut buf) {
            break Some(buf[..n].to_vec());
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(heard.as_deref(), Some(&frame[..]));
    assert!(
        senders[0].recv(&mut buf).is_err(),
        "y0 heard a frame sent on x1"
    );
}

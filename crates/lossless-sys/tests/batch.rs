#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! `BatchSocket` against the kernel: the filters attach and select, a batch
//! crosses a veth pair in order, VLAN tags come back in place, the kernel's
//! drop counter is read.

use std::io;
use std::time::{Duration, Instant};

use lossless_sys::batch::{wait_any, BatchOptions, BatchSocket, Filter, RxBatch};
use lossless_sys::link::if_nametoindex;
use lossless_sys::packet::SocketStats;
use lossless_sys::ring::{RingOptions, RingSocket};
use std::os::fd::AsFd;

mod common;
use common::*;

const PFC_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];

fn open(ns: &Netns, name: &'static str, filter: Filter, opts: BatchOptions) -> BatchSocket {
    ns.run(|| BatchSocket::open(if_nametoindex(name)?, filter, opts))
        .expect("batch socket")
}

/// A PFC frame whose pause time for priority 3 is `n` (so frames differ).
fn pfc(n: u16) -> Vec<u8> {
    let mut body = vec![0x01, 0x01, 0x00, 0x08];
    for p in 0..8 {
        body.extend_from_slice(&(if p == 3 { n } else { 0 }).to_be_bytes());
    }
    eth(PFC_DST, MAC_A, &[0x8808], &body)
}

/// `PACKET_STATISTICS` (the kernel resets them at each read) summed until they
/// count `want` frames, or 2 s: every frame sent has then been received or dropped.
fn stats_until(read: impl Fn() -> io::Result<SocketStats>, want: u64) -> SocketStats {
    let mut sum = SocketStats::default();
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let st = read().unwrap();
        sum.packets += st.packets;
        sum.drops += st.drops;
        if sum.packets >= want || Instant::now() > deadline {
            return sum;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Receives until `want` frames or 2 s.
fn recv_all(s: &BatchSocket, want: usize) -> Vec<Vec<u8>> {
    let mut batch = RxBatch::new(64, 2048);
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while got.len() < want && Instant::now() < deadline {
        wait_any(&[s.as_fd()], Some(Duration::from_millis(50))).unwrap();
        s.recv_batch(&mut batch).unwrap();
        got.extend(batch.iter().map(<[u8]>::to_vec));
    }
    got
}

#[test]
fn a_batch_of_pfc_frames_crosses_in_order_and_nothing_else_does() {
    if !require(
        "a_batch_of_pfc_frames_crosses_in_order_and_nothing_else_does",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = Pair::new();
    let tx = open(&p.a, "va", Filter::MacControl, BatchOptions::default());
    let opts = BatchOptions {
        priority: 7,
        ..BatchOptions::default()
    };
    let rx = open(&p.b, "vb", Filter::MacControl, opts);
    assert_eq!(rx.priority().unwrap(), 7);
    assert!(rx.rcvbuf().unwrap() >= 32 << 20, "SO_RCVBUFFORCE as root");
    let mut frames: Vec<Vec<u8>> = (1..=200).map(pfc).collect();
    // Interleave frames the filter must drop: LLDP and IPv6.
    frames.insert(50, eth(PFC_DST, MAC_A, &[0x88cc], &[0; 46]));
    frames.insert(120, eth(PFC_DST, MAC_A, &[0x86dd], &[0x60; 60]));
    let sent = tx.send_batch(frames.iter().map(Vec::as_slice)).unwrap();
    assert_eq!(sent, frames.len());
    let got = recv_all(&rx, 200);
    let want: Vec<Vec<u8>> = (1..=200).map(pfc).collect();
    assert_eq!(got.len(), 200);
    assert!(got == want, "the PFC frames, in order, byte for byte");
    std::thread::sleep(Duration::from_millis(100));
    let mut batch = RxBatch::new(8, 2048);
    assert_eq!(rx.recv_batch(&mut batch).unwrap(), 0, "nothing else passed");
    let st = rx.stats().unwrap();
    assert_eq!((st.packets, st.drops), (200, 0));
    assert_eq!(
        rx.stats().unwrap().packets,
        0,
        "reading resets the counters"
    );
    // The sender does not read back its own frames.
    assert_eq!(tx.recv_batch(&mut batch).unwrap(), 0);
}

#[test]
fn a_tagged_frame_comes_back_tagged() {
    if !require("a_tagged_frame_comes_back_tagged", &[Oracle::Netns]) {
        return;
    }
    let p = Pair::new();
    let tx = open(&p.a, "va", Filter::All, BatchOptions::default());
    let rx = open(&p.b, "vb", Filter::MacControl, BatchOptions::default());
    // VLAN 100, PCP 5: the kernel moves the tag into metadata on receive.
    let tagged = {
        let mut f = pfc(7);
        f.splice(12..12, [0x81, 0x00, 0xa0, 0x64]);
        f
    };
    tx.send_batch([tagged.as_slice(), pfc(8).as_slice()])
        .unwrap();
    let got = recv_all(&rx, 2);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], tagged, "tag restored between SMAC and EtherType");
    assert_eq!(got[1], pfc(8), "an untagged frame stays untagged");
}

#[test]
fn the_tunnel_filters_attach_and_select_in_the_kernel() {
    if !require(
        "the_tunnel_filters_attach_and_select_in_the_kernel",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = Pair::new();
    let tx = open(&p.a, "va", Filter::All, BatchOptions::default());
    let srv6 = open(&p.b, "vb", Filter::Srv6, BatchOptions::default());
    let udp = open(
        &p.b,
        "vb",
        Filter::Udp { port: 4789 },
        BatchOptions::default(),
    );
    let mpls = open(&p.b, "vb", Filter::Mpls, BatchOptions::default());
    let mut v6 = vec![0u8; 40 + 8 + 20];
    v6[0] = 0x60;
    v6[6] = 43; // routing header
    let mut v6udp = v6.clone();
    v6udp[6] = 17;
    v6udp[42..44].copy_from_slice(&4789u16.to_be_bytes());
    let mut v4udp = vec![0u8; 20 + 8 + 20];
    v4udp[0] = 0x45;
    v4udp[9] = 17;
    v4udp[22..24].copy_from_slice(&4789u16.to_be_bytes());
    let frames = [
        eth(MAC_B, MAC_A, &[0x86dd], &v6),
        eth(MAC_B, MAC_A, &[0x86dd], &v6udp),
        eth(MAC_B, MAC_A, &[0x0800], &v4udp),
        eth(MAC_B, MAC_A, &[0x8847], &[0, 0, 0x11, 0x40]),
        eth(MAC_B, MAC_A, &[0x0806], &[0; 28]),
    ];
    tx.send_batch(frames.iter().map(Vec::as_slice)).unwrap();
    assert_eq!(recv_all(&srv6, 1), vec![frames[0].clone()]);
    assert_eq!(
        recv_all(&udp, 2),
        vec![frames[1].clone(), frames[2].clone()]
    );
    assert_eq!(recv_all(&mpls, 1), vec![frames[3].clone()]);
    std::thread::sleep(Duration::from_millis(100));
    let mut batch = RxBatch::new(8, 2048);
    for s in [&srv6, &udp, &mpls] {
        assert_eq!(s.recv_batch(&mut batch).unwrap(), 0);
    }
}

#[test]
fn a_full_receive_buffer_is_counted_as_drops() {
    if !require(
        "a_full_receive_buffer_is_counted_as_drops",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = Pair::new();
    let tx = open(&p.a, "va", Filter::All, BatchOptions::default());
    let small = BatchOptions {
        rcvbuf: 4096,
        ..BatchOptions::default()
    };
    let rx = open(&p.b, "vb", Filter::MacControl, small);
    let frames: Vec<Vec<u8>> = (1..=100).map(pfc).collect();
    tx.send_batch(frames.iter().map(Vec::as_slice)).unwrap();
    let st = stats_until(|| rx.stats(), 100);
    assert_eq!(st.packets, 100);
    assert!(st.drops > 50, "{st:?}: a 4 KiB buffer holds a few frames");
    let got = recv_all(&rx, 100);
    assert_eq!(got.len() as u64, 100 - st.drops);
    let e = BatchSocket::open(0, Filter::All, BatchOptions::default()).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}

fn ring(ns: &Netns, name: &'static str, opts: RingOptions) -> RingSocket {
    ns.run(|| RingSocket::open(if_nametoindex(name)?, Filter::MacControl, opts))
        .expect("ring socket")
}

/// Takes frames from the ring until `want` or 2 s.
fn ring_all(s: &mut RingSocket, want: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while got.len() < want && Instant::now() < deadline {
        if !s.ready() {
            wait_any(&[s.as_fd()], Some(Duration::from_millis(50))).unwrap();
        }
        let frames = s.recv_batch(64, |_| panic!("no partial checksums here"));
        got.extend(frames.iter().map(<[u8]>::to_vec));
    }
    got
}

#[test]
fn the_receive_ring_takes_frames_in_order_with_tags_and_counts_overflow() {
    if !require(
        "the_receive_ring_takes_frames_in_order_with_tags_and_counts_overflow",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = Pair::new();
    let tx = open(&p.a, "va", Filter::All, BatchOptions::default());
    let mut rx = ring(&p.b, "vb", RingOptions::default());
    assert_eq!(rx.slots(), 8192);
    let mut frames: Vec<Vec<u8>> = (1..=300).map(pfc).collect();
    frames.insert(10, eth(PFC_DST, MAC_A, &[0x88cc], &[0; 46]));
    let tagged = {
        let mut f = pfc(301);
        f.splice(12..12, [0x81, 0x00, 0x20, 0x05]);
        f
    };
    frames.push(tagged.clone());
    tx.send_batch(frames.iter().map(Vec::as_slice)).unwrap();
    let got = ring_all(&mut rx, 301);
    let mut want: Vec<Vec<u8>> = (1..=300).map(pfc).collect();
    want.push(tagged);
    assert_eq!(got.len(), 301);
    assert!(
        got == want,
        "in order, byte for byte, the tag back in place"
    );
    assert!(!rx.ready());
    // A ring of 32 slots overflows; the kernel counts what it dropped.
    let small = RingOptions {
        frames: 32,
        ..RingOptions::default()
    };
    let mut rx = ring(&p.b, "vb", small);
    assert_eq!(rx.slots(), 32);
    tx.send_batch(
        (1..=100)
            .map(pfc)
            .collect::<Vec<_>>()
            .iter()
            .map(Vec::as_slice),
    )
    .unwrap();
    let st = stats_until(|| rx.stats(), 100);
    assert_eq!((st.packets, st.drops), (100, 68));
    assert_eq!(ring_all(&mut rx, 32), (1..=32).map(pfc).collect::<Vec<_>>());
    let bad = RingOptions {
        frame_size: 1000,
        ..RingOptions::default()
    };
    let e =
        p.b.run(|| RingSocket::open(if_nametoindex("vb")?, Filter::All, bad))
            .unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
}

/// The real-time clock, in ns: the clock of the kernel's frame stamps.
fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// The ring tells when the kernel received each frame, not when the reader got
/// to it: frames read 300 ms after they were sent carry the time they were
/// sent, on the real-time clock.
#[test]
fn the_receive_ring_stamps_each_frame_with_the_kernels_receive_time() {
    if !require(
        "the_receive_ring_stamps_each_frame_with_the_kernels_receive_time",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = Pair::new();
    let tx = open(&p.a, "va", Filter::All, BatchOptions::default());
    let mut rx = ring(&p.b, "vb", RingOptions::default());
    let frames: Vec<Vec<u8>> = (1..=3).map(pfc).collect();
    let before = unix_ns();
    tx.send_batch(frames.iter().map(Vec::as_slice)).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // The receive path may run a moment after the send returns (a busy
    // machine defers it to ksoftirqd): well before the read, though.
    let after = before + 150_000_000;
    wait_any(&[rx.as_fd()], Some(Duration::from_secs(2))).unwrap();
    let got = rx.recv_batch(64, |_| panic!("no partial checksums here"));
    let stamped: Vec<(Vec<u8>, u64)> = got.iter_stamped().map(|(f, t)| (f.to_vec(), t)).collect();
    assert_eq!(stamped.len(), 3);
    for (f, t) in &stamped {
        assert!(frames.contains(f));
        assert!(
            (before..=after).contains(t),
            "stamped {t}, sent at {before} and read 300 ms later"
        );
    }
}

/// A frame sent with a request for its transmit time comes back on the
/// error queue, byte for byte, stamped when the driver took it: after the
/// send began and no later than the far end's receive stamp. Frames sent
/// without the request give nothing back; the error queue wakes a waiter.
#[test]
fn a_frame_sent_with_a_stamp_request_comes_back_with_its_transmit_time() {
    if !require(
        "a_frame_sent_with_a_stamp_request_comes_back_with_its_transmit_time",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = Pair::new();
    let mut tx = ring(&p.a, "va", RingOptions::default());
    tx.report_tx_stamps().unwrap();
    let mut rx = ring(&p.b, "vb", RingOptions::default());
    let frames: Vec<Vec<u8>> = (1..=3).map(pfc).collect();
    let before = unix_ns();
    let sent = tx
        .send_batch_stamped(frames.iter().enumerate().map(|(i, f)| (&f[..], i == 1)))
        .unwrap();
    assert_eq!(sent, 3);
    assert!(
        wait_any(&[tx.as_fd()], Some(Duration::from_secs(2))).unwrap(),
        "the error queue wakes a waiter"
    );
    let mut buf = [0u8; 2048];
    let (n, stamp) = tx.recv_tx_stamp(&mut buf).unwrap();
    assert_eq!(
        &buf[..n],
        &frames[1][..],
        "the stamped frame, byte for byte"
    );
    let e = tx.recv_tx_stamp(&mut buf).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "one stamp, one frame");
    wait_any(&[rx.as_fd()], Some(Duration::from_secs(2))).unwrap();
    let got = rx.recv_batch(64, |_| panic!("no partial checksums here"));
    let received: Vec<(Vec<u8>, u64)> = got.iter_stamped().map(|(f, t)| (f.to_vec(), t)).collect();
    assert_eq!(received.len(), 3, "every frame sent, stamped or not");
    let arrived = received.iter().find(|(f, _)| f == &frames[1]).unwrap().1;
    assert!(
        before <= stamp && stamp <= arrived,
        "sent from {before}, stamped {stamp}, received {arrived}"
    );
}

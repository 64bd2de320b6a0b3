//! What the lossless-sys kernel tests share beyond lossless-testkit's namespaces:
//! a veth pair with packet sockets on both ends, and Ethernet frames.
#![allow(dead_code)] // each test file uses part of it

use lossless_sys::link::if_nametoindex;
use lossless_sys::packet::PacketSocket;

pub use lossless_testkit::{require, Netns, Oracle};

pub const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
pub const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];

/// Two namespaces joined by a veth pair `va` (in a) / `vb` (in b), both up.
pub struct Pair {
    pub a: Netns,
    pub b: Netns,
}

impl Pair {
    pub fn new() -> Pair {
        let lossless_testkit::Pair { a, b, .. } = lossless_testkit::Pair::up();
        Pair { a, b }
    }

    pub fn sockets(&self) -> (PacketSocket, PacketSocket) {
        let sa = self
            .a
            .run(|| PacketSocket::open(if_nametoindex("va")?))
            .expect("packet socket on va");
        let sb = self
            .b
            .run(|| PacketSocket::open(if_nametoindex("vb")?))
            .expect("packet socket on vb");
        (sa, sb)
    }
}

pub fn eth(dst: [u8; 6], src: [u8; 6], types: &[u16], payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    for t in types {
        f.extend_from_slice(&t.to_be_bytes());
    }
    f.extend_from_slice(payload);
    f.resize(f.len().max(60), 0);
    f
}

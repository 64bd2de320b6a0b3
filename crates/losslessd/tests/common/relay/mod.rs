//! The PFC relay of draft-he-rtgwg-wan-pfc-00 in network namespaces, for the
//! tests that run it against the Linux kernel and tshark (`relay.rs`: both PEs
//! ours; `relay_kernel.rs`: the kernel as the other PE).
//!
//! * [`frames`]: the legal and illegal PFC frames DC2-GW sends, and what PE1
//!   must deliver;
//! * [`lab`]: the five namespaces and their links, losslessd in each role, and
//!   packet sockets that read every link;
//! * [`tshark`]: tshark's decode of what the links carried, and what it must
//!   show of each tunnel.

pub mod frames;
pub mod lab;
pub mod tshark;

use std::time::Duration;

use lossless_sys::batch::{BatchOptions, BatchSocket, Filter};
use lossless_sys::if_nametoindex;
use lossless_sys::netns::in_netns;
use lossless_wire::MacAddr;

pub use frames::*;
pub use lab::*;
pub use tshark::*;

/// The transit router's interfaces toward PE1 and PE2.
pub const T1: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 1]);
pub const T2: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 2]);
/// PE1's SRv6 End.DX2 SID (as in `lossless_relay::example`).
pub const PE1_SID: &str = "fc00::e1:d2";

pub const WAIT: Duration = Duration::from_secs(10);

/// In namespace `ns`, the packet sockets of a PE's DC gateway side and WAN
/// side: the generator's on `gen` (it reads nothing: an MPLS filter) and the
/// sink's on `sink` (SRv6 tunnel frames).
pub fn gen_and_sink(ns: &str) -> (BatchSocket, BatchSocket) {
    in_netns(ns, || {
        let g = BatchSocket::open(
            if_nametoindex("gen")?,
            Filter::Mpls,
            BatchOptions::default(),
        )?;
        let s = BatchSocket::open(
            if_nametoindex("sink")?,
            Filter::Srv6,
            BatchOptions::default(),
        )?;
        std::io::Result::Ok((g, s))
    })
    .expect("enter the namespace")
    .expect("open gen and sink")
}

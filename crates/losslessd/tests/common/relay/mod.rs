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

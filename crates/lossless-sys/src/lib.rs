//! Linux system interfaces for the lossless daemon. Everything `unsafe` in the
//! workspace lives here.
//!
//! * [`packet`]: an `AF_PACKET` socket per port that sees only LLDP (0x88cc)
//!   and MAC Control/PFC (0x8808) frames, for the DCBX agent to read and write
//!   whole Ethernet frames.
//! * [`link`]: rtnetlink link state: a non-blocking monitor of
//!   `RTM_NEWLINK`/`RTM_DELLINK`, a blocking dump, and a pure parser of link
//!   messages; `if_nametoindex` and `if_hwaddr`.
//! * [`addr`]: rtnetlink interface addresses: a dump, a monitor of
//!   `RTM_NEWADDR`/`RTM_DELADDR`, and the pure parser; [`host`]: `uname(2)`.
//! * [`timestamp`]: an `AF_PACKET` socket per port for link-delay measurement frames
//!   (0x88B5) with kernel timestamps (`SO_TIMESTAMPING`, hardware where the NIC has it).
//! * [`batch`]: batched `AF_PACKET` I/O (`recvmmsg`/`sendmmsg`) with a filter
//!   per port, for the PFC relay's data path.
//! * [`xdp`]: the PFC relay's XDP program: loaded (aya), configured,
//!   attached, its counters read, run on test or live frames.
//! * [`netns`]: run code (open sockets) inside a named network namespace.
//! * [`heap`]: give the heap's free memory back to the system (`malloc_trim`).
//! * [`dcbnl`]: the kernel's DCB netlink interface (`RTM_GETDCB`/`RTM_SETDCB`)
//!   for what a CEE agent programs: DCB state, PFC, priority groups, SET_ALL;
//!   what an IEEE 802.1Qaz agent programs: ETS, PFC with the delay allowance
//!   adaptive headroom sizes, APP entries, the trust order, the DCBX mode;
//!   and the DCB buffer.
//! * [`ethtool`]: a driver's statistics by name (the `SIOCETHTOOL` ioctl);
//!   [`ethtool_nl`]: ethtool's generic netlink family, a NIC's link flow control
//!   (pause) and its driver's private flags, refusals with the driver's errno and
//!   the kernel's extack message.
//!
//! Sockets are non-blocking where the daemon polls them (packet, link
//! monitor) and implement [`AsRawFd`](std::os::fd::AsRawFd) and
//! [`AsFd`](std::os::fd::AsFd); [`reactor::async_fd`] registers them with
//! tokio. Every decoder is a pure function over bytes that returns a typed
//! error and never panics.

pub mod addr;
pub mod batch;
// The socket filters' programs run in user space: their tests, and
// `batch::Filter::accepts` for the relay host's predicate tests.
mod bpf_interp;
mod cbpf;
pub mod dcbnl;
pub mod ethtool;
pub mod ethtool_nl;
pub mod heap;
pub mod host;
pub mod link;
mod netlink;
pub mod netns;
pub mod packet;
pub mod reactor;
pub mod ring;
mod send;
pub mod shared_packet;
mod sys;
pub mod timestamp;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod uapi_tests;
pub mod xdp;

pub use dcbnl::{
    AppSelector, DcbApp, DcbBuffer, DcbCmd, DcbError, DcbErrorKind, Dcbnl, DcbxMode, IeeeConfig,
    IeeeEts, IeeePfc, IeeeSet, IeeeState, PfcSetting, PgConfig, PgDir, PgSetting, TcConfig, Tsa,
};
pub use ethtool_nl::{EthtoolError, EthtoolNl, EthtoolOp, Pause};
pub use link::{
    dump_links, if_hwaddr, if_nametoindex, parse_link_messages, LinkError, LinkEvent, LinkInfo,
    LinkMonitor,
};
pub use netlink::NetlinkError;
pub use packet::PacketSocket;
pub use timestamp::{realtime_ps, Clock, Clocks, MeasureSocket, TimestampMode};

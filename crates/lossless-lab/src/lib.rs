//! The lab: simulated links on a virtual clock running the real cores.
//!
//! One simulator ([`sim`]) runs the node core losslessd runs, the relay's data
//! path (started by the node core, as in the daemon), a WAN transit router
//! ([`transit`]) and bare measurement sessions. On it: the adaptive-headroom
//! links ([`headroom`]), draft-he-rtgwg-wan-pfc-00's WAN path ([`wan_relay`]), the named
//! scenarios of `lossless lab` ([`scenario`]), the tests and the benches.
//! Dependencies run one way: [`sim`] (with [`describe`], [`nic`], [`transit`],
//! [`timeline`]) <- [`agents`], [`scripted`], [`pcap`], [`headroom`],
//! [`wan_relay`] <- [`scenario`].

pub mod agents;
pub mod describe;
pub mod headroom;
pub mod nic;
pub mod pcap;
pub mod roce_host;
pub mod scenario;
pub mod scripted;
pub mod sim;
pub mod timeline;
pub mod transit;
pub mod wan_relay;

pub use sim::{LogEntry, NodeId, PathProps, SegmentId, Sim};

//! The lab: simulated links on a virtual clock running the real cores.
//!
//! Used by the scenario tests, the benches and `lossless lab`.

pub mod agents;
pub mod describe;
pub mod headroom;
pub mod nic;
pub mod pcap;
pub mod scenario;
pub mod scripted;
pub mod sim;
pub mod timeline;
pub mod transit;
pub mod wan_relay;

pub use sim::{LogEntry, NodeId, PathProps, SegmentId, Sim};

//! The LLDP agent's parts, kept apart: transmit timing, the remote MIB, and what the
//! agent says about its own system.

pub mod local;
pub mod rx;
pub mod tx;

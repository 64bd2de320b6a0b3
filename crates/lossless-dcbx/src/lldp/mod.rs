//! The LLDP agent's two halves, kept apart: transmit timing and the remote MIB.

pub mod rx;
pub mod tx;

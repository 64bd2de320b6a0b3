//! The LLDP agent's parts, kept apart: transmit timing, the remote MIB, the MSAPs
//! tooManyNeighbors discarded, and which neighbour DCBX talks to.

pub mod discarded;
pub mod peer;
pub mod rx;
pub mod tx;

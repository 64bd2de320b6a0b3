//! The LLDP agent's parts, kept apart: transmit timing, the remote MIB, the MSAPs
//! tooManyNeighbors discarded, which neighbour DCBX talks to, and what the agent says
//! about its own system.

pub mod discarded;
pub mod local;
pub mod msap;
pub mod peer;
pub mod rx;
pub mod tx;

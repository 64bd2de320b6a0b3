//! The LLDP agent's parts, kept apart: transmit timing, the remote MIB, the MSAPs
//! tooManyNeighbors discarded, and which neighbour DCBX talks to. What the agent says
//! about its own system is the configuration's (`config::lldpdu`).

pub mod discarded;
pub mod msap;
pub mod peer;
pub mod rx;
pub mod tx;

//! losslessd: the DCBX core on real Linux interfaces.

pub mod config;
pub mod state;

//! losslessd: the DCBX core on real Linux interfaces.

pub mod config;
pub mod control;
pub mod daemon;
pub mod headroom;
pub mod metrics;
pub mod port;
pub mod protocol;
pub mod relay;
pub mod runtime;
pub mod state;

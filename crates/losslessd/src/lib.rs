//! losslessd: the node core ([`lossless_node`]) on real Linux interfaces. This crate is
//! the runtime only: sockets, netlink, dcbnl, files, timers, the control socket, the
//! relay's data-path threads.

mod closer;
pub mod config_file;
pub mod control;
mod control_state;
pub mod convert;
mod execute;
pub mod host;
pub mod logging;
pub mod metrics_http;
pub mod pfc_reader;
mod port_sockets;
pub mod relay;
pub mod roce_worker;
pub mod runtime;
mod socket_switch;
pub mod state_dir;
pub mod web_config;

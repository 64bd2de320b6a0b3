//! losslessd: the node core ([`lossless_node`]) on real Linux interfaces. This crate is
//! the runtime only: sockets, netlink, dcbnl, files, timers, the control socket, the
//! relay's data-path threads.

mod clock;
mod closer;
pub mod config_file;
pub mod control;
mod control_state;
pub mod convert;
mod dcbnl_device;
mod execute;
mod frames;
pub mod host;
mod input;
mod io;
pub mod logging;
mod measure_io;
pub mod metrics_http;
pub mod pfc_reader;
mod port_sockets;
pub mod relay;
pub mod roce_worker;
mod route;
pub mod runtime;
mod socket_switch;
pub mod state_dir;
pub mod web_config;

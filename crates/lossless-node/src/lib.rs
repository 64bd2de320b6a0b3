//! The node core: one host's (or switch's) ports, sans-IO.
//!
//! A [`Node`](node::Node) holds every managed port: its LLDP/DCBX agent, its adaptive
//! headroom (measurement session, sizing, hysteresis) and what reached its NIC, plus
//! the configuration, the runtime overrides and the relay's settings. It is driven by
//! `handle_*(now, ...)` calls and drained with `poll_output()` / `poll_timeout()`:
//! opening sockets, sending frames, programming the NIC, persisting state and answering
//! control requests are outputs the caller carries out and reports back as typed
//! inputs. losslessd runs it on real interfaces; the lab and the tests run the same
//! core on a virtual clock.
//!
//! The configuration file is parsed here ([`config`]), the control protocol's types,
//! its line framing and the views (status, metrics) live here ([`protocol`],
//! [`framing`], [`metrics`]), so the CLI needs neither the daemon's runtime nor its
//! system crate.

pub mod config;
pub mod control_limits;
pub mod damping;
mod damping_metrics;
pub mod dcb_device;
pub mod dcbx_config_metrics;
pub mod doctor;
pub mod event_words;
mod exposition;
pub mod framing;
pub mod hardware;
pub mod headroom;
pub mod health;
pub mod identity;
pub mod link;
pub mod metrics;
pub mod nic;
pub mod node;
pub mod pfc;
pub mod port;
pub mod protocol;
pub mod relay;
pub mod relay_metrics;
pub mod roce;
mod roce_metrics;
pub mod rx_budget;
pub mod state;
pub mod timestamps;

pub use node::{Node, Now, Output};

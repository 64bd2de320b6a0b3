//! What `lossless relay show [--json]` gets from the daemon: the views live
//! beside the relay host that builds them ([`lossless_relay::show`]).

pub use lossless_relay::show::{AcceptedPfc, GatewayShow, PortIo, RelayShow, XdpShow};

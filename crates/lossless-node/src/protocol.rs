//! The control-socket protocol: JSON lines over a Unix stream socket.
//!
//! The requests, the responses and the views both ends read are in `lossless-proto`
//! (re-exported here, so `lossless_node::protocol::X` keeps naming them); the node
//! builds them.

pub use lossless_proto::dcbx::{DcbxView, NicView, PortDcbx, RefusedView};
pub use lossless_proto::events::{DaemonEvent, EventBody, EventRecord, EventsResult};
pub use lossless_proto::reload::{ReloadResult, Shadowed};
pub use lossless_proto::request::*;
pub use lossless_proto::response::*;
pub use lossless_proto::status::{DaemonInfo, PortStatusLine, PortSummary, StatusResult};
pub use lossless_proto::views::*;
pub use lossless_proto::Hardware;

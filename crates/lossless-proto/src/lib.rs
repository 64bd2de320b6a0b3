//! losslessd's control protocol: JSON lines over a Unix stream socket, typed both ways.
//!
//! The client writes one [`Request`] object on one line; the daemon answers with one
//! [`Response`] line, `{"ok":true,"result":...}` or
//! `{"ok":false,"error":{"kind":...,"message":...}}`. An `events` request with
//! `follow` keeps the connection open and streams one event record per line after the
//! response. Field names are a stable interface, documented in docs/daemon.md;
//! additions are allowed, renames and removals are not.
//!
//! Every view a result carries is a plain value here, `Serialize` and `Deserialize`:
//! the daemon (through `lossless-node`, which builds them) writes them, and clients
//! (`lossless-client`, the CLI) read them back as the same types, so a renamed field
//! fails to compile or fails a test rather than blanking a column. Views are what the
//! protocol shows, not the state machines' internals (the Control machine is
//! [`ControlView`], without where its SeqNo starts).

pub mod app;
pub mod dcbx;
pub mod events;
pub mod hardware;
pub mod headroom;
pub mod nic;
pub mod pfc;
pub mod reload;
pub mod request;
pub mod response;
pub mod status;
pub mod views;

pub use app::{AppRule, AppRules, RuleError, RuleSelector};
pub use dcbx::{DcbxView, NicView, PortDcbx, RefusedView};
pub use events::{DaemonEvent, EventBody, EventRecord, EventsResult};
pub use hardware::{CeeNic, CeePg, Hardware, HardwareError, HardwareErrorKind};
pub use reload::{ReloadResult, Shadowed};
pub use request::{
    AppRuleChange, AppRulesChange, EtsChange, FeatureChange, FeatureName, Request, TcChange,
};
pub use response::{ErrorBody, ErrorKind, Response, DEFAULT_SOCKET, PROTOCOL_VERSION};
pub use status::{
    DaemonInfo, Health, PortStatusLine, PortSummary, RoceSettingView, RoceView, StateDirProblem,
    StateDirReason, StateSetAside, StatusResult,
};
pub use views::{
    Changed, ControlView, CountersResult, FeatureSources, IeeeAdmin, IoCounters, PortCounters,
    PortNeighbors, Ports, SharedSocketCounters, Source, Sources,
};

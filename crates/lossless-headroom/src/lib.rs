//! PFC headroom: how much buffer a receiver must hold back per lossless priority so that
//! nothing is dropped between deciding to send PFC and the last bit the peer still sends.
//!
//! One concept per module, in the order a calculation uses them:
//!
//! - [`units`]: quantities as typed (`100m`, `5us`, `100G`, `74q`) and back, exactly.
//! - [`phy`]: interface delay per station (PFC Delay Value Constraint Model, table 1;
//!   per-speed defaults).
//! - [`medium`]: cable delay from medium and length (PFC Delay Value Constraint Model,
//!   section 5).
//! - [`dv`]: the Delay Value and every term (PFC Delay Value Constraint Model, section 3).
//! - [`cells`]: bits to buffer cells, alpha, xoff/xon thresholds.
//! - [`wan`]: the WAN buffer condition of draft-he-rtgwg-wan-pfc-00.
//! - [`adaptive`]: headroom from a measured delay (Adaptive PFC Headroom, phase 3).
//! - [`session`]: the link-delay measurement exchange (Adaptive PFC Headroom, phase 2),
//!   both ends.
//! - [`sizing`]: a measurement to the headroom a port reserves, with hysteresis.
//! - [`report`]: one calculation end to end, and its text and JSON forms.
//! - [`static_table`]: a vendor's static headroom table (SONiC's), to compare against.
//!
//! Sans-IO and clock-free: callers hand in every input, including the time and measured
//! timestamps.

pub mod adaptive;
pub mod cells;
pub mod dv;
pub mod medium;
pub mod phy;
pub mod report;
pub mod session;
pub mod sizing;
pub mod source;
pub mod static_table;
pub mod units;
pub mod wan;

pub use report::{calc, CalcError, Report, Request};

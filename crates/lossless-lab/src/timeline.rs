//! One row of a run's timeline, as `lossless lab` prints it and its JSON
//! carries it: the DCBX scenarios' frames and state changes, the wan-relay
//! scenario's hops.

use serde::Serialize;

/// One line of the timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineRow {
    /// Seconds since the start of the run.
    pub t: f64,
    /// Agent name, or "-" for operator actions.
    pub node: String,
    /// "tx", "lost", "event" or "action".
    pub kind: &'static str,
    pub text: String,
}

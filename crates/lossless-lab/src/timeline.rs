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
    /// What happened, in words (an event as `lossless events` writes one:
    /// `neighbor_added chassis_id=...`).
    pub text: String,
    /// An event's own JSON object, as the daemon publishes it (events only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<serde_json::Value>,
}

impl TimelineRow {
    /// A row for an event: its words, and the event itself for the JSON form.
    pub fn event(t: f64, node: String, kind: &'static str, event: &impl Serialize) -> TimelineRow {
        let value = serde_json::to_value(event).unwrap_or_default();
        TimelineRow {
            t,
            node,
            kind,
            text: lossless_node::event_words::event_words(&value),
            event: Some(value),
        }
    }
}

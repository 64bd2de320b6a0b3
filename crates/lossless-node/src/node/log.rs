//! What the node writes to the log, for people and for log shippers alike: each DCBX
//! event as plain fields (`event=syncd feature=pfc`, the names `events` and the
//! socket use), never Rust's Debug form; numbers rounded as a person reads them.
//! Names and numbers are recorded with `%` (Display), unquoted; text with spaces as a
//! `&str`, which the text form quotes (`why="configurations incompatible (mismatch)"`).

use lossless_dcbx::Event;
use serde::Serialize;
use tracing::{info, warn};

/// Logs one of the agent's events on `port`; `peer` is the MAC of its neighbour.
pub(super) fn event(port: &str, peer: &str, e: &Event) {
    let kind = e.kind().name();
    match e {
        Event::NeighborAdded {
            chassis_id,
            port_id,
        } => {
            info!(port = %port, peer = %peer, event = %kind,
                chassis_id = %chassis_id, port_id = %port_id, "dcbx");
        }
        Event::NeighborRemoved {
            chassis_id,
            port_id,
            why,
        } => {
            info!(port = %port, peer = %peer, event = %kind,
                chassis_id = %chassis_id, port_id = %port_id, why = %name(why), "dcbx");
        }
        Event::TooManyNeighbors { active } => {
            warn!(port = %port, peer = %peer, event = %kind, active, "dcbx");
        }
        Event::NeighborHoldExpired {
            chassis_id,
            port_id,
        } => {
            warn!(port = %port, peer = %peer, event = %kind,
                chassis_id = %chassis_id, port_id = %port_id, "dcbx");
        }
        Event::PeerDcbx { present } => {
            info!(port = %port, peer = %peer, event = %kind, present, "dcbx");
        }
        Event::Incompatible { feature } => {
            warn!(port = %port, peer = %peer, event = %kind, feature = %feature,
                "dcbx");
        }
        Event::FeatureNotPresentOnPeer { feature } => {
            info!(port = %port, peer = %peer, event = %kind,
                feature = %feature, "dcbx");
        }
        Event::ErrorSet { feature, reason } => {
            warn!(port = %port, peer = %peer, event = %kind, feature = %feature,
                reason = %name(reason), why = reason.describe(), "dcbx");
        }
        Event::ErrorCleared { feature } => {
            info!(port = %port, peer = %peer, event = %kind, feature = %feature,
                "dcbx");
        }
        Event::OperChanged { feature, oper_mode } => {
            info!(port = %port, peer = %peer, event = %kind, feature = %feature,
                oper_mode, "dcbx");
        }
        Event::Syncd { feature } => {
            info!(port = %port, peer = %peer, event = %kind, feature = %feature, "dcbx");
        }
        Event::FrameDiscarded(d) => {
            // `event` names the event as the JSON's tag and the metrics do; the
            // discard's own kind is `kind`.
            info!(port = %port, peer = %peer, event = %kind, field = %d.field,
                kind = %d.kind, error = d.error.as_str(), "dcbx");
        }
        Event::ModeChanged { from, to, reason } => {
            info!(port = %port, peer = %peer, event = %kind, from = %from.name(),
                to = %to.name(), reason = %name(reason), "dcbx");
        }
    }
}

/// The name a value has on the socket and in `events` (its serde name): `ttl_expired`,
/// `incompatible`, `grow`.
pub(crate) fn name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// `x` to two decimals, as a person reads a duration in milliseconds (11.88, not
/// 11.883112999999999).
pub(crate) fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_rounding() {
        assert_eq!(
            name(&lossless_dcbx::NeighborLoss::TtlExpired),
            "ttl_expired"
        );
        assert_eq!(name(&lossless_dcbx::Reason::Incompatible), "incompatible");
        assert_eq!(round2(0.231_112_999_999_999_99), 0.23);
        assert_eq!(round2(11.883), 11.88);
        assert_eq!(format!("{}", round2(0.23111299999999999)), "0.23");
    }
}

//! The PFC relay (draft-he-rtgwg-wan-pfc-00) as the node controls it: its data path
//! runs in the caller's threads, on its own sockets; the node decides when it starts,
//! restarts and stops (its `[relay]` section), and answers `relay show` from the status
//! the caller reads for it.

use lossless_relay::RelaySection;
use tracing::error;

use super::requests::Busy;
use super::{Node, Now, Output, RelayStartError, RequestId};
use crate::protocol::{ErrorKind, Response};
use crate::relay::RelayShow;

/// What the node asked of the relay's data path.
#[derive(Debug, Default)]
pub(super) struct RelayControl {
    /// The section the data path runs (it said it started).
    running: Option<RelaySection>,
    /// A start asked for, not answered yet.
    starting: Option<RelaySection>,
    /// Why the last start failed.
    failed: Option<RelayStartError>,
}

impl RelayControl {
    pub(super) fn running(&self) -> bool {
        self.running.is_some() || self.starting.is_some()
    }
}

impl Node {
    /// Starts, stops or restarts the relay to match the configuration; says which. A
    /// changed section restarts it (its counters start again).
    pub(super) fn sync_relay(&mut self) -> &'static str {
        let want = self.config.relay.clone();
        let have = self.relay.starting.as_ref().or(self.relay.running.as_ref());
        let what = match (&want, have) {
            (None, None) => return "none",
            (Some(w), Some(r)) if r == w => return "unchanged",
            (None, Some(_)) => "stopped",
            (Some(_), Some(_)) => "restarted",
            (Some(_), None) => "started",
        };
        self.relay.running = None;
        self.relay.failed = None;
        match want {
            Some(section) => {
                self.relay.starting = Some(section.clone());
                self.outputs
                    .push_back(Output::StartRelay(Box::new(section)));
            }
            None => {
                self.relay.starting = None;
                self.outputs.push_back(Output::StopRelay);
            }
        }
        what
    }

    pub(super) fn relay_starting(&self) -> bool {
        self.relay.starting.is_some()
    }

    /// The answer to [`Output::StartRelay`]: Ok, or why the data path could not start.
    pub fn handle_relay_started(&mut self, now: Now, result: Result<(), RelayStartError>) {
        let Some(section) = self.relay.starting.take() else {
            return;
        };
        let failed = result.is_err();
        match result {
            Ok(()) => self.relay.running = Some(section),
            Err(e) => {
                error!(error = %e, "relay not started");
                self.relay.failed = Some(e);
            }
        }
        if let Some(Busy::StartRelay { .. }) = &self.requests.busy {
            if let Some(Busy::StartRelay { id, mut result }) = self.requests.busy.take() {
                if failed {
                    result.relay = "failed".into();
                }
                self.reloaded(id, result);
                self.run_queued(now);
            }
        }
    }

    /// `relay show`: asks for the running relay's status, or says why there is none.
    pub(super) fn relay_read(&mut self, id: RequestId) -> Result<(), Response> {
        if self.relay.running.is_some() {
            self.outputs.push_back(Output::ReadRelay { id });
            return Ok(());
        }
        Err(match &self.relay.failed {
            Some(why) => Response::err(
                ErrorKind::Unavailable,
                format!("the relay did not start: {why}"),
            ),
            None => Response::err(
                ErrorKind::NotConfigured,
                "no [relay] section in the configuration",
            ),
        })
    }

    /// The answer to [`Output::ReadRelay`]: the relay's status (None: it is gone).
    pub fn handle_relay_status(&mut self, _now: Now, id: RequestId, status: Option<RelayShow>) {
        let response = match status {
            Some(show) => Response::ok(serde_json::to_value(show).unwrap_or_default()),
            None => Response::err(ErrorKind::Unavailable, "the relay is not running"),
        };
        self.reply(id, response);
    }
}

//! How the state directory stands, as the runtime reports it: a problem (the directory
//! not writable, not trusted, not durable), and a state file refused at start and set
//! aside. Both are the node's health, `status`, events and metrics; a problem that
//! refuses changes makes every runtime change answer why (the runtime tries the
//! directory again on each change, and every [`STATE_RECHECK`] while a problem lasts).

use tracing::{error, info, warn};

use super::{Node, Now};
use crate::protocol::{DaemonEvent, EventBody};
use crate::state::{StateDirHealth, StateDirProblem, StateDirReason, StateSetAside};

/// How often the runtime tries the state directory again while it has a problem.
pub const STATE_RECHECK: std::time::Duration = std::time::Duration::from_secs(5);

impl Node {
    /// The state directory's problem now (None: it works). Published and logged when
    /// it changes.
    pub fn handle_state_dir(&mut self, now: Now, problem: Option<StateDirProblem>) {
        if self.state_dir.problem == problem {
            return;
        }
        match &problem {
            Some(p) if p.reason.refuses_changes() => error!(
                reason = p.reason.as_str(),
                "state directory: {p}: runtime changes are refused until it can be used"
            ),
            Some(p) => warn!(reason = p.reason.as_str(), "state directory: {p}"),
            None => info!("state directory usable again: runtime changes persist"),
        }
        self.state_dir.problem = problem.clone();
        self.publish(
            now,
            "",
            EventBody::Daemon(DaemonEvent::StateDir { problem }),
        );
    }

    /// The state file was refused at start: the daemon runs on the configuration file.
    pub fn handle_state_set_aside(&mut self, now: Now, set_aside: StateSetAside) {
        match &set_aside.moved_to {
            Some(to) => error!(
                "state file {} refused ({}): moved to {to}; running on the configuration file",
                set_aside.path, set_aside.why
            ),
            None => error!(
                "state file {} refused ({}): left in place; running on the configuration file",
                set_aside.path, set_aside.why
            ),
        }
        self.state_dir.set_aside = Some(set_aside.clone());
        self.publish(
            now,
            "",
            EventBody::Daemon(DaemonEvent::StateSetAside { set_aside }),
        );
    }

    /// A change was persisted whole: the directory works, and the operator has acted
    /// since a state file was set aside.
    pub(super) fn state_dir_usable(&mut self, now: Now) {
        self.handle_state_dir(now, None);
        self.state_dir.set_aside = None;
    }

    /// The state directory's problem (None: it works).
    pub fn state_dir_problem(&self) -> Option<&StateDirProblem> {
        self.state_dir.problem.as_ref()
    }
}

/// `lossless_state_dir_writable`, `lossless_state_dir_problem{reason}` and
/// `lossless_state_file_set_aside`.
pub(super) fn render_metrics(s: &StateDirHealth, text: &mut String) {
    crate::exposition::header(
        text,
        "lossless_state_dir_writable",
        "1 when runtime changes persist in the state directory, 0 while they are refused \
         (the directory not writable or not trusted).",
        "gauge",
    );
    let writable = s
        .problem
        .as_ref()
        .is_none_or(|p| !p.reason.refuses_changes());
    text.push_str(&format!(
        "lossless_state_dir_writable {}\n",
        u8::from(writable)
    ));
    crate::exposition::header(
        text,
        "lossless_state_dir_problem",
        "1 for the state directory's problem (reason), 0 for the others.",
        "gauge",
    );
    for reason in StateDirReason::ALL {
        let on = s.problem.as_ref().is_some_and(|p| p.reason == reason);
        text.push_str(&format!(
            "lossless_state_dir_problem{{reason=\"{}\"}} {}\n",
            reason.as_str(),
            u8::from(on)
        ));
    }
    crate::exposition::header(
        text,
        "lossless_state_file_set_aside",
        "1 when the state file was refused at start (damaged, not understood or not \
         trusted) and the daemon runs without it, until a runtime change is persisted.",
        "gauge",
    );
    text.push_str(&format!(
        "lossless_state_file_set_aside {}\n",
        u8::from(s.set_aside.is_some())
    ));
}

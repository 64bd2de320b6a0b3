//! `lossless doctor`: one verdict on a RoCE host, check by check, from facts the caller
//! gathered (sans-IO: the CLI reads the host, the NIC and the daemon; this module only
//! judges).
//!
//! Per port, [`check_port`] takes [`PortFacts`] (the host's RoCE settings as
//! [`crate::roce::HostRoce`], the NIC's DCB state as dcbnl reads it back, the netdev's
//! MTU, the driver's ethtool statistics, and what the running daemon says, when one
//! answers) and returns one [`Check`] per item, each `ok`, `problem` or `unknown` with
//! the evidence and the command that fixes it. A fact that could not be read makes its
//! check `unknown` with why, never `ok`.
//!
//! Which priority and DSCP RoCE runs on is decided first ([`class::RoceClass`]): from
//! the APP entries of the configuration the daemon runs, or, without a daemon, from the
//! NIC's APP table (or from `--priority`/`--dscp`); the `roce_class` check says which.

mod checks;
pub mod class;
pub mod facts;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use serde::{Deserialize, Serialize};

pub use checks::check_port;
pub use facts::{
    discard_priority, AnswerError, Daemon, DaemonPort, GivenClass, NicFacts, PortFacts,
    DISCARD_STATS_HELP,
};

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Checked, and as a lossless RoCE host needs it.
    Ok,
    /// Checked, and wrong: the evidence says what, `fix` how to put it right.
    Problem,
    /// Could not be checked: the evidence says why (a fact not read, not exposed).
    Unknown,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Problem => "problem",
            Status::Unknown => "unknown",
        }
    }
}

/// The checks, in the order they are made and shown.
pub const CHECKS: [&str; 16] = [
    "roce_class",
    "dcbx",
    "pfc",
    "app",
    "nic",
    "trust",
    "tos",
    "roce_mode",
    "ecn",
    "cnp",
    "global_pause",
    "fw_agent",
    "mtu",
    "headroom",
    "watchdog",
    "discards",
];

/// One check of one port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    pub port: String,
    /// One of [`CHECKS`].
    pub check: String,
    pub status: Status,
    /// What was seen (or why it could not be).
    pub evidence: String,
    /// What puts it right (a command, a configuration key); null when ok.
    pub fix: Option<String>,
}

/// Every check of every port: `ok` when each one is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    pub ok: bool,
    pub checks: Vec<Check>,
}

impl Report {
    pub fn new(checks: Vec<Check>) -> Report {
        Report {
            ok: !checks.is_empty() && checks.iter().all(|c| c.status == Status::Ok),
            checks,
        }
    }

    /// How many checks have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.checks.iter().filter(|c| c.status == status).count()
    }

    /// 0: every check ok; 1: a problem; 2: no problem, but something could not be
    /// checked (or there was nothing to check).
    pub fn exit_code(&self) -> u8 {
        if self.count(Status::Problem) > 0 {
            1
        } else if self.ok {
            0
        } else {
            2
        }
    }
}

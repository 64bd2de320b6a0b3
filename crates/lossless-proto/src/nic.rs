//! What `dcbx show` says of the NIC: each part of a programming the driver refused,
//! and what the daemon does when the NIC drifts.

use lossless_wire::app_name;
use lossless_wire::ieee::AppPriority;
use serde::{Deserialize, Serialize};

use crate::hardware::HardwareError;

/// What to do when the NIC no longer holds what was programmed (`nic_drift`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriftPolicy {
    /// Program it back (once per read), count it, report it.
    #[default]
    Repair,
    /// Count it and report it (a health problem); leave the NIC as it is.
    Report,
}

impl DriftPolicy {
    pub fn name(self) -> &'static str {
        match self {
            DriftPolicy::Repair => "repair",
            DriftPolicy::Report => "report",
        }
    }
}

/// One part of an IEEE programming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "part", content = "entry")]
pub enum Part {
    Ets,
    Pfc,
    /// An APP entry to add.
    App(AppPriority),
    /// An APP entry of ours to withdraw.
    Withdrawal(AppPriority),
    /// The selector trust order.
    Trust,
    /// The DCBX mode (`DCB_CMD_SDCBX`: host-managed, the version that runs).
    DcbxMode,
}

/// A part the driver refused, and its answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    #[serde(flatten)]
    pub part: Part,
    pub error: HardwareError,
}

/// `dscp 26 (AF31) -> 3`.
pub fn app_text(e: &AppPriority) -> String {
    app_name::app_entry(e.selector.into(), e.protocol, e.priority)
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let answer = self.error.answer();
        match &self.part {
            Part::Ets => write!(f, "ETS: refused by the driver ({answer})"),
            Part::Pfc => write!(f, "PFC: refused by the driver ({answer})"),
            Part::App(e) => write!(f, "APP {}: refused by the driver ({answer})", app_text(e)),
            Part::Withdrawal(e) => write!(
                f,
                "APP {}: the driver refused to remove it ({answer})",
                app_text(e)
            ),
            Part::Trust => write!(f, "DSCP trust: refused by the driver ({answer})"),
            Part::DcbxMode => write!(
                f,
                "DCBX mode (host-managed): refused by the driver ({answer}); a firmware agent may own DCBX"
            ),
        }
    }
}

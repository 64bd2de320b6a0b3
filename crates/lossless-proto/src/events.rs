//! `events`: the records the daemon keeps and streams, the agent's DCBX events, the
//! daemon's own and the PFC watchdog's.

use lossless_dcbx::Event;
use serde::{Deserialize, Serialize};

use crate::hardware::HardwareErrorKind;
use crate::pfc::PfcEvent;
use crate::status::{StateDirProblem, StateSetAside};
use crate::views::Source;

/// One streamed event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Seconds since the Unix epoch.
    pub time: f64,
    pub port: String,
    #[serde(flatten)]
    pub event: EventBody,
}

/// `events`: the last events the daemon kept, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsResult {
    pub events: Vec<EventRecord>,
}

/// The agent's notifications plus the daemon's own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EventBody {
    Agent(Event),
    Daemon(DaemonEvent),
    /// The PFC counters and the storm watchdog.
    Pfc(PfcEvent),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum DaemonEvent {
    PortAdded {
        ifindex: u32,
    },
    PortRemoved {
        ifindex: u32,
    },
    LinkChanged {
        up: bool,
    },
    ConfigChanged {
        source: Source,
    },
    /// Operational PFC and PG were programmed through dcbnl.
    HardwareApplied,
    HardwareError {
        error: String,
        /// What went wrong, by kind (absent in events of older daemons).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<HardwareErrorKind>,
    },
    /// A read-back found the NIC changed behind the daemon's back (`dcb`,
    /// `mlnx_qos`, lldpad, a firmware reset): what differs now, and whether it is
    /// being programmed back (`nic_drift = "repair"`).
    NicDrift {
        differences: Vec<String>,
        repairing: bool,
    },
    /// RoCE host settings were written where the host did not hold the configured
    /// value (each `roce.KEY = value`).
    RoceApplied {
        settings: Vec<String>,
    },
    /// The host refused a RoCE host setting, or took the write and did not keep it:
    /// each `roce.KEY: why`. Not written again until the configuration changes or
    /// the device comes back.
    RoceRefused {
        refusals: Vec<String>,
    },
    /// A RoCE host setting that held changed behind the daemon's back (an operator's
    /// script, a driver reload): what it became, and whether it is written back
    /// (`nic_drift = "repair"`).
    RoceDrift {
        settings: Vec<String>,
        repairing: bool,
    },
    /// A link-delay measurement round ended (`measured` with its result, or `failed`).
    HeadroomMeasured {
        result: lossless_headroom::session::MeasureEvent,
    },
    /// The headroom the port holds changed (first result, growth, or a shrink the
    /// hysteresis let through).
    HeadroomChanged {
        bytes: u64,
        cells: u64,
        decision: lossless_headroom::sizing::Decision,
    },
    /// What reached the NIC for the headroom: the IEEE PFC delay (`pfc_delay`, as
    /// `hardware` in `headroom show`) and the DCB buffer (`buffer`, each with its
    /// `state` and, when it was not programmed, the `reason`).
    HeadroomHardware {
        pfc_delay: serde_json::Value,
        buffer: serde_json::Value,
    },
    /// The DCBX peer flaps: more than `damping::FLAP_CHANGES` changes of what the
    /// port runs in a window of `window_s` seconds (`active`, at the start and at the
    /// end of each such window, with its `changes` and the DCBX events of the churn
    /// `suppressed`: neither logged nor kept), or no longer (`active: false`, after
    /// three windows without a change).
    Flapping {
        active: bool,
        changes: u32,
        window_s: u64,
        suppressed: u32,
    },
    /// The state directory's problem began or changed (`problem`), or ended (absent).
    StateDir {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        problem: Option<StateDirProblem>,
    },
    /// The state file was refused at start; the daemon runs without it.
    StateSetAside {
        #[serde(flatten)]
        set_aside: StateSetAside,
    },
}

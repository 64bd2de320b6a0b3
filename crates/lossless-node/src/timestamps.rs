//! The clocks a measurement socket timestamps with: what the configuration asks for and
//! what the runtime got.

use serde::{Deserialize, Serialize};

/// Where a timestamp is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// The NIC's PTP hardware clock, at the MAC.
    Hardware,
    /// The kernel, `CLOCK_REALTIME`, in the network stack and driver.
    Software,
    /// The caller, `CLOCK_REALTIME`, right after `send` (transmit only).
    Userspace,
}

/// What `headroom.timestamps` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimestampMode {
    /// Hardware where the NIC offers it, else software.
    #[default]
    Auto,
    /// Software only, never touching the NIC's timestamping setting.
    Software,
    /// Hardware or fail.
    Hardware,
}

/// The clocks in use on a measurement socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clocks {
    pub rx: Clock,
    pub tx: Clock,
}

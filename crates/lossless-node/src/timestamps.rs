//! The clocks a measurement socket timestamps with: what the configuration asks for and
//! what the runtime got.

use serde::{Deserialize, Serialize};

pub use lossless_proto::headroom::Clock;

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

pub use lossless_proto::headroom::Clocks;

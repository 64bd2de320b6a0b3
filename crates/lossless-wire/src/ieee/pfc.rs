//! The PFC Configuration TLV (IEEE 802.1Q-2018 D.2.11): which priorities
//! are lossless.

use serde::{Deserialize, Serialize};

use super::{InvalidValue, PriorityMap, MAX_TCS};

/// PFC configuration as sent in the PFC Configuration TLV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PfcConfig {
    /// Willing to take the peer's PFC configuration.
    pub willing: bool,
    /// MACsec bypass capability: the station can bypass MACsec for PFC frames.
    pub mbc: bool,
    /// PFC capability: how many traffic classes may have PFC at once, 0..=8.
    pub cap: u8,
    /// Priorities with PFC enabled.
    pub enabled: PriorityMap,
    /// Bit 5 of the flags byte, reserved in IEEE 802.1Q-2018: set by a station that
    /// measures the link for adaptive PFC headroom ("Adaptive PFC Headroom", phase 1:
    /// the capability is announced in the PFC configuration TLV; CEE carries it in the
    /// same place). The TLV keeps its length; lldpad and tshark read past the bit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub headroom_measurement: bool,
}

/// The flags-byte bit of [`PfcConfig::headroom_measurement`].
pub const FLAG_HEADROOM_MEASUREMENT: u8 = 0x20;

impl Default for PfcConfig {
    /// lldpad's default: willing, no MBC, capability 8, PFC on no priority.
    fn default() -> Self {
        PfcConfig {
            willing: true,
            mbc: false,
            cap: MAX_TCS,
            enabled: PriorityMap::NONE,
            headroom_measurement: false,
        }
    }
}

impl PfcConfig {
    /// Any enable bitmap is valid; the capability is 0..=8.
    pub fn validate(&self) -> Result<(), InvalidValue> {
        // D.2.11.5, PFC capability: a count of traffic classes. The field has
        // 4 bits, but a port has at most 8 classes, so 9..15 cannot be true.
        if self.cap > MAX_TCS {
            return Err(InvalidValue {
                field: "pfc.cap",
                index: None,
                value: self.cap.into(),
                reason: "PFC capability counts traffic classes: 0..8",
            });
        }
        Ok(())
    }
}

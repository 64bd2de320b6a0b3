//! Per-port administrative configuration: what the operator sets.
//!
//! Defaults are those of the CEE DCBX specification and of lldpad: LLDP rx and
//! tx enabled, DCBX enabled (§2.3: "DCBX enabled by default with an option to
//! be administratively disabled"), every feature enabled, advertised and
//! willing, PFC on no priority.

use lossless_wire::cee::{AppConfig, InvalidValue, PfcConfig, PgConfig};
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

use crate::ieee::IeeeConfig;
use crate::mode::DcbxMode;
use crate::time::Duration;

/// LLDP adminStatus (802.1AB-2016 §9.2.5.1) and what each means for DCBX
/// (CEE DCBX specification §2.3): DCBX runs only with both rx and tx enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdminStatus {
    /// enabledRxTx: LLDP both ways; DCBX runs.
    #[default]
    RxTx,
    /// enabledTxOnly: LLDPDUs go out without DCBX TLVs; received ones are ignored.
    TxOnly,
    /// enabledRxOnly: nothing is sent; neighbours are still learnt, DCBX does not run.
    RxOnly,
    /// disabled: nothing sent, nothing received.
    Disabled,
}

impl AdminStatus {
    pub fn tx(self) -> bool {
        matches!(self, AdminStatus::RxTx | AdminStatus::TxOnly)
    }
    pub fn rx(self) -> bool {
        matches!(self, AdminStatus::RxTx | AdminStatus::RxOnly)
    }
}

/// LLDP transmit timing (802.1AB-2016 §9.2.5). Integer seconds, as in the MIB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LldpTimers {
    /// msgTxInterval: seconds between transmissions in normal mode (1..=3600).
    pub msg_tx_interval: u16,
    /// msgTxHold: TTL = msgTxInterval x msgTxHold (1..=100).
    pub msg_tx_hold: u16,
    /// msgFastTx: seconds between transmissions in fast mode (1..=3600).
    pub msg_fast_tx: u16,
    /// txFastInit: fast transmissions after a new neighbour or a DCBX change (1..=8).
    pub tx_fast_init: u8,
    /// txCreditMax: burst allowance of the transmit rate limiter (1..=10).
    pub tx_credit_max: u8,
    /// reinitDelay: seconds to wait after a shutdown before re-initialising (1..=100).
    pub reinit_delay: u16,
}

impl Default for LldpTimers {
    fn default() -> Self {
        LldpTimers {
            msg_tx_interval: 30,
            msg_tx_hold: 4,
            msg_fast_tx: 1,
            tx_fast_init: 4,
            tx_credit_max: 5,
            reinit_delay: 2,
        }
    }
}

impl LldpTimers {
    pub fn interval(&self) -> Duration {
        Duration::from_secs(self.msg_tx_interval.into())
    }
    pub fn fast(&self) -> Duration {
        Duration::from_secs(self.msg_fast_tx.into())
    }
    pub fn reinit(&self) -> Duration {
        Duration::from_secs(self.reinit_delay.into())
    }
    /// The TTL we advertise: msgTxInterval x msgTxHold, capped at 65535 (as lldpad: 120 s).
    pub fn ttl(&self) -> u16 {
        let ttl = u32::from(self.msg_tx_interval) * u32::from(self.msg_tx_hold);
        ttl.min(u32::from(u16::MAX)) as u16
    }
    /// The TTL of an LLDPDU that asks the peer for a fresh one: one second more than
    /// [`LldpTimers::ttl`] (what IEEE 802.1AB-2009's formula, msgTxInterval x
    /// msgTxHold + 1, gives), one less at 65535. An agent that drops an LLDPDU equal to
    /// the last one it received (lldpad) takes this one as new information.
    pub fn solicit_ttl(&self) -> u16 {
        match self.ttl() {
            u16::MAX => u16::MAX - 1,
            ttl => ttl + 1,
        }
    }
}

/// The administered parameters of one DCB feature (CEE DCBX specification
/// Tables 3 and 4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureAdmin<C> {
    /// Enable: the feature is on locally.
    pub enable: bool,
    /// Willing: accept the configuration of a not-willing peer.
    pub willing: bool,
    /// Advertise: send this feature's sub-TLV (and look at the peer's).
    pub advertise: bool,
    /// DesiredCfg.
    pub cfg: C,
}

impl<C: Default> Default for FeatureAdmin<C> {
    fn default() -> Self {
        FeatureAdmin {
            enable: true,
            willing: true,
            advertise: true,
            cfg: C::default(),
        }
    }
}

/// DCBX on one port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DcbxConfig {
    /// The administrative off switch; DCBX is on by default.
    pub enabled: bool,
    /// Which DCBX version runs: IEEE 802.1Qaz, CEE, or whichever the peer speaks.
    #[serde(default)]
    pub mode: DcbxMode,
    /// Highest DCBX protocol version we run (Control and features); 0 is the only
    /// version defined, a higher one negotiates down to the peer's.
    pub max_version: u8,
    pub pg: FeatureAdmin<PgConfig>,
    pub pfc: FeatureAdmin<PfcConfig>,
    pub app: FeatureAdmin<AppConfig>,
    /// IEEE 802.1Qaz's own settings: ETS, PFC's MACsec bypass bit, the APP entries in
    /// IEEE form. PFC itself and the APP flags are `pfc` and `app` above, shared.
    #[serde(default)]
    pub ieee: IeeeConfig,
    /// Advertise that this port measures its link for adaptive PFC headroom
    /// ("Adaptive PFC Headroom", phase 1): bit 4 of the CEE PFC sub-TLV's flags, bit 5
    /// of the IEEE PFC TLV's. Off by default.
    #[serde(default)]
    pub headroom_measurement: bool,
}

impl Default for DcbxConfig {
    fn default() -> Self {
        DcbxConfig {
            enabled: true,
            mode: DcbxMode::Auto,
            max_version: 0,
            pg: FeatureAdmin::default(),
            pfc: FeatureAdmin::default(),
            app: FeatureAdmin::default(),
            ieee: IeeeConfig::default(),
            headroom_measurement: false,
        }
    }
}

/// Everything administered on one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// The port's MAC: source of every frame, and Chassis/Port ID (MAC subtype, as lldpad).
    pub mac: MacAddr,
    /// Chassis ID override (subtype 7 "locally assigned" when set); default: the MAC.
    pub chassis_id: Option<String>,
    /// Port ID override (subtype 5 "interface name" when set); default: the MAC.
    pub port_id: Option<String>,
    pub system_name: Option<String>,
    pub port_description: Option<String>,
    pub admin_status: AdminStatus,
    pub timers: LldpTimers,
    /// How many neighbours the remote MIB holds on this port; a further MSAP
    /// raises tooManyNeighbors. DCBX needs exactly one.
    pub max_neighbors: usize,
    /// Seconds a neighbour we never negotiated DCBX with may keep the port without a
    /// DCBX peer by being there too (1..=65535; default 30). See [`crate::lldp::rx`].
    pub max_neighbor_hold: u32,
    pub dcbx: DcbxConfig,
}

impl PortConfig {
    pub fn new(mac: MacAddr) -> Self {
        PortConfig {
            mac,
            chassis_id: None,
            port_id: None,
            system_name: None,
            port_description: None,
            admin_status: AdminStatus::RxTx,
            timers: LldpTimers::default(),
            max_neighbors: 4,
            max_neighbor_hold: 30,
            dcbx: DcbxConfig::default(),
        }
    }

    /// How long a neighbour we never negotiated with may hold the port.
    pub fn neighbor_hold(&self) -> Duration {
        Duration::from_secs(self.max_neighbor_hold.into())
    }

    /// Checks every value; the first bad one is reported with its path.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let t = &self.timers;
        range("timers.msg_tx_interval", t.msg_tx_interval.into(), 1, 3600)?;
        range("timers.msg_tx_hold", t.msg_tx_hold.into(), 1, 100)?;
        range("timers.msg_fast_tx", t.msg_fast_tx.into(), 1, 3600)?;
        range("timers.tx_fast_init", t.tx_fast_init.into(), 1, 8)?;
        range("timers.tx_credit_max", t.tx_credit_max.into(), 1, 10)?;
        range("timers.reinit_delay", t.reinit_delay.into(), 1, 100)?;
        range("max_neighbors", self.max_neighbors as u64, 1, 1024)?;
        range("max_neighbor_hold", self.max_neighbor_hold.into(), 1, 65535)?;
        for (name, s) in [("chassis_id", &self.chassis_id), ("port_id", &self.port_id)] {
            if let Some(s) = s {
                if s.is_empty() || s.len() > 255 {
                    return Err(ConfigError::Value {
                        path: name.to_string(),
                        reason: format!("must be 1..=255 bytes, is {}", s.len()),
                    });
                }
            }
        }
        for (name, s) in [
            ("system_name", &self.system_name),
            ("port_description", &self.port_description),
        ] {
            if let Some(s) = s {
                if s.len() > 255 {
                    return Err(ConfigError::Value {
                        path: name.to_string(),
                        reason: format!("must be at most 255 bytes, is {}", s.len()),
                    });
                }
            }
        }
        let feature = |name: &str, r: Result<(), InvalidValue>| {
            r.map_err(|e| ConfigError::Value {
                path: format!("dcbx.{name}"),
                reason: e.to_string(),
            })
        };
        feature("pg", self.dcbx.pg.cfg.validate())?;
        feature("pfc", self.dcbx.pfc.cfg.validate())?;
        feature("app", self.dcbx.app.cfg.validate())?;
        feature("ieee", self.dcbx.ieee.validate())?;
        Ok(())
    }
}

fn range(path: &str, value: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if value < min || value > max {
        return Err(ConfigError::Value {
            path: path.to_string(),
            reason: format!("{value} is outside {min}..={max}"),
        });
    }
    Ok(())
}

/// A configuration the agent refuses; the running configuration is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {reason}")]
    Value { path: String, reason: String },
}

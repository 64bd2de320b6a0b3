//! Per-port administrative configuration: what the operator sets.
//!
//! Defaults are those of the CEE DCBX specification and of lldpad: LLDP rx and
//! tx enabled, DCBX enabled (§2.3: "DCBX enabled by default with an option to
//! be administratively disabled"), every feature enabled, advertised and
//! willing, PFC on no priority.

use std::net::IpAddr;

use lossless_wire::cee::{AppConfig, InvalidValue, PfcConfig, PgConfig};
use lossless_wire::lldp::{capability, SystemCapabilities, MAX_LLDPDU_LEN, MAX_STRING_LEN};
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

pub mod ieee;
pub mod lldpdu;

use crate::mode::DcbxMode;
use crate::time::Duration;
pub use ieee::{EtsAdmin, IeeeConfig};

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

/// The Management Address TLV's content (802.1AB-2016 §8.5.9): an address and
/// the interface it belongs to, numbered by ifIndex.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MgmtAddress {
    pub address: IpAddr,
    /// The interface number (ifIndex subtype).
    pub ifindex: u32,
}

/// Everything administered on one port.
///
/// The optional identity TLVs (802.1AB-2016 §8.5.5 to §8.5.9) are sent when set
/// and left out when `None`: the agent sends what it is given, and its caller
/// (the node) decides what that is (a configured value, or what the host says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// The port's MAC: source of every frame, and Chassis/Port ID (MAC subtype, as lldpad).
    pub mac: MacAddr,
    /// Chassis ID override (subtype 7 "locally assigned" when set); default: the MAC.
    pub chassis_id: Option<String>,
    /// Port ID override (subtype 5 "interface name" when set); default: the MAC.
    pub port_id: Option<String>,
    /// System Name TLV (at most 255 octets).
    pub system_name: Option<String>,
    /// Port Description TLV (at most 255 octets).
    pub port_description: Option<String>,
    /// System Description TLV (at most 255 octets).
    pub system_description: Option<String>,
    /// System Capabilities TLV: the enabled bits a subset of the capabilities.
    pub system_capabilities: Option<SystemCapabilities>,
    /// Management Address TLV.
    pub management_address: Option<MgmtAddress>,
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
            system_description: None,
            system_capabilities: None,
            management_address: None,
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
            ("system_description", &self.system_description),
        ] {
            if let Some(s) = s {
                if s.len() > MAX_STRING_LEN {
                    return Err(ConfigError::Value {
                        path: name.to_string(),
                        reason: format!(
                            "{} octets: the TLV carries at most {MAX_STRING_LEN}",
                            s.len()
                        ),
                    });
                }
            }
        }
        if let Some(c) = self.system_capabilities {
            check_capabilities(c)?;
        }
        if let Some(m) = self.management_address {
            check_management_address(m.address)?;
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
        self.check_lldpdu_len()
    }

    /// The longest LLDPDU this configuration can make fits one frame
    /// ([`MAX_LLDPDU_LEN`]), so the DCBX TLVs always have their room and the agent
    /// never builds an LLDPDU that emit refuses.
    fn check_lldpdu_len(&self) -> Result<(), ConfigError> {
        let bound = lldpdu::LldpduBound::of(self);
        if bound.total() <= MAX_LLDPDU_LEN {
            return Ok(());
        }
        Err(ConfigError::Value {
            path: "lldpdu".to_string(),
            reason: format!(
                "the LLDPDU could reach {} octets, over the {MAX_LLDPDU_LEN} one Ethernet \
                 frame carries: Chassis ID, Port ID and the identity TLVs take {}, the DCBX \
                 TLVs up to {}; shorten chassis_id, port_id or the identity strings, or \
                 turn one off",
                bound.total(),
                bound.identity,
                bound.dcbx
            ),
        })
    }
}

/// A management address is one a manager can reach the host at: a unicast address,
/// not a loopback one.
fn check_management_address(a: IpAddr) -> Result<(), ConfigError> {
    let why = if a.is_unspecified() {
        Some("the unspecified address")
    } else if a.is_loopback() {
        Some("a loopback address")
    } else if a.is_multicast() || a == IpAddr::V4(std::net::Ipv4Addr::BROADCAST) {
        Some("not a unicast address")
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => Err(ConfigError::Value {
            path: "management_address".to_string(),
            reason: format!("{a} is {why}: a neighbour's manager could not reach the host there"),
        }),
    }
}

/// The enabled capabilities are among the capabilities (802.1AB-2016 §8.5.8.2),
/// and no reserved bit is set.
fn check_capabilities(c: SystemCapabilities) -> Result<(), ConfigError> {
    let bad = |path: &str, reason: String| {
        Err(ConfigError::Value {
            path: path.to_string(),
            reason,
        })
    };
    for (path, bits) in [
        ("system_capabilities.capabilities", c.capabilities),
        ("system_capabilities.enabled", c.enabled),
    ] {
        if bits & !capability::DEFINED != 0 {
            return bad(
                path,
                format!(
                    "bits {} are reserved (802.1AB Table 8-4 defines bits 0..10)",
                    capability::names(bits & !capability::DEFINED).join(", ")
                ),
            );
        }
    }
    let extra = c.enabled & !c.capabilities;
    if extra != 0 {
        return bad(
            "system_capabilities.enabled",
            format!(
                "{} enabled but not among the capabilities: a system can only enable \
                 what it has",
                capability::names(extra).join(", ")
            ),
        );
    }
    Ok(())
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

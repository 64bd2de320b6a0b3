//! `[ports."NAME".roce]`: the RoCE host settings beyond DCB, each set only when given.
//!
//! ```toml
//! [ports."enp65s0f0np0".roce]
//! tos = 106              # RDMA CM's default ToS (DSCP 26 << 2 | ECT(0)); configfs default_roce_tos
//! roce_mode = "v2"       # RDMA CM's default RoCE version; configfs default_roce_mode
//! traffic_class = 106    # the ToS of verbs applications (mlx5_ib's tc/1/traffic_class)
//! ecn_rp = [3]           # ECN reaction point (DCQCN rate limiting) on exactly these priorities
//! ecn_np = [3]           # ECN notification point (CNPs sent) on exactly these priorities
//! cnp_dscp = 48          # the DSCP of the CNPs the NIC sends
//! cnp_priority = 6       # their 802.1p priority
//! global_pause = false   # 802.3x link pause: false turns it off (it defeats PFC)
//! fw_lldp_agent = false  # the NIC firmware's LLDP/DCBX agent: false turns it off
//! ```
//!
//! A key that is absent leaves the host's value alone: it is read and shown, never
//! written. Each key has one rule ([`RoceSetting::check`]) used by the file reader and
//! by anything else taking the same key, so a refusal reads the same everywhere.

use lossless_wire::cee::PriorityMap;
use serde::{Deserialize, Serialize};

use super::error::Fault;
use super::pfc_watchdog::RawValue;
use super::read::{quoted, Field};
use super::setting_error::{KeyError, SettingError};

pub const ROCE_KEYS: &[&str] = &[
    "tos",
    "roce_mode",
    "traffic_class",
    "ecn_rp",
    "ecn_np",
    "cnp_dscp",
    "cnp_priority",
    "global_pause",
    "fw_lldp_agent",
];

/// The RoCE version RDMA CM starts connections with (`default_roce_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoceMode {
    /// "IB/RoCE v1": RoCE over Ethernet without IP (EtherType 0x8915).
    V1,
    /// "RoCE v2": RoCE over UDP port 4791, routable, classified by DSCP.
    V2,
}

impl RoceMode {
    /// The word in the configuration (`v1`, `v2`).
    pub fn name(self) -> &'static str {
        match self {
            RoceMode::V1 => "v1",
            RoceMode::V2 => "v2",
        }
    }

    /// The string the kernel shows and takes in configfs (`ib_cache_gid_type_str`,
    /// drivers/infiniband/core/cache.c).
    pub fn kernel_name(self) -> &'static str {
        match self {
            RoceMode::V1 => "IB/RoCE v1",
            RoceMode::V2 => "RoCE v2",
        }
    }

    /// What the kernel shows, back to the mode (a trailing newline allowed).
    pub fn from_kernel(s: &str) -> Option<RoceMode> {
        match s.trim_end_matches('\n') {
            "IB/RoCE v1" => Some(RoceMode::V1),
            "RoCE v2" => Some(RoceMode::V2),
            _ => None,
        }
    }
}

/// The effective RoCE settings of a port: each None is left as the host has it. (As
/// runtime overrides, `lossless roce set`: each Some is put over the file's.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoceSettings {
    pub tos: Option<u8>,
    pub roce_mode: Option<RoceMode>,
    pub traffic_class: Option<u8>,
    pub ecn_rp: Option<PriorityMap>,
    pub ecn_np: Option<PriorityMap>,
    pub cnp_dscp: Option<u8>,
    pub cnp_priority: Option<u8>,
    pub global_pause: Option<bool>,
    pub fw_lldp_agent: Option<bool>,
}

impl RoceSettings {
    /// Nothing configured: the host is only read.
    pub fn is_empty(&self) -> bool {
        *self == RoceSettings::default()
    }

    /// Puts each key set here over `s`.
    pub fn overlay(&self, s: &mut RoceSettings) {
        for setting in self.settings() {
            setting.apply(s);
        }
    }

    /// The keys set, each as its setting, in the section's order.
    pub fn settings(&self) -> Vec<RoceSetting> {
        let mut out = Vec::new();
        let mut push = |v: Option<RoceSetting>| out.extend(v);
        push(self.tos.map(RoceSetting::Tos));
        push(self.roce_mode.map(RoceSetting::RoceMode));
        push(self.traffic_class.map(RoceSetting::TrafficClass));
        push(self.ecn_rp.map(RoceSetting::EcnRp));
        push(self.ecn_np.map(RoceSetting::EcnNp));
        push(self.cnp_dscp.map(RoceSetting::CnpDscp));
        push(self.cnp_priority.map(RoceSetting::CnpPriority));
        push(self.global_pause.map(RoceSetting::GlobalPause));
        push(self.fw_lldp_agent.map(RoceSetting::FwLldpAgent));
        out
    }

    /// The ranges the file's rule checks that the types do not (a state file read back).
    pub fn validate(&self) -> Result<(), KeyError> {
        for s in self.settings() {
            let raw = match s {
                RoceSetting::CnpDscp(v) | RoceSetting::CnpPriority(v) => RawValue::Int(v.into()),
                _ => continue,
            };
            RoceSetting::check(s.key(), &raw).map_err(|error| KeyError {
                key: s.key(),
                error,
            })?;
        }
        Ok(())
    }
}

impl RawValue {
    /// A JSON value as the rule takes it (the control socket's form).
    pub fn from_json(v: &serde_json::Value) -> Option<RawValue> {
        Some(match v {
            serde_json::Value::Bool(b) => RawValue::Bool(*b),
            serde_json::Value::Number(n) => RawValue::Int(n.as_i64()?),
            serde_json::Value::String(s) => RawValue::Str(s.clone()),
            serde_json::Value::Array(a) => RawValue::List(
                a.iter()
                    .map(serde_json::Value::as_i64)
                    .collect::<Option<Vec<i64>>>()?,
            ),
            _ => return None,
        })
    }
}

/// One key with its checked value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoceSetting {
    Tos(u8),
    RoceMode(RoceMode),
    TrafficClass(u8),
    EcnRp(PriorityMap),
    EcnNp(PriorityMap),
    CnpDscp(u8),
    CnpPriority(u8),
    GlobalPause(bool),
    FwLldpAgent(bool),
}

impl RoceSetting {
    /// The one rule for a key of the section: its type and range. The error says why
    /// (the caller adds where).
    pub fn check(key: &str, value: &RawValue) -> Result<RoceSetting, SettingError> {
        let int = |lo: i64, hi: i64, what: &'static str| -> Result<u8, SettingError> {
            match value {
                RawValue::Int(v) if (lo..=hi).contains(v) => Ok(u8::try_from(*v).unwrap_or(0)),
                RawValue::Int(v) => Err(SettingError::OutOfRange {
                    value: *v,
                    lo,
                    hi,
                    what,
                }),
                _ => Err(SettingError::NotInteger { what, lo, hi }),
            }
        };
        let boolean = || match value {
            RawValue::Bool(b) => Ok(*b),
            _ => Err(SettingError::NotBoolean),
        };
        let priorities = || match value {
            RawValue::List(l) => {
                let mut map = PriorityMap::NONE;
                for p in l {
                    super::priorities::add_priority(&mut map, *p)?;
                }
                Ok(map)
            }
            _ => Err(SettingError::NotPriorities {
                hint: " (`[]`: on none)",
            }),
        };
        const MODES: &str = "\"v1\" or \"v2\"";
        Ok(match key {
            "tos" => RoceSetting::Tos(int(0, 255, "a ToS byte: DSCP << 2 | ECN")?),
            "traffic_class" => {
                RoceSetting::TrafficClass(int(0, 255, "a ToS byte: DSCP << 2 | ECN")?)
            }
            "roce_mode" => match value {
                RawValue::Str(s) if s == "v1" => RoceSetting::RoceMode(RoceMode::V1),
                RawValue::Str(s) if s == "v2" => RoceSetting::RoceMode(RoceMode::V2),
                RawValue::Str(s) => {
                    return Err(SettingError::UnknownWord {
                        what: "RoCE mode",
                        given: quoted(s),
                        expected: MODES,
                    })
                }
                _ => return Err(SettingError::NotWord { expected: MODES }),
            },
            "ecn_rp" => RoceSetting::EcnRp(priorities()?),
            "ecn_np" => RoceSetting::EcnNp(priorities()?),
            "cnp_dscp" => RoceSetting::CnpDscp(int(0, 63, "a DSCP")?),
            "cnp_priority" => RoceSetting::CnpPriority(int(0, 7, "a priority")?),
            "global_pause" => RoceSetting::GlobalPause(boolean()?),
            "fw_lldp_agent" => RoceSetting::FwLldpAgent(boolean()?),
            _ => {
                return Err(SettingError::UnknownKey {
                    key: key.to_string(),
                    keys: ROCE_KEYS,
                })
            }
        })
    }

    /// Reads one key of the section from the file, through [`Self::check`].
    pub(crate) fn read(f: &Field) -> Result<RoceSetting, Fault> {
        if !ROCE_KEYS.contains(&f.name) {
            return Err(f.unknown(ROCE_KEYS));
        }
        let raw = RawValue::read(f)?;
        RoceSetting::check(f.name, &raw).map_err(|reason| f.fault(reason.to_string()))
    }

    pub fn key(&self) -> &'static str {
        match self {
            RoceSetting::Tos(_) => "tos",
            RoceSetting::RoceMode(_) => "roce_mode",
            RoceSetting::TrafficClass(_) => "traffic_class",
            RoceSetting::EcnRp(_) => "ecn_rp",
            RoceSetting::EcnNp(_) => "ecn_np",
            RoceSetting::CnpDscp(_) => "cnp_dscp",
            RoceSetting::CnpPriority(_) => "cnp_priority",
            RoceSetting::GlobalPause(_) => "global_pause",
            RoceSetting::FwLldpAgent(_) => "fw_lldp_agent",
        }
    }

    pub fn apply(&self, s: &mut RoceSettings) {
        match *self {
            RoceSetting::Tos(v) => s.tos = Some(v),
            RoceSetting::RoceMode(v) => s.roce_mode = Some(v),
            RoceSetting::TrafficClass(v) => s.traffic_class = Some(v),
            RoceSetting::EcnRp(v) => s.ecn_rp = Some(v),
            RoceSetting::EcnNp(v) => s.ecn_np = Some(v),
            RoceSetting::CnpDscp(v) => s.cnp_dscp = Some(v),
            RoceSetting::CnpPriority(v) => s.cnp_priority = Some(v),
            RoceSetting::GlobalPause(v) => s.global_pause = Some(v),
            RoceSetting::FwLldpAgent(v) => s.fw_lldp_agent = Some(v),
        }
    }
}

/// A priority set as the file writes it: `[3, 4]`.
pub fn priority_list(p: PriorityMap) -> String {
    let list: Vec<String> = p.priorities().map(|p| p.to_string()).collect();
    format!("[{}]", list.join(", "))
}

/// The section's keys that are set, as `roce.KEY = value` lines.
pub(crate) fn render(r: &RoceSettings, line: &mut impl FnMut(&str, String)) {
    if let Some(v) = r.tos {
        line("roce.tos", v.to_string());
    }
    if let Some(v) = r.roce_mode {
        line("roce.roce_mode", quoted(v.name()));
    }
    if let Some(v) = r.traffic_class {
        line("roce.traffic_class", v.to_string());
    }
    if let Some(v) = r.ecn_rp {
        line("roce.ecn_rp", priority_list(v));
    }
    if let Some(v) = r.ecn_np {
        line("roce.ecn_np", priority_list(v));
    }
    if let Some(v) = r.cnp_dscp {
        line("roce.cnp_dscp", v.to_string());
    }
    if let Some(v) = r.cnp_priority {
        line("roce.cnp_priority", v.to_string());
    }
    if let Some(v) = r.global_pause {
        line("roce.global_pause", v.to_string());
    }
    if let Some(v) = r.fw_lldp_agent {
        line("roce.fw_lldp_agent", v.to_string());
    }
}

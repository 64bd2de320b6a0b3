//! One key of a port section, its value, and where in the file it was set.
//!
//! A section is a list of settings; a port's effective settings are the
//! built-in defaults with every applicable section's settings applied in turn,
//! so a later section overrides exactly the keys it sets.

use lossless_dcbx::{AdminStatus, DcbxMode, FeatureAdmin};
use lossless_wire::cee::PriorityMap;
use lossless_wire::ieee::{EtsTable, Tsa};
use lossless_wire::lldp::SystemCapabilities;

use super::app::AppRules;
use super::headroom::{HeadroomKey, HeadroomSetting};
use super::pfc_watchdog::PfcWatchdogSetting;
use super::roce::RoceSetting;
use super::{Apply, PortSettings};
use crate::identity::Advertise;

/// The LLDP timers, by their key under `timers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Timer {
    MsgTxInterval,
    MsgTxHold,
    MsgFastTx,
    TxFastInit,
    TxCreditMax,
    ReinitDelay,
}

impl Timer {
    pub const ALL: [Timer; 6] = [
        Timer::MsgTxInterval,
        Timer::MsgTxHold,
        Timer::MsgFastTx,
        Timer::TxFastInit,
        Timer::TxCreditMax,
        Timer::ReinitDelay,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Timer::MsgTxInterval => "msg_tx_interval",
            Timer::MsgTxHold => "msg_tx_hold",
            Timer::MsgFastTx => "msg_fast_tx",
            Timer::TxFastInit => "tx_fast_init",
            Timer::TxCreditMax => "tx_credit_max",
            Timer::ReinitDelay => "reinit_delay",
        }
    }

    pub fn from_name(name: &str) -> Option<Timer> {
        Timer::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The largest value the field's type holds (the allowed range is
    /// narrower; `PortConfig::validate` checks it).
    pub fn type_max(self) -> u64 {
        match self {
            Timer::TxFastInit | Timer::TxCreditMax => u8::MAX.into(),
            _ => u16::MAX.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Feature {
    Pg,
    Pfc,
    App,
    Ets,
}

/// The three administrative flags every feature has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flag {
    Enable,
    Willing,
    Advertise,
}

impl Flag {
    pub const ALL: [Flag; 3] = [Flag::Enable, Flag::Willing, Flag::Advertise];

    pub fn name(self) -> &'static str {
        match self {
            Flag::Enable => "enable",
            Flag::Willing => "willing",
            Flag::Advertise => "advertise",
        }
    }

    pub fn from_name(name: &str) -> Option<Flag> {
        Flag::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Which key a setting sets (without its value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Key {
    Apply,
    NicDrift,
    NicHoldMs,
    AdminStatus,
    SystemName,
    PortDescription,
    SystemDescription,
    SystemCapabilities,
    ManagementAddress,
    ChassisId,
    PortId,
    MaxNeighbors,
    MaxNeighborHold,
    Timer(Timer),
    DcbxEnabled,
    DcbxMode,
    MaxVersion,
    Flag(Feature, Flag),
    PgPgid,
    PgPercent,
    PgNumTcs,
    PfcPriorities,
    PfcNumTcs,
    PfcMbc,
    AppEntries,
    EtsPrioTc,
    EtsTcBw,
    EtsTsa,
    /// `ets.tcs`: the three tables at once, per traffic class.
    EtsTcs,
    EtsMaxTcs,
    EtsCbs,
    EtsRecommend,
    Headroom(HeadroomKey),
    PfcWatchdog(&'static str),
    Roce(&'static str),
}

/// One key with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Setting {
    Apply(Apply),
    NicDrift(lossless_proto::nic::DriftPolicy),
    NicHoldMs(u32),
    AdminStatus(AdminStatus),
    SystemName(Advertise<String>),
    PortDescription(Advertise<String>),
    SystemDescription(Advertise<String>),
    SystemCapabilities(Advertise<SystemCapabilities>),
    ManagementAddress(Advertise<std::net::IpAddr>),
    ChassisId(String),
    PortId(String),
    MaxNeighbors(usize),
    MaxNeighborHold(u32),
    /// Every timer value fits its field (checked when read).
    Timer(Timer, u16),
    DcbxEnabled(bool),
    DcbxMode(DcbxMode),
    MaxVersion(u8),
    Flag(Feature, Flag, bool),
    PgPgid([u8; 8]),
    PgPercent([u8; 8]),
    PgNumTcs(u8),
    PfcPriorities(PriorityMap),
    PfcNumTcs(u8),
    PfcMbc(bool),
    /// Validated as read ([`AppRules::validate`]).
    AppEntries(Box<AppRules>),
    EtsPrioTc([u8; 8]),
    EtsTcBw([u8; 8]),
    EtsTsa([Tsa; 8]),
    EtsTcs(EtsTable),
    EtsMaxTcs(u8),
    EtsCbs(bool),
    EtsRecommend(bool),
    Headroom(HeadroomSetting),
    PfcWatchdog(PfcWatchdogSetting),
    Roce(RoceSetting),
}

impl Setting {
    pub fn key(&self) -> Key {
        match self {
            Setting::Apply(_) => Key::Apply,
            Setting::NicDrift(_) => Key::NicDrift,
            Setting::NicHoldMs(_) => Key::NicHoldMs,
            Setting::AdminStatus(_) => Key::AdminStatus,
            Setting::SystemName(_) => Key::SystemName,
            Setting::PortDescription(_) => Key::PortDescription,
            Setting::SystemDescription(_) => Key::SystemDescription,
            Setting::SystemCapabilities(_) => Key::SystemCapabilities,
            Setting::ManagementAddress(_) => Key::ManagementAddress,
            Setting::ChassisId(_) => Key::ChassisId,
            Setting::PortId(_) => Key::PortId,
            Setting::MaxNeighbors(_) => Key::MaxNeighbors,
            Setting::MaxNeighborHold(_) => Key::MaxNeighborHold,
            Setting::Timer(t, _) => Key::Timer(*t),
            Setting::DcbxEnabled(_) => Key::DcbxEnabled,
            Setting::DcbxMode(_) => Key::DcbxMode,
            Setting::MaxVersion(_) => Key::MaxVersion,
            Setting::Flag(f, g, _) => Key::Flag(*f, *g),
            Setting::PgPgid(_) => Key::PgPgid,
            Setting::PgPercent(_) => Key::PgPercent,
            Setting::PgNumTcs(_) => Key::PgNumTcs,
            Setting::PfcPriorities(_) => Key::PfcPriorities,
            Setting::PfcNumTcs(_) => Key::PfcNumTcs,
            Setting::PfcMbc(_) => Key::PfcMbc,
            Setting::AppEntries(_) => Key::AppEntries,
            Setting::EtsPrioTc(_) => Key::EtsPrioTc,
            Setting::EtsTcBw(_) => Key::EtsTcBw,
            Setting::EtsTsa(_) => Key::EtsTsa,
            Setting::EtsTcs(_) => Key::EtsTcs,
            Setting::EtsMaxTcs(_) => Key::EtsMaxTcs,
            Setting::EtsCbs(_) => Key::EtsCbs,
            Setting::EtsRecommend(_) => Key::EtsRecommend,
            Setting::Headroom(h) => Key::Headroom(h.key()),
            Setting::PfcWatchdog(w) => Key::PfcWatchdog(w.key()),
            Setting::Roce(r) => Key::Roce(r.key()),
        }
    }

    pub fn apply(&self, s: &mut PortSettings) {
        match self {
            Setting::Headroom(h) => return h.apply(s),
            Setting::PfcWatchdog(w) => return w.apply(&mut s.pfc_watchdog),
            Setting::Roce(r) => return r.apply(&mut s.roce),
            Setting::AppEntries(v) => return s.set_app((**v).clone()),
            _ => {}
        }
        let d = &mut s.dcbx;
        match self {
            Setting::Apply(v) => s.apply = *v,
            Setting::NicDrift(v) => s.nic_drift = *v,
            Setting::NicHoldMs(v) => s.nic_hold_ms = *v,
            Setting::AdminStatus(v) => s.admin_status = *v,
            Setting::SystemName(v) => s.identity.system_name = v.clone(),
            Setting::PortDescription(v) => s.identity.port_description = v.clone(),
            Setting::SystemDescription(v) => s.identity.system_description = v.clone(),
            Setting::SystemCapabilities(v) => s.identity.system_capabilities = v.clone(),
            Setting::ManagementAddress(v) => s.identity.management_address = v.clone(),
            Setting::ChassisId(v) => s.chassis_id = Some(v.clone()),
            Setting::PortId(v) => s.port_id = Some(v.clone()),
            Setting::MaxNeighbors(v) => s.max_neighbors = *v,
            Setting::MaxNeighborHold(v) => s.max_neighbor_hold = *v,
            Setting::Timer(t, v) => {
                let small = u8::try_from(*v).unwrap_or(u8::MAX);
                let timers = &mut s.timers;
                match t {
                    Timer::MsgTxInterval => timers.msg_tx_interval = *v,
                    Timer::MsgTxHold => timers.msg_tx_hold = *v,
                    Timer::MsgFastTx => timers.msg_fast_tx = *v,
                    Timer::TxFastInit => timers.tx_fast_init = small,
                    Timer::TxCreditMax => timers.tx_credit_max = small,
                    Timer::ReinitDelay => timers.reinit_delay = *v,
                }
            }
            Setting::DcbxEnabled(v) => d.enabled = *v,
            Setting::DcbxMode(v) => d.mode = *v,
            Setting::MaxVersion(v) => d.max_version = *v,
            Setting::Flag(feature, flag, v) => {
                let (enable, willing, advertise) = match feature {
                    Feature::Pg => flags(&mut d.pg),
                    Feature::Pfc => flags(&mut d.pfc),
                    Feature::App => flags(&mut d.app),
                    Feature::Ets => flags(&mut d.ieee.ets),
                };
                *match flag {
                    Flag::Enable => enable,
                    Flag::Willing => willing,
                    Flag::Advertise => advertise,
                } = *v;
            }
            Setting::PgPgid(v) => d.pg.cfg.pgid = *v,
            Setting::PgPercent(v) => d.pg.cfg.percent = *v,
            Setting::PgNumTcs(v) => d.pg.cfg.num_tcs = *v,
            Setting::PfcPriorities(v) => d.pfc.cfg.priorities = *v,
            Setting::PfcNumTcs(v) => d.pfc.cfg.num_tcs = *v,
            Setting::PfcMbc(v) => d.ieee.pfc_mbc = *v,
            Setting::EtsPrioTc(v) => d.ieee.ets.cfg.table.prio_tc = *v,
            Setting::EtsTcBw(v) => d.ieee.ets.cfg.table.tc_bw = *v,
            Setting::EtsTsa(v) => d.ieee.ets.cfg.table.tsa = *v,
            Setting::EtsTcs(v) => d.ieee.ets.cfg.table = *v,
            Setting::EtsMaxTcs(v) => d.ieee.ets.cfg.max_tcs = *v,
            Setting::EtsCbs(v) => d.ieee.ets.cfg.cbs = *v,
            Setting::EtsRecommend(v) => d.ieee.ets.cfg.recommend = Some(*v),
            Setting::Headroom(_)
            | Setting::AppEntries(_)
            | Setting::PfcWatchdog(_)
            | Setting::Roce(_) => {}
        }
    }
}

fn flags<C>(f: &mut FeatureAdmin<C>) -> (&mut bool, &mut bool, &mut bool) {
    (&mut f.enable, &mut f.willing, &mut f.advertise)
}

/// Where a setting was made: its full key path (`ports."eth0".pg.percent`)
/// and the byte offset of its value; for arrays also each element's, under a
/// suffix of the key (`[2]`, `[1].selector`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Site {
    pub key: String,
    pub at: usize,
    pub parts: Vec<(String, usize)>,
}

impl Site {
    /// The key path and offset of `suffix`, or of the whole value when the
    /// part is not known.
    pub fn part(&self, suffix: &str) -> (String, usize) {
        match self.parts.iter().find(|(s, _)| s == suffix) {
            Some((s, at)) => (format!("{}{s}", self.key), *at),
            None => (self.key.clone(), self.at),
        }
    }
}

/// The settings of one section (`[defaults]` or one `[ports."..."]`), in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layer {
    /// The section's key path (`defaults`, `ports."eth0"`) and where it is named.
    pub path: String,
    pub at: usize,
    pub settings: Vec<(Setting, Site)>,
}

impl Layer {
    pub fn new(path: String, at: usize) -> Layer {
        Layer {
            path,
            at,
            settings: Vec::new(),
        }
    }

    pub fn apply(&self, s: &mut PortSettings) {
        for (setting, _) in &self.settings {
            setting.apply(s);
        }
    }

    /// Where this section sets `key`, if it does.
    pub fn find(&self, key: Key) -> Option<&Site> {
        self.settings
            .iter()
            .rev()
            .find(|(s, _)| s.key() == key)
            .map(|(_, site)| site)
    }
}

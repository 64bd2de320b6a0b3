//! The daemon's configuration file (`/etc/lossless/losslessd.toml`).
//!
//! `[daemon]` holds process settings; `[defaults]` and `[ports."NAME"]`
//! hold per-port LLDP/DCBX settings. A port's effective settings are the
//! built-in defaults, then `[defaults]`, then every glob section that matches
//! the interface (in file order), then its exact-name section, key by key.
//! `[relay]` configures the PFC relay of draft-he-rtgwg-wan-pfc-00 (a PE or a DC
//! gateway's check).
//! Every refusal names the file, line, column and key. The format is
//! documented in `docs/config.md`; `examples/losslessd.toml` is a commented
//! example.

pub mod app;
mod check;
mod error;
mod ets;
mod file;
mod headroom;
mod identity;
mod pattern;
mod pfc_watchdog;
mod priorities;
mod read;
mod relay;
mod render;
pub(crate) mod roce;
mod setting;
mod setting_error;
pub mod unmatched;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use lossless_dcbx::{AdminStatus, DcbxConfig, LldpTimers, PortConfig};
use lossless_relay::RelaySection;
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

use crate::identity::{Advertise, IdentitySettings, LocalInfo};

/// The default `nic_hold_ms` (see [`crate::damping`]).
pub const NIC_HOLD_MS: u32 = 1_000;
/// The largest `nic_hold_ms` the configuration takes.
pub const NIC_HOLD_MAX_MS: u32 = 60_000;

pub use app::{AppRule, AppRules, RuleError, RuleSelector};
pub use error::ConfigFileError;
pub use file::{
    check_metrics_address, check_metrics_exposure, MetricsAddressError, MetricsExposureError,
};
pub use headroom::{alpha_text, HeadroomSettings};
pub use pattern::{check_interface_name, InterfaceNameError, IFNAME_MAX};
pub use pfc_watchdog::{
    PfcWatchdogSetting, PfcWatchdogSettings, RawValue, WatchdogAction, DETECTION_MS, INTERVAL_MS,
    RESTORATION_MS,
};
pub use priorities::{priority_text, PriorityError};
pub use read::quoted as toml_string;
pub use roce::{priority_list, RoceMode, RoceSetting, RoceSettings, ROCE_KEYS};
pub use setting_error::{KeyError, SettingError};

pub(crate) use ets::{Class, ClassKey, ClassTable};
pub(crate) use priorities::add_priority;

use file::PortSection;
use setting::Layer;

/// Where the daemon looks for its configuration unless told otherwise.
pub const DEFAULT_CONFIG_PATH: &str = "/etc/lossless/losslessd.toml";
/// The control socket when `daemon.socket` is not set.
pub const DEFAULT_SOCKET: &str = "/run/lossless/losslessd.sock";
/// The state directory when `daemon.state_dir` is not set.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/lossless";
/// The tracing filter when `daemon.log` is not set.
pub const DEFAULT_LOG: &str = "info";

/// The whole configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonConfig {
    pub daemon: DaemonSettings,
    defaults: Layer,
    ports: Vec<PortSection>,
    /// `[relay]`: the PFC relay of draft-he-rtgwg-wan-pfc-00 (a PE, or a gateway's check).
    pub relay: Option<RelaySection>,
}

/// The `[daemon]` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonSettings {
    /// Control socket path (absolute).
    pub socket: PathBuf,
    /// Group allowed to use the socket (mode 0660); `None`: root only (0600).
    pub socket_group: Option<String>,
    /// Where runtime changes persist (absolute).
    pub state_dir: PathBuf,
    /// Prometheus endpoint; a non-zero port, and a loopback address unless
    /// `metrics_web_config` is set.
    pub metrics: Option<SocketAddr>,
    /// The endpoint's web configuration (exporter-toolkit's format: TLS, basic
    /// authentication); read by the daemon, which refuses a non-loopback `metrics`
    /// unless the file sets TLS or users.
    pub metrics_web_config: Option<PathBuf>,
    /// tracing filter directive (`info`, `losslessd=debug,info`, ...); not
    /// checked here beyond being non-empty.
    pub log: String,
    /// What the daemon's resources are bounded by.
    pub limits: DaemonLimits,
}

/// The daemon's bounds (`[daemon]` keys), each read once at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaemonLimits {
    /// The receive buffer asked for each port's packet socket (`packet_rcvbuf_bytes`).
    pub packet_rcvbuf_bytes: u32,
    /// Control connections open at once (`control_max_connections`).
    pub control_max_connections: u32,
    /// Metrics endpoint connections open at once (`metrics_max_connections`), apart
    /// from the control socket's.
    pub metrics_max_connections: u32,
    /// How long a control connection may take to send a whole request line
    /// (`control_request_timeout_ms`).
    pub control_request_timeout_ms: u32,
    /// Each port's receive budget for frames from others than its DCBX peer
    /// (`rx_budget_per_s`, `rx_budget_burst`; [`crate::rx_budget`]).
    pub rx_budget: crate::rx_budget::RxBudgetLimits,
}

/// `packet_rcvbuf_bytes` by default: 4 MiB, a burst of some 20,000 small frames.
pub const DEFAULT_PACKET_RCVBUF: u32 = 4 << 20;
/// `control_max_connections` by default.
pub const DEFAULT_CONTROL_MAX_CONNECTIONS: u32 = 256;
/// `metrics_max_connections` by default: a few scrapers and the odd `curl`.
pub const DEFAULT_METRICS_MAX_CONNECTIONS: u32 = 16;
/// `control_request_timeout_ms` by default.
pub const DEFAULT_CONTROL_REQUEST_TIMEOUT_MS: u32 = 5000;

impl Default for DaemonLimits {
    fn default() -> Self {
        DaemonLimits {
            packet_rcvbuf_bytes: DEFAULT_PACKET_RCVBUF,
            control_max_connections: DEFAULT_CONTROL_MAX_CONNECTIONS,
            metrics_max_connections: DEFAULT_METRICS_MAX_CONNECTIONS,
            control_request_timeout_ms: DEFAULT_CONTROL_REQUEST_TIMEOUT_MS,
            rx_budget: crate::rx_budget::RxBudgetLimits::default(),
        }
    }
}

impl Default for DaemonSettings {
    fn default() -> Self {
        DaemonSettings {
            socket: PathBuf::from(DEFAULT_SOCKET),
            socket_group: None,
            state_dir: PathBuf::from(DEFAULT_STATE_DIR),
            metrics: None,
            metrics_web_config: None,
            log: DEFAULT_LOG.to_string(),
            limits: DaemonLimits::default(),
        }
    }
}

/// Whether the daemon programs the negotiated (operational) PFC and PG
/// configuration into the NIC.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Apply {
    /// Run DCBX only; the NIC is left as it is.
    #[default]
    None,
    /// Program operational PFC/PG through the kernel's dcbnl interface.
    Dcbnl,
}

/// The effective settings of one port: everything of [`PortConfig`] but the
/// MAC (which comes from the interface), plus what the daemon does with the
/// result.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PortSettings {
    pub apply: Apply,
    /// What to do when a read-back finds the NIC changed behind our back.
    pub nic_drift: lossless_proto::nic::DriftPolicy,
    /// `apply = "dcbnl"`: the least time between two programmings of the NIC caused
    /// by the peer, in milliseconds (0: none); the first change after a quiet spell
    /// goes at once, later ones are coalesced into the latest configuration
    /// ([`crate::damping`]).
    pub nic_hold_ms: u32,
    pub chassis_id: Option<String>,
    pub port_id: Option<String>,
    /// Port Description, System Name, System Description, System Capabilities,
    /// Management Address: each the host's value, a configured one, or off.
    pub identity: IdentitySettings,
    pub admin_status: AdminStatus,
    pub timers: LldpTimers,
    pub max_neighbors: usize,
    /// Seconds a neighbour we never negotiated with may keep the port without a
    /// DCBX peer (1..=65535).
    pub max_neighbor_hold: u32,
    /// DCBX; its two APP tables (`dcbx.app.cfg`, `dcbx.ieee.app`) are `app` in CEE and
    /// IEEE form (set them with [`PortSettings::set_app`]).
    pub dcbx: DcbxConfig,
    /// The APP rules, one list for both DCBX versions (`app.entries`).
    pub app: AppRules,
    /// Adaptive headroom (whether it runs at all is `dcbx.headroom_measurement`).
    pub headroom: HeadroomSettings,
    /// The PFC storm watchdog and how often the PFC counters are read.
    pub pfc_watchdog: PfcWatchdogSettings,
    /// The RoCE host settings beyond DCB (`[ports."X".roce]`): each None is left alone.
    pub roce: RoceSettings,
}

impl Default for PortSettings {
    /// The built-in defaults: those of [`PortConfig::new`], and `apply = "none"`.
    fn default() -> Self {
        let PortConfig {
            mac: _,
            chassis_id,
            port_id,
            // What the port sends about its system comes from the host by default.
            system_name: _,
            port_description: _,
            system_description: _,
            system_capabilities: _,
            management_address: _,
            admin_status,
            timers,
            max_neighbors,
            max_neighbor_hold,
            dcbx,
        } = PortConfig::new(MacAddr([0; 6]));
        PortSettings {
            apply: Apply::None,
            nic_drift: lossless_proto::nic::DriftPolicy::Repair,
            nic_hold_ms: NIC_HOLD_MS,
            chassis_id,
            port_id,
            identity: IdentitySettings::default(),
            admin_status,
            timers,
            max_neighbors,
            max_neighbor_hold,
            app: AppRules::from_tables(&dcbx.app.cfg, &dcbx.ieee.app),
            dcbx,
            headroom: HeadroomSettings::default(),
            pfc_watchdog: PfcWatchdogSettings::default(),
            roce: RoceSettings::default(),
        }
    }
}

impl PortSettings {
    /// The agent's configuration for the port with this MAC, the identity TLVs left to
    /// the host taking what `local` says (`LocalInfo::default()`: nothing, not sent).
    pub fn port_config(&self, mac: MacAddr, local: &LocalInfo) -> PortConfig {
        let mut dcbx = self.dcbx.clone();
        dcbx.app.cfg = self.app.cee();
        dcbx.ieee.app = self.app.ieee();
        let mut cfg = PortConfig {
            chassis_id: self.chassis_id.clone(),
            port_id: self.port_id.clone(),
            admin_status: self.admin_status,
            timers: self.timers,
            max_neighbors: self.max_neighbors,
            max_neighbor_hold: self.max_neighbor_hold,
            dcbx,
            ..PortConfig::new(mac)
        };
        self.identity.apply(local, &mut cfg);
        cfg
    }

    /// The settings that give the agent `cfg` (its MAC aside, which the link gives),
    /// with `apply` and the headroom settings left at their defaults. An identity TLV
    /// `cfg` does not send is left to the host (so a node given no [`HostInfo`] sends
    /// exactly what `cfg` does).
    ///
    /// [`HostInfo`]: crate::identity::HostInfo
    pub fn from_port_config(cfg: &PortConfig) -> PortSettings {
        let value = |v: Option<String>| v.map_or(Advertise::Host, Advertise::Value);
        PortSettings {
            chassis_id: cfg.chassis_id.clone(),
            port_id: cfg.port_id.clone(),
            identity: IdentitySettings {
                port_description: value(cfg.port_description.clone()),
                system_name: value(cfg.system_name.clone()),
                system_description: value(cfg.system_description.clone()),
                system_capabilities: cfg
                    .system_capabilities
                    .map_or(Advertise::Host, Advertise::Value),
                management_address: cfg
                    .management_address
                    .map_or(Advertise::Host, |m| Advertise::Value(m.address)),
            },
            admin_status: cfg.admin_status,
            timers: cfg.timers,
            max_neighbors: cfg.max_neighbors,
            max_neighbor_hold: cfg.max_neighbor_hold,
            dcbx: cfg.dcbx.clone(),
            app: AppRules::from_tables(&cfg.dcbx.app.cfg, &cfg.dcbx.ieee.app),
            ..PortSettings::default()
        }
    }

    /// Sets the APP rules and the two tables they give.
    pub fn set_app(&mut self, rules: AppRules) {
        self.dcbx.app.cfg = rules.cee();
        self.dcbx.ieee.app = rules.ieee();
        self.app = rules;
    }

    pub fn dcbx(&self) -> &DcbxConfig {
        &self.dcbx
    }

    pub fn dcbx_mut(&mut self) -> &mut DcbxConfig {
        &mut self.dcbx
    }
}

impl Default for DaemonConfig {
    /// No configuration file: default daemon settings, every port on the
    /// built-in defaults, no `[ports]` section.
    fn default() -> Self {
        DaemonConfig {
            daemon: DaemonSettings::default(),
            defaults: Layer::new("defaults".into(), 0),
            ports: Vec::new(),
            relay: None,
        }
    }
}

impl DaemonConfig {
    /// Parses `text`; `origin` is the file name errors show.
    pub fn parse(text: &str, origin: &Path) -> Result<DaemonConfig, ConfigFileError> {
        let position = |at| error::line_column(text, at);
        let invalid = |f: error::Fault| {
            let (line, column) = position(f.at);
            ConfigFileError::Invalid {
                path: origin.to_path_buf(),
                line,
                column,
                key: f.key,
                reason: f.reason,
            }
        };
        let mut faults = Vec::new();
        let parsed = file::parse(text, &mut faults).map_err(|s| {
            let (line, column) = position(s.at);
            ConfigFileError::Syntax {
                path: origin.to_path_buf(),
                line,
                column,
                message: s.message,
            }
        })?;
        check::check(&parsed.defaults, &parsed.ports, &mut faults);
        // Every refusal, in file order.
        faults.sort_by_key(|f| f.at);
        let mut errors: Vec<ConfigFileError> = faults.into_iter().map(invalid).collect();
        match errors.len() {
            0 => {}
            1 => return Err(errors.remove(0)),
            _ => return Err(ConfigFileError::Several(errors)),
        }
        Ok(DaemonConfig {
            daemon: parsed.daemon,
            defaults: parsed.defaults,
            ports: parsed.ports,
            relay: parsed.relay,
        })
    }

    /// Whether a `[ports."..."]` section (exact name or glob) matches `ifname`:
    /// the daemon runs on such interfaces without being told on the command line.
    pub fn selects(&self, ifname: &str) -> bool {
        self.ports.iter().any(|p| p.pattern.matches(ifname))
    }

    /// The interface names of the exact-name `[ports]` sections, in file order.
    pub fn named_ports(&self) -> impl Iterator<Item = &str> {
        self.ports.iter().filter_map(|p| match &p.pattern {
            pattern::Pattern::Exact(name) => Some(name.as_str()),
            pattern::Pattern::Glob(_) => None,
        })
    }

    /// The effective settings of `ifname`: built-in defaults, `[defaults]`,
    /// the matching glob sections in file order, then its exact-name section.
    pub fn port(&self, ifname: &str) -> PortSettings {
        let mut s = PortSettings::default();
        self.defaults.apply(&mut s);
        for p in self.ports.iter().filter(|p| p.pattern.is_glob()) {
            if p.pattern.matches(ifname) {
                p.layer.apply(&mut s);
            }
        }
        for p in self.ports.iter().filter(|p| !p.pattern.is_glob()) {
            if p.pattern.matches(ifname) {
                p.layer.apply(&mut s);
            }
        }
        s
    }
}

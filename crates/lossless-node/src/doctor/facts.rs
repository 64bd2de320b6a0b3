//! What `doctor` judges, per port: read by the caller from the host, the NIC and the
//! daemon. The daemon's answers come in as the control socket gives them (JSON) and are
//! read here into typed views of the parts the checks use ([`DaemonPort::from_answers`]).

use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig, PriorityMap};
use lossless_wire::ieee::{AppPriority, EtsTable};
use serde::Deserialize;
use serde_json::Value;

use crate::config::AppRules;
use crate::hardware::NicState;
use crate::pfc::view::PortPfcView;
use crate::protocol::Hardware;
use crate::roce::{HostRoce, Reading};

/// Everything known about one port.
#[derive(Debug, Clone, PartialEq)]
pub struct PortFacts {
    pub port: String,
    /// The sysfs root the host was read under (`/sys`, or `--sysfs`), for the paths in
    /// the fixes.
    pub sysfs: String,
    /// The RoCE host settings (RDMA CM, ECN, CNP, pause, the firmware agent).
    pub host: HostRoce,
    /// The NIC's DCB state, read back through dcbnl (`DCB_CMD_IEEE_GET`).
    pub nic: Reading<NicFacts>,
    /// The netdev's MTU (`class/net/IF/mtu`).
    pub mtu: Reading<u32>,
    /// The driver's statistics (`ethtool -S`): name and value.
    pub stats: Reading<Vec<(String, u64)>>,
    pub daemon: Daemon,
    /// The RoCE priority and DSCP given on the command line, if any.
    pub given: Option<GivenClass>,
}

/// `--priority` and `--dscp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GivenClass {
    pub priority: u8,
    pub dscp: Option<u8>,
}

/// What dcbnl's `DCB_CMD_IEEE_GET` says the NIC holds, with the peer's objects a
/// firmware agent reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NicFacts {
    pub state: NicState,
    /// The peer's PFC as the NIC's firmware agent saw it (`ieee_peer_getpfc`).
    pub peer_pfc: Option<PriorityMap>,
    /// The peer's APP entries as the firmware agent saw them.
    pub peer_apps: Option<Vec<AppPriority>>,
}

/// The daemon, as far as this port goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Daemon {
    /// Nothing to ask it: no daemon answered, it does not manage the port, or its
    /// answer could not be read. Why, and what would let the checks be made.
    Without {
        why: String,
        fix: String,
    },
    Port(Box<DaemonPort>),
}

impl Daemon {
    pub fn port(&self) -> Option<&DaemonPort> {
        match self {
            Daemon::Port(p) => Some(p),
            Daemon::Without { .. } => None,
        }
    }
}

/// What only the daemon knows about a port: the negotiation with the peer, the
/// configuration it runs, the headroom it measured, the watchdog's counters.
#[derive(Debug, Clone, PartialEq)]
pub struct DaemonPort {
    /// `losslessd 0.1.0 pid 123 on SOCKET`.
    pub daemon: String,
    pub link_up: bool,
    /// LLDP's admin status (`rxtx`, `tx`, `rx`, `disabled`).
    pub admin_status: String,
    /// What reaches the NIC (`apply`).
    pub hardware: Hardware,
    pub dcbx: DcbxFacts,
    pub headroom: Option<HeadroomFacts>,
    pub pfc: Option<PortPfcView>,
    /// The largest frame the LLDP neighbour takes (IEEE 802.3 Maximum Frame Size
    /// TLV), when it says.
    pub peer_max_frame: Option<u16>,
    /// The neighbours in view.
    pub neighbors: usize,
    /// What DCBX each neighbour speaks (`ieee`, `cee`, `ieee+cee`, `cin`, `none`).
    pub neighbor_dcbx: Vec<String>,
}

/// `dcbx show`, one port: the parts the checks read.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct DcbxFacts {
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    pub peer_present: bool,
    pub all_syncd: bool,
    pub any_error: bool,
    pub mode: ModeFacts,
    pub ieee: IeeeFacts,
    pub pg: CeeFeature<PgConfig>,
    pub pfc: CeeFeature<PfcConfig>,
    pub app: CeeFeature<AppConfig>,
    /// The APP rules of the configuration the daemon runs (file and runtime changes).
    #[serde(default)]
    pub app_rules: AppRules,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ModeFacts {
    /// `auto`, `ieee`, `cee`, `static`.
    pub configured: String,
    /// `ieee` or `cee`.
    pub running: String,
    #[serde(default)]
    pub reason_text: String,
}

/// A CEE DCBX feature as `dcbx show` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CeeFeature<C> {
    pub enable: bool,
    pub advertise: bool,
    pub oper: C,
    pub oper_mode: bool,
    pub syncd: bool,
    pub error: bool,
    #[serde(default)]
    pub peer: Option<C>,
    #[serde(default)]
    pub reason_text: String,
}

/// An IEEE 802.1Qaz feature as `dcbx show` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct IeeeFeature<C> {
    pub enable: bool,
    pub advertise: bool,
    pub oper: C,
    pub oper_mode: bool,
    pub agreed: bool,
    pub error: bool,
    #[serde(default)]
    pub peer: Option<C>,
    #[serde(default)]
    pub reason_text: String,
}

impl<C> CeeFeature<C> {
    /// `pfc: error, WHY` or `pfc: not in sync, WHY` for a feature that is on and
    /// advertised and falls short.
    pub fn fault(&self, name: &str) -> Option<String> {
        let fault = if self.error { "error" } else { "not in sync" };
        (self.enable && self.advertise && (self.error || !self.syncd))
            .then(|| format!("{name}: {fault}, {}", self.reason_text))
    }
}

impl<C> IeeeFeature<C> {
    /// `pfc: error, WHY` or `pfc: not agreed, WHY` for a feature that is on and
    /// advertised and falls short.
    pub fn fault(&self, name: &str) -> Option<String> {
        let fault = if self.error { "error" } else { "not agreed" };
        (self.enable && self.advertise && (self.error || !self.agreed))
            .then(|| format!("{name}: {fault}, {}", self.reason_text))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct IeeeFacts {
    pub ets: IeeeFeature<EtsTable>,
    pub pfc: IeeeFeature<PriorityMap>,
    pub app: IeeeFeature<Vec<AppPriority>>,
    #[serde(default)]
    pub peer_tlvs: PeerTlvFacts,
}

/// The IEEE 802.1Qaz TLVs the peer sent, whatever this end did with them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct PeerTlvFacts {
    #[serde(default)]
    pub pfc: Option<PeerPfc>,
    #[serde(default)]
    pub app: Option<Vec<AppPriority>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PeerPfc {
    pub enabled: PriorityMap,
}

/// `headroom show`, one port: the parts the checks read.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct HeadroomFacts {
    /// Measurement off for the port (`reason` says why).
    #[serde(default)]
    pub off: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub running: bool,
    #[serde(default)]
    pub socket_error: Option<String>,
    /// The largest frame the sizing assumes (`headroom.max_frame`).
    #[serde(default)]
    pub max_frame_octets: Option<u64>,
    /// The sizing of the last measurement.
    #[serde(default)]
    pub need: Option<NeedFacts>,
    /// What the port holds as its headroom.
    #[serde(default)]
    pub applied: Option<HeadroomBytes>,
    #[serde(default)]
    pub buffer: Option<BufferFacts>,
    #[serde(default)]
    pub failures: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NeedFacts {
    pub x_bit_times: u64,
    pub headroom: HeadroomBytes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct HeadroomBytes {
    /// What to reserve (cells x cell size).
    pub bytes: u64,
}

/// What became of the NIC's DCB buffer for the headroom (`state`: `sized`,
/// `does_not_fit`, `off`, `unsupported`, `pending`, `no_pfc_priority`, `error`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct BufferFacts {
    pub state: String,
    #[serde(default)]
    pub headroom_bytes: Option<u64>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
}

/// The statistics' names that count frames discarded on one priority, as the drivers
/// name them: mlx5 `rx_prioN_discards`, `rx_prioN_buf_discard`, `rx_prioN_cong_discard`
/// (and any `rx_prioN_..._discard...`/`..._drop...` of the same shape).
pub const DISCARD_STATS_HELP: &str = "rx_prioN_discards, rx_prioN_buf_discard, \
                                      rx_prioN_cong_discard (mlx5)";

/// The priority whose discards statistic `name` counts, if it is one
/// ([`DISCARD_STATS_HELP`]).
pub fn discard_priority(name: &str) -> Option<u8> {
    let rest = name.strip_prefix("rx_prio")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (num, tail) = rest.split_at(digits);
    let p: u8 = num.parse().ok()?;
    let tail = tail.strip_prefix('_')?;
    (p < 8 && (tail.contains("discard") || tail.contains("drop"))).then_some(p)
}

/// Why a port's facts cannot be read from the daemon's answers: which answer, and
/// what in it.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The answer (`status`, `dcbx show`) lists no such port.
    #[error("{answer} has no port {port}")]
    NoPort { answer: &'static str, port: String },
    /// The port's part of the answer is not what the checks read.
    #[error("{answer} of {port}: {error}")]
    Unreadable {
        answer: &'static str,
        port: String,
        error: serde_json::Error,
    },
    /// A field of the port's part of the answer is not what the checks read.
    #[error("{answer} of {port}: {field}: {error}")]
    Field {
        answer: &'static str,
        port: String,
        field: &'static str,
        error: serde_json::Error,
    },
}

impl DaemonPort {
    /// A port's facts from the daemon's answers to `status`, `dcbx show`, `headroom
    /// show`, `pfc show` and `neighbors` (each the whole `result`, every port; the
    /// last three may be absent, e.g. from an older daemon). `daemon` names it.
    pub fn from_answers(
        port: &str,
        daemon: String,
        status: &Value,
        dcbx: &Value,
        headroom: Option<&Value>,
        pfc: Option<&Value>,
        neighbors: Option<&Value>,
    ) -> Result<DaemonPort, AnswerError> {
        let no_port = |answer| AnswerError::NoPort {
            answer,
            port: port.to_string(),
        };
        let unreadable = |answer| {
            move |error| AnswerError::Unreadable {
                answer,
                port: port.to_string(),
                error,
            }
        };
        let line = find(status, port).ok_or_else(|| no_port("status"))?;
        let dcbx_port = find(dcbx, port).ok_or_else(|| no_port("dcbx show"))?;
        let dcbx: DcbxFacts =
            serde_json::from_value(dcbx_port.clone()).map_err(unreadable("dcbx show"))?;
        let hardware: Hardware =
            serde_json::from_value(line["hardware"].clone()).map_err(|error| {
                AnswerError::Field {
                    answer: "status",
                    port: port.to_string(),
                    field: "hardware",
                    error,
                }
            })?;
        let headroom = match headroom.and_then(|h| find(h, port)) {
            Some(h) => Some(
                serde_json::from_value::<HeadroomFacts>(h.clone())
                    .map_err(unreadable("headroom show"))?,
            ),
            None => None,
        };
        let pfc = match pfc.and_then(|h| find(h, port)) {
            Some(p) => Some(
                serde_json::from_value::<PortPfcView>(p.clone()).map_err(unreadable("pfc show"))?,
            ),
            None => None,
        };
        let nbrs = neighbors
            .and_then(|n| find(n, port))
            .and_then(|p| p["neighbors"].as_array().cloned())
            .unwrap_or_default();
        let peer_max_frame = nbrs
            .iter()
            .find_map(|n| n["max_frame_size"].as_u64())
            .and_then(|v| u16::try_from(v).ok());
        Ok(DaemonPort {
            daemon,
            link_up: line["link_up"].as_bool().unwrap_or(false),
            admin_status: line["admin_status"].as_str().unwrap_or("?").to_string(),
            hardware,
            dcbx,
            headroom,
            pfc,
            peer_max_frame,
            neighbors: line["neighbors"]
                .as_u64()
                .map_or(nbrs.len(), |n| n as usize),
            neighbor_dcbx: nbrs
                .iter()
                .filter_map(|n| n["dcbx"].as_str().map(str::to_string))
                .collect(),
        })
    }

    /// The version that runs is IEEE 802.1Qaz (else CEE DCBX).
    pub fn ieee(&self) -> bool {
        self.dcbx.mode.running != "cee"
    }

    /// `dcbx.mode = "static"`: nothing negotiated.
    pub fn is_static(&self) -> bool {
        self.dcbx.mode.configured == "static"
    }

    /// The PFC priorities the port runs (its operational PFC), and in words where
    /// they come from.
    pub fn oper_pfc(&self) -> (PriorityMap, String) {
        if self.ieee() {
            let f = &self.dcbx.ieee.pfc;
            let map = if f.oper_mode && f.enable {
                f.oper
            } else {
                PriorityMap::NONE
            };
            (map, f.reason_text.clone())
        } else {
            let f = &self.dcbx.pfc;
            let map = if f.oper_mode && f.enable {
                f.oper.priorities
            } else {
                PriorityMap::NONE
            };
            (map, f.reason_text.clone())
        }
    }

    /// The peer's PFC, as its DCBX TLV says (None: it sends none).
    pub fn peer_pfc(&self) -> Option<PriorityMap> {
        if self.ieee() {
            self.dcbx
                .ieee
                .peer_tlvs
                .pfc
                .as_ref()
                .map(|p| p.enabled)
                .or(self.dcbx.ieee.pfc.peer)
        } else {
            self.dcbx.pfc.peer.map(|p| p.priorities)
        }
    }

    /// The APP entries in operation, as IEEE 802.1Qaz entries (CEE DCBX's TCP/UDP
    /// port entries as `port` entries, one per priority).
    pub fn oper_app(&self) -> Vec<AppPriority> {
        if self.ieee() {
            let f = &self.dcbx.ieee.app;
            if f.oper_mode || self.is_static() {
                f.oper.clone()
            } else {
                Vec::new()
            }
        } else {
            let f = &self.dcbx.app;
            if !f.oper_mode {
                return Vec::new();
            }
            cee_entries(&f.oper)
        }
    }

    /// The peer's APP entries (None: it sends none).
    pub fn peer_app(&self) -> Option<Vec<AppPriority>> {
        if self.ieee() {
            self.dcbx
                .ieee
                .peer_tlvs
                .app
                .clone()
                .or_else(|| self.dcbx.ieee.app.peer.clone())
        } else {
            self.dcbx.app.peer.as_ref().map(cee_entries)
        }
    }

    /// The transmission classes as the port runs them: IEEE 802.1Qaz ETS, or CEE
    /// DCBX's priority groups.
    pub fn oper_classes(&self) -> Option<Classes> {
        if self.ieee() {
            let f = &self.dcbx.ieee.ets;
            (f.oper_mode || self.is_static()).then_some(Classes::Ets(f.oper))
        } else {
            let f = &self.dcbx.pg;
            f.oper_mode.then_some(Classes::Pg(f.oper))
        }
    }
}

/// How priorities are scheduled: ETS traffic classes, or CEE DCBX priority groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Classes {
    Ets(EtsTable),
    Pg(PgConfig),
}

impl Classes {
    /// Whether `priority` is scheduled strictly, and its class in words.
    pub fn strict(&self, priority: u8) -> (bool, String) {
        let p = usize::from(priority.min(7));
        match self {
            Classes::Ets(t) => {
                let tc = t.prio_tc[p];
                let tsa = t.tsa[usize::from(tc.min(7))];
                let words = match tsa {
                    lossless_wire::ieee::Tsa::STRICT => format!("traffic class {tc}, strict"),
                    lossless_wire::ieee::Tsa::ETS => format!(
                        "traffic class {tc}, ETS {} %",
                        t.tc_bw[usize::from(tc.min(7))]
                    ),
                    other => format!("traffic class {tc}, TSA {}", other.0),
                };
                (tsa == lossless_wire::ieee::Tsa::STRICT, words)
            }
            Classes::Pg(pg) => {
                let g = pg.pgid[p];
                if g == 15 {
                    (true, "priority group 15, strict".into())
                } else {
                    let pct = pg.percent.get(usize::from(g)).copied().unwrap_or(0);
                    (false, format!("priority group {g}, {pct} %"))
                }
            }
        }
    }
}

/// CEE DCBX APP entries as IEEE ones: selector 1 (TCP/UDP port) as `port`, 0
/// (Ethertype) as `ethertype`; one entry per priority.
fn cee_entries(c: &AppConfig) -> Vec<AppPriority> {
    let mut out = Vec::new();
    for e in c.entries.iter() {
        let selector = match e.selector.0 {
            0 => lossless_wire::ieee::Selector::ETHERTYPE,
            1 => lossless_wire::ieee::Selector::PORT,
            _ => continue,
        };
        for priority in e.priorities.priorities() {
            out.push(AppPriority {
                priority,
                selector,
                protocol: e.protocol,
            });
        }
    }
    out
}

/// The object of `port` in an answer's `ports` list.
fn find<'a>(answer: &'a Value, port: &str) -> Option<&'a Value> {
    answer["ports"]
        .as_array()?
        .iter()
        .find(|p| p["port"].as_str() == Some(port))
}

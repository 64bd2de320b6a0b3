//! The control-socket protocol: JSON lines over a Unix stream socket.
//!
//! The client writes one request object on one line; the daemon answers with
//! one response line, `{"ok":true,"result":...}` or
//! `{"ok":false,"error":{"kind":...,"message":...}}`. An `events` request
//! with `follow` keeps the connection open and streams one [`EventRecord`]
//! per line after the response. Field names are a stable interface, documented
//! in docs/daemon.md; additions are allowed, renames and removals are not.

use lossless_dcbx::cee::control::ControlMachine;
use lossless_dcbx::lldp::rx::NeighborSummary;
use lossless_dcbx::stats::{DcbxStats, LldpStats};
use lossless_dcbx::status::ModeStatus;
use lossless_dcbx::{AdminStatus, DcbxMode, Event, FeatureStatus};
use lossless_wire::cee::{AppConfig, PfcConfig, PgConfig};
use lossless_wire::ieee::Tsa;
use lossless_wire::MacAddr;
use serde::{Deserialize, Serialize};

/// Protocol version, in every response.
pub const PROTOCOL_VERSION: u32 = 1;

/// Where the daemon listens unless told otherwise.
pub const DEFAULT_SOCKET: &str = "/run/lossless/losslessd.sock";

/// A request line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    Status,
    Neighbors {
        #[serde(default)]
        port: Option<String>,
    },
    DcbxShow {
        #[serde(default)]
        port: Option<String>,
    },
    DcbxSet {
        port: String,
        change: FeatureChange,
    },
    /// Drops a port's runtime change (`dcbx_set`) so that the file's value runs again:
    /// one feature's, or every one when `feature` is absent. Persisted like a set.
    DcbxReset {
        port: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        feature: Option<FeatureName>,
    },
    /// Sets RoCE host settings of a port at run time (`lossless roce set`), each key
    /// checked by the file's rule ([`crate::config::RoceSetting::check`]): persisted as
    /// `dcbx_set` is, over the file's `[ports."X".roce]`.
    RoceSet {
        port: String,
        settings: std::collections::BTreeMap<String, serde_json::Value>,
    },
    /// Drops the port's runtime RoCE host settings: the file's run again.
    RoceReset {
        port: String,
    },
    Counters {
        #[serde(default)]
        port: Option<String>,
    },
    Events {
        /// Keep the connection open and stream events as they happen.
        #[serde(default)]
        follow: bool,
    },
    Reload,
    /// Adaptive headroom per port: the last measurement, its sizing, what is applied.
    HeadroomShow {
        #[serde(default)]
        port: Option<String>,
    },
    /// The PFC relay of draft-he-rtgwg-wan-pfc-00: the core's counters and the data path's.
    RelayShow,
    /// PFC per priority (frames, rates, time paused) and the storm watchdog's state.
    PfcShow {
        #[serde(default)]
        port: Option<String>,
    },
}

/// One feature's administrative change; absent fields stay as they are. Which fields
/// a feature takes (any other is refused, naming it):
///
/// * every feature but `mode`: `enable`, `willing`, `advertise`;
/// * `pg`: `pgid`, `percent`;
/// * `pfc` (CEE DCBX and IEEE 802.1Qaz alike): `priorities`; IEEE only: `mbc`;
/// * `app`: `app` (the whole list, replaced), `app_del` then `app_add` (rules removed,
///   then merged in);
/// * `ets` (IEEE 802.1Qaz): `prio_tc`, `tc_bw`, `tsa` (eight each) or `tcs` (per
///   traffic class, the three tables at once), `max_tcs`, `cbs`, `recommend`;
/// * `mode`: `mode`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "FeatureChangeWire", into = "FeatureChangeWire")]
pub struct FeatureChange {
    pub feature: FeatureName,
    pub enable: Option<bool>,
    pub willing: Option<bool>,
    pub advertise: Option<bool>,
    /// PFC: the priorities with PFC on (replaces the set).
    pub priorities: Option<Vec<u8>>,
    /// PFC, IEEE 802.1Qaz: the MACsec bypass capability bit.
    pub mbc: Option<bool>,
    /// PG: PGID of priorities 0..7.
    pub pgid: Option<Vec<u8>>,
    /// PG: bandwidth percentage of PGs 0..7.
    pub percent: Option<Vec<u8>>,
    /// APP: the whole list of rules (replaces it; the CEE table's shape reads too).
    pub app: Option<crate::config::AppRules>,
    /// APP: rules to merge in ([`crate::config::AppRules::add`]) and to take out
    /// ([`crate::config::AppRules::remove`]).
    pub app_rules: Option<Box<AppRulesChange>>,
    /// ETS's fields (boxed: a request stays small).
    pub ets: Option<Box<EtsChange>>,
    /// mode: which DCBX version the port runs.
    pub mode: Option<DcbxMode>,
}

/// APP rules added and removed by one change: `app_del` runs first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppRulesChange {
    /// A rule for a selector and protocol already listed gains the priorities (a
    /// DSCP's is replaced).
    pub add: Option<Vec<AppRuleChange>>,
    /// The priorities given, or the whole rule when none is.
    pub del: Option<Vec<AppRuleChange>>,
}

/// ETS's fields of a change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EtsChange {
    /// The traffic class of priorities 0..7.
    pub prio_tc: Option<Vec<u8>>,
    /// The bandwidth share of traffic classes 0..7.
    pub tc_bw: Option<Vec<u8>>,
    /// The selection algorithm of traffic classes 0..7.
    pub tsa: Option<Vec<Tsa>>,
    /// Per traffic class (the file's `ets.tcs`): replaces the three tables.
    pub tcs: Option<Vec<TcChange>>,
    /// Traffic classes the station supports, 1..=8.
    pub max_tcs: Option<u8>,
    /// The station supports the credit-based shaper.
    pub cbs: Option<bool>,
    /// Send the ETS Recommendation TLV (Some(true/false)), or Some(None): when not
    /// willing (the default).
    pub recommend: Option<Option<bool>>,
}

impl From<FeatureChangeWire> for FeatureChange {
    fn from(w: FeatureChangeWire) -> Self {
        let app_rules = (w.app_add.is_some() || w.app_del.is_some()).then(|| {
            Box::new(AppRulesChange {
                add: w.app_add,
                del: w.app_del,
            })
        });
        let ets = EtsChange {
            prio_tc: w.prio_tc,
            tc_bw: w.tc_bw,
            tsa: w.tsa,
            tcs: w.tcs,
            max_tcs: w.max_tcs,
            cbs: w.cbs,
            recommend: w.recommend,
        };
        FeatureChange {
            feature: w.feature,
            enable: w.enable,
            willing: w.willing,
            advertise: w.advertise,
            priorities: w.priorities,
            mbc: w.mbc,
            pgid: w.pgid,
            percent: w.percent,
            app: w.app,
            app_rules,
            ets: (ets != EtsChange::default()).then(|| Box::new(ets)),
            mode: w.mode,
        }
    }
}

impl From<FeatureChange> for FeatureChangeWire {
    fn from(c: FeatureChange) -> Self {
        let (app_add, app_del) = match c.app_rules {
            Some(r) => (r.add, r.del),
            None => (None, None),
        };
        let e = c.ets.map(|e| *e).unwrap_or_default();
        FeatureChangeWire {
            feature: c.feature,
            enable: c.enable,
            willing: c.willing,
            advertise: c.advertise,
            priorities: c.priorities,
            mbc: c.mbc,
            pgid: c.pgid,
            percent: c.percent,
            app: c.app,
            app_add,
            app_del,
            prio_tc: e.prio_tc,
            tc_bw: e.tc_bw,
            tsa: e.tsa,
            tcs: e.tcs,
            max_tcs: e.max_tcs,
            cbs: e.cbs,
            recommend: e.recommend,
            mode: c.mode,
        }
    }
}

/// The flat JSON form of [`FeatureChange`] (what the socket reads and writes).
#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeatureChangeWire {
    feature: FeatureName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enable: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    willing: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    advertise: Option<bool>,
    /// PFC: the priorities with PFC on (replaces the set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    priorities: Option<Vec<u8>>,
    /// PFC, IEEE 802.1Qaz: the MACsec bypass capability bit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mbc: Option<bool>,
    /// PG: PGID of priorities 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pgid: Option<Vec<u8>>,
    /// PG: bandwidth percentage of PGs 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    percent: Option<Vec<u8>>,
    /// APP: the whole list of rules (replaces it; the CEE table's shape reads too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    app: Option<crate::config::AppRules>,
    /// APP: rules to merge in ([`crate::config::AppRules::add`]): a rule for a selector
    /// and protocol already listed gains the priorities (a DSCP's is replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    app_add: Option<Vec<AppRuleChange>>,
    /// APP: rules to take out ([`crate::config::AppRules::remove`]): the priorities
    /// given, or the whole rule when none is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    app_del: Option<Vec<AppRuleChange>>,
    /// ETS: the traffic class of priorities 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    prio_tc: Option<Vec<u8>>,
    /// ETS: the bandwidth share of traffic classes 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tc_bw: Option<Vec<u8>>,
    /// ETS: the selection algorithm of traffic classes 0..7.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tsa: Option<Vec<Tsa>>,
    /// ETS per traffic class (the file's `ets.tcs`): replaces the three tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tcs: Option<Vec<TcChange>>,
    /// ETS: traffic classes the station supports, 1..=8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_tcs: Option<u8>,
    /// ETS: the station supports the credit-based shaper.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cbs: Option<bool>,
    /// ETS: send the ETS Recommendation TLV (`true`/`false`), or `null`: when not
    /// willing (the default).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    recommend: Option<Option<bool>>,
    /// mode: which DCBX version the port runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mode: Option<DcbxMode>,
}

/// A field that may be given as `null`: present (Some) with its value.
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// One APP rule to add or remove: `{"selector":"dscp","protocol":26,"priority":3}`.
/// `priority` (one) or `priorities` (a list); checked as the file's are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppRuleChange {
    pub selector: crate::config::RuleSelector,
    pub protocol: u16,
    #[serde(
        default,
        alias = "priority",
        deserialize_with = "one_or_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub priorities: Vec<u8>,
    /// CEE DCBX only: the OUI sent with the entry (00-1B-21 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oui: Option<[u8; 3]>,
}

fn one_or_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        One(u8),
        List(Vec<u8>),
    }
    Ok(match Raw::deserialize(d)? {
        Raw::One(p) => vec![p],
        Raw::List(l) => l,
    })
}

/// One traffic class of the per-class ETS form: `{"tc":1,"priorities":[3],"bandwidth":50}`.
/// Priorities not listed in any class are on class 0; a class not listed is strict with
/// no share; a class with a share is ETS unless `tsa` says otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcChange {
    pub tc: u8,
    #[serde(default)]
    pub priorities: Vec<u8>,
    #[serde(default)]
    pub bandwidth: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tsa: Option<Tsa>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeatureName {
    Pg,
    #[default]
    Pfc,
    App,
    /// IEEE 802.1Qaz ETS.
    Ets,
    /// The DCBX version (`dcbx.mode`): not a feature, but changed the same way.
    Mode,
}

impl FeatureName {
    pub const ALL: [FeatureName; 5] = [
        FeatureName::Pg,
        FeatureName::Pfc,
        FeatureName::App,
        FeatureName::Ets,
        FeatureName::Mode,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FeatureName::Pg => "pg",
            FeatureName::Pfc => "pfc",
            FeatureName::App => "app",
            FeatureName::Ets => "ets",
            FeatureName::Mode => "mode",
        }
    }
}

/// A response line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub protocol: u32,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: ErrorKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The request line is not valid JSON or not a known request.
    BadRequest,
    /// No such port is managed by the daemon.
    NoSuchPort,
    /// The requested configuration is invalid; nothing changed.
    InvalidConfig,
    /// The new configuration could not be persisted; nothing changed.
    Persist,
    /// The daemon is shutting down or otherwise cannot serve the request.
    Unavailable,
    /// The configuration has no such section (e.g. no `[relay]`).
    NotConfigured,
}

impl Response {
    pub fn ok(result: serde_json::Value) -> Self {
        Response {
            protocol: PROTOCOL_VERSION,
            ok: true,
            result: Some(result),
            error: None,
        }
    }

    pub fn err(kind: ErrorKind, message: impl Into<String>) -> Self {
        Response {
            protocol: PROTOCOL_VERSION,
            ok: false,
            result: None,
            error: Some(ErrorBody {
                kind,
                message: message.into(),
            }),
        }
    }
}

/// `status`: the daemon, its health as a whole, and a line per port.
#[derive(Debug, Clone, Serialize)]
pub struct StatusResult {
    pub daemon: DaemonInfo,
    /// Every port's problems after its name (and interfaces named on the command line
    /// that do not exist): `healthy` is false when there is any.
    #[serde(flatten)]
    pub health: crate::health::Health,
    pub ports: Vec<PortStatusLine>,
}

/// One port of `status`: its summary, which DCBX version runs, whether a feature is
/// in error.
#[derive(Debug, Clone, Serialize)]
pub struct PortStatusLine {
    #[serde(flatten)]
    pub summary: PortSummary,
    /// Which DCBX version runs and why (as in `dcbx_show`).
    pub mode: ModeStatus,
    /// Some feature of the running version is in error.
    pub any_error: bool,
    /// `healthy`, `health` ("ok" or the problems in words), `problems`: see
    /// [`crate::health`].
    #[serde(flatten)]
    pub health: crate::health::Health,
}

#[derive(Debug, Clone, Serialize)]
pub struct DaemonInfo {
    pub version: String,
    pub pid: u32,
    pub uptime_s: f64,
    pub config: Option<String>,
    pub state_dir: String,
    pub socket: String,
    pub metrics: Option<String>,
    pub boots: u32,
    /// Why the configuration file was refused at the last reload (`reload`, SIGHUP, or
    /// the file changing under a watching daemon); absent when it was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_refused: Option<String>,
    /// What is wrong with the state directory (absent: nothing); while its `reason`
    /// is not `not_durable`, runtime changes are refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_problem: Option<crate::state::StateDirProblem>,
    /// The state file refused at start and set aside (absent: none), until a runtime
    /// change is persisted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_set_aside: Option<crate::state::StateSetAside>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PortSummary {
    pub port: String,
    pub ifindex: u32,
    pub mac: MacAddr,
    pub link_up: bool,
    pub admin_status: AdminStatus,
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    pub peer_present: bool,
    pub all_syncd: bool,
    pub neighbors: usize,
    /// The last negotiation, link-up or change to every feature Syncd, in
    /// milliseconds as the daemon measured it; null before the first.
    pub last_convergence_ms: Option<f64>,
    /// What happens to the operational configuration: see [`Hardware`].
    pub hardware: Hardware,
    /// Priorities the PFC watchdog holds in storm (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pfc_storm: Vec<u8>,
    /// The RoCE host settings beyond DCB: each configured or held value and how it
    /// stands.
    #[serde(default)]
    pub roce: crate::roce::RoceView,
}

pub use crate::hardware::Hardware;

/// `neighbors`.
#[derive(Debug, Clone, Serialize)]
pub struct PortNeighbors {
    pub port: String,
    pub neighbors: Vec<NeighborSummary>,
    /// MSAPs whose LLDPDUs were discarded (the remote MIB was full) and have not
    /// aged out: they count as neighbours for the multiple-neighbour rule.
    pub discarded_msaps: usize,
}

/// `dcbx show`: one port.
#[derive(Debug, Clone, Serialize)]
pub struct PortDcbx {
    pub port: String,
    pub dcbx_enabled: bool,
    pub dcbx_active: bool,
    /// Which DCBX version runs and why.
    pub mode: lossless_dcbx::status::ModeStatus,
    pub peer_present: bool,
    /// Every feature of the running version agrees with the peer, a peer present.
    pub all_syncd: bool,
    /// Some feature of the running version is in error.
    pub any_error: bool,
    pub control: ControlMachine,
    pub pg: FeatureStatus<PgConfig>,
    pub pfc: FeatureStatus<PfcConfig>,
    pub app: FeatureStatus<AppConfig>,
    /// The IEEE 802.1Qaz features (ETS, PFC, APP) and the peer's TLVs.
    pub ieee: lossless_dcbx::status::IeeeStatus,
    /// Where pg, pfc and app come from; [`DcbxView::source`] is what the protocol
    /// sends (every feature and the mode).
    #[serde(skip)]
    pub source: FeatureSources,
}

/// `dcbx show` (and `dcbx set`/`dcbx reset`'s answer): one port, with where each
/// setting comes from and the local settings the feature views do not show.
#[derive(Debug, Clone, Serialize)]
pub struct DcbxView {
    #[serde(flatten)]
    pub dcbx: PortDcbx,
    /// Where each feature's admin settings come from: "config" or "runtime"
    /// (a `dcbx set` persisted in the state directory).
    pub source: Sources,
    /// The local IEEE 802.1Qaz settings beside the features' tables.
    pub ieee_admin: IeeeAdmin,
    /// The port's APP rules, one list for both versions (what `ieee.app.admin` and
    /// `app.desired` are made of).
    pub app_rules: crate::config::AppRules,
    /// What the NIC holds, read back, beside admin / peer / oper; absent where the
    /// daemon does not program the NIC (`apply = "none"`, no dcbnl).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nic: Option<NicView>,
}

/// `dcbx show`'s `nic`: the last read-back and what it says.
#[derive(Debug, Clone, Serialize)]
pub struct NicView {
    /// Seconds since the read-back (None: not read yet).
    pub read_s_ago: Option<f64>,
    /// Why the last read-back failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_error: Option<String>,
    /// ETS as the NIC holds it (`prio_tc`, `tc_bw`, `tsa`; None: not reported).
    pub ets: Option<lossless_wire::ieee::EtsTable>,
    /// The PFC priorities the NIC runs.
    pub pfc: Option<lossless_wire::cee::PriorityMap>,
    /// The PFC delay allowance the NIC holds, bit times.
    pub pfc_delay: Option<u16>,
    /// The NIC's whole APP table, whoever set each entry.
    pub apps: Vec<lossless_wire::ieee::AppPriority>,
    /// The selector trust order: `dscp`, `pcp`, ... (None: no trust table to read).
    pub trust: Option<Vec<String>>,
    /// CEE DCBX's objects, where the port runs CEE (`pfc`: bit p = priority p).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cee: Option<crate::hardware::CeeNic>,
    /// Each part the driver refused, with its answer; `covered`: no problem for the
    /// traffic (see `status`).
    pub refused: Vec<RefusedView>,
    /// Where the NIC differs from what was programmed.
    pub differences: Vec<String>,
    /// The driver took DSCP entries and refused every other selector.
    pub dscp_only: bool,
    /// `nic_drift`, and the drift found and repaired so far.
    pub drift_policy: crate::nic::DriftPolicy,
    pub drift_detected: u64,
    pub drift_repaired: u64,
}

/// One refused part.
#[derive(Debug, Clone, Serialize)]
pub struct RefusedView {
    #[serde(flatten)]
    pub refusal: crate::nic::Refusal,
    pub text: String,
    pub covered: bool,
}

/// Where every setting `dcbx set` changes comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sources {
    pub pg: Source,
    pub pfc: Source,
    pub app: Source,
    pub ets: Source,
    pub mode: Source,
}

/// Local IEEE 802.1Qaz settings that the feature status leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IeeeAdmin {
    /// PFC: MACsec bypass capability.
    pub pfc_mbc: bool,
    /// PFC capability: traffic classes that may have PFC at once (`pfc.num_tcs`).
    pub pfc_cap: u8,
    /// ETS: traffic classes the station supports.
    pub ets_max_tcs: u8,
    /// ETS: credit-based shaper support.
    pub ets_cbs: bool,
    /// ETS Recommendation as configured: true, false, or null (when not willing).
    pub ets_recommend: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureSources {
    pub pg: Source,
    pub pfc: Source,
    pub app: Source,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Config,
    Runtime,
}

/// `counters`: one port.
#[derive(Debug, Clone, Serialize)]
pub struct PortCounters {
    pub port: String,
    pub lldp: LldpStats,
    pub dcbx: DcbxStats,
    pub io: IoCounters,
    /// Failed dcbnl operations by kind (`not_supported`, `refused`, ...).
    pub hardware_errors: std::collections::BTreeMap<&'static str, u64>,
}

/// What the daemon saw at the socket, below the agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounters {
    pub rx_frames: u64,
    pub rx_errors: u64,
    pub tx_frames: u64,
    pub tx_errors: u64,
    /// MAC control frames (PAUSE/PFC, 0x8808) seen on the port.
    pub mac_control_rx: u64,
    /// Frames the kernel dropped before the daemon read them, the packet socket's
    /// receive buffer full (`PACKET_STATISTICS`, read every 10 s and before each answer
    /// that shows it).
    #[serde(default)]
    pub kernel_drops: u64,
    /// The packet socket's receive buffer as the kernel granted it, bytes; null until
    /// the socket is open.
    #[serde(default)]
    pub rcvbuf_bytes: Option<u64>,
    /// Frames dropped unread, the port's receive budget spent (`rx_budget_per_s`,
    /// `rx_budget_burst`): from anyone, the DCBX peer included.
    #[serde(default)]
    pub rx_over_budget: u64,
    /// Of `rx_over_budget`, those from the DCBX peer (its MSAP, or its MAC): its own
    /// allowance spent (a flood that copies the peer's identity, or a PFC storm).
    #[serde(default)]
    pub rx_peer_over_budget: u64,
    /// Whether the port reads a packet socket of its own (since its receive budget was
    /// first spent) rather than the shared ones; `kernel_drops` counts only what its
    /// own socket dropped, the shared sockets' drops are in [`SharedSocketCounters`].
    #[serde(default)]
    pub own_socket: bool,
    /// Times the port's own socket could not be opened (it stayed on the shared
    /// ones; asked again 10 s later, if its budget is still spent).
    #[serde(default)]
    pub own_socket_failures: u64,
    /// LLDPDUs received that this host sent (the MSAP of one of its ports): a loop;
    /// discarded.
    #[serde(default)]
    pub rx_own_lldpdus: u64,
    /// Frames read from both the shared sockets and the port's own one as it switched
    /// (the kernel gave both a copy for the few microseconds until the shared sockets
    /// excluded the port), delivered once: the copies skipped. Matched by the
    /// kernel's receive stamps, never by the daemon's clock.
    #[serde(default)]
    pub own_socket_skipped: u64,
}

/// The packet sockets every port reads until it gets its own (one per EtherType:
/// LLDP, MAC Control), as `counters` shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedSocketCounters {
    /// Frames the kernel dropped on the shared sockets, their receive buffers full
    /// (for no port in particular).
    pub kernel_drops: u64,
    /// The receive buffer the kernel granted each shared socket, bytes.
    pub rcvbuf_bytes: Option<u64>,
}

/// `reload`: what changed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReloadResult {
    pub config: Option<String>,
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub unchanged: usize,
    /// What became of the relay's data path: none, unchanged, started, restarted,
    /// stopped or failed.
    pub relay: &'static str,
    /// Runtime changes (`dcbx set`) that run instead of a different value in the file.
    pub shadowed: Vec<Shadowed>,
}

/// A port's feature whose runtime change runs instead of the file's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shadowed {
    pub port: String,
    pub feature: FeatureName,
    /// This reload changed the file's value, which therefore does not run.
    pub file_changed: bool,
    /// The same for a person, with the command that gives the file's value back.
    pub message: String,
}

/// One streamed event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventRecord {
    /// Seconds since the Unix epoch.
    pub time: f64,
    pub port: String,
    #[serde(flatten)]
    pub event: EventBody,
}

/// The agent's notifications plus the daemon's own.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum EventBody {
    Agent(Event),
    Daemon(DaemonEvent),
    /// The PFC counters and the storm watchdog.
    Pfc(crate::pfc::PfcEvent),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
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
        kind: Option<crate::hardware::HardwareErrorKind>,
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
        problem: Option<crate::state::StateDirProblem>,
    },
    /// The state file was refused at start; the daemon runs without it.
    StateSetAside {
        #[serde(flatten)]
        set_aside: crate::state::StateSetAside,
    },
}

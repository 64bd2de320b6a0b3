//! The RoCE host settings beyond DCB, as the node core models them: what the runtime
//! read of the host ([`HostRoce`]: RDMA CM's default ToS and RoCE mode, the verbs
//! traffic class, ECN per priority, the CNP's marking, 802.3x pause, the NIC
//! firmware's LLDP agent), what the configuration asks (`[ports."X".roce]`,
//! [`RoceSettings`]), and the watch that compares the two, decides what to write,
//! notices drift and names the problems ([`RoceWatch`]).
//!
//! Nothing here touches a file: the runtime reads and writes (losslessd under its
//! `--sysfs` root, the lab from its model) and answers with a [`HostRoce`] and the
//! outcome of each write. A setting the configuration does not give is read and
//! shown, never written.

use std::collections::BTreeMap;
use std::fmt;

use lossless_dcbx::{Duration, Instant};
use lossless_wire::cee::PriorityMap;
use serde::{Deserialize, Serialize};

use crate::config::{
    priority_list, PortSettings, RoceMode, RoceSetting, RoceSettings, RuleSelector,
};
use crate::hardware::HardwareError;
use crate::nic::DriftPolicy;

/// How often the host's RoCE settings are read again (drift, a device that came back).
pub const READ_INTERVAL: Duration = Duration::from_secs(30);

/// One value read from the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reading<T> {
    /// The host holds this.
    Value(T),
    /// The host has no such setting (the driver, or its RDMA device, does not expose
    /// it): why, in words.
    NotExposed(String),
    /// It exists and could not be read: the error.
    Failed(String),
}

impl<T> Reading<T> {
    pub fn value(&self) -> Option<&T> {
        match self {
            Reading::Value(v) => Some(v),
            _ => None,
        }
    }
}

impl<T> Default for Reading<T> {
    fn default() -> Self {
        Reading::NotExposed("not read".into())
    }
}

/// 802.3x link-level pause as ethtool reports it (`ETHTOOL_MSG_PAUSE_GET`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Pause {
    pub autoneg: bool,
    pub rx: bool,
    pub tx: bool,
}

/// The NIC firmware's LLDP/DCBX agent, as the driver's private flag shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FwAgent {
    /// The private flag (`fw-lldp-agent` on ice, `disable-fw-lldp` on i40e).
    pub flag: String,
    /// The agent runs (takes the LLDP frames the host would see and send).
    pub on: bool,
}

/// The RDMA device of a netdev and its port number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RdmaPort {
    pub device: String,
    pub port: u32,
}

/// What the runtime read of the host for one port.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HostRoce {
    /// The netdev's driver (`mlx5_core`, `ice`), when known.
    pub driver: Option<String>,
    /// Its RDMA device (None: none, so no RoCE on this port).
    pub rdma: Option<RdmaPort>,
    pub tos: Reading<u8>,
    pub roce_mode: Reading<RoceMode>,
    pub traffic_class: Reading<u8>,
    pub ecn_rp: Reading<PriorityMap>,
    pub ecn_np: Reading<PriorityMap>,
    pub cnp_dscp: Reading<u8>,
    pub cnp_priority: Reading<u8>,
    pub pause: Reading<Pause>,
    /// None inside: the driver has no such agent.
    pub fw_agent: Reading<Option<FwAgent>>,
}

/// The outcome of one write the node asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOutcome {
    pub setting: RoceSetting,
    pub result: Result<(), HardwareError>,
}

/// How one configured setting stands against the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The host holds what is configured.
    Holds,
    /// The host holds something else (what, in words).
    Differs(String),
    NotExposed(String),
    Failed(String),
}

/// A ToS byte in words: `106 (DSCP 26, ECT(0))`.
pub fn tos_text(tos: u8) -> String {
    let ecn = match tos & 3 {
        0 => "not ECT",
        1 => "ECT(1)",
        2 => "ECT(0)",
        _ => "CE",
    };
    format!("{tos} (DSCP {}, {ecn})", tos >> 2)
}

fn pause_text(p: &Pause) -> String {
    let w = |b: bool| if b { "on" } else { "off" };
    format!(
        "rx {}, tx {}{}",
        w(p.rx),
        w(p.tx),
        if p.autoneg { ", autonegotiated" } else { "" }
    )
}

fn agent_text(a: &Option<FwAgent>) -> String {
    match a {
        Some(a) => format!(
            "{} (private flag {})",
            if a.on { "on" } else { "off" },
            a.flag
        ),
        None => "none (the driver has no firmware LLDP agent flag)".into(),
    }
}

/// What `setting` wants, in words.
pub fn wanted_text(setting: &RoceSetting) -> String {
    match *setting {
        RoceSetting::Tos(v) | RoceSetting::TrafficClass(v) => tos_text(v),
        RoceSetting::RoceMode(m) => m.kernel_name().into(),
        RoceSetting::EcnRp(p) | RoceSetting::EcnNp(p) => priority_list(p),
        RoceSetting::CnpDscp(v) | RoceSetting::CnpPriority(v) => v.to_string(),
        RoceSetting::GlobalPause(on) => if on { "rx on, tx on" } else { "rx off, tx off" }.into(),
        RoceSetting::FwLldpAgent(on) => if on { "on" } else { "off" }.into(),
    }
}

/// The host's value of the key `setting` names, in words (None: not a value).
pub fn held_text(key: &str, host: &HostRoce) -> Result<String, Standing> {
    fn text<T>(r: &Reading<T>, f: impl Fn(&T) -> String) -> Result<String, Standing> {
        match r {
            Reading::Value(v) => Ok(f(v)),
            Reading::NotExposed(w) => Err(Standing::NotExposed(w.clone())),
            Reading::Failed(e) => Err(Standing::Failed(e.clone())),
        }
    }
    match key {
        "tos" => text(&host.tos, |v| tos_text(*v)),
        "roce_mode" => text(&host.roce_mode, |m| m.kernel_name().into()),
        "traffic_class" => text(&host.traffic_class, |v| tos_text(*v)),
        "ecn_rp" => text(&host.ecn_rp, |p| priority_list(*p)),
        "ecn_np" => text(&host.ecn_np, |p| priority_list(*p)),
        "cnp_dscp" => text(&host.cnp_dscp, u8::to_string),
        "cnp_priority" => text(&host.cnp_priority, u8::to_string),
        "global_pause" => text(&host.pause, pause_text),
        "fw_lldp_agent" => text(&host.fw_agent, agent_text),
        _ => Err(Standing::Failed(format!("unknown setting {key}"))),
    }
}

/// How `setting` stands against what the host holds.
pub fn standing(setting: &RoceSetting, host: &HostRoce) -> Standing {
    fn cmp<T: PartialEq>(r: &Reading<T>, want: &T, text: impl Fn(&T) -> String) -> Standing {
        match r {
            Reading::Value(v) if v == want => Standing::Holds,
            Reading::Value(v) => Standing::Differs(text(v)),
            Reading::NotExposed(w) => Standing::NotExposed(w.clone()),
            Reading::Failed(e) => Standing::Failed(e.clone()),
        }
    }
    match setting {
        RoceSetting::Tos(v) => cmp(&host.tos, v, |v| tos_text(*v)),
        RoceSetting::RoceMode(m) => cmp(&host.roce_mode, m, |m| m.kernel_name().into()),
        RoceSetting::TrafficClass(v) => cmp(&host.traffic_class, v, |v| tos_text(*v)),
        RoceSetting::EcnRp(p) => cmp(&host.ecn_rp, p, |p| priority_list(*p)),
        RoceSetting::EcnNp(p) => cmp(&host.ecn_np, p, |p| priority_list(*p)),
        RoceSetting::CnpDscp(v) => cmp(&host.cnp_dscp, v, u8::to_string),
        RoceSetting::CnpPriority(v) => cmp(&host.cnp_priority, v, u8::to_string),
        RoceSetting::GlobalPause(on) => match &host.pause {
            Reading::Value(p) if p.rx == *on && p.tx == *on => Standing::Holds,
            Reading::Value(p) => Standing::Differs(pause_text(p)),
            Reading::NotExposed(w) => Standing::NotExposed(w.clone()),
            Reading::Failed(e) => Standing::Failed(e.clone()),
        },
        RoceSetting::FwLldpAgent(on) => match &host.fw_agent {
            Reading::Value(Some(a)) if a.on == *on => Standing::Holds,
            Reading::Value(a @ Some(_)) => Standing::Differs(agent_text(a)),
            // No agent at all is what `false` asks.
            Reading::Value(None) if !on => Standing::Holds,
            Reading::Value(None) => {
                Standing::NotExposed("the driver has no firmware LLDP agent flag".into())
            }
            Reading::NotExposed(w) => Standing::NotExposed(w.clone()),
            Reading::Failed(e) => Standing::Failed(e.clone()),
        },
    }
}

/// The configured settings, one per key that is set, in the section's order.
pub fn configured(s: &RoceSettings) -> Vec<RoceSetting> {
    s.settings()
}

/// The DSCPs the configuration sends to a PFC priority (its APP rules with the DSCP
/// selector), for checking the ToS RoCE leaves with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LosslessDscp {
    /// The DSCPs mapped to a PFC priority (the lossless ones), ascending.
    lossless: Vec<u8>,
}

impl LosslessDscp {
    pub fn of(s: &PortSettings) -> LosslessDscp {
        let pfc = if s.dcbx.pfc.enable {
            s.dcbx.pfc.cfg.priorities
        } else {
            PriorityMap::NONE
        };
        let mut lossless: Vec<u8> = s
            .app
            .entries
            .iter()
            .filter(|r| r.selector == RuleSelector::Dscp)
            .filter(|r| {
                r.priorities
                    .priorities()
                    .next()
                    .is_some_and(|p| pfc.0 & (1 << p) != 0)
            })
            .filter_map(|r| u8::try_from(r.protocol).ok())
            .collect();
        lossless.sort_unstable();
        lossless.dedup();
        lossless.shrink_to_fit();
        LosslessDscp { lossless }
    }

    /// The DSCPs mapped to a PFC priority (the lossless ones).
    pub fn lossless(&self) -> &[u8] {
        &self.lossless
    }
}

/// What is wrong with a port's RoCE host settings, one phrase each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoceProblem {
    /// A configured setting is not what the host holds.
    NotHeld {
        key: &'static str,
        wanted: String,
        standing: Standing,
        /// Why: the driver's answer to our write, when it refused.
        refused: Option<String>,
    },
    /// The NIC firmware's LLDP agent runs where this daemon runs DCBX.
    FirmwareAgent { flag: String },
    /// The ToS RoCE leaves with (RDMA CM's, or verbs') carries a DSCP the
    /// configuration does not make lossless.
    LossyTos {
        what: &'static str,
        tos: u8,
        lossless: Vec<u8>,
    },
    /// The ToS RoCE leaves with could not be read: whether it is lossless is not known.
    TosUnknown { what: &'static str, why: String },
    /// The host's settings could not be read at all yet.
    NotRead,
}

impl RoceProblem {
    pub fn kind(&self) -> &'static str {
        match self {
            RoceProblem::NotHeld { .. } => "roce_setting",
            RoceProblem::FirmwareAgent { .. } => "firmware_lldp_agent",
            RoceProblem::LossyTos { .. } => "lossy_tos",
            RoceProblem::TosUnknown { .. } => "tos_unknown",
            RoceProblem::NotRead => "roce_not_read",
        }
    }
}

impl fmt::Display for RoceProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RoceProblem::NotHeld {
                key,
                wanted,
                standing,
                refused,
            } => {
                write!(f, "roce.{key} = {wanted} is configured, but ")?;
                match standing {
                    Standing::Holds => f.write_str("it holds")?,
                    Standing::Differs(held) => write!(f, "the host holds {held}")?,
                    Standing::NotExposed(why) => write!(f, "this host does not expose it ({why})")?,
                    Standing::Failed(e) => write!(f, "it could not be read ({e})")?,
                }
                if let Some(r) = refused {
                    write!(f, ": the write was refused ({r})")?;
                }
                Ok(())
            }
            RoceProblem::FirmwareAgent { flag } => write!(
                f,
                "the NIC firmware's LLDP agent is on (private flag {flag}): it takes the LLDP \
                 frames, so this daemon's LLDPDUs may never reach the wire \
                 (set roce.fw_lldp_agent = false)"
            ),
            RoceProblem::LossyTos {
                what,
                tos,
                lossless,
            } => {
                let list: Vec<String> = lossless.iter().map(u8::to_string).collect();
                write!(
                    f,
                    "{what} is {}, a DSCP the configuration does not make lossless (lossless \
                     DSCP: {}): that RoCE traffic is lossy (set roce.tos and roce.traffic_class \
                     to {})",
                    tos_text(*tos),
                    list.join(", "),
                    lossless.first().map_or(0, |d| (d << 2) | 2)
                )
            }
            RoceProblem::TosUnknown { what, why } => write!(
                f,
                "{what} could not be read ({why}): whether RoCE leaves in a lossless class \
                 is not known"
            ),
            RoceProblem::NotRead => {
                f.write_str("the RoCE host settings have not been read yet: not known")
            }
        }
    }
}

/// The RoCE host settings of one port: what was read, what the configuration asks,
/// what the host refused, and the counts.
#[derive(Debug, Clone, Default)]
pub struct RoceWatch {
    pub settings: RoceSettings,
    pub dscp: LosslessDscp,
    pub drift_policy: DriftPolicy,
    /// The last reading (None: none yet; boxed: most of a port's life it is the
    /// same, and a port without one stays small).
    pub host: Option<Box<HostRoce>>,
    pub read_at: Option<Instant>,
    pub next_read: Option<Instant>,
    /// A read (and its writes) is with the runtime.
    pub in_flight: bool,
    /// Writes to make with the next read (the first after the port came, or the
    /// configuration changed).
    pub write_next: bool,
    /// Keys whose write the host refused, or did not keep: not written again until
    /// the configuration changes or the device comes back.
    pub refused: BTreeMap<&'static str, String>,
    /// Keys the host held as configured at the last reading (a change is drift).
    pub held: Vec<&'static str>,
    pub writes: u64,
    pub write_failures: u64,
    pub drift_detected: u64,
    pub drift_repaired: u64,
}

/// What a reading led to.
#[derive(Debug, Default)]
pub struct AfterRead {
    /// Configured settings that held and no longer do: words per setting.
    pub drifted: Vec<String>,
    /// What to write now (read again after).
    pub write: Vec<RoceSetting>,
    /// Writes that failed or were not kept: words per setting.
    pub refused: Vec<String>,
}

impl RoceWatch {
    /// A watch over a port with these settings: the first read writes what differs.
    pub fn new(s: &PortSettings, now: Instant) -> RoceWatch {
        let mut w = RoceWatch::default();
        w.configure(s);
        w.next_read = Some(now);
        w
    }

    /// The configuration changed: what was refused may be taken now; the next read
    /// writes what differs. True when the RoCE settings changed (read again soon).
    pub fn configure(&mut self, s: &PortSettings) -> bool {
        let changed = self.settings != s.roce;
        self.settings = s.roce;
        self.dscp = LosslessDscp::of(s);
        self.drift_policy = s.nic_drift;
        if changed || self.host.is_none() {
            self.refused.clear();
            self.write_next = true;
        }
        changed
    }

    /// Due for a read at `now`: the read's output is the caller's to send.
    pub fn due(&self, now: Instant) -> bool {
        !self.in_flight && self.next_read.is_some_and(|t| t <= now)
    }

    /// The configured settings the host does not hold and may take.
    fn to_write(&self, host: &HostRoce) -> Vec<RoceSetting> {
        configured(&self.settings)
            .into_iter()
            .filter(|s| !self.refused.contains_key(s.key()))
            .filter(|s| matches!(standing(s, host), Standing::Differs(_)))
            .collect()
    }

    /// A reading came back, after `written` (the writes asked with it).
    pub fn take_read(
        &mut self,
        now: Instant,
        host: HostRoce,
        written: &[WriteOutcome],
    ) -> AfterRead {
        let mut out = AfterRead::default();
        self.in_flight = false;
        self.read_at = Some(now);
        self.next_read = Some(now + READ_INTERVAL);
        for w in written {
            self.writes += 1;
            let key = w.setting.key();
            match &w.result {
                Err(e) => {
                    self.write_failures += 1;
                    let why = format!("{}: {e}", e.answer());
                    out.refused.push(format!("roce.{key}: {why}"));
                    self.refused.insert(key, why);
                }
                Ok(()) => {
                    if let Standing::Differs(held) = standing(&w.setting, &host) {
                        let why = format!("the write was taken, and the host still holds {held}");
                        out.refused.push(format!("roce.{key}: {why}"));
                        self.refused.insert(key, why);
                    }
                }
            }
        }
        let configured = configured(&self.settings);
        let holds: Vec<&'static str> = configured
            .iter()
            .filter(|s| standing(s, &host) == Standing::Holds)
            .map(RoceSetting::key)
            .collect();
        let lost: Vec<&RoceSetting> = configured
            .iter()
            .filter(|s| self.held.contains(&s.key()) && !holds.contains(&s.key()))
            .collect();
        for s in &lost {
            let held = held_text(s.key(), &host).unwrap_or_else(|e| format!("{e:?}"));
            out.drifted.push(format!(
                "roce.{} = {} became {held}",
                s.key(),
                wanted_text(s)
            ));
        }
        if !lost.is_empty() {
            self.drift_detected += 1;
        }
        let write = if std::mem::take(&mut self.write_next) {
            self.to_write(&host)
        } else if !lost.is_empty() && self.drift_policy == DriftPolicy::Repair {
            self.drift_repaired += 1;
            self.to_write(&host)
                .into_iter()
                .filter(|s| lost.iter().any(|l| l.key() == s.key()))
                .collect()
        } else {
            Vec::new()
        };
        self.held = holds;
        self.host = Some(Box::new(host));
        out.write = write;
        out
    }

    /// The port's RoCE problems; `runs_lldp`: this daemon runs LLDP/DCBX on the port
    /// (so a firmware agent competes with it).
    pub fn problems(&self, runs_lldp: bool) -> Vec<RoceProblem> {
        let mut out = Vec::new();
        let Some(host) = &self.host else {
            if !self.settings.is_empty() {
                out.push(RoceProblem::NotRead);
            }
            return out;
        };
        for s in configured(&self.settings) {
            let st = standing(&s, host);
            if st != Standing::Holds {
                out.push(RoceProblem::NotHeld {
                    key: s.key(),
                    wanted: wanted_text(&s),
                    standing: st,
                    refused: self.refused.get(s.key()).cloned(),
                });
            }
        }
        // The agent was asked off and is not: already named above.
        if runs_lldp && self.settings.fw_lldp_agent.is_none() {
            if let Reading::Value(Some(a)) = &host.fw_agent {
                if a.on {
                    out.push(RoceProblem::FirmwareAgent {
                        flag: a.flag.clone(),
                    });
                }
            }
        }
        let lossless = self.dscp.lossless();
        if host.rdma.is_some() && !lossless.is_empty() {
            // `absent_ok`: a setting the driver does not have is no ToS of its own (the
            // verbs traffic class: applications then set theirs); RDMA CM's always exists,
            // so not reading it is not knowing.
            let mut tos = |what: &'static str, r: &Reading<u8>, absent_ok: bool| match r {
                Reading::Value(t) if !lossless.contains(&(t >> 2)) => {
                    out.push(RoceProblem::LossyTos {
                        what,
                        tos: *t,
                        lossless: lossless.to_vec(),
                    })
                }
                Reading::Value(_) => {}
                Reading::NotExposed(_) if absent_ok => {}
                Reading::NotExposed(why) | Reading::Failed(why) => {
                    out.push(RoceProblem::TosUnknown {
                        what,
                        why: why.clone(),
                    })
                }
            };
            tos("RDMA CM's default ToS", &host.tos, false);
            tos("the verbs traffic class", &host.traffic_class, true);
        }
        out
    }

    /// The view `status` and `roce show` give.
    pub fn view(&self) -> RoceView {
        let host = self.host.as_ref();
        let configured = configured(&self.settings);
        let settings = crate::config::ROCE_KEYS
            .iter()
            .map(|&key| {
                let want = configured.iter().find(|s| s.key() == key);
                let held = host.map(|h| held_text(key, h));
                let (held_words, state) = match (&held, want) {
                    (None, _) => (None, "not_read"),
                    (Some(Ok(t)), None) => (Some(t.clone()), "unmanaged"),
                    (Some(Err(Standing::NotExposed(w))), _) => (Some(w.clone()), "not_exposed"),
                    (Some(Err(Standing::Failed(e))), _) => (Some(e.clone()), "unreadable"),
                    (Some(Err(_)), _) => (None, "unreadable"),
                    (Some(Ok(t)), Some(s)) => {
                        let st = host.map(|h| standing(s, h));
                        let state = match st {
                            Some(Standing::Holds) => "ok",
                            _ if self.refused.contains_key(key) => "refused",
                            _ => "differs",
                        };
                        (Some(t.clone()), state)
                    }
                };
                RoceSettingView {
                    key: key.to_string(),
                    configured: want.map(wanted_text),
                    held: held_words,
                    state: state.to_string(),
                    refused: self.refused.get(key).cloned(),
                }
            })
            .collect();
        RoceView {
            driver: host.and_then(|h| h.driver.clone()),
            rdma_device: host.and_then(|h| h.rdma.as_ref().map(|r| r.device.clone())),
            rdma_port: host.and_then(|h| h.rdma.as_ref().map(|r| r.port)),
            settings,
            writes: self.writes,
            write_failures: self.write_failures,
            drift_detected: self.drift_detected,
            drift_repaired: self.drift_repaired,
        }
    }
}

pub use lossless_proto::status::{RoceSettingView, RoceView};

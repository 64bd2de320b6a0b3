//! Control requests: the views (status, neighbors, dcbx show, counters, events,
//! headroom show) answered at once, and the changes (dcbx set, reload) answered once
//! what they wait for is done: the persisted state written, the file read, the relay
//! started. Changes run one at a time, in the order they came, so each sees what the
//! previous one left.

mod change;

use std::collections::VecDeque;

use tracing::{error, info};

use super::errors::{NoSuchPort, SetError};
use super::{Node, Now, Output, RequestId};
use crate::config::{ConfigFileError, PortSettings};
use crate::headroom::{HeadroomOff, HeadroomShow};
use crate::health::{self, Health};
use crate::port::{sources, Port};
use crate::protocol::Hardware;
use crate::protocol::{CountersResult, EventsResult, Ports};
use crate::protocol::{
    DaemonEvent, DaemonInfo, DcbxView, ErrorKind, EventBody, FeatureChange, FeatureName, IeeeAdmin,
    NicView, PortStatusLine, RefusedView, ReloadResult, Request, Response, Source, StatusResult,
};
use crate::state::{PersistError, PersistedState, PortOverrides};

/// A change under way: what it waits for.
#[derive(Debug)]
pub(super) enum Busy {
    /// `dcbx set`: the new state is being written; it runs once that is done.
    Persist(Box<PendingSet>),
    /// `reload` (`id`) or SIGHUP (None): the file is being read.
    ReadConfig { id: Option<RequestId> },
    /// The reload is done but for the relay's (re)start.
    StartRelay {
        id: Option<RequestId>,
        result: ReloadResult,
    },
}

/// A `dcbx set` waiting for its state to be written.
#[derive(Debug)]
pub(super) struct PendingSet {
    id: RequestId,
    /// A `roce set` or `roce reset`: the answer is the port's RoCE view.
    roce: bool,
    port: String,
    overrides: PortOverrides,
    settings: PortSettings,
    next: PersistedState,
}

/// A change waiting for the one under way.
#[derive(Debug)]
enum Queued {
    Request(RequestId, Request),
    ReloadSignal,
}

/// SIGHUPs this close together are one reload: the file is read this long after the
/// first of them. An editor that writes in place, or a configuration manager that
/// signals once per file it touches, then gets one reload of what it finished
/// writing, not one per signal.
pub const SIGHUP_SETTLE: lossless_dcbx::Duration = lossless_dcbx::Duration::from_millis(200);

#[derive(Debug, Default)]
pub(super) struct Requests {
    pub(super) busy: Option<Busy>,
    queued: VecDeque<Queued>,
    /// When the SIGHUPs received since the last reload began are read as one.
    sighup_due: Option<lossless_dcbx::Instant>,
    /// How many SIGHUPs that reload stands for.
    sighups: u32,
    /// `dcbx show` requests waiting for their ports' NIC read-backs.
    shows: Vec<PendingShow>,
    /// Why the configuration file was refused at the last reload (None: the last
    /// reload took it, or there was none): the configuration before it still runs.
    pub(super) config_refused: Option<String>,
}

/// A `dcbx show` waiting for read-backs.
#[derive(Debug)]
struct PendingShow {
    id: RequestId,
    port: Option<String>,
    /// The ports (ifindex) whose read-back has not come back yet.
    waiting: Vec<u32>,
}

/// `dcbx show`, for one port or all.
fn dcbx_show(node: &Node, port: Option<&str>, now: Now) -> Response {
    per_port(node, port, |p| {
        dcbx_view(p, node.persisted.ports.get(&p.name), now)
    })
}

impl Node {
    /// A read-back for `ifindex` came back (or failed, or its port went away): the
    /// `dcbx show` requests that waited only for it are answered.
    pub(super) fn nic_read_done(&mut self, now: Now, ifindex: u32) {
        let mut ready = Vec::new();
        self.requests.shows.retain_mut(|s| {
            s.waiting.retain(|i| *i != ifindex);
            if s.waiting.is_empty() {
                ready.push((s.id, s.port.take()));
                false
            } else {
                true
            }
        });
        for (id, port) in ready {
            let response = dcbx_show(self, port.as_deref(), now);
            self.reply(id, response);
        }
    }
}

/// Answers `req`, or starts the change it asks for.
pub(super) fn handle(node: &mut Node, now: Now, id: RequestId, req: Request) {
    let changes = matches!(
        req,
        Request::DcbxSet { .. }
            | Request::DcbxReset { .. }
            | Request::RoceSet { .. }
            | Request::RoceReset { .. }
            | Request::Reload
    );
    if changes && node.requests.busy.is_some() {
        node.requests.queued.push_back(Queued::Request(id, req));
        return;
    }
    let response = match req {
        Request::Status => Response::ok(status(node, now)),
        Request::Neighbors { port } => per_port(node, port.as_deref(), |p| p.neighbors(now.mono)),
        Request::DcbxShow { port } => {
            // The NIC is read back first, so the `nic` row says what it holds now.
            let reads: Vec<(u32, String, bool)> = match port.as_deref() {
                None => node.ports.values().collect::<Vec<_>>(),
                Some(name) => node.ports.by_name(name).into_iter().collect(),
            }
            .into_iter()
            .filter(|p| matches!(p.hardware, Hardware::Dcbnl { .. }))
            .map(|p| {
                let cee = p.agent.running() == lossless_dcbx::Version::Cee;
                (p.ifindex, p.name.clone(), cee)
            })
            .collect();
            if reads.is_empty() {
                dcbx_show(node, port.as_deref(), now)
            } else {
                node.requests.shows.push(PendingShow {
                    id,
                    port,
                    waiting: reads.iter().map(|(i, _, _)| *i).collect(),
                });
                for (ifindex, name, cee) in reads {
                    node.outputs
                        .push_back(Output::ReadNic { ifindex, name, cee });
                }
                return;
            }
        }
        Request::Counters { port } => match selected(node, port.as_deref()) {
            Ok(ports) => answer(&CountersResult {
                ports: ports.into_iter().map(Port::counters).collect(),
                shared_socket: Some(node.shared_socket),
            }),
            Err(no_such_port) => no_such_port,
        },
        Request::Events { .. } => answer(&EventsResult {
            events: node.history.iter().cloned().collect(),
        }),
        Request::HeadroomShow { port } => per_port(node, port.as_deref(), |p| match &p.headroom {
            Some(h) => HeadroomShow::On(Box::new(h.view(
                &p.name,
                p.settings.apply,
                &p.hardware,
                now.mono,
            ))),
            None => HeadroomShow::Off(HeadroomOff {
                port: p.name.clone(),
                off: true,
                reason: "headroom.measure is off for this port".into(),
            }),
        }),
        Request::DcbxSet { port, change } => match start_dcbx_set(node, id, &port, &change) {
            Ok(()) => return,
            Err(e) => e.response(),
        },
        Request::DcbxReset { port, feature } => {
            match start_dcbx_reset(node, now, id, &port, feature) {
                Ok(None) => return,
                Ok(Some(unchanged)) => unchanged,
                Err(e) => e.response(),
            }
        }
        Request::RoceSet { port, settings } => {
            match start_roce_set(node, now, id, &port, Some(&settings)) {
                Ok(None) => return,
                Ok(Some(unchanged)) => unchanged,
                Err(e) => e.response(),
            }
        }
        Request::RoceReset { port } => match start_roce_set(node, now, id, &port, None) {
            Ok(None) => return,
            Ok(Some(unchanged)) => unchanged,
            Err(e) => e.response(),
        },
        Request::Reload => {
            node.requests.busy = Some(Busy::ReadConfig { id: Some(id) });
            node.outputs.push_back(Output::ReadConfig);
            return;
        }
        Request::PfcShow { port } => per_port(node, port.as_deref(), |p| {
            crate::pfc::view::port_pfc_view(&p.name, p.agent.applied_pfc(), &p.pfc, now.mono)
        }),
        Request::RelayShow => match node.relay_read(id) {
            Ok(()) => return,
            Err(resp) => resp,
        },
    };
    node.reply(id, response);
}

impl Node {
    /// SIGHUP: re-read the configuration file [`SIGHUP_SETTLE`] after the first of a
    /// burst of signals (one reload for the burst), after any change under way.
    pub fn handle_reload_signal(&mut self, now: Now) {
        self.requests.sighups = self.requests.sighups.saturating_add(1);
        if self.requests.sighup_due.is_none() {
            self.requests.sighup_due = Some(now.mono + SIGHUP_SETTLE);
        }
    }

    /// When the SIGHUPs received are read as one reload (for [`Node::poll_timeout`]).
    pub(super) fn sighup_due(&self) -> Option<lossless_dcbx::Instant> {
        self.requests.sighup_due
    }

    /// Time passed: the SIGHUPs' reload starts if it is due.
    pub(super) fn sighup_timeout(&mut self, now: Now) {
        if self.requests.sighup_due.is_some_and(|t| t <= now.mono) {
            self.requests.sighup_due = None;
            let signals = std::mem::take(&mut self.requests.sighups);
            if signals > 1 {
                info!(signals, "SIGHUP: {signals} signals, one reload");
            }
            self.start_reload_signal();
        }
    }

    /// The SIGHUPs' reload, now or after the change under way (a reload already
    /// waiting its turn stands for this one too).
    fn start_reload_signal(&mut self) {
        if self.requests.busy.is_some() {
            if !self
                .requests
                .queued
                .iter()
                .any(|q| matches!(q, Queued::ReloadSignal))
            {
                self.requests.queued.push_back(Queued::ReloadSignal);
            }
            return;
        }
        self.requests.busy = Some(Busy::ReadConfig { id: None });
        self.outputs.push_back(Output::ReadConfig);
    }

    /// The answer to [`Output::Persist`]: the change it stood for runs now, or is
    /// refused with nothing changed. A change written whose directory could not be
    /// flushed runs too (a restart reads it: answering "nothing changed" would be
    /// false), its answer carrying the `warning`, the directory reported.
    pub fn handle_persisted(&mut self, now: Now, result: Result<(), PersistError>) {
        let Some(Busy::Persist(set)) = self.requests.busy.take() else {
            return;
        };
        let PendingSet {
            id,
            roce,
            port,
            overrides,
            settings,
            next,
        } = *set;
        let response = match result {
            Ok(()) => {
                self.state_dir_usable(now);
                self.persisted = next;
                finish_dcbx_set(self, now, &port, overrides, settings, roce)
            }
            Err(PersistError::NotDurable(problem)) => {
                let warning =
                    format!("the change runs and is in the state file, but not durably: {problem}");
                self.handle_state_dir(now, Some(problem));
                self.persisted = next;
                let mut response = finish_dcbx_set(self, now, &port, overrides, settings, roce);
                if let Some(serde_json::Value::Object(m)) = response.result.as_mut() {
                    m.insert("warning".into(), serde_json::Value::String(warning));
                }
                response
            }
            Err(PersistError::NotWritten(problem)) => {
                let message = format!("cannot persist the change, nothing changed: {problem}");
                self.handle_state_dir(now, Some(problem));
                Response::err(ErrorKind::Persist, message)
            }
        };
        self.reply(id, response);
        self.run_queued(now);
    }

    /// The answer to [`Output::ReadConfig`]: the file's text (None: there is no file,
    /// which means every default), or why it could not be read.
    pub fn handle_config(&mut self, now: Now, read: Result<Option<String>, ConfigFileError>) {
        let Some(Busy::ReadConfig { id }) = self.requests.busy.take() else {
            return;
        };
        let outcome = self.reload(now, read);
        self.requests.config_refused = outcome.as_ref().err().map(ToString::to_string);
        match outcome {
            Ok(result) if self.relay_starting() => {
                self.requests.busy = Some(Busy::StartRelay { id, result });
                return;
            }
            Ok(result) => self.reloaded(id, result),
            Err(e) => match id {
                Some(id) => self.reply(id, e.response()),
                None => {
                    error!(error = %e, "SIGHUP: configuration refused, the running one stays")
                }
            },
        }
        self.run_queued(now);
    }

    /// A reload finished: its answer (or, for SIGHUP, a log line).
    pub(super) fn reloaded(&mut self, id: Option<RequestId>, result: ReloadResult) {
        match id {
            Some(id) => {
                let value = serde_json::to_value(&result).unwrap_or_default();
                self.reply(id, Response::ok(value));
            }
            None => info!(
                changed = %result.changed.join(","),
                added = %result.added.join(","),
                removed = %result.removed.join(","),
                relay = %result.relay,
                "SIGHUP: reloaded"
            ),
        }
    }

    /// Runs the changes that waited, until one has to wait in turn.
    pub(super) fn run_queued(&mut self, now: Now) {
        while self.requests.busy.is_none() {
            match self.requests.queued.pop_front() {
                Some(Queued::Request(id, req)) => handle(self, now, id, req),
                Some(Queued::ReloadSignal) => self.start_reload_signal(),
                None => return,
            }
        }
    }
}

fn status(node: &Node, now: Now) -> serde_json::Value {
    let d = &node.config.daemon;
    let mut result = StatusResult {
        daemon: DaemonInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            pid: node.identity.pid,
            uptime_s: (now.mono - node.started).as_secs_f64(),
            config: node
                .identity
                .config_path
                .as_ref()
                .map(|p| p.display().to_string()),
            state_dir: d.state_dir.display().to_string(),
            socket: d.socket.display().to_string(),
            metrics: d.metrics.map(|a| a.to_string()),
            boots: node.persisted.boots,
            config_refused: node.requests.config_refused.clone(),
            state_problem: node.state_dir.problem.clone(),
            state_set_aside: node.state_dir.set_aside.clone(),
        },
        health: Health::default(),
        ports: node
            .ports
            .values()
            .map(|p| {
                let s = p.agent.status();
                PortStatusLine {
                    summary: p.summary(),
                    mode: s.mode,
                    any_error: s.any_error,
                    health: health::port(&p.facts(&s)),
                }
            })
            .collect(),
    };
    result.health = health::node(
        result
            .ports
            .iter()
            .map(|p| (p.summary.port.as_str(), &p.health)),
        &node.missing_cli_ports(),
        &node.unmatched_patterns(),
        node.requests.config_refused.as_deref(),
        &node.state_dir,
    );
    serde_json::to_value(result).unwrap_or_default()
}

/// The ports a request names: `port`, or every one (Err: the answer to a port that
/// does not exist).
fn selected<'a>(node: &'a Node, port: Option<&str>) -> Result<Vec<&'a Port>, Response> {
    match port {
        None => Ok(node.ports.values().collect()),
        Some(name) => match node.ports.by_name(name) {
            Some(p) => Ok(vec![p]),
            None => Err(SetError::from(no_such_port(node, name)).response()),
        },
    }
}

/// A request about ports answered with one view `f` makes of each.
fn per_port<T: serde::Serialize>(
    node: &Node,
    port: Option<&str>,
    f: impl Fn(&Port) -> T,
) -> Response {
    match selected(node, port) {
        Ok(ports) => answer(&Ports {
            ports: ports.into_iter().map(f).collect(),
        }),
        Err(no_such_port) => no_such_port,
    }
}

/// A view as the response's result.
fn answer<T: serde::Serialize>(view: &T) -> Response {
    match serde_json::to_value(view) {
        Ok(v) => Response::ok(v),
        Err(e) => Response::err(ErrorKind::Unavailable, e.to_string()),
    }
}

fn no_such_port(node: &Node, name: &str) -> NoSuchPort {
    NoSuchPort {
        port: name.to_string(),
        known: node.ports.keys().cloned().collect(),
    }
}

/// `dcbx set`: validates the change and asks for it to be persisted; it runs once that
/// is done (persist first: what the daemon runs is always what a restart runs). Any
/// refusal changes nothing.
fn start_dcbx_set(
    node: &mut Node,
    id: RequestId,
    name: &str,
    change: &FeatureChange,
) -> Result<(), SetError> {
    let Some(port) = node.ports.by_name(name) else {
        return Err(no_such_port(node, name).into());
    };
    let mut overrides = node.persisted.ports.get(name).cloned().unwrap_or_default();
    change::apply_change(&mut overrides, &port.settings, change).map_err(|error| {
        SetError::Change {
            port: name.to_string(),
            error,
        }
    })?;
    persist_overrides(node, id, name, overrides, false)
}

/// `roce set` (`settings`) or `roce reset` (None): the port's runtime RoCE host
/// settings, each checked by the file's rule, persisted as `dcbx set` is. Ok(Some): a
/// reset with nothing to drop; the answer is the port's RoCE view.
fn start_roce_set(
    node: &mut Node,
    now: Now,
    id: RequestId,
    name: &str,
    settings: Option<&std::collections::BTreeMap<String, serde_json::Value>>,
) -> Result<Option<Response>, SetError> {
    use crate::config::{RawValue, RoceSetting, RoceSettings};
    let Some(port) = node.ports.by_name(name) else {
        return Err(no_such_port(node, name).into());
    };
    let mut overrides = node.persisted.ports.get(name).cloned().unwrap_or_default();
    match settings {
        None if overrides.roce.is_empty() => {
            let _ = now;
            return Ok(Some(roce_response(port)));
        }
        None => overrides.roce = RoceSettings::default(),
        Some(given) => {
            if given.is_empty() {
                return Err(SetError::NoRoceKey {
                    port: name.to_string(),
                });
            }
            for (key, value) in given {
                let raw = RawValue::from_json(value).ok_or_else(|| SetError::RoceValue {
                    port: name.to_string(),
                    key: key.clone(),
                    value: value.to_string(),
                })?;
                RoceSetting::check(key, &raw)
                    .map_err(|error| SetError::Roce {
                        port: name.to_string(),
                        key: key.clone(),
                        error,
                    })?
                    .apply(&mut overrides.roce);
            }
        }
    }
    persist_overrides(node, id, name, overrides, true).map(|()| None)
}

/// A port's RoCE view as an answer.
fn roce_response(port: &Port) -> Response {
    match serde_json::to_value(port.roce.view()) {
        Ok(v) => Response::ok(v),
        Err(e) => Response::err(ErrorKind::Unavailable, e.to_string()),
    }
}

/// `dcbx reset`: drops the port's overrides of `feature` (all when None) and, when
/// there were some, asks for that to be persisted as `dcbx set` does. Ok(Some): there
/// was nothing to drop; the answer is the port as it runs.
fn start_dcbx_reset(
    node: &mut Node,
    now: Now,
    id: RequestId,
    name: &str,
    feature: Option<FeatureName>,
) -> Result<Option<Response>, SetError> {
    let Some(port) = node.ports.by_name(name) else {
        return Err(no_such_port(node, name).into());
    };
    let mut overrides = node.persisted.ports.get(name).cloned().unwrap_or_default();
    if !overrides.reset(feature) {
        let view = dcbx_view(port, node.persisted.ports.get(name), now);
        return Ok(Some(match serde_json::to_value(view) {
            Ok(v) => Response::ok(v),
            Err(e) => Response::err(ErrorKind::Unavailable, e.to_string()),
        }));
    }
    persist_overrides(node, id, name, overrides, false).map(|()| None)
}

/// Checks the port's settings with `overrides` and asks for them to be persisted; they
/// run once that is done.
fn persist_overrides(
    node: &mut Node,
    id: RequestId,
    name: &str,
    overrides: PortOverrides,
    roce: bool,
) -> Result<(), SetError> {
    let Some(port) = node.ports.by_name(name) else {
        return Err(no_such_port(node, name).into());
    };
    let mut settings = node.config.port(name);
    overrides.apply(&mut settings);
    port.port_config(&settings)
        .validate()
        .map_err(|error| SetError::Invalid {
            port: name.to_string(),
            error,
        })?;
    let mut next = node.persisted.clone();
    if overrides.is_empty() {
        next.ports.remove(name);
    } else {
        next.ports.insert(name.to_string(), overrides.clone());
    }
    node.outputs.push_back(Output::Persist {
        state: next.clone(),
    });
    node.requests.busy = Some(Busy::Persist(Box::new(PendingSet {
        id,
        roce,
        port: name.to_string(),
        overrides,
        settings,
        next,
    })));
    Ok(())
}

/// The persisted change runs: the agent takes the new settings.
fn finish_dcbx_set(
    node: &mut Node,
    now: Now,
    name: &str,
    overrides: PortOverrides,
    settings: PortSettings,
    roce: bool,
) -> Response {
    // By name: the port it was asked for may have gone and come back meanwhile.
    let Some((id, port)) = node
        .ports
        .id(name)
        .and_then(|id| Some((id, node.ports.get_mut(id)?)))
    else {
        // The interface went away meanwhile: the change is kept for its return.
        let port = name.to_string();
        return SetError::WentAway { port }.response();
    };
    let cfg = port.port_config(&settings);
    // A RoCE host setting leaves the DCBX agent as it is: no new negotiation.
    if !roce || *port.agent.config() != cfg {
        if let Err(error) = port.agent.set_config(now.mono, cfg) {
            let port = name.to_string();
            return SetError::Invalid { port, error }.response();
        }
        port.negotiating_since = Some(now.mono);
    }
    // Changed RoCE host settings are read and written at once.
    if port.roce.configure(&settings) {
        port.roce.next_read = Some(now.mono);
    }
    port.settings = settings;
    port.sources = sources(Some(&overrides));
    let answer = if roce {
        serde_json::to_value(port.roce.view())
    } else {
        serde_json::to_value(dcbx_view(port, Some(&overrides), now))
    };
    node.publish(
        now,
        name,
        EventBody::Daemon(DaemonEvent::ConfigChanged {
            source: Source::Runtime,
        }),
    );
    node.after(now, id);
    match answer {
        Ok(v) => Response::ok(v),
        Err(e) => Response::err(ErrorKind::Unavailable, e.to_string()),
    }
}

/// A port's `dcbx show`: the agent's view, where each setting comes from, the local
/// IEEE settings the feature views leave out, the APP rules.
fn dcbx_view(p: &Port, overrides: Option<&PortOverrides>, now: Now) -> DcbxView {
    let d = &p.settings.dcbx;
    DcbxView {
        dcbx: p.dcbx(),
        source: overrides.cloned().unwrap_or_default().sources(),
        ieee_admin: IeeeAdmin {
            pfc_mbc: d.ieee.pfc_mbc,
            pfc_cap: d.pfc.cfg.num_tcs,
            ets_max_tcs: d.ieee.ets.cfg.max_tcs,
            ets_cbs: d.ieee.ets.cfg.cbs,
            ets_recommend: d.ieee.ets.cfg.recommend,
        },
        app_rules: p.settings.app.clone(),
        nic: nic_view(p, now),
    }
}

/// `dcbx show`'s `nic`, for a port whose NIC this daemon programs.
fn nic_view(p: &Port, now: Now) -> Option<NicView> {
    if !matches!(p.hardware, Hardware::Dcbnl { .. }) {
        return None;
    }
    let n = &p.ieee_hw.nic;
    let st = n.state.as_ref();
    let selector = |s: &u8| match *s {
        255 => "pcp".to_string(),
        s => lossless_wire::ieee::Selector(s)
            .name()
            .map_or_else(|| s.to_string(), str::to_string),
    };
    let held = n.meant.as_ref().map_or(&[][..], |m| &m.apps[..]);
    Some(NicView {
        read_s_ago: n
            .read_at
            .map(|t| crate::node::log::round2((now.mono - t).as_secs_f64())),
        read_error: n.read_error.clone(),
        ets: st.and_then(|s| s.ets),
        pfc: st
            .and_then(|s| s.pfc_enabled())
            .map(lossless_wire::cee::PriorityMap),
        pfc_delay: st.and_then(|s| s.pfc.map(|p| p.delay)),
        apps: st.map(|s| s.apps.clone()).unwrap_or_default(),
        trust: st.and_then(|s| s.trust.as_ref().map(|t| t.iter().map(selector).collect())),
        cee: st.and_then(|s| s.cee),
        refused: n
            .refused
            .iter()
            .map(|r| RefusedView {
                refusal: r.clone(),
                text: r.to_string(),
                covered: health::covered(n, r),
            })
            .collect(),
        differences: n.differences().iter().map(ToString::to_string).collect(),
        dscp_only: crate::nic::dscp_only(&n.refused, held),
        drift_policy: p.settings.nic_drift,
        drift_detected: n.drift_detected,
        drift_repaired: n.drift_repaired,
    })
}

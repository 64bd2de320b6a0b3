//! The runtime: the only part of the daemon that reads clocks, waits, reads files and
//! touches sockets. One thread (tokio current-thread runtime, epoll): a task per port
//! reads its packet socket; the core task owns the [`Node`] (the node core), feeds it
//! every input with the time and carries out its outputs ([`crate::execute`]).

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use lossless_node::config::{check_metrics_exposure, ConfigFileError, DaemonConfig};
use lossless_node::node::{Identity, Node, RequestId};
use lossless_node::protocol::Request;
use lossless_sys::addr::AddrMonitor;
use lossless_sys::link::{dump_links, LinkError, LinkMonitor};
use lossless_sys::reactor::async_fd;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;
use tracing::{error, info, warn};

use crate::clock::Clock;
use crate::config_file;
use crate::control::{self, CoreMsg, Reply};
use crate::control_state::ControlState;
use crate::convert;
use crate::execute::execute;
use crate::host;
use crate::input::Input;
use crate::io::Io;
use crate::metrics_http;
use crate::route::handle_input;
use crate::state_dir::{Started, StateDir};
use crate::web_config::{self, WebConfig, WebConfigError};

/// Command-line choices; each overrides the file.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub config: Option<PathBuf>,
    pub interfaces: Vec<String>,
    pub socket: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub metrics: Option<SocketAddr>,
    /// The metrics endpoint's web configuration (`--web-config-file`).
    pub web_config: Option<PathBuf>,
    pub log: Option<String>,
    /// Where sysfs is (`/sys`; configfs at `kernel/config` and debugfs at
    /// `kernel/debug` under it): the RoCE host settings are read and written there.
    pub sysfs: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigFileError),
    #[error("control socket {path}: {source}")]
    Socket { path: PathBuf, source: io::Error },
    #[error("metrics endpoint {addr}: {source}")]
    Metrics { addr: SocketAddr, source: io::Error },
    /// `--metrics` on a non-loopback address without a web configuration.
    #[error("--metrics {addr}: {why}")]
    MetricsExposed {
        addr: SocketAddr,
        why: lossless_node::config::MetricsExposureError,
    },
    #[error("metrics web configuration {0}")]
    WebConfig(#[from] WebConfigError),
    #[error("netlink: {0}")]
    Netlink(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Loads the configuration as `losslessd` would (the file `opts.config` names, which
/// must exist, or every default), with the command line on top (`--metrics` checked by
/// the file's rule when it is parsed).
pub fn load_config(opts: &Options) -> Result<DaemonConfig, RunError> {
    let mut config = match &opts.config {
        Some(path) => config_file::load(path)?,
        None => DaemonConfig::default(),
    };
    if let Some(s) = &opts.socket {
        config.daemon.socket = s.clone();
    }
    if let Some(d) = &opts.state_dir {
        config.daemon.state_dir = d.clone();
    }
    if let Some(m) = opts.metrics {
        config.daemon.metrics = Some(m);
    }
    if let Some(w) = &opts.web_config {
        config.daemon.metrics_web_config = Some(w.clone());
    }
    if let Some(addr) = config.daemon.metrics {
        let web = config.daemon.metrics_web_config.is_some();
        check_metrics_exposure(addr, web).map_err(|why| RunError::MetricsExposed { addr, why })?;
    }
    web_config_for(&config)?;
    if let Some(l) = &opts.log {
        config.daemon.log = l.clone();
    }
    Ok(config)
}

/// The metrics endpoint's web configuration, read and checked (`--check` and start
/// alike): it loads, and it protects a non-loopback address. None without one, or
/// without a metrics endpoint to serve with it.
pub fn web_config_for(config: &DaemonConfig) -> Result<Option<WebConfig>, RunError> {
    let (Some(addr), Some(path)) = (config.daemon.metrics, &config.daemon.metrics_web_config)
    else {
        return Ok(None);
    };
    let web = web_config::load(path)?;
    metrics_http::may_serve(&web, addr).map_err(|what| WebConfigError {
        file: path.clone(),
        line: None,
        what,
    })?;
    Ok(Some(web))
}

/// How often the kernel's drop counters of the packet sockets are read (and before
/// every `counters` answer and metrics scrape).
const SOCKET_STATS_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// How long after an address change the host is read again: the changes of a burst
/// are taken in one reading.
const HOST_SETTLE: std::time::Duration = std::time::Duration::from_millis(100);

/// The longest the sockets may take to close at exit.
const SHUTDOWN_CLOSE_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs until SIGTERM or SIGINT.
pub fn run(opts: Options, config: DaemonConfig) -> Result<(), RunError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(run_async(opts, config))
}

/// Opens the state directory and counts this start in it. Never fatal: what went
/// wrong (a directory not writable or not trusted, a state file refused) is handed to
/// the node, which reports it and runs on the configuration file.
fn open_state(dir: &std::path::Path) -> Started {
    let started = StateDir::start(dir);
    if !started.removed.is_empty() {
        info!(
            files = %started.removed.join(","),
            "removed {} temporary files of interrupted state writes",
            started.removed.len()
        );
    }
    started
}

async fn run_async(opts: Options, config: DaemonConfig) -> Result<(), RunError> {
    let clock = Clock::start();
    let socket_path = config.daemon.socket.clone();
    let socket_group = config.daemon.socket_group.clone();
    let metrics_addr = config.daemon.metrics;
    let web = web_config_for(&config)?;
    let limits = config.daemon.limits;
    let Started {
        dir: state,
        state: persisted,
        problem: state_problem,
        set_aside,
        ..
    } = open_state(&config.daemon.state_dir);
    let identity = Identity {
        config_path: opts.config.clone(),
        cli_ports: opts.interfaces.clone(),
        pid: std::process::id(),
    };
    let mut node = Node::new(config, identity, persisted, clock.now());
    if let Some(s) = set_aside {
        node.handle_state_set_aside(clock.now(), s);
    }
    node.handle_state_dir(clock.now(), state_problem);
    info!(
        boots = node.boots(),
        state_dir = %state.path().display(),
        "losslessd starting"
    );

    // Subscribe to link and address changes before the dumps, so nothing falls between.
    let monitor = async_fd(LinkMonitor::open()?)?;
    let addr_monitor = async_fd(AddrMonitor::open()?)?;
    let listener = control::bind(&socket_path, socket_group.as_deref()).map_err(|source| {
        RunError::Socket {
            path: socket_path.clone(),
            source,
        }
    })?;
    let (core_tx, mut core_rx) = mpsc::channel::<CoreMsg>(256);
    let control = ControlState::new(&limits);
    tokio::spawn(control::serve(listener, core_tx.clone(), control.clone()));
    let metrics_conns = metrics_http::Conns::new(limits.metrics_max_connections);
    let mut metrics_web = None;
    if let Some(addr) = metrics_addr {
        let web = web.map(|w| metrics_http::Web::new(w, addr));
        let l = metrics_http::bind(addr, web.as_ref())
            .await
            .map_err(|source| RunError::Metrics { addr, source })?;
        match web.as_ref().map(|w| w.current()) {
            Some(w) if w.tls.is_some() => {
                info!(%addr, "metrics on https://{addr}/metrics: {}", w.describe())
            }
            Some(w) => {
                if w.auth.is_some() && !addr.ip().is_loopback() {
                    tracing::warn!(%addr, "metrics on http://{addr}/metrics with basic authentication and no TLS: passwords cross the network in clear");
                }
                info!(%addr, "metrics on http://{addr}/metrics: {}", w.describe())
            }
            None => info!(%addr, "metrics on http://{addr}/metrics"),
        }
        tokio::spawn(metrics_http::serve(
            l,
            control.clone(),
            metrics_http::Endpoint {
                core: core_tx.clone(),
                conns: metrics_conns.clone(),
                bound: addr,
                web: web.clone(),
            },
        ));
        metrics_web = web;
    }
    drop(core_tx);

    let (input_tx, mut input_rx) = mpsc::channel::<Input>(8192);
    let mut io = Io::new(
        input_tx,
        state,
        opts.config.clone(),
        limits.packet_rcvbuf_bytes as usize,
        lossless_host::Host::new(&opts.sysfs),
    );
    // Who the host is before the first port, so its first LLDPDU says it.
    let mut host_reader = host::HostReader::default();
    // When the host is read again after address changes (or after a reading
    // that failed in part).
    let mut host_due: Option<tokio::time::Instant> = None;
    read_host(&mut node, &clock, &mut host_reader, &mut host_due);
    let links = dump_links().map_err(|e| RunError::Netlink(e.to_string()))?;
    node.handle_links(clock.now(), links.into_iter().map(convert::link).collect());
    for missing in node.missing_cli_ports() {
        warn!(
            port = %missing,
            "interface does not exist (yet); waiting for it"
        );
    }
    execute(&mut node, &mut io, &clock);
    info!(socket = %socket_path.display(), "ready");

    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let mut next_id: RequestId = 0;
    let mut refresh =
        tokio::time::interval_at(tokio::time::Instant::now() + host::REFRESH, host::REFRESH);
    let mut socket_stats = tokio::time::interval_at(
        tokio::time::Instant::now() + SOCKET_STATS_EVERY,
        SOCKET_STATS_EVERY,
    );
    // The configuration file is watched: a new version (an editor's save, a
    // Kubernetes ConfigMap's update swapping its `..data` link) reloads as SIGHUP does.
    let mut config_watch = config_file::Watch::new(opts.config.clone());
    // While the state directory has a problem it is tried again (its state written
    // anew), so that it comes back without waiting for a runtime change to try it.
    let mut state_recheck = tokio::time::interval_at(
        tokio::time::Instant::now() + lossless_node::node::STATE_RECHECK,
        lossless_node::node::STATE_RECHECK,
    );
    let mut config_poll = tokio::time::interval_at(
        tokio::time::Instant::now() + config_file::WATCH_EVERY,
        config_file::WATCH_EVERY,
    );
    loop {
        let deadline = node.poll_timeout().map(|t| clock.deadline(t));
        tokio::select! {
            // Inputs before timers: a deadline (a measurement round's reply timeout)
            // must not fire while the answers it waits for sit in the queue.
            biased;
            Some(input) = input_rx.recv() => {
                handle_input(&mut io, &mut node, &clock, input);
                // Take what else is queued before looking at timers.
                for _ in 0..256 {
                    match input_rx.try_recv() {
                        Ok(input) => handle_input(&mut io, &mut node, &clock, input),
                        Err(_) => break,
                    }
                }
            }
            guard = monitor.readable() => {
                let mut guard = guard?;
                // Drain until the socket is empty: readiness is edge-triggered,
                // so a datagram left behind would wait for the next link event.
                let mut errors = 0;
                loop {
                    match monitor.get_ref().recv() {
                        Ok(events) => {
                            for ev in events {
                                node.handle_link_change(clock.now(), convert::link_change(ev));
                            }
                        }
                        Err(LinkError::Overrun) => {
                            warn!("netlink overrun: re-reading every link");
                            match dump_links() {
                                Ok(links) => node.handle_links(
                                    clock.now(),
                                    links.into_iter().map(convert::link).collect(),
                                ),
                                Err(e) => error!(error = %e, "link dump failed"),
                            }
                        }
                        Err(e) if e.would_block() => {
                            guard.clear_ready();
                            break;
                        }
                        Err(e) => {
                            // A malformed datagram is consumed and skipped; a
                            // socket that keeps failing is left until it is
                            // readable again.
                            error!(error = %e, "netlink receive failed");
                            errors += 1;
                            if errors > 64 {
                                guard.clear_ready();
                                break;
                            }
                        }
                    }
                }
            }
            guard = addr_monitor.readable() => {
                let mut guard = guard?;
                // What changed does not matter: the host is read again whole, once
                // for a burst of changes (thousands of links coming up each add an
                // IPv6 link-local address; reading every address of the host for
                // each one would be quadratic).
                drain_addr_monitor(addr_monitor.get_ref());
                guard.clear_ready();
                host_due.get_or_insert(tokio::time::Instant::now() + HOST_SETTLE);
            }
            _ = sleep_until(host_due) => {
                host_due = None;
                read_host(&mut node, &clock, &mut host_reader, &mut host_due);
            }
            _ = refresh.tick() => {
                read_host(&mut node, &clock, &mut host_reader, &mut host_due);
                // What bursts freed (every port's link-up, a `status` of
                // thousands of ports) goes back to the system.
                lossless_sys::heap::trim();
            }
            _ = socket_stats.tick() => io.read_socket_stats(&mut node),
            _ = state_recheck.tick(), if node.state_dir_problem().is_some() => {
                let result = io.state.save(node.persisted());
                node.handle_state_dir(clock.now(), result.err().map(|e| e.problem().clone()));
            }
            _ = sleep_until(deadline) => node.handle_timeout(clock.now()),
            Some(msg) = core_rx.recv() => match msg {
                CoreMsg::Control { req, reply } => {
                    let follow = matches!(req, Request::Events { follow: true });
                    if matches!(req, Request::Counters { .. }) {
                        io.read_socket_stats(&mut node);
                    }
                    next_id += 1;
                    io.replies.insert(next_id, Reply { tx: reply, follow });
                    node.handle_request(clock.now(), next_id, req);
                }
                CoreMsg::Metrics { reply } => {
                    io.read_socket_stats(&mut node);
                    let relay = io.relay.as_ref().map(|r| r.show());
                    let mut text = node.render_metrics(clock.now(), relay.as_ref());
                    lossless_node::control_limits::render(&control.stats(), &mut text);
                    metrics_http::render(&metrics_conns.stats(), &mut text);
                    metrics_http::Web::render(metrics_web.as_ref(), &mut text);
                    let _ = reply.send(text);
                }
            },
            _ = config_poll.tick() => {
                if config_watch.changed() {
                    info!("the configuration file changed: reloading");
                    node.handle_reload_signal(clock.now());
                }
            }
            _ = sighup.recv() => {
                read_host(&mut node, &clock, &mut host_reader, &mut host_due);
                node.handle_reload_signal(clock.now());
            }
            _ = sigterm.recv() => break,
            _ = sigint.recv() => break,
        }
        execute(&mut node, &mut io, &clock);
    }
    info!("stopping: shutdown LLDPDU on every port");
    let stopping = std::time::Instant::now();
    let ports = node.ports().count();
    node.shutdown(clock.now());
    execute(&mut node, &mut io, &clock);
    let sent = stopping.elapsed();
    let _ = std::fs::remove_file(&socket_path);
    // The shutdown LLDPDUs are out: close every socket at once (each close waits
    // for the kernel, see crate::closer).
    io.relay = None;
    io.close_all(SHUTDOWN_CLOSE_LIMIT).await;
    info!(
        ports,
        lldpdus_ms = ms(sent),
        closed_ms = ms(stopping.elapsed() - sent),
        "stopped"
    );
    Ok(())
}

/// Reads the host and hands it to the node; a reading that failed in part (the last
/// good values kept, see [`host::merge`]) is tried again [`host::RETRY`] later.
fn read_host(
    node: &mut Node,
    clock: &Clock,
    reader: &mut host::HostReader,
    due: &mut Option<tokio::time::Instant>,
) {
    let reading = reader.read();
    node.handle_host(clock.now(), reading.info);
    if reading.failed {
        due.get_or_insert(tokio::time::Instant::now() + host::RETRY);
    }
}

/// Reads the address monitor until it is empty (an overrun included: the host is
/// read again whole anyway).
fn drain_addr_monitor(m: &AddrMonitor) {
    for _ in 0..1024 {
        match m.recv() {
            Ok(_) | Err(LinkError::Overrun) => {}
            Err(e) if e.would_block() => return,
            Err(e) => {
                error!(error = %e, "address monitor receive failed");
                return;
            }
        }
    }
}

/// Milliseconds, rounded to hundredths for the log.
fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

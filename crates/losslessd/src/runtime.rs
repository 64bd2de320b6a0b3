//! The runtime: the only part of the daemon that reads clocks, waits and
//! touches sockets. One thread (tokio current-thread runtime, epoll): a task
//! per port reads its packet socket; the core task owns the [`Daemon`] and
//! carries out its [`Output`]s.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use lossless_dcbx::Instant;
use lossless_sys::dcbnl::{DcbError, Dcbnl, PgSetting};
use lossless_sys::link::{dump_links, LinkError, LinkMonitor};
use lossless_sys::packet::PacketSocket;
use lossless_sys::reactor::{async_fd, async_fd_with_interest};
use lossless_sys::timestamp::{realtime_ps, Clock as TsClock, MeasureSocket};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinHandle;
use tracing::{debug, error, info, warn};

use crate::config::{ConfigFileError, DaemonConfig};
use crate::control::{self, CoreMsg};
use crate::daemon::{Daemon, Now, Output, StartError};
use crate::protocol::{Request, Response};
use crate::relay::RelayRuntime;

/// Command-line choices; each overrides the file.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub config: Option<PathBuf>,
    pub interfaces: Vec<String>,
    pub socket: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub metrics: Option<SocketAddr>,
    pub log: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigFileError),
    #[error(transparent)]
    Start(#[from] StartError),
    #[error("control socket {path}: {source}")]
    Socket { path: PathBuf, source: io::Error },
    #[error("metrics endpoint {addr}: {source}")]
    Metrics { addr: SocketAddr, source: io::Error },
    #[error("netlink: {0}")]
    Netlink(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Loads the configuration as `losslessd` would, with the command line on top.
pub fn load_config(opts: &Options) -> Result<DaemonConfig, RunError> {
    let mut config = match &opts.config {
        // A file named on the command line must exist: a typo must not
        // silently run every port on the defaults.
        Some(path) if !path.exists() => {
            return Err(RunError::Config(ConfigFileError::Io {
                path: path.clone(),
                source: io::Error::new(io::ErrorKind::NotFound, "no such file"),
            }))
        }
        Some(path) => DaemonConfig::load(path)?,
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
    if let Some(l) = &opts.log {
        config.daemon.log = l.clone();
    }
    Ok(config)
}

/// Runs until SIGTERM or SIGINT.
pub fn run(opts: Options, config: DaemonConfig) -> Result<(), RunError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(run_async(opts, config))
}

struct Clock {
    epoch: tokio::time::Instant,
}

impl Clock {
    fn now(&self) -> Now {
        let mono = Instant::from_duration(tokio::time::Instant::now() - self.epoch);
        let unix = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        Now { mono, unix }
    }

    fn deadline(&self, at: Instant) -> tokio::time::Instant {
        self.epoch + at.since_epoch()
    }
}

enum Input {
    Frame(u32, Vec<u8>),
    RxError(u32),
    /// A measurement frame and its receive timestamp.
    Measure(u32, Vec<u8>, Option<u64>),
    /// A measurement frame we sent, back from the error queue with its timestamp.
    MeasureTx(u32, Vec<u8>, u64),
}

struct PortIo {
    socket: Arc<AsyncFd<PacketSocket>>,
    reader: JoinHandle<()>,
}

struct MeasureIo {
    socket: Arc<AsyncFd<MeasureSocket>>,
    reader: JoinHandle<()>,
}

struct Io {
    ports: HashMap<u32, PortIo>,
    measure: HashMap<u32, MeasureIo>,
    input: mpsc::Sender<Input>,
    events: broadcast::Sender<Arc<str>>,
    dcbnl: Option<Dcbnl>,
}

async fn run_async(opts: Options, config: DaemonConfig) -> Result<(), RunError> {
    let clock = Clock {
        epoch: tokio::time::Instant::now(),
    };
    let socket_path = config.daemon.socket.clone();
    let socket_group = config.daemon.socket_group.clone();
    let metrics_addr = config.daemon.metrics;
    let mut daemon = Daemon::new(
        config,
        opts.config.clone(),
        opts.interfaces.clone(),
        std::process::id(),
        clock.now(),
    )?;
    info!(
        boots = daemon.boots(),
        state_dir = %daemon.state_dir().display(),
        "losslessd starting"
    );

    // Subscribe to link changes before the dump, so nothing falls between.
    let monitor = async_fd(LinkMonitor::open()?)?;
    let listener = control::bind(&socket_path, socket_group.as_deref()).map_err(|source| {
        RunError::Socket {
            path: socket_path.clone(),
            source,
        }
    })?;
    let (core_tx, mut core_rx) = mpsc::channel::<CoreMsg>(256);
    tokio::spawn(control::serve(listener, core_tx.clone()));
    if let Some(addr) = metrics_addr {
        let l = control::bind_metrics(addr)
            .await
            .map_err(|source| RunError::Metrics { addr, source })?;
        info!(%addr, "metrics on http://{addr}/metrics");
        tokio::spawn(control::serve_metrics(l, core_tx.clone()));
    }
    drop(core_tx);

    let (input_tx, mut input_rx) = mpsc::channel::<Input>(8192);
    let mut io = Io {
        ports: HashMap::new(),
        measure: HashMap::new(),
        input: input_tx,
        events: broadcast::channel(4096).0,
        dcbnl: None,
    };
    let links = dump_links().map_err(|e| RunError::Netlink(e.to_string()))?;
    daemon.links(clock.now(), links);
    for missing in daemon.missing_cli_ports() {
        warn!(
            port = missing,
            "interface does not exist (yet); waiting for it"
        );
    }
    execute(&mut daemon, &mut io, &clock);
    let mut relay = None;
    sync_relay(&daemon, &mut relay);
    info!(socket = %socket_path.display(), "ready");

    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sigint = signal(SignalKind::interrupt())?;
    let mut sighup = signal(SignalKind::hangup())?;
    loop {
        let deadline = daemon.poll_timeout().map(|t| clock.deadline(t));
        tokio::select! {
            // Inputs before timers: a deadline (a measurement round's reply timeout)
            // must not fire while the answers it waits for sit in the queue.
            biased;
            Some(input) = input_rx.recv() => {
                handle_input(&mut daemon, &clock, input);
                // Take what else is queued before looking at timers.
                for _ in 0..256 {
                    match input_rx.try_recv() {
                        Ok(input) => handle_input(&mut daemon, &clock, input),
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
                                daemon.link_event(clock.now(), ev);
                            }
                        }
                        Err(LinkError::Overrun) => {
                            warn!("netlink overrun: re-reading every link");
                            match dump_links() {
                                Ok(links) => daemon.links(clock.now(), links),
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
            _ = sleep_until(deadline) => daemon.timeout(clock.now()),
            Some(msg) = core_rx.recv() => match msg {
                CoreMsg::Control { req, reply } => {
                    let follow = matches!(req, Request::Events { follow: true });
                    let sub = follow.then(|| io.events.subscribe());
                    let resp = match (&req, &relay) {
                        (Request::RelayShow, Some(r)) => {
                            Response::ok(serde_json::to_value(r.show()).unwrap_or_default())
                        }
                        (Request::Reload, _) => {
                            let mut resp = daemon.request(clock.now(), req);
                            if resp.ok {
                                let what = sync_relay(&daemon, &mut relay);
                                if let Some(serde_json::Value::Object(m)) = resp.result.as_mut() {
                                    m.insert("relay".into(), what.into());
                                }
                            }
                            resp
                        }
                        _ => daemon.request(clock.now(), req),
                    };
                    let _ = reply.send((resp, sub));
                }
                CoreMsg::Metrics { reply } => {
                    let mut text = daemon.render_metrics(clock.now());
                    if let Some(r) = &relay {
                        crate::relay::metrics::render(&r.show(), &mut text);
                    }
                    let _ = reply.send(text);
                }
            },
            _ = sighup.recv() => match daemon.reload(clock.now()) {
                Ok(r) => {
                    let what = sync_relay(&daemon, &mut relay);
                    info!(changed = ?r.changed, added = ?r.added, removed = ?r.removed, relay = what, "SIGHUP: reloaded");
                }
                Err(e) => error!(error = %e, "SIGHUP: configuration refused, the running one stays"),
            },
            _ = sigterm.recv() => break,
            _ = sigint.recv() => break,
        }
        execute(&mut daemon, &mut io, &clock);
    }
    info!("stopping: shutdown LLDPDU on every port");
    daemon.shutdown(clock.now());
    execute(&mut daemon, &mut io, &clock);
    let _ = std::fs::remove_file(&socket_path);
    Ok(())
}

/// Starts, stops or restarts the relay to match the configuration; says
/// which. A changed section restarts it (its counters start again).
fn sync_relay(daemon: &Daemon, relay: &mut Option<RelayRuntime>) -> &'static str {
    let want = daemon.config().relay.as_ref();
    let what = match (want, relay.as_ref()) {
        (None, None) => return "none",
        (Some(w), Some(r)) if r.section() == w => return "unchanged",
        (None, Some(_)) => "stopped",
        (Some(_), Some(_)) => "restarted",
        (Some(_), None) => "started",
    };
    // Stop the old thread (and close its sockets) before the new one opens.
    *relay = None;
    if let Some(section) = want {
        match RelayRuntime::start(section.clone()) {
            Ok(r) => *relay = Some(r),
            Err(e) => {
                error!(error = %e, "relay not started");
                return "failed";
            }
        }
    }
    what
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

fn handle_input(daemon: &mut Daemon, clock: &Clock, input: Input) {
    match input {
        Input::Frame(ifindex, frame) => daemon.frame(clock.now(), ifindex, &frame),
        Input::RxError(ifindex) => daemon.io_error(ifindex, false),
        Input::Measure(ifindex, frame, rx) => {
            daemon.measure_frame(clock.now(), ifindex, &frame, rx)
        }
        Input::MeasureTx(ifindex, frame, tx) => {
            daemon.measure_tx_timestamp(clock.now(), ifindex, &frame, tx)
        }
    }
}

/// Carries out everything the core asked for, including what the answers
/// to probes and programming produce.
fn execute(daemon: &mut Daemon, io: &mut Io, clock: &Clock) {
    while let Some(out) = daemon.poll_output() {
        let started = std::time::Instant::now();
        let kind = output_kind(&out);
        execute_one(daemon, io, clock, out);
        // Everything here runs on the one thread that also carries the frames: a
        // blocked loop delays measurement answers and LLDPDUs.
        let ms = started.elapsed().as_secs_f64() * 1e3;
        if ms > 100.0 {
            warn!(output = kind, ms, "the event loop was blocked");
        } else if ms > 10.0 {
            debug!(output = kind, ms, "the event loop was blocked");
        }
    }
}

fn output_kind(out: &Output) -> &'static str {
    match out {
        Output::Open { .. } => "open",
        Output::CheckLink { .. } => "check_link",
        Output::Close { .. } => "close",
        Output::Send { .. } => "send",
        Output::Probe { .. } => "probe",
        Output::Apply { .. } => "apply",
        Output::OpenMeasure { .. } => "open_measure",
        Output::CloseMeasure { .. } => "close_measure",
        Output::SendMeasure { .. } => "send_measure",
        Output::ReadSpeed { .. } => "read_speed",
        Output::ApplyHeadroom { .. } => "apply_headroom",
        Output::SetBuffer { .. } => "set_buffer",
        Output::Event(_) => "event",
    }
}

fn execute_one(daemon: &mut Daemon, io: &mut Io, clock: &Clock, out: Output) {
    match out {
        Output::Open { ifindex, name } => match open_port(ifindex, io) {
            Ok(p) => {
                if let Some(old) = io.ports.insert(ifindex, p) {
                    old.reader.abort();
                }
            }
            Err(e) => error!(port = %name, error = %e, "cannot open packet socket"),
        },
        Output::CheckLink { ifindex, frame } => {
            let info = lossless_sys::link::get_link(ifindex)
                .map_err(|e| warn!(ifindex, error = %e, "cannot read the link"))
                .ok();
            daemon.link_checked(clock.now(), info, &frame);
        }
        Output::Close { ifindex } => {
            if let Some(p) = io.ports.remove(&ifindex) {
                p.reader.abort();
            }
            if let Some(m) = io.measure.remove(&ifindex) {
                m.reader.abort();
            }
        }
        Output::OpenMeasure {
            ifindex,
            name,
            timestamps,
        } => {
            let opened = MeasureSocket::open(ifindex, &name, timestamps).and_then(|s| {
                let clocks = s.clocks();
                let socket = Arc::new(async_fd_with_interest(
                    s,
                    Interest::READABLE | Interest::ERROR,
                )?);
                let reader = tokio::spawn(read_measure(ifindex, socket.clone(), io.input.clone()));
                Ok((MeasureIo { socket, reader }, clocks))
            });
            match opened {
                Ok((m, clocks)) => {
                    if let Some(old) = io.measure.insert(ifindex, m) {
                        old.reader.abort();
                    }
                    daemon.measure_opened(ifindex, Ok(clocks));
                }
                Err(e) => daemon.measure_opened(ifindex, Err(e.to_string())),
            }
        }
        Output::CloseMeasure { ifindex } => {
            if let Some(m) = io.measure.remove(&ifindex) {
                m.reader.abort();
            }
        }
        Output::SendMeasure { ifindex, frame } => {
            let Some(m) = io.measure.get(&ifindex) else {
                return;
            };
            let sock = m.socket.get_ref();
            match sock.send(&frame) {
                // No driver timestamp: our own clock, right after the send.
                Ok(()) if sock.clocks().tx == TsClock::Userspace => {
                    daemon.measure_tx_timestamp(clock.now(), ifindex, &frame, realtime_ps());
                }
                Ok(()) => {}
                Err(_) => daemon.io_error(ifindex, true),
            }
        }
        Output::ReadSpeed { ifindex, name } => {
            daemon.speed_read(clock.now(), ifindex, read_speed(&name));
        }
        Output::ApplyHeadroom {
            ifindex,
            name,
            pfc_enabled,
            pfc_delay_bits,
            read_buffer,
        } => {
            let result = with_dcbnl(io, |d| d.set_ieee_pfc(&name, pfc_enabled, pfc_delay_bits));
            let ieee = read_buffer.then(|| with_dcbnl(io, |d| d.get_ieee(&name)));
            daemon.headroom_applied(clock.now(), ifindex, pfc_delay_bits, result, ieee);
        }
        Output::SetBuffer {
            ifindex,
            name,
            buffer,
        } => {
            let readback = with_dcbnl(io, |d| {
                d.set_dcb_buffer(&name, &buffer)?;
                d.get_ieee(&name)
            });
            daemon.buffer_written(clock.now(), ifindex, readback);
        }
        Output::Send { ifindex, frame } => {
            let sent = io
                .ports
                .get(&ifindex)
                .map(|p| p.socket.get_ref().send(&frame));
            if !matches!(sent, Some(Ok(()))) {
                daemon.io_error(ifindex, true);
            }
        }
        Output::Probe { ifindex, name } => {
            let result = with_dcbnl(io, |d| d.get_state(&name).map(|_| ()));
            daemon.probe_result(ifindex, result);
        }
        Output::Apply {
            ifindex,
            name,
            pfc,
            pg,
        } => {
            let result = with_dcbnl(io, |d| program(d, &name, pfc.as_ref(), pg.as_ref()));
            daemon.apply_result(clock.now(), ifindex, result);
        }
        Output::Event(line) => {
            let _ = io.events.send(Arc::from(line));
        }
    }
}

fn with_dcbnl<T>(
    io: &mut Io,
    f: impl FnOnce(&mut Dcbnl) -> Result<T, DcbError>,
) -> Result<T, String> {
    if io.dcbnl.is_none() {
        io.dcbnl = Some(Dcbnl::open().map_err(|e| format!("dcbnl socket: {e}"))?);
    }
    let d = io.dcbnl.as_mut().ok_or("dcbnl socket unavailable")?;
    f(d).map_err(|e| e.to_string())
}

/// Programs operational PFC and PG the way a CEE driver expects: DCB on,
/// per-priority PFC and its state, PG for both directions, then SET_ALL.
fn program(
    d: &mut Dcbnl,
    ifname: &str,
    pfc: Option<&lossless_wire::cee::PfcConfig>,
    pg: Option<&lossless_wire::cee::PgConfig>,
) -> Result<(), DcbError> {
    d.set_state(ifname, true)?;
    let mut prios = [false; 8];
    if let Some(pfc) = pfc {
        for p in pfc.priorities.priorities() {
            prios[usize::from(p)] = true;
        }
    }
    d.set_pfc(ifname, prios)?;
    d.set_pfc_state(ifname, pfc.is_some())?;
    if let Some(pg) = pg {
        d.set_pg(
            ifname,
            &PgSetting {
                pgid: pg.pgid,
                percent: pg.percent,
            },
        )?;
    }
    d.set_all(ifname)?;
    Ok(())
}

fn open_port(ifindex: u32, io: &Io) -> io::Result<PortIo> {
    let socket = Arc::new(async_fd(PacketSocket::open(ifindex)?)?);
    let reader = tokio::spawn(read_port(ifindex, socket.clone(), io.input.clone()));
    Ok(PortIo { socket, reader })
}

async fn read_port(ifindex: u32, socket: Arc<AsyncFd<PacketSocket>>, input: mpsc::Sender<Input>) {
    let mut buf = vec![0u8; 9216];
    loop {
        let Ok(mut guard) = socket.readable().await else {
            return;
        };
        match guard.try_io(|s| s.get_ref().recv(&mut buf)) {
            Ok(Ok(n)) => {
                if input
                    .send(Input::Frame(ifindex, buf[..n].to_vec()))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Ok(Err(_)) => {
                if input.send(Input::RxError(ifindex)).await.is_err() {
                    return;
                }
            }
            Err(_would_block) => {}
        }
    }
}

/// The line rate the kernel reports, Mb/s (`/sys/class/net/IF/speed`; -1 or absent
/// when it does not know, e.g. link down or a driver without ethtool link settings).
fn read_speed(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{name}/speed")).ok()?;
    text.trim()
        .parse::<i64>()
        .ok()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|v| *v > 0)
}

/// Reads a measurement socket: frames (with receive timestamps) and, from the error
/// queue, the transmit timestamps of what we sent.
async fn read_measure(
    ifindex: u32,
    socket: Arc<AsyncFd<MeasureSocket>>,
    input: mpsc::Sender<Input>,
) {
    let mut buf = vec![0u8; 2048];
    loop {
        let Ok(mut guard) = socket.ready(Interest::READABLE | Interest::ERROR).await else {
            return;
        };
        loop {
            let msg = match socket.get_ref().recv(&mut buf) {
                Ok((n, rx)) => Input::Measure(ifindex, buf[..n].to_vec(), rx),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => Input::RxError(ifindex),
            };
            if input.send(msg).await.is_err() {
                return;
            }
        }
        while let Ok((n, tx)) = socket.get_ref().recv_tx_timestamp(&mut buf) {
            let msg = Input::MeasureTx(ifindex, buf[..n].to_vec(), tx);
            if input.send(msg).await.is_err() {
                return;
            }
        }
        // Both queues drained; readiness that arrived meanwhile is kept by tokio.
        guard.clear_ready();
    }
}

//! The relay's data path (runtime layer): one thread per `[relay]` section
//! that owns the sockets and the sans-IO core (`lossless_relay`), reads
//! frames in batches, hands them to the core with the time, and sends what
//! it yields. The daemon's control task reads the status under the same
//! lock, between batches.
//!
//! - [`pe`]: a PE's loop over its DC and WAN interfaces.
//! - [`gateway`]: a DC gateway's loop over the interface facing its PE.
//! - [`xdp`], [`xdp_gateway`]: their XDP fast paths.
//!
//! What `lossless relay show` prints and the relay's metrics are the node core's
//! views ([`lossless_node::relay`], [`lossless_node::relay_metrics`]).
//!
//! A missing interface is not fatal: the thread retries every second and
//! `relay show` says why the port is not open. A socket that fails is closed
//! and reopened the same way.

pub mod gateway;
pub mod pe;
pub mod xdp;
pub mod xdp_gateway;

use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use lossless_relay::{Datapath, GatewayCheck, Instant, Poll, Port, Relay, RelaySection, TxBatch};
use lossless_sys::batch::{socket_error, wait_any, Filter};
use lossless_sys::if_nametoindex;
use lossless_sys::ring::{RingOptions, RingSocket, RxFrames};
use tracing::{info, warn};

use lossless_node::relay::{PortIo, RelayShow, XdpShow};

/// How often a port that is not open is tried again.
const REOPEN: Duration = Duration::from_secs(1);
/// The longest a waiting thread sleeps before it looks at the stop flag.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// How often the kernel's drop counters are read.
const STATS_EVERY: Duration = Duration::from_millis(100);
/// Ring slot size: a tunnel frame around a PFC frame is under 200 octets;
/// anything longer than a slot is not ours anyway (and arrives cut).
const SLOT: usize = 2048;
/// Ring slots per port: a 16 MiB ring absorbs a burst of 8192 frames.
const SLOTS: usize = 8192;

fn ring_options(priority: u32, promiscuous: bool) -> RingOptions {
    RingOptions {
        frames: SLOTS,
        frame_size: SLOT,
        priority,
        promiscuous,
        // PFC must not queue behind bulk traffic in a software qdisc.
        qdisc_bypass: true,
    }
}

/// The sans-IO core a thread drives (one per daemon: the size difference
/// between the variants costs nothing).
#[allow(clippy::large_enum_variant)]
enum Core {
    Pe(Relay),
    Gateway(gateway::State),
}

/// What the thread and the control task share.
struct State {
    core: Core,
    ports: Vec<PortIo>,
    xdp: XdpShowSlot,
}

/// The XDP path's state for `relay show`, and its last counts.
#[derive(Debug, Clone, Default)]
pub struct XdpShowSlot {
    show: Option<XdpShow>,
    counts: xdp::XdpCounts,
}

impl XdpShowSlot {
    pub fn set_off(&mut self, why: &str) {
        let s = self.show.get_or_insert_with(XdpShow::default);
        if s.running || s.why != why {
            if !why.starts_with("waiting") {
                info!(why, "relay: XDP path not running; AF_PACKET path only");
            }
            s.running = false;
            s.mode = None;
            s.why = why.to_string();
        }
    }

    pub fn set_running(&mut self, mode: lossless_sys::xdp::Mode, why: &str) {
        let mode = match mode {
            lossless_sys::xdp::Mode::Native => "native",
            lossless_sys::xdp::Mode::Generic => "generic",
        };
        info!(mode, "relay: XDP path attached");
        self.show = Some(XdpShow {
            running: true,
            mode: Some(mode.into()),
            why: why.into(),
            ..XdpShow::default()
        });
    }

    fn record(&mut self, c: xdp::XdpCounts) {
        self.counts = c;
        if let Some(s) = self.show.as_mut() {
            s.egress_relayed = c.egress_relayed;
            s.egress_dropped = c.egress_dropped.total();
            s.egress_passed = c.egress_passed;
            s.ingress_delivered = c.ingress_delivered;
            s.ingress_dropped = c.ingress_dropped.total();
            s.ingress_passed = c.ingress_passed;
            s.redirect_failed = c.redirect_failed;
        }
    }
}

/// The core's counters plus what the XDP program decided without it.
fn merged(mut st: lossless_relay::RelayStatus, c: &xdp::XdpCounts) -> lossless_relay::RelayStatus {
    let e = &mut st.egress;
    e.received += c.egress_received - c.egress_passed;
    e.relayed += c.egress_relayed;
    e.suppressed += c.egress_suppressed;
    e.masked += c.egress_masked;
    e.flushed += c.egress_flushed;
    if let (Some(storm), Some(prio)) = (st.storm.as_mut(), c.storm) {
        // The program keeps the ceiling: the core's guard saw no frame.
        storm.priorities = prio.to_vec();
        storm.suppressed = prio.iter().map(|p| p.counters.suppressed).sum();
    }
    e.dropped.add_all(&c.egress_dropped);
    let i = &mut st.ingress;
    i.received += c.ingress_received;
    i.delivered += c.ingress_delivered;
    i.dropped.add_all(&c.ingress_dropped);
    st
}

struct Shared {
    stop: AtomicBool,
    state: Mutex<State>,
    started: std::time::Instant,
    datapath: Datapath,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic in the data path thread poisons the lock; the counters in
        // it are still the best answer there is.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The core's clock: time since the relay started.
    fn now(&self) -> Instant {
        self.at(std::time::Instant::now())
    }

    /// `t` on the core's clock.
    fn at(&self, t: std::time::Instant) -> Instant {
        Instant::from_duration(t.saturating_duration_since(self.started))
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A running relay: the thread, stopped and joined on drop.
pub struct RelayRuntime {
    section: RelaySection,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("relay: {0}")]
    Config(#[from] lossless_relay::ConfigError),
    #[error("relay thread: {0}")]
    Spawn(io::Error),
}

impl RelayRuntime {
    /// Starts the data path for `section` (already validated by the
    /// configuration reader).
    pub fn start(section: RelaySection) -> Result<RelayRuntime, StartError> {
        let started = std::time::Instant::now();
        let (core, ports, datapath) = match &section {
            RelaySection::Pe(cfg) => {
                let relay = Relay::new(cfg.clone(), Instant::ZERO)?;
                let ports = vec![
                    port_io("dc", cfg.dc.interface.as_deref()),
                    port_io("wan", cfg.wan.interface.as_deref()),
                ];
                (Core::Pe(relay), ports, cfg.datapath)
            }
            RelaySection::Gateway(cfg) => {
                let check = GatewayCheck::new(cfg)?;
                let ports = vec![port_io("pe", cfg.interface.as_deref())];
                let state = gateway::State::new(check, cfg);
                (Core::Gateway(state), ports, cfg.datapath)
            }
        };
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            state: Mutex::new(State {
                core,
                ports,
                xdp: XdpShowSlot::default(),
            }),
            started,
            datapath,
        });
        let thread = {
            let shared = Arc::clone(&shared);
            let section = section.clone();
            std::thread::Builder::new()
                .name("relay".into())
                .spawn(move || match section {
                    RelaySection::Pe(cfg) => pe::run(&shared, &cfg),
                    RelaySection::Gateway(cfg) => gateway::run(&shared, &cfg),
                })
                .map_err(StartError::Spawn)?
        };
        info!(role = role(&section), "relay started");
        Ok(RelayRuntime {
            section,
            shared,
            thread: Some(thread),
        })
    }

    /// The section it runs.
    pub fn section(&self) -> &RelaySection {
        &self.section
    }

    /// Everything `relay show` prints.
    pub fn show(&self) -> RelayShow {
        let st = self.shared.lock();
        let (pe, gateway) = match &st.core {
            Core::Pe(r) => (Some(merged(r.status(), &st.xdp.counts)), None),
            Core::Gateway(g) => (None, Some(g.show())),
        };
        RelayShow {
            role: role(&self.section).into(),
            uptime_s: self.shared.started.elapsed().as_secs_f64(),
            datapath: self.shared.datapath,
            ports: st.ports.clone(),
            pe,
            gateway,
            xdp: st.xdp.show.clone(),
        }
    }
}

impl Drop for RelayRuntime {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            if t.join().is_err() {
                warn!("the relay thread had panicked");
            }
        }
    }
}

fn role(section: &RelaySection) -> &'static str {
    match section {
        RelaySection::Pe(_) => "pe",
        RelaySection::Gateway(_) => "gateway",
    }
}

fn port_io(side: &str, interface: Option<&str>) -> PortIo {
    PortIo {
        side: side.into(),
        interface: interface.unwrap_or_default().into(),
        error: Some("not opened yet".into()),
        ..PortIo::default()
    }
}

/// One interface's socket and its bookkeeping in the thread.
struct Link {
    /// Index into `State::ports`.
    slot: usize,
    name: String,
    filter: Filter,
    opts: RingOptions,
    socket: Option<RingSocket>,
    last_try: Option<std::time::Instant>,
    last_stats: std::time::Instant,
    stamps: TxStamps,
}

/// The kernel's transmit stamps on a link: asked for the frames the core
/// marks ([`lossless_relay::Transmit::stamp`]), read back from the socket's
/// error queue.
#[derive(Default)]
struct TxStamps {
    /// Wanted: the WAN side of a PE that measures the WAN delay.
    wanted: bool,
    /// The open socket reports them.
    on: bool,
    /// Asked for and not yet read back, and when the last was asked for.
    pending: usize,
    asked: Option<std::time::Instant>,
    /// A stamp's copy of its frame.
    buf: Vec<u8>,
}

/// How long a stamp asked for is waited for: past it (the kernel dropped
/// it, or the driver gives none) the error queue is no longer read at each
/// turn of the loop.
const STAMP_WAIT: Duration = Duration::from_secs(1);

impl Link {
    fn new(slot: usize, name: &str, filter: Filter, opts: RingOptions) -> Link {
        Link {
            slot,
            name: name.to_string(),
            filter,
            opts,
            socket: None,
            last_try: None,
            last_stats: std::time::Instant::now(),
            stamps: TxStamps::default(),
        }
    }

    /// Asks for the kernel's transmit stamps of marked frames on this link.
    fn with_tx_stamps(mut self) -> Link {
        self.stamps.wanted = true;
        self.stamps.buf = vec![0; SLOT];
        self
    }

    /// Whether the open socket reports transmit stamps.
    fn tx_stamps(&self) -> bool {
        self.socket.is_some() && self.stamps.on
    }

    /// Hands each transmit stamp waiting on the error queue to `f` (the
    /// frame as sent, the kernel's real-time nanoseconds). Reads the queue
    /// while stamps are awaited, or when `woke` (the thread woke from a wait
    /// with nothing received: a late stamp makes the socket signal an
    /// error, and is read then).
    fn take_tx_stamps(&mut self, woke: bool, mut f: impl FnMut(&[u8], u64)) {
        let Some(s) = &self.socket else {
            return;
        };
        let st = &mut self.stamps;
        if !st.on || (st.pending == 0 && !woke) {
            return;
        }
        loop {
            match s.recv_tx_stamp(&mut st.buf) {
                Ok((n, at)) => {
                    st.pending = st.pending.saturating_sub(1);
                    f(&st.buf[..n], at);
                }
                Err(e) => {
                    if e.kind() != io::ErrorKind::WouldBlock {
                        warn!(interface = %self.name, error = %e, "reading transmit stamps failed");
                        st.pending = 0;
                    }
                    break;
                }
            }
        }
        if st.pending > 0 && st.asked.is_some_and(|t| t.elapsed() > STAMP_WAIT) {
            st.pending = 0;
        }
    }

    /// Opens the socket if it is closed and the last try is a second old.
    fn ensure_open(&mut self, shared: &Shared) {
        if self.socket.is_some() || self.last_try.is_some_and(|t| t.elapsed() < REOPEN) {
            return;
        }
        self.last_try = Some(std::time::Instant::now());
        let opened = if_nametoindex(&self.name)
            .and_then(|i| RingSocket::open(i, self.filter, self.opts))
            .map_err(|e| format!("{}: {e}", self.name));
        let mut st = shared.lock();
        let port = &mut st.ports[self.slot];
        match opened {
            Ok(s) => {
                info!(interface = %self.name, side = %port.side, "relay port open");
                self.stamps.pending = 0;
                self.stamps.on = self.stamps.wanted
                    && match s.report_tx_stamps() {
                        Ok(()) => true,
                        Err(e) => {
                            warn!(interface = %self.name, error = %e,
                                "no kernel transmit stamps: WAN delay measurement frames timed when queued");
                            false
                        }
                    };
                port.open = true;
                port.error = None;
                self.socket = Some(s);
            }
            Err(e) => {
                if port.error.as_deref() != Some(e.as_str()) {
                    warn!(error = %e, "relay port not open; retrying every second");
                }
                port.open = false;
                port.error = Some(e);
            }
        }
    }

    /// Closes the socket: the interface is served by an XDP program, which
    /// reads every frame the socket would (the port is open, through it).
    fn serve_in_xdp(&mut self, port: &mut PortIo) {
        if self.socket.take().is_some() {
            info!(interface = %self.name, "relay port served by the XDP program; packet socket closed");
        }
        port.open = true;
        port.error = None;
    }

    /// Closes the socket after an error; it is reopened later.
    fn fail(&mut self, port: &mut PortIo, e: &io::Error) {
        warn!(interface = %self.name, error = %e, "relay port failed; reopening");
        self.socket = None;
        port.open = false;
        port.error = Some(format!("{}: {e}", self.name));
    }

    /// Takes up to `max` waiting frames and hands them to `f`; counts them
    /// in `port`. Returns how many (0 when closed or nothing waits).
    /// `complete` finishes a checksum the kernel left partial.
    fn recv(
        &mut self,
        max: usize,
        port: &mut PortIo,
        complete: impl FnMut(&mut [u8]),
        f: impl FnOnce(&RxFrames<'_>),
    ) -> usize {
        let Some(s) = self.socket.as_mut() else {
            return 0;
        };
        let frames = s.recv_batch(max, complete);
        let n = frames.len();
        if n > 0 {
            port.received += n as u64;
            port.batches += 1;
            port.largest_batch = port.largest_batch.max(n as u64);
            f(&frames);
        }
        n
    }

    /// Sends the frames of `out` for `side`, counting what went and what
    /// did not.
    fn send(&mut self, out: &TxBatch, side: Port, shared: &Shared) {
        let Some(s) = &mut self.socket else {
            return;
        };
        let total = out.iter().filter(|t| t.port == side).count();
        if total == 0 {
            return;
        }
        let stamps = self.stamps.on;
        let frames = || {
            out.iter()
                .filter(|t| t.port == side)
                .map(|t| (t.frame, t.stamp && stamps))
        };
        let result = s.send_batch_stamped(frames());
        if let Ok(n) = result {
            let asked = frames().take(n).filter(|f| f.1).count();
            if asked > 0 {
                self.stamps.pending += asked;
                self.stamps.asked = Some(std::time::Instant::now());
            }
        }
        let mut st = shared.lock();
        let port = &mut st.ports[self.slot];
        match result {
            Ok(n) => {
                port.sent += n as u64;
                port.send_errors += (total - n) as u64;
            }
            Err(e) => {
                port.send_errors += total as u64;
                port.error = Some(format!("send: {e}"));
            }
        }
    }

    /// Every [`STATS_EVERY`]: adds the kernel's drop counter, and closes
    /// the socket if the kernel reported an error on it (the interface went
    /// away: `ENETDOWN`), to be reopened.
    fn read_stats(&mut self, port: &mut PortIo, now: std::time::Instant) {
        if now.saturating_duration_since(self.last_stats) < STATS_EVERY {
            return;
        }
        self.last_stats = now;
        let Some(s) = &self.socket else {
            return;
        };
        if let Ok(st) = s.stats() {
            port.socket_drops += st.drops;
        }
        if let Some(e) = socket_error(s) {
            self.fail(port, &e);
        }
    }
}

/// Waits for a frame on any open link, or until `until` (capped at
/// [`MAX_WAIT`]); spins instead in busy mode.
fn idle(shared: &Shared, links: &[&Link], until: Option<Instant>) {
    if shared.datapath.poll == Poll::Busy && links.iter().any(|l| l.socket.is_some()) {
        std::hint::spin_loop();
        return;
    }
    let mut wait = MAX_WAIT;
    if let Some(at) = until {
        wait = wait.min(at.saturating_since(shared.now()));
    }
    let fds: Vec<_> = links
        .iter()
        .filter_map(|l| l.socket.as_ref().map(AsFd::as_fd))
        .collect();
    if fds.is_empty() {
        std::thread::sleep(wait);
        return;
    }
    if let Err(e) = wait_any(&fds, Some(wait)) {
        warn!(error = %e, "relay wait failed");
        std::thread::sleep(wait);
    }
}

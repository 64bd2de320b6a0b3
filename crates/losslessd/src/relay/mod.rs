//! The relay's data path (runtime layer): one thread per `[relay]` section
//! that owns the sockets and drives the sans-IO relay host
//! ([`lossless_relay::Host`], the one the lab runs too: the core, which ports
//! are open, their counters, the filter predicate, `relay show`), reads
//! frames in batches, hands them to the host with the time, and sends what
//! it yields. The daemon's control task reads the host's `show` under the
//! same lock, between batches.
//!
//! - [`pe`]: a PE's loop over its DC and WAN interfaces.
//! - [`gateway`]: a DC gateway's loop over the interface facing its PE.
//! - [`xdp`], [`xdp_gateway`]: their XDP fast paths.
//!
//! What `lossless relay show` prints is the host's view
//! ([`lossless_relay::show`]); the relay's metrics are the node core's
//! ([`lossless_node::relay_metrics`]).
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

pub use lossless_relay::host::XdpShowSlot;
use lossless_relay::host::{Filter as HostFilter, Link as HostLink};
use lossless_relay::show::RelayShow;
use lossless_relay::{Datapath, Host, Instant, Poll, Port, RelaySection, TxBatch};
use lossless_sys::batch::{socket_error, wait_any, Filter};
use lossless_sys::if_nametoindex;
use lossless_sys::ring::{RingOptions, RingSocket, RxFrames};
use tracing::{info, warn};

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

/// The socket filter that implements the host's predicate for `f` (checked
/// against it in lossless-relay's `tests/filter.rs`).
fn socket_filter(f: HostFilter) -> Filter {
    match f {
        HostFilter::MacControl => Filter::MacControl,
        HostFilter::Srv6 => Filter::Srv6,
        HostFilter::Udp { port } => Filter::Udp { port },
        HostFilter::Mpls => Filter::Mpls,
    }
}

/// Records that the XDP path does not run, and why; logs it when that is
/// news.
pub fn xdp_off(show: &mut XdpShowSlot, why: &str) {
    if show.set_off(why) {
        info!(why, "relay: XDP path not running; AF_PACKET path only");
    }
}

/// Records that the XDP path runs in `mode`; `why`: what it leaves to the
/// packet sockets.
pub fn xdp_running(show: &mut XdpShowSlot, mode: lossless_sys::xdp::Mode, why: &str) {
    let mode = match mode {
        lossless_sys::xdp::Mode::Native => "native",
        lossless_sys::xdp::Mode::Generic => "generic",
    };
    info!(mode, "relay: XDP path attached");
    show.set_running(mode, why);
}

struct Shared {
    stop: AtomicBool,
    state: Mutex<Host>,
    started: std::time::Instant,
    datapath: Datapath,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Host> {
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

impl From<StartError> for lossless_node::node::RelayStartError {
    fn from(e: StartError) -> Self {
        match e {
            StartError::Config(e) => Self::Host(e),
            StartError::Spawn(e) => Self::Thread(e.to_string()),
        }
    }
}

impl RelayRuntime {
    /// Starts the data path for `section` (already validated by the
    /// configuration reader).
    pub fn start(section: RelaySection) -> Result<RelayRuntime, StartError> {
        let started = std::time::Instant::now();
        let host = Host::new(section.clone())?;
        let datapath = *host.datapath();
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            state: Mutex::new(host),
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
        self.shared.lock().show(self.shared.now())
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

/// One interface's socket and its bookkeeping in the thread.
struct Link {
    /// The host's side it serves.
    side: Port,
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
    /// The socket for the host's interface `link`.
    fn new(link: &HostLink, opts: RingOptions) -> Link {
        Link {
            side: link.side,
            name: link.interface.clone(),
            filter: socket_filter(link.filter),
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
        let opened =
            if_nametoindex(&self.name).and_then(|i| RingSocket::open(i, self.filter, self.opts));
        let mut host = shared.lock();
        match opened {
            Ok(s) => {
                info!(interface = %self.name, side = ?self.side, "relay port open");
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
                host.opened(self.side);
                self.socket = Some(s);
            }
            Err(e) => {
                if host.open_failed(self.side, &e) {
                    warn!(interface = %self.name, error = %e, "relay port not open; retrying every second");
                }
            }
        }
    }

    /// Closes the socket: the interface is served by an XDP program, which
    /// reads every frame the socket would (the port is open, through it).
    fn serve_in_xdp(&mut self, host: &mut Host) {
        if self.socket.take().is_some() {
            info!(interface = %self.name, "relay port served by the XDP program; packet socket closed");
        }
        host.opened(self.side);
    }

    /// Closes the socket after an error; it is reopened later.
    fn fail(&mut self, host: &mut Host, e: &io::Error) {
        warn!(interface = %self.name, error = %e, "relay port failed; reopening");
        self.socket = None;
        host.open_failed(self.side, e);
    }

    /// Takes up to `max` waiting frames and hands them to `f` (which hands
    /// them to the host, which counts them). Returns how many (0 when closed
    /// or nothing waits). `complete` finishes a checksum the kernel left
    /// partial.
    fn recv(
        &mut self,
        max: usize,
        complete: impl FnMut(&mut [u8]),
        f: impl FnOnce(&RxFrames<'_>),
    ) -> usize {
        let Some(s) = self.socket.as_mut() else {
            return 0;
        };
        let frames = s.recv_batch(max, complete);
        let n = frames.len();
        if n > 0 {
            f(&frames);
        }
        n
    }

    /// Sends the frames of `out` for this side, counting what went and what
    /// did not (all of them, when the socket is not open).
    fn send(&mut self, out: &TxBatch, shared: &Shared) {
        let side = self.side;
        let total = out.iter().filter(|t| t.port == side).count();
        if total == 0 {
            return;
        }
        let Some(s) = &mut self.socket else {
            shared.lock().count_sent(side, 0, total, None);
            return;
        };
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
        let mut host = shared.lock();
        match result {
            Ok(n) => host.count_sent(side, n, total - n, None),
            Err(e) => host.count_sent(side, 0, total, Some(e.to_string())),
        }
    }

    /// Every [`STATS_EVERY`]: adds the kernel's drop counter, and closes
    /// the socket if the kernel reported an error on it (the interface went
    /// away: `ENETDOWN`), to be reopened.
    fn read_stats(&mut self, host: &mut Host, now: std::time::Instant) {
        if now.saturating_duration_since(self.last_stats) < STATS_EVERY {
            return;
        }
        self.last_stats = now;
        let Some(s) = &self.socket else {
            return;
        };
        if let Ok(st) = s.stats() {
            host.count_socket_drops(self.side, st.drops);
        }
        if let Some(e) = socket_error(s) {
            self.fail(host, &e);
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

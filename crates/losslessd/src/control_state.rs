//! What the control socket's connections (and the metrics endpoint) share: the bounds'
//! bookkeeping ([`lossless_node::control_limits`], fed with the time), how to tell each
//! open connection to close to make room, and the spare descriptor kept for the moment
//! the process runs out of them.

use std::collections::HashMap;
use std::fs::File;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use lossless_dcbx::Instant;
use lossless_node::config::DaemonLimits;
use lossless_node::control_limits::{Admit, ConnId, Connections, ControlStats, Refusal};
use lossless_node::protocol::Response;
use tokio::sync::oneshot;
use tracing::debug;

/// The shared state, behind the control socket's tasks.
pub(crate) type Control = Arc<ControlState>;

pub(crate) struct ControlState {
    epoch: tokio::time::Instant,
    inner: Mutex<Inner>,
}

struct Inner {
    conns: Connections,
    /// Each open connection's notice channel: what it is told before it closes.
    evictors: HashMap<ConnId, oneshot::Sender<Response>>,
    /// A descriptor held back (`/dev/null`), freed when `accept` finds the process at
    /// its descriptor limit so that the connection waiting can still be taken.
    spare: Option<File>,
}

/// A connection admitted: its number, and where its eviction notice arrives.
pub(crate) struct Admitted {
    pub id: ConnId,
    pub evicted: oneshot::Receiver<Response>,
}

impl ControlState {
    pub(crate) fn new(limits: &DaemonLimits) -> Control {
        let timeout = Duration::from_millis(u64::from(limits.control_request_timeout_ms));
        Arc::new(ControlState {
            epoch: tokio::time::Instant::now(),
            inner: Mutex::new(Inner {
                conns: Connections::new(limits.control_max_connections as usize, timeout),
                evictors: HashMap::new(),
                spare: File::open("/dev/null").ok(),
            }),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> Instant {
        Instant::from_duration(self.epoch.elapsed())
    }

    /// How long a request line may take from its first byte.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.lock().conns.request_timeout()
    }

    /// A new connection: admitted (the longest idle one told to close if it must make
    /// room), or the refusal to answer it with.
    pub(crate) fn admit(&self) -> Result<Admitted, Response> {
        let now = self.now();
        let mut g = self.lock();
        match g.conns.admit(now) {
            Admit::Accept(id) => Ok(g.register(id)),
            Admit::Evict {
                id,
                evict,
                idle_for,
            } => {
                let notice = g.conns.eviction(Refusal::Limit, idle_for);
                g.notify(evict, notice);
                Ok(g.register(id))
            }
            Admit::Refuse => {
                debug!("control connection refused: every connection busy");
                Err(g.conns.refusal(Refusal::Busy))
            }
        }
    }

    /// Out of descriptors: tells the connection idle the longest to close. False when
    /// every connection is busy.
    pub(crate) fn make_room(&self) -> bool {
        let now = self.now();
        let mut g = self.lock();
        match g.conns.make_room(now) {
            Some((evict, idle_for)) => {
                let notice = g.conns.eviction(Refusal::FdLimit, idle_for);
                g.notify(evict, notice);
                true
            }
            None => false,
        }
    }

    /// A new connection refused at the descriptor limit: what it is told.
    pub(crate) fn refuse_at_fd_limit(&self) -> Response {
        debug!("control connection refused at the descriptor limit: every connection busy");
        let mut g = self.lock();
        g.conns.refused_at_fd_limit();
        g.conns.refusal(Refusal::FdLimit)
    }

    pub(crate) fn received(&self, id: ConnId) {
        let now = self.now();
        self.lock().conns.received(id, now);
    }

    pub(crate) fn busy(&self, id: ConnId) {
        let now = self.now();
        self.lock().conns.busy(id, now);
    }

    pub(crate) fn idle(&self, id: ConnId) {
        let now = self.now();
        self.lock().conns.idle(id, now);
    }

    /// `id`'s request line was too slow: counted; what it is told.
    pub(crate) fn timed_out(&self, id: ConnId) -> Response {
        let mut g = self.lock();
        g.conns.timed_out(id);
        g.evictors.remove(&id);
        g.conns.too_slow()
    }

    pub(crate) fn closed(&self, id: ConnId) {
        let mut g = self.lock();
        g.conns.closed(id);
        g.evictors.remove(&id);
    }

    pub(crate) fn stats(&self) -> ControlStats {
        self.lock().conns.stats()
    }

    /// Frees the spare descriptor; false when there was none.
    pub(crate) fn take_spare(&self) -> bool {
        self.lock().spare.take().is_some()
    }

    /// Takes a spare descriptor again if none is held (and one is free).
    pub(crate) fn refill_spare(&self) {
        let mut g = self.lock();
        if g.spare.is_none() {
            g.spare = File::open("/dev/null").ok();
        }
    }
}

impl Inner {
    fn register(&mut self, id: ConnId) -> Admitted {
        let (tx, evicted) = oneshot::channel();
        self.evictors.insert(id, tx);
        Admitted { id, evicted }
    }

    fn notify(&mut self, id: ConnId, notice: Response) {
        if let Some(e) = &notice.error {
            debug!(connection = id, "control connection closed: {}", e.message);
        }
        if let Some(tx) = self.evictors.remove(&id) {
            let _ = tx.send(notice);
        }
    }
}

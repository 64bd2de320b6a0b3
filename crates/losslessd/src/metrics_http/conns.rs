//! The metrics endpoint's connections: how many are open, which to close to make room,
//! and why each refused one was refused (`lossless_metrics_refused_total{reason}`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

/// Why a connection was refused or closed early, for
/// `lossless_metrics_refused_total{reason}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Closed to make room: `metrics_max_connections` were open and it waited the
    /// longest for its request.
    Limit,
    /// Every open connection was being answered: the new one got 503.
    Busy,
    /// Its Host header named neither the bound address nor `localhost`: 421.
    Host,
    /// No whole request head within [`super::HEAD_TIMEOUT`].
    Timeout,
    /// The TLS handshake failed (no or an unverified client certificate, a client
    /// speaking plain HTTP, no common version or suite).
    Tls,
    /// No or wrong basic authentication credentials: 401.
    Unauthorized,
    /// Over the web configuration's `rate_limit`: 429.
    RateLimited,
}

impl Refusal {
    pub const ALL: [Refusal; 7] = [
        Refusal::Limit,
        Refusal::Busy,
        Refusal::Host,
        Refusal::Timeout,
        Refusal::Tls,
        Refusal::Unauthorized,
        Refusal::RateLimited,
    ];

    fn label(self) -> &'static str {
        match self {
            Refusal::Limit => "limit",
            Refusal::Busy => "busy",
            Refusal::Host => "host",
            Refusal::Timeout => "timeout",
            Refusal::Tls => "tls",
            Refusal::Unauthorized => "unauthorized",
            Refusal::RateLimited => "rate_limited",
        }
    }
}

/// The endpoint's connections, shared by its tasks.
#[derive(Clone)]
pub struct Conns(Arc<Mutex<ConnsInner>>);

struct ConnsInner {
    max: usize,
    next: u64,
    /// Each open connection: since when it waits for its request (None: being
    /// answered), and how to tell it to close.
    open: HashMap<u64, (Option<tokio::time::Instant>, Option<oneshot::Sender<()>>)>,
    refused: [u64; Refusal::ALL.len()],
}

/// What `/metrics` shows of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnStats {
    pub open: usize,
    pub max: usize,
    pub refused: [u64; Refusal::ALL.len()],
}

/// One admitted connection; it leaves the count when dropped.
pub(super) struct Slot {
    pub(super) conns: Conns,
    id: u64,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.conns.lock().open.remove(&self.id);
    }
}

impl Conns {
    pub fn new(max: u32) -> Conns {
        Conns(Arc::new(Mutex::new(ConnsInner {
            max: (max as usize).max(1),
            next: 0,
            open: HashMap::new(),
            refused: [0; Refusal::ALL.len()],
        })))
    }

    fn lock(&self) -> MutexGuard<'_, ConnsInner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection: its slot and where it is told to close, or None when every
    /// open connection is being answered (the new one is refused, counted).
    pub(super) fn admit(&self) -> Option<(Slot, oneshot::Receiver<()>)> {
        let mut g = self.lock();
        if g.open.len() >= g.max {
            let oldest = g
                .open
                .iter()
                .filter_map(|(id, (since, _))| since.map(|s| (s, *id)))
                .min();
            let Some((_, id)) = oldest else {
                g.count(Refusal::Busy);
                return None;
            };
            if let Some((_, Some(tx))) = g.open.remove(&id) {
                let _ = tx.send(());
            }
            g.count(Refusal::Limit);
        }
        let id = g.next;
        g.next += 1;
        let (tx, rx) = oneshot::channel();
        g.open
            .insert(id, (Some(tokio::time::Instant::now()), Some(tx)));
        drop(g);
        Some((
            Slot {
                conns: self.clone(),
                id,
            },
            rx,
        ))
    }

    /// The connection's request is in: it is being answered, and is not closed to
    /// make room.
    pub(super) fn answering(&self, slot: &Slot) {
        if let Some(c) = self.lock().open.get_mut(&slot.id) {
            c.0 = None;
        }
    }

    pub(super) fn refused(&self, why: Refusal) {
        self.lock().count(why);
    }

    pub fn stats(&self) -> ConnStats {
        let g = self.lock();
        ConnStats {
            open: g.open.len(),
            max: g.max,
            refused: g.refused,
        }
    }
}

impl ConnsInner {
    fn count(&mut self, why: Refusal) {
        if let Some(n) = Refusal::ALL
            .iter()
            .position(|r| *r == why)
            .and_then(|i| self.refused.get_mut(i))
        {
            *n += 1;
        }
    }
}

/// The endpoint's own series, after the node's.
pub fn render(s: &ConnStats, out: &mut String) {
    let _ = writeln!(
        out,
        "# HELP lossless_metrics_connections Metrics endpoint connections open.\n\
         # TYPE lossless_metrics_connections gauge\n\
         lossless_metrics_connections {}\n\
         # HELP lossless_metrics_connections_max Metrics endpoint connections allowed at once ([daemon] metrics_max_connections).\n\
         # TYPE lossless_metrics_connections_max gauge\n\
         lossless_metrics_connections_max {}\n\
         # HELP lossless_metrics_refused_total Metrics endpoint connections refused or closed early, by reason (limit: closed to make room; busy: every connection being answered, 503; host: a Host header naming another host, 421; timeout: no request head in time; tls: the TLS handshake failed; unauthorized: no or wrong basic authentication, 401; rate_limited: over the web configuration's rate_limit, 429).\n\
         # TYPE lossless_metrics_refused_total counter",
        s.open, s.max
    );
    for (r, n) in Refusal::ALL.iter().zip(s.refused) {
        let _ = writeln!(
            out,
            "lossless_metrics_refused_total{{reason=\"{}\"}} {n}",
            r.label()
        );
    }
}

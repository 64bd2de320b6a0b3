//! The control socket's bounds, sans-IO: which connections are open, which of them may
//! be closed to make room, and what was refused and why. losslessd asks
//! [`Connections::admit`] for each new connection and reports what each connection does
//! (a request line started, answered, a follower streaming); time is a parameter.
//!
//! * At most `max` connections (`[daemon] control_max_connections`). A new one beyond
//!   that closes the connection idle the longest (nothing asked of the daemon, no
//!   events streamed; a half-sent request counts as idle since its last byte), which is
//!   told why; when every connection is busy (a request with the daemon, `events
//!   --follow`), the new one is answered `unavailable` and closed.
//! * At the process's descriptor limit the same choice frees a descriptor
//!   ([`Connections::make_room`]).
//! * A request line must arrive whole within `request_timeout` of its first byte.

use std::collections::BTreeMap;
use std::fmt::Write;

use lossless_dcbx::{Duration, Instant};

use crate::exposition::header;
use crate::protocol::{ErrorKind, Response};

/// A connection, as numbered by [`Connections`].
pub type ConnId = u64;

/// Why a connection was closed or refused by the bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Refusal {
    /// Closed, idle the longest, to make room under `control_max_connections`.
    Limit,
    /// New, refused: every connection was busy.
    Busy,
    /// Closed (idle the longest) or refused at the process's descriptor limit.
    FdLimit,
    /// Its request line did not arrive whole in time.
    Timeout,
}

impl Refusal {
    pub const ALL: [Refusal; 4] = [
        Refusal::Limit,
        Refusal::Busy,
        Refusal::FdLimit,
        Refusal::Timeout,
    ];

    /// The `reason` label of `lossless_control_refused_total`.
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Limit => "limit",
            Refusal::Busy => "busy",
            Refusal::FdLimit => "fd_limit",
            Refusal::Timeout => "timeout",
        }
    }
}

/// What to do with a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Serve it.
    Accept(ConnId),
    /// Serve it, after closing `evict` (idle for `idle_for`) with
    /// [`Connections::eviction`].
    Evict {
        id: ConnId,
        evict: ConnId,
        idle_for: Duration,
    },
    /// Answer [`Connections::refusal`] and close it.
    Refuse,
}

#[derive(Debug, Clone, Copy)]
struct Conn {
    /// The daemon is working for it (a request in flight) or it streams events.
    busy: bool,
    /// Its last byte in or answer out.
    active: Instant,
}

/// What the metrics show of the control socket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControlStats {
    pub connections: usize,
    pub max: usize,
    pub refused: BTreeMap<&'static str, u64>,
}

/// The open connections and the bounds.
#[derive(Debug, Clone)]
pub struct Connections {
    max: usize,
    request_timeout: Duration,
    open: BTreeMap<ConnId, Conn>,
    next: ConnId,
    refused: BTreeMap<Refusal, u64>,
}

impl Connections {
    pub fn new(max: usize, request_timeout: Duration) -> Connections {
        Connections {
            max: max.max(1),
            request_timeout,
            open: BTreeMap::new(),
            next: 0,
            refused: BTreeMap::new(),
        }
    }

    /// How long a request line may take from its first byte.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    pub fn len(&self) -> usize {
        self.open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// A new connection: served, served after the longest idle one is closed, or
    /// refused.
    pub fn admit(&mut self, now: Instant) -> Admit {
        if self.open.len() < self.max {
            return Admit::Accept(self.insert(now));
        }
        match self.longest_idle() {
            Some(evict) => {
                let idle_for = now - self.open[&evict].active;
                self.open.remove(&evict);
                self.count(Refusal::Limit);
                Admit::Evict {
                    id: self.insert(now),
                    evict,
                    idle_for,
                }
            }
            None => {
                self.count(Refusal::Busy);
                Admit::Refuse
            }
        }
    }

    /// The process is out of descriptors: the connection idle the longest, to be
    /// closed with [`Connections::eviction`] (None: every one is busy).
    pub fn make_room(&mut self, now: Instant) -> Option<(ConnId, Duration)> {
        let evict = self.longest_idle()?;
        let idle_for = now - self.open[&evict].active;
        self.open.remove(&evict);
        self.count(Refusal::FdLimit);
        Some((evict, idle_for))
    }

    /// A new connection refused at the descriptor limit, nothing to close for it.
    pub fn refused_at_fd_limit(&mut self) {
        self.count(Refusal::FdLimit);
    }

    /// Bytes arrived on `id` (a request line begun or going on).
    pub fn received(&mut self, id: ConnId, now: Instant) {
        if let Some(c) = self.open.get_mut(&id) {
            c.active = now;
        }
    }

    /// `id` has a request with the daemon, or streams events: not to be closed.
    pub fn busy(&mut self, id: ConnId, now: Instant) {
        if let Some(c) = self.open.get_mut(&id) {
            c.busy = true;
            c.active = now;
        }
    }

    /// `id` was answered and waits for its next request.
    pub fn idle(&mut self, id: ConnId, now: Instant) {
        if let Some(c) = self.open.get_mut(&id) {
            c.busy = false;
            c.active = now;
        }
    }

    /// `id`'s request line did not come whole in time; it is closed.
    pub fn timed_out(&mut self, id: ConnId) {
        if self.open.remove(&id).is_some() {
            self.count(Refusal::Timeout);
        }
    }

    /// `id` is gone (the client closed it, or it was closed for a reason counted).
    pub fn closed(&mut self, id: ConnId) {
        self.open.remove(&id);
    }

    pub fn stats(&self) -> ControlStats {
        ControlStats {
            connections: self.open.len(),
            max: self.max,
            refused: Refusal::ALL
                .iter()
                .map(|r| (r.label(), self.refused.get(r).copied().unwrap_or(0)))
                .collect(),
        }
    }

    /// What a connection closed to make room is told.
    pub fn eviction(&self, why: Refusal, idle_for: Duration) -> Response {
        let room = match why {
            Refusal::FdLimit => "the daemon is at its file descriptor limit".to_string(),
            _ => format!(
                "{} connections are open (control_max_connections)",
                self.max
            ),
        };
        Response::err(
            ErrorKind::Unavailable,
            format!(
                "connection closed to make room: {room} and this one was idle the longest \
                 ({:.1} s)",
                idle_for.as_secs_f64()
            ),
        )
    }

    /// What a refused new connection is told.
    pub fn refusal(&self, why: Refusal) -> Response {
        let what = match why {
            Refusal::FdLimit => "the daemon is at its file descriptor limit and every \
                                 connection is busy"
                .to_string(),
            _ => format!(
                "all {} connections (control_max_connections) are busy: requests with the \
                 daemon or events --follow",
                self.max
            ),
        };
        Response::err(ErrorKind::Unavailable, format!("{what}; try again later"))
    }

    /// What a connection whose request line was too slow is told.
    pub fn too_slow(&self) -> Response {
        Response::err(
            ErrorKind::BadRequest,
            format!(
                "request line not complete within {} ms of its first byte \
                 (control_request_timeout_ms): the connection is closed",
                self.request_timeout.as_millis()
            ),
        )
    }

    fn insert(&mut self, now: Instant) -> ConnId {
        self.next += 1;
        self.open.insert(
            self.next,
            Conn {
                busy: false,
                active: now,
            },
        );
        self.next
    }

    fn longest_idle(&self) -> Option<ConnId> {
        self.open
            .iter()
            .filter(|(_, c)| !c.busy)
            .min_by_key(|(id, c)| (c.active, **id))
            .map(|(id, _)| *id)
    }

    fn count(&mut self, why: Refusal) {
        *self.refused.entry(why).or_default() += 1;
    }
}

/// The control socket's series, appended to the daemon's `/metrics`.
pub fn render(stats: &ControlStats, out: &mut String) {
    header(
        out,
        "lossless_control_connections",
        "Control socket connections open.",
        "gauge",
    );
    let _ = writeln!(out, "lossless_control_connections {}", stats.connections);
    header(
        out,
        "lossless_control_connections_max",
        "Control socket connections allowed at once ([daemon] control_max_connections).",
        "gauge",
    );
    let _ = writeln!(out, "lossless_control_connections_max {}", stats.max);
    header(
        out,
        "lossless_control_refused_total",
        "Control connections closed or refused by the bounds: limit (idle the longest, closed \
         for a new one), busy (new, every connection busy), fd_limit (at the descriptor \
         limit), timeout (request line not complete in time).",
        "counter",
    );
    for (reason, n) in &stats.refused {
        let _ = writeln!(
            out,
            "lossless_control_refused_total{{reason=\"{reason}\"}} {n}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_duration(Duration::from_millis(ms))
    }

    #[test]
    fn the_longest_idle_makes_room_and_busy_ones_stay() {
        let mut c = Connections::new(3, Duration::from_secs(5));
        let ids: Vec<ConnId> = (0..3)
            .map(|i| match c.admit(t(i)) {
                Admit::Accept(id) => id,
                other => panic!("{other:?}"),
            })
            .collect();
        // The oldest is busy (a follower), the second received a byte late: the third
        // has been idle the longest.
        c.busy(ids[0], t(10));
        c.received(ids[1], t(20));
        match c.admit(t(30)) {
            Admit::Evict {
                evict, idle_for, ..
            } => {
                assert_eq!(evict, ids[2]);
                assert_eq!(idle_for, Duration::from_millis(28));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.len(), 3);
        // Everything busy: refused.
        let all: Vec<ConnId> = c.open.keys().copied().collect();
        for id in all {
            c.busy(id, t(40));
        }
        assert_eq!(c.admit(t(50)), Admit::Refuse);
        let s = c.stats();
        assert_eq!(s.connections, 3);
        assert_eq!(s.refused["limit"], 1);
        assert_eq!(s.refused["busy"], 1);
        assert_eq!(s.refused["fd_limit"], 0);
        // An answer makes one idle again.
        c.idle(ids[1], t(60));
        assert_eq!(
            c.make_room(t(70)),
            Some((ids[1], Duration::from_millis(10)))
        );
        assert_eq!(c.make_room(t(70)), None);
        assert_eq!(c.stats().refused["fd_limit"], 1);
    }

    #[test]
    fn the_metrics_text() {
        let mut c = Connections::new(2, Duration::from_millis(250));
        let Admit::Accept(id) = c.admit(t(0)) else {
            panic!()
        };
        c.timed_out(id);
        c.admit(t(1));
        let mut out = String::new();
        render(&c.stats(), &mut out);
        assert!(out.contains("\nlossless_control_connections 1\n"), "{out}");
        assert!(
            out.contains("\nlossless_control_connections_max 2\n"),
            "{out}"
        );
        assert!(
            out.contains("lossless_control_refused_total{reason=\"timeout\"} 1\n"),
            "{out}"
        );
        assert_eq!(
            c.too_slow().error.map(|e| e.message).unwrap_or_default(),
            "request line not complete within 250 ms of its first byte \
             (control_request_timeout_ms): the connection is closed"
        );
    }
}

//! The metrics endpoint: a minimal HTTP/1.x responder for `GET /metrics` on a loopback
//! address, each scrape a message for the core task.
//!
//! What a local user can make it cost is bounded apart from the control socket:
//!
//! * At most `[daemon] metrics_max_connections` connections are open at once. A new
//!   one beyond them closes the connection that has waited the longest for its request
//!   (a scraper sends its request at once: one still waiting is idle); when every open
//!   connection is being answered, the new one is answered 503 and closed.
//! * A request head must arrive within [`HEAD_TIMEOUT`] and fit [`HEAD_MAX`]; it ends
//!   at its first empty line, CRLF or bare LF (RFC 9112 §2.2 lets a server take LF).
//! * The Host header, when there is one, must name the bound address or `localhost`
//!   (a DNS rebinding page in a browser sends its own name): else 421.
//!
//! At the descriptor limit it takes the control socket's spare descriptor (or has an
//! idle control connection closed), so a scrape still gets through.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::control::{out_of_descriptors, CoreMsg};
use crate::control_state::Control;

/// How long a request head may take from the connection's start.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request head read; the rest is not read.
pub const HEAD_MAX: usize = 8192;

/// Binds the metrics endpoint; only loopback addresses are accepted (the
/// config checks too: metrics carry topology and are not authenticated).
pub async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("metrics address {addr} is not a loopback address"),
        ));
    }
    TcpListener::bind(addr).await
}

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
    /// No whole request head within [`HEAD_TIMEOUT`].
    Timeout,
}

impl Refusal {
    const ALL: [Refusal; 4] = [
        Refusal::Limit,
        Refusal::Busy,
        Refusal::Host,
        Refusal::Timeout,
    ];

    fn label(self) -> &'static str {
        match self {
            Refusal::Limit => "limit",
            Refusal::Busy => "busy",
            Refusal::Host => "host",
            Refusal::Timeout => "timeout",
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
    refused: [u64; 4],
}

/// What `/metrics` shows of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnStats {
    pub open: usize,
    pub max: usize,
    pub refused: [u64; 4],
}

/// One admitted connection; it leaves the count when dropped.
struct Slot {
    conns: Conns,
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
            refused: [0; 4],
        })))
    }

    fn lock(&self) -> MutexGuard<'_, ConnsInner> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new connection: its slot and where it is told to close, or None when every
    /// open connection is being answered (the new one is refused, counted).
    fn admit(&self) -> Option<(Slot, oneshot::Receiver<()>)> {
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
    fn answering(&self, slot: &Slot) {
        if let Some(c) = self.lock().open.get_mut(&slot.id) {
            c.0 = None;
        }
    }

    fn refused(&self, why: Refusal) {
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
         # HELP lossless_metrics_refused_total Metrics endpoint connections refused or closed early, by reason (limit: closed to make room; busy: every connection being answered, 503; host: a Host header naming another host, 421; timeout: no request head in time).\n\
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

/// Serves scrapes for ever.
pub(crate) async fn serve(
    listener: TcpListener,
    core: mpsc::Sender<CoreMsg>,
    control: Control,
    conns: Conns,
    bound: SocketAddr,
) {
    loop {
        control.refill_spare();
        match listener.accept().await {
            Ok((stream, _)) => admit(stream, &core, &conns, bound),
            Err(e) if out_of_descriptors(&e) => {
                if control.take_spare() {
                    if let Ok((stream, _)) = listener.accept().await {
                        // Served here, so the descriptor is free again before the
                        // spare is taken back.
                        if let Some((slot, evicted)) = conns.admit() {
                            scrape(stream, core.clone(), slot, evicted, bound).await;
                        } else {
                            busy(&stream, &conns);
                        }
                    }
                } else if !control.make_room() {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

fn admit(stream: TcpStream, core: &mpsc::Sender<CoreMsg>, conns: &Conns, bound: SocketAddr) {
    match conns.admit() {
        Some((slot, evicted)) => {
            tokio::spawn(scrape(stream, core.clone(), slot, evicted, bound));
        }
        None => busy(&stream, conns),
    }
}

/// Every connection is being answered: 503, written without waiting (a new socket's
/// buffer takes it), and closed.
fn busy(stream: &TcpStream, conns: &Conns) {
    let max = conns.stats().max;
    let _ = stream.try_write(
        response(
            "503 Service Unavailable",
            &format!(
                "all {max} metrics connections (metrics_max_connections) are being \
                 answered; try again\n"
            ),
        )
        .as_bytes(),
    );
}

fn response(status: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Whether the request head in `buf` is complete: an empty line, after CRLF or a bare
/// LF.
fn head_complete(buf: &[u8]) -> bool {
    buf.windows(2).any(|w| w == b"\n\n") || buf.windows(3).any(|w| w == b"\n\r\n")
}

/// The request head's lines, without their CR.
fn lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|b| *b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// The Host header's value, if the head has one.
fn host_header(head: &[u8]) -> Option<String> {
    lines(head)
        .skip(1)
        .take_while(|l| !l.is_empty())
        .find_map(|l| {
            let l = String::from_utf8_lossy(l);
            let (name, value) = l.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("host")
                .then(|| value.trim().to_string())
        })
}

/// Whether a request with this Host header may be answered: none (HTTP/1.0), or one
/// naming the bound address or `localhost`, with any port. A page that rebinds its
/// own name to 127.0.0.1 reaches the endpoint with its name in Host: refused.
pub fn host_allowed(host: Option<&str>, bound: SocketAddr) -> bool {
    let Some(host) = host else {
        return true;
    };
    let host = host.trim();
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((v6, port)) if port.is_empty() || port.starts_with(':') => v6,
            _ => return false,
        }
    } else {
        match host.rsplit_once(':') {
            Some((name, _port)) => name,
            None => host,
        }
    };
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.eq_ignore_ascii_case("localhost") {
        return true;
    }
    name.parse::<IpAddr>().is_ok_and(|ip| ip == bound.ip())
}

/// One scrape: the request head, then the answer; closed at once if another
/// connection needs its place while it waits for the head.
async fn scrape(
    mut stream: TcpStream,
    core: mpsc::Sender<CoreMsg>,
    slot: Slot,
    evicted: oneshot::Receiver<()>,
    bound: SocketAddr,
) {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let read = async {
        while !head_complete(&head) && head.len() < HEAD_MAX {
            let n = stream.read(&mut buf).await?;
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        io::Result::Ok(())
    };
    tokio::select! {
        r = tokio::time::timeout(HEAD_TIMEOUT, read) => {
            if r.is_err() {
                slot.conns.refused(Refusal::Timeout);
                return;
            }
        }
        // Closed to make room (counted by the one that took its place).
        _ = evicted => return,
    }
    slot.conns.answering(&slot);
    let first = lines(&head).next().unwrap_or_default();
    let first = String::from_utf8_lossy(first);
    let mut parts = first.split_whitespace();
    let (method, path) = (parts.next(), parts.next());
    let host = host_header(&head);
    let resp = if !host_allowed(host.as_deref(), bound) {
        slot.conns.refused(Refusal::Host);
        response(
            "421 Misdirected Request",
            &format!(
                "Host {:?} is not this endpoint: ask for {bound} or localhost\n",
                host.unwrap_or_default()
            ),
        )
    } else if method == Some("GET") && matches!(path, Some("/metrics") | Some("/metrics/")) {
        let (tx, rx) = oneshot::channel();
        if core.send(CoreMsg::Metrics { reply: tx }).await.is_err() {
            return;
        }
        match rx.await {
            Ok(text) => response("200 OK", &text),
            Err(_) => return,
        }
    } else {
        response("404 Not Found", "only GET /metrics is served\n")
    };
    let _ = tokio::time::timeout(HEAD_TIMEOUT, async {
        let _ = stream.write_all(resp.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
    drop(slot);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    #[test]
    fn a_head_ends_at_an_empty_line_after_crlf_or_a_bare_lf() {
        assert!(head_complete(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(head_complete(b"GET /metrics HTTP/1.1\nHost: x\n\n"));
        assert!(head_complete(b"GET /metrics HTTP/1.0\n\n"));
        assert!(!head_complete(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"));
        assert_eq!(
            host_header(b"GET / HTTP/1.1\nhOsT:  localhost:9717 \n\n").as_deref(),
            Some("localhost:9717")
        );
    }

    #[test]
    fn only_the_bound_address_and_localhost_are_hosts_of_the_endpoint() {
        let v4 = at("127.0.0.1:9717");
        let v6 = at("[::1]:9717");
        for ok in [
            "127.0.0.1:9717",
            "127.0.0.1",
            "localhost",
            "LOCALHOST:80",
            "localhost.",
        ] {
            assert!(host_allowed(Some(ok), v4), "{ok}");
        }
        assert!(host_allowed(None, v4));
        for bad in [
            "evil.example:9717",
            "127.0.0.2:9717",
            "[::1]:9717",
            "localhost.evil.example",
            "",
        ] {
            assert!(!host_allowed(Some(bad), v4), "{bad}");
        }
        assert!(host_allowed(Some("[::1]:9717"), v6));
        assert!(host_allowed(Some("[::1]"), v6));
        assert!(!host_allowed(Some("[::1"), v6));
        assert!(!host_allowed(Some("127.0.0.1:9717"), v6));
    }
}

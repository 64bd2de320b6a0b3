//! The metrics endpoint: a minimal HTTP/1.x responder for `GET /metrics`, each scrape a
//! message for the core task. On a loopback address as is; on any other only behind
//! a web configuration ([`crate::web_config`]: TLS, client certificates, basic
//! authentication), so a fleet's central Prometheus can scrape it.
//!
//! What a client can make it cost is bounded apart from the control socket:
//!
//! * At most `[daemon] metrics_max_connections` connections are open at once. A new
//!   one beyond them closes the connection that has waited the longest for its request
//!   (a scraper sends its request at once: one still waiting is idle); when every open
//!   connection is being answered, the new one is answered 503 and closed.
//! * The TLS handshake and the request head must be done within [`HEAD_TIMEOUT`] of
//!   the connection's start and the head fit [`HEAD_MAX`]; it ends at its first empty
//!   line, CRLF or bare LF (RFC 9112 §2.2 lets a server take LF).
//! * Without a web configuration that protects it, the Host header, when there is one,
//!   must name the bound address or `localhost` (a DNS rebinding page in a browser
//!   sends its own name): else 421. Behind TLS or a password a rebinding page gets
//!   nowhere, and a fleet's Prometheus names each host its own way: any Host is taken.
//! * The web configuration's `rate_limit` answers 429 past it, before the password is
//!   checked; bcrypt runs off the runtime's thread, two at a time.
//!
//! At the descriptor limit it takes the control socket's spare descriptor (or has an
//! idle control connection closed), so a scrape still gets through.

mod conns;
mod request;
mod web;

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::control::{out_of_descriptors, CoreMsg};
use crate::control_state::Control;
use crate::web_config::auth::Verdict;
use crate::web_config::WebConfig;

use conns::Slot;
pub use conns::{render, ConnStats, Conns, Refusal};
use request::{head_complete, response};
pub use request::{host_allowed, Head};
pub use web::{may_serve, Web, RETRY_REFUSED};

/// How long the TLS handshake and the request head may take from the connection's
/// start.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest request head read; the rest is not read.
pub const HEAD_MAX: usize = 8192;

/// Binds the metrics endpoint. A non-loopback address only with a web configuration
/// that protects it (the configuration's rule checked it already; this is the last
/// word, so a mistake upstream cannot serve metrics in clear to the network).
pub async fn bind(addr: SocketAddr, web: Option<&Web>) -> io::Result<TcpListener> {
    if let Err(why) = web.map_or_else(
        || lossless_node::config::check_metrics_exposure(addr, false).map_err(|e| e.to_string()),
        |w| may_serve(&w.current(), addr),
    ) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    TcpListener::bind(addr).await
}

/// What every connection shares.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub core: mpsc::Sender<CoreMsg>,
    pub conns: Conns,
    pub bound: SocketAddr,
    pub web: Option<Web>,
}

/// Serves scrapes for ever.
pub(crate) async fn serve(listener: TcpListener, control: Control, ep: Endpoint) {
    loop {
        control.refill_spare();
        match listener.accept().await {
            Ok((stream, _)) => admit(stream, &ep),
            Err(e) if out_of_descriptors(&e) => {
                if control.take_spare() {
                    if let Ok((stream, _)) = listener.accept().await {
                        // Served here, so the descriptor is free again before the
                        // spare is taken back.
                        if let Some((slot, evicted)) = ep.conns.admit() {
                            connection(stream, ep.clone(), slot, evicted).await;
                        } else {
                            busy(&stream, &ep);
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

fn admit(stream: TcpStream, ep: &Endpoint) {
    match ep.conns.admit() {
        Some((slot, evicted)) => {
            tokio::spawn(connection(stream, ep.clone(), slot, evicted));
        }
        None => busy(&stream, ep),
    }
}

/// Every connection is being answered: 503, written without waiting (a new socket's
/// buffer takes it), and closed. Behind TLS it is closed without a word (plain text
/// would not be read as an answer).
fn busy(stream: &TcpStream, ep: &Endpoint) {
    let max = ep.conns.stats().max;
    let web = ep.web.as_ref().map(Web::current);
    if web.as_ref().is_some_and(|w| w.tls.is_some()) {
        return;
    }
    let headers = web.as_ref().map_or(&[][..], |w| &w.spec.headers[..]);
    let _ = stream.try_write(
        response(
            "503 Service Unavailable",
            headers,
            &[],
            &format!(
                "all {max} metrics connections (metrics_max_connections) are being \
                 answered; try again\n"
            ),
        )
        .as_bytes(),
    );
}

/// One connection: the TLS handshake when the web configuration asks for TLS, then
/// one scrape; closed at once if another connection needs its place while it waits
/// for the head.
async fn connection(
    stream: TcpStream,
    ep: Endpoint,
    slot: Slot,
    mut evicted: oneshot::Receiver<()>,
) {
    let web = ep.web.as_ref().map(Web::current);
    let deadline = tokio::time::Instant::now() + HEAD_TIMEOUT;
    match web.as_ref().and_then(|w| w.tls.clone()) {
        Some(tls) => {
            // A plain HTTP request to the TLS port gets a word, as Go's servers give
            // one, not a TLS alert a client prints as garbage.
            let mut first = [0u8; 1];
            let peeked = tokio::time::timeout_at(deadline, stream.peek(&mut first)).await;
            if let Ok(Ok(1)) = peeked {
                if first[0].is_ascii_uppercase() {
                    slot.conns.refused(Refusal::Tls);
                    let _ = stream.try_write(
                        response(
                            "400 Bad Request",
                            &[],
                            &[],
                            "Client sent an HTTP request to an HTTPS server.\n",
                        )
                        .as_bytes(),
                    );
                    return;
                }
            }
            let accept = tokio_rustls::TlsAcceptor::from(tls).accept(stream);
            let tls_stream = tokio::select! {
                r = tokio::time::timeout_at(deadline, accept) => match r {
                    Ok(Ok(s)) => s,
                    Ok(Err(_)) => {
                        slot.conns.refused(Refusal::Tls);
                        return;
                    }
                    Err(_) => {
                        slot.conns.refused(Refusal::Timeout);
                        return;
                    }
                },
                _ = &mut evicted => return,
            };
            // Still closed to make room while it waits for its request head.
            scrape(tls_stream, &ep, web.as_deref(), slot, evicted, deadline).await;
        }
        None => scrape(stream, &ep, web.as_deref(), slot, evicted, deadline).await,
    }
}

/// The request head, then the answer.
async fn scrape<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    ep: &Endpoint,
    web: Option<&WebConfig>,
    slot: Slot,
    evicted: oneshot::Receiver<()>,
    deadline: tokio::time::Instant,
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
        r = tokio::time::timeout_at(deadline, read) => {
            if r.is_err() {
                slot.conns.refused(Refusal::Timeout);
                return;
            }
        }
        // Closed to make room (counted by the one that took its place).
        _ = evicted => return,
    }
    slot.conns.answering(&slot);
    let head = Head::parse(&head);
    let headers = web.map_or(&[][..], |w| &w.spec.headers[..]);
    let protected = web.is_some_and(WebConfig::protects);
    let resp = if !protected && !host_allowed(head.host.as_deref(), ep.bound) {
        slot.conns.refused(Refusal::Host);
        Some(response(
            "421 Misdirected Request",
            headers,
            &[],
            &format!(
                "Host {:?} is not this endpoint: ask for {} or localhost\n",
                head.host.clone().unwrap_or_default(),
                ep.bound
            ),
        ))
    } else if !ep.web.as_ref().is_none_or(Web::admit_request) {
        slot.conns.refused(Refusal::RateLimited);
        Some(response(
            "429 Too Many Requests",
            headers,
            &[],
            "Too Many Requests\n",
        ))
    } else if let Some(users) = web.and_then(|w| w.auth.as_ref()) {
        match users.check(head.authorization.as_deref()).await {
            Verdict::Allowed => answer(&head, ep, headers).await,
            Verdict::Missing | Verdict::Denied => {
                slot.conns.refused(Refusal::Unauthorized);
                Some(response(
                    "401 Unauthorized",
                    headers,
                    &["WWW-Authenticate: Basic realm=\"lossless\", charset=\"UTF-8\""],
                    "Unauthorized\n",
                ))
            }
        }
    } else {
        answer(&head, ep, headers).await
    };
    let Some(resp) = resp else {
        return;
    };
    let _ = tokio::time::timeout(HEAD_TIMEOUT, async {
        let _ = stream.write_all(resp.as_bytes()).await;
        let _ = stream.shutdown().await;
    })
    .await;
    drop(slot);
}

/// The answer to an admitted request: the metrics, or 404. None when the core is gone.
async fn answer(head: &Head, ep: &Endpoint, headers: &[(String, String)]) -> Option<String> {
    if !head.is_scrape() {
        return Some(response(
            "404 Not Found",
            headers,
            &[],
            "only GET /metrics is served\n",
        ));
    }
    let (tx, rx) = oneshot::channel();
    ep.core.send(CoreMsg::Metrics { reply: tx }).await.ok()?;
    let text = rx.await.ok()?;
    Some(response("200 OK", headers, &[], &text))
}

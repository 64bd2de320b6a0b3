//! The control socket (JSON lines, see [`lossless_node::protocol`], framed by
//! [`lossless_node::framing`]) and the metrics endpoint: both turn connections into
//! messages for the core task.

use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener, UnixStream};
use tokio::sync::{broadcast, mpsc, oneshot};
use tracing::{debug, warn};

use lossless_node::framing::{Framed, LineFramer};
use lossless_node::protocol::{ErrorKind, Request, Response};

/// The answer to a connection's request, and for `events --follow` the stream.
pub type ReplySender = oneshot::Sender<(Response, Option<broadcast::Receiver<Arc<str>>>)>;

/// A request waiting for the node's answer.
pub struct Reply {
    pub tx: ReplySender,
    /// `events --follow`: stream events after the answer.
    pub follow: bool,
}

/// What a connection asks of the core task.
pub enum CoreMsg {
    Control { req: Request, reply: ReplySender },
    Metrics { reply: oneshot::Sender<String> },
}

/// How much of a connection is read at once (a line is framed from as many reads as
/// it takes, up to `lossless_node::framing::MAX_LINE`).
const READ_CHUNK: usize = 8 * 1024;

/// Binds the control socket: refuses to take over a socket another daemon
/// answers on, replaces a stale one, and restricts access to root (0600) or
/// root and `group` (0660).
pub fn bind(path: &Path, group: Option<&str>) -> io::Result<UnixListener> {
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!(
                    "{} answers: another losslessd runs there (use --socket)",
                    path.display()
                ),
            ));
        }
        std::fs::remove_file(path)?;
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let listener = UnixListener::bind(path)?;
    let mode = match group {
        None => 0o600,
        Some(name) => {
            let g = nix::unistd::Group::from_name(name)
                .map_err(io::Error::from)?
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("socket_group {name:?}: no such group"),
                    )
                })?;
            std::os::unix::fs::chown(path, None, Some(g.gid.as_raw())).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "socket_group {name:?}: giving the socket to the group failed ({e}): \
                         socket_group needs CAP_CHOWN and the @chown system calls (under \
                         systemd, the drop-in in docs/daemon.md, \"socket_group\")"
                    ),
                )
            })?;
            0o660
        }
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(listener)
}

pub async fn serve(listener: UnixListener, core: mpsc::Sender<CoreMsg>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let core = core.clone();
                tokio::spawn(async move {
                    if let Err(e) = connection(stream, core).await {
                        debug!(error = %e, "control connection ended");
                    }
                });
            }
            Err(e) => {
                warn!(error = %e, "control socket accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// One client: its bytes through [`LineFramer`], each line answered in turn.
async fn connection(stream: UnixStream, core: mpsc::Sender<CoreMsg>) -> io::Result<()> {
    let (mut r, mut w) = stream.into_split();
    let mut framer = LineFramer::new();
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        while let Some(item) = framer.next_line() {
            match answer(item, &mut w, &core).await? {
                Next::Read => {}
                Next::Close => return Ok(()),
                Next::Discard => return discard(r, w).await,
            }
        }
        let n = r.read(&mut buf).await?;
        if n == 0 {
            if let Some(item) = framer.finish() {
                answer(item, &mut w, &core).await?;
            }
            return Ok(());
        }
        framer.push(&buf[..n]);
    }
}

/// After a line: read the next one, or close the connection.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    Read,
    Close,
    /// Close once the client has read the answer: see [`discard`].
    Discard,
}

/// How long a connection whose line was too long is drained before it is closed.
const DISCARD_FOR: Duration = Duration::from_secs(1);

/// Ends our side after an overlong line's answer, and drops what the client still
/// sends for at most [`DISCARD_FOR`]: closing a socket with unread input resets it, and
/// the client would lose the answer.
async fn discard(
    mut r: tokio::net::unix::OwnedReadHalf,
    mut w: tokio::net::unix::OwnedWriteHalf,
) -> io::Result<()> {
    w.shutdown().await?;
    let mut buf = vec![0u8; READ_CHUNK];
    let drain = async {
        while r.read(&mut buf).await? > 0 {}
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(DISCARD_FOR, drain).await;
    Ok(())
}

/// Answers one framed line: a request goes to the core (and `events --follow` streams
/// until the client or the daemon goes), a refusal is written back.
async fn answer(
    item: Framed,
    w: &mut tokio::net::unix::OwnedWriteHalf,
    core: &mpsc::Sender<CoreMsg>,
) -> io::Result<Next> {
    let req = match item {
        Framed::Request(req) => req,
        Framed::Refused(resp) => {
            write(w, &resp).await?;
            return Ok(Next::Read);
        }
        Framed::TooLong(resp) => {
            write(w, &resp).await?;
            return Ok(Next::Discard);
        }
    };
    let (tx, rx) = oneshot::channel();
    if core
        .send(CoreMsg::Control { req, reply: tx })
        .await
        .is_err()
    {
        let resp = Response::err(ErrorKind::Unavailable, "daemon is stopping");
        write(w, &resp).await?;
        return Ok(Next::Close);
    }
    let Ok((resp, sub)) = rx.await else {
        let resp = Response::err(ErrorKind::Unavailable, "daemon is stopping");
        write(w, &resp).await?;
        return Ok(Next::Close);
    };
    write(w, &resp).await?;
    let Some(mut sub) = sub else {
        return Ok(Next::Read);
    };
    loop {
        match sub.recv().await {
            Ok(line) => {
                w.write_all(line.as_bytes()).await?;
                w.write_all(b"\n").await?;
            }
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                let line = format!("{{\"event\":\"lagged\",\"missed\":{missed}}}\n");
                w.write_all(line.as_bytes()).await?;
            }
            Err(broadcast::error::RecvError::Closed) => return Ok(Next::Close),
        }
    }
}

async fn write(w: &mut tokio::net::unix::OwnedWriteHalf, resp: &Response) -> io::Result<()> {
    let mut line = serde_json::to_string(resp).map_err(io::Error::other)?;
    line.push('\n');
    w.write_all(line.as_bytes()).await
}

/// Binds the metrics endpoint; only loopback addresses are accepted (the
/// config checks too: metrics carry topology and are not authenticated).
pub async fn bind_metrics(addr: SocketAddr) -> io::Result<TcpListener> {
    if !addr.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("metrics address {addr} is not a loopback address"),
        ));
    }
    TcpListener::bind(addr).await
}

/// A minimal HTTP/1.x responder: `GET /metrics` and nothing else.
pub async fn serve_metrics(listener: TcpListener, core: mpsc::Sender<CoreMsg>) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let core = core.clone();
        tokio::spawn(async move {
            let mut head = Vec::with_capacity(512);
            let mut buf = [0u8; 1024];
            let read = async {
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 8192 {
                    let n = stream.read(&mut buf).await?;
                    if n == 0 {
                        break;
                    }
                    head.extend_from_slice(&buf[..n]);
                }
                io::Result::Ok(())
            };
            if tokio::time::timeout(Duration::from_secs(5), read)
                .await
                .is_err()
            {
                return;
            }
            let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
            let first = String::from_utf8_lossy(first);
            let mut parts = first.split_whitespace();
            let (method, path) = (parts.next(), parts.next());
            let (status, body) =
                if method == Some("GET") && matches!(path, Some("/metrics") | Some("/metrics/")) {
                    let (tx, rx) = oneshot::channel();
                    if core.send(CoreMsg::Metrics { reply: tx }).await.is_err() {
                        return;
                    }
                    match rx.await {
                        Ok(text) => ("200 OK", text),
                        Err(_) => return,
                    }
                } else {
                    ("404 Not Found", "only GET /metrics is served\n".to_string())
                };
            let resp = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(resp.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}

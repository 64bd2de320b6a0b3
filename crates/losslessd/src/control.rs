//! The control socket (JSON lines, see [`lossless_node::protocol`]) and the metrics
//! endpoint: both turn connections into messages for the core task.

use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixListener, UnixStream};
use tokio::sync::{broadcast, mpsc, oneshot};
use tracing::{debug, warn};

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

/// Longest request line accepted.
const MAX_LINE: u64 = 64 * 1024;

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

async fn connection(stream: UnixStream, core: mpsc::Sender<CoreMsg>) -> io::Result<()> {
    let (r, mut w) = stream.into_split();
    let mut r = BufReader::new(r);
    loop {
        let mut line = String::new();
        let n = (&mut r).take(MAX_LINE).read_line(&mut line).await?;
        if n == 0 {
            return Ok(());
        }
        if !line.ends_with('\n') && n as u64 == MAX_LINE {
            write(
                &mut w,
                &Response::err(ErrorKind::BadRequest, "request line longer than 64 KiB"),
            )
            .await?;
            return Ok(());
        }
        let req: Request = match serde_json::from_str(line.trim_end()) {
            Ok(r) => r,
            Err(e) => {
                let msg = format!("request is not a valid command: {e} (see docs/daemon.md)");
                write(&mut w, &Response::err(ErrorKind::BadRequest, msg)).await?;
                continue;
            }
        };
        let (tx, rx) = oneshot::channel();
        if core
            .send(CoreMsg::Control { req, reply: tx })
            .await
            .is_err()
        {
            let resp = Response::err(ErrorKind::Unavailable, "daemon is stopping");
            return write(&mut w, &resp).await;
        }
        let Ok((resp, sub)) = rx.await else {
            let resp = Response::err(ErrorKind::Unavailable, "daemon is stopping");
            return write(&mut w, &resp).await;
        };
        write(&mut w, &resp).await?;
        if let Some(mut sub) = sub {
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
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                }
            }
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

//! The control socket (JSON lines, see [`lossless_node::protocol`], framed by
//! [`lossless_node::framing`]), bounded ([`lossless_node::control_limits`]): at most
//! `control_max_connections` connections (the longest idle one makes room, told why;
//! `unavailable` when all are busy), a request line whole within
//! `control_request_timeout_ms` of its first byte, an answer written within the same
//! time, a follower closed as soon as its client goes, and at the descriptor limit a
//! spare descriptor takes the waiting connection. Each request becomes a message for
//! the core task.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{broadcast, mpsc, oneshot};
use tracing::{debug, warn};

use lossless_node::framing::{Framed, LineFramer};
use lossless_node::protocol::{ErrorKind, Request, Response};

use crate::control_state::{Admitted, Control};

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
/// it takes, up to `lossless_node::framing::MAX_LINE`). A buffer of this size exists
/// only during a read: an idle connection holds none.
const READ_CHUNK: usize = 8 * 1024;

/// How long a refused connection's answer may take to write.
const REFUSAL_WRITE: Duration = Duration::from_millis(100);

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
                         systemd, the drop-in in docs/operations.md, \"socket_group\")"
                    ),
                )
            })?;
            0o660
        }
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(listener)
}

/// Accepts connections for ever, within the bounds.
pub(crate) async fn serve(listener: UnixListener, core: mpsc::Sender<CoreMsg>, control: Control) {
    loop {
        control.refill_spare();
        match listener.accept().await {
            Ok((stream, _)) => {
                start(stream, &core, &control);
                // Let the new connection read what it sent before the next accept: a
                // client whose request waits unread looks idle, and a flood of new
                // connections would close it first.
                tokio::task::yield_now().await;
            }
            Err(e) if out_of_descriptors(&e) => at_fd_limit(&listener, &core, &control).await,
            Err(e) => {
                warn!(error = %e, "control socket accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// EMFILE or ENFILE: no descriptor for the connection waiting.
pub(crate) fn out_of_descriptors(e: &io::Error) -> bool {
    use nix::errno::Errno;
    e.raw_os_error()
        .is_some_and(|code| code == Errno::EMFILE as i32 || code == Errno::ENFILE as i32)
}

/// The process has no descriptor for the connection waiting: the spare takes it and
/// the connection idle the longest is closed for it (or, every one busy, the new one is
/// told so and closed). Without a spare (not yet taken back), an idle connection is
/// closed first and the accept tried again.
async fn at_fd_limit(listener: &UnixListener, core: &mpsc::Sender<CoreMsg>, control: &Control) {
    if control.take_spare() {
        match listener.accept().await {
            Ok((stream, _)) => {
                if control.make_room() {
                    start(stream, core, control);
                } else {
                    refuse(stream, control.refuse_at_fd_limit()).await;
                }
            }
            Err(e) => debug!(error = %e, "control socket accept at the descriptor limit failed"),
        }
    } else if !control.make_room() {
        // Every connection busy and no descriptor: wait for one to end.
        tokio::time::sleep(Duration::from_millis(10)).await;
        return;
    }
    // Let the connection told to close run, and free its descriptor for the spare.
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
}

/// Admits a new connection and runs it, or refuses it.
fn start(stream: UnixStream, core: &mpsc::Sender<CoreMsg>, control: &Control) {
    match control.admit() {
        Ok(admitted) => {
            let (core, control) = (core.clone(), control.clone());
            tokio::spawn(async move {
                let id = admitted.id;
                if let Err(e) = connection(admitted, stream, &core, &control).await {
                    debug!(error = %e, "control connection ended");
                }
                control.closed(id);
            });
        }
        Err(refusal) => {
            tokio::spawn(refuse(stream, refusal));
        }
    }
}

/// Tells a refused connection why, briefly, and closes it.
async fn refuse(mut stream: UnixStream, resp: Response) {
    let _ = tokio::time::timeout(REFUSAL_WRITE, write_to(&mut stream, &resp)).await;
}

/// One client: its bytes through [`LineFramer`], each line answered in turn, until it
/// closes, is told to make room, or is too slow.
async fn connection(
    admitted: Admitted,
    stream: UnixStream,
    core: &mpsc::Sender<CoreMsg>,
    control: &Control,
) -> io::Result<()> {
    let Admitted { id, mut evicted } = admitted;
    let timeout = control.request_timeout();
    let (mut r, mut w) = stream.into_split();
    let mut framer = LineFramer::new();
    // When the line not yet whole began.
    let mut began: Option<tokio::time::Instant> = None;
    loop {
        while let Some(item) = framer.next_line() {
            control.busy(id);
            let next = answer(item, &mut w, core, timeout).await?;
            control.idle(id);
            match next {
                Next::Read => {}
                Next::Close => return Ok(()),
                Next::Follow(sub) => {
                    control.busy(id);
                    return follow(&mut r, &mut w, sub, timeout).await;
                }
            }
        }
        if framer.buffered() == 0 {
            began = None;
        } else if began.is_none() {
            began = Some(tokio::time::Instant::now());
        }
        tokio::select! {
            biased;
            notice = &mut evicted => {
                if let Ok(notice) = notice {
                    let _ = tokio::time::timeout(REFUSAL_WRITE, write(&mut w, &notice)).await;
                }
                return Ok(());
            }
            _ = sleep_until(began.map(|t| t + timeout)) => {
                let resp = control.timed_out(id);
                let _ = tokio::time::timeout(REFUSAL_WRITE, write(&mut w, &resp)).await;
                return Ok(());
            }
            ready = r.readable() => {
                ready?;
                match read_some(&r, &mut framer) {
                    Ok(0) => {
                        if let Some(item) = framer.finish() {
                            answer(item, &mut w, core, timeout).await?;
                        }
                        return Ok(());
                    }
                    Ok(_) => control.received(id),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
}

/// Reads what is there into the framer (0: the client closed its side). The buffer
/// lives only for the call.
fn read_some(r: &OwnedReadHalf, framer: &mut LineFramer) -> io::Result<usize> {
    let mut chunk = [0u8; READ_CHUNK];
    let n = r.try_read(&mut chunk)?;
    framer.push(&chunk[..n]);
    Ok(n)
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// After a line: read the next one, close the connection, or stream events.
enum Next {
    Read,
    Close,
    Follow(broadcast::Receiver<Arc<str>>),
}

/// Answers one framed line: a request goes to the core, a refusal is written back.
/// Each write must finish within `timeout` (a client that does not read is dropped).
async fn answer(
    item: Framed,
    w: &mut OwnedWriteHalf,
    core: &mpsc::Sender<CoreMsg>,
    timeout: Duration,
) -> io::Result<Next> {
    let req = match item {
        Framed::Request(req) => req,
        Framed::Refused(resp) => {
            write_within(w, &resp, timeout).await?;
            return Ok(Next::Read);
        }
    };
    let (tx, rx) = oneshot::channel();
    let unavailable = || Response::err(ErrorKind::Unavailable, "daemon is stopping");
    if core
        .send(CoreMsg::Control { req, reply: tx })
        .await
        .is_err()
    {
        write_within(w, &unavailable(), timeout).await?;
        return Ok(Next::Close);
    }
    let Ok((resp, sub)) = rx.await else {
        write_within(w, &unavailable(), timeout).await?;
        return Ok(Next::Close);
    };
    write_within(w, &resp, timeout).await?;
    Ok(match sub {
        Some(sub) => Next::Follow(sub),
        None => Next::Read,
    })
}

/// `events --follow`: every event until the daemon stops or the client goes, which is
/// noticed at once (its side readable: closed, or bytes that are dropped).
async fn follow(
    r: &mut OwnedReadHalf,
    w: &mut OwnedWriteHalf,
    mut sub: broadcast::Receiver<Arc<str>>,
    timeout: Duration,
) -> io::Result<()> {
    loop {
        tokio::select! {
            ev = sub.recv() => {
                let line = match ev {
                    Ok(line) => format!("{line}\n"),
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        format!("{{\"event\":\"lagged\",\"missed\":{missed}}}\n")
                    }
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                };
                within(timeout, w.write_all(line.as_bytes())).await?;
            }
            ready = r.readable() => {
                ready?;
                let mut drop_them = LineFramer::new();
                match read_some(r, &mut drop_them) {
                    Ok(0) => return Ok(()),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
}

async fn within<T>(
    timeout: Duration,
    f: impl std::future::Future<Output = io::Result<T>>,
) -> io::Result<T> {
    tokio::time::timeout(timeout, f).await.map_err(|_| {
        io::Error::new(
            io::ErrorKind::TimedOut,
            "the client did not read the answer in time",
        )
    })?
}

async fn write_within(
    w: &mut OwnedWriteHalf,
    resp: &Response,
    timeout: Duration,
) -> io::Result<()> {
    within(timeout, write(w, resp)).await
}

fn line_of(resp: &Response) -> io::Result<String> {
    let mut line = serde_json::to_string(resp).map_err(io::Error::other)?;
    line.push('\n');
    Ok(line)
}

async fn write(w: &mut OwnedWriteHalf, resp: &Response) -> io::Result<()> {
    w.write_all(line_of(resp)?.as_bytes()).await
}

async fn write_to(s: &mut UnixStream, resp: &Response) -> io::Result<()> {
    s.write_all(line_of(resp)?.as_bytes()).await
}

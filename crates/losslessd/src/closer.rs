//! Closing packet sockets off the event loop.
//!
//! The last close of an `AF_PACKET` socket waits in the kernel for an RCU grace period
//! (`packet_release` calls `synchronize_net`): 10 to 20 ms on a small VM. One after the
//! other on the loop's thread, a shutdown with 64 ports took a second, with 128 two,
//! and a reload that drops many ports stalled every other port as long. Here each
//! socket is closed on a blocking thread of its own, so the grace periods overlap
//! (waiters that arrive together are served by the same one), and shutdown waits for
//! all of them at once.

use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::task::JoinHandle;
use tracing::warn;

/// Sockets being closed.
#[derive(Default)]
pub(crate) struct Closer {
    pending: Vec<JoinHandle<()>>,
}

impl Closer {
    /// Stops `reader` (the task that reads `socket`), then closes the socket on a
    /// blocking thread once the reader has let go of it.
    pub(crate) fn close<T>(&mut self, socket: Arc<AsyncFd<T>>, reader: JoinHandle<()>)
    where
        T: AsRawFd + Send + Sync + 'static,
    {
        reader.abort();
        self.pending.retain(|h| !h.is_finished());
        self.pending.push(tokio::spawn(async move {
            let _ = reader.await;
            match Arc::try_unwrap(socket) {
                // Out of the reactor first (epoll), then closed where waiting is free.
                Ok(fd) => {
                    let inner = fd.into_inner();
                    let _ = tokio::task::spawn_blocking(move || drop(inner)).await;
                }
                Err(still_shared) => drop(still_shared),
            }
        }));
    }

    /// Waits until every socket handed over is closed, `limit` at most.
    pub(crate) async fn finish(&mut self, limit: Duration) {
        let all = futures_join(std::mem::take(&mut self.pending));
        if tokio::time::timeout(limit, all).await.is_err() {
            warn!(
                limit_ms = limit.as_millis() as u64,
                "packet sockets still closing; exiting anyway"
            );
        }
    }
}

async fn futures_join(handles: Vec<JoinHandle<()>>) {
    for h in handles {
        let _ = h.await;
    }
}

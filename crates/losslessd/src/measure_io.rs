//! A port's measurement socket: opened with the timestamping the configuration asks
//! for, and read by a task of its own (frames with their receive timestamps, and the
//! transmit timestamps of what we sent, from the error queue).

use std::io;
use std::sync::Arc;

use lossless_node::timestamps::Clocks;
use lossless_sys::reactor::async_fd_with_interest;
use lossless_sys::timestamp::{MeasureSocket, TimestampMode};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::convert;
use crate::input::Input;

/// A port's open measurement socket and its reader.
pub(crate) struct MeasureIo {
    pub(crate) socket: Arc<AsyncFd<MeasureSocket>>,
    pub(crate) reader: JoinHandle<()>,
}

impl MeasureIo {
    /// Opens the socket and starts its reader, which hands what it reads to `input`.
    /// Returns the clocks its timestamps come from.
    pub(crate) fn open(
        ifindex: u32,
        name: &str,
        mode: TimestampMode,
        input: &mpsc::Sender<Input>,
    ) -> io::Result<(MeasureIo, Clocks)> {
        let s = MeasureSocket::open(ifindex, name, mode)?;
        let clocks = convert::clocks(s.clocks());
        let socket = Arc::new(async_fd_with_interest(
            s,
            Interest::READABLE | Interest::ERROR,
        )?);
        let reader = tokio::spawn(read_measure(ifindex, socket.clone(), input.clone()));
        Ok((MeasureIo { socket, reader }, clocks))
    }
}

/// Reads a measurement socket: frames (with receive timestamps) and, from the error
/// queue, the transmit timestamps of what we sent.
async fn read_measure(
    ifindex: u32,
    socket: Arc<AsyncFd<MeasureSocket>>,
    input: mpsc::Sender<Input>,
) {
    let mut buf = vec![0u8; 2048];
    loop {
        let Ok(mut guard) = socket.ready(Interest::READABLE | Interest::ERROR).await else {
            return;
        };
        loop {
            let msg = match socket.get_ref().recv(&mut buf) {
                Ok((n, rx)) => Input::Measure(ifindex, buf[..n].to_vec(), rx),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => Input::RxError(ifindex),
            };
            if input.send(msg).await.is_err() {
                return;
            }
        }
        while let Ok((n, tx)) = socket.get_ref().recv_tx_timestamp(&mut buf) {
            let msg = Input::MeasureTx(ifindex, buf[..n].to_vec(), tx);
            if input.send(msg).await.is_err() {
                return;
            }
        }
        // Both queues drained; readiness that arrived meanwhile is kept by tokio.
        guard.clear_ready();
    }
}

//! What the socket tasks and the reading threads hand the core task: each is routed to
//! the node by [`crate::route`].

use tokio::sync::OwnedSemaphorePermit;

use crate::frames::FrameBatch;
use crate::pfc_reader::PfcRead;
use crate::roce_worker::RoceRead;

/// What the socket tasks hand the core task.
pub(crate) enum Input {
    /// The frames one `recvmmsg` read (a shared socket's or a port's own); the permit
    /// returns to the socket's reader when the core has handled them.
    Frames(FrameBatch, OwnedSemaphorePermit),
    RxError(u32),
    /// A measurement frame and its receive timestamp.
    Measure(u32, Vec<u8>, Option<u64>),
    /// A measurement frame we sent, back from the error queue with its timestamp.
    MeasureTx(u32, Vec<u8>, u64),
    /// Ports' PFC counters, read by the counter thread (a batch: all it was asked
    /// for while it was busy).
    Pfc(Vec<PfcRead>),
    /// A port's RoCE host settings, written and read by their thread.
    Roce(Box<RoceRead>),
}

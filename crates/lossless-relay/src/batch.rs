//! Frames to send, packed into one reused buffer: no allocation per frame
//! once the buffer has grown to a batch's size, and a layout a `sendmmsg`
//! caller can point its iovecs at.

use serde::{Deserialize, Serialize};

/// Which side of the PE a frame goes to or came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Port {
    /// Toward the DC gateway.
    Dc,
    /// Toward the WAN.
    Wan,
}

/// One frame to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit<'a> {
    pub port: Port,
    /// `SO_PRIORITY` to send it with (the relay's marking).
    pub socket_priority: u32,
    /// Where the outer IP header starts, for a sender that uses a raw IP
    /// socket on the WAN side instead of a packet socket; `None` for frames
    /// to the DC and for MPLS.
    pub ip_offset: Option<usize>,
    /// The whole frame from its destination MAC, without FCS.
    pub frame: &'a [u8],
    /// Ask the kernel for the time the frame left (a WAN delay measurement
    /// frame, when the runtime said it can: [`crate::Relay::set_kernel_tx_stamps`]);
    /// the stamp goes back to [`crate::Relay::handle_tx_stamp`].
    pub stamp: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    port: Port,
    socket_priority: u32,
    ip_offset: Option<usize>,
    stamp: bool,
    start: usize,
    len: usize,
}

/// A batch of frames to send, in order.
#[derive(Debug, Clone, Default)]
pub struct TxBatch {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
}

impl TxBatch {
    pub fn new() -> TxBatch {
        TxBatch::default()
    }

    /// Room for `frames` frames of up to `frame_len` octets before the first
    /// allocation.
    pub fn with_capacity(frames: usize, frame_len: usize) -> TxBatch {
        TxBatch {
            bytes: Vec::with_capacity(frames.saturating_mul(frame_len)),
            entries: Vec::with_capacity(frames),
        }
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn transmit(&self, e: &Entry) -> Transmit<'_> {
        Transmit {
            port: e.port,
            socket_priority: e.socket_priority,
            ip_offset: e.ip_offset,
            frame: &self.bytes[e.start..e.start + e.len],
            stamp: e.stamp,
        }
    }

    pub fn get(&self, i: usize) -> Option<Transmit<'_>> {
        self.entries.get(i).map(|e| self.transmit(e))
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Transmit<'_>> + '_ {
        self.entries.iter().map(|e| self.transmit(e))
    }

    /// Appends a frame built elsewhere (the XDP path's storm flushes).
    pub fn push(&mut self, port: Port, socket_priority: u32, frame: &[u8]) {
        self.push_with(port, socket_priority, None, frame.len(), |b| {
            b.copy_from_slice(frame)
        });
    }

    /// Appends a frame of `len` octets that `write` fills in place.
    pub(crate) fn push_with(
        &mut self,
        port: Port,
        socket_priority: u32,
        ip_offset: Option<usize>,
        len: usize,
        write: impl FnOnce(&mut [u8]),
    ) {
        let start = self.bytes.len();
        self.bytes.resize(start + len, 0);
        write(&mut self.bytes[start..]);
        self.entries.push(Entry {
            port,
            socket_priority,
            ip_offset,
            stamp: false,
            start,
            len,
        });
    }

    /// Asks for the transmit stamp of the frame appended last.
    pub(crate) fn stamp_last(&mut self) {
        if let Some(e) = self.entries.last_mut() {
            e.stamp = true;
        }
    }
}

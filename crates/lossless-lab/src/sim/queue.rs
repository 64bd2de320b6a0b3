//! The virtual clock's agenda: what falls due when.
//!
//! Two heaps. Things in flight (a frame on its way, a transmit timestamp on
//! its way to the core that sent the frame, a relay's storm timer) run in the
//! order they were scheduled when they fall due at the same instant. A node
//! core's own timer (its `poll_timeout()`) runs after them, nodes in index
//! order; only its latest deadline counts (older entries are stale and
//! skipped). So a frame and a timer due at the same instant see the frame
//! delivered first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use lossless_dcbx::Instant;

use super::NodeId;

/// What a frame is, for the receiving port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivery {
    /// An LLDPDU, or any frame of the port's packet socket.
    Frame,
    /// A measurement frame (its receive timestamp is taken).
    Measure,
}

/// Something in flight.
#[derive(Debug)]
pub(super) enum Due {
    /// A frame's last bit reaches `port` of `to`.
    Arrive {
        to: NodeId,
        port: usize,
        bytes: Vec<u8>,
        kind: Delivery,
    },
    /// The transmit timestamp `ts` of a measurement frame `node` sent on `port`
    /// reaches its core.
    TxStamp {
        node: NodeId,
        port: usize,
        bytes: Vec<u8>,
        ts: u64,
    },
    /// A relay data path's timer (stale unless it is the node's current one).
    Wake(NodeId),
}

#[derive(Default)]
pub(super) struct Queue {
    due: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    slots: Vec<Option<Due>>,
    free: Vec<usize>,
    seq: u64,
    timers: BinaryHeap<Reverse<(Instant, NodeId)>>,
}

impl Queue {
    /// Schedules `what` at `at`, after everything already due then.
    pub(super) fn push(&mut self, at: Instant, what: Due) {
        let idx = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(what);
                i
            }
            None => {
                self.slots.push(Some(what));
                self.slots.len() - 1
            }
        };
        self.seq += 1;
        self.due.push(Reverse((at, self.seq, idx)));
    }

    /// Queues a node core's deadline.
    pub(super) fn push_timer(&mut self, at: Instant, node: NodeId) {
        self.timers.push(Reverse((at, node)));
    }

    /// The instant of the next thing to happen; `current(node, t)` says whether
    /// a timer entry is still the node's deadline (stale ones are dropped).
    pub(super) fn next_instant(
        &mut self,
        current: impl Fn(NodeId, Instant) -> bool,
    ) -> Option<Instant> {
        while let Some(Reverse((t, node))) = self.timers.peek().copied() {
            if current(node, t) {
                break;
            }
            self.timers.pop();
        }
        let d = self.due.peek().map(|Reverse((t, _, _))| *t);
        let t = self.timers.peek().map(|Reverse((t, _))| *t);
        match (d, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The first thing in flight due at `t`, taken off the agenda.
    pub(super) fn pop_due(&mut self, t: Instant) -> Option<Due> {
        let Reverse((at, _, idx)) = self.due.peek().copied()?;
        if at != t {
            return None;
        }
        self.due.pop();
        let what = self.slots[idx].take();
        self.free.push(idx);
        what
    }

    /// The earliest timer entry, taken off the agenda.
    pub(super) fn pop_timer(&mut self) -> Option<(Instant, NodeId)> {
        self.timers.pop().map(|Reverse(e)| e)
    }
}

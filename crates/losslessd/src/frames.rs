//! The frames a packet socket's reader hands the core task: one `recvmmsg`'s worth,
//! copied out of the receive batch, each with its interface and the kernel's receive
//! stamp, and which socket it came from (shared or the port's own, and which
//! EtherType class: each class has its sockets).

use lossless_sys::batch::RxBatch;

use crate::socket_switch::Class;

/// Frames one `recvmmsg` read, copied out of the shared receive batch.
pub(crate) struct FrameBatch {
    bytes: Vec<u8>,
    /// Where each frame ends in `bytes`.
    ends: Vec<usize>,
    /// The interface each frame came from.
    pub(crate) ifindexes: Vec<u32>,
    /// When the kernel received each frame (ns since the epoch).
    pub(crate) stamps: Vec<Option<u64>>,
    /// Read from the shared sockets (else from a port's own).
    pub(crate) shared: bool,
    /// The EtherType class of the socket read (each class has its own sockets).
    pub(crate) class: Class,
    /// The interface of each frame longer than the reader takes (a jumbo LLDPDU), dropped (a receive
    /// error each).
    pub(crate) too_long: Vec<u32>,
}

impl FrameBatch {
    pub(crate) fn copy_of(rx: &RxBatch, from: Source) -> FrameBatch {
        let n = rx.len();
        let mut b = FrameBatch {
            bytes: Vec::with_capacity(rx.iter().map(<[u8]>::len).sum()),
            ends: Vec::with_capacity(n),
            ifindexes: Vec::with_capacity(n),
            stamps: Vec::with_capacity(n),
            shared: matches!(from, Source::Shared(_)),
            class: from.class(),
            too_long: Vec::new(),
        };
        for i in 0..n {
            let ifindex = match from {
                Source::Shared(_) => rx.ifindex(i),
                Source::Own(ifindex, _) => ifindex,
            };
            match rx.get(i) {
                Some(f) if !rx.truncated(i) => {
                    b.bytes.extend_from_slice(f);
                    b.ends.push(b.bytes.len());
                    b.ifindexes.push(ifindex);
                    b.stamps.push(rx.stamp(i));
                }
                _ => b.too_long.push(ifindex),
            }
        }
        b
    }

    pub(crate) fn frames(&self) -> impl Iterator<Item = (usize, &[u8])> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .enumerate()
            .map(|(i, (a, &b))| (i, &self.bytes[a..b]))
    }
}

/// Which socket a reader reads: a shared one, or a port's own (its interface), and
/// for which EtherType class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Shared(Class),
    Own(u32, Class),
}

impl Source {
    pub(crate) fn class(self) -> Class {
        match self {
            Source::Shared(c) | Source::Own(_, c) => c,
        }
    }
}

//! An `AF_PACKET` socket with a memory-mapped receive ring (`PACKET_RX_RING`,
//! `TPACKET_V2`) for the relay's busiest path: the kernel copies each frame
//! the filter accepts into a slot of a ring shared with us, so receiving is
//! reading memory (no system call, no socket buffer per frame) and checking
//! for a frame costs nanoseconds, which is what lets a busy-polling relay
//! add little latency. Sending uses `sendmmsg` on the same socket, as
//! [`BatchSocket`](crate::batch::BatchSocket) does.
//!
//! Ring protocol (`Documentation/networking/packet_mmap.rst`): slot `i` is
//! ours when its header's `tp_status` has `TP_STATUS_USER` (read with
//! acquire ordering, so the frame's bytes are visible); we hand it back by
//! storing `TP_STATUS_KERNEL` (release ordering) once done with its bytes.
//! Slots are used in order.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::batch::{Filter, SocketStats};
use crate::packet::{
    add_membership, attach_filter, bind, checked_ifindex, ETH_P_8021Q, ETH_P_ALL,
    MAC_CONTROL_MULTICAST, PACKET_IGNORE_OUTGOING, PACKET_OUTGOING,
};
use crate::send::{send_frames, SendScratch};
use crate::sys;

const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const TPACKET_V2: libc::c_int = 1;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const TPACKET_ALIGNMENT: usize = 16;
/// Ring block size: a multiple of the page size and of every slot size.
const BLOCK: usize = 1 << 16;

/// How to open a [`RingSocket`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingOptions {
    /// Slots in the ring: frames that can wait for us (rounded up to fill
    /// whole blocks). A full ring drops, counted in [`RingSocket::stats`].
    pub frames: usize,
    /// Bytes per slot, header included (a power of two, 256..=65536;
    /// frames longer than the slot minus the header are cut).
    pub frame_size: usize,
    /// `SO_PRIORITY` of what the socket sends.
    pub priority: u32,
    /// Put the interface in promiscuous mode while the socket is open.
    pub promiscuous: bool,
    /// `PACKET_QDISC_BYPASS`: hand sent frames straight to the driver's
    /// queue (chosen by priority as usual), past any queueing discipline, so
    /// a PFC frame never waits behind bulk traffic in a software queue.
    pub qdisc_bypass: bool,
}

impl Default for RingOptions {
    fn default() -> Self {
        RingOptions {
            frames: 8192,
            frame_size: 2048,
            priority: 0,
            promiscuous: false,
            qdisc_bypass: false,
        }
    }
}

/// The mapping; unmapped on drop.
struct Map {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain shared memory owned by this value; the ring
// discipline (atomics on tp_status) is what makes concurrent use with the
// kernel sound, and only one thread at a time holds a &mut RingSocket.
unsafe impl Send for Map {}

impl Map {
    /// The whole mapping. The kernel writes only slots whose status is
    /// `TP_STATUS_KERNEL`; readers look at a slot's bytes only after
    /// acquiring `TP_STATUS_USER` on it.
    fn bytes(&self) -> &[u8] {
        // SAFETY: base points to len mapped bytes, live as long as self.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: base/len are exactly what mmap returned.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A non-blocking packet socket bound to one interface, receiving through a
/// memory-mapped ring.
pub struct RingSocket {
    fd: OwnedFd,
    ifindex: u32,
    map: Map,
    frame_size: usize,
    frames: usize,
    /// The next slot to look at.
    next: usize,
    /// Frames with a VLAN tag put back, for this batch.
    scratch: Vec<u8>,
    /// Where this batch's frames are (reused: no allocation per batch).
    spans: Vec<Span>,
    /// When the kernel received each of them (`tp_sec`, `tp_nsec`: the
    /// real-time clock, in nanoseconds since the Unix epoch), span by span.
    stamps: Vec<u64>,
    send: SendScratch,
}

impl std::fmt::Debug for RingSocket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingSocket")
            .field("ifindex", &self.ifindex)
            .field("frames", &self.frames)
            .field("frame_size", &self.frame_size)
            .finish()
    }
}

/// One received batch: the frames, borrowed from the ring (or from scratch
/// space when a tag was put back). The slots go back to the kernel when it
/// is dropped.
pub struct RxFrames<'a> {
    sock: &'a mut RingSocket,
    /// (start slot, count) of the slots this batch holds.
    first: usize,
    count: usize,
}

#[derive(Clone, Copy)]
enum Span {
    Ring {
        at: usize,
        len: usize,
    },
    Scratch {
        at: usize,
        len: usize,
    },
    /// Sent by this host (seen only before Linux 4.20): skipped.
    Skip,
}

impl RxFrames<'_> {
    /// Frames in the batch.
    pub fn len(&self) -> usize {
        self.sock
            .spans
            .iter()
            .filter(|s| !matches!(s, Span::Skip))
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each frame as it was on the wire (VLAN tag in place).
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.iter_stamped().map(|(f, _)| f)
    }

    /// Each frame with the time the kernel received it: nanoseconds since the
    /// Unix epoch on the real-time clock (the ring's `tp_sec`/`tp_nsec`), taken
    /// in the receive path, however late this thread reads the frame.
    pub fn iter_stamped(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        let ring = self.sock.map.bytes();
        let scratch = &self.sock.scratch;
        self.sock
            .spans
            .iter()
            .zip(&self.sock.stamps)
            .filter_map(move |(s, t)| match *s {
                Span::Ring { at, len } => Some((&ring[at..at + len], *t)),
                Span::Scratch { at, len } => Some((&scratch[at..at + len], *t)),
                Span::Skip => None,
            })
    }
}

impl Drop for RxFrames<'_> {
    fn drop(&mut self) {
        for k in 0..self.count {
            let slot = (self.first + k) % self.sock.frames;
            self.sock
                .status(slot)
                .store(TP_STATUS_KERNEL, Ordering::Release);
        }
    }
}

impl RingSocket {
    /// Opens the socket on `ifindex` with `filter` and maps its ring. Needs
    /// `CAP_NET_RAW` (and `CAP_NET_ADMIN` for a priority above 6).
    pub fn open(ifindex: u32, filter: Filter, opts: RingOptions) -> io::Result<RingSocket> {
        let index = checked_ifindex(ifindex)?;
        let invalid = |m: String| io::Error::new(io::ErrorKind::InvalidInput, m);
        if !opts.frame_size.is_power_of_two() || !(256..=BLOCK).contains(&opts.frame_size) {
            return Err(invalid(format!(
                "ring slot of {} bytes: must be a power of two from 256 to {BLOCK}",
                opts.frame_size
            )));
        }
        // Blocks of 64 KiB hold whole slots, so slot i is at i * frame_size.
        let block = BLOCK;
        let per_block = block / opts.frame_size;
        let blocks = opts.frames.max(1).div_ceil(per_block);
        let frames = blocks * per_block;
        let fd = sys::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, 0)?;
        attach_filter(&fd, &filter.program())?;
        let _ = sys::setsockopt(&fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32);
        let prio = libc::c_int::try_from(opts.priority)
            .map_err(|_| invalid(format!("socket priority {} is out of range", opts.priority)))?;
        sys::setsockopt(&fd, libc::SOL_SOCKET, libc::SO_PRIORITY, &prio)?;
        if opts.qdisc_bypass {
            sys::setsockopt(&fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, &1i32)?;
        }
        sys::setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_VERSION, &TPACKET_V2)?;
        let req = libc::tpacket_req {
            tp_block_size: u32::try_from(block)
                .map_err(|_| invalid("ring block too large".into()))?,
            tp_block_nr: u32::try_from(blocks).map_err(|_| invalid("ring too large".into()))?,
            tp_frame_size: opts.frame_size as u32,
            tp_frame_nr: u32::try_from(frames).map_err(|_| invalid("ring too large".into()))?,
        };
        sys::setsockopt(&fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)?;
        let len = block * blocks;
        // SAFETY: a shared read/write mapping of the ring the kernel just
        // allocated for this socket; checked for MAP_FAILED below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let map = Map {
            base: NonNull::new(p.cast::<u8>()).ok_or_else(io::Error::last_os_error)?,
            len,
        };
        bind(&fd, index, ETH_P_ALL)?;
        if matches!(filter, Filter::MacControl | Filter::All) {
            add_membership(&fd, index, Some(MAC_CONTROL_MULTICAST))?;
        }
        if opts.promiscuous {
            add_membership(&fd, index, None)?;
        }
        Ok(RingSocket {
            fd,
            ifindex,
            map,
            frame_size: opts.frame_size,
            frames,
            next: 0,
            scratch: Vec::with_capacity(4096),
            spans: Vec::with_capacity(256),
            stamps: Vec::with_capacity(256),
            send: SendScratch::default(),
        })
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Slots in the ring.
    pub fn slots(&self) -> usize {
        self.frames
    }

    fn status(&self, slot: usize) -> &AtomicU32 {
        // SAFETY: slot < frames; each slot starts with a 16-aligned
        // tpacket2_hdr whose first field is the u32 tp_status, shared with
        // the kernel, so accessed atomically only.
        unsafe {
            &*self
                .map
                .base
                .as_ptr()
                .add(slot * self.frame_size)
                .cast::<AtomicU32>()
        }
    }

    /// Whether a frame is waiting (one memory read).
    pub fn ready(&self) -> bool {
        self.status(self.next).load(Ordering::Acquire) & TP_STATUS_USER != 0
    }

    /// Takes up to `max` waiting frames, without waiting. Frames longer than
    /// a slot arrive cut to it. A frame whose transport checksum the kernel
    /// has not computed (`TP_STATUS_CSUMNOTREADY`: a `CHECKSUM_PARTIAL` skb,
    /// as from a sender on this host or across veth/virtio that left the sum
    /// to offload; the field then holds only the pseudo-header sum) is
    /// copied out and handed to `complete` to finish it in place.
    pub fn recv_batch(&mut self, max: usize, mut complete: impl FnMut(&mut [u8])) -> RxFrames<'_> {
        let first = self.next;
        self.spans.clear();
        self.stamps.clear();
        self.scratch.clear();
        let mut count = 0;
        // Never more than the ring: the slots of this batch are still ours.
        while count < max.min(self.frames) {
            let slot = (first + count) % self.frames;
            let status = self.status(slot).load(Ordering::Acquire);
            if status & TP_STATUS_USER == 0 {
                break;
            }
            let off = slot * self.frame_size;
            // SAFETY: the slot is ours (TP_STATUS_USER, acquired); its
            // header is a tpacket2_hdr at a 16-aligned offset.
            let hdr = unsafe {
                std::ptr::read(self.map.base.as_ptr().add(off).cast::<libc::tpacket2_hdr>())
            };
            // The sockaddr_ll follows the aligned header.
            let sll_at = off
                + TPACKET_ALIGNMENT
                    * mem::size_of::<libc::tpacket2_hdr>().div_ceil(TPACKET_ALIGNMENT);
            let ring = self.map.bytes();
            let pkttype = ring
                .get(sll_at + mem::offset_of!(libc::sockaddr_ll, sll_pkttype))
                .copied()
                .unwrap_or(0);
            let at = off + usize::from(hdr.tp_mac);
            let len = (hdr.tp_snaplen as usize)
                .min(self.frame_size.saturating_sub(usize::from(hdr.tp_mac)));
            let tagged = status & TP_STATUS_VLAN_VALID != 0 && len >= 12;
            let partial = status & TP_STATUS_CSUMNOTREADY != 0;
            let span = if pkttype == PACKET_OUTGOING {
                Span::Skip
            } else if tagged || partial {
                let s = self.scratch.len();
                if tagged {
                    let tpid = if status & TP_STATUS_VLAN_TPID_VALID != 0 {
                        hdr.tp_vlan_tpid
                    } else {
                        ETH_P_8021Q
                    };
                    self.scratch.extend_from_slice(&ring[at..at + 12]);
                    self.scratch.extend_from_slice(&tpid.to_be_bytes());
                    self.scratch
                        .extend_from_slice(&hdr.tp_vlan_tci.to_be_bytes());
                    self.scratch.extend_from_slice(&ring[at + 12..at + len]);
                } else {
                    self.scratch.extend_from_slice(&ring[at..at + len]);
                }
                if partial {
                    complete(&mut self.scratch[s..]);
                }
                Span::Scratch {
                    at: s,
                    len: self.scratch.len() - s,
                }
            } else {
                Span::Ring { at, len }
            };
            self.spans.push(span);
            self.stamps
                .push(u64::from(hdr.tp_sec) * 1_000_000_000 + u64::from(hdr.tp_nsec));
            count += 1;
        }
        self.next = (first + count) % self.frames;
        RxFrames {
            sock: self,
            first,
            count,
        }
    }

    /// Sends whole Ethernet frames with `sendmmsg`; see
    /// [`BatchSocket::send_batch`](crate::batch::BatchSocket::send_batch).
    pub fn send_batch<'a>(
        &mut self,
        frames: impl IntoIterator<Item = &'a [u8]>,
    ) -> io::Result<usize> {
        let frames = frames.into_iter().map(|f| (f, false));
        send_frames(&self.fd, self.ifindex, frames, &mut self.send)
    }

    /// As [`RingSocket::send_batch`], each frame with whether to ask the
    /// kernel for its transmit time: the driver stamps it as it takes the
    /// frame (`skb_tx_timestamp`), and the stamp comes back with a copy of
    /// the frame on the error queue ([`RingSocket::recv_tx_stamp`]) once
    /// [`RingSocket::report_tx_stamps`] is on. A driver that does not stamp
    /// sends the frame all the same, and nothing comes back.
    pub fn send_batch_stamped<'a>(
        &mut self,
        frames: impl IntoIterator<Item = (&'a [u8], bool)>,
    ) -> io::Result<usize> {
        send_frames(&self.fd, self.ifindex, frames, &mut self.send)
    }

    /// Reports the software transmit stamps frames sent with a request for
    /// one ask for (`SO_TIMESTAMPING` with `SOF_TIMESTAMPING_SOFTWARE`):
    /// generates none by itself, and leaves the ring's receive stamps as
    /// they are.
    pub fn report_tx_stamps(&self) -> io::Result<()> {
        sys::setsockopt(
            &self.fd,
            libc::SOL_SOCKET,
            crate::timestamp::SO_TIMESTAMPING,
            &crate::timestamp::SOF_TIMESTAMPING_SOFTWARE,
        )
    }

    /// One transmit stamp from the error queue: the copy of the frame it
    /// belongs to (in `buf`, its length returned, at most `buf.len()`) and
    /// the time the driver took the frame, in real-time nanoseconds (the
    /// clock of the ring's receive stamps). `WouldBlock` when none waits.
    pub fn recv_tx_stamp(&self, buf: &mut [u8]) -> io::Result<(usize, u64)> {
        loop {
            let (n, ts) = crate::timestamp::recvmsg_stamped(
                &self.fd,
                buf,
                None,
                libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
                false,
            )?;
            // Entries without a stamp (none are expected) are skipped.
            if let Some(ns) = ts.as_ref().and_then(crate::timestamp::timespec_ns) {
                return Ok((n.min(buf.len()), ns));
            }
        }
    }

    /// Reads and resets the kernel's counters (drops: the ring was full).
    pub fn stats(&self) -> io::Result<SocketStats> {
        crate::packet::packet_stats(&self.fd)
    }
}

crate::sys::fd_traits!(RingSocket, fd);

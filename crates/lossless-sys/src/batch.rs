//! Batched `AF_PACKET` I/O for the PFC relay's data path: many frames per
//! system call (`recvmmsg`/`sendmmsg`), a receive filter chosen per port, and
//! the 802.1Q tag the kernel took off a received frame put back in place.
//!
//! [`BatchSocket::open`] does, in this order:
//! 1. `socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)`, so
//!    nothing is queued before the filter is in place;
//! 2. `SO_ATTACH_FILTER` with the [`Filter`]'s classic BPF program;
//! 3. `SO_RCVBUFFORCE` (falling back to `SO_RCVBUF`) to the requested size,
//!    so a burst waits in the socket instead of being dropped;
//!    `PACKET_AUXDATA`, for the VLAN tag; `PACKET_IGNORE_OUTGOING`;
//!    `SO_PRIORITY`;
//! 4. `bind` to the interface with `ETH_P_ALL`;
//! 5. `PACKET_ADD_MEMBERSHIP` for 01:80:c2:00:00:01 when the filter takes
//!    MAC Control (a NIC's multicast filter must pass PFC up), or promiscuous
//!    mode when asked (a WAN port whose tunnel frames are addressed to a MAC
//!    that is not the interface's own).
//!
//! The receive path of Linux moves an 802.1Q tag into skb metadata before a
//! packet socket sees the frame. [`BatchSocket::recv_batch`] reads it from
//! `PACKET_AUXDATA` and writes it back between the source MAC and the
//! EtherType, so the caller sees the frame as it was on the wire. The
//! filters below therefore see untagged frames and do not look behind tags.

use std::io;
use std::mem;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use crate::cbpf::{
    BPF_JEQ_K, BPF_JSET_K, BPF_LDX_MSH, BPF_LD_B_ABS, BPF_LD_H_ABS, BPF_LD_H_IND, BPF_RET_K,
};
use crate::packet::set_rcvbuf;
pub use crate::packet::SocketStats;
use crate::packet::{
    add_membership, bind, checked_ifindex, sockaddr_ll, ETH_HLEN, ETH_P_8021Q, ETH_P_ALL,
    ETH_P_MAC_CONTROL, MAC_CONTROL_MULTICAST, PACKET_IGNORE_OUTGOING, PACKET_OUTGOING,
};
use crate::packet::{attach_filter, packet_stats, PacketSocket};
use crate::send::{send_frames, SendScratch};
use crate::sys;
/// Waiting on several sockets at once (`ppoll`); kept here, where callers find it.
pub use crate::sys::wait_any;

const ETH_P_IP: u32 = 0x0800;
const ETH_P_IPV6: u32 = 0x86dd;
const ETH_P_MPLS_UC: u32 = 0x8847;
const IPPROTO_UDP: u32 = 17;
const IPPROTO_ROUTING: u32 = 43;
const IPPROTO_ETHERNET: u32 = 143;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const VLAN_HLEN: usize = 4;
const ACCEPT: u32 = u32::MAX;

/// Which frames a [`BatchSocket`] receives; everything else is dropped in the
/// kernel before it costs a copy. The relay's filters implement the relay
/// host's predicate, variant for variant (`lossless_relay::host::Filter`,
/// where each is described; its `tests/filter.rs` runs both on generated
/// frames): EtherType 0x8808; IPv6 to a Routing header or Ethernet; UDP to
/// a port over IPv4 (first fragments) or IPv6; MPLS unicast.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    MacControl,
    Srv6,
    Udp {
        port: u16,
    },
    Mpls,
    /// Every frame (a test's sink).
    All,
}

const fn insn(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

impl Filter {
    /// The classic BPF program. Jump offsets count from the next instruction;
    /// a load past the end of the frame returns 0 (drop).
    pub fn program(self) -> Vec<libc::sock_filter> {
        let ld_type = insn(BPF_LD_H_ABS, 0, 0, 12);
        let drop = insn(BPF_RET_K, 0, 0, 0);
        let accept = insn(BPF_RET_K, 0, 0, ACCEPT);
        match self {
            Filter::MacControl => vec![
                ld_type,
                insn(BPF_JEQ_K, 0, 1, ETH_P_MAC_CONTROL.into()),
                accept,
                drop,
            ],
            Filter::Mpls => vec![ld_type, insn(BPF_JEQ_K, 0, 1, ETH_P_MPLS_UC), accept, drop],
            Filter::Srv6 => vec![
                ld_type,
                insn(BPF_JEQ_K, 0, 4, ETH_P_IPV6),
                insn(BPF_LD_B_ABS, 0, 0, 14 + 6), // next header
                insn(BPF_JEQ_K, 1, 0, IPPROTO_ROUTING),
                insn(BPF_JEQ_K, 0, 1, IPPROTO_ETHERNET),
                accept,
                drop,
            ],
            Filter::Udp { port } => vec![
                // 0
                ld_type,
                // 1
                insn(BPF_JEQ_K, 0, 7, ETH_P_IP),
                // 2: IPv4: protocol UDP
                insn(BPF_LD_B_ABS, 0, 0, 14 + 9),
                // 3
                insn(BPF_JEQ_K, 0, 11, IPPROTO_UDP),
                // 4: not a later fragment (fragment offset 0)
                insn(BPF_LD_H_ABS, 0, 0, 14 + 6),
                // 5
                insn(BPF_JSET_K, 9, 0, 0x1fff),
                // 6: x = IPv4 header length
                insn(BPF_LDX_MSH, 0, 0, 14),
                // 7: UDP destination port
                insn(BPF_LD_H_IND, 0, 0, 14 + 2),
                // 8
                insn(BPF_JEQ_K, 5, 6, port.into()),
                // 9: IPv6
                insn(BPF_JEQ_K, 0, 5, ETH_P_IPV6),
                // 10: next header UDP
                insn(BPF_LD_B_ABS, 0, 0, 14 + 6),
                // 11
                insn(BPF_JEQ_K, 0, 3, IPPROTO_UDP),
                // 12: UDP destination port after the 40-octet header
                insn(BPF_LD_H_ABS, 0, 0, 14 + 40 + 2),
                // 13
                insn(BPF_JEQ_K, 0, 1, port.into()),
                // 14
                accept,
                // 15
                drop,
            ],
            Filter::All => vec![accept],
        }
    }

    /// Whether the program accepts `frame` (untagged, as the kernel hands
    /// it to the filter), run by the crate's classic BPF interpreter: what
    /// the kernel decides, without a socket. For tests that check the
    /// program against the relay host's predicate.
    pub fn accepts(self, frame: &[u8]) -> bool {
        crate::bpf_interp::run(&self.program(), frame) != 0
    }

    fn takes_mac_control(self) -> bool {
        matches!(self, Filter::MacControl | Filter::All)
    }
}

/// How to open a [`BatchSocket`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchOptions {
    /// Receive buffer in bytes (`SO_RCVBUFFORCE` as root). Each queued frame
    /// costs its `skb` truesize, about 1 KiB for a small frame on veth.
    pub rcvbuf: usize,
    /// `SO_PRIORITY` of what the socket sends.
    pub priority: u32,
    /// Put the interface in promiscuous mode while the socket is open.
    pub promiscuous: bool,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            rcvbuf: 32 << 20,
            priority: 0,
            promiscuous: false,
        }
    }
}

/// A receive batch: `capacity` slots of `slot` bytes, reused across calls.
#[derive(Debug)]
pub struct RxBatch {
    slot: usize,
    bytes: Vec<u8>,
    /// Length of each received frame; larger than `slot - VLAN_HLEN` when it
    /// was cut (see [`RxBatch::truncated`]).
    lens: Vec<usize>,
    names: Vec<libc::sockaddr_ll>,
    /// Each frame's receive time (`SCM_TIMESTAMPNS`, ns since the epoch) where the
    /// socket asked for one.
    stamps: Vec<Option<u64>>,
    controls: Vec<u8>,
    count: usize,
    headers: RecvHeaders,
}

/// The headers a `recvmmsg` call needs, kept in the batch so a busy reader does not
/// allocate per call (as `SendScratch` for the sender). The pointers in them are
/// set and used within one [`recv_batch`] call only.
struct RecvHeaders {
    iovs: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers inside are written and dereferenced only during one
// recv_batch call, which holds the batch mutably; between calls they are dead
// values that nothing reads.
unsafe impl Send for RecvHeaders {}
// SAFETY: as above; a shared reference to the batch never reads them.
unsafe impl Sync for RecvHeaders {}

impl std::fmt::Debug for RecvHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecvHeaders")
            .field("capacity", &self.msgs.len())
            .finish()
    }
}

/// Room for a `tpacket_auxdata` and a `SCM_TIMESTAMPNS` control message (40 and 32
/// octets with their headers, aligned).
const CONTROL_LEN: usize = 96;

impl RxBatch {
    /// `capacity` frames of up to `max_frame` bytes each (plus room to put a
    /// VLAN tag back).
    pub fn new(capacity: usize, max_frame: usize) -> RxBatch {
        let capacity = capacity.max(1);
        let slot = max_frame + VLAN_HLEN;
        RxBatch {
            slot,
            bytes: vec![0; capacity * slot],
            lens: vec![0; capacity],
            names: vec![sockaddr_ll(0, 0); capacity],
            stamps: vec![None; capacity],
            controls: vec![0; capacity * CONTROL_LEN],
            count: 0,
            headers: RecvHeaders {
                iovs: Vec::with_capacity(capacity),
                // SAFETY: mmsghdr is plain data; all-zero is a valid value.
                msgs: (0..capacity).map(|_| unsafe { mem::zeroed() }).collect(),
            },
        }
    }

    pub fn capacity(&self) -> usize {
        self.lens.len()
    }

    /// Frames received by the last [`BatchSocket::recv_batch`].
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Frame `i` of the last batch, as it was on the wire (tag restored). A
    /// frame longer than the slot is cut to it; [`RxBatch::truncated`] says so.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        if i >= self.count {
            return None;
        }
        let len = self.lens[i].min(self.slot);
        let start = i * self.slot;
        Some(&self.bytes[start..start + len])
    }

    /// Whether frame `i` did not fit its slot.
    pub fn truncated(&self, i: usize) -> bool {
        i < self.count && self.lens[i] > self.slot
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.count).filter_map(|i| self.get(i))
    }

    /// The interface frame `i` arrived on (0 past the last frame).
    pub fn ifindex(&self, i: usize) -> u32 {
        if i >= self.count {
            return 0;
        }
        u32::try_from(self.names[i].sll_ifindex).unwrap_or_default()
    }

    /// When the kernel received frame `i` (ns since the epoch), on a socket with
    /// `SO_TIMESTAMPNS`.
    pub fn stamp(&self, i: usize) -> Option<u64> {
        self.stamps
            .get(i)
            .copied()
            .flatten()
            .filter(|_| i < self.count)
    }
}

/// A non-blocking `AF_PACKET` socket bound to one interface that receives
/// and sends whole Ethernet frames in batches.
#[derive(Debug)]
pub struct BatchSocket {
    fd: OwnedFd,
    ifindex: u32,
}

impl BatchSocket {
    /// Opens the socket on `ifindex` (in the calling thread's network
    /// namespace). Needs `CAP_NET_RAW`, and `CAP_NET_ADMIN` for a socket
    /// priority above 6 and the forced receive buffer.
    pub fn open(ifindex: u32, filter: Filter, opts: BatchOptions) -> io::Result<BatchSocket> {
        let index = checked_ifindex(ifindex)?;
        let fd = sys::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, 0)?;
        let sock = BatchSocket { fd, ifindex };
        attach_filter(&sock, &filter.program())?;
        set_rcvbuf(&sock, opts.rcvbuf)?;
        sys::setsockopt(
            &sock,
            libc::SOL_PACKET,
            libc::PACKET_AUXDATA,
            &(1 as libc::c_int),
        )?;
        // Refused before Linux 4.20; recv_batch skips outgoing frames anyway.
        let _ = sys::setsockopt(
            &sock,
            libc::SOL_PACKET,
            PACKET_IGNORE_OUTGOING,
            &(1 as libc::c_int),
        );
        sock.set_priority(opts.priority)?;
        bind(&sock, index, ETH_P_ALL)?;
        if filter.takes_mac_control() {
            add_membership(&sock, index, Some(MAC_CONTROL_MULTICAST))?;
        }
        if opts.promiscuous {
            add_membership(&sock, index, None)?;
        }
        Ok(sock)
    }

    /// The interface this socket is bound to.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Sets `SO_PRIORITY` for what is sent from now on.
    pub fn set_priority(&self, priority: u32) -> io::Result<()> {
        let p = libc::c_int::try_from(priority).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("socket priority {priority} is out of range"),
            )
        })?;
        sys::setsockopt(self, libc::SOL_SOCKET, libc::SO_PRIORITY, &p)
    }

    /// The socket priority as the kernel has it.
    pub fn priority(&self) -> io::Result<i32> {
        sys::getsockopt_int(self, libc::SOL_SOCKET, libc::SO_PRIORITY)
    }

    /// The receive buffer the kernel granted (`SO_RCVBUF`, which it doubles
    /// for bookkeeping).
    pub fn rcvbuf(&self) -> io::Result<usize> {
        Ok(sys::getsockopt_int(self, libc::SOL_SOCKET, libc::SO_RCVBUF)?.max(0) as usize)
    }

    /// Reads and resets the kernel's counters for this socket.
    pub fn stats(&self) -> io::Result<SocketStats> {
        packet_stats(&self.fd)
    }

    /// Receives up to `batch.capacity()` queued frames with one `recvmmsg`,
    /// without waiting; returns how many (0 when nothing is queued). Frames
    /// this host sent are skipped; VLAN tags are restored.
    pub fn recv_batch(&self, batch: &mut RxBatch) -> io::Result<usize> {
        recv_batch(self.fd.as_fd(), batch)
    }

    /// Sends `frames` (whole Ethernet frames, no FCS) with as few `sendmmsg`
    /// calls as the kernel allows; returns how many were sent. Stops at the
    /// first frame the kernel refuses and returns the error if none was sent
    /// (`WouldBlock` when the device queue is full).
    pub fn send_batch<'a>(&self, frames: impl IntoIterator<Item = &'a [u8]>) -> io::Result<usize> {
        let frames = frames.into_iter().map(|f| (f, false));
        send_frames(&self.fd, self.ifindex, frames, &mut SendScratch::default())
    }
}

/// The `PACKET_AUXDATA` of a received frame.
fn aux_status(hdr: &libc::msghdr) -> Option<libc::tpacket_auxdata> {
    control_message(hdr, libc::SOL_PACKET, libc::PACKET_AUXDATA)
}

/// The `SCM_TIMESTAMPNS` of a received frame, in ns since the epoch.
fn rx_stamp(hdr: &libc::msghdr) -> Option<u64> {
    let ts: libc::timespec = control_message(hdr, libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS)?;
    crate::timestamp::timespec_ns(&ts)
}

/// The payload of the control message (`level`, `kind`) of a received frame, if
/// it has one at least as long as a `T`. `T` must be plain data (any bytes valid).
fn control_message<T: Copy>(
    hdr: &libc::msghdr,
    level: libc::c_int,
    kind: libc::c_int,
) -> Option<T> {
    // SAFETY: hdr's control buffer was filled by recvmmsg with
    // msg_controllen valid bytes; CMSG_FIRSTHDR/NXTHDR stay within it; the
    // payload is read unaligned and only when the message is long enough.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            let cm = &*c;
            if cm.cmsg_level == level
                && cm.cmsg_type == kind
                && cm.cmsg_len as usize >= libc::CMSG_LEN(mem::size_of::<T>() as u32) as usize
            {
                return Some(std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<T>()));
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    None
}

/// The VLAN tag the kernel took off a received frame: (TPID, TCI).
fn vlan_tag(aux: libc::tpacket_auxdata) -> Option<(u16, u16)> {
    if aux.tp_status & TP_STATUS_VLAN_VALID == 0 {
        return None;
    }
    let tpid = if aux.tp_status & TP_STATUS_VLAN_TPID_VALID != 0 {
        aux.tp_vlan_tpid
    } else {
        ETH_P_8021Q
    };
    Some((tpid, aux.tp_vlan_tci))
}

/// The pending error of a socket (`SO_ERROR`, which reading clears): the
/// kernel sets `ENETDOWN` on a packet socket whose interface went away.
pub fn socket_error(fd: &impl AsRawFd) -> Option<io::Error> {
    match sys::getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_ERROR) {
        Ok(0) => None,
        Ok(e) => Some(io::Error::from_raw_os_error(e)),
        Err(e) => Some(e),
    }
}

crate::sys::fd_traits!(BatchSocket, fd);

impl PacketSocket {
    /// Receives up to `batch.capacity()` queued frames with one `recvmmsg`, without
    /// waiting; returns how many (0 when nothing is queued: one system call for a
    /// whole burst, where [`PacketSocket::recv`] takes one per frame). Frames this
    /// host sent are skipped; a frame longer than its slot is reported by
    /// [`RxBatch::truncated`]. (Here rather than in `packet`, which the batch
    /// receive builds on.)
    pub fn recv_batch(&self, batch: &mut RxBatch) -> io::Result<usize> {
        recv_batch(self.as_fd(), batch)
    }
}

/// Receives up to `batch.capacity()` queued frames on `fd` with one `recvmmsg`,
/// without waiting; returns how many (0 when nothing is queued). Frames this host
/// sent are skipped; VLAN tags are restored when the socket has `PACKET_AUXDATA`.
pub(crate) fn recv_batch(fd: BorrowedFd<'_>, batch: &mut RxBatch) -> io::Result<usize> {
    batch.count = 0;
    let cap = batch.capacity();
    let slot = batch.slot;
    let RecvHeaders { iovs, msgs } = &mut batch.headers;
    // Receive at VLAN_HLEN into each slot, so a tag can be put back by
    // moving the two MAC addresses down.
    iovs.clear();
    for i in 0..cap {
        iovs.push(libc::iovec {
            // SAFETY: i * slot + VLAN_HLEN is within bytes (cap * slot
            // bytes, slot > VLAN_HLEN).
            iov_base: unsafe { batch.bytes.as_mut_ptr().add(i * slot + VLAN_HLEN) }
                .cast::<libc::c_void>(),
            iov_len: slot - VLAN_HLEN,
        });
    }
    // Every field the kernel reads is set again: it wrote lengths and flags back
    // in the last call.
    for (i, m) in msgs.iter_mut().enumerate() {
        m.msg_len = 0;
        m.msg_hdr.msg_flags = 0;
        m.msg_hdr.msg_name = (&mut batch.names[i] as *mut libc::sockaddr_ll).cast();
        m.msg_hdr.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        m.msg_hdr.msg_iov = &mut iovs[i];
        m.msg_hdr.msg_iovlen = 1;
        // SAFETY: within controls (cap * CONTROL_LEN bytes).
        m.msg_hdr.msg_control = unsafe { batch.controls.as_mut_ptr().add(i * CONTROL_LEN) }.cast();
        m.msg_hdr.msg_controllen = CONTROL_LEN as _;
    }
    let n = loop {
        // SAFETY: msgs holds cap valid headers whose buffers (iovs,
        // names, controls) outlive the call; no timeout.
        let n = unsafe {
            libc::recvmmsg(
                fd.as_raw_fd(),
                msgs.as_mut_ptr(),
                cap as libc::c_uint,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                std::ptr::null_mut(),
            )
        };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(0),
            _ => return Err(e),
        }
    };
    // Compact: keep incoming frames, restore tags, in slot order.
    let mut kept = 0;
    for (i, m) in msgs.iter().enumerate().take(n) {
        if batch.names[i].sll_pkttype == PACKET_OUTGOING {
            continue;
        }
        let wire_len = m.msg_len as usize;
        let tag = aux_status(&m.msg_hdr).and_then(vlan_tag);
        let src = i * slot + VLAN_HLEN;
        let dst = kept * slot;
        let body = wire_len.min(slot - VLAN_HLEN);
        let len = match tag {
            Some((tpid, tci)) if body >= ETH_HLEN => {
                // [dst] = MACs, tag, then EtherType and the rest.
                batch.bytes.copy_within(src..src + 12, dst);
                batch.bytes[dst + 12..dst + 14].copy_from_slice(&tpid.to_be_bytes());
                batch.bytes[dst + 14..dst + 16].copy_from_slice(&tci.to_be_bytes());
                batch
                    .bytes
                    .copy_within(src + 12..src + body, dst + 12 + VLAN_HLEN);
                wire_len + VLAN_HLEN
            }
            _ => {
                batch.bytes.copy_within(src..src + body, dst);
                wire_len
            }
        };
        // A cut frame reports more than the slot holds.
        batch.lens[kept] = if wire_len > slot - VLAN_HLEN {
            len.max(slot + 1)
        } else {
            len
        };
        batch.names[kept] = batch.names[i];
        batch.stamps[kept] = rx_stamp(&m.msg_hdr);
        kept += 1;
    }
    batch.count = kept;
    Ok(kept)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::bpf_interp::run;

    fn eth(ty: u16, rest: &[u8]) -> Vec<u8> {
        let mut f = vec![0x01, 0x80, 0xc2, 0, 0, 1, 2, 0, 0, 0, 0, 1];
        f.extend_from_slice(&ty.to_be_bytes());
        f.extend_from_slice(rest);
        f
    }

    fn ipv4_udp(ihl: u8, frag: u16, dport: u16) -> Vec<u8> {
        let mut ip = vec![0u8; usize::from(ihl) * 4];
        ip[0] = 0x40 | ihl;
        ip[6..8].copy_from_slice(&frag.to_be_bytes());
        ip[9] = 17;
        let mut udp = vec![0u8; 8];
        udp[0..2].copy_from_slice(&49152u16.to_be_bytes());
        udp[2..4].copy_from_slice(&dport.to_be_bytes());
        ip.extend_from_slice(&udp);
        eth(0x0800, &ip)
    }

    fn ipv6(next: u8, dport: Option<u16>) -> Vec<u8> {
        let mut ip = vec![0u8; 40];
        ip[0] = 0x60;
        ip[6] = next;
        let mut udp = vec![0u8; 8];
        if let Some(p) = dport {
            udp[2..4].copy_from_slice(&p.to_be_bytes());
        }
        ip.extend_from_slice(&udp);
        eth(0x86dd, &ip)
    }

    fn accepts(f: Filter, frame: &[u8]) -> bool {
        run(&f.program(), frame) != 0
    }

    #[test]
    fn mac_control_and_mpls_filters_take_their_ethertype_only() {
        assert!(accepts(Filter::MacControl, &eth(0x8808, &[1, 1, 0, 0])));
        assert!(!accepts(Filter::MacControl, &eth(0x88cc, &[0; 4])));
        assert!(accepts(Filter::Mpls, &eth(0x8847, &[0; 4])));
        assert!(!accepts(Filter::Mpls, &eth(0x8848, &[0; 4])));
        assert!(!accepts(Filter::MacControl, &[0u8; 10]), "short frame");
        assert!(accepts(Filter::All, &[0u8; 1]));
    }

    #[test]
    fn srv6_filter_takes_routing_header_and_ethernet_next_headers() {
        assert!(accepts(Filter::Srv6, &ipv6(43, None)));
        assert!(accepts(Filter::Srv6, &ipv6(143, None)));
        assert!(!accepts(Filter::Srv6, &ipv6(58, None)), "ICMPv6");
        assert!(!accepts(Filter::Srv6, &ipv4_udp(5, 0, 4789)));
    }

    #[test]
    fn udp_filter_takes_the_port_over_both_families() {
        let f = Filter::Udp { port: 4789 };
        assert!(accepts(f, &ipv4_udp(5, 0, 4789)));
        assert!(accepts(f, &ipv4_udp(7, 0, 4789)), "IPv4 options");
        assert!(
            accepts(f, &ipv4_udp(5, 0x4000, 4789)),
            "DF is not a fragment"
        );
        assert!(!accepts(f, &ipv4_udp(5, 0x0001, 4789)), "later fragment");
        assert!(!accepts(f, &ipv4_udp(5, 0, 8472)));
        assert!(accepts(f, &ipv6(17, Some(4789))));
        assert!(!accepts(f, &ipv6(17, Some(53))));
        assert!(!accepts(f, &ipv6(6, Some(4789))), "TCP");
        assert!(!accepts(f, &eth(0x8808, &[0; 50])));
        // UDP to the port in IPv6's layout, but not IPv6.
        let mut not_ip = ipv6(17, Some(4789));
        not_ip[12..14].copy_from_slice(&0x88ccu16.to_be_bytes());
        assert!(!accepts(f, &not_ip));
    }
}

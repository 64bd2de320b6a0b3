//! One `AF_PACKET` socket per port, for LLDP and MAC Control (PFC) frames.
//!
//! [`PacketSocket::open`] does, in this order:
//! 1. `socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)`:
//!    protocol 0, so the socket receives nothing until it is bound;
//! 2. `SO_ATTACH_FILTER`: a classic BPF program that accepts EtherType 0x88cc
//!    (LLDP) and 0x8808 (MAC Control), at offset 12 or, behind an 802.1Q tag
//!    left in the frame, at offset 16 ([`FILTER`]);
//! 3. `SO_PRIORITY` 7 (`TC_PRIO_CONTROL`), so a DCB NIC sends our LLDPDUs in
//!    its control class; `PACKET_IGNORE_OUTGOING` (Linux 4.20+), so frames
//!    leaving the interface are not shown to us (the kernel never loops a
//!    frame back to the socket that sent it, but shows it to every other
//!    packet socket on the interface, e.g. another LLDP agent's);
//!    [`PacketSocket::recv`] also drops `PACKET_OUTGOING` itself for older
//!    kernels;
//! 4. `bind` to the interface with protocol `ETH_P_ALL`;
//! 5. `PACKET_ADD_MEMBERSHIP` (`PACKET_MR_MULTICAST`) for 01:80:c2:00:00:0e
//!    (LLDP, nearest bridge) and 01:80:c2:00:00:01 (MAC Control), so a NIC
//!    with a multicast filter passes them up;
//! 6. drain anything queued before the filter (nothing should be: the socket
//!    had no protocol until step 4).
//!
//! VLAN tags: the receive path of Linux moves an 802.1Q tag into skb
//! metadata (`skb_vlan_untag()` in software, or the NIC in hardware) before
//! packet sockets see the frame, so the filter and [`PacketSocket::recv`] see
//! the frame *without* its tag (the tag would be in `PACKET_AUXDATA`, which
//! is not enabled). A tagged LLDP frame is therefore received, untagged. The
//! offset-16 branch of the filter only matters where a tag stays inline (for
//! instance an outgoing frame seen on the tap). 802.1ad (0x88a8) outer tags
//! are not looked through.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::cbpf::{BPF_JEQ_K, BPF_LD_H_ABS, BPF_RET_K};
use crate::sys;

/// LLDP EtherType.
pub const ETH_P_LLDP: u16 = 0x88cc;
/// MAC Control (PAUSE, PFC) EtherType.
pub const ETH_P_MAC_CONTROL: u16 = 0x8808;
/// LLDP nearest-bridge group address.
pub const LLDP_MULTICAST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];
/// MAC Control (PAUSE/PFC) group address.
pub const MAC_CONTROL_MULTICAST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
/// `TC_PRIO_CONTROL`, the socket priority of every socket opened here.
pub const SOCKET_PRIORITY: i32 = 7;

pub(crate) const ETH_P_ALL: u16 = 0x0003;
pub(crate) const ETH_P_8021Q: u16 = 0x8100;
pub(crate) const ETH_HLEN: usize = 14;
pub(crate) const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
pub(crate) const PACKET_OUTGOING: u8 = 4;

const fn insn(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The receive filter: accept (whole frame) LLDP and MAC Control, untagged
/// or behind one inline 802.1Q tag; drop everything else. A load beyond the
/// end of a short frame makes classic BPF return 0 (drop).
///
/// ```text
/// 0: ldh [12]
/// 1: jeq #0x88cc   jt 8  jf 2
/// 2: jeq #0x8808   jt 8  jf 3
/// 3: jeq #0x8100   jt 4  jf 7
/// 4: ldh [16]
/// 5: jeq #0x88cc   jt 8  jf 6
/// 6: jeq #0x8808   jt 8  jf 7
/// 7: ret #0
/// 8: ret #0xffffffff
/// ```
pub const FILTER: [libc::sock_filter; 9] = [
    insn(BPF_LD_H_ABS, 0, 0, 12),
    insn(BPF_JEQ_K, 6, 0, ETH_P_LLDP as u32),
    insn(BPF_JEQ_K, 5, 0, ETH_P_MAC_CONTROL as u32),
    insn(BPF_JEQ_K, 0, 3, ETH_P_8021Q as u32),
    insn(BPF_LD_H_ABS, 0, 0, 16),
    insn(BPF_JEQ_K, 2, 0, ETH_P_LLDP as u32),
    insn(BPF_JEQ_K, 1, 0, ETH_P_MAC_CONTROL as u32),
    insn(BPF_RET_K, 0, 0, 0),
    insn(BPF_RET_K, 0, 0, u32::MAX),
];

/// Kernel counters of a packet socket since the last read
/// (`PACKET_STATISTICS`, which resets them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketStats {
    /// Frames the filter accepted.
    pub packets: u64,
    /// Of those, frames dropped because the receive buffer was full.
    pub drops: u64,
}

/// `PACKET_STATISTICS` of a packet socket (read and reset).
pub(crate) fn packet_stats(fd: &impl AsRawFd) -> io::Result<SocketStats> {
    let mut st = libc::tpacket_stats {
        tp_packets: 0,
        tp_drops: 0,
    };
    let mut len = mem::size_of::<libc::tpacket_stats>() as libc::socklen_t;
    // SAFETY: st and len are valid for writes; the kernel writes at most len
    // bytes.
    sys::cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats).cast::<libc::c_void>(),
            &mut len,
        )
    })?;
    Ok(SocketStats {
        packets: st.tp_packets.into(),
        drops: st.tp_drops.into(),
    })
}

/// Sets the receive buffer to `bytes`: `SO_RCVBUFFORCE` (root, or `CAP_NET_ADMIN`:
/// past `net.core.rmem_max`), else `SO_RCVBUF` (capped at `rmem_max`).
pub(crate) fn set_rcvbuf(fd: &impl AsRawFd, bytes: usize) -> io::Result<()> {
    let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    if sys::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &v).is_err() {
        sys::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &v)?;
    }
    Ok(())
}

/// The receive buffer the kernel granted (`SO_RCVBUF`: twice what was asked).
pub(crate) fn rcvbuf(fd: &impl AsRawFd) -> io::Result<usize> {
    Ok(sys::getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF)?.max(0) as usize)
}

/// What an LLDP agent's socket needs: `SO_PRIORITY` 7, so a DCB NIC sends its frames
/// in the control class, and `PACKET_IGNORE_OUTGOING`, so frames leaving the host
/// are not shown to it (refused before Linux 4.20, ENOPROTOOPT: the receive paths
/// drop `PACKET_OUTGOING` themselves in any case).
pub(crate) fn control_class_incoming_only(fd: &impl AsRawFd) -> io::Result<()> {
    sys::setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_PRIORITY,
        &(SOCKET_PRIORITY as libc::c_int),
    )?;
    let _ = sys::setsockopt(
        fd,
        libc::SOL_PACKET,
        PACKET_IGNORE_OUTGOING,
        &(1 as libc::c_int),
    );
    Ok(())
}

/// A non-blocking `AF_PACKET` socket bound to one interface that reads and
/// writes whole Ethernet frames (LLDP and MAC Control only).
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: u32,
}

pub(crate) fn sockaddr_ll(ifindex: libc::c_int, protocol_be: u16) -> libc::sockaddr_ll {
    // SAFETY: sockaddr_ll is plain data; all-zero is a valid value.
    let mut sa: libc::sockaddr_ll = unsafe { mem::zeroed() };
    sa.sll_family = libc::AF_PACKET as libc::c_ushort;
    sa.sll_protocol = protocol_be;
    sa.sll_ifindex = ifindex;
    sa
}

/// `ifindex` as the kernel's `int`, refusing 0 (which would bind to every interface).
pub(crate) fn checked_ifindex(ifindex: u32) -> io::Result<libc::c_int> {
    match libc::c_int::try_from(ifindex) {
        Ok(i) if i > 0 => Ok(i),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid interface index {ifindex}"),
        )),
    }
}

/// `bind` to interface `index`, receiving EtherType `protocol` (`ETH_P_ALL`: every one).
pub(crate) fn bind(fd: &impl AsRawFd, index: libc::c_int, protocol: u16) -> io::Result<()> {
    let sa = sockaddr_ll(index, to_be_field(protocol));
    // SAFETY: sa is a valid sockaddr_ll of the length passed.
    sys::cvt(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_ll).cast::<libc::sockaddr>(),
            mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// `PACKET_ADD_MEMBERSHIP`: a multicast group (`Some(address)`) or promiscuous mode.
pub(crate) fn add_membership(
    fd: &impl AsRawFd,
    index: libc::c_int,
    group: Option<[u8; 6]>,
) -> io::Result<()> {
    membership(fd, libc::PACKET_ADD_MEMBERSHIP, index, group)
}

/// `PACKET_DROP_MEMBERSHIP`: undoes [`add_membership`].
pub(crate) fn drop_membership(
    fd: &impl AsRawFd,
    index: libc::c_int,
    group: Option<[u8; 6]>,
) -> io::Result<()> {
    membership(fd, libc::PACKET_DROP_MEMBERSHIP, index, group)
}

fn membership(
    fd: &impl AsRawFd,
    op: libc::c_int,
    index: libc::c_int,
    group: Option<[u8; 6]>,
) -> io::Result<()> {
    let mut mr = libc::packet_mreq {
        mr_ifindex: index,
        mr_type: match group {
            Some(_) => libc::PACKET_MR_MULTICAST,
            None => libc::PACKET_MR_PROMISC,
        } as libc::c_ushort,
        mr_alen: if group.is_some() { 6 } else { 0 },
        mr_address: [0; 8],
    };
    if let Some(g) = group {
        mr.mr_address[..6].copy_from_slice(&g);
    }
    sys::setsockopt(fd, libc::SOL_PACKET, op, &mr)
}

/// Where a whole Ethernet frame goes when sent on interface `ifindex`: its
/// destination MAC and EtherType, read from the frame. An error for a frame
/// shorter than an Ethernet header.
pub(crate) fn frame_address(ifindex: u32, frame: &[u8]) -> io::Result<libc::sockaddr_ll> {
    let (Some(dst), Some(ty)) = (frame.get(0..6), frame.get(12..ETH_HLEN)) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "a {}-byte frame is shorter than an Ethernet header",
                frame.len()
            ),
        ));
    };
    let ifindex = libc::c_int::try_from(ifindex).unwrap_or_default();
    let mut sa = sockaddr_ll(ifindex, u16::from_ne_bytes([ty[0], ty[1]]));
    sa.sll_halen = 6;
    sa.sll_addr[..6].copy_from_slice(dst);
    Ok(sa)
}

/// Sends one whole Ethernet frame (destination, source, EtherType, payload; no FCS)
/// on interface `ifindex`.
pub(crate) fn send_frame(
    fd: &impl AsRawFd,
    ifindex: u32,
    frame: &[u8],
    what: &str,
) -> io::Result<()> {
    sys::sendto_all(fd, frame, &frame_address(ifindex, frame)?, what)
}

/// `SO_ATTACH_FILTER`: `prog` becomes the socket's receive filter. The kernel copies
/// the program during the call and replaces any earlier one atomically.
pub(crate) fn attach_filter(fd: &impl AsRawFd, prog: &[libc::sock_filter]) -> io::Result<()> {
    let fprog = libc::sock_fprog {
        len: libc::c_ushort::try_from(prog.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("a filter of {} instructions", prog.len()),
            )
        })?,
        filter: prog.as_ptr().cast_mut(),
    };
    sys::setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &fprog)
}

/// `SO_TIMESTAMPNS`: each frame read comes with the time the kernel received it, on
/// the real-time clock ([`RxBatch::stamp`](crate::batch::RxBatch::stamp)).
pub(crate) fn stamp_receives(fd: &impl AsRawFd) -> io::Result<()> {
    sys::setsockopt(
        fd,
        libc::SOL_SOCKET,
        libc::SO_TIMESTAMPNS,
        &(1 as libc::c_int),
    )
}

fn to_be_field(ethertype: u16) -> u16 {
    // sll_protocol holds the EtherType in network byte order.
    ethertype.to_be()
}

impl PacketSocket {
    /// Opens the socket on `ifindex` (in the calling thread's network
    /// namespace). Needs `CAP_NET_RAW` (and `CAP_NET_ADMIN` for the socket
    /// priority).
    pub fn open(ifindex: u32) -> io::Result<PacketSocket> {
        PacketSocket::open_sized(ifindex, None)
    }

    /// [`open`](Self::open) with the receive buffer set to `rcvbuf` bytes (see
    /// [`set_rcvbuf`](Self::set_rcvbuf)) before the socket is bound: the first frames
    /// find it that large (a burst the kernel held, say, is not dropped for the
    /// default's room).
    pub fn open_sized(ifindex: u32, rcvbuf: Option<usize>) -> io::Result<PacketSocket> {
        PacketSocket::open_bound(
            ifindex,
            ETH_P_ALL,
            &[LLDP_MULTICAST, MAC_CONTROL_MULTICAST],
            rcvbuf,
        )
    }

    /// [`open_sized`](Self::open_sized) for one EtherType: bound to `ifindex` with
    /// `ethertype` (not `ETH_P_ALL`), so the kernel hands it that EtherType only, and a
    /// member of `group` only. Its receive buffer holds that EtherType's frames alone:
    /// a storm of another one (MAC Control frames at line rate) cannot fill it and make
    /// the kernel drop this one's (LLDPDUs). [`FILTER`] stays attached.
    pub fn open_ethertype(
        ifindex: u32,
        ethertype: u16,
        group: [u8; 6],
        rcvbuf: Option<usize>,
    ) -> io::Result<PacketSocket> {
        PacketSocket::open_bound(ifindex, ethertype, &[group], rcvbuf)
    }

    /// The one way a port's socket opens: filter and incoming-only first, the receive
    /// buffer sized, then bound to `protocol` (an EtherType, or `ETH_P_ALL`) and joined
    /// to `groups`, and whatever arrived before the filter held drained.
    fn open_bound(
        ifindex: u32,
        protocol: u16,
        groups: &[[u8; 6]],
        rcvbuf: Option<usize>,
    ) -> io::Result<PacketSocket> {
        let index = checked_ifindex(ifindex)?;
        let fd = sys::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, 0)?;
        let sock = PacketSocket { fd, ifindex };

        attach_filter(&sock, &FILTER)?;
        control_class_incoming_only(&sock)?;

        if let Some(bytes) = rcvbuf {
            set_rcvbuf(&sock, bytes)?;
        }
        bind(&sock, index, protocol)?;
        for &group in groups {
            add_membership(&sock, index, Some(group))?;
        }

        sock.drain();
        Ok(sock)
    }

    /// Discards everything queued.
    fn drain(&self) {
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: buf is valid for writes of buf.len() bytes.
            let n = unsafe {
                libc::recv(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast::<libc::c_void>(),
                    buf.len(),
                    libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                )
            };
            if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return;
            }
        }
    }

    /// The interface this socket is bound to.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The socket priority as the kernel has it (`getsockopt(SO_PRIORITY)`);
    /// [`SOCKET_PRIORITY`] after `open`.
    pub fn priority(&self) -> io::Result<i32> {
        sys::getsockopt_int(self, libc::SOL_SOCKET, libc::SO_PRIORITY)
    }

    /// Sets the receive buffer (see [`PacketSocket::rcvbuf`] for what the kernel
    /// granted): how many frames the kernel holds while nobody reads; past it, it
    /// drops them and counts them ([`PacketSocket::stats`]).
    pub fn set_rcvbuf(&self, bytes: usize) -> io::Result<()> {
        set_rcvbuf(self, bytes)
    }

    /// The receive buffer the kernel granted (`SO_RCVBUF`: twice what was asked,
    /// the kernel's own bookkeeping included).
    pub fn rcvbuf(&self) -> io::Result<usize> {
        rcvbuf(self)
    }

    /// Reads and resets the kernel's counters for this socket (`PACKET_STATISTICS`):
    /// frames the filter passed and, of those, frames dropped on a full buffer.
    pub fn stats(&self) -> io::Result<SocketStats> {
        packet_stats(self)
    }

    /// Receives one frame into `buf` and returns its length. Non-blocking:
    /// `WouldBlock` when nothing is queued. Frames this host sent are
    /// skipped. A frame longer than `buf` is consumed and reported as an
    /// `InvalidData` error, never returned truncated.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut sa = sockaddr_ll(0, 0);
            let (n, _) = crate::sys::recvfrom_trunc(&self.fd, buf, &mut sa)?;
            if sa.sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            if n > buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "dropped a {n}-byte frame that does not fit the {}-byte buffer",
                        buf.len()
                    ),
                ));
            }
            return Ok(n);
        }
    }

    /// Sends one whole Ethernet frame (destination, source, EtherType,
    /// payload; no FCS) on the bound interface.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        send_frame(&self.fd, self.ifindex, frame, "packet sendto")
    }

    /// `SO_TIMESTAMPNS`: each frame read comes with the time the kernel received it
    /// ([`RxBatch::stamp`](crate::batch::RxBatch::stamp)).
    pub fn stamp_receives(&self) -> io::Result<()> {
        stamp_receives(self)
    }

    /// `PACKET_QDISC_BYPASS`: frames sent go straight to the driver, past the
    /// interface's qdisc and unseen by its other packet sockets (lldpad's, a capture's);
    /// only the other end of the link receives them. For tests that put a device on a
    /// link without the local agent hearing it.
    pub fn bypass_qdisc(&self) -> io::Result<()> {
        sys::setsockopt(
            self,
            libc::SOL_PACKET,
            libc::PACKET_QDISC_BYPASS,
            &(1 as libc::c_int),
        )
    }
}

crate::sys::fd_traits!(PacketSocket, fd);

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn run(frame: &[u8]) -> u32 {
        crate::bpf_interp::run(&FILTER, frame)
    }

    fn frame(types: &[u16]) -> Vec<u8> {
        let mut f = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1];
        for t in types {
            f.extend_from_slice(&t.to_be_bytes());
        }
        f.resize(60, 0);
        f
    }

    #[test]
    fn filter_accepts_lldp_and_mac_control_only() {
        assert_eq!(run(&frame(&[0x88cc])), u32::MAX);
        assert_eq!(run(&frame(&[0x8808])), u32::MAX);
        assert_eq!(run(&frame(&[0x8100, 0x0003, 0x88cc])), u32::MAX);
        assert_eq!(run(&frame(&[0x8100, 0x0003, 0x8808])), u32::MAX);
        assert_eq!(run(&frame(&[0x0800])), 0);
        assert_eq!(run(&frame(&[0x0806])), 0);
        assert_eq!(run(&frame(&[0x8100, 0x0003, 0x0800])), 0);
        assert_eq!(run(&frame(&[0x88a8, 0x0003, 0x88cc])), 0);
        // Too short to hold an EtherType: the load fails, the frame is dropped.
        assert_eq!(run(&[0u8; 13]), 0);
        assert_eq!(run(&frame(&[0x8100])[..16]), 0);
    }

    #[test]
    fn open_rejects_ifindex_zero() {
        let e = PacketSocket::open(0).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn open_ethertype_rejects_ifindex_zero() {
        let e = PacketSocket::open_ethertype(0, ETH_P_LLDP, LLDP_MULTICAST, None).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}

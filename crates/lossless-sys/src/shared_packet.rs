//! One `AF_PACKET` socket for one EtherType on every port of the namespace, so the
//! number of packet sockets does not grow with the number of ports.
//!
//! Why: the kernel walks every packet socket of a network namespace on each device
//! event (`packet_notifier`, under RTNL). With a socket per port, 4,096 ports made a
//! simultaneous link-up of the namespace 2.6 times slower than with none; one socket
//! per EtherType costs nothing measurable.
//!
//! [`SharedPacketSocket::open`] does, in this order:
//! 1. `socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0)`: protocol 0, nothing queued
//!    until it is bound;
//! 2. `SO_ATTACH_FILTER`: a classic BPF program that drops frames of the interfaces
//!    excluded ([`SharedPacketSocket::exclude`]: ports that read their own socket,
//!    interfaces that are not ports) and accepts the rest;
//! 3. `SO_PRIORITY` 7, `PACKET_IGNORE_OUTGOING` (frames sent are not shown to
//!    packet sockets; `recv_batch` drops `PACKET_OUTGOING` itself for older kernels),
//!    `SO_TIMESTAMPNS` (each frame's receive time, to tell a frame the port's own
//!    socket also received from one it did not);
//! 4. `bind` to interface 0 (every interface) with the EtherType, so the kernel
//!    hands the socket that EtherType only (its protocol hash), nothing else the host
//!    receives;
//!
//! and each port then [`joins`](SharedPacketSocket::join) the group address on its
//! interface (`PACKET_ADD_MEMBERSHIP`), so a NIC with a multicast filter passes the
//! frames up. A frame received is read with the interface it came from.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use crate::batch::RxBatch;
use crate::cbpf::{BPF_JEQ_K, BPF_LD_W_ABS, BPF_RET_K, LOAD_IFINDEX};
use crate::packet::{
    add_membership, attach_filter, bind, checked_ifindex, control_class_incoming_only,
    drop_membership, packet_stats, rcvbuf, send_frame, set_rcvbuf, stamp_receives, SocketStats,
};
use crate::sys;

/// At most this many interfaces are excluded (two instructions each; the kernel
/// takes 4,096 instructions, and the list runs for every frame of this EtherType).
pub const MAX_EXCLUDED: usize = 1024;

/// A non-blocking `AF_PACKET` socket receiving one EtherType from every interface of
/// the namespace but those excluded, and sending on any interface.
#[derive(Debug)]
pub struct SharedPacketSocket {
    fd: OwnedFd,
    ethertype: u16,
    group: [u8; 6],
}

/// The filter dropping frames from `excluded` interfaces:
///
/// ```text
/// 0: ld #ifindex
/// 1: jeq #x1  jt 2  jf 3
/// 2: ret #0
/// 3: jeq #x2  jt 4  jf 5
/// 4: ret #0
///    ...
/// n: ret #0xffffffff
/// ```
pub fn exclusion_filter(excluded: &[u32]) -> Vec<libc::sock_filter> {
    let insn = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let mut prog = vec![insn(BPF_LD_W_ABS, 0, 0, LOAD_IFINDEX)];
    for &x in excluded {
        prog.push(insn(BPF_JEQ_K, 0, 1, x));
        prog.push(insn(BPF_RET_K, 0, 0, 0));
    }
    prog.push(insn(BPF_RET_K, 0, 0, u32::MAX));
    prog
}

impl SharedPacketSocket {
    /// Opens the socket for `ethertype`, whose frames are sent to `group` (in the
    /// calling thread's network namespace). Needs `CAP_NET_RAW` (and `CAP_NET_ADMIN`
    /// for the socket priority).
    pub fn open(ethertype: u16, group: [u8; 6]) -> io::Result<SharedPacketSocket> {
        let fd = sys::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, 0)?;
        let sock = SharedPacketSocket {
            fd,
            ethertype,
            group,
        };
        sock.exclude(&[])?;
        control_class_incoming_only(&sock)?;
        stamp_receives(&sock)?;
        bind(&sock, 0, ethertype)?;
        Ok(sock)
    }

    /// The EtherType this socket receives.
    pub fn ethertype(&self) -> u16 {
        self.ethertype
    }

    /// From now on, frames from these interfaces are dropped in the kernel (before
    /// they cost a copy); the list replaces the last one. At most [`MAX_EXCLUDED`].
    pub fn exclude(&self, ifindexes: &[u32]) -> io::Result<()> {
        if ifindexes.len() > MAX_EXCLUDED {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} interfaces to exclude from the shared packet socket, at most {MAX_EXCLUDED}",
                    ifindexes.len()
                ),
            ));
        }
        attach_filter(self, &exclusion_filter(ifindexes))
    }

    /// Asks `ifindex`'s NIC to pass the group address up to this socket.
    pub fn join(&self, ifindex: u32) -> io::Result<()> {
        add_membership(self, checked_ifindex(ifindex)?, Some(self.group))
    }

    /// Undoes [`join`](Self::join) (an interface gone has dropped it already: its
    /// `ENODEV`/`EADDRNOTAVAIL` is not an error).
    pub fn leave(&self, ifindex: u32) -> io::Result<()> {
        match drop_membership(self, checked_ifindex(ifindex)?, Some(self.group)) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENODEV | libc::EADDRNOTAVAIL)) => {
                Ok(())
            }
            r => r,
        }
    }

    /// Reads up to the batch's capacity of frames; each with its interface
    /// ([`RxBatch::ifindex`]) and receive time ([`RxBatch::stamp`]).
    pub fn recv_batch(&self, batch: &mut RxBatch) -> io::Result<usize> {
        crate::batch::recv_batch(self.fd.as_fd(), batch)
    }

    /// Sends one whole Ethernet frame on `ifindex`.
    pub fn send(&self, ifindex: u32, frame: &[u8]) -> io::Result<()> {
        checked_ifindex(ifindex)?;
        send_frame(&self.fd, ifindex, frame, "shared packet sendto")
    }

    pub fn set_rcvbuf(&self, bytes: usize) -> io::Result<()> {
        set_rcvbuf(self, bytes)
    }

    /// The receive buffer the kernel granted (`SO_RCVBUF`, which it doubles).
    pub fn rcvbuf(&self) -> io::Result<usize> {
        rcvbuf(self)
    }

    /// Reads and resets the kernel's counters (`PACKET_STATISTICS`).
    pub fn stats(&self) -> io::Result<SocketStats> {
        packet_stats(self)
    }
}

crate::sys::fd_traits!(SharedPacketSocket, fd);

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::bpf_interp::run_from;

    #[test]
    fn the_filter_drops_the_excluded_interfaces_and_accepts_the_rest() {
        let frame = [0u8; 60];
        let prog = exclusion_filter(&[7, 9]);
        for ifindex in 1..20 {
            let accepted = run_from(&prog, &frame, ifindex) == u32::MAX;
            assert_eq!(accepted, ifindex != 7 && ifindex != 9, "ifindex {ifindex}");
        }
        assert_eq!(run_from(&exclusion_filter(&[]), &frame, 7), u32::MAX);
        // The longest list: its last entry still reached, within the kernel's limit.
        let all: Vec<u32> = (1..=MAX_EXCLUDED as u32).collect();
        let prog = exclusion_filter(&all);
        assert!(prog.len() <= 4096);
        assert_eq!(run_from(&prog, &frame, MAX_EXCLUDED as u32), 0);
        assert_eq!(run_from(&prog, &frame, MAX_EXCLUDED as u32 + 1), u32::MAX);
    }
}

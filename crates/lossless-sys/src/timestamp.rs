//! Timestamped link-delay measurement frames (adaptive PFC headroom): one `AF_PACKET`
//! socket per port for EtherType 0x88B5 with `SO_TIMESTAMPING`.
//!
//! [`MeasureSocket::open`] picks the best clock the interface offers
//! (`ETHTOOL_GET_TS_INFO`):
//!
//! - **hardware**: the NIC stamps frames on its PTP clock at the MAC. Enabled with
//!   `SIOCSHWTSTAMP` (transmit on, receive filter "all"), which changes the NIC's
//!   setting for every user of it (as `ptp4l` does);
//! - **software**: the kernel stamps received frames in `__netif_receive_skb` and sent
//!   ones in the driver's transmit routine (`skb_tx_timestamp`), on `CLOCK_REALTIME`;
//! - **userspace** transmit timestamps where the driver has no `skb_tx_timestamp`: the
//!   caller reads [`realtime_ps`] right after the send. Less precise (the send path's
//!   scheduling is in it), and said so in the status.
//!
//! Receive timestamps arrive with each frame (`SCM_TIMESTAMPING` control message);
//! transmit timestamps come back on the socket's error queue (`MSG_ERRQUEUE`) with a copy
//! of the frame, which says which message it belongs to. The error queue signals
//! `EPOLLERR`, so a tokio `AsyncFd` waits on it with `Interest::ERROR`.
//!
//! Timestamps are returned as picoseconds modulo 2^64: only differences on one clock are
//! used, and wrapping subtraction keeps those exact.

use std::io;
use std::mem;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use crate::packet::{
    add_membership, bind, checked_ifindex, send_frame, ETH_P_ALL, LLDP_MULTICAST,
    PACKET_IGNORE_OUTGOING, PACKET_OUTGOING,
};
use crate::sys;

/// IEEE 802 Local Experimental EtherType 1, which the measurement frames use.
pub const ETH_P_MEASURE: u16 = 0x88b5;

// <linux/net_tstamp.h>
pub(crate) const SOF_TIMESTAMPING_TX_HARDWARE: u32 = 1 << 0;
pub(crate) const SOF_TIMESTAMPING_TX_SOFTWARE: u32 = 1 << 1;
pub(crate) const SOF_TIMESTAMPING_RX_HARDWARE: u32 = 1 << 2;
pub(crate) const SOF_TIMESTAMPING_RX_SOFTWARE: u32 = 1 << 3;
pub(crate) const SOF_TIMESTAMPING_SOFTWARE: u32 = 1 << 4;
pub(crate) const SOF_TIMESTAMPING_RAW_HARDWARE: u32 = 1 << 6;
// <asm-generic/socket.h>: SO_TIMESTAMPING_OLD, whose control message carries three
// `struct timespec` of the native (64-bit) layout.
pub(crate) const SO_TIMESTAMPING: libc::c_int = 37;
pub(crate) const SCM_TIMESTAMPING: libc::c_int = SO_TIMESTAMPING;
// <linux/ethtool.h>
pub(crate) const ETHTOOL_GET_TS_INFO: u32 = 0x41;

/// `struct ethtool_ts_info` (<linux/ethtool.h>).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EthtoolTsInfo {
    pub cmd: u32,
    pub so_timestamping: u32,
    pub phc_index: i32,
    pub tx_types: u32,
    pub tx_reserved: [u32; 3],
    pub rx_filters: u32,
    pub rx_reserved: [u32; 3],
}

/// `struct scm_timestamping` (<linux/errqueue.h>): software, (deprecated), hardware.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScmTimestamping {
    pub ts: [libc::timespec; 3],
}

/// Which clock stamps the frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// The NIC's PTP hardware clock, at the MAC.
    Hardware,
    /// The kernel, `CLOCK_REALTIME`, in the network stack and driver.
    Software,
    /// The caller, `CLOCK_REALTIME`, right after `send` (transmit only).
    Userspace,
}

/// What the caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimestampMode {
    /// Hardware where the NIC offers it, else software.
    #[default]
    Auto,
    /// Software only, never touching the NIC's timestamping setting.
    Software,
    /// Hardware or fail.
    Hardware,
}

/// The clocks in use on a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Clocks {
    pub rx: Clock,
    pub tx: Clock,
}

/// A non-blocking, timestamping `AF_PACKET` socket for measurement frames.
#[derive(Debug)]
pub struct MeasureSocket {
    fd: OwnedFd,
    ifindex: u32,
    clocks: Clocks,
}

/// `CLOCK_REALTIME` in picoseconds modulo 2^64: the software timestamps' clock.
pub fn realtime_ps() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    timespec_ps(&ts)
}

/// Blocks until a frame is queued on any of `socks` or `timeout` passes (`ppoll`,
/// nanosecond timeout); true when one is readable.
pub fn wait_readable(socks: &[&MeasureSocket], timeout: std::time::Duration) -> io::Result<bool> {
    let fds: Vec<_> = socks.iter().map(|s| s.fd.as_fd()).collect();
    crate::sys::wait_any(&fds, Some(timeout))
}

/// Asks the kernel to wake this thread's timers within `ns` nanoseconds of their
/// deadline (`PR_SET_TIMERSLACK`; the default slack is 50 us, too coarse for a delay
/// line that must hold frames for 10 us).
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects this thread.
    sys::cvt(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// Runs this thread under `SCHED_FIFO` at `priority` (1..=99), so it preempts ordinary
/// work the moment its timer fires: a delay line's departures must not wait for a
/// compiler to yield the CPU. Needs `CAP_SYS_NICE`.
pub fn set_realtime_priority(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: param is a valid sched_param; pid 0 is the calling thread.
    sys::cvt(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// A real-time stamp in nanoseconds since the epoch; None before it.
pub(crate) fn timespec_ns(ts: &libc::timespec) -> Option<u64> {
    let s = u64::try_from(ts.tv_sec).ok()?;
    let ns = u64::try_from(ts.tv_nsec).ok()?;
    Some(s * 1_000_000_000 + ns)
}

pub(crate) fn timespec_ps(ts: &libc::timespec) -> u64 {
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000_000)
        .wrapping_add((ts.tv_nsec as u64).wrapping_mul(1000))
}

pub(crate) fn ifreq_for(name: &str) -> io::Result<libc::ifreq> {
    let cname = sys::ifname_cstring(name)?;
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut ifr: libc::ifreq = unsafe { mem::zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(cname.as_bytes()) {
        *d = *s as libc::c_char;
    }
    Ok(ifr)
}

/// `ioctl(SIOCETHTOOL, ETHTOOL_GET_TS_INFO)`: the timestamping the interface offers.
pub(crate) fn ts_info(fd: &impl AsRawFd, name: &str) -> io::Result<EthtoolTsInfo> {
    let mut info = EthtoolTsInfo {
        cmd: ETHTOOL_GET_TS_INFO,
        ..Default::default()
    };
    let mut ifr = ifreq_for(name)?;
    ifr.ifr_ifru.ifru_data = (&mut info as *mut EthtoolTsInfo).cast::<libc::c_char>();
    // SAFETY: ifr names the interface and points at `info`, a live ethtool_ts_info
    // the kernel fills in; both outlive the call.
    sys::cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCETHTOOL as _, &mut ifr) })?;
    Ok(info)
}

/// `ioctl(SIOCSHWTSTAMP)`: hardware transmit timestamps on, every received frame stamped.
fn enable_hardware(fd: &impl AsRawFd, name: &str) -> io::Result<()> {
    let mut cfg = libc::hwtstamp_config {
        flags: 0,
        tx_type: libc::HWTSTAMP_TX_ON as libc::c_int,
        rx_filter: libc::HWTSTAMP_FILTER_ALL as libc::c_int,
    };
    let mut ifr = ifreq_for(name)?;
    ifr.ifr_ifru.ifru_data = (&mut cfg as *mut libc::hwtstamp_config).cast::<libc::c_char>();
    // SAFETY: as in ts_info, with a hwtstamp_config the driver reads and updates.
    sys::cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCSHWTSTAMP as _, &mut ifr) })?;
    Ok(())
}

/// Software timestamps: receive always, transmit where the driver stamps
/// (`skb_tx_timestamp`), else the caller's clock.
fn software(tx_software: bool) -> (u32, Clocks) {
    let tx = if tx_software {
        SOF_TIMESTAMPING_TX_SOFTWARE
    } else {
        0
    };
    (
        SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE | tx,
        Clocks {
            rx: Clock::Software,
            tx: if tx_software {
                Clock::Software
            } else {
                Clock::Userspace
            },
        },
    )
}

impl MeasureSocket {
    /// Opens the socket on interface `name` (index `ifindex`) and turns on the best
    /// timestamping `mode` allows. Needs `CAP_NET_RAW` (and `CAP_NET_ADMIN` for
    /// hardware timestamps).
    pub fn open(ifindex: u32, name: &str, mode: TimestampMode) -> io::Result<MeasureSocket> {
        checked_ifindex(ifindex)?;
        let fd = sys::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, 0)?;
        // Interfaces without the ethtool op (or namespaces without it) offer nothing
        // beyond what the stack always does: software receive timestamps.
        let caps = ts_info(&fd, name).map(|i| i.so_timestamping).unwrap_or(0);
        let hw_caps = SOF_TIMESTAMPING_TX_HARDWARE
            | SOF_TIMESTAMPING_RX_HARDWARE
            | SOF_TIMESTAMPING_RAW_HARDWARE;
        let hardware = match mode {
            TimestampMode::Software => false,
            TimestampMode::Auto => caps & hw_caps == hw_caps && enable_hardware(&fd, name).is_ok(),
            TimestampMode::Hardware => {
                if caps & hw_caps != hw_caps {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        format!("{name} offers no hardware timestamps (so_timestamping {caps:#x})"),
                    ));
                }
                enable_hardware(&fd, name)?;
                true
            }
        };
        let (flags, clocks) = if hardware {
            let hw = Clocks {
                rx: Clock::Hardware,
                tx: Clock::Hardware,
            };
            (hw_caps, hw)
        } else {
            software(caps & SOF_TIMESTAMPING_TX_SOFTWARE != 0)
        };
        // Measurement frames are control traffic, like LLDP.
        sys::setsockopt(
            &fd,
            libc::SOL_SOCKET,
            libc::SO_PRIORITY,
            &crate::packet::SOCKET_PRIORITY,
        )?;
        // Bound to the EtherType: the kernel delivers nothing else to this socket.
        Self::finish(
            fd,
            ifindex,
            flags,
            clocks,
            ETH_P_MEASURE,
            Some(LLDP_MULTICAST),
        )
    }

    /// A socket that receives every frame arriving on the interface (not those it
    /// sends), each with its software receive timestamp, and sends whole frames: the
    /// two ends of a userspace delay line (`lossless-delayline`).
    pub fn open_all(ifindex: u32, name: &str) -> io::Result<MeasureSocket> {
        checked_ifindex(ifindex)?;
        let fd = sys::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK, 0)?;
        let caps = ts_info(&fd, name).map(|i| i.so_timestamping).unwrap_or(0);
        let (flags, clocks) = software(caps & SOF_TIMESTAMPING_TX_SOFTWARE != 0);
        Self::finish(fd, ifindex, flags, clocks, ETH_P_ALL, None)
    }

    /// The steps both kinds share: timestamping flags, no outgoing frames, bind to
    /// `protocol`, join `group` (None: promiscuous).
    fn finish(
        fd: OwnedFd,
        ifindex: u32,
        flags: u32,
        clocks: Clocks,
        protocol: u16,
        group: Option<[u8; 6]>,
    ) -> io::Result<MeasureSocket> {
        let index = checked_ifindex(ifindex)?;
        sys::setsockopt(&fd, libc::SOL_SOCKET, SO_TIMESTAMPING, &flags)?;
        // Refused before Linux 4.20; recv() drops outgoing frames in any case.
        let _ = sys::setsockopt(&fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32);
        bind(&fd, index, protocol)?;
        add_membership(&fd, index, group)?;
        Ok(MeasureSocket {
            fd,
            ifindex,
            clocks,
        })
    }

    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// The clocks in use: what the measurement's precision rests on.
    pub fn clocks(&self) -> Clocks {
        self.clocks
    }

    /// Sends one whole Ethernet frame. Its transmit timestamp follows on the error
    /// queue ([`MeasureSocket::recv_tx_timestamp`]), unless `clocks().tx` is
    /// `Userspace`: then the caller takes [`realtime_ps`] itself.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        send_frame(&self.fd, self.ifindex, frame, "measurement sendto")
    }

    /// Receives one frame and its receive timestamp (`None` if the kernel gave none).
    /// `WouldBlock` when nothing is queued; frames longer than `buf` are an error.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
        loop {
            let mut sa = crate::packet::sockaddr_ll(0, 0);
            let (n, ts) = self.recvmsg(buf, Some(&mut sa), 0)?;
            if sa.sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            if n > buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "dropped a {n}-byte frame that does not fit {} bytes",
                        buf.len()
                    ),
                ));
            }
            return Ok((n, ts));
        }
    }

    /// One transmit timestamp from the error queue: the copy of the frame it belongs
    /// to (in `buf`; its length returned) and the timestamp. `WouldBlock` when none.
    pub fn recv_tx_timestamp(&self, buf: &mut [u8]) -> io::Result<(usize, u64)> {
        loop {
            let (n, ts) = self.recvmsg(buf, None, libc::MSG_ERRQUEUE)?;
            // Entries without a timestamp (none are expected) are skipped.
            if let Some(ts) = ts {
                return Ok((n.min(buf.len()), ts));
            }
        }
    }

    fn recvmsg(
        &self,
        buf: &mut [u8],
        addr: Option<&mut libc::sockaddr_ll>,
        flags: libc::c_int,
    ) -> io::Result<(usize, Option<u64>)> {
        let hardware = self.clocks.rx == Clock::Hardware;
        let (n, ts) = recvmsg_stamped(&self.fd, buf, addr, flags, hardware)?;
        Ok((n, ts.as_ref().map(timespec_ps)))
    }
}

/// `recvmsg` on a packet socket (`MSG_TRUNC` added to `flags`: the length
/// returned is the frame's, which may exceed `buf`), with the frame's
/// `SCM_TIMESTAMPING` stamp: the hardware one if `hardware`, else the
/// software one; `None` when the kernel gave none.
pub(crate) fn recvmsg_stamped(
    fd: &OwnedFd,
    buf: &mut [u8],
    addr: Option<&mut libc::sockaddr_ll>,
    flags: libc::c_int,
    hardware: bool,
) -> io::Result<(usize, Option<libc::timespec>)> {
    // Room for SCM_TIMESTAMPING and the error queue's sock_extended_err, aligned.
    let mut control = [0u64; 32];
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast::<libc::c_void>(),
        iov_len: buf.len(),
    };
    // SAFETY: msghdr is plain data; all-zero is a valid value.
    let mut msg: libc::msghdr = unsafe { mem::zeroed() };
    if let Some(sa) = addr {
        msg.msg_name = (sa as *mut libc::sockaddr_ll).cast::<libc::c_void>();
        msg.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
    }
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast::<libc::c_void>();
    msg.msg_controllen = mem::size_of_val(&control) as _;
    let n = loop {
        // SAFETY: msg points at a live iovec over `buf`, an optional live
        // sockaddr_ll and the `control` buffer, each of the lengths given.
        let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, flags | libc::MSG_TRUNC) };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    let mut ts = None;
    // SAFETY: msg was filled by recvmsg; the CMSG_* walk stays within
    // msg_controllen, and a SCM_TIMESTAMPING payload is a scm_timestamping,
    // read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let h = &*c;
            if h.cmsg_level == libc::SOL_SOCKET
                && h.cmsg_type == SCM_TIMESTAMPING
                && h.cmsg_len as usize
                    >= libc::CMSG_LEN(mem::size_of::<ScmTimestamping>() as u32) as usize
            {
                let s = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<ScmTimestamping>());
                let t = if hardware { s.ts[2] } else { s.ts[0] };
                if t.tv_sec != 0 || t.tv_nsec != 0 {
                    ts = Some(t);
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n, ts))
}

crate::sys::fd_traits!(MeasureSocket, fd);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uapi_layouts() {
        // <linux/ethtool.h> struct ethtool_ts_info: 11 x 32-bit words.
        assert_eq!(mem::size_of::<EthtoolTsInfo>(), 44);
        // <linux/errqueue.h> struct scm_timestamping: 3 x 64-bit timespec.
        assert_eq!(mem::size_of::<ScmTimestamping>(), 48);
        assert_eq!(mem::size_of::<libc::hwtstamp_config>(), 12);
    }

    #[test]
    fn picoseconds_wrap_but_differences_hold() {
        let a = libc::timespec {
            tv_sec: 1_800_000_000,
            tv_nsec: 999_999_999,
        };
        let b = libc::timespec {
            tv_sec: 1_800_000_001,
            tv_nsec: 4,
        };
        assert_eq!(timespec_ps(&b).wrapping_sub(timespec_ps(&a)), 5_000);
    }
}

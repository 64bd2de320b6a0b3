//! Link state from rtnetlink: a non-blocking monitor of `RTM_NEWLINK` /
//! `RTM_DELLINK` (multicast group `RTMGRP_LINK`), a blocking dump
//! (`RTM_GETLINK` + `NLM_F_DUMP`), and the pure parser both use. Also the two
//! interface look-ups the daemon needs, [`if_nametoindex`] and [`if_hwaddr`].
//!
//! Kernel facts relied on:
//! * every link message is `struct ifinfomsg` (16 bytes: family, pad, type,
//!   index, flags, change) followed by `IFLA_*` attributes; `IFLA_IFNAME` is
//!   always present;
//! * the kernel also sends `RTM_NEWLINK`/`RTM_DELLINK` with family
//!   `AF_BRIDGE` to `RTMGRP_LINK` when a port joins or leaves a bridge; those
//!   describe bridge membership, not the device, and are ignored here (an
//!   `AF_BRIDGE` `RTM_DELLINK` does not mean the device is gone);
//! * `IFF_RUNNING` in `ifi_flags` is what `dev_get_flags()` reports: set
//!   exactly when the device is up and its operstate is UP or UNKNOWN;
//!   operstate is updated by the kernel's linkwatch worker, which runs
//!   non-urgent events at most once a second, so `IFF_RUNNING` can lag the
//!   carrier by up to a second. `IFF_LOWER_UP` is the carrier itself, read
//!   when the message is built: the notification of `ip link set X up` on a
//!   veth whose peer is up already carries it;
//! * a multicast receiver that falls behind gets `ENOBUFS` once from
//!   `recvmsg`; events were lost and only a new dump tells the truth;
//! * a dump interrupted by concurrent changes marks its messages
//!   `NLM_F_DUMP_INTR`; it is then retried.

use std::io;
use std::mem;
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::netlink::{
    self, Msg, MsgBuilder, NetlinkError, NlSocket, NLMSG_DONE, NLMSG_ERROR, NLM_F_DUMP,
    NLM_F_DUMP_INTR, NLM_F_REQUEST,
};
use crate::sys;

pub(crate) const RTM_NEWLINK: u16 = 16;
pub(crate) const RTM_DELLINK: u16 = 17;
pub(crate) const RTM_GETLINK: u16 = 18;

pub(crate) const IFINFOMSG_LEN: usize = 16;
pub(crate) const IFLA_ADDRESS: u16 = 1;
pub(crate) const IFLA_IFNAME: u16 = 3;
pub(crate) const IFLA_MTU: u16 = 4;
pub(crate) const IFLA_OPERSTATE: u16 = 16;
pub(crate) const IFLA_IFALIAS: u16 = 20;
pub(crate) const IF_OPER_UP: u8 = 6;
pub(crate) const IFF_UP: u32 = 0x1;
pub(crate) const IFF_RUNNING: u32 = 0x40;
pub(crate) const IFF_LOWER_UP: u32 = 0x1_0000;
pub(crate) const ARPHRD_ETHER: u16 = 1;
pub(crate) const AF_UNSPEC: u8 = 0;
pub(crate) const RTMGRP_LINK: u32 = 1;

/// Receive buffer asked for by [`LinkMonitor::open`]: a burst of a few
/// thousand link messages (~1.5 KiB each) fits before `ENOBUFS`.
pub const MONITOR_RCVBUF: usize = 8 << 20;

/// One datagram is at most 32 KiB (netlink caps dump skbs there); 64 KiB
/// leaves room.
pub(crate) const RECV_BUF: usize = 64 << 10;

/// What the daemon needs to know about a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkInfo {
    pub ifindex: u32,
    pub name: String,
    /// The hardware address, for Ethernet links (`ARPHRD_ETHER` with a
    /// 6-byte `IFLA_ADDRESS`); `None` for loopback, tunnels, ...
    pub mac: Option<[u8; 6]>,
    /// `IFF_UP`: administratively up.
    pub admin_up: bool,
    /// `IFF_RUNNING` (up and operstate UP or UNKNOWN), or `IFLA_OPERSTATE`
    /// UP.
    pub oper_up: bool,
    /// `IFF_LOWER_UP`: the carrier is on (without linkwatch's delay).
    pub carrier: bool,
    /// `IFLA_MTU`.
    pub mtu: Option<u32>,
    /// `IFLA_IFALIAS` (`ip link set DEV alias TEXT`), when set and not empty.
    pub alias: Option<String>,
}

/// A change to one link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEvent {
    /// `RTM_NEWLINK`: a new link, or any change to one (state, name, MAC,
    /// MTU); always the full current state.
    New(LinkInfo),
    /// `RTM_DELLINK`: the device is gone.
    Del { ifindex: u32, name: String },
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("rtnetlink socket: {0}")]
    Io(#[from] io::Error),
    /// `ENOBUFS`: the socket's receive buffer overflowed and link events were
    /// lost. Dump the links again ([`dump_links`]).
    #[error("rtnetlink receive buffer overrun: link events were lost")]
    Overrun,
    #[error(transparent)]
    Parse(#[from] NetlinkError),
    /// The kernel answered the dump with an error.
    #[error("rtnetlink dump failed: {}", io::Error::from_raw_os_error(*errno))]
    Kernel { errno: i32 },
    /// The dump was interrupted by concurrent changes every time it was
    /// tried.
    #[error("rtnetlink dump kept being interrupted by concurrent changes")]
    DumpInterrupted,
}

impl LinkError {
    /// Nothing to read right now (a non-blocking receive found the socket
    /// empty).
    pub fn would_block(&self) -> bool {
        matches!(self, LinkError::Io(e) if e.kind() == io::ErrorKind::WouldBlock)
    }
}

/// Parses a buffer of netlink messages (one or more datagrams back to back)
/// into link events. `RTM_NEWLINK`/`RTM_DELLINK` of family `AF_UNSPEC` become
/// events; other message types and families are skipped. Any malformed
/// message or attribute is an error naming its offset; it never panics.
pub fn parse_link_messages(buf: &[u8]) -> Result<Vec<LinkEvent>, NetlinkError> {
    let mut out = Vec::new();
    for msg in netlink::messages(buf) {
        if let Some(ev) = parse_link_msg(&msg?)? {
            out.push(ev);
        }
    }
    Ok(out)
}

fn parse_link_msg(msg: &Msg<'_>) -> Result<Option<LinkEvent>, NetlinkError> {
    if msg.ty != RTM_NEWLINK && msg.ty != RTM_DELLINK {
        return Ok(None);
    }
    let attrs = msg.after_header(IFINFOMSG_LEN, "ifinfomsg")?;
    let p = msg.payload;
    let family = p.first().copied().unwrap_or_default();
    if family != AF_UNSPEC {
        return Ok(None);
    }
    // after_header() checked that the 16 bytes are there.
    let ty = netlink::ne_u16(p, 2).unwrap_or_default();
    let index = netlink::ne_u32(p, 4).unwrap_or_default() as i32;
    let flags = netlink::ne_u32(p, 8).unwrap_or_default();
    let ifindex = match u32::try_from(index) {
        Ok(i) if i > 0 => i,
        _ => {
            return Err(NetlinkError::new(
                msg.payload_offset + 4,
                "ifinfomsg",
                format!("ifi_index {index} is not a valid interface index"),
            ))
        }
    };

    let mut name = None;
    let mut mac = None;
    let mut mtu = None;
    let mut operstate = None;
    let mut alias = None;
    for a in attrs.attrs() {
        let a = a?;
        match a.ty {
            IFLA_IFNAME => name = Some(a.string()),
            IFLA_ADDRESS => {
                if let Ok(m) = <[u8; 6]>::try_from(a.payload) {
                    mac = Some(m);
                }
            }
            IFLA_MTU => mtu = Some(a.u32("IFLA_MTU")?),
            IFLA_OPERSTATE => operstate = Some(a.u8("IFLA_OPERSTATE")?),
            IFLA_IFALIAS => alias = Some(a.string()).filter(|s| !s.is_empty()),
            _ => {}
        }
    }
    let Some(name) = name else {
        return Err(NetlinkError::new(
            msg.offset,
            if msg.ty == RTM_NEWLINK {
                "RTM_NEWLINK"
            } else {
                "RTM_DELLINK"
            },
            format!("link {ifindex} without IFLA_IFNAME"),
        ));
    };
    if msg.ty == RTM_DELLINK {
        return Ok(Some(LinkEvent::Del { ifindex, name }));
    }
    Ok(Some(LinkEvent::New(LinkInfo {
        ifindex,
        name,
        mac: if ty == ARPHRD_ETHER { mac } else { None },
        admin_up: flags & IFF_UP != 0,
        oper_up: flags & IFF_RUNNING != 0 || operstate == Some(IF_OPER_UP),
        carrier: flags & IFF_LOWER_UP != 0,
        mtu,
        alias,
    })))
}

/// A non-blocking subscription to link changes (`RTMGRP_LINK`).
#[derive(Debug)]
pub struct LinkMonitor {
    sock: NlSocket,
}

/// Reads one datagram of a monitor socket into `buf`; `ENOBUFS` is
/// [`LinkError::Overrun`].
pub(crate) fn recv_monitored<'b>(
    sock: &NlSocket,
    buf: &'b mut [u8],
) -> Result<&'b [u8], LinkError> {
    match sock.recv(buf) {
        Ok(n) => Ok(buf.get(..n).unwrap_or(&[])),
        Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => Err(LinkError::Overrun),
        Err(e) => Err(e.into()),
    }
}

impl LinkMonitor {
    /// Subscribes, with a receive buffer of [`MONITOR_RCVBUF`] (forced past
    /// `net.core.rmem_max` when running as root).
    pub fn open() -> io::Result<LinkMonitor> {
        LinkMonitor::with_rcvbuf(MONITOR_RCVBUF)
    }

    /// Subscribes with a receive buffer of `bytes` (the kernel doubles it
    /// and enforces a minimum). Small buffers overrun sooner: tests use that.
    pub fn with_rcvbuf(bytes: usize) -> io::Result<LinkMonitor> {
        let sock = NlSocket::open(true, RTMGRP_LINK)?;
        sock.set_rcvbuf(bytes)?;
        Ok(LinkMonitor { sock })
    }

    /// Reads one datagram and returns its link events (possibly none, when
    /// it carried something else). An empty socket is `LinkError::Io` of
    /// kind `WouldBlock` ([`LinkError::would_block`]); a buffer overrun is
    /// [`LinkError::Overrun`], after which the socket keeps working.
    pub fn recv(&self) -> Result<Vec<LinkEvent>, LinkError> {
        let mut buf = vec![0u8; RECV_BUF];
        Ok(parse_link_messages(recv_monitored(&self.sock, &mut buf)?)?)
    }
}

crate::sys::fd_traits!(LinkMonitor, sock);

/// The request [`dump_links`] sends: `RTM_GETLINK`, `NLM_F_REQUEST |
/// NLM_F_DUMP`, an all-zero `struct ifinfomsg` (family `AF_UNSPEC`).
pub fn encode_dump_request(seq: u32) -> Vec<u8> {
    let mut b = MsgBuilder::new(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, seq);
    b.header(&[0; IFINFOMSG_LEN]);
    b.finish()
}

/// Lists every link (in the calling thread's network namespace) with a
/// blocking `RTM_GETLINK` dump on a socket of its own. Retries a dump that
/// the kernel marks interrupted (`NLM_F_DUMP_INTR`) up to 5 times.
pub fn dump_links() -> Result<Vec<LinkInfo>, LinkError> {
    dump(encode_dump_request, |msg| {
        Ok(match parse_link_msg(msg)? {
            Some(LinkEvent::New(info)) => Some(info),
            _ => None,
        })
    })
}

/// A blocking rtnetlink dump on a socket of its own: `request(seq)` is sent, every
/// answer goes through `parse`. Retries a dump that the kernel marks interrupted
/// (`NLM_F_DUMP_INTR`) up to 5 times.
pub(crate) fn dump<T>(
    request: impl Fn(u32) -> Vec<u8>,
    parse: impl Fn(&Msg<'_>) -> Result<Option<T>, NetlinkError>,
) -> Result<Vec<T>, LinkError> {
    for attempt in 0..5u32 {
        if let Some(items) = dump_once(&request(attempt + 1), attempt + 1, &parse)? {
            return Ok(items);
        }
    }
    Err(LinkError::DumpInterrupted)
}

/// One dump; `None` if it was interrupted.
fn dump_once<T>(
    request: &[u8],
    seq: u32,
    parse: &impl Fn(&Msg<'_>) -> Result<Option<T>, NetlinkError>,
) -> Result<Option<Vec<T>>, LinkError> {
    let sock = NlSocket::open(false, 0)?;
    sock.set_rcvtimeo(Duration::from_secs(5))?;
    sock.send(request)?;
    let mut buf = vec![0u8; RECV_BUF];
    let mut items = Vec::new();
    let mut interrupted = false;
    loop {
        let n = sock.recv(&mut buf)?;
        for msg in netlink::messages(buf.get(..n).unwrap_or(&[])) {
            let msg = msg?;
            if msg.seq != seq {
                continue;
            }
            if msg.flags & NLM_F_DUMP_INTR != 0 {
                interrupted = true;
            }
            match msg.ty {
                NLMSG_DONE => {
                    // A failed dump reports its (negative) error here.
                    let code = msg.error_code().unwrap_or(0);
                    if code < 0 {
                        return Err(LinkError::Kernel { errno: -code });
                    }
                    return Ok((!interrupted).then_some(items));
                }
                NLMSG_ERROR => {
                    let code = msg.error_code()?;
                    if code != 0 {
                        return Err(LinkError::Kernel {
                            errno: code.saturating_neg(),
                        });
                    }
                }
                _ => {
                    if let Some(item) = parse(&msg)? {
                        items.push(item);
                    }
                }
            }
        }
    }
}

/// The request [`get_link`] sends: `RTM_GETLINK` for one `ifi_index`.
pub fn encode_get_request(seq: u32, ifindex: u32) -> Vec<u8> {
    let mut b = MsgBuilder::new(RTM_GETLINK, NLM_F_REQUEST, seq);
    let mut ifi = [0u8; IFINFOMSG_LEN];
    ifi[4..8].copy_from_slice(&ifindex.to_ne_bytes());
    b.header(&ifi);
    b.finish()
}

/// The current state of one link, asked of the kernel now (blocking, on a
/// socket of its own). `IFF_LOWER_UP` in the answer is the carrier at this
/// instant, whatever linkwatch has or has not notified yet.
pub fn get_link(ifindex: u32) -> Result<LinkInfo, LinkError> {
    let seq = 1;
    let sock = NlSocket::open(false, 0)?;
    sock.set_rcvtimeo(Duration::from_secs(1))?;
    sock.send(&encode_get_request(seq, ifindex))?;
    let mut buf = vec![0u8; RECV_BUF];
    loop {
        let n = sock.recv(&mut buf)?;
        for msg in netlink::messages(buf.get(..n).unwrap_or(&[])) {
            let msg = msg?;
            if msg.seq != seq {
                continue;
            }
            if msg.ty == NLMSG_ERROR {
                let code = msg.error_code()?;
                return Err(LinkError::Kernel {
                    errno: code.saturating_neg(),
                });
            }
            if let Some(LinkEvent::New(info)) = parse_link_msg(&msg)? {
                return Ok(info);
            }
        }
    }
}

/// `if_nametoindex(3)` in the calling thread's network namespace.
pub fn if_nametoindex(name: &str) -> io::Result<u32> {
    let c = sys::ifname_cstring(name)?;
    // SAFETY: c is a valid NUL-terminated string for the call.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i)
}

/// The MAC address of an Ethernet interface (`SIOCGIFHWADDR`); an
/// `InvalidInput` error for other link types (loopback, tunnels).
pub fn if_hwaddr(name: &str) -> io::Result<[u8; 6]> {
    let c = sys::ifname_cstring(name)?;
    let sock = sys::socket(libc::AF_INET, libc::SOCK_DGRAM, 0)?;
    // SAFETY: ifreq is plain data (a name and a union of plain data); zero is
    // a valid value.
    let mut ifr: libc::ifreq = unsafe { mem::zeroed() };
    for (dst, src) in ifr.ifr_name.iter_mut().zip(c.as_bytes()) {
        *dst = *src as libc::c_char;
    }
    // SAFETY: SIOCGIFHWADDR reads ifr_name and writes ifr_hwaddr inside the
    // ifreq we pass, which lives for the call.
    sys::cvt(unsafe {
        libc::ioctl(
            sock.as_raw_fd(),
            libc::SIOCGIFHWADDR as _,
            &mut ifr as *mut libc::ifreq,
        )
    })?;
    // SAFETY: after SIOCGIFHWADDR succeeded the kernel filled ifru_hwaddr.
    let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
    if sa.sa_family != ARPHRD_ETHER {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{name} is not an Ethernet interface (ARPHRD {})",
                sa.sa_family
            ),
        ));
    }
    let mut mac = [0u8; 6];
    for (dst, src) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *dst = *src as u8;
    }
    Ok(mac)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn link_msg(ty: u16, family: u8, index: i32, flags: u32, attrs: &[(u16, &[u8])]) -> Vec<u8> {
        let mut b = MsgBuilder::new(ty, 0, 0);
        let mut h = [0u8; 16];
        h[0] = family;
        h[2..4].copy_from_slice(&ARPHRD_ETHER.to_ne_bytes());
        h[4..8].copy_from_slice(&index.to_ne_bytes());
        h[8..12].copy_from_slice(&flags.to_ne_bytes());
        b.header(&h);
        for (t, d) in attrs {
            b.attr(*t, d);
        }
        b.finish()
    }

    #[test]
    fn new_and_del() {
        let mut buf = link_msg(
            RTM_NEWLINK,
            0,
            5,
            IFF_UP | IFF_RUNNING,
            &[
                (IFLA_IFNAME, b"eth9\0"),
                (IFLA_ADDRESS, &[2, 0, 0, 0, 0, 1]),
                (IFLA_MTU, &9000u32.to_ne_bytes()),
                (IFLA_OPERSTATE, &[IF_OPER_UP]),
                (IFLA_IFALIAS, b"to leaf 1\0"),
            ],
        );
        buf.extend(link_msg(RTM_DELLINK, 0, 5, 0, &[(IFLA_IFNAME, b"eth9\0")]));
        let ev = parse_link_messages(&buf).unwrap();
        assert_eq!(
            ev,
            vec![
                LinkEvent::New(LinkInfo {
                    ifindex: 5,
                    name: "eth9".into(),
                    mac: Some([2, 0, 0, 0, 0, 1]),
                    admin_up: true,
                    oper_up: true,
                    carrier: false,
                    mtu: Some(9000),
                    alias: Some("to leaf 1".into()),
                }),
                LinkEvent::Del {
                    ifindex: 5,
                    name: "eth9".into()
                }
            ]
        );
    }

    #[test]
    fn bridge_family_and_other_types_are_skipped() {
        let mut buf = link_msg(RTM_DELLINK, 7, 5, 0, &[(IFLA_IFNAME, b"eth9\0")]);
        buf.extend(link_msg(20, 0, 5, 0, &[]));
        assert_eq!(parse_link_messages(&buf).unwrap(), vec![]);
    }

    #[test]
    fn malformed_links_are_errors() {
        let e = parse_link_messages(&link_msg(RTM_NEWLINK, 0, 5, 0, &[])).unwrap_err();
        assert_eq!((e.offset, e.what), (0, "RTM_NEWLINK"));
        let e = parse_link_messages(&link_msg(RTM_NEWLINK, 0, -1, 0, &[])).unwrap_err();
        assert_eq!((e.offset, e.what), (20, "ifinfomsg"));
        let e = parse_link_messages(&link_msg(
            RTM_NEWLINK,
            0,
            1,
            0,
            &[(IFLA_IFNAME, b"x\0"), (IFLA_MTU, &[1, 2])],
        ))
        .unwrap_err();
        assert_eq!((e.offset, e.what), (40, "IFLA_MTU"));
        let mut short = MsgBuilder::new(RTM_NEWLINK, 0, 0);
        short.header(&[0; 8]);
        let e = parse_link_messages(&short.finish()).unwrap_err();
        assert_eq!((e.offset, e.what), (16, "ifinfomsg"));
    }

    #[test]
    fn dump_request_layout() {
        let r = encode_dump_request(9);
        assert_eq!(r.len(), 32);
        assert_eq!(u32::from_ne_bytes(r[0..4].try_into().unwrap()), 32);
        assert_eq!(u16::from_ne_bytes(r[4..6].try_into().unwrap()), 18);
        assert_eq!(u16::from_ne_bytes(r[6..8].try_into().unwrap()), 0x301);
        assert_eq!(u32::from_ne_bytes(r[8..12].try_into().unwrap()), 9);
        assert!(r[12..].iter().all(|&b| b == 0));
    }

    #[test]
    fn non_ethernet_has_no_mac() {
        let mut m = link_msg(
            RTM_NEWLINK,
            0,
            1,
            IFF_UP,
            &[(IFLA_IFNAME, b"lo\0"), (IFLA_ADDRESS, &[0; 6])],
        );
        m[18..20].copy_from_slice(&772u16.to_ne_bytes()); // ARPHRD_LOOPBACK
        let ev = parse_link_messages(&m).unwrap();
        assert!(matches!(&ev[0], LinkEvent::New(i) if i.mac.is_none() && !i.oper_up));
    }
}

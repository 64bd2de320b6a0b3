//! Netlink framing shared by [`crate::link`] and [`crate::dcbnl`]: a bounded
//! reader for messages (`struct nlmsghdr`) and attributes (`struct nlattr`),
//! a message builder, and a `NETLINK_ROUTE` socket.
//!
//! The reader never indexes out of bounds: every access goes through
//! `get(..)`, lengths are checked against what is left before anything is
//! sliced, and a malformed input ends in a [`NetlinkError`] that names the
//! byte offset, the structure and the reason.
//!
//! Layouts (`linux/netlink.h`): a message is a 16-byte header
//! `{ len: u32, type: u16, flags: u16, seq: u32, pid: u32 }` followed by its
//! payload, padded to 4 bytes; an attribute is `{ len: u16, type: u16 }`
//! followed by `len - 4` bytes, padded to 4. All fields are in host byte
//! order.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

use crate::sys;

pub(crate) const NLMSG_HDRLEN: usize = 16;
pub(crate) const NLA_HDRLEN: usize = 4;

pub(crate) const NLMSG_NOOP: u16 = 1;
pub(crate) const NLMSG_ERROR: u16 = 2;
pub(crate) const NLMSG_DONE: u16 = 3;

pub(crate) const NLM_F_REQUEST: u16 = 0x01;
pub(crate) const NLM_F_DUMP_INTR: u16 = 0x10;
/// `NLM_F_ROOT | NLM_F_MATCH`.
pub(crate) const NLM_F_DUMP: u16 = 0x300;

/// The type bits of `nla_type` (the top two are NLA_F_NESTED and
/// NLA_F_NET_BYTEORDER).
pub(crate) const NLA_TYPE_MASK: u16 = 0x3fff;

/// 4-byte alignment of netlink (`NLMSG_ALIGN`, `NLA_ALIGN`), saturating.
pub(crate) const fn align4(n: usize) -> usize {
    n.saturating_add(3) & !3
}

/// A malformed netlink buffer: where, in which structure, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed netlink data at byte {offset} ({what}): {why}")]
pub struct NetlinkError {
    /// Byte offset into the buffer that was parsed.
    pub offset: usize,
    /// The structure being read, e.g. `"nlmsghdr"`, `"IFLA_MTU"`.
    pub what: &'static str,
    /// What was wrong with it.
    pub why: String,
}

impl NetlinkError {
    pub(crate) fn new(offset: usize, what: &'static str, why: impl Into<String>) -> Self {
        NetlinkError {
            offset,
            what,
            why: why.into(),
        }
    }
}

pub(crate) fn ne_u16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_ne_bytes([s[0], s[1]]))
}

pub(crate) fn ne_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
}

/// One netlink message, borrowed from the buffer it was read from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Msg<'a> {
    /// Offset of the header in the buffer.
    pub offset: usize,
    pub ty: u16,
    pub flags: u16,
    pub seq: u32,
    /// Sender port id as written in the header (not the socket address).
    #[allow(dead_code)]
    pub pid: u32,
    /// The bytes after the header, up to `nlmsg_len`.
    pub payload: &'a [u8],
    /// Offset of `payload` in the buffer.
    pub payload_offset: usize,
}

impl<'a> Msg<'a> {
    /// The payload after a fixed family header of `len` bytes (padded), and
    /// its offset; an error naming `what` if the payload is shorter.
    pub fn after_header(&self, len: usize, what: &'static str) -> Result<Bytes<'a>, NetlinkError> {
        if self.payload.len() < len {
            return Err(NetlinkError::new(
                self.payload_offset,
                what,
                format!(
                    "needs {len} bytes, message has {} after its header",
                    self.payload.len()
                ),
            ));
        }
        let skip = align4(len).min(self.payload.len());
        Ok(Bytes {
            data: self.payload.get(skip..).unwrap_or(&[]),
            offset: self.payload_offset + skip,
        })
    }

    /// The `error` field of an `NLMSG_ERROR` (0 = ACK, else `-errno`), or of
    /// an `NLMSG_DONE` that carries one.
    pub fn error_code(&self) -> Result<i32, NetlinkError> {
        ne_u32(self.payload, 0).map(|v| v as i32).ok_or_else(|| {
            NetlinkError::new(
                self.payload_offset,
                "nlmsgerr",
                format!(
                    "needs 4 bytes for the error code, message has {}",
                    self.payload.len()
                ),
            )
        })
    }
}

/// A slice and the offset where it starts in the parsed buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bytes<'a> {
    pub data: &'a [u8],
    pub offset: usize,
}

impl<'a> Bytes<'a> {
    pub fn attrs(self) -> Attrs<'a> {
        Attrs {
            buf: self.data,
            base: self.offset,
            pos: 0,
            failed: false,
        }
    }
}

/// Iterates the messages of one datagram. Stops after the first error.
pub(crate) fn messages(buf: &[u8]) -> Messages<'_> {
    Messages {
        buf,
        pos: 0,
        failed: false,
    }
}

pub(crate) struct Messages<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<Msg<'a>, NetlinkError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.next_msg();
        self.failed = r.is_err();
        Some(r)
    }
}

impl<'a> Messages<'a> {
    fn next_msg(&mut self) -> Result<Msg<'a>, NetlinkError> {
        let at = self.pos;
        let left = self.buf.len() - at;
        let err = |why: String| NetlinkError::new(at, "nlmsghdr", why);
        if left < NLMSG_HDRLEN {
            return Err(err(format!(
                "{left} bytes left, a message header needs {NLMSG_HDRLEN}"
            )));
        }
        let header = (
            ne_u32(self.buf, at),
            ne_u16(self.buf, at + 4),
            ne_u16(self.buf, at + 6),
            ne_u32(self.buf, at + 8),
            ne_u32(self.buf, at + 12),
        );
        let (Some(len), Some(ty), Some(flags), Some(seq), Some(pid)) = header else {
            return Err(err("header out of bounds".into()));
        };
        let len = len as usize;
        if len < NLMSG_HDRLEN {
            return Err(err(format!(
                "nlmsg_len {len} is shorter than the {NLMSG_HDRLEN}-byte header"
            )));
        }
        if len > left {
            return Err(err(format!(
                "nlmsg_len {len} runs past the end of the buffer ({left} bytes left)"
            )));
        }
        let payload = self
            .buf
            .get(at + NLMSG_HDRLEN..at + len)
            .ok_or_else(|| err("payload out of bounds".into()))?;
        self.pos = at.saturating_add(align4(len)).min(self.buf.len());
        Ok(Msg {
            offset: at,
            ty,
            flags,
            seq,
            pid,
            payload,
            payload_offset: at + NLMSG_HDRLEN,
        })
    }
}

/// One attribute.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attr<'a> {
    /// Offset of the attribute header in the parsed buffer.
    pub offset: usize,
    /// `nla_type` without the NESTED / NET_BYTEORDER flags.
    pub ty: u16,
    pub payload: &'a [u8],
    /// Offset of the payload in the parsed buffer.
    pub payload_offset: usize,
}

impl<'a> Attr<'a> {
    pub fn nested(&self) -> Attrs<'a> {
        Bytes {
            data: self.payload,
            offset: self.payload_offset,
        }
        .attrs()
    }

    fn exact(&self, n: usize, what: &'static str) -> Result<&'a [u8], NetlinkError> {
        if self.payload.len() != n {
            return Err(NetlinkError::new(
                self.offset,
                what,
                format!("payload of {} bytes, expected {n}", self.payload.len()),
            ));
        }
        Ok(self.payload)
    }

    pub fn u8(&self, what: &'static str) -> Result<u8, NetlinkError> {
        let b = self.exact(1, what)?;
        Ok(b.first().copied().unwrap_or_default())
    }

    pub fn u32(&self, what: &'static str) -> Result<u32, NetlinkError> {
        let b = self.exact(4, what)?;
        Ok(ne_u32(b, 0).unwrap_or_default())
    }

    /// A NUL-terminated string attribute; bytes after the first NUL are
    /// ignored, a missing NUL is accepted (the kernel always sends one).
    pub fn string(&self) -> String {
        let end = self
            .payload
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(self.payload.len());
        String::from_utf8_lossy(self.payload.get(..end).unwrap_or(&[])).into_owned()
    }
}

/// Iterates a run of attributes. Stops after the first error.
pub(crate) struct Attrs<'a> {
    buf: &'a [u8],
    base: usize,
    pos: usize,
    failed: bool,
}

impl<'a> Iterator for Attrs<'a> {
    type Item = Result<Attr<'a>, NetlinkError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        let r = self.next_attr();
        self.failed = r.is_err();
        Some(r)
    }
}

impl<'a> Attrs<'a> {
    fn next_attr(&mut self) -> Result<Attr<'a>, NetlinkError> {
        let at = self.pos;
        let offset = self.base.saturating_add(at);
        let left = self.buf.len() - at;
        let err = |why: String| NetlinkError::new(offset, "nlattr", why);
        let (Some(len), Some(ty)) = (ne_u16(self.buf, at), ne_u16(self.buf, at + 2)) else {
            return Err(err(format!(
                "{left} bytes left, an attribute header needs {NLA_HDRLEN}"
            )));
        };
        let len = usize::from(len);
        if len < NLA_HDRLEN {
            return Err(err(format!(
                "nla_len {len} is shorter than the {NLA_HDRLEN}-byte header"
            )));
        }
        if len > left {
            return Err(err(format!(
                "nla_len {len} runs past the end of its container ({left} bytes left)"
            )));
        }
        let payload = self
            .buf
            .get(at + NLA_HDRLEN..at + len)
            .ok_or_else(|| err("payload out of bounds".into()))?;
        self.pos = at.saturating_add(align4(len)).min(self.buf.len());
        Ok(Attr {
            offset,
            ty: ty & NLA_TYPE_MASK,
            payload,
            payload_offset: offset + NLA_HDRLEN,
        })
    }
}

/// Builds one netlink request.
pub(crate) struct MsgBuilder {
    buf: Vec<u8>,
}

impl MsgBuilder {
    /// A message with the given type, flags and sequence number; port id 0
    /// (the kernel fills in the sender).
    pub fn new(ty: u16, flags: u16, seq: u32) -> Self {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(&0u32.to_ne_bytes());
        buf.extend_from_slice(&ty.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes());
        MsgBuilder { buf }
    }

    fn pad(&mut self) {
        self.buf.resize(align4(self.buf.len()), 0);
    }

    /// Appends a family header (`struct ifinfomsg`, `struct dcbmsg`, ...).
    pub fn header(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.pad();
    }

    pub fn attr(&mut self, ty: u16, data: &[u8]) {
        let len = NLA_HDRLEN + data.len();
        // Attributes here are a few bytes long; u16 cannot overflow.
        self.buf
            .extend_from_slice(&(len.min(usize::from(u16::MAX)) as u16).to_ne_bytes());
        self.buf.extend_from_slice(&ty.to_ne_bytes());
        self.buf.extend_from_slice(data);
        self.pad();
    }

    pub fn attr_u8(&mut self, ty: u16, v: u8) {
        self.attr(ty, &[v]);
    }

    /// A zero-length attribute (an `NLA_FLAG`, or an empty nest).
    pub fn flag(&mut self, ty: u16) {
        self.attr(ty, &[]);
    }

    /// Starts a nested attribute; close it with [`MsgBuilder::nest_end`].
    pub fn nest_start(&mut self, ty: u16) -> usize {
        let at = self.buf.len();
        self.attr(ty, &[]);
        at
    }

    pub fn nest_end(&mut self, at: usize) {
        let len = (self.buf.len() - at).min(usize::from(u16::MAX)) as u16;
        if let Some(s) = self.buf.get_mut(at..at + 2) {
            s.copy_from_slice(&len.to_ne_bytes());
        }
    }

    pub fn finish(mut self) -> Vec<u8> {
        let len = u32::try_from(self.buf.len()).unwrap_or(u32::MAX);
        if let Some(s) = self.buf.get_mut(0..4) {
            s.copy_from_slice(&len.to_ne_bytes());
        }
        self.buf
    }
}

/// A netlink socket talking to the kernel (`NETLINK_ROUTE` unless opened with
/// [`NlSocket::open_protocol`]).
#[derive(Debug)]
pub(crate) struct NlSocket {
    fd: OwnedFd,
}

fn sockaddr_nl(groups: u32) -> libc::sockaddr_nl {
    // SAFETY: sockaddr_nl is plain data; all-zero is a valid value (and the
    // kernel's address).
    let mut sa: libc::sockaddr_nl = unsafe { mem::zeroed() };
    sa.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    sa.nl_groups = groups;
    sa
}

impl NlSocket {
    /// A `NETLINK_ROUTE` socket bound to `groups` (a `RTMGRP_*` mask; 0 for
    /// none); the kernel picks the port id.
    pub fn open(nonblocking: bool, groups: u32) -> io::Result<NlSocket> {
        NlSocket::open_protocol(libc::NETLINK_ROUTE, nonblocking, groups)
    }

    /// A netlink socket of `protocol` (`NETLINK_ROUTE`, `NETLINK_GENERIC`), bound
    /// as [`NlSocket::open`] binds.
    pub fn open_protocol(
        protocol: libc::c_int,
        nonblocking: bool,
        groups: u32,
    ) -> io::Result<NlSocket> {
        let ty = libc::SOCK_RAW | if nonblocking { libc::SOCK_NONBLOCK } else { 0 };
        let fd = sys::socket(libc::AF_NETLINK, ty, protocol)?;
        let sa = sockaddr_nl(groups);
        // SAFETY: sa is a valid sockaddr_nl of the length passed.
        sys::cvt(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_nl).cast::<libc::sockaddr>(),
                mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        })?;
        Ok(NlSocket { fd })
    }

    /// Asks for a receive buffer of `bytes`: `SO_RCVBUFFORCE` (root, beyond
    /// `net.core.rmem_max`), else `SO_RCVBUF` (capped by rmem_max).
    pub fn set_rcvbuf(&self, bytes: usize) -> io::Result<()> {
        let v = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        if sys::setsockopt(self, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &v).is_ok() {
            return Ok(());
        }
        sys::setsockopt(self, libc::SOL_SOCKET, libc::SO_RCVBUF, &v)
    }

    pub fn set_rcvtimeo(&self, timeout: Duration) -> io::Result<()> {
        let tv = libc::timeval {
            tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
            tv_usec: libc::suseconds_t::from(timeout.subsec_micros() as i32),
        };
        sys::setsockopt(self, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv)
    }

    /// Sends one request to the kernel (`sendto` port 0).
    pub fn send(&self, msg: &[u8]) -> io::Result<()> {
        let sa = sockaddr_nl(0);
        crate::sys::sendto_all(&self.fd, msg, &sa, "netlink sendto")
    }

    /// Receives one datagram from the kernel into `buf`; datagrams from
    /// other senders (user-space processes can unicast to our port id) are
    /// dropped. A datagram larger than `buf` is an `InvalidData` error (it
    /// is consumed).
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut sa = sockaddr_nl(0);
            let (n, sa_len) = crate::sys::recvfrom_trunc(&self.fd, buf, &mut sa)?;
            if sa_len >= mem::size_of::<libc::sockaddr_nl>() && sa.nl_pid != 0 {
                continue;
            }
            if n > buf.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "netlink datagram of {n} bytes truncated to the {}-byte buffer",
                        buf.len()
                    ),
                ));
            }
            return Ok(n);
        }
    }
}

crate::sys::fd_traits!(NlSocket, fd);

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn msg(ty: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut b = MsgBuilder::new(ty, 0, seq);
        b.header(payload);
        b.finish()
    }

    #[test]
    fn builder_layout_matches_nlmsghdr_and_nlattr() {
        let mut b = MsgBuilder::new(78, NLM_F_REQUEST, 0x0102_0304);
        b.header(&[0, 1, 0, 0]);
        let n = b.nest_start(4);
        b.attr_u8(1, 0xaa);
        b.flag(9);
        b.nest_end(n);
        b.attr(1, b"ab\0");
        let v = b.finish();
        let mut want = Vec::new();
        want.extend_from_slice(&44u32.to_ne_bytes());
        want.extend_from_slice(&78u16.to_ne_bytes());
        want.extend_from_slice(&1u16.to_ne_bytes());
        want.extend_from_slice(&0x0102_0304u32.to_ne_bytes());
        want.extend_from_slice(&0u32.to_ne_bytes());
        want.extend_from_slice(&[0, 1, 0, 0]);
        // nest: 4 + (5 padded to 8) + 4 = 16
        want.extend_from_slice(&16u16.to_ne_bytes());
        want.extend_from_slice(&4u16.to_ne_bytes());
        want.extend_from_slice(&5u16.to_ne_bytes());
        want.extend_from_slice(&1u16.to_ne_bytes());
        want.extend_from_slice(&[0xaa, 0, 0, 0]);
        want.extend_from_slice(&4u16.to_ne_bytes());
        want.extend_from_slice(&9u16.to_ne_bytes());
        want.extend_from_slice(&7u16.to_ne_bytes());
        want.extend_from_slice(&1u16.to_ne_bytes());
        want.extend_from_slice(b"ab\0\0");
        assert_eq!(v, want);
    }

    #[test]
    fn reads_back_what_the_builder_wrote() {
        let mut b = MsgBuilder::new(16, 0, 7);
        b.header(&[0; 16]);
        b.attr(3, b"eth0\0");
        b.attr(4, &1500u32.to_ne_bytes());
        let mut buf = b.finish();
        buf.extend_from_slice(&msg(NLMSG_DONE, 7, &0i32.to_ne_bytes()));
        let msgs: Vec<_> = messages(&buf).collect::<Result<_, _>>().unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!((msgs[0].ty, msgs[0].seq), (16, 7));
        assert_eq!(msgs[1].ty, NLMSG_DONE);
        let attrs: Vec<_> = msgs[0]
            .after_header(16, "ifinfomsg")
            .unwrap()
            .attrs()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(attrs[0].ty, 3);
        assert_eq!(attrs[0].string(), "eth0");
        assert_eq!(attrs[0].offset, 32);
        assert_eq!(attrs[1].u32("IFLA_MTU").unwrap(), 1500);
        assert_eq!(attrs[1].offset, 44);
    }

    #[test]
    fn errors_name_the_offset() {
        // Second message claims more bytes than there are.
        let mut buf = msg(NLMSG_NOOP, 1, &[]);
        let mut bad = msg(NLMSG_NOOP, 2, &[0; 4]);
        bad[0] = 200;
        buf.extend_from_slice(&bad);
        let r: Result<Vec<_>, _> = messages(&buf).collect();
        let e = r.unwrap_err();
        assert_eq!((e.offset, e.what), (16, "nlmsghdr"));
        assert!(e.why.contains("200"), "{e}");

        // A trailing fragment shorter than a header.
        let mut buf = msg(NLMSG_NOOP, 1, &[]);
        buf.extend_from_slice(&[1, 2, 3]);
        let e = messages(&buf).collect::<Result<Vec<_>, _>>().unwrap_err();
        assert_eq!(e.offset, 16);

        // nlmsg_len below the header size.
        let mut buf = msg(NLMSG_NOOP, 1, &[]);
        buf[0] = 8;
        let e = messages(&buf).collect::<Result<Vec<_>, _>>().unwrap_err();
        assert!(e.why.contains("shorter"), "{e}");

        // An attribute running past its container.
        let attrs = [8u8, 0, 1, 0, 0];
        let e = Bytes {
            data: &attrs,
            offset: 100,
        }
        .attrs()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_err();
        assert_eq!((e.offset, e.what), (100, "nlattr"));

        // Wrong payload size for a u32.
        let attrs = [6u8, 0, 4, 0, 1, 2];
        let a = Bytes {
            data: &attrs,
            offset: 0,
        }
        .attrs()
        .next()
        .unwrap()
        .unwrap();
        assert_eq!(a.u32("IFLA_MTU").unwrap_err().what, "IFLA_MTU");
    }

    #[test]
    fn nested_flag_bits_are_masked() {
        let attrs = [4u8, 0, 0x05, 0x80];
        let a = Bytes {
            data: &attrs,
            offset: 0,
        }
        .attrs()
        .next()
        .unwrap()
        .unwrap();
        assert_eq!(a.ty, 5);
    }
}

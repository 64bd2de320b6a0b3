//! Interface addresses from rtnetlink: a blocking dump (`RTM_GETADDR` +
//! `NLM_F_DUMP`), a non-blocking monitor of `RTM_NEWADDR` / `RTM_DELADDR`
//! (groups `RTMGRP_IPV4_IFADDR` and `RTMGRP_IPV6_IFADDR`), and the pure parser both
//! use. The daemon names one of them in its LLDP Management Address TLV.
//!
//! Kernel facts relied on:
//! * every address message is `struct ifaddrmsg` (8 bytes: family, prefix length,
//!   flags, scope, index) followed by `IFA_*` attributes;
//! * for IPv4 `IFA_LOCAL` is the interface's own address (`IFA_ADDRESS` is the peer's
//!   on a point-to-point link); IPv6 sends `IFA_ADDRESS` alone, except on
//!   point-to-point links where `IFA_LOCAL` is again the local one;
//! * `IFA_FLAGS` (u32), when present, supersedes the 8-bit `ifa_flags`; bit 0 is
//!   `IFA_F_SECONDARY` for IPv4 and `IFA_F_TEMPORARY` for IPv6;
//! * a dump lists an interface's primary IPv4 addresses before its secondary ones.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::link::{dump, recv_monitored, LinkError, RECV_BUF};
use crate::netlink::{self, Msg, MsgBuilder, NetlinkError, NlSocket, NLM_F_DUMP, NLM_F_REQUEST};

pub(crate) const RTM_NEWADDR: u16 = 20;
pub(crate) const RTM_DELADDR: u16 = 21;
pub(crate) const RTM_GETADDR: u16 = 22;
pub(crate) const IFADDRMSG_LEN: usize = 8;
pub(crate) const IFA_ADDRESS: u16 = 1;
pub(crate) const IFA_LOCAL: u16 = 2;
pub(crate) const IFA_FLAGS: u16 = 8;
pub(crate) const IFA_F_SECONDARY: u32 = 0x01;
pub(crate) const IFA_F_DADFAILED: u32 = 0x08;
pub(crate) const IFA_F_DEPRECATED: u32 = 0x20;
pub(crate) const IFA_F_TENTATIVE: u32 = 0x40;
const AF_INET: u8 = libc::AF_INET as u8;
const AF_INET6: u8 = libc::AF_INET6 as u8;
const RTMGRP_IPV4_IFADDR: u32 = 0x10;
const RTMGRP_IPV6_IFADDR: u32 = 0x100;
/// Receive buffer of [`AddrMonitor`]: address changes come a few at a time; an
/// overrun only means a new dump.
const ADDR_MONITOR_RCVBUF: usize = 1 << 20;

/// One address of one interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddrInfo {
    pub ifindex: u32,
    pub address: IpAddr,
    pub prefix_len: u8,
    /// `IFA_F_SECONDARY` (IPv4), or `IFA_F_TEMPORARY` (IPv6 privacy address).
    pub secondary: bool,
    /// `IFA_F_DEPRECATED`: its preferred lifetime is over.
    pub deprecated: bool,
    /// `IFA_F_TENTATIVE` or `IFA_F_DADFAILED`: not usable (yet).
    pub tentative: bool,
    /// `ifa_scope`: 0 universe, 200 site, 253 link, 254 host.
    pub scope: u8,
}

/// A change to one address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddrEvent {
    New(AddrInfo),
    Del(AddrInfo),
}

/// Parses a buffer of netlink messages into address events. `RTM_NEWADDR` and
/// `RTM_DELADDR` of families `AF_INET` and `AF_INET6` become events; other message
/// types and families are skipped. Any malformed message or attribute is an error
/// naming its offset; it never panics.
pub fn parse_addr_messages(buf: &[u8]) -> Result<Vec<AddrEvent>, NetlinkError> {
    let mut out = Vec::new();
    for msg in netlink::messages(buf) {
        let msg = msg?;
        if let Some(a) = parse_addr_msg(&msg)? {
            out.push(match msg.ty {
                RTM_NEWADDR => AddrEvent::New(a),
                _ => AddrEvent::Del(a),
            });
        }
    }
    Ok(out)
}

fn parse_addr_msg(msg: &Msg<'_>) -> Result<Option<AddrInfo>, NetlinkError> {
    if msg.ty != RTM_NEWADDR && msg.ty != RTM_DELADDR {
        return Ok(None);
    }
    let attrs = msg.after_header(IFADDRMSG_LEN, "ifaddrmsg")?;
    let p = msg.payload;
    // after_header() checked that the 8 bytes are there.
    let [family, prefix_len, flags8, scope] = [0, 1, 2, 3].map(|i| p.get(i).copied().unwrap_or(0));
    let index = netlink::ne_u32(p, 4).unwrap_or_default();
    let len = match family {
        AF_INET => 4,
        AF_INET6 => 16,
        _ => return Ok(None),
    };
    if index == 0 || index > i32::MAX as u32 {
        return Err(NetlinkError::new(
            msg.payload_offset + 4,
            "ifaddrmsg",
            format!("ifa_index {index} is not a valid interface index"),
        ));
    }
    let max_prefix = if family == AF_INET { 32 } else { 128 };
    if prefix_len > max_prefix {
        return Err(NetlinkError::new(
            msg.payload_offset + 1,
            "ifaddrmsg",
            format!("prefix length {prefix_len} is over {max_prefix}"),
        ));
    }
    let mut address = None;
    let mut local = None;
    let mut flags = u32::from(flags8);
    for a in attrs.attrs() {
        let a = a?;
        match a.ty {
            IFA_ADDRESS | IFA_LOCAL => {
                let ip = ip(a.payload, len).ok_or_else(|| {
                    NetlinkError::new(
                        a.offset,
                        if a.ty == IFA_LOCAL {
                            "IFA_LOCAL"
                        } else {
                            "IFA_ADDRESS"
                        },
                        format!(
                            "{} bytes, an address of this family has {len}",
                            a.payload.len()
                        ),
                    )
                })?;
                if a.ty == IFA_LOCAL {
                    local = Some(ip);
                } else {
                    address = Some(ip);
                }
            }
            IFA_FLAGS => flags = a.u32("IFA_FLAGS")?,
            _ => {}
        }
    }
    let Some(address) = local.or(address) else {
        return Err(NetlinkError::new(
            msg.offset,
            "ifaddrmsg",
            format!("address of interface {index} without IFA_ADDRESS or IFA_LOCAL"),
        ));
    };
    Ok(Some(AddrInfo {
        ifindex: index,
        address,
        prefix_len,
        secondary: flags & IFA_F_SECONDARY != 0,
        deprecated: flags & IFA_F_DEPRECATED != 0,
        tentative: flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED) != 0,
        scope,
    }))
}

fn ip(b: &[u8], len: usize) -> Option<IpAddr> {
    match len {
        4 => <[u8; 4]>::try_from(b)
            .ok()
            .map(|o| Ipv4Addr::from(o).into()),
        _ => <[u8; 16]>::try_from(b)
            .ok()
            .map(|o| Ipv6Addr::from(o).into()),
    }
}

/// The request [`dump_addresses`] sends: `RTM_GETADDR`, `NLM_F_REQUEST |
/// NLM_F_DUMP`, an all-zero `struct ifaddrmsg` (every family).
pub fn encode_addr_dump_request(seq: u32) -> Vec<u8> {
    let mut b = MsgBuilder::new(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, seq);
    b.header(&[0; IFADDRMSG_LEN]);
    b.finish()
}

/// Lists every IPv4 and IPv6 address (in the calling thread's network namespace)
/// with a blocking `RTM_GETADDR` dump on a socket of its own.
pub fn dump_addresses() -> Result<Vec<AddrInfo>, LinkError> {
    dump(encode_addr_dump_request, parse_addr_msg)
}

/// A non-blocking subscription to address changes (IPv4 and IPv6).
#[derive(Debug)]
pub struct AddrMonitor {
    sock: NlSocket,
}

impl AddrMonitor {
    pub fn open() -> std::io::Result<AddrMonitor> {
        let sock = NlSocket::open(true, RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR)?;
        sock.set_rcvbuf(ADDR_MONITOR_RCVBUF)?;
        Ok(AddrMonitor { sock })
    }

    /// Reads one datagram and returns its address events. An empty socket is
    /// `LinkError::Io` of kind `WouldBlock`; a buffer overrun is
    /// [`LinkError::Overrun`] (dump the addresses again).
    pub fn recv(&self) -> Result<Vec<AddrEvent>, LinkError> {
        let mut buf = vec![0u8; RECV_BUF];
        Ok(parse_addr_messages(recv_monitored(&self.sock, &mut buf)?)?)
    }
}

crate::sys::fd_traits!(AddrMonitor, sock);

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn addr_msg(
        ty: u16,
        family: u8,
        prefix: u8,
        flags: u8,
        index: u32,
        attrs: &[(u16, &[u8])],
    ) -> Vec<u8> {
        let mut b = MsgBuilder::new(ty, 0, 0);
        let mut h = [0u8; 8];
        h[0] = family;
        h[1] = prefix;
        h[2] = flags;
        h[4..8].copy_from_slice(&index.to_ne_bytes());
        b.header(&h);
        for (t, d) in attrs {
            b.attr(*t, d);
        }
        b.finish()
    }

    #[test]
    fn ipv4_local_ipv6_address_and_flags() {
        let mut buf = addr_msg(
            RTM_NEWADDR,
            AF_INET,
            24,
            IFA_F_SECONDARY as u8,
            3,
            &[
                (IFA_ADDRESS, &[192, 0, 2, 99]),
                (IFA_LOCAL, &[192, 0, 2, 3]),
            ],
        );
        let v6: Ipv6Addr = "2001:db8::3".parse().unwrap();
        buf.extend(addr_msg(
            RTM_DELADDR,
            AF_INET6,
            64,
            0,
            3,
            &[
                (IFA_ADDRESS, &v6.octets()),
                (
                    IFA_FLAGS,
                    &(IFA_F_TENTATIVE | IFA_F_DEPRECATED).to_ne_bytes(),
                ),
            ],
        ));
        // Another family and another message type are skipped.
        buf.extend(addr_msg(RTM_NEWADDR, 17, 0, 0, 3, &[]));
        buf.extend(addr_msg(16, AF_INET, 0, 0, 3, &[]));
        let ev = parse_addr_messages(&buf).unwrap();
        assert_eq!(
            ev,
            vec![
                AddrEvent::New(AddrInfo {
                    ifindex: 3,
                    address: "192.0.2.3".parse().unwrap(),
                    prefix_len: 24,
                    secondary: true,
                    deprecated: false,
                    tentative: false,
                    scope: 0,
                }),
                AddrEvent::Del(AddrInfo {
                    ifindex: 3,
                    address: v6.into(),
                    prefix_len: 64,
                    secondary: false,
                    deprecated: true,
                    tentative: true,
                    scope: 0,
                }),
            ]
        );
    }

    #[test]
    fn malformed_addresses_are_errors() {
        let e = parse_addr_messages(&addr_msg(RTM_NEWADDR, AF_INET, 24, 0, 3, &[])).unwrap_err();
        assert_eq!((e.offset, e.what), (0, "ifaddrmsg"));
        let e = parse_addr_messages(&addr_msg(
            RTM_NEWADDR,
            AF_INET,
            24,
            0,
            3,
            &[(IFA_LOCAL, &[1, 2, 3])],
        ))
        .unwrap_err();
        assert_eq!((e.offset, e.what), (24, "IFA_LOCAL"));
        let e = parse_addr_messages(&addr_msg(RTM_NEWADDR, AF_INET6, 129, 0, 3, &[])).unwrap_err();
        assert_eq!((e.offset, e.what), (17, "ifaddrmsg"));
        let e = parse_addr_messages(&addr_msg(RTM_NEWADDR, AF_INET, 8, 0, 0, &[])).unwrap_err();
        assert_eq!((e.offset, e.what), (20, "ifaddrmsg"));
        let mut short = MsgBuilder::new(RTM_NEWADDR, 0, 0);
        short.header(&[AF_INET, 0, 0]);
        let e = parse_addr_messages(&short.finish()).unwrap_err();
        assert_eq!((e.offset, e.what), (16, "ifaddrmsg"));
    }

    #[test]
    fn dump_request_layout() {
        let r = encode_addr_dump_request(4);
        assert_eq!(r.len(), 24);
        assert_eq!(u16::from_ne_bytes(r[4..6].try_into().unwrap()), RTM_GETADDR);
        assert_eq!(u16::from_ne_bytes(r[6..8].try_into().unwrap()), 0x301);
        assert!(r[16..].iter().all(|&b| b == 0));
    }
}

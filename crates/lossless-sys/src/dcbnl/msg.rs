//! dcbnl message framing: `struct dcbmsg` after the netlink header, the request
//! builder and the reply matcher shared by every command (the commands and the
//! top-level attributes are `cmd.rs`'s).

use super::error::DcbError;
use crate::netlink::{self, Attrs, Bytes, MsgBuilder, NetlinkError, NLMSG_ERROR};

pub(crate) const DCBMSG_LEN: usize = 4;
pub(crate) const AF_UNSPEC: u8 = 0;
pub(crate) const IFNAMSIZ: usize = 16;

pub use super::cmd::{DcbCmd, RTM_GETDCB, RTM_SETDCB};
pub(crate) use super::cmd::{
    DCB_ATTR_DCBX, DCB_ATTR_IEEE, DCB_ATTR_IFNAME, DCB_ATTR_PFC_CFG, DCB_ATTR_PFC_STATE,
    DCB_ATTR_PG_CFG, DCB_ATTR_SET_ALL, DCB_ATTR_STATE,
};

pub(crate) fn request(cmd: DcbCmd, seq: u32, ifname: &str) -> Result<MsgBuilder, DcbError> {
    if ifname.is_empty() || ifname.len() >= IFNAMSIZ || ifname.bytes().any(|b| b == 0) {
        return Err(DcbError::Invalid(format!(
            "{cmd}: interface name {ifname:?} must be 1 to {} bytes without NUL",
            IFNAMSIZ - 1
        )));
    }
    let mut b = MsgBuilder::new(cmd.msg_type(), netlink::NLM_F_REQUEST, seq);
    b.header(&[AF_UNSPEC, cmd.code(), 0, 0]);
    let mut name = Vec::with_capacity(ifname.len() + 1);
    name.extend_from_slice(ifname.as_bytes());
    name.push(0);
    b.attr(DCB_ATTR_IFNAME, &name);
    Ok(b)
}

/// Looks for the answer to request `seq` (command `cmd`) in one datagram.
/// `Ok(None)`: not in this datagram (other sequence numbers are stale
/// replies and skipped; a bare ACK is skipped). A kernel error for `seq`
/// becomes the matching [`DcbError`]; the reply's attributes are returned.
pub(crate) fn find_reply<'a>(
    buf: &'a [u8],
    seq: u32,
    cmd: DcbCmd,
    ifname: &str,
) -> Result<Option<Bytes<'a>>, DcbError> {
    let malformed = |e: NetlinkError| DcbError::reply(ifname, cmd, e);
    for msg in netlink::messages(buf) {
        let msg = msg.map_err(malformed)?;
        if msg.seq != seq {
            continue;
        }
        if msg.ty == NLMSG_ERROR {
            let code = msg.error_code().map_err(malformed)?;
            return match code {
                0 => continue,
                c if c > 0 => Err(malformed(NetlinkError::new(
                    msg.payload_offset,
                    "nlmsgerr",
                    format!("positive error code {c}"),
                ))),
                c => Err(DcbError::from_kernel(ifname, cmd, c.saturating_neg())),
            };
        }
        if msg.ty == netlink::NLMSG_NOOP {
            continue;
        }
        if msg.ty != cmd.msg_type() {
            return Err(malformed(NetlinkError::new(
                msg.offset,
                "nlmsghdr",
                format!(
                    "reply of type {}, expected {} for {cmd}",
                    msg.ty,
                    cmd.msg_type()
                ),
            )));
        }
        let attrs = msg.after_header(DCBMSG_LEN, "dcbmsg").map_err(malformed)?;
        let got = msg.payload.get(1).copied().unwrap_or_default();
        if got != cmd.code() {
            return Err(malformed(NetlinkError::new(
                msg.payload_offset + 1,
                "dcbmsg",
                format!("reply to command {got}, expected {} ({cmd})", cmd.code()),
            )));
        }
        return Ok(Some(attrs));
    }
    Ok(None)
}

/// Finds the answer to `seq` in `buf` ([`find_reply`]) and parses its
/// attributes with `parse`; a parse error becomes [`DcbError::Reply`] naming
/// the interface and the command.
pub(crate) fn decode_with<T>(
    buf: &[u8],
    seq: u32,
    cmd: DcbCmd,
    ifname: &str,
    parse: impl FnOnce(Bytes<'_>) -> Result<T, NetlinkError>,
) -> Result<Option<T>, DcbError> {
    let Some(attrs) = find_reply(buf, seq, cmd, ifname)? else {
        return Ok(None);
    };
    parse(attrs)
        .map(Some)
        .map_err(|e| DcbError::reply(ifname, cmd, e))
}

pub(crate) fn find_attr<'a>(
    attrs: Attrs<'a>,
    ty: u16,
    what: &'static str,
    container: usize,
) -> Result<netlink::Attr<'a>, NetlinkError> {
    let mut found = None;
    for a in attrs {
        let a = a?;
        if a.ty == ty && found.is_none() {
            found = Some(a);
        }
    }
    found.ok_or_else(|| NetlinkError::new(container, what, "missing"))
}

/// Decodes a reply that carries one u8: the value of `DCB_CMD_GSTATE` /
/// `PFC_GSTATE` / `GDCBX`, or the status of a set command (0 = done; for SET_ALL see
/// [`SET_ALL_CHANGED_NO_RESET`] and friends). `Ok(None)` if the datagram
/// holds no answer to `seq`. Panics never; errors for anything malformed.
pub fn decode_u8_reply(
    buf: &[u8],
    seq: u32,
    cmd: DcbCmd,
    ifname: &str,
) -> Result<Option<u8>, DcbError> {
    let Some((attr, what)) = cmd.u8_attr() else {
        return Err(DcbError::Invalid(format!(
            "{cmd} does not answer with a u8"
        )));
    };
    decode_with(buf, seq, cmd, ifname, |attrs| {
        find_attr(attrs.attrs(), attr, what, attrs.offset)?.u8(what)
    })
}

/// A fixed-layout struct attribute: at least `len` bytes (netlink structs only
/// grow at the end, and the kernel's own policies check a minimum length).
pub(crate) fn struct_attr<'a>(
    a: &netlink::Attr<'a>,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8], NetlinkError> {
    if a.payload.len() < len {
        return Err(NetlinkError::new(
            a.offset,
            what,
            format!(
                "payload of {} bytes, the struct needs {len}",
                a.payload.len()
            ),
        ));
    }
    Ok(a.payload)
}

pub(crate) fn ne_u64(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        v.copy_from_slice(s);
    }
    u64::from_ne_bytes(v)
}

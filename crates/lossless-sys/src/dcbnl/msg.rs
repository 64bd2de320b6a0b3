//! dcbnl message framing: `struct dcbmsg` after the netlink header, the
//! commands, the top-level attributes, the request builder and the reply
//! matcher shared by every command.

use std::fmt;

use super::error::DcbError;
use crate::netlink::{self, Attrs, Bytes, MsgBuilder, NetlinkError, NLMSG_ERROR};

pub const RTM_GETDCB: u16 = 78;
pub const RTM_SETDCB: u16 = 79;

pub(crate) const DCBMSG_LEN: usize = 4;
pub(crate) const AF_UNSPEC: u8 = 0;
pub(crate) const IFNAMSIZ: usize = 16;

pub(crate) const DCB_ATTR_IFNAME: u16 = 1;
pub(crate) const DCB_ATTR_STATE: u16 = 2;
pub(crate) const DCB_ATTR_PFC_STATE: u16 = 3;
pub(crate) const DCB_ATTR_PFC_CFG: u16 = 4;
pub(crate) const DCB_ATTR_PG_CFG: u16 = 6;
pub(crate) const DCB_ATTR_SET_ALL: u16 = 7;
pub(crate) const DCB_ATTR_IEEE: u16 = 13;
/// The DCBX mode (`DCB_CAP_DCBX_*` flags), u8: the value of `GDCBX`, the
/// argument of `SDCBX`, and in the `IEEE_GET` reply after the IEEE nest.
pub(crate) const DCB_ATTR_DCBX: u16 = 14;

/// The dcbnl commands used here (`enum dcbnl_commands`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DcbCmd {
    GetState = 1,
    SetState = 2,
    PgTxGetCfg = 3,
    PgTxSetCfg = 4,
    PgRxGetCfg = 5,
    PgRxSetCfg = 6,
    PfcGetCfg = 7,
    PfcSetCfg = 8,
    SetAll = 9,
    PfcGetState = 14,
    PfcSetState = 15,
    IeeeSet = 20,
    IeeeGet = 21,
    GetDcbx = 22,
    SetDcbx = 23,
    IeeeDel = 27,
}

impl DcbCmd {
    /// The `dcbmsg.cmd` byte.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The uapi name, e.g. `DCB_CMD_GSTATE`.
    pub fn name(self) -> &'static str {
        match self {
            DcbCmd::GetState => "DCB_CMD_GSTATE",
            DcbCmd::SetState => "DCB_CMD_SSTATE",
            DcbCmd::PgTxGetCfg => "DCB_CMD_PGTX_GCFG",
            DcbCmd::PgTxSetCfg => "DCB_CMD_PGTX_SCFG",
            DcbCmd::PgRxGetCfg => "DCB_CMD_PGRX_GCFG",
            DcbCmd::PgRxSetCfg => "DCB_CMD_PGRX_SCFG",
            DcbCmd::PfcGetCfg => "DCB_CMD_PFC_GCFG",
            DcbCmd::PfcSetCfg => "DCB_CMD_PFC_SCFG",
            DcbCmd::SetAll => "DCB_CMD_SET_ALL",
            DcbCmd::PfcGetState => "DCB_CMD_PFC_GSTATE",
            DcbCmd::PfcSetState => "DCB_CMD_PFC_SSTATE",
            DcbCmd::IeeeSet => "DCB_CMD_IEEE_SET",
            DcbCmd::IeeeGet => "DCB_CMD_IEEE_GET",
            DcbCmd::GetDcbx => "DCB_CMD_GDCBX",
            DcbCmd::SetDcbx => "DCB_CMD_SDCBX",
            DcbCmd::IeeeDel => "DCB_CMD_IEEE_DEL",
        }
    }

    fn is_set(self) -> bool {
        matches!(
            self,
            DcbCmd::SetState
                | DcbCmd::PgTxSetCfg
                | DcbCmd::PgRxSetCfg
                | DcbCmd::PfcSetCfg
                | DcbCmd::SetAll
                | DcbCmd::PfcSetState
                | DcbCmd::IeeeSet
                | DcbCmd::SetDcbx
                | DcbCmd::IeeeDel
        )
    }

    /// The message type of both request and reply (the kernel's
    /// `reply_funcs[cmd].type`).
    pub fn msg_type(self) -> u16 {
        if self.is_set() {
            RTM_SETDCB
        } else {
            RTM_GETDCB
        }
    }

    /// The attribute carrying the u8 answer (value or status), for the
    /// commands that answer with one.
    pub(crate) fn u8_attr(self) -> Option<(u16, &'static str)> {
        match self {
            DcbCmd::GetState | DcbCmd::SetState => Some((DCB_ATTR_STATE, "DCB_ATTR_STATE")),
            DcbCmd::PfcGetState | DcbCmd::PfcSetState => {
                Some((DCB_ATTR_PFC_STATE, "DCB_ATTR_PFC_STATE"))
            }
            DcbCmd::PfcSetCfg => Some((DCB_ATTR_PFC_CFG, "DCB_ATTR_PFC_CFG")),
            DcbCmd::PgTxSetCfg | DcbCmd::PgRxSetCfg => Some((DCB_ATTR_PG_CFG, "DCB_ATTR_PG_CFG")),
            DcbCmd::SetAll => Some((DCB_ATTR_SET_ALL, "DCB_ATTR_SET_ALL")),
            DcbCmd::IeeeSet | DcbCmd::IeeeDel => Some((DCB_ATTR_IEEE, "DCB_ATTR_IEEE")),
            DcbCmd::GetDcbx | DcbCmd::SetDcbx => Some((DCB_ATTR_DCBX, "DCB_ATTR_DCBX")),
            DcbCmd::PgTxGetCfg | DcbCmd::PgRxGetCfg | DcbCmd::PfcGetCfg | DcbCmd::IeeeGet => None,
        }
    }
}

impl fmt::Display for DcbCmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

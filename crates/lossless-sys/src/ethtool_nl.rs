//! ethtool over generic netlink (the kernel's "ethtool" family, `net/ethtool/`): a
//! NIC's link flow control (`ETHTOOL_MSG_PAUSE_GET`/`_SET`) and its driver's private
//! flags (`ETHTOOL_MSG_PRIVFLAGS_GET`/`_SET`), as `ethtool -a`, `-A`,
//! `--show-priv-flags` and `--set-priv-flags` ask for them. Link pause and PFC do not
//! mix on most NICs, and some drivers keep the firmware's LLDP/DCBX agent behind a
//! private flag (ice's `fw-lldp-agent`, i40e's `disable-fw-lldp`): what the driver
//! answers, with its errno and the kernel's extack message, matters to the user, so a
//! refusal is an [`EthtoolError::Refused`] carrying both.
//!
//! Layouts (`linux/genetlink.h`, `linux/ethtool_netlink.h`): a message is a netlink
//! header, a 4-byte generic netlink header `{ cmd: u8, version: u8, reserved: u16 }`
//! and attributes; every request and reply opens with a nested `ETHTOOL_A_*_HEADER`
//! naming the device. The message builders and parsers below are pure functions over
//! bytes ([`encode_pause_set`], [`parse_answers`], [`decode_pause`],
//! [`decode_private_flags`], ...); only [`EthtoolNl`] does I/O.

use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use crate::netlink::{
    align4, messages, ne_u16, ne_u32, Attr, Bytes, MsgBuilder, NetlinkError, NlSocket, NLMSG_ERROR,
    NLMSG_HDRLEN, NLM_F_REQUEST,
};
use crate::sys;

// linux/netlink.h
pub(crate) const NLM_F_ACK: u16 = 0x04;
pub(crate) const NLM_F_CAPPED: u16 = 0x100;
pub(crate) const NLM_F_ACK_TLVS: u16 = 0x200;
pub(crate) const NLA_F_NESTED: u16 = 0x8000;
pub(crate) const NLMSGERR_ATTR_MSG: u16 = 1;
pub(crate) const SOL_NETLINK: libc::c_int = 270;
pub(crate) const NETLINK_EXT_ACK: libc::c_int = 11;
pub(crate) const NETLINK_CAP_ACK: libc::c_int = 10;
// linux/genetlink.h
pub(crate) const GENL_HDRLEN: usize = 4;
pub(crate) const GENL_ID_CTRL: u16 = 0x10;
pub(crate) const CTRL_CMD_NEWFAMILY: u8 = 1;
pub(crate) const CTRL_CMD_GETFAMILY: u8 = 3;
pub(crate) const CTRL_ATTR_FAMILY_ID: u16 = 1;
pub(crate) const CTRL_ATTR_FAMILY_NAME: u16 = 2;
// linux/ethtool_netlink.h
pub(crate) const ETHTOOL_GENL_NAME: &str = "ethtool";
pub(crate) const ETHTOOL_GENL_VERSION: u8 = 1;
pub(crate) const ETHTOOL_MSG_PRIVFLAGS_GET: u8 = 13;
pub(crate) const ETHTOOL_MSG_PRIVFLAGS_SET: u8 = 14;
pub(crate) const ETHTOOL_MSG_PAUSE_GET: u8 = 21;
pub(crate) const ETHTOOL_MSG_PAUSE_SET: u8 = 22;
pub(crate) const ETHTOOL_MSG_PRIVFLAGS_GET_REPLY: u8 = 14;
pub(crate) const ETHTOOL_MSG_PAUSE_GET_REPLY: u8 = 22;
pub(crate) const ETHTOOL_A_HEADER_DEV_NAME: u16 = 2;
/// `ETHTOOL_A_PAUSE_HEADER` and `ETHTOOL_A_PRIVFLAGS_HEADER`.
pub(crate) const ETHTOOL_A_HEADER: u16 = 1;
pub(crate) const ETHTOOL_A_PAUSE_AUTONEG: u16 = 2;
pub(crate) const ETHTOOL_A_PAUSE_RX: u16 = 3;
pub(crate) const ETHTOOL_A_PAUSE_TX: u16 = 4;
pub(crate) const ETHTOOL_A_PRIVFLAGS_FLAGS: u16 = 2;
pub(crate) const ETHTOOL_A_BITSET_NOMASK: u16 = 1;
pub(crate) const ETHTOOL_A_BITSET_SIZE: u16 = 2;
pub(crate) const ETHTOOL_A_BITSET_BITS: u16 = 3;
pub(crate) const ETHTOOL_A_BITSET_VALUE: u16 = 4;
pub(crate) const ETHTOOL_A_BITSET_MASK: u16 = 5;
pub(crate) const ETHTOOL_A_BITSET_BITS_BIT: u16 = 1;
pub(crate) const ETHTOOL_A_BITSET_BIT_INDEX: u16 = 1;
pub(crate) const ETHTOOL_A_BITSET_BIT_NAME: u16 = 2;
pub(crate) const ETHTOOL_A_BITSET_BIT_VALUE: u16 = 3;
/// `ETH_GSTRING_LEN`: a private flag's name is at most 31 bytes and its NUL.
pub(crate) const ETH_GSTRING_LEN: usize = 32;

/// How long [`EthtoolNl`] waits for the kernel's answer.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(1);

/// A NIC's link flow control (IEEE 802.3 PAUSE), as its driver reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pause {
    /// Flow control is negotiated with the link partner.
    pub autoneg: bool,
    /// Received PAUSE frames are honoured.
    pub rx: bool,
    /// PAUSE frames are sent.
    pub tx: bool,
}

/// The request an error answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EthtoolOp {
    /// `CTRL_CMD_GETFAMILY` for the "ethtool" family.
    GetFamily,
    PauseGet,
    PauseSet,
    PrivFlagsGet,
    PrivFlagsSet,
}

impl EthtoolOp {
    pub fn name(self) -> &'static str {
        match self {
            EthtoolOp::GetFamily => "CTRL_CMD_GETFAMILY",
            EthtoolOp::PauseGet => "ETHTOOL_MSG_PAUSE_GET",
            EthtoolOp::PauseSet => "ETHTOOL_MSG_PAUSE_SET",
            EthtoolOp::PrivFlagsGet => "ETHTOOL_MSG_PRIVFLAGS_GET",
            EthtoolOp::PrivFlagsSet => "ETHTOOL_MSG_PRIVFLAGS_SET",
        }
    }
}

impl fmt::Display for EthtoolOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What went wrong with an ethtool request.
#[derive(Debug, thiserror::Error)]
pub enum EthtoolError {
    /// The kernel or the driver refused (`NLMSG_ERROR`): the errno, and the extack
    /// message when the kernel gave one (`NLMSGERR_ATTR_MSG`; drivers mostly write
    /// theirs to the kernel log only).
    #[error("{ifname}: {op}: {}", refusal_text(*errno, message.as_deref()))]
    Refused {
        op: EthtoolOp,
        ifname: String,
        errno: i32,
        message: Option<String>,
    },
    /// The kernel has no "ethtool" generic netlink family (`CTRL_CMD_GETFAMILY`
    /// refused, e.g. `ENOENT` on a kernel without `CONFIG_ETHTOOL_NETLINK`).
    #[error("no ethtool generic netlink family: {}", refusal_text(*errno, message.as_deref()))]
    NoFamily { errno: i32, message: Option<String> },
    /// The answer did not parse, or was not an answer to the request.
    #[error("{ifname}: {op}: malformed reply: {source}")]
    Reply {
        op: EthtoolOp,
        ifname: String,
        source: NetlinkError,
    },
    /// No answer to request `seq` within `waited`.
    #[error("{ifname}: {op}: no reply to request {seq} within {waited:?}")]
    Timeout {
        op: EthtoolOp,
        ifname: String,
        seq: u32,
        waited: Duration,
    },
    /// The request cannot be encoded (an interface or flag name); nothing was sent.
    #[error("invalid ethtool request: {0}")]
    Invalid(String),
    /// The socket failed (opening it, or sending or receiving for `op`).
    #[error("ethtool netlink socket{}: {source}", op.map(|o| format!(" ({o})")).unwrap_or_default())]
    Io {
        op: Option<EthtoolOp>,
        source: io::Error,
    },
}

impl EthtoolError {
    /// The errno the kernel or the driver answered, if it answered one.
    pub fn errno(&self) -> Option<i32> {
        match self {
            EthtoolError::Refused { errno, .. } | EthtoolError::NoFamily { errno, .. } => {
                Some(*errno)
            }
            EthtoolError::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// [`EthtoolError::errno`] by its symbolic name (`EOPNOTSUPP`, `EINVAL`, ...).
    pub fn errno_name(&self) -> Option<String> {
        self.errno().map(errno_name)
    }

    /// The kernel's extack message, if it gave one.
    pub fn message(&self) -> Option<&str> {
        match self {
            EthtoolError::Refused { message, .. } | EthtoolError::NoFamily { message, .. } => {
                message.as_deref()
            }
            _ => None,
        }
    }

    /// The request that failed, when one was made.
    pub fn op(&self) -> Option<EthtoolOp> {
        match self {
            EthtoolError::Refused { op, .. }
            | EthtoolError::Reply { op, .. }
            | EthtoolError::Timeout { op, .. } => Some(*op),
            EthtoolError::NoFamily { .. } => Some(EthtoolOp::GetFamily),
            EthtoolError::Io { op, .. } => *op,
            EthtoolError::Invalid(_) => None,
        }
    }
}

/// The symbolic name of an errno ethtool requests answer with (`EOPNOTSUPP`, ...),
/// else `errno N`.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::ERANGE => "ERANGE",
        libc::ENODATA => "ENODATA",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOBUFS => "ENOBUFS",
        libc::ETIMEDOUT => "ETIMEDOUT",
        524 => "ENOTSUPP",
        n => return format!("errno {n}"),
    };
    name.to_owned()
}

fn refusal_text(errno: i32, message: Option<&str>) -> String {
    let mut s = format!(
        "{} ({})",
        errno_name(errno),
        io::Error::from_raw_os_error(errno)
    );
    if let Some(m) = message {
        s.push_str(": ");
        s.push_str(m);
    }
    s
}

// ---- requests -------------------------------------------------------------------------

/// An interface name as a netlink string attribute wants it: 1..=15 bytes, no NUL.
fn check_ifname(ifname: &str) -> Result<(), EthtoolError> {
    if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ || ifname.contains('\0') {
        return Err(EthtoolError::Invalid(format!(
            "interface name {ifname:?}: must be 1 to {} bytes without NUL",
            libc::IFNAMSIZ - 1
        )));
    }
    Ok(())
}

fn nul_terminated(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() + 1);
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    v
}

/// A request of the ethtool family: the headers, then the device header nest.
fn request(family: u16, seq: u32, cmd: u8, ifname: &str) -> Result<MsgBuilder, EthtoolError> {
    check_ifname(ifname)?;
    let mut b = MsgBuilder::new(family, NLM_F_REQUEST | NLM_F_ACK, seq);
    b.header(&[cmd, ETHTOOL_GENL_VERSION, 0, 0]);
    let n = b.nest_start(ETHTOOL_A_HEADER | NLA_F_NESTED);
    b.attr(ETHTOOL_A_HEADER_DEV_NAME, &nul_terminated(ifname));
    b.nest_end(n);
    Ok(b)
}

/// `CTRL_CMD_GETFAMILY` for the "ethtool" family (asking for an ACK).
pub fn encode_get_family(seq: u32) -> Vec<u8> {
    let mut b = MsgBuilder::new(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, seq);
    b.header(&[CTRL_CMD_GETFAMILY, 1, 0, 0]);
    b.attr(CTRL_ATTR_FAMILY_NAME, &nul_terminated(ETHTOOL_GENL_NAME));
    b.finish()
}

/// `ETHTOOL_MSG_PAUSE_GET` for `ifname`.
pub fn encode_pause_get(family: u16, seq: u32, ifname: &str) -> Result<Vec<u8>, EthtoolError> {
    Ok(request(family, seq, ETHTOOL_MSG_PAUSE_GET, ifname)?.finish())
}

/// `ETHTOOL_MSG_PAUSE_SET` for `ifname`: an attribute for each value given (the
/// kernel keeps what the driver reports for the others).
pub fn encode_pause_set(
    family: u16,
    seq: u32,
    ifname: &str,
    autoneg: Option<bool>,
    rx: Option<bool>,
    tx: Option<bool>,
) -> Result<Vec<u8>, EthtoolError> {
    let mut b = request(family, seq, ETHTOOL_MSG_PAUSE_SET, ifname)?;
    for (ty, v) in [
        (ETHTOOL_A_PAUSE_AUTONEG, autoneg),
        (ETHTOOL_A_PAUSE_RX, rx),
        (ETHTOOL_A_PAUSE_TX, tx),
    ] {
        if let Some(on) = v {
            b.attr_u8(ty, u8::from(on));
        }
    }
    Ok(b.finish())
}

/// `ETHTOOL_MSG_PRIVFLAGS_GET` for `ifname`, asking for the verbose bitset (the
/// flags' names with their values).
pub fn encode_private_flags_get(
    family: u16,
    seq: u32,
    ifname: &str,
) -> Result<Vec<u8>, EthtoolError> {
    Ok(request(family, seq, ETHTOOL_MSG_PRIVFLAGS_GET, ifname)?.finish())
}

/// `ETHTOOL_MSG_PRIVFLAGS_SET` for `ifname` with a verbose bitset naming only
/// `name` (no `NOMASK`: the other flags stay as they are), its value flag when `on`.
pub fn encode_private_flag_set(
    family: u16,
    seq: u32,
    ifname: &str,
    name: &str,
    on: bool,
) -> Result<Vec<u8>, EthtoolError> {
    if name.is_empty() || name.len() >= ETH_GSTRING_LEN || name.contains('\0') {
        return Err(EthtoolError::Invalid(format!(
            "private flag name {name:?}: must be 1 to {} bytes without NUL",
            ETH_GSTRING_LEN - 1
        )));
    }
    let mut b = request(family, seq, ETHTOOL_MSG_PRIVFLAGS_SET, ifname)?;
    let flags = b.nest_start(ETHTOOL_A_PRIVFLAGS_FLAGS | NLA_F_NESTED);
    let bits = b.nest_start(ETHTOOL_A_BITSET_BITS | NLA_F_NESTED);
    let bit = b.nest_start(ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
    b.attr(ETHTOOL_A_BITSET_BIT_NAME, &nul_terminated(name));
    if on {
        b.flag(ETHTOOL_A_BITSET_BIT_VALUE);
    }
    b.nest_end(bit);
    b.nest_end(bits);
    b.nest_end(flags);
    Ok(b.finish())
}

// ---- answers -------------------------------------------------------------------------

/// One message of the kernel's answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A reply: its generic netlink command and its attributes (after the generic
    /// netlink header).
    Reply { cmd: u8, attrs: Vec<u8> },
    /// `NLMSG_ERROR` with 0: the request is done.
    Ack,
    /// `NLMSG_ERROR` with `-errno`, and the extack message if the kernel sent one.
    Refused { errno: i32, message: Option<String> },
}

/// The messages of one datagram that answer request `seq`, in order (messages for
/// other sequence numbers, stale answers, are left out).
pub fn parse_answers(buf: &[u8], seq: u32) -> Result<Vec<Answer>, NetlinkError> {
    let mut out = Vec::new();
    for m in messages(buf) {
        let m = m?;
        if m.seq != seq {
            continue;
        }
        if m.ty == NLMSG_ERROR {
            let errno = m.error_code()?;
            if errno == 0 {
                out.push(Answer::Ack);
            } else {
                out.push(Answer::Refused {
                    errno: errno.saturating_neg(),
                    message: extack_message(m.payload, m.flags, m.payload_offset)?,
                });
            }
            continue;
        }
        if m.ty < GENL_ID_CTRL {
            continue; // NLMSG_NOOP, NLMSG_DONE
        }
        let body = m.after_header(GENL_HDRLEN, "genlmsghdr")?;
        let cmd = m.payload.first().copied().unwrap_or_default();
        out.push(Answer::Reply {
            cmd,
            attrs: body.data.to_vec(),
        });
    }
    Ok(out)
}

/// The `NLMSGERR_ATTR_MSG` after an `NLMSG_ERROR`'s echoed request, when the
/// message carries extack attributes (`NLM_F_ACK_TLVS`).
fn extack_message(
    payload: &[u8],
    flags: u16,
    offset: usize,
) -> Result<Option<String>, NetlinkError> {
    if flags & NLM_F_ACK_TLVS == 0 {
        return Ok(None);
    }
    // struct nlmsgerr: the error, then the request's header (and, uncapped, the
    // rest of the request, up to its nlmsg_len).
    let echoed = if flags & NLM_F_CAPPED != 0 {
        NLMSG_HDRLEN
    } else {
        ne_u32(payload, 4).map(|l| l as usize).ok_or_else(|| {
            NetlinkError::new(
                offset,
                "nlmsgerr",
                "no room for the echoed request's header",
            )
        })?
    };
    if echoed < NLMSG_HDRLEN {
        return Err(NetlinkError::new(
            offset + 4,
            "nlmsgerr",
            format!("echoed nlmsg_len {echoed} is shorter than a header"),
        ));
    }
    let start = 4usize.saturating_add(align4(echoed));
    let Some(tlvs) = payload.get(start..) else {
        return Err(NetlinkError::new(
            offset,
            "nlmsgerr",
            format!(
                "the echoed request ({echoed} bytes) runs past the message ({} bytes)",
                payload.len()
            ),
        ));
    };
    let tlvs = Bytes {
        data: tlvs,
        offset: offset + start,
    };
    for a in tlvs.attrs() {
        let a = a?;
        if a.ty == NLMSGERR_ATTR_MSG {
            return Ok(Some(a.string()));
        }
    }
    Ok(None)
}

fn attrs_of(attrs: &[u8]) -> crate::netlink::Attrs<'_> {
    Bytes {
        data: attrs,
        offset: 0,
    }
    .attrs()
}

fn flag_u8(a: &Attr<'_>, what: &'static str) -> Result<bool, NetlinkError> {
    Ok(a.u8(what)? != 0)
}

/// `CTRL_ATTR_FAMILY_ID` of a `CTRL_CMD_NEWFAMILY` reply's attributes.
pub fn decode_family_id(attrs: &[u8]) -> Result<u16, NetlinkError> {
    for a in attrs_of(attrs) {
        let a = a?;
        if a.ty == CTRL_ATTR_FAMILY_ID {
            let id = ne_u16(a.payload, 0)
                .filter(|_| a.payload.len() == 2)
                .ok_or_else(|| {
                    NetlinkError::new(
                        a.offset,
                        "CTRL_ATTR_FAMILY_ID",
                        format!("payload of {} bytes, expected 2", a.payload.len()),
                    )
                })?;
            return Ok(id);
        }
    }
    Err(NetlinkError::new(
        0,
        "CTRL_ATTR_FAMILY_ID",
        "missing from the reply",
    ))
}

/// The flow control of an `ETHTOOL_MSG_PAUSE_GET_REPLY`'s attributes (the header and
/// statistics are skipped); each of autoneg, rx and tx must be there.
pub fn decode_pause(attrs: &[u8]) -> Result<Pause, NetlinkError> {
    let (mut autoneg, mut rx, mut tx) = (None, None, None);
    for a in attrs_of(attrs) {
        let a = a?;
        match a.ty {
            ETHTOOL_A_PAUSE_AUTONEG => autoneg = Some(flag_u8(&a, "ETHTOOL_A_PAUSE_AUTONEG")?),
            ETHTOOL_A_PAUSE_RX => rx = Some(flag_u8(&a, "ETHTOOL_A_PAUSE_RX")?),
            ETHTOOL_A_PAUSE_TX => tx = Some(flag_u8(&a, "ETHTOOL_A_PAUSE_TX")?),
            _ => {}
        }
    }
    let missing = |what| NetlinkError::new(0, what, "missing from the reply");
    Ok(Pause {
        autoneg: autoneg.ok_or_else(|| missing("ETHTOOL_A_PAUSE_AUTONEG"))?,
        rx: rx.ok_or_else(|| missing("ETHTOOL_A_PAUSE_RX"))?,
        tx: tx.ok_or_else(|| missing("ETHTOOL_A_PAUSE_TX"))?,
    })
}

/// The private flags of an `ETHTOOL_MSG_PRIVFLAGS_GET_REPLY`'s attributes, in the
/// driver's order: each flag's name (`bitN` where the bitset names none, as ethtool
/// prints it) and value. A verbose bitset with a mask (what the kernel sends) lists
/// every flag, the set ones with a value flag; a list bitset (`NOMASK`) lists the set
/// ones only; a compact one has a value and a mask word per 32 flags.
pub fn decode_private_flags(attrs: &[u8]) -> Result<Vec<(String, bool)>, NetlinkError> {
    let mut found = None;
    for a in attrs_of(attrs) {
        let a = a?;
        if a.ty == ETHTOOL_A_PRIVFLAGS_FLAGS {
            found = Some(a);
        }
    }
    let set = found.ok_or_else(|| {
        NetlinkError::new(0, "ETHTOOL_A_PRIVFLAGS_FLAGS", "missing from the reply")
    })?;
    decode_bitset(&set)
}

fn decode_bitset(set: &Attr<'_>) -> Result<Vec<(String, bool)>, NetlinkError> {
    let (mut nomask, mut size, mut bits, mut value, mut mask) = (false, None, None, None, None);
    for a in set.nested() {
        let a = a?;
        match a.ty {
            ETHTOOL_A_BITSET_NOMASK => nomask = true,
            ETHTOOL_A_BITSET_SIZE => size = Some(a.u32("ETHTOOL_A_BITSET_SIZE")?),
            ETHTOOL_A_BITSET_BITS => bits = Some(a),
            ETHTOOL_A_BITSET_VALUE => value = Some(a),
            ETHTOOL_A_BITSET_MASK => mask = Some(a),
            _ => {}
        }
    }
    if let Some(bits) = bits {
        let mut out = Vec::new();
        for b in bits.nested() {
            let b = b?;
            if b.ty != ETHTOOL_A_BITSET_BITS_BIT {
                return Err(NetlinkError::new(
                    b.offset,
                    "ETHTOOL_A_BITSET_BITS",
                    format!("attribute type {} where only BIT (1) is allowed", b.ty),
                ));
            }
            let (mut index, mut name, mut on) = (None, None, false);
            for f in b.nested() {
                let f = f?;
                match f.ty {
                    ETHTOOL_A_BITSET_BIT_INDEX => {
                        index = Some(f.u32("ETHTOOL_A_BITSET_BIT_INDEX")?)
                    }
                    ETHTOOL_A_BITSET_BIT_NAME => name = Some(f.string()),
                    ETHTOOL_A_BITSET_BIT_VALUE => on = true,
                    _ => {}
                }
            }
            let name = match (name, index) {
                (Some(n), _) => n,
                (None, Some(i)) => format!("bit{i}"),
                (None, None) => {
                    return Err(NetlinkError::new(
                        b.offset,
                        "ETHTOOL_A_BITSET_BITS_BIT",
                        "neither an index nor a name",
                    ))
                }
            };
            out.push((name, nomask || on));
        }
        return Ok(out);
    }
    // compact: SIZE bits of VALUE (and of MASK, unless it is a list)
    let size = size.ok_or_else(|| {
        NetlinkError::new(
            set.offset,
            "ETHTOOL_A_BITSET_SIZE",
            "missing from a compact bitset",
        )
    })?;
    let value = value.ok_or_else(|| {
        NetlinkError::new(
            set.offset,
            "ETHTOOL_A_BITSET_VALUE",
            "missing from a compact bitset",
        )
    })?;
    let words = (size as usize).div_ceil(32);
    for (a, what) in [
        (Some(value), "ETHTOOL_A_BITSET_VALUE"),
        (mask, "ETHTOOL_A_BITSET_MASK"),
    ] {
        if let Some(a) = a {
            if a.payload.len() != words * 4 {
                return Err(NetlinkError::new(
                    a.offset,
                    what,
                    format!("{} bytes for a bitset of {size} bits", a.payload.len()),
                ));
            }
        }
    }
    let bit = |a: &Attr<'_>, i: usize| {
        ne_u32(a.payload, (i / 32) * 4).is_some_and(|w| w & (1 << (i % 32)) != 0)
    };
    Ok((0..size as usize)
        .filter(|&i| {
            nomask
                || match &mask {
                    Some(m) => bit(m, i),
                    None => true,
                }
        })
        .map(|i| (format!("bit{i}"), bit(&value, i)))
        .collect())
}

// ---- the socket ------------------------------------------------------------------------

/// A blocking generic netlink socket for ethtool requests, one at a time, each waiting
/// at most [`REPLY_TIMEOUT`] for its answer; extack messages on. Works on interfaces
/// of the network namespace it was opened in.
#[derive(Debug)]
pub struct EthtoolNl {
    sock: NlSocket,
    family: u16,
    seq: u32,
    buf: Vec<u8>,
}

impl EthtoolNl {
    /// Opens the socket and resolves the "ethtool" family's id.
    pub fn open() -> Result<EthtoolNl, EthtoolError> {
        let io = |source| EthtoolError::Io { op: None, source };
        let sock = NlSocket::open_protocol(libc::NETLINK_GENERIC, false, 0).map_err(io)?;
        sock.set_rcvtimeo(REPLY_TIMEOUT).map_err(io)?;
        sys::setsockopt(&sock, SOL_NETLINK, NETLINK_EXT_ACK, &1 as &libc::c_int).map_err(io)?;
        // The request is not echoed back in an error (only its header).
        sys::setsockopt(&sock, SOL_NETLINK, NETLINK_CAP_ACK, &1 as &libc::c_int).map_err(io)?;
        let mut nl = EthtoolNl {
            sock,
            family: 0,
            seq: 0,
            buf: vec![0; 64 << 10],
        };
        let seq = nl.next_seq();
        let attrs = nl
            .transact(
                EthtoolOp::GetFamily,
                ETHTOOL_GENL_NAME,
                encode_get_family(seq),
                seq,
                Some(CTRL_CMD_NEWFAMILY),
            )
            .map_err(|e| match e {
                EthtoolError::Refused { errno, message, .. } => {
                    EthtoolError::NoFamily { errno, message }
                }
                e => e,
            })?;
        nl.family = decode_family_id(&attrs).map_err(|source| EthtoolError::Reply {
            op: EthtoolOp::GetFamily,
            ifname: ETHTOOL_GENL_NAME.into(),
            source,
        })?;
        Ok(nl)
    }

    /// The ethtool family's id (the netlink message type of its requests).
    pub fn family(&self) -> u16 {
        self.family
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }

    /// Sends `req` (sequence number `seq`, asking for an ACK) and waits for its
    /// answer: the attributes of the reply of command `reply` (none for a set) once
    /// the ACK came, or the refusal.
    fn transact(
        &mut self,
        op: EthtoolOp,
        ifname: &str,
        req: Vec<u8>,
        seq: u32,
        reply_cmd: Option<u8>,
    ) -> Result<Vec<u8>, EthtoolError> {
        let io = |source| EthtoolError::Io {
            op: Some(op),
            source,
        };
        let timeout = || EthtoolError::Timeout {
            op,
            ifname: ifname.to_owned(),
            seq,
            waited: REPLY_TIMEOUT,
        };
        self.sock.send(&req).map_err(io)?;
        let deadline = Instant::now() + REPLY_TIMEOUT;
        let mut reply = Vec::new();
        loop {
            let n = match self.sock.recv(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Err(timeout()),
                Err(e) => return Err(io(e)),
            };
            let answers =
                parse_answers(self.buf.get(..n).unwrap_or(&[]), seq).map_err(|source| {
                    EthtoolError::Reply {
                        op,
                        ifname: ifname.to_owned(),
                        source,
                    }
                })?;
            for a in answers {
                match a {
                    Answer::Reply { cmd, attrs } => {
                        if reply_cmd != Some(cmd) {
                            return Err(EthtoolError::Reply {
                                op,
                                ifname: ifname.to_owned(),
                                source: NetlinkError::new(
                                    0,
                                    "genlmsghdr",
                                    format!("a reply of command {cmd}, expected {reply_cmd:?}"),
                                ),
                            });
                        }
                        reply = attrs
                    }
                    Answer::Ack => return Ok(reply),
                    Answer::Refused { errno, message } => {
                        return Err(EthtoolError::Refused {
                            op,
                            ifname: ifname.to_owned(),
                            errno,
                            message,
                        })
                    }
                }
            }
            if Instant::now() >= deadline {
                return Err(timeout());
            }
        }
    }

    fn reply_error(op: EthtoolOp, ifname: &str, source: NetlinkError) -> EthtoolError {
        EthtoolError::Reply {
            op,
            ifname: ifname.to_owned(),
            source,
        }
    }

    /// The interface's link flow control (`ethtool -a`).
    pub fn pause(&mut self, ifname: &str) -> Result<Pause, EthtoolError> {
        let seq = self.next_seq();
        let req = encode_pause_get(self.family, seq, ifname)?;
        let attrs = self.transact(
            EthtoolOp::PauseGet,
            ifname,
            req,
            seq,
            Some(ETHTOOL_MSG_PAUSE_GET_REPLY),
        )?;
        decode_pause(&attrs).map_err(|e| Self::reply_error(EthtoolOp::PauseGet, ifname, e))
    }

    /// Changes the values given of the interface's link flow control (`ethtool -A`);
    /// the kernel calls the driver only when one of them changes.
    pub fn set_pause(
        &mut self,
        ifname: &str,
        autoneg: Option<bool>,
        rx: Option<bool>,
        tx: Option<bool>,
    ) -> Result<(), EthtoolError> {
        let seq = self.next_seq();
        let req = encode_pause_set(self.family, seq, ifname, autoneg, rx, tx)?;
        self.transact(EthtoolOp::PauseSet, ifname, req, seq, None)?;
        Ok(())
    }

    /// The driver's private flags and their values, in its order
    /// (`ethtool --show-priv-flags`).
    pub fn private_flags(&mut self, ifname: &str) -> Result<Vec<(String, bool)>, EthtoolError> {
        let seq = self.next_seq();
        let req = encode_private_flags_get(self.family, seq, ifname)?;
        let attrs = self.transact(
            EthtoolOp::PrivFlagsGet,
            ifname,
            req,
            seq,
            Some(ETHTOOL_MSG_PRIVFLAGS_GET_REPLY),
        )?;
        decode_private_flags(&attrs)
            .map_err(|e| Self::reply_error(EthtoolOp::PrivFlagsGet, ifname, e))
    }

    /// Turns one private flag on or off, the others as they are
    /// (`ethtool --set-priv-flags IF NAME on|off`).
    pub fn set_private_flag(
        &mut self,
        ifname: &str,
        name: &str,
        on: bool,
    ) -> Result<(), EthtoolError> {
        let seq = self.next_seq();
        let req = encode_private_flag_set(self.family, seq, ifname, name, on)?;
        self.transact(EthtoolOp::PrivFlagsSet, ifname, req, seq, None)?;
        Ok(())
    }
}

crate::sys::fd_traits!(EthtoolNl, sock);

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    const FAMILY: u16 = 21;

    /// What a kernel reply of `cmd` with `attrs` (built by `f`) looks like.
    fn reply(seq: u32, cmd: u8, f: impl FnOnce(&mut MsgBuilder)) -> Vec<u8> {
        let mut b = MsgBuilder::new(FAMILY, 0, seq);
        b.header(&[cmd, ETHTOOL_GENL_VERSION, 0, 0]);
        let h = b.nest_start(ETHTOOL_A_HEADER | NLA_F_NESTED);
        b.attr(1, &3u32.to_ne_bytes());
        b.attr(ETHTOOL_A_HEADER_DEV_NAME, b"va\0");
        b.nest_end(h);
        f(&mut b);
        b.finish()
    }

    fn attrs_of_reply(buf: &[u8], seq: u32) -> Vec<u8> {
        match parse_answers(buf, seq).unwrap().as_slice() {
            [Answer::Reply { attrs, .. }] => attrs.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_pause_get_request_is_laid_out_as_ethtool_sends_it() {
        // What strace shows Debian's ethtool 6.1 sending for `ethtool -a ta`.
        let want = [
            32u8, 0, 0, 0, 21, 0, 5, 0, 2, 0, 0, 0, 0, 0, 0, 0, // nlmsghdr
            21, 1, 0, 0, // genlmsghdr: PAUSE_GET, version 1
            12, 0, 1, 0x80, // the header nest
            7, 0, 2, 0, b't', b'a', 0, 0, // DEV_NAME "ta"
        ];
        assert_eq!(encode_pause_get(21, 2, "ta").unwrap(), want);
    }

    #[test]
    fn pause_set_carries_only_what_is_given() {
        let req = encode_pause_set(FAMILY, 9, "va", None, Some(false), Some(true)).unwrap();
        let attrs = &req[NLMSG_HDRLEN + GENL_HDRLEN..];
        let types: Vec<(u16, Vec<u8>)> = attrs_of(attrs)
            .map(|a| a.map(|a| (a.ty, a.payload.to_vec())))
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(types.len(), 3, "{types:?}");
        assert_eq!(types[1], (ETHTOOL_A_PAUSE_RX, vec![0]));
        assert_eq!(types[2], (ETHTOOL_A_PAUSE_TX, vec![1]));
        assert_eq!(req[NLMSG_HDRLEN], ETHTOOL_MSG_PAUSE_SET);
        assert_eq!(
            u16::from_ne_bytes([req[6], req[7]]),
            NLM_F_REQUEST | NLM_F_ACK
        );
    }

    #[test]
    fn the_private_flag_set_is_the_verbose_bitset_ethtool_sends() {
        // `ethtool --set-priv-flags ta foo on` (ethtool 6.1, from strace).
        let req = encode_private_flag_set(21, 2, "ta", "foo", true).unwrap();
        let tail = &req[32..];
        let want = [
            24u8, 0, 2, 0x80, // FLAGS
            20, 0, 3, 0x80, // BITS
            16, 0, 1, 0x80, // BIT
            8, 0, 2, 0, b'f', b'o', b'o', 0, // NAME
            4, 0, 3, 0, // VALUE
        ];
        assert_eq!(tail, want);
        // off: no value flag, so the bit is cleared
        let off = encode_private_flag_set(21, 2, "ta", "foo", false).unwrap();
        assert_eq!(off.len(), req.len() - 4);
        assert!(encode_private_flag_set(21, 2, "ta", "", true).is_err());
        assert!(encode_private_flag_set(21, 2, "ta", &"x".repeat(32), true).is_err());
        assert!(encode_pause_get(21, 2, "sixteen-chars-xx").is_err());
        assert!(encode_pause_get(21, 2, "").is_err());
    }

    #[test]
    fn a_pause_reply_decodes_and_so_does_the_set_request() {
        let buf = reply(4, ETHTOOL_MSG_PAUSE_GET_REPLY, |b| {
            b.attr_u8(ETHTOOL_A_PAUSE_AUTONEG, 1);
            b.attr_u8(ETHTOOL_A_PAUSE_RX, 0);
            b.attr_u8(ETHTOOL_A_PAUSE_TX, 1);
        });
        let p = decode_pause(&attrs_of_reply(&buf, 4)).unwrap();
        assert_eq!(
            p,
            Pause {
                autoneg: true,
                rx: false,
                tx: true
            }
        );
        // A request with every value has the reply's layout.
        let req = encode_pause_set(FAMILY, 1, "va", Some(false), Some(true), Some(false)).unwrap();
        let back = decode_pause(&req[NLMSG_HDRLEN + GENL_HDRLEN..]).unwrap();
        assert_eq!(
            back,
            Pause {
                autoneg: false,
                rx: true,
                tx: false
            }
        );
        // One missing: an error naming it.
        let short = reply(4, ETHTOOL_MSG_PAUSE_GET_REPLY, |b| {
            b.attr_u8(ETHTOOL_A_PAUSE_RX, 1)
        });
        let e = decode_pause(&attrs_of_reply(&short, 4)).unwrap_err();
        assert_eq!(e.what, "ETHTOOL_A_PAUSE_AUTONEG");
        // A u8 of the wrong size
        let bad = reply(4, ETHTOOL_MSG_PAUSE_GET_REPLY, |b| {
            b.attr(ETHTOOL_A_PAUSE_RX, &[1, 0])
        });
        assert_eq!(
            decode_pause(&attrs_of_reply(&bad, 4)).unwrap_err().what,
            "ETHTOOL_A_PAUSE_RX"
        );
    }

    #[test]
    fn private_flags_decode_from_each_bitset_form() {
        // verbose with a mask: every flag listed, the set ones with a value flag
        let verbose = reply(5, ETHTOOL_MSG_PRIVFLAGS_GET_REPLY, |b| {
            let f = b.nest_start(ETHTOOL_A_PRIVFLAGS_FLAGS | NLA_F_NESTED);
            b.attr(ETHTOOL_A_BITSET_SIZE, &2u32.to_ne_bytes());
            let bits = b.nest_start(ETHTOOL_A_BITSET_BITS | NLA_F_NESTED);
            for (i, name, on) in [(0u32, "fw-lldp-agent", true), (1, "legacy-rx", false)] {
                let bit = b.nest_start(ETHTOOL_A_BITSET_BITS_BIT | NLA_F_NESTED);
                b.attr(ETHTOOL_A_BITSET_BIT_INDEX, &i.to_ne_bytes());
                b.attr(ETHTOOL_A_BITSET_BIT_NAME, &nul_terminated(name));
                if on {
                    b.flag(ETHTOOL_A_BITSET_BIT_VALUE);
                }
                b.nest_end(bit);
            }
            b.nest_end(bits);
            b.nest_end(f);
        });
        assert_eq!(
            decode_private_flags(&attrs_of_reply(&verbose, 5)).unwrap(),
            vec![("fw-lldp-agent".into(), true), ("legacy-rx".into(), false)]
        );
        // compact: value and mask words, no names
        let compact = reply(5, ETHTOOL_MSG_PRIVFLAGS_GET_REPLY, |b| {
            let f = b.nest_start(ETHTOOL_A_PRIVFLAGS_FLAGS | NLA_F_NESTED);
            b.attr(ETHTOOL_A_BITSET_SIZE, &3u32.to_ne_bytes());
            b.attr(ETHTOOL_A_BITSET_VALUE, &0b101u32.to_ne_bytes());
            b.attr(ETHTOOL_A_BITSET_MASK, &0b111u32.to_ne_bytes());
            b.nest_end(f);
        });
        assert_eq!(
            decode_private_flags(&attrs_of_reply(&compact, 5)).unwrap(),
            vec![
                ("bit0".into(), true),
                ("bit1".into(), false),
                ("bit2".into(), true)
            ]
        );
        // a value word of the wrong size
        let bad = reply(5, ETHTOOL_MSG_PRIVFLAGS_GET_REPLY, |b| {
            let f = b.nest_start(ETHTOOL_A_PRIVFLAGS_FLAGS | NLA_F_NESTED);
            b.attr(ETHTOOL_A_BITSET_SIZE, &40u32.to_ne_bytes());
            b.attr(ETHTOOL_A_BITSET_VALUE, &1u32.to_ne_bytes());
            b.nest_end(f);
        });
        let e = decode_private_flags(&attrs_of_reply(&bad, 5)).unwrap_err();
        assert_eq!(e.what, "ETHTOOL_A_BITSET_VALUE");
        // the set request's bitset names the flag
        let req = encode_private_flag_set(FAMILY, 1, "va", "fw-lldp-agent", false).unwrap();
        assert_eq!(
            decode_private_flags(&req[NLMSG_HDRLEN + GENL_HDRLEN..]).unwrap(),
            vec![("fw-lldp-agent".into(), false)]
        );
    }

    #[test]
    fn refusals_keep_the_errno_and_the_extack_message() {
        // The running kernel's answer to a PAUSE_GET naming a device that does not
        // exist, on a socket with NETLINK_EXT_ACK and without NETLINK_CAP_ACK: the
        // request echoed, then "no device matches name" and its offset.
        let hex = "5c000000020000020700000000000000edffffff2400000015000500070000000000000015010000100001800a0002006e6f7065300000001b0001006e6f20646576696365206d617463686573206e616d6500000800020018000000";
        let buf: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(
            parse_answers(&buf, 7).unwrap(),
            vec![Answer::Refused {
                errno: libc::ENODEV,
                message: Some("no device matches name".into())
            }]
        );
        // Another sequence number: a stale answer, left out.
        assert!(parse_answers(&buf, 8).unwrap().is_empty());
        // Capped: only the request's header echoed, then the message.
        let mut b = MsgBuilder::new(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, 3);
        let mut body = (-libc::EOPNOTSUPP).to_ne_bytes().to_vec();
        body.extend_from_slice(&[0u8; 16]);
        b.header(&body);
        b.attr(NLMSGERR_ATTR_MSG, b"bit name not found\0");
        b.attr(2, &44u32.to_ne_bytes());
        let capped = b.finish();
        assert_eq!(
            parse_answers(&capped, 3).unwrap(),
            vec![Answer::Refused {
                errno: libc::EOPNOTSUPP,
                message: Some("bit name not found".into())
            }]
        );
        // An ACK.
        let mut ack = MsgBuilder::new(NLMSG_ERROR, NLM_F_CAPPED, 3);
        let mut body = 0i32.to_ne_bytes().to_vec();
        body.extend_from_slice(&[0u8; 16]);
        ack.header(&body);
        assert_eq!(parse_answers(&ack.finish(), 3).unwrap(), vec![Answer::Ack]);
        // An error whose echoed request claims more than there is.
        let mut bad = capped.clone();
        bad[6..8].copy_from_slice(&NLM_F_ACK_TLVS.to_ne_bytes());
        bad[20..24].copy_from_slice(&400u32.to_ne_bytes());
        assert!(parse_answers(&bad, 3).is_err());
        let e = EthtoolError::Refused {
            op: EthtoolOp::PrivFlagsSet,
            ifname: "va".into(),
            errno: libc::EOPNOTSUPP,
            message: Some("bit name not found".into()),
        };
        assert_eq!(e.errno_name().as_deref(), Some("EOPNOTSUPP"));
        assert_eq!(e.message(), Some("bit name not found"));
        assert!(
            e.to_string()
                .starts_with("va: ETHTOOL_MSG_PRIVFLAGS_SET: EOPNOTSUPP ("),
            "{e}"
        );
        assert!(e.to_string().ends_with(": bit name not found"), "{e}");
    }

    #[test]
    fn the_family_id_comes_from_the_ctrl_reply() {
        let mut b = MsgBuilder::new(GENL_ID_CTRL, 0, 1);
        b.header(&[1, 2, 0, 0]);
        b.attr(CTRL_ATTR_FAMILY_NAME, b"ethtool\0");
        b.attr(CTRL_ATTR_FAMILY_ID, &21u16.to_ne_bytes());
        let buf = b.finish();
        assert_eq!(decode_family_id(&attrs_of_reply(&buf, 1)).unwrap(), 21);
        assert_eq!(
            encode_get_family(1)[NLMSG_HDRLEN..NLMSG_HDRLEN + 2],
            [CTRL_CMD_GETFAMILY, 1]
        );
    }

    /// The running kernel: the family resolves, and `lo` (no pause ops) refuses with
    /// EOPNOTSUPP; a device that does not exist with ENODEV and the kernel's message.
    #[test]
    fn the_kernel_answers_for_the_loopback() {
        let mut nl = EthtoolNl::open().expect("the ethtool family");
        assert!(nl.family() >= GENL_ID_CTRL);
        let e = nl.pause("lo").unwrap_err();
        assert_eq!(e.errno(), Some(libc::EOPNOTSUPP), "{e}");
        let e = nl.private_flags("lo").unwrap_err();
        assert_eq!(e.errno(), Some(libc::EOPNOTSUPP), "{e}");
        let e = nl.pause("no-such-dev0").unwrap_err();
        assert_eq!(e.errno(), Some(libc::ENODEV), "{e}");
        assert_eq!(e.message(), Some("no device matches name"), "{e}");
    }
}

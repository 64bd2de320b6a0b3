//! What can go wrong with a dcbnl request, and the kind of it a daemon can
//! count by ([`DcbError::kind`]).
//!
//! The kernel reports failures two ways (`net/dcb/dcbnl.c`): an `NLMSG_ERROR`
//! with `-errno` when the request never reached the driver (no dcbnl ops, no
//! such device, no `CAP_NET_ADMIN`, an attribute its policy refuses), and a
//! status byte in the reply of a set command otherwise. For
//! `DCB_CMD_IEEE_SET`/`IEEE_DEL` that byte is the driver's own `-errno` cut
//! to a u8 (`nla_put_u8(skb, DCB_ATTR_IEEE, err)`); for the CEE set commands
//! and `SDCBX` it is a driver-defined non-zero value.

use std::fmt;
use std::io;
use std::time::Duration;

use super::cmd::DcbCmd;
use crate::netlink::NetlinkError;

/// The kernel-internal `ENOTSUPP` (524), which some dcbnl paths and drivers
/// let out to user space instead of `EOPNOTSUPP`.
const ENOTSUPP_KERNEL: i32 = 524;

#[derive(Debug, thiserror::Error)]
pub enum DcbError {
    /// `EOPNOTSUPP` (or the kernel-internal `ENOTSUPP`) from the kernel: the
    /// device has no dcbnl ops (veth, bridges, most virtual devices, NICs
    /// without DCB), or not the op this command needs.
    #[error("{ifname}: {cmd}: the driver does not support DCB netlink ({})", errno_name(*errno))]
    Unsupported {
        ifname: String,
        cmd: DcbCmd,
        errno: i32,
    },
    /// `ENODEV`: no interface of that name (in this network namespace).
    #[error("{ifname}: {cmd}: no such device")]
    NoDevice { ifname: String, cmd: DcbCmd },
    /// Any other error the kernel answered with (`NLMSG_ERROR`).
    #[error("{ifname}: {cmd}: {}", errno_text(*errno))]
    Kernel {
        ifname: String,
        cmd: DcbCmd,
        errno: i32,
    },
    /// A set command answered with a non-zero status: the driver refused.
    #[error("{ifname}: {cmd}: the driver refused ({})", status_text(*cmd, *status))]
    Status {
        ifname: String,
        cmd: DcbCmd,
        status: u8,
    },
    /// `DCB_CMD_IEEE_GET` lacks an object the operation needs: the driver has
    /// no op that reports it.
    #[error("{ifname}: {cmd}: the driver does not report {what}: {why}")]
    NotReported {
        ifname: String,
        cmd: DcbCmd,
        what: &'static str,
        why: &'static str,
    },
    /// The reply did not parse, or was not the reply to the request.
    #[error("{ifname}: {cmd}: malformed dcbnl reply: {source}")]
    Reply {
        ifname: String,
        cmd: DcbCmd,
        source: NetlinkError,
    },
    /// The request cannot be encoded (interface name, PGID, percentage, ...);
    /// nothing was sent.
    #[error("invalid dcbnl request: {0}")]
    Invalid(String),
    /// No answer to request `seq` within `waited`.
    #[error("{ifname}: {cmd}: no dcbnl reply to request {seq} within {waited:?}")]
    Timeout {
        ifname: String,
        cmd: DcbCmd,
        seq: u32,
        waited: Duration,
    },
    /// The socket failed (opening it, or sending or receiving for `cmd`).
    #[error("dcbnl socket{}: {source}", cmd.map(|c| format!(" ({c})")).unwrap_or_default())]
    Io {
        cmd: Option<DcbCmd>,
        source: io::Error,
    },
}

impl From<io::Error> for DcbError {
    fn from(source: io::Error) -> Self {
        DcbError::Io { cmd: None, source }
    }
}

/// What kind of failure a [`DcbError`] is: small and `Copy`, for counting
/// (metrics labels) and for deciding what to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DcbErrorKind {
    /// The device or its driver lacks the operation (`EOPNOTSUPP`,
    /// `ENOTSUP`, `ENOTSUPP`), or does not report an object we need.
    Unsupported,
    /// No such device (`ENODEV`).
    NoDevice,
    /// The driver or the kernel refused a value (`EINVAL`, `ERANGE`, or a
    /// CEE/SDCBX set command's non-zero status).
    Refused,
    /// No `CAP_NET_ADMIN` (`EPERM`, `EACCES`).
    Permission,
    /// `EBUSY`.
    Busy,
    /// No reply in time (or `ETIMEDOUT` from the driver).
    Timeout,
    /// The reply did not parse, or did not answer the request.
    Malformed,
    /// Refused here before sending (bad name or value).
    InvalidRequest,
    /// The socket itself failed.
    Io,
    /// Another errno, by number.
    Errno(i32),
}

impl DcbErrorKind {
    /// Classifies a positive errno as the kernel or a driver reported it.
    pub fn from_errno(errno: i32) -> DcbErrorKind {
        match errno {
            libc::EOPNOTSUPP | ENOTSUPP_KERNEL => DcbErrorKind::Unsupported,
            libc::ENODEV => DcbErrorKind::NoDevice,
            libc::EINVAL | libc::ERANGE => DcbErrorKind::Refused,
            libc::EPERM | libc::EACCES => DcbErrorKind::Permission,
            libc::EBUSY => DcbErrorKind::Busy,
            libc::ETIMEDOUT => DcbErrorKind::Timeout,
            n => DcbErrorKind::Errno(n),
        }
    }

    /// A stable lower-case name, e.g. for a metrics label (`errno` for
    /// [`DcbErrorKind::Errno`], whose number [`DcbError::errno`] gives).
    pub fn label(self) -> &'static str {
        match self {
            DcbErrorKind::Unsupported => "unsupported",
            DcbErrorKind::NoDevice => "no_device",
            DcbErrorKind::Refused => "refused",
            DcbErrorKind::Permission => "permission",
            DcbErrorKind::Busy => "busy",
            DcbErrorKind::Timeout => "timeout",
            DcbErrorKind::Malformed => "malformed",
            DcbErrorKind::InvalidRequest => "invalid_request",
            DcbErrorKind::Io => "io",
            DcbErrorKind::Errno(_) => "errno",
        }
    }
}

impl fmt::Display for DcbErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DcbErrorKind::Errno(n) => write!(f, "errno {n} ({})", errno_name(*n)),
            k => f.write_str(k.label()),
        }
    }
}

impl DcbError {
    /// The kind of failure (see [`DcbErrorKind`]).
    pub fn kind(&self) -> DcbErrorKind {
        match self {
            DcbError::Unsupported { .. } | DcbError::NotReported { .. } => {
                DcbErrorKind::Unsupported
            }
            DcbError::NoDevice { .. } => DcbErrorKind::NoDevice,
            DcbError::Kernel { errno, .. } => DcbErrorKind::from_errno(*errno),
            DcbError::Status { cmd, status, .. } => match driver_errno(*cmd, *status) {
                Some(e) => DcbErrorKind::from_errno(e),
                None => DcbErrorKind::Refused,
            },
            DcbError::Reply { .. } => DcbErrorKind::Malformed,
            DcbError::Invalid(_) => DcbErrorKind::InvalidRequest,
            DcbError::Timeout { .. } => DcbErrorKind::Timeout,
            DcbError::Io { .. } => DcbErrorKind::Io,
        }
    }

    /// The command that failed, when a request was made.
    pub fn cmd(&self) -> Option<DcbCmd> {
        match self {
            DcbError::Unsupported { cmd, .. }
            | DcbError::NoDevice { cmd, .. }
            | DcbError::Kernel { cmd, .. }
            | DcbError::Status { cmd, .. }
            | DcbError::NotReported { cmd, .. }
            | DcbError::Reply { cmd, .. }
            | DcbError::Timeout { cmd, .. } => Some(*cmd),
            DcbError::Io { cmd, .. } => *cmd,
            DcbError::Invalid(_) => None,
        }
    }

    /// The errno the kernel or the driver reported, if any.
    pub fn errno(&self) -> Option<i32> {
        match self {
            DcbError::Unsupported { errno, .. } | DcbError::Kernel { errno, .. } => Some(*errno),
            DcbError::NoDevice { .. } => Some(libc::ENODEV),
            DcbError::Status { cmd, status, .. } => driver_errno(*cmd, *status),
            DcbError::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    pub(crate) fn reply(ifname: &str, cmd: DcbCmd, source: NetlinkError) -> DcbError {
        DcbError::Reply {
            ifname: ifname.to_owned(),
            cmd,
            source,
        }
    }

    /// The error for `NLMSG_ERROR` with `-errno` in answer to `cmd`.
    pub(crate) fn from_kernel(ifname: &str, cmd: DcbCmd, errno: i32) -> DcbError {
        let ifname = ifname.to_owned();
        match errno {
            libc::EOPNOTSUPP | ENOTSUPP_KERNEL => DcbError::Unsupported { ifname, cmd, errno },
            libc::ENODEV => DcbError::NoDevice { ifname, cmd },
            errno => DcbError::Kernel { ifname, cmd, errno },
        }
    }
}

/// The driver's errno in the status of `DCB_CMD_IEEE_SET`/`IEEE_DEL` (a
/// negative errno cut to a u8); `None` for other commands, whose status is
/// driver-defined.
fn driver_errno(cmd: DcbCmd, status: u8) -> Option<i32> {
    (matches!(cmd, DcbCmd::IeeeSet | DcbCmd::IeeeDel) && status >= 128)
        .then(|| 256 - i32::from(status))
}

/// The symbolic name of the errnos dcbnl produces (`E...`), else the number.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::ERANGE => "ERANGE",
        libc::EMSGSIZE => "EMSGSIZE",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::ENOBUFS => "ENOBUFS",
        libc::ETIMEDOUT => "ETIMEDOUT",
        ENOTSUPP_KERNEL => "ENOTSUPP",
        n => return format!("errno {n}"),
    };
    name.to_owned()
}

fn errno_text(errno: i32) -> String {
    format!(
        "{}, {}",
        errno_name(errno),
        io::Error::from_raw_os_error(errno)
    )
}

/// `DCB_CMD_IEEE_SET`/`IEEE_DEL` answer with the driver's negative errno cut
/// to a u8; the other set commands with a driver-defined status.
pub(crate) fn status_text(cmd: DcbCmd, status: u8) -> String {
    match driver_errno(cmd, status) {
        Some(errno) => format!("status {status} = -{}", errno_text(errno)),
        None => format!("status {status}"),
    }
}

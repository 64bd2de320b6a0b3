//! What can go wrong with a dcbnl request.

use std::io;

use super::msg::DcbCmd;
use crate::netlink::NetlinkError;

#[derive(Debug, thiserror::Error)]
pub enum DcbError {
    /// `EOPNOTSUPP`: the device has no dcbnl ops (veth, bridges, most
    /// virtual devices, NICs without DCB).
    #[error("{ifname}: the driver does not support DCB netlink (EOPNOTSUPP)")]
    Unsupported { ifname: String },
    /// `ENODEV`: no interface of that name (in this network namespace).
    #[error("{ifname}: no such device")]
    NoDevice { ifname: String },
    /// Any other error the kernel answered with.
    #[error("{cmd}: {}", io::Error::from_raw_os_error(*errno))]
    Kernel { cmd: DcbCmd, errno: i32 },
    /// A set command answered with a non-zero status: the driver refused.
    #[error("{cmd}: the driver refused ({})", status_text(*cmd, *status))]
    Status { cmd: DcbCmd, status: u8 },
    /// The reply did not parse, or was not the reply to the request.
    #[error("malformed dcbnl reply: {0}")]
    Reply(#[from] NetlinkError),
    /// The request cannot be encoded (interface name, PGID, percentage).
    #[error("invalid dcbnl request: {0}")]
    Invalid(String),
    /// The socket failed, or no reply came within [`REPLY_TIMEOUT`]
    /// (`TimedOut`).
    #[error("dcbnl socket: {0}")]
    Io(#[from] io::Error),
}

/// `DCB_CMD_IEEE_SET` answers with the driver's negative errno cut to a u8
/// (`nla_put_u8(skb, DCB_ATTR_IEEE, err)` in dcbnl.c); the other set commands
/// with a driver-defined status.
pub(crate) fn status_text(cmd: DcbCmd, status: u8) -> String {
    if cmd == DcbCmd::IeeeSet && status >= 128 {
        let errno = 256 - i32::from(status);
        return format!(
            "status {status}: -{errno}, {}",
            io::Error::from_raw_os_error(errno)
        );
    }
    format!("status {status}")
}

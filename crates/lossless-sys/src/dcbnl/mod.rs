//! The kernel's DCB netlink interface (`net/dcb/dcbnl.c`, `linux/dcbnl.h`):
//! * the CEE subset a DCBX agent programs: DCB state, PFC per priority and
//!   its state, priority groups (transmit and receive), and the SET_ALL
//!   commit (`cee`);
//! * the IEEE 802.1Qaz objects a host agent programs after negotiating:
//!   ETS, PFC with the delay allowance adaptive headroom sizes, APP entries
//!   added and removed one by one, the selector trust order, and the DCB
//!   buffer (`struct dcbnl_buffer`), written with `DCB_CMD_IEEE_SET` /
//!   `IEEE_DEL` and read back, with the PFC counters, MAXRATE and the peer's
//!   objects, from `DCB_CMD_IEEE_GET` (`ieee`, `app`, `buffer`);
//! * the DCBX mode (`DCB_CMD_GDCBX`/`SDCBX`, `dcbx`).
//!
//! Errors say which interface, command and why, and have a
//! [`DcbErrorKind`] to count by (`error`).
//!
//! A request is `struct nlmsghdr` (`RTM_GETDCB` for get commands,
//! `RTM_SETDCB` for set commands), `struct dcbmsg { dcb_family = AF_UNSPEC,
//! cmd, pad }`, then `DCB_ATTR_IFNAME` (the NUL-terminated name) and the
//! command's attributes. The kernel answers with a message of the same
//! command (type `RTM_GETDCB`/`RTM_SETDCB` by command, the request's
//! sequence number) carrying the value, or a u8 status for set commands; or
//! with `NLMSG_ERROR`: `-ENODEV` for an unknown name, `-EOPNOTSUPP` when the
//! driver has no dcbnl ops (veth, most virtual devices), `-EPERM` for a set
//! without `CAP_NET_ADMIN`, `-EINVAL` for a missing attribute.
//!
//! Encoding and decoding are pure functions (`encode_*`, `decode_*`) so they
//! can be tested byte for byte and fuzzed; [`Dcbnl`] only adds the socket.
//!
//! ## CEE priority groups in the driver model
//!
//! CEE advertises a priority group id (PGID 0..7, or 15 = strict priority
//! with no bandwidth limit) per priority and a bandwidth percentage per PG.
//! The dcbnl CEE interface is per *traffic class* (TC): for each TC its
//! bandwidth group (`DCB_TC_ATTR_PARAM_PGID`), a bitmap of the priorities
//! mapped to it (`UP_MAPPING`), a strict-priority type (`STRICT_PRIO`: 0
//! none, 1 group strict, 2 link strict) and its share of the group's
//! bandwidth (`BW_PCT`); plus the percentage of each bandwidth group
//! (`DCB_PG_ATTR_BW_ID_0..7`). [`PgConfig::from_cee`] maps CEE onto it the
//! way lldpad does (`set_hw_pg()` in `lldp_dcbx_nl.c`, PGID 15 handling in
//! `tlv_dcbx.c`, `dcb_fixup_pg()` in `dcb_rule_chk.c`), with PGs mapped 1:1
//! to TCs:
//! * priority `p` with PGID `g` in 0..7 goes to TC `g`;
//! * priorities with PGID 15 go to the first TC whose PGID no priority uses,
//!   marked link strict (2) with 0% of its group;
//! * every TC's bandwidth group is its own index; a TC with priorities gets
//!   100% of its group, an unused one 0%;
//! * group `i`'s percentage is the CEE percentage of PG `i`.
//!
//! The same is written for transmit and receive.

mod app;
mod buffer;
mod cee;
mod cmd;
mod dcbx;
mod error;
mod ieee;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod ieee_tests;
mod msg;
mod socket;
#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests;

pub use app::{AppSelector, DcbApp};
pub use buffer::{encode_set_dcb_buffer, DcbBuffer, MAX_BUFFERS};
pub use cee::{
    decode_pfc_reply, decode_pg_reply, encode_get_pfc, encode_get_pfc_state, encode_get_pg,
    encode_get_state, encode_set_all, encode_set_pfc, encode_set_pfc_state, encode_set_pg,
    encode_set_state, PfcSetting, PgConfig, PgDir, PgSetting, TcConfig, PFC_ENABLED, PGID_STRICT,
    SET_ALL_CHANGED_NO_RESET, SET_ALL_CHANGED_RESET, SET_ALL_NO_CHANGE, STRICT_GROUP, STRICT_LINK,
    STRICT_NONE,
};
pub use dcbx::{encode_get_dcbx, encode_set_dcbx, DcbxMode};
pub use error::{errno_name, DcbError, DcbErrorKind};
pub use ieee::{
    decode_ieee_reply, decode_ieee_state, encode_del_ieee_apps, encode_get_ieee,
    encode_set_app_trust, encode_set_ieee, encode_set_ieee_apps, encode_set_ieee_ets,
    encode_set_ieee_pfc, IeeeConfig, IeeeEts, IeeeMaxrate, IeeePfc, IeeePfcSet, IeeeSet, IeeeState,
    Tsa, MAX_TCS,
};
pub use msg::{decode_u8_reply, DcbCmd, RTM_GETDCB, RTM_SETDCB};
pub use socket::{AppAnswers, Dcbnl, REPLY_TIMEOUT};

#[cfg(test)]
pub(crate) use app::{
    DCB_APP_LEN, DCB_ATTR_IEEE_APP, DCB_ATTR_IEEE_APP_TABLE, DCB_ATTR_IEEE_PEER_APP,
};
#[cfg(test)]
pub(crate) use buffer::{DCB_ATTR_DCB_BUFFER, DCB_BUFFER_LEN, DCB_BUFFER_SIZES, DCB_BUFFER_TOTAL};
#[cfg(test)]
pub(crate) use cee::{
    DCB_PFC_UP_ATTR_0, DCB_PFC_UP_ATTR_ALL, DCB_PG_ATTR_BW_ID_0, DCB_PG_ATTR_BW_ID_ALL,
    DCB_PG_ATTR_TC_0, DCB_PG_ATTR_TC_ALL, DCB_TC_ATTR_PARAM_ALL, DCB_TC_ATTR_PARAM_BW_PCT,
    DCB_TC_ATTR_PARAM_PGID, DCB_TC_ATTR_PARAM_STRICT_PRIO, DCB_TC_ATTR_PARAM_UP_MAPPING,
};
#[cfg(test)]
pub(crate) use ieee::{
    DCB_ATTR_IEEE_ETS, DCB_ATTR_IEEE_MAXRATE, DCB_ATTR_IEEE_PEER_ETS, DCB_ATTR_IEEE_PEER_PFC,
    IEEE_ETS_LEN, IEEE_ETS_TABLES, IEEE_MAXRATE_LEN,
};
#[cfg(test)]
pub(crate) use ieee::{
    DCB_ATTR_IEEE_PFC, IEEE_PFC_DELAY, IEEE_PFC_INDICATIONS, IEEE_PFC_LEN, IEEE_PFC_REQUESTS,
};
#[cfg(test)]
pub(crate) use msg::{
    AF_UNSPEC, DCBMSG_LEN, DCB_ATTR_DCBX, DCB_ATTR_IEEE, DCB_ATTR_IFNAME, DCB_ATTR_PFC_CFG,
    DCB_ATTR_PFC_STATE, DCB_ATTR_PG_CFG, DCB_ATTR_SET_ALL, DCB_ATTR_STATE, IFNAMSIZ,
};

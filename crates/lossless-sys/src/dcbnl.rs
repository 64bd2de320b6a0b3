//! The kernel's DCB netlink interface (`net/dcb/dcbnl.c`, `linux/dcbnl.h`),
//! the CEE subset a DCBX agent programs: DCB state, PFC per priority and its
//! state, priority groups (transmit and receive), and the SET_ALL commit; and
//! of the IEEE interface what adaptive headroom needs: the PFC object with its
//! delay allowance, and the DCB buffer (`struct dcbnl_buffer`), read with
//! `DCB_CMD_IEEE_GET` and written with `DCB_CMD_IEEE_SET`.
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

use std::fmt;
use std::io;
use std::time::{Duration, Instant};

use crate::netlink::{self, Attrs, Bytes, MsgBuilder, NetlinkError, NlSocket, NLMSG_ERROR};

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
pub(crate) const DCB_ATTR_IEEE_PFC: u16 = 2;
/// `sizeof(struct ieee_pfc)`: pfc_cap, pfc_en, mbc, (pad), delay u16, (pad to 8),
/// requests[8] u64, indications[8] u64.
pub(crate) const IEEE_PFC_LEN: usize = 136;
/// Offsets in `struct ieee_pfc`.
pub(crate) const IEEE_PFC_DELAY: usize = 4;
pub(crate) const IEEE_PFC_REQUESTS: usize = 8;
pub(crate) const IEEE_PFC_INDICATIONS: usize = 72;
/// In the `DCB_ATTR_IEEE` nest: `struct dcbnl_buffer`. The kernel adds it to the
/// IEEE_GET reply only for a driver with `dcbnl_getbuffer`, and passes it on in
/// IEEE_SET only to a driver with `dcbnl_setbuffer` (silently dropping it otherwise).
pub(crate) const DCB_ATTR_DCB_BUFFER: u16 = 10;
/// `sizeof(struct dcbnl_buffer)`: prio2buffer[8] u8, buffer_size[8] u32, total_size u32.
pub(crate) const DCB_BUFFER_LEN: usize = 44;
/// Offsets in `struct dcbnl_buffer`.
pub(crate) const DCB_BUFFER_SIZES: usize = 8;
pub(crate) const DCB_BUFFER_TOTAL: usize = 40;
/// `DCBX_MAX_BUFFERS`: buffers a port may have.
pub const MAX_BUFFERS: usize = 8;

pub(crate) const DCB_PFC_UP_ATTR_0: u16 = 1;
pub(crate) const DCB_PFC_UP_ATTR_ALL: u16 = 9;

pub(crate) const DCB_PG_ATTR_TC_0: u16 = 1;
pub(crate) const DCB_PG_ATTR_TC_ALL: u16 = 10;
pub(crate) const DCB_PG_ATTR_BW_ID_0: u16 = 11;
pub(crate) const DCB_PG_ATTR_BW_ID_ALL: u16 = 20;

pub(crate) const DCB_TC_ATTR_PARAM_PGID: u16 = 1;
pub(crate) const DCB_TC_ATTR_PARAM_UP_MAPPING: u16 = 2;
pub(crate) const DCB_TC_ATTR_PARAM_STRICT_PRIO: u16 = 3;
pub(crate) const DCB_TC_ATTR_PARAM_BW_PCT: u16 = 4;
pub(crate) const DCB_TC_ATTR_PARAM_ALL: u16 = 5;

/// PGID of strict-priority traffic in CEE.
pub const PGID_STRICT: u8 = 15;
/// `STRICT_PRIO` value: not strict.
pub const STRICT_NONE: u8 = 0;
/// `STRICT_PRIO` value: strict within its group.
pub const STRICT_GROUP: u8 = 1;
/// `STRICT_PRIO` value: link strict (CEE PGID 15).
pub const STRICT_LINK: u8 = 2;
/// PFC value for an enabled priority (`pfc_enabled_full`); 0 is disabled.
pub const PFC_ENABLED: u8 = 1;

/// SET_ALL status: the configuration was applied with a link reset.
pub const SET_ALL_CHANGED_RESET: u8 = 0;
/// SET_ALL status: nothing needed changing.
pub const SET_ALL_NO_CHANGE: u8 = 1;
/// SET_ALL status: the configuration was applied without a link reset.
pub const SET_ALL_CHANGED_NO_RESET: u8 = 2;

/// How long [`Dcbnl`] waits for the kernel's answer.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(1);

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
    fn u8_attr(self) -> Option<(u16, &'static str)> {
        match self {
            DcbCmd::GetState | DcbCmd::SetState => Some((DCB_ATTR_STATE, "DCB_ATTR_STATE")),
            DcbCmd::PfcGetState | DcbCmd::PfcSetState => {
                Some((DCB_ATTR_PFC_STATE, "DCB_ATTR_PFC_STATE"))
            }
            DcbCmd::PfcSetCfg => Some((DCB_ATTR_PFC_CFG, "DCB_ATTR_PFC_CFG")),
            DcbCmd::PgTxSetCfg | DcbCmd::PgRxSetCfg => Some((DCB_ATTR_PG_CFG, "DCB_ATTR_PG_CFG")),
            DcbCmd::SetAll => Some((DCB_ATTR_SET_ALL, "DCB_ATTR_SET_ALL")),
            DcbCmd::IeeeSet => Some((DCB_ATTR_IEEE, "DCB_ATTR_IEEE")),
            DcbCmd::PgTxGetCfg | DcbCmd::PgRxGetCfg | DcbCmd::PfcGetCfg | DcbCmd::IeeeGet => None,
        }
    }
}

impl fmt::Display for DcbCmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
fn status_text(cmd: DcbCmd, status: u8) -> String {
    if cmd == DcbCmd::IeeeSet && status >= 128 {
        let errno = 256 - i32::from(status);
        return format!(
            "status {status}: -{errno}, {}",
            io::Error::from_raw_os_error(errno)
        );
    }
    format!("status {status}")
}

/// PFC per priority 0..7 (true = enabled).
pub type PfcSetting = [bool; 8];

/// `struct ieee_pfc` as the driver reports it in `DCB_CMD_IEEE_GET`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeePfc {
    /// Traffic classes that may be PFC-enabled at once (`pfc_cap`).
    pub cap: u8,
    /// Bit `p` set: PFC on priority `p` (`pfc_en`).
    pub enabled: u8,
    /// MACsec bypass capability (`mbc`).
    pub mbc: u8,
    /// The delay allowance, bit times (`delay`; mlx5 reads it as metres of cable).
    pub delay: u16,
    /// PFC frames sent per priority (`requests`).
    pub requests: [u64; 8],
    /// PFC frames received per priority (`indications`).
    pub indications: [u64; 8],
}

/// `struct dcbnl_buffer`: the NIC's receive buffers and which priority each
/// holds (`dcb buffer show` in iproute2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DcbBuffer {
    /// The buffer (0..8) each priority is received into.
    pub prio2buffer: [u8; 8],
    /// Size of each buffer, bytes.
    pub buffer_size: [u32; MAX_BUFFERS],
    /// The port's whole buffer, bytes (reported by the driver; ignored on set).
    pub total_size: u32,
}

impl DcbBuffer {
    /// The buffers that hold at least one priority of `priorities` (bit `p` =
    /// priority `p`), as a bit mask of buffer indices.
    pub fn buffers_of(&self, priorities: u8) -> u8 {
        let mut mask = 0u8;
        for (p, &b) in self.prio2buffer.iter().enumerate() {
            if priorities & (1 << p) != 0 && usize::from(b) < MAX_BUFFERS {
                mask |= 1 << b;
            }
        }
        mask
    }

    fn check(&self) -> Result<(), String> {
        match self
            .prio2buffer
            .iter()
            .enumerate()
            .find(|(_, &b)| usize::from(b) >= MAX_BUFFERS)
        {
            Some((p, b)) => Err(format!(
                "prio2buffer[{p}] = {b}: a port has buffers 0..={}",
                MAX_BUFFERS - 1
            )),
            None => Ok(()),
        }
    }

    fn to_bytes(self) -> [u8; DCB_BUFFER_LEN] {
        let mut b = [0u8; DCB_BUFFER_LEN];
        b[..8].copy_from_slice(&self.prio2buffer);
        for (i, size) in self.buffer_size.iter().enumerate() {
            let at = DCB_BUFFER_SIZES + 4 * i;
            b[at..at + 4].copy_from_slice(&size.to_ne_bytes());
        }
        b[DCB_BUFFER_TOTAL..].copy_from_slice(&self.total_size.to_ne_bytes());
        b
    }
}

/// What `DCB_CMD_IEEE_GET` says about the objects adaptive headroom uses. Each
/// is absent when the driver lacks the op that reports it (`ieee_getpfc`,
/// `dcbnl_getbuffer`): the kernel then leaves the attribute out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IeeeConfig {
    pub pfc: Option<IeeePfc>,
    pub buffer: Option<DcbBuffer>,
}

/// A CEE priority-group configuration as DCBX carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgSetting {
    /// PGID per priority 0..7: 0..=7, or 15 ([`PGID_STRICT`]) for strict.
    pub pgid: [u8; 8],
    /// Bandwidth percentage per PG 0..7.
    pub percent: [u8; 8],
}

/// One traffic class in the driver's CEE model (`DCB_TC_ATTR_PARAM_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TcConfig {
    /// Bandwidth group of the TC (`DCB_TC_ATTR_PARAM_PGID`).
    pub pgid: u8,
    /// Bit `p` set: priority `p` maps to this TC (`UP_MAPPING`).
    pub up_map: u8,
    /// [`STRICT_NONE`], [`STRICT_GROUP`] or [`STRICT_LINK`] (`STRICT_PRIO`).
    pub strict_prio: u8,
    /// Percentage of the group's bandwidth (`BW_PCT`).
    pub bw_pct: u8,
}

/// The driver's CEE priority-group programming for one direction: what
/// `DCB_CMD_PGTX_SCFG`/`PGRX_SCFG` write and `..._GCFG` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgConfig {
    pub tc: [TcConfig; 8],
    /// Percentage of link bandwidth per bandwidth group
    /// (`DCB_PG_ATTR_BW_ID_0..7`).
    pub pg_bw: [u8; 8],
}

/// Transmit or receive priority groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PgDir {
    Tx,
    Rx,
}

impl PgDir {
    fn get_cmd(self) -> DcbCmd {
        match self {
            PgDir::Tx => DcbCmd::PgTxGetCfg,
            PgDir::Rx => DcbCmd::PgRxGetCfg,
        }
    }

    fn set_cmd(self) -> DcbCmd {
        match self {
            PgDir::Tx => DcbCmd::PgTxSetCfg,
            PgDir::Rx => DcbCmd::PgRxSetCfg,
        }
    }
}

impl PgConfig {
    /// Maps a CEE setting onto traffic classes as lldpad does (see the
    /// module documentation). PGIDs 8..=14 and percentages above 100 are
    /// refused.
    pub fn from_cee(pg: &PgSetting) -> Result<PgConfig, DcbError> {
        let mut used = [false; 8];
        for (p, &g) in pg.pgid.iter().enumerate() {
            match g {
                0..=7 => used[usize::from(g)] = true,
                PGID_STRICT => {}
                _ => {
                    return Err(DcbError::Invalid(format!(
                        "priority {p}: PGID {g} is reserved (0..=7 or 15)"
                    )))
                }
            }
        }
        if let Some((i, pct)) = pg.percent.iter().enumerate().find(|(_, &v)| v > 100) {
            return Err(DcbError::Invalid(format!("PG {i}: {pct}% is above 100")));
        }
        // With at most 7 priorities in PGs 0..=7 next to a strict one, some
        // TC is always free.
        let strict_tc = used.iter().position(|&u| !u).unwrap_or(7);
        let mut cfg = PgConfig {
            pg_bw: pg.percent,
            ..PgConfig::default()
        };
        for (t, tc) in cfg.tc.iter_mut().enumerate() {
            tc.pgid = t as u8;
        }
        for (p, &g) in pg.pgid.iter().enumerate() {
            let strict = g == PGID_STRICT;
            let t = if strict { strict_tc } else { usize::from(g) };
            if let Some(tc) = cfg.tc.get_mut(t) {
                tc.up_map |= 1 << p;
                tc.strict_prio = if strict { STRICT_LINK } else { STRICT_NONE };
                tc.bw_pct = if strict { 0 } else { 100 };
            }
        }
        Ok(cfg)
    }

    /// The CEE view of a driver configuration: each priority's PG is the
    /// bandwidth group of its TC, or 15 when that TC is link strict; a
    /// priority no TC claims is put in PG 0. The inverse of
    /// [`PgConfig::from_cee`].
    pub fn to_cee(&self) -> PgSetting {
        let mut pgid = [0u8; 8];
        for (p, g) in pgid.iter_mut().enumerate() {
            if let Some(tc) = self.tc.iter().find(|tc| tc.up_map & (1 << p) != 0) {
                *g = if tc.strict_prio == STRICT_LINK {
                    PGID_STRICT
                } else {
                    tc.pgid
                };
            }
        }
        PgSetting {
            pgid,
            percent: self.pg_bw,
        }
    }
}

// ---- encoding -------------------------------------------------------------

fn request(cmd: DcbCmd, seq: u32, ifname: &str) -> Result<MsgBuilder, DcbError> {
    if ifname.is_empty() || ifname.len() >= IFNAMSIZ || ifname.bytes().any(|b| b == 0) {
        return Err(DcbError::Invalid(format!(
            "interface name {ifname:?} must be 1 to {} bytes without NUL",
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

/// `DCB_CMD_GSTATE`: is DCB on?
pub fn encode_get_state(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::GetState, seq, ifname)?.finish())
}

/// `DCB_CMD_SSTATE` with `DCB_ATTR_STATE` = 0/1.
pub fn encode_set_state(seq: u32, ifname: &str, on: bool) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::SetState, seq, ifname)?;
    b.attr_u8(DCB_ATTR_STATE, u8::from(on));
    Ok(b.finish())
}

/// `DCB_CMD_PFC_GCFG` asking for every priority (`DCB_ATTR_PFC_CFG {
/// DCB_PFC_UP_ATTR_ALL }`).
pub fn encode_get_pfc(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::PfcGetCfg, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_PFC_CFG);
    b.flag(DCB_PFC_UP_ATTR_ALL);
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_PFC_SCFG`: `DCB_ATTR_PFC_CFG { DCB_PFC_UP_ATTR_0..7: u8 }`,
/// [`PFC_ENABLED`] or 0.
pub fn encode_set_pfc(seq: u32, ifname: &str, priorities: PfcSetting) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::PfcSetCfg, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_PFC_CFG);
    for (i, &on) in (0u16..).zip(priorities.iter()) {
        b.attr_u8(DCB_PFC_UP_ATTR_0 + i, if on { PFC_ENABLED } else { 0 });
    }
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_PFC_GSTATE`.
pub fn encode_get_pfc_state(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::PfcGetState, seq, ifname)?.finish())
}

/// `DCB_CMD_PFC_SSTATE` with `DCB_ATTR_PFC_STATE` = 0/1.
pub fn encode_set_pfc_state(seq: u32, ifname: &str, on: bool) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::PfcSetState, seq, ifname)?;
    b.attr_u8(DCB_ATTR_PFC_STATE, u8::from(on));
    Ok(b.finish())
}

/// `DCB_CMD_PGTX_GCFG`/`PGRX_GCFG` asking for everything:
/// `DCB_ATTR_PG_CFG { DCB_PG_ATTR_TC_ALL { DCB_TC_ATTR_PARAM_ALL },
/// DCB_PG_ATTR_BW_ID_ALL }`.
pub fn encode_get_pg(seq: u32, ifname: &str, dir: PgDir) -> Result<Vec<u8>, DcbError> {
    let mut b = request(dir.get_cmd(), seq, ifname)?;
    let pg = b.nest_start(DCB_ATTR_PG_CFG);
    let tc = b.nest_start(DCB_PG_ATTR_TC_ALL);
    b.flag(DCB_TC_ATTR_PARAM_ALL);
    b.nest_end(tc);
    b.flag(DCB_PG_ATTR_BW_ID_ALL);
    b.nest_end(pg);
    Ok(b.finish())
}

/// `DCB_CMD_PGTX_SCFG`/`PGRX_SCFG`: `DCB_ATTR_PG_CFG { DCB_PG_ATTR_TC_0..7 {
/// PGID, UP_MAPPING, STRICT_PRIO, BW_PCT }, DCB_PG_ATTR_BW_ID_0..7 }`, in
/// lldpad's order.
pub fn encode_set_pg(
    seq: u32,
    ifname: &str,
    dir: PgDir,
    cfg: &PgConfig,
) -> Result<Vec<u8>, DcbError> {
    let mut b = request(dir.set_cmd(), seq, ifname)?;
    let pg = b.nest_start(DCB_ATTR_PG_CFG);
    for (i, tc) in (0u16..).zip(cfg.tc.iter()) {
        let n = b.nest_start(DCB_PG_ATTR_TC_0 + i);
        b.attr_u8(DCB_TC_ATTR_PARAM_PGID, tc.pgid);
        b.attr_u8(DCB_TC_ATTR_PARAM_UP_MAPPING, tc.up_map);
        b.attr_u8(DCB_TC_ATTR_PARAM_STRICT_PRIO, tc.strict_prio);
        b.attr_u8(DCB_TC_ATTR_PARAM_BW_PCT, tc.bw_pct);
        b.nest_end(n);
    }
    for (i, &pct) in (0u16..).zip(cfg.pg_bw.iter()) {
        b.attr_u8(DCB_PG_ATTR_BW_ID_0 + i, pct);
    }
    b.nest_end(pg);
    Ok(b.finish())
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { DCB_ATTR_IEEE_PFC: struct ieee_pfc }` with
/// PFC on the priorities of `enabled` (of 8 classes) and `delay`, the allowance for the
/// link's round-trip delay in bit times (<linux/dcbnl.h>; some drivers, mlx5, read it
/// as metres of cable instead).
pub fn encode_set_ieee_pfc(
    seq: u32,
    ifname: &str,
    enabled: u8,
    delay: u16,
) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::IeeeSet, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_IEEE);
    let mut pfc = [0u8; IEEE_PFC_LEN];
    pfc[0] = 8; // pfc_cap: classes that may be PFC-enabled at once
    pfc[1] = enabled;
    pfc[4..6].copy_from_slice(&delay.to_ne_bytes());
    b.attr(DCB_ATTR_IEEE_PFC, &pfc);
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_IEEE_GET`: the driver's whole IEEE configuration (the request
/// carries only the interface name).
pub fn encode_get_ieee(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::IeeeGet, seq, ifname)?.finish())
}

/// `DCB_CMD_IEEE_SET`: `DCB_ATTR_IEEE { DCB_ATTR_DCB_BUFFER: struct dcbnl_buffer }`.
/// A `prio2buffer` entry beyond the 8 buffers is refused here, as the kernel
/// would (`-EINVAL`).
pub fn encode_set_dcb_buffer(
    seq: u32,
    ifname: &str,
    buffer: &DcbBuffer,
) -> Result<Vec<u8>, DcbError> {
    buffer.check().map_err(DcbError::Invalid)?;
    let mut b = request(DcbCmd::IeeeSet, seq, ifname)?;
    let n = b.nest_start(DCB_ATTR_IEEE);
    b.attr(DCB_ATTR_DCB_BUFFER, &buffer.to_bytes());
    b.nest_end(n);
    Ok(b.finish())
}

/// `DCB_CMD_SET_ALL` (the kernel requires `DCB_ATTR_SET_ALL`; lldpad sends
/// 1).
pub fn encode_set_all(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    let mut b = request(DcbCmd::SetAll, seq, ifname)?;
    b.attr_u8(DCB_ATTR_SET_ALL, 1);
    Ok(b.finish())
}

// ---- decoding -------------------------------------------------------------

/// Looks for the answer to request `seq` (command `cmd`) in one datagram.
/// `Ok(None)`: not in this datagram (other sequence numbers are stale
/// replies and skipped; a bare ACK is skipped). A kernel error for `seq`
/// becomes the matching [`DcbError`]; the reply's attributes are returned.
fn find_reply<'a>(
    buf: &'a [u8],
    seq: u32,
    cmd: DcbCmd,
    ifname: &str,
) -> Result<Option<Bytes<'a>>, DcbError> {
    for msg in netlink::messages(buf) {
        let msg = msg?;
        if msg.seq != seq {
            continue;
        }
        if msg.ty == NLMSG_ERROR {
            let code = msg.error_code()?;
            return match code {
                0 => continue,
                c if c > 0 => Err(NetlinkError::new(
                    msg.payload_offset,
                    "nlmsgerr",
                    format!("positive error code {c}"),
                )
                .into()),
                c => Err(match c.saturating_neg() {
                    libc::EOPNOTSUPP => DcbError::Unsupported {
                        ifname: ifname.to_owned(),
                    },
                    libc::ENODEV => DcbError::NoDevice {
                        ifname: ifname.to_owned(),
                    },
                    errno => DcbError::Kernel { cmd, errno },
                }),
            };
        }
        if msg.ty == netlink::NLMSG_NOOP {
            continue;
        }
        if msg.ty != cmd.msg_type() {
            return Err(NetlinkError::new(
                msg.offset,
                "nlmsghdr",
                format!(
                    "reply of type {}, expected {} for {cmd}",
                    msg.ty,
                    cmd.msg_type()
                ),
            )
            .into());
        }
        let attrs = msg.after_header(DCBMSG_LEN, "dcbmsg")?;
        let got = msg.payload.get(1).copied().unwrap_or_default();
        if got != cmd.code() {
            return Err(NetlinkError::new(
                msg.payload_offset + 1,
                "dcbmsg",
                format!("reply to command {got}, expected {} ({cmd})", cmd.code()),
            )
            .into());
        }
        return Ok(Some(attrs));
    }
    Ok(None)
}

fn find_attr<'a>(
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
/// `PFC_GSTATE`, or the status of a set command (0 = done; for SET_ALL see
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
    let Some(attrs) = find_reply(buf, seq, cmd, ifname)? else {
        return Ok(None);
    };
    let a = find_attr(attrs.attrs(), attr, what, attrs.offset)?;
    Ok(Some(a.u8(what)?))
}

/// Decodes the reply to `DCB_CMD_PFC_GCFG`: `DCB_ATTR_PFC_CFG {
/// DCB_PFC_UP_ATTR_0..7 }`, all eight required; non-zero = enabled.
pub fn decode_pfc_reply(
    buf: &[u8],
    seq: u32,
    ifname: &str,
) -> Result<Option<PfcSetting>, DcbError> {
    let Some(attrs) = find_reply(buf, seq, DcbCmd::PfcGetCfg, ifname)? else {
        return Ok(None);
    };
    let nest = find_attr(
        attrs.attrs(),
        DCB_ATTR_PFC_CFG,
        "DCB_ATTR_PFC_CFG",
        attrs.offset,
    )?;
    let mut seen = [false; 8];
    let mut pfc = [false; 8];
    for a in nest.nested() {
        let a = a?;
        let i = usize::from(a.ty.wrapping_sub(DCB_PFC_UP_ATTR_0));
        if i < 8 {
            pfc[i] = a.u8("DCB_PFC_UP_ATTR")? != 0;
            seen[i] = true;
        }
    }
    if let Some(i) = seen.iter().position(|&s| !s) {
        return Err(NetlinkError::new(
            nest.offset,
            "DCB_ATTR_PFC_CFG",
            format!("no DCB_PFC_UP_ATTR_{i}"),
        )
        .into());
    }
    Ok(Some(pfc))
}

/// Decodes the reply to `DCB_CMD_PGTX_GCFG`/`PGRX_GCFG`: `DCB_ATTR_PG_CFG {
/// DCB_PG_ATTR_TC_0..7 { PGID, UP_MAPPING, STRICT_PRIO, BW_PCT },
/// DCB_PG_ATTR_BW_ID_0..7 }`, everything required.
pub fn decode_pg_reply(
    buf: &[u8],
    seq: u32,
    dir: PgDir,
    ifname: &str,
) -> Result<Option<PgConfig>, DcbError> {
    let Some(attrs) = find_reply(buf, seq, dir.get_cmd(), ifname)? else {
        return Ok(None);
    };
    let nest = find_attr(
        attrs.attrs(),
        DCB_ATTR_PG_CFG,
        "DCB_ATTR_PG_CFG",
        attrs.offset,
    )?;
    let mut cfg = PgConfig::default();
    let mut tc_seen = [false; 8];
    let mut bw_seen = [false; 8];
    for a in nest.nested() {
        let a = a?;
        let tc_i = usize::from(a.ty.wrapping_sub(DCB_PG_ATTR_TC_0));
        let bw_i = usize::from(a.ty.wrapping_sub(DCB_PG_ATTR_BW_ID_0));
        if tc_i < 8 {
            let mut params = [None::<u8>; 4];
            for p in a.nested() {
                let p = p?;
                let k = usize::from(p.ty.wrapping_sub(DCB_TC_ATTR_PARAM_PGID));
                if let Some(slot) = params.get_mut(k) {
                    *slot = Some(p.u8("DCB_TC_ATTR_PARAM")?);
                }
            }
            let [Some(pgid), Some(up_map), Some(strict_prio), Some(bw_pct)] = params else {
                return Err(NetlinkError::new(
                    a.offset,
                    "DCB_PG_ATTR_TC",
                    format!("TC {tc_i} lacks one of PGID, UP_MAPPING, STRICT_PRIO, BW_PCT"),
                )
                .into());
            };
            cfg.tc[tc_i] = TcConfig {
                pgid,
                up_map,
                strict_prio,
                bw_pct,
            };
            tc_seen[tc_i] = true;
        } else if bw_i < 8 {
            cfg.pg_bw[bw_i] = a.u8("DCB_PG_ATTR_BW_ID")?;
            bw_seen[bw_i] = true;
        }
    }
    if let Some(i) = tc_seen.iter().position(|&s| !s) {
        return Err(NetlinkError::new(
            nest.offset,
            "DCB_ATTR_PG_CFG",
            format!("no DCB_PG_ATTR_TC_{i}"),
        )
        .into());
    }
    if let Some(i) = bw_seen.iter().position(|&s| !s) {
        return Err(NetlinkError::new(
            nest.offset,
            "DCB_ATTR_PG_CFG",
            format!("no DCB_PG_ATTR_BW_ID_{i}"),
        )
        .into());
    }
    Ok(Some(cfg))
}

/// A fixed-layout struct attribute: at least `len` bytes (netlink structs only
/// grow at the end, and the kernel's own policies check a minimum length).
fn struct_attr<'a>(
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

fn ne_u64(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        v.copy_from_slice(s);
    }
    u64::from_ne_bytes(v)
}

fn decode_ieee_pfc(a: &netlink::Attr<'_>) -> Result<IeeePfc, NetlinkError> {
    let b = struct_attr(a, IEEE_PFC_LEN, "DCB_ATTR_IEEE_PFC")?;
    let mut pfc = IeeePfc {
        cap: b.first().copied().unwrap_or_default(),
        enabled: b.get(1).copied().unwrap_or_default(),
        mbc: b.get(2).copied().unwrap_or_default(),
        delay: netlink::ne_u16(b, IEEE_PFC_DELAY).unwrap_or_default(),
        ..IeeePfc::default()
    };
    for i in 0..8 {
        pfc.requests[i] = ne_u64(b, IEEE_PFC_REQUESTS + 8 * i);
        pfc.indications[i] = ne_u64(b, IEEE_PFC_INDICATIONS + 8 * i);
    }
    Ok(pfc)
}

fn decode_dcb_buffer(a: &netlink::Attr<'_>) -> Result<DcbBuffer, NetlinkError> {
    let b = struct_attr(a, DCB_BUFFER_LEN, "DCB_ATTR_DCB_BUFFER")?;
    let mut buf = DcbBuffer::default();
    for (p, slot) in buf.prio2buffer.iter_mut().enumerate() {
        *slot = b.get(p).copied().unwrap_or_default();
    }
    for (i, size) in buf.buffer_size.iter_mut().enumerate() {
        *size = netlink::ne_u32(b, DCB_BUFFER_SIZES + 4 * i).unwrap_or_default();
    }
    buf.total_size = netlink::ne_u32(b, DCB_BUFFER_TOTAL).unwrap_or_default();
    buf.check()
        .map_err(|why| NetlinkError::new(a.payload_offset, "DCB_ATTR_DCB_BUFFER", why))?;
    Ok(buf)
}

/// Decodes the reply to `DCB_CMD_IEEE_GET` (`dcbnl_ieee_fill()` in dcbnl.c):
/// `DCB_ATTR_IFNAME`, `DCB_ATTR_IEEE { ETS, MAXRATE, QCN, QCN_STATS, PFC,
/// DCB_BUFFER, APP_TABLE, peer objects ... }`, `DCB_ATTR_DCBX`. The nest is
/// required; of its members only the PFC object and the DCB buffer are read,
/// each absent when the driver does not report it. The peer's PFC
/// (`DCB_ATTR_IEEE_PEER_PFC`) is not ours and is skipped with the rest.
pub fn decode_ieee_reply(
    buf: &[u8],
    seq: u32,
    ifname: &str,
) -> Result<Option<IeeeConfig>, DcbError> {
    let Some(attrs) = find_reply(buf, seq, DcbCmd::IeeeGet, ifname)? else {
        return Ok(None);
    };
    let nest = find_attr(attrs.attrs(), DCB_ATTR_IEEE, "DCB_ATTR_IEEE", attrs.offset)?;
    let mut cfg = IeeeConfig::default();
    for a in nest.nested() {
        let a = a?;
        match a.ty {
            DCB_ATTR_IEEE_PFC if cfg.pfc.is_none() => cfg.pfc = Some(decode_ieee_pfc(&a)?),
            DCB_ATTR_DCB_BUFFER if cfg.buffer.is_none() => {
                cfg.buffer = Some(decode_dcb_buffer(&a)?)
            }
            DCB_ATTR_IEEE_PFC | DCB_ATTR_DCB_BUFFER => {
                return Err(
                    NetlinkError::new(a.offset, "DCB_ATTR_IEEE", "duplicate attribute").into(),
                )
            }
            _ => {}
        }
    }
    Ok(Some(cfg))
}

// ---- the socket -----------------------------------------------------------

/// A blocking `NETLINK_ROUTE` socket for dcbnl requests, one at a time, each
/// waiting at most [`REPLY_TIMEOUT`] for its answer. Works on interfaces of
/// the network namespace the socket was opened in.
#[derive(Debug)]
pub struct Dcbnl {
    sock: NlSocket,
    seq: u32,
    buf: Vec<u8>,
}

impl Dcbnl {
    pub fn open() -> io::Result<Dcbnl> {
        let sock = NlSocket::open(false, 0)?;
        sock.set_rcvtimeo(REPLY_TIMEOUT)?;
        Ok(Dcbnl {
            sock,
            seq: 0,
            buf: vec![0; 16 << 10],
        })
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1).max(1);
        self.seq
    }

    fn transact<T>(
        &mut self,
        req: Result<Vec<u8>, DcbError>,
        seq: u32,
        decode: impl Fn(&[u8]) -> Result<Option<T>, DcbError>,
    ) -> Result<T, DcbError> {
        self.sock.send(&req?)?;
        let deadline = Instant::now() + REPLY_TIMEOUT;
        loop {
            let n = match self.sock.recv(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no dcbnl reply within {REPLY_TIMEOUT:?}"),
                    )
                    .into())
                }
                Err(e) => return Err(e.into()),
            };
            if let Some(v) = decode(self.buf.get(..n).unwrap_or(&[]))? {
                return Ok(v);
            }
            if Instant::now() >= deadline {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no dcbnl reply to request {seq} within {REPLY_TIMEOUT:?}"),
                )
                .into());
            }
        }
    }

    fn u8_cmd(
        &mut self,
        cmd: DcbCmd,
        ifname: &str,
        encode: impl FnOnce(u32) -> Result<Vec<u8>, DcbError>,
    ) -> Result<u8, DcbError> {
        let seq = self.next_seq();
        self.transact(encode(seq), seq, |b| decode_u8_reply(b, seq, cmd, ifname))
    }

    fn set_cmd(
        &mut self,
        cmd: DcbCmd,
        ifname: &str,
        encode: impl FnOnce(u32) -> Result<Vec<u8>, DcbError>,
    ) -> Result<(), DcbError> {
        match self.u8_cmd(cmd, ifname, encode)? {
            0 => Ok(()),
            status => Err(DcbError::Status { cmd, status }),
        }
    }

    /// `DCB_CMD_GSTATE`: whether DCB is on. On a device without DCB support
    /// (veth) this is [`DcbError::Unsupported`]: the probe for DCB capability.
    pub fn get_state(&mut self, ifname: &str) -> Result<bool, DcbError> {
        Ok(self.u8_cmd(DcbCmd::GetState, ifname, |s| encode_get_state(s, ifname))? != 0)
    }

    /// `DCB_CMD_SSTATE`: switches DCB on or off.
    pub fn set_state(&mut self, ifname: &str, on: bool) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::SetState, ifname, |s| {
            encode_set_state(s, ifname, on)
        })
    }

    /// `DCB_CMD_PFC_SCFG`: PFC per priority (takes effect with
    /// [`Dcbnl::set_all`]).
    pub fn set_pfc(&mut self, ifname: &str, priorities: PfcSetting) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::PfcSetCfg, ifname, |s| {
            encode_set_pfc(s, ifname, priorities)
        })
    }

    /// `DCB_CMD_PFC_GCFG`: PFC per priority as the driver has it.
    pub fn get_pfc(&mut self, ifname: &str) -> Result<PfcSetting, DcbError> {
        let seq = self.next_seq();
        self.transact(encode_get_pfc(seq, ifname), seq, |b| {
            decode_pfc_reply(b, seq, ifname)
        })
    }

    /// `DCB_CMD_PFC_SSTATE`: PFC on or off as a whole.
    pub fn set_pfc_state(&mut self, ifname: &str, on: bool) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::PfcSetState, ifname, |s| {
            encode_set_pfc_state(s, ifname, on)
        })
    }

    /// `DCB_CMD_PFC_GSTATE`.
    pub fn get_pfc_state(&mut self, ifname: &str) -> Result<bool, DcbError> {
        Ok(self.u8_cmd(DcbCmd::PfcGetState, ifname, |s| {
            encode_get_pfc_state(s, ifname)
        })? != 0)
    }

    /// Programs a CEE priority-group setting for transmit and receive
    /// (`DCB_CMD_PGTX_SCFG`, then `DCB_CMD_PGRX_SCFG`), mapped as
    /// [`PgConfig::from_cee`] does; takes effect with [`Dcbnl::set_all`].
    pub fn set_pg(&mut self, ifname: &str, pg: &PgSetting) -> Result<(), DcbError> {
        let cfg = PgConfig::from_cee(pg)?;
        self.set_pg_config(ifname, PgDir::Tx, &cfg)?;
        self.set_pg_config(ifname, PgDir::Rx, &cfg)
    }

    /// Programs one direction's traffic classes as given.
    pub fn set_pg_config(
        &mut self,
        ifname: &str,
        dir: PgDir,
        cfg: &PgConfig,
    ) -> Result<(), DcbError> {
        self.set_cmd(dir.set_cmd(), ifname, |s| {
            encode_set_pg(s, ifname, dir, cfg)
        })
    }

    /// `DCB_CMD_PGTX_GCFG`: the transmit priority groups as the driver has
    /// them ([`PgConfig::to_cee`] for the CEE view).
    pub fn get_pg_tx(&mut self, ifname: &str) -> Result<PgConfig, DcbError> {
        self.get_pg(ifname, PgDir::Tx)
    }

    /// `DCB_CMD_PGRX_GCFG`.
    pub fn get_pg_rx(&mut self, ifname: &str) -> Result<PgConfig, DcbError> {
        self.get_pg(ifname, PgDir::Rx)
    }

    fn get_pg(&mut self, ifname: &str, dir: PgDir) -> Result<PgConfig, DcbError> {
        let seq = self.next_seq();
        self.transact(encode_get_pg(seq, ifname, dir), seq, |b| {
            decode_pg_reply(b, seq, dir, ifname)
        })
    }

    /// `DCB_CMD_IEEE_SET` of the PFC object: enabled priorities and the delay
    /// allowance in bit times (see [`encode_set_ieee_pfc`]).
    pub fn set_ieee_pfc(&mut self, ifname: &str, enabled: u8, delay: u16) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
            encode_set_ieee_pfc(s, ifname, enabled, delay)
        })
    }

    /// `DCB_CMD_IEEE_GET`: the PFC object and the DCB buffer as the driver
    /// reports them (each `None` when the driver has no op for it).
    pub fn get_ieee(&mut self, ifname: &str) -> Result<IeeeConfig, DcbError> {
        let seq = self.next_seq();
        self.transact(encode_get_ieee(seq, ifname), seq, |b| {
            decode_ieee_reply(b, seq, ifname)
        })
    }

    /// `DCB_CMD_IEEE_SET` of the DCB buffer. The kernel answers 0 even when
    /// the driver has no `dcbnl_setbuffer` (it drops the attribute), so read
    /// the buffer back with [`Dcbnl::get_ieee`] to know what the driver took.
    pub fn set_dcb_buffer(&mut self, ifname: &str, buffer: &DcbBuffer) -> Result<(), DcbError> {
        self.set_cmd(DcbCmd::IeeeSet, ifname, |s| {
            encode_set_dcb_buffer(s, ifname, buffer)
        })
    }

    /// `DCB_CMD_SET_ALL`: commits what was set. Returns the driver's status:
    /// [`SET_ALL_CHANGED_RESET`] (0), [`SET_ALL_NO_CHANGE`] (1) or
    /// [`SET_ALL_CHANGED_NO_RESET`] (2); anything else is a driver failure
    /// the caller may report.
    pub fn set_all(&mut self, ifname: &str) -> Result<u8, DcbError> {
        self.u8_cmd(DcbCmd::SetAll, ifname, |s| encode_set_all(s, ifname))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;

    fn u16at(b: &[u8], at: usize) -> u16 {
        u16::from_ne_bytes([b[at], b[at + 1]])
    }

    fn u32at(b: &[u8], at: usize) -> u32 {
        u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    /// `(nla_len, nla_type)` at `at`.
    fn attr(b: &[u8], at: usize) -> (u16, u16) {
        (u16at(b, at), u16at(b, at + 2))
    }

    const DEMO: PgSetting = PgSetting {
        pgid: [0, 0, 0, 0, 1, 1, 1, 15],
        percent: [25, 75, 0, 0, 0, 0, 0, 0],
    };

    #[test]
    fn ieee_pfc_request_layout() {
        let r = encode_set_ieee_pfc(7, "va", 0b0001_1000, 0x1234).unwrap();
        // nlmsghdr 16 + dcbmsg 4 + IFNAME 8 + IEEE nest 4 + PFC attr 4 + 136.
        assert_eq!(r.len(), 16 + 4 + 8 + 4 + 4 + IEEE_PFC_LEN);
        assert_eq!(u16at(&r, 4), RTM_SETDCB);
        assert_eq!(r[17], DcbCmd::IeeeSet.code(), "dcbmsg.cmd");
        assert_eq!(attr(&r, 28), ((4 + 4 + IEEE_PFC_LEN) as u16, DCB_ATTR_IEEE));
        assert_eq!(attr(&r, 32), ((4 + IEEE_PFC_LEN) as u16, DCB_ATTR_IEEE_PFC));
        let pfc = &r[36..];
        assert_eq!((pfc[0], pfc[1], pfc[2]), (8, 0b0001_1000, 0));
        assert_eq!(u16at(pfc, 4), 0x1234);
        assert!(pfc[6..].iter().all(|&b| b == 0));
    }

    #[test]
    fn get_state_request_layout() {
        let r = encode_get_state(0x01020304, "va").unwrap();
        // nlmsghdr 16 + dcbmsg 4 + IFNAME (4 + "va\0", padded to 8).
        assert_eq!(r.len(), 28);
        assert_eq!(u32at(&r, 0), 28);
        assert_eq!(u16at(&r, 4), RTM_GETDCB);
        assert_eq!(u16at(&r, 6), netlink::NLM_F_REQUEST);
        assert_eq!(u32at(&r, 8), 0x01020304);
        assert_eq!(u32at(&r, 12), 0);
        assert_eq!(&r[16..20], &[AF_UNSPEC, 1, 0, 0]);
        assert_eq!(attr(&r, 20), (7, DCB_ATTR_IFNAME));
        assert_eq!(&r[24..28], b"va\0\0");
    }

    #[test]
    fn set_requests_carry_their_value() {
        let r = encode_set_state(1, "eth0", true).unwrap();
        assert_eq!(u16at(&r, 4), RTM_SETDCB);
        assert_eq!(r[17], 2);
        // IFNAME "eth0\0" = 9 -> 12; then STATE.
        assert_eq!(attr(&r, 32), (5, DCB_ATTR_STATE));
        assert_eq!(r[36], 1);
        assert_eq!(r.len(), 40);

        let r = encode_set_pfc_state(1, "eth0", false).unwrap();
        assert_eq!(
            (r[17], attr(&r, 32), r[36]),
            (15, (5, DCB_ATTR_PFC_STATE), 0)
        );

        let r = encode_set_all(1, "eth0").unwrap();
        assert_eq!((r[17], attr(&r, 32), r[36]), (9, (5, DCB_ATTR_SET_ALL), 1));
    }

    #[test]
    fn set_pfc_request_layout() {
        let r = encode_set_pfc(
            1,
            "va",
            [false, false, false, true, true, false, false, false],
        )
        .unwrap();
        assert_eq!(r[17], 8);
        // PFC_CFG nest: 4 + 8 x (5 -> 8) = 68.
        assert_eq!(attr(&r, 28), (68, DCB_ATTR_PFC_CFG));
        for i in 0..8 {
            let at = 32 + 8 * i;
            assert_eq!(attr(&r, at), (5, DCB_PFC_UP_ATTR_0 + i as u16));
            assert_eq!(r[at + 4], u8::from(i == 3 || i == 4));
        }
        assert_eq!(r.len(), 96);
        assert_eq!(u32at(&r, 0), 96);
    }

    #[test]
    fn get_requests_ask_for_everything() {
        let r = encode_get_pfc(1, "va").unwrap();
        assert_eq!((u16at(&r, 4), r[17]), (RTM_GETDCB, 7));
        assert_eq!(attr(&r, 28), (8, DCB_ATTR_PFC_CFG));
        assert_eq!(attr(&r, 32), (4, DCB_PFC_UP_ATTR_ALL));
        assert_eq!(r.len(), 36);

        let r = encode_get_pg(1, "va", PgDir::Rx).unwrap();
        assert_eq!((u16at(&r, 4), r[17]), (RTM_GETDCB, 5));
        assert_eq!(attr(&r, 28), (16, DCB_ATTR_PG_CFG));
        assert_eq!(attr(&r, 32), (8, DCB_PG_ATTR_TC_ALL));
        assert_eq!(attr(&r, 36), (4, DCB_TC_ATTR_PARAM_ALL));
        assert_eq!(attr(&r, 40), (4, DCB_PG_ATTR_BW_ID_ALL));
        assert_eq!(r.len(), 44);
        assert_eq!(encode_get_pg(1, "va", PgDir::Tx).unwrap()[17], 3);

        assert_eq!(encode_get_pfc_state(1, "va").unwrap()[17], 14);
    }

    #[test]
    fn set_pg_request_layout_is_lldpads() {
        let cfg = PgConfig::from_cee(&DEMO).unwrap();
        let r = encode_set_pg(1, "va", PgDir::Tx, &cfg).unwrap();
        assert_eq!((u16at(&r, 4), r[17]), (RTM_SETDCB, 4));
        // PG_CFG: 4 + 8 TCs x (4 + 4 params x 8) + 8 BW ids x 8 = 356.
        assert_eq!(attr(&r, 28), (356, DCB_ATTR_PG_CFG));
        let up_map = [0x0f, 0x70, 0x80, 0, 0, 0, 0, 0];
        for (t, &map) in up_map.iter().enumerate() {
            let at = 32 + 36 * t;
            assert_eq!(attr(&r, at), (36, DCB_PG_ATTR_TC_0 + t as u16));
            let want = [
                t as u8,
                map,
                if t == 2 { STRICT_LINK } else { 0 },
                if t < 2 { 100 } else { 0 },
            ];
            for (k, v) in want.iter().enumerate() {
                let p = at + 4 + 8 * k;
                assert_eq!(
                    attr(&r, p),
                    (5, DCB_TC_ATTR_PARAM_PGID + k as u16),
                    "tc {t} param {k}"
                );
                assert_eq!(r[p + 4], *v, "tc {t} param {k}");
            }
        }
        for i in 0..8usize {
            let at = 32 + 36 * 8 + 8 * i;
            assert_eq!(attr(&r, at), (5, DCB_PG_ATTR_BW_ID_0 + i as u16));
            assert_eq!(r[at + 4], DEMO.percent[i]);
        }
        assert_eq!(r.len(), 28 + 356);
        assert_eq!(encode_set_pg(1, "va", PgDir::Rx, &cfg).unwrap()[17], 6);
    }

    #[test]
    fn bad_names_are_refused_before_sending() {
        for name in ["", "sixteen-chars-xx", "a\0b"] {
            assert!(matches!(
                encode_get_state(1, name),
                Err(DcbError::Invalid(_))
            ));
        }
        assert!(encode_get_state(1, "fifteen-chars-x").is_ok());
    }

    #[test]
    fn cee_mapping_is_lldpads() {
        let cfg = PgConfig::from_cee(&DEMO).unwrap();
        let tc = |pgid, up_map, strict_prio, bw_pct| TcConfig {
            pgid,
            up_map,
            strict_prio,
            bw_pct,
        };
        assert_eq!(
            cfg.tc,
            [
                tc(0, 0x0f, 0, 100),
                tc(1, 0x70, 0, 100),
                tc(2, 0x80, STRICT_LINK, 0),
                tc(3, 0, 0, 0),
                tc(4, 0, 0, 0),
                tc(5, 0, 0, 0),
                tc(6, 0, 0, 0),
                tc(7, 0, 0, 0),
            ]
        );
        assert_eq!(cfg.pg_bw, DEMO.percent);
        assert_eq!(cfg.to_cee(), DEMO);

        // Strict priorities go to the first PG no priority uses.
        let s = PgSetting {
            pgid: [15, 0, 1, 2, 4, 5, 6, 15],
            percent: [10, 10, 10, 0, 10, 10, 50, 0],
        };
        let cfg = PgConfig::from_cee(&s).unwrap();
        assert_eq!(cfg.tc[3], tc(3, 0x81, STRICT_LINK, 0));
        assert_eq!(cfg.to_cee(), s);

        // Everything strict.
        let s = PgSetting {
            pgid: [15; 8],
            percent: [0; 8],
        };
        let cfg = PgConfig::from_cee(&s).unwrap();
        assert_eq!(cfg.tc[0], tc(0, 0xff, STRICT_LINK, 0));
        assert_eq!(cfg.to_cee(), s);
    }

    #[test]
    fn cee_round_trips_for_many_settings() {
        // A small LCG: deterministic, no dependency.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) as u8
        };
        for _ in 0..10_000 {
            let mut s = PgSetting::default();
            for p in 0..8 {
                let v = next() % 9;
                s.pgid[p] = if v == 8 { 15 } else { v };
                s.percent[p] = next() % 101;
            }
            let cfg = PgConfig::from_cee(&s).unwrap();
            assert_eq!(cfg.to_cee(), s, "{cfg:?}");
            // Each priority is in exactly one TC.
            let mut all = 0u8;
            for tc in cfg.tc {
                assert_eq!(all & tc.up_map, 0);
                all |= tc.up_map;
            }
            assert_eq!(all, 0xff);
        }
    }

    #[test]
    fn invalid_cee_settings_are_refused() {
        let mut s = DEMO;
        s.pgid[2] = 8;
        assert!(
            matches!(PgConfig::from_cee(&s), Err(DcbError::Invalid(m)) if m.contains("PGID 8"))
        );
        let mut s = DEMO;
        s.percent[1] = 101;
        assert!(matches!(PgConfig::from_cee(&s), Err(DcbError::Invalid(m)) if m.contains("101")));
    }

    /// A reply as net/dcb/dcbnl.c builds it.
    fn reply(cmd: DcbCmd, seq: u32, body: impl FnOnce(&mut MsgBuilder)) -> Vec<u8> {
        let mut b = MsgBuilder::new(cmd.msg_type(), 0, seq);
        b.header(&[AF_UNSPEC, cmd.code(), 0, 0]);
        body(&mut b);
        b.finish()
    }

    fn error(seq: u32, errno: i32) -> Vec<u8> {
        let mut b = MsgBuilder::new(NLMSG_ERROR, 0, seq);
        let mut p = (-errno).to_ne_bytes().to_vec();
        p.extend_from_slice(&encode_get_state(seq, "va").unwrap());
        b.header(&p);
        b.finish()
    }

    #[test]
    fn decoding_u8_replies_and_errors() {
        let r = reply(DcbCmd::GetState, 5, |b| b.attr_u8(DCB_ATTR_STATE, 1));
        assert_eq!(
            decode_u8_reply(&r, 5, DcbCmd::GetState, "va").unwrap(),
            Some(1)
        );
        assert_eq!(
            decode_u8_reply(&r, 6, DcbCmd::GetState, "va").unwrap(),
            None
        );
        // A stale reply first, then ours, in one datagram.
        let mut two = reply(DcbCmd::GetState, 4, |b| b.attr_u8(DCB_ATTR_STATE, 0));
        two.extend_from_slice(&r);
        assert_eq!(
            decode_u8_reply(&two, 5, DcbCmd::GetState, "va").unwrap(),
            Some(1)
        );

        assert!(matches!(
            decode_u8_reply(&error(5, libc::EOPNOTSUPP), 5, DcbCmd::GetState, "va"),
            Err(DcbError::Unsupported { .. })
        ));
        assert!(matches!(
            decode_u8_reply(&error(5, libc::ENODEV), 5, DcbCmd::GetState, "va"),
            Err(DcbError::NoDevice { .. })
        ));
        assert!(matches!(
            decode_u8_reply(&error(5, libc::EPERM), 5, DcbCmd::SetState, "va"),
            Err(DcbError::Kernel {
                cmd: DcbCmd::SetState,
                errno: libc::EPERM
            })
        ));
        // An ACK is not the answer.
        assert_eq!(
            decode_u8_reply(&error(5, 0), 5, DcbCmd::GetState, "va").unwrap(),
            None
        );
        // Missing attribute, wrong size, wrong command.
        let e = decode_u8_reply(
            &reply(DcbCmd::GetState, 5, |_| {}),
            5,
            DcbCmd::GetState,
            "va",
        )
        .unwrap_err();
        assert!(
            matches!(e, DcbError::Reply(ref n) if n.what == "DCB_ATTR_STATE" && n.offset == 20),
            "{e}"
        );
        let r = reply(DcbCmd::GetState, 5, |b| b.attr(DCB_ATTR_STATE, &[1, 2]));
        assert!(matches!(
            decode_u8_reply(&r, 5, DcbCmd::GetState, "va"),
            Err(DcbError::Reply(n)) if n.offset == 20 && n.why.contains("expected 1")
        ));
        let r = reply(DcbCmd::PfcGetState, 5, |b| b.attr_u8(DCB_ATTR_STATE, 1));
        assert!(matches!(
            decode_u8_reply(&r, 5, DcbCmd::GetState, "va"),
            Err(DcbError::Reply(n)) if n.what == "dcbmsg" && n.offset == 17
        ));
    }

    #[test]
    fn decoding_pfc_and_pg_replies() {
        let pfc = reply(DcbCmd::PfcGetCfg, 1, |b| {
            let n = b.nest_start(DCB_ATTR_PFC_CFG);
            for i in 0..8u16 {
                b.attr_u8(DCB_PFC_UP_ATTR_0 + i, u8::from(i % 3 == 0));
            }
            b.nest_end(n);
        });
        assert_eq!(
            decode_pfc_reply(&pfc, 1, "va").unwrap(),
            Some([true, false, false, true, false, false, true, false])
        );
        let short = reply(DcbCmd::PfcGetCfg, 1, |b| {
            let n = b.nest_start(DCB_ATTR_PFC_CFG);
            for i in 0..7u16 {
                b.attr_u8(DCB_PFC_UP_ATTR_0 + i, 0);
            }
            b.nest_end(n);
        });
        assert!(matches!(
            decode_pfc_reply(&short, 1, "va"),
            Err(DcbError::Reply(n)) if n.why.contains("DCB_PFC_UP_ATTR_7")
        ));

        // The GCFG reply has the SCFG request's nested layout.
        let cfg = PgConfig::from_cee(&DEMO).unwrap();
        let req = encode_set_pg(9, "va", PgDir::Tx, &cfg).unwrap();
        let mut r = req.clone();
        r[4..6].copy_from_slice(&RTM_GETDCB.to_ne_bytes());
        r[17] = DcbCmd::PgTxGetCfg.code();
        assert_eq!(decode_pg_reply(&r, 9, PgDir::Tx, "va").unwrap(), Some(cfg));
    }

    const BUFFER: DcbBuffer = DcbBuffer {
        prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
        buffer_size: [130_944, 262_016, 0, 0, 0, 0, 0, 0],
        total_size: 1_048_576,
    };

    fn pfc_struct(enabled: u8, delay: u16) -> [u8; IEEE_PFC_LEN] {
        let mut pfc = [0u8; IEEE_PFC_LEN];
        pfc[0] = 8;
        pfc[1] = enabled;
        pfc[2] = 1;
        pfc[4..6].copy_from_slice(&delay.to_ne_bytes());
        pfc[IEEE_PFC_REQUESTS + 8 * 3..IEEE_PFC_REQUESTS + 8 * 4]
            .copy_from_slice(&7u64.to_ne_bytes());
        pfc[IEEE_PFC_INDICATIONS + 8 * 4..IEEE_PFC_INDICATIONS + 8 * 5]
            .copy_from_slice(&9u64.to_ne_bytes());
        pfc
    }

    /// An IEEE_GET reply as `dcbnl_ieee_fill()` builds it, for a driver with
    /// the ops `with` names ("ets", "pfc", "buffer", "peer_pfc").
    fn ieee_reply(seq: u32, with: &[&str], buffer: &DcbBuffer) -> Vec<u8> {
        reply(DcbCmd::IeeeGet, seq, |b| {
            b.attr(DCB_ATTR_IFNAME, b"va\0");
            let n = b.nest_start(DCB_ATTR_IEEE);
            if with.contains(&"ets") {
                b.attr(1, &[0u8; 59]); // DCB_ATTR_IEEE_ETS, struct ieee_ets
            }
            if with.contains(&"pfc") {
                b.attr(DCB_ATTR_IEEE_PFC, &pfc_struct(0x18, 1234));
            }
            if with.contains(&"buffer") {
                b.attr(DCB_ATTR_DCB_BUFFER, &buffer.to_bytes());
            }
            let app = b.nest_start(3); // DCB_ATTR_IEEE_APP_TABLE
            b.nest_end(app);
            if with.contains(&"peer_pfc") {
                b.attr(5, &pfc_struct(0xff, 1)); // DCB_ATTR_IEEE_PEER_PFC
            }
            b.nest_end(n);
            b.attr_u8(14, 0x0c); // DCB_ATTR_DCBX
        })
    }

    #[test]
    fn ieee_get_request_and_buffer_set_layout() {
        let r = encode_get_ieee(3, "va").unwrap();
        assert_eq!((u16at(&r, 4), r[17]), (RTM_GETDCB, 21));
        assert_eq!(attr(&r, 20), (7, DCB_ATTR_IFNAME));
        assert_eq!(r.len(), 28);

        let r = encode_set_dcb_buffer(4, "va", &BUFFER).unwrap();
        assert_eq!((u16at(&r, 4), r[17]), (RTM_SETDCB, 20));
        // nlmsghdr 16 + dcbmsg 4 + IFNAME 8 + IEEE nest 4 + BUFFER attr 4 + 44.
        assert_eq!(r.len(), 16 + 4 + 8 + 4 + 4 + DCB_BUFFER_LEN);
        assert_eq!(attr(&r, 28), ((8 + DCB_BUFFER_LEN) as u16, DCB_ATTR_IEEE));
        assert_eq!(
            attr(&r, 32),
            ((4 + DCB_BUFFER_LEN) as u16, DCB_ATTR_DCB_BUFFER)
        );
        let b = &r[36..];
        assert_eq!(&b[..8], &BUFFER.prio2buffer);
        assert_eq!(u32at(b, 8), 130_944);
        assert_eq!(u32at(b, 12), 262_016);
        assert_eq!(u32at(b, 40), 1_048_576);

        // The kernel refuses a buffer index beyond 7 (-EINVAL); so do we, first.
        let mut bad = BUFFER;
        bad.prio2buffer[6] = 8;
        let e = encode_set_dcb_buffer(4, "va", &bad).unwrap_err();
        assert!(
            matches!(&e, DcbError::Invalid(m) if m == "prio2buffer[6] = 8: a port has buffers 0..=7"),
            "{e}"
        );
    }

    #[test]
    fn decoding_ieee_get_replies() {
        let all = ieee_reply(8, &["ets", "pfc", "buffer", "peer_pfc"], &BUFFER);
        let cfg = decode_ieee_reply(&all, 8, "va").unwrap().unwrap();
        assert_eq!(cfg.buffer, Some(BUFFER));
        let pfc = cfg.pfc.unwrap();
        assert_eq!(
            (pfc.cap, pfc.enabled, pfc.mbc, pfc.delay),
            (8, 0x18, 1, 1234)
        );
        assert_eq!((pfc.requests[3], pfc.indications[4]), (7, 9));
        assert_eq!(BUFFER.buffers_of(pfc.enabled), 0b10);
        assert_eq!(BUFFER.buffers_of(0b1001), 0b11);
        assert_eq!(decode_ieee_reply(&all, 9, "va").unwrap(), None);

        // A driver without dcbnl_getbuffer (or without any IEEE op): absent.
        let cfg = decode_ieee_reply(&ieee_reply(8, &["ets", "pfc"], &BUFFER), 8, "va")
            .unwrap()
            .unwrap();
        assert_eq!(cfg.buffer, None);
        assert!(cfg.pfc.is_some());
        let cfg = decode_ieee_reply(&ieee_reply(8, &[], &BUFFER), 8, "va")
            .unwrap()
            .unwrap();
        assert_eq!(cfg, IeeeConfig::default());

        // A buffer index beyond 7, a short struct, a duplicate, no nest.
        let mut bad = BUFFER;
        bad.prio2buffer[2] = 200;
        let e = decode_ieee_reply(&ieee_reply(8, &["buffer"], &bad), 8, "va").unwrap_err();
        assert!(
            matches!(&e, DcbError::Reply(n) if n.what == "DCB_ATTR_DCB_BUFFER"
                && n.why == "prio2buffer[2] = 200: a port has buffers 0..=7"),
            "{e}"
        );
        let short = reply(DcbCmd::IeeeGet, 8, |b| {
            let n = b.nest_start(DCB_ATTR_IEEE);
            b.attr(DCB_ATTR_DCB_BUFFER, &[0u8; 40]);
            b.nest_end(n);
        });
        let e = decode_ieee_reply(&short, 8, "va").unwrap_err();
        assert!(
            matches!(&e, DcbError::Reply(n) if n.offset == 24 && n.what == "DCB_ATTR_DCB_BUFFER"
                && n.why == "payload of 40 bytes, the struct needs 44"),
            "{e}"
        );
        let twice = reply(DcbCmd::IeeeGet, 8, |b| {
            let n = b.nest_start(DCB_ATTR_IEEE);
            b.attr(DCB_ATTR_IEEE_PFC, &pfc_struct(1, 1));
            b.attr(DCB_ATTR_IEEE_PFC, &pfc_struct(2, 2));
            b.nest_end(n);
        });
        assert!(matches!(
            decode_ieee_reply(&twice, 8, "va"),
            Err(DcbError::Reply(n)) if n.why == "duplicate attribute"
        ));
        let bare = reply(DcbCmd::IeeeGet, 8, |b| b.attr(DCB_ATTR_IFNAME, b"va\0"));
        assert!(matches!(
            decode_ieee_reply(&bare, 8, "va"),
            Err(DcbError::Reply(n)) if n.what == "DCB_ATTR_IEEE" && n.why == "missing"
        ));
        // A driver without dcbnl ops.
        assert!(matches!(
            decode_ieee_reply(&error(8, libc::EOPNOTSUPP), 8, "va"),
            Err(DcbError::Unsupported { .. })
        ));
    }

    #[test]
    fn ieee_set_status_is_the_drivers_errno() {
        let e = DcbError::Status {
            cmd: DcbCmd::IeeeSet,
            status: (-libc::EINVAL) as u8,
        };
        assert_eq!(
            e.to_string(),
            format!(
                "DCB_CMD_IEEE_SET: the driver refused (status 234: -22, {})",
                io::Error::from_raw_os_error(libc::EINVAL)
            )
        );
        let e = DcbError::Status {
            cmd: DcbCmd::SetAll,
            status: 3,
        };
        assert_eq!(
            e.to_string(),
            "DCB_CMD_SET_ALL: the driver refused (status 3)"
        );
    }

    #[test]
    fn cmd_names_and_types() {
        assert_eq!(DcbCmd::SetAll.to_string(), "DCB_CMD_SET_ALL");
        assert_eq!(DcbCmd::PfcGetState.msg_type(), RTM_GETDCB);
        assert_eq!(DcbCmd::PgRxSetCfg.msg_type(), RTM_SETDCB);
        assert!(decode_u8_reply(&[], 1, DcbCmd::PfcGetCfg, "va").is_err());
    }
}

//! The dcbnl commands (`enum dcbnl_commands`), the message type each travels in and
//! the top-level attributes (`enum dcbnl_attrs`). Apart from the framing (`msg.rs`)
//! so that the error type, which names the command that failed, does not reach into
//! the framing that returns it.

use std::fmt;

pub const RTM_GETDCB: u16 = 78;
pub const RTM_SETDCB: u16 = 79;

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

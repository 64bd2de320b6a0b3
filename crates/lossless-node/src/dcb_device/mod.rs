//! The NIC's DCB operations as a trait, and the one order in which the node's NIC
//! outputs are carried out through it (sans-IO, as smoltcp's `phy::Device`: the
//! decisions here, the requests in whoever implements the trait).
//!
//! [`DcbDevice`] is one method per dcbnl operation: IEEE 802.1Qaz's ETS, PFC, APP
//! entries and trust order, the DCB buffer, the DCBX mode, CEE's state, PFC and
//! priority groups, and the read-backs. losslessd implements it over its dcbnl socket
//! (`losslessd/src/dcbnl_device.rs`), the lab over its modelled driver
//! (`lossless-lab/src/nic.rs`); both carry out `Output::ProgramIeee`, `ProgramCee`,
//! `SetDcbxMode`, `ReadNic`, `Probe`, `ApplyHeadroom` and `SetBuffer` with the functions
//! of [`program`], so the lab runs the daemon's order and error rules.
//!
//! A device answers each operation with a [`DeviceError`] of a [`DeviceErrorKind`];
//! what the node counts and reports is the [`HardwareError`] it maps to
//! ([`DeviceError::hardware`]), and what the order decides on a refusal (a driver
//! without `setstate`, a priority-group refusal, a driver without a trust table) is
//! decided on the kind.

pub mod program;

#[cfg(test)]
mod tests;

use lossless_wire::cee::{PgConfig, PriorityMap};
use lossless_wire::ieee::AppPriority;

use crate::hardware::{
    DcbBuffer, EtsProgram, HardwareError, HardwareErrorKind, IeeeReadback, NicState,
};

pub use program::{
    apply_headroom, probe, program_cee, program_ieee, read_nic, set_dcbx_mode, write_buffer,
};

/// What kind of failure a device reported: what the order decides on, and what the
/// node counts (through [`HardwareErrorKind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceErrorKind {
    /// The driver lacks the operation (`EOPNOTSUPP`).
    Unsupported,
    /// `DCB_CMD_IEEE_GET` does not report an object the operation needs (no trust
    /// table, no `ieee_getpfc`): nothing was sent.
    NotReported,
    /// No such interface (`ENODEV`).
    NoDevice,
    /// The driver or the kernel refused a value (`EINVAL`, `ERANGE`, a non-zero
    /// status).
    Refused,
    /// Refused before sending (a bad name or value).
    InvalidRequest,
    /// Not allowed (`EPERM`, `EACCES`).
    Permission,
    /// `EBUSY`.
    Busy,
    /// No answer in time.
    Timeout,
    /// An answer that did not parse, or was not the answer to the request.
    Malformed,
    /// The socket itself failed.
    Io,
    /// Any other error.
    Other,
}

impl DeviceErrorKind {
    /// The kind the node counts (`lossless_hardware_errors_total`).
    pub fn hardware(self) -> HardwareErrorKind {
        match self {
            DeviceErrorKind::Unsupported | DeviceErrorKind::NotReported => {
                HardwareErrorKind::NotSupported
            }
            DeviceErrorKind::NoDevice => HardwareErrorKind::NoDevice,
            DeviceErrorKind::Refused | DeviceErrorKind::InvalidRequest => {
                HardwareErrorKind::Refused
            }
            DeviceErrorKind::Permission => HardwareErrorKind::Permission,
            DeviceErrorKind::Busy => HardwareErrorKind::Busy,
            DeviceErrorKind::Timeout => HardwareErrorKind::Timeout,
            DeviceErrorKind::Malformed => HardwareErrorKind::Malformed,
            DeviceErrorKind::Io | DeviceErrorKind::Other => HardwareErrorKind::Other,
        }
    }
}

/// A device's answer to an operation it did not carry out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DeviceError {
    pub kind: DeviceErrorKind,
    /// What happened, for a person (the interface and the request in it).
    pub message: String,
    /// The driver's or the kernel's answer by its symbolic name (`EINVAL`), or a
    /// driver-defined status (`status 1`).
    pub code: Option<String>,
}

impl DeviceError {
    pub fn new(kind: DeviceErrorKind, message: impl Into<String>) -> DeviceError {
        DeviceError {
            kind,
            message: message.into(),
            code: None,
        }
    }

    /// The same, with the errno's symbolic name or the status.
    pub fn with_code(mut self, code: impl Into<String>) -> DeviceError {
        self.code = Some(code.into());
        self
    }

    /// The error as the node counts and reports it.
    pub fn hardware(self) -> HardwareError {
        let e = HardwareError::new(self.kind.hardware(), self.message);
        match self.code {
            Some(c) => e.with_code(c),
            None => e,
        }
    }

    /// A device whose answers are already in the node's terms (the lab's modelled
    /// driver): the kind that maps back to `e`'s.
    pub fn from_hardware(e: &HardwareError) -> DeviceError {
        let kind = match e.kind {
            HardwareErrorKind::NotSupported => DeviceErrorKind::Unsupported,
            HardwareErrorKind::NoDevice => DeviceErrorKind::NoDevice,
            HardwareErrorKind::Refused => DeviceErrorKind::Refused,
            HardwareErrorKind::Permission => DeviceErrorKind::Permission,
            HardwareErrorKind::Busy => DeviceErrorKind::Busy,
            HardwareErrorKind::Timeout => DeviceErrorKind::Timeout,
            HardwareErrorKind::Malformed => DeviceErrorKind::Malformed,
            HardwareErrorKind::Other => DeviceErrorKind::Other,
        };
        DeviceError {
            kind,
            message: e.message.clone(),
            code: e.code.clone(),
        }
    }
}

impl From<DeviceError> for HardwareError {
    fn from(e: DeviceError) -> HardwareError {
        e.hardware()
    }
}

/// `DCB_CAP_DCBX_HOST`: the host runs DCBX (not the NIC's firmware).
pub const DCBX_HOST: u8 = 0x01;
/// `DCB_CAP_DCBX_VER_CEE`.
pub const DCBX_VER_CEE: u8 = 0x04;
/// `DCB_CAP_DCBX_VER_IEEE`.
pub const DCBX_VER_IEEE: u8 = 0x08;

/// The APP selector the kernel's trust order uses for the VLAN tag's PCP
/// (`DCB_APP_SEL_PCP`), beside IEEE 802.1Qaz's selectors 1..=5.
pub const SELECTOR_PCP: u8 = 255;

/// The NIC's DCB operations, one method a dcbnl request; `ifname` names the port.
/// Each answers on its own: a refusal is an answer, and the order goes on where the
/// driver allows it ([`program`]).
pub trait DcbDevice {
    /// `DCB_CMD_IEEE_GET` as the node compares it: ETS, PFC (its delay, no
    /// counters), the APP table, the trust order, the DCB buffer, the DCBX mode; CEE's
    /// objects left out (see [`DcbDevice::get_pfc`]).
    fn ieee_state(&mut self, ifname: &str) -> Result<NicState, DeviceError>;
    /// `DCB_CMD_IEEE_GET` as the headroom reads it: PFC with its counters, the buffer.
    fn ieee_readback(&mut self, ifname: &str) -> Result<IeeeReadback, DeviceError>;
    /// `IEEE_SET` of ETS alone.
    fn set_ieee_ets(&mut self, ifname: &str, ets: &EtsProgram) -> Result<(), DeviceError>;
    /// `IEEE_SET` of PFC alone: the enabled priorities (bit p = priority p) and the
    /// delay allowance in bit times.
    fn set_ieee_pfc(&mut self, ifname: &str, enabled: u8, delay: u16) -> Result<(), DeviceError>;
    /// Checks the APP entries about to be added or deleted (one list at a time);
    /// an entry the device cannot send fails the list before anything is sent.
    fn check_apps(&mut self, _apps: &[AppPriority]) -> Result<(), DeviceError> {
        Ok(())
    }
    /// One `IEEE_SET` of this APP entry.
    fn add_app(&mut self, ifname: &str, app: &AppPriority) -> Result<(), DeviceError>;
    /// One `IEEE_DEL` of this APP entry.
    fn del_app(&mut self, ifname: &str, app: &AppPriority) -> Result<(), DeviceError>;
    /// `IEEE_SET` of the selector trust order (kernel selector numbers, see
    /// [`SELECTOR_PCP`]), on a driver that reports a trust table.
    fn set_app_trust(&mut self, ifname: &str, order: &[u8]) -> Result<(), DeviceError>;
    /// `DCB_ATTR_DCB_BUFFER`: the priority-to-buffer map and the buffers' sizes.
    fn set_buffer(&mut self, ifname: &str, buffer: &DcbBuffer) -> Result<(), DeviceError>;
    /// `DCB_CMD_GDCBX`: the DCBX mode (`DCB_CAP_DCBX_*` bits).
    fn get_dcbx(&mut self, ifname: &str) -> Result<u8, DeviceError>;
    /// `DCB_CMD_SDCBX`.
    fn set_dcbx(&mut self, ifname: &str, mode: u8) -> Result<(), DeviceError>;
    /// `DCB_CMD_SSTATE`: DCB on or off.
    fn set_state(&mut self, ifname: &str, on: bool) -> Result<(), DeviceError>;
    /// `DCB_CMD_PFC_SCFG`: PFC per priority.
    fn set_pfc(&mut self, ifname: &str, priorities: PriorityMap) -> Result<(), DeviceError>;
    /// `DCB_CMD_PFC_SSTATE`.
    fn set_pfc_state(&mut self, ifname: &str, on: bool) -> Result<(), DeviceError>;
    /// `DCB_CMD_PGTX_SCFG` and `PGRX_SCFG`: the priority groups (their PGIDs and
    /// bandwidths; the number of classes is not sent).
    fn set_pg(&mut self, ifname: &str, pg: &PgConfig) -> Result<(), DeviceError>;
    /// `DCB_CMD_SET_ALL`: the driver commits what the CEE sets gave it.
    fn set_all(&mut self, ifname: &str) -> Result<(), DeviceError>;
    /// `DCB_CMD_PFC_GCFG`: PFC per priority as CEE holds it.
    fn get_pfc(&mut self, ifname: &str) -> Result<PriorityMap, DeviceError>;
    /// `DCB_CMD_PFC_GSTATE`.
    fn get_pfc_state(&mut self, ifname: &str) -> Result<bool, DeviceError>;
    /// `DCB_CMD_PGTX_GCFG`: the transmit priority groups, (PGIDs, percentages).
    fn get_pg_tx(&mut self, ifname: &str) -> Result<([u8; 8], [u8; 8]), DeviceError>;
}

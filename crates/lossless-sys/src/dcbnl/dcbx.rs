//! The DCBX mode of a device (`DCB_CMD_GDCBX`/`SDCBX`, `DCB_CAP_DCBX_*`):
//! who negotiates (the host's agent or the NIC's firmware) and which flavour.
//!
//! Both commands carry `DCB_ATTR_DCBX` (u8). `GDCBX` answers with the mode;
//! `SDCBX` with the driver's status, 0 when it took the mode (the drivers we
//! read answer 1 for a mode they refuse). A driver without `getdcbx` or
//! `setdcbx` gets `-EOPNOTSUPP` from the kernel.

use std::fmt;
use std::ops::BitOr;

use super::error::DcbError;
use super::msg::{request, DcbCmd, DCB_ATTR_DCBX};

/// A set of `DCB_CAP_DCBX_*` flags. Open: unknown bits read from a driver
/// are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DcbxMode(pub u8);

impl DcbxMode {
    /// `DCB_CAP_DCBX_HOST`: an LLDP agent on the host negotiates and
    /// programs the result.
    pub const HOST: DcbxMode = DcbxMode(0x01);
    /// `DCB_CAP_DCBX_LLD_MANAGED`: something other than the host (the NIC's
    /// firmware) negotiates.
    pub const LLD_MANAGED: DcbxMode = DcbxMode(0x02);
    /// `DCB_CAP_DCBX_VER_CEE`: the CEE flavour.
    pub const VER_CEE: DcbxMode = DcbxMode(0x04);
    /// `DCB_CAP_DCBX_VER_IEEE`: the IEEE 802.1Qaz flavour.
    pub const VER_IEEE: DcbxMode = DcbxMode(0x08);
    /// `DCB_CAP_DCBX_STATIC`: no negotiation; the configuration is what it
    /// is set to.
    pub const STATIC: DcbxMode = DcbxMode(0x10);

    const KNOWN: u8 = 0x1f;
    const NAMES: [(DcbxMode, &'static str); 5] = [
        (DcbxMode::HOST, "HOST"),
        (DcbxMode::LLD_MANAGED, "LLD_MANAGED"),
        (DcbxMode::VER_CEE, "VER_CEE"),
        (DcbxMode::VER_IEEE, "VER_IEEE"),
        (DcbxMode::STATIC, "STATIC"),
    ];

    /// Whether every flag of `other` is set here.
    pub fn contains(self, other: DcbxMode) -> bool {
        self.0 & other.0 == other.0
    }

    /// Refuses flags `<linux/dcbnl.h>` does not define, and a mode that is
    /// both host-run and firmware-run.
    pub fn check(self) -> Result<(), String> {
        if self.0 & !Self::KNOWN != 0 {
            return Err(format!(
                "DCBX mode {:#04x}: bits {:#04x} are not DCB_CAP_DCBX_* flags",
                self.0,
                self.0 & !Self::KNOWN
            ));
        }
        if self.contains(DcbxMode::HOST | DcbxMode::LLD_MANAGED) {
            return Err(format!(
                "DCBX mode {self}: HOST and LLD_MANAGED exclude each other"
            ));
        }
        Ok(())
    }
}

impl BitOr for DcbxMode {
    type Output = DcbxMode;
    fn bitor(self, rhs: DcbxMode) -> DcbxMode {
        DcbxMode(self.0 | rhs.0)
    }
}

impl fmt::Display for DcbxMode {
    /// `HOST|VER_IEEE`; unknown bits in hex; `none` for 0.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = DcbxMode::NAMES
            .iter()
            .filter(|(m, _)| self.contains(*m))
            .map(|(_, n)| (*n).to_owned())
            .collect();
        if self.0 & !Self::KNOWN != 0 {
            parts.push(format!("{:#04x}", self.0 & !Self::KNOWN));
        }
        if parts.is_empty() {
            return f.write_str("none");
        }
        f.write_str(&parts.join("|"))
    }
}

/// `DCB_CMD_GDCBX`: the request carries only the interface name.
pub fn encode_get_dcbx(seq: u32, ifname: &str) -> Result<Vec<u8>, DcbError> {
    Ok(request(DcbCmd::GetDcbx, seq, ifname)?.finish())
}

/// `DCB_CMD_SDCBX` with `DCB_ATTR_DCBX` = `mode` (checked with
/// [`DcbxMode::check`] first).
pub fn encode_set_dcbx(seq: u32, ifname: &str, mode: DcbxMode) -> Result<Vec<u8>, DcbError> {
    mode.check()
        .map_err(|why| DcbError::Invalid(format!("{}: {why}", DcbCmd::SetDcbx)))?;
    let mut b = request(DcbCmd::SetDcbx, seq, ifname)?;
    b.attr_u8(DCB_ATTR_DCBX, mode.0);
    Ok(b.finish())
}

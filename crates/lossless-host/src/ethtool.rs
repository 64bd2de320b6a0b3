//! 802.3x pause and the NIC firmware's LLDP agent, through ethtool netlink
//! (`ETHTOOL_MSG_PAUSE_GET/SET`, `ETHTOOL_MSG_PRIVFLAGS_GET/SET`), and the driver's
//! name (`ETHTOOL_GDRVINFO`).

use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::roce::{FwAgent, Pause, Reading};
use lossless_sys::ethtool::EthtoolStats;
use lossless_sys::ethtool_nl::{EthtoolError, EthtoolNl};

/// The private flags that put a NIC's firmware LLDP agent on or off, and whether the
/// flag being set means the agent runs: ice `fw-lldp-agent` (set: on), i40e
/// `disable-fw-lldp` (set: off).
const AGENT_FLAGS: [(&str, bool); 2] = [("fw-lldp-agent", true), ("disable-fw-lldp", false)];

/// The ethtool sockets (opened once; a kernel without the ethtool netlink family
/// leaves the netlink one absent, and pause and private flags are then not read).
pub struct LinkSettings {
    nl: Result<EthtoolNl, String>,
    stats: Option<EthtoolStats>,
}

fn error(e: &EthtoolError) -> HardwareError {
    let kind = match e.errno() {
        Some(libc::EOPNOTSUPP) => HardwareErrorKind::NotSupported,
        Some(libc::ENODEV) => HardwareErrorKind::NoDevice,
        Some(libc::EPERM | libc::EACCES) => HardwareErrorKind::Permission,
        Some(libc::EBUSY | libc::EAGAIN) => HardwareErrorKind::Busy,
        Some(libc::EINVAL | libc::ERANGE) => HardwareErrorKind::Refused,
        _ => HardwareErrorKind::Other,
    };
    HardwareError {
        kind,
        message: e.to_string(),
        code: e.errno_name(),
    }
}

impl LinkSettings {
    pub fn open() -> LinkSettings {
        LinkSettings {
            nl: EthtoolNl::open().map_err(|e| format!("ethtool netlink: {e}")),
            stats: EthtoolStats::open().ok(),
        }
    }

    /// The driver's name (`ethtool -i`).
    pub fn driver(&mut self, ifname: &str) -> Option<String> {
        self.stats.as_ref()?.driver(ifname).ok()
    }

    fn nl(&mut self) -> Result<&mut EthtoolNl, HardwareError> {
        self.nl.as_mut().map_err(|e| HardwareError {
            kind: HardwareErrorKind::NotSupported,
            message: e.clone(),
            code: None,
        })
    }

    pub fn pause(&mut self, ifname: &str) -> Reading<Pause> {
        let nl = match self.nl() {
            Ok(nl) => nl,
            Err(e) => return Reading::NotExposed(e.message),
        };
        match nl.pause(ifname) {
            Ok(p) => Reading::Value(Pause {
                autoneg: p.autoneg,
                rx: p.rx,
                tx: p.tx,
            }),
            Err(e) if e.errno() == Some(libc::EOPNOTSUPP) => Reading::NotExposed(format!(
                "the driver has no pause settings ({})",
                error(&e).answer()
            )),
            Err(e) => Reading::Failed(e.to_string()),
        }
    }

    /// Pause off (or on) both ways; autonegotiation left as it is.
    pub fn set_pause(&mut self, ifname: &str, on: bool) -> Result<(), HardwareError> {
        self.nl()?
            .set_pause(ifname, None, Some(on), Some(on))
            .map_err(|e| error(&e))
    }

    pub fn fw_agent(&mut self, ifname: &str) -> Reading<Option<FwAgent>> {
        let nl = match self.nl() {
            Ok(nl) => nl,
            Err(e) => return Reading::NotExposed(e.message),
        };
        match nl.private_flags(ifname) {
            Ok(flags) => Reading::Value(flags.iter().find_map(|(name, set)| {
                AGENT_FLAGS
                    .iter()
                    .find(|(f, _)| f == name)
                    .map(|&(flag, set_means_on)| FwAgent {
                        flag: flag.to_string(),
                        on: *set == set_means_on,
                    })
            })),
            // No private flags at all: no such agent to turn off.
            Err(e) if e.errno() == Some(libc::EOPNOTSUPP) => Reading::Value(None),
            Err(e) => Reading::Failed(e.to_string()),
        }
    }

    /// The firmware agent on or off, through the driver's private flag.
    pub fn set_fw_agent(&mut self, ifname: &str, on: bool) -> Result<(), HardwareError> {
        let agent = match self.fw_agent(ifname) {
            Reading::Value(Some(a)) => a,
            Reading::Value(None) => {
                return Err(HardwareError {
                    kind: HardwareErrorKind::NotSupported,
                    message: format!(
                        "{ifname}: the driver has no firmware LLDP agent flag ({})",
                        AGENT_FLAGS.map(|(f, _)| f).join(", ")
                    ),
                    code: None,
                })
            }
            Reading::NotExposed(w) | Reading::Failed(w) => {
                return Err(HardwareError {
                    kind: HardwareErrorKind::Other,
                    message: w,
                    code: None,
                })
            }
        };
        let set_means_on = AGENT_FLAGS
            .iter()
            .find(|(f, _)| *f == agent.flag)
            .is_some_and(|&(_, m)| m);
        self.nl()?
            .set_private_flag(ifname, &agent.flag, on == set_means_on)
            .map_err(|e| error(&e))
    }
}

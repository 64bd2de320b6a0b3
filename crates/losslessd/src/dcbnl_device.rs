//! The daemon's dcbnl: one netlink socket, opened at first use, as the node core's
//! [`DcbDevice`]. Each method is one request of `lossless-sys`'s [`Dcbnl`], its answer
//! converted; the order of the requests for each output and what a refusal means
//! are `lossless_node::dcb_device`'s, which the lab's modelled NIC runs too.

use lossless_node::dcb_device::{DcbDevice, DeviceError, DeviceErrorKind};
use lossless_node::hardware::{DcbBuffer, EtsProgram, IeeeReadback, NicState};
use lossless_sys::dcbnl::{AppSelector, DcbApp, DcbError, Dcbnl, DcbxMode, PgSetting};
use lossless_wire::cee::{PgConfig, PriorityMap};
use lossless_wire::ieee::AppPriority;

use crate::convert;

/// The dcbnl socket, opened at first use (and again after a failed open).
#[derive(Default)]
pub(crate) struct DcbnlDevice {
    dcbnl: Option<Dcbnl>,
}

impl DcbnlDevice {
    /// Runs `f` on the socket; its error (or the socket's) as the device reports it.
    fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Dcbnl) -> Result<T, DcbError>,
    ) -> Result<T, DeviceError> {
        let d = self.get()?;
        f(d).map_err(convert::device_error)
    }

    /// The dcbnl socket, opened at first use.
    fn get(&mut self) -> Result<&mut Dcbnl, DeviceError> {
        if self.dcbnl.is_none() {
            let d = Dcbnl::open().map_err(|e| {
                DeviceError::new(DeviceErrorKind::Other, format!("dcbnl socket: {e}"))
            })?;
            self.dcbnl = Some(d);
        }
        self.dcbnl
            .as_mut()
            .ok_or_else(|| DeviceError::new(DeviceErrorKind::Other, "dcbnl socket: not open"))
    }
}

/// The answers of an APP request made one entry at a time: the entry's own.
fn one_app(answers: lossless_sys::dcbnl::AppAnswers) -> Result<(), DcbError> {
    answers.into_iter().next().map_or(Ok(()), |(_, r)| r)
}

impl DcbDevice for DcbnlDevice {
    fn ieee_state(&mut self, ifname: &str) -> Result<NicState, DeviceError> {
        self.with(|d| d.get_ieee_state(ifname))
            .map(convert::nic_state)
    }

    fn ieee_readback(&mut self, ifname: &str) -> Result<IeeeReadback, DeviceError> {
        self.with(|d| d.get_ieee(ifname))
            .map(convert::ieee_readback)
    }

    fn set_ieee_ets(&mut self, ifname: &str, ets: &EtsProgram) -> Result<(), DeviceError> {
        self.with(|d| d.set_ieee_ets(ifname, &convert::ieee_ets(ets)))
    }

    fn set_ieee_pfc(&mut self, ifname: &str, enabled: u8, delay: u16) -> Result<(), DeviceError> {
        self.with(|d| d.set_ieee_pfc(ifname, enabled, delay))
    }

    fn check_apps(&mut self, apps: &[AppPriority]) -> Result<(), DeviceError> {
        convert::dcb_apps(apps)
            .iter()
            .try_for_each(DcbApp::check)
            .map_err(|e| convert::device_error(DcbError::Invalid(e)))
    }

    fn add_app(&mut self, ifname: &str, app: &AppPriority) -> Result<(), DeviceError> {
        // Held entries were answered by the order already: none is held here.
        let apps = convert::dcb_apps(std::slice::from_ref(app));
        self.with(|d| one_app(d.add_ieee_apps_each(ifname, &apps, &[])?))
    }

    fn del_app(&mut self, ifname: &str, app: &AppPriority) -> Result<(), DeviceError> {
        let apps = convert::dcb_apps(std::slice::from_ref(app));
        self.with(|d| d.del_ieee_app(ifname, &apps[0]))
    }

    fn set_app_trust(&mut self, ifname: &str, order: &[u8]) -> Result<(), DeviceError> {
        let order: Vec<AppSelector> = order.iter().map(|s| AppSelector(*s)).collect();
        self.with(|d| d.set_app_trust_known(ifname, &order, true))
    }

    fn set_buffer(&mut self, ifname: &str, buffer: &DcbBuffer) -> Result<(), DeviceError> {
        let buffer = convert::sys_buffer(buffer);
        self.with(|d| d.set_dcb_buffer(ifname, &buffer))
    }

    fn get_dcbx(&mut self, ifname: &str) -> Result<u8, DeviceError> {
        self.with(|d| d.get_dcbx(ifname)).map(|m| m.0)
    }

    fn set_dcbx(&mut self, ifname: &str, mode: u8) -> Result<(), DeviceError> {
        self.with(|d| d.set_dcbx(ifname, DcbxMode(mode)))
    }

    fn set_state(&mut self, ifname: &str, on: bool) -> Result<(), DeviceError> {
        self.with(|d| d.set_state(ifname, on))
    }

    fn set_pfc(&mut self, ifname: &str, priorities: PriorityMap) -> Result<(), DeviceError> {
        let mut prios = [false; 8];
        for p in priorities.priorities() {
            prios[usize::from(p)] = true;
        }
        self.with(|d| d.set_pfc(ifname, prios))
    }

    fn set_pfc_state(&mut self, ifname: &str, on: bool) -> Result<(), DeviceError> {
        self.with(|d| d.set_pfc_state(ifname, on))
    }

    fn set_pg(&mut self, ifname: &str, pg: &PgConfig) -> Result<(), DeviceError> {
        let pg = PgSetting {
            pgid: pg.pgid,
            percent: pg.percent,
        };
        self.with(|d| d.set_pg(ifname, &pg))
    }

    fn set_all(&mut self, ifname: &str) -> Result<(), DeviceError> {
        self.with(|d| d.set_all(ifname).map(|_| ()))
    }

    fn get_pfc(&mut self, ifname: &str) -> Result<PriorityMap, DeviceError> {
        let pfc = self.with(|d| d.get_pfc(ifname))?;
        let bits = pfc
            .iter()
            .enumerate()
            .fold(0u8, |m, (p, on)| if *on { m | (1 << p) } else { m });
        Ok(PriorityMap(bits))
    }

    fn get_pfc_state(&mut self, ifname: &str) -> Result<bool, DeviceError> {
        self.with(|d| d.get_pfc_state(ifname))
    }

    fn get_pg_tx(&mut self, ifname: &str) -> Result<([u8; 8], [u8; 8]), DeviceError> {
        let pg = self.with(|d| d.get_pg_tx(ifname))?.to_cee();
        Ok((pg.pgid, pg.percent))
    }
}

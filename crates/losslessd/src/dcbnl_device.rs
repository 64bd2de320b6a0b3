//! The daemon's dcbnl: one netlink socket, opened at first use, and the order in which
//! each of the node's NIC outputs is sent through it.

use lossless_node::hardware::{
    HardwareError, HardwareErrorKind, IeeeOutcome, IeeeProgram, NicState, Trust, TrustOutcome,
};
use lossless_sys::dcbnl::{AppSelector, DcbError, Dcbnl, DcbxMode, PgSetting};

use crate::convert;

/// The dcbnl socket, opened at first use (and again after a failed open).
#[derive(Default)]
pub(crate) struct DcbnlDevice {
    dcbnl: Option<Dcbnl>,
}

impl DcbnlDevice {
    /// Runs `f` on the socket; its error (or the socket's) as the node counts it.
    pub(crate) fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Dcbnl) -> Result<T, DcbError>,
    ) -> Result<T, HardwareError> {
        let d = self.get()?;
        f(d).map_err(convert::hardware_error)
    }

    /// The dcbnl socket, opened at first use.
    fn get(&mut self) -> Result<&mut Dcbnl, HardwareError> {
        if self.dcbnl.is_none() {
            let d = Dcbnl::open().map_err(|e| {
                HardwareError::new(HardwareErrorKind::Other, format!("dcbnl socket: {e}"))
            })?;
            self.dcbnl = Some(d);
        }
        self.dcbnl
            .as_mut()
            .ok_or_else(|| HardwareError::new(HardwareErrorKind::Other, "dcbnl socket: not open"))
    }
}

/// Programs operational PFC and PG the way a CEE driver expects: DCB on,
/// per-priority PFC and its state, PG for both directions, then SET_ALL.
pub(crate) fn program_cee(
    d: &mut Dcbnl,
    ifname: &str,
    pfc: Option<&lossless_wire::cee::PfcConfig>,
    pg: Option<&lossless_wire::cee::PgConfig>,
) -> Result<(), DcbError> {
    // Drivers without `setstate` (mlx5: DCB is always on there) answer EOPNOTSUPP;
    // their PFC and PG are set all the same.
    match d.set_state(ifname, true) {
        Err(DcbError::Unsupported { .. }) => {}
        other => other?,
    }
    let mut prios = [false; 8];
    if let Some(pfc) = pfc {
        for p in pfc.priorities.priorities() {
            prios[usize::from(p)] = true;
        }
    }
    d.set_pfc(ifname, prios)?;
    d.set_pfc_state(ifname, pfc.is_some())?;
    // A driver without the PG setters dcbnl.c asks for (mlx5 has no receive ones):
    // PFC is committed all the same, and the PG's refusal reported after.
    let pg = match pg {
        Some(pg) => d.set_pg(
            ifname,
            &PgSetting {
                pgid: pg.pgid,
                percent: pg.percent,
            },
        ),
        None => Ok(()),
    };
    if !matches!(pg, Ok(()) | Err(DcbError::Unsupported { .. })) {
        return pg;
    }
    d.set_all(ifname)?;
    pg
}

/// Programs IEEE 802.1Qaz, each part in a request of its own so that one the driver
/// refuses (mlx5 takes DSCP APP entries only; ice answers success with a positive
/// status) neither hides nor blocks the others: each APP entry added, each of ours
/// withdrawn (one IEEE_DEL each), the trust order (a driver without a trust table is
/// an answer, not a failure), then ETS and PFC (keeping the delay allowance the
/// headroom set). Then reads back what the NIC holds.
pub(crate) fn program_ieee(dev: &mut DcbnlDevice, ifname: &str, p: &IeeeProgram) -> IeeeOutcome {
    let d = match dev.get() {
        Ok(d) => d,
        Err(e) => return IeeeOutcome::failed(p, &e),
    };
    // One IEEE_GET before, one after (each may cost a firmware command on mlx5):
    // what the kernel holds, whether the driver has a trust table, the delay to keep.
    let before = match d.get_ieee_state(ifname) {
        Ok(s) => s,
        Err(e) => return IeeeOutcome::failed(p, &convert::hardware_error(e)),
    };
    let part = |r: Result<(), DcbError>| r.map_err(convert::hardware_error);
    let each = |r: Result<lossless_sys::dcbnl::AppAnswers, DcbError>,
                asked: &[lossless_wire::ieee::AppPriority]| match r {
        Ok(list) => list
            .into_iter()
            .map(|(a, r)| (convert::app_priority(a), part(r)))
            .collect(),
        Err(e) => {
            let e = convert::hardware_error(e);
            asked.iter().map(|a| (*a, Err(e.clone()))).collect()
        }
    };
    let apps_added = each(
        d.add_ieee_apps_each(ifname, &convert::dcb_apps(&p.app_add), &before.apps),
        &p.app_add,
    );
    let apps_deleted = each(
        d.del_ieee_apps_each(ifname, &convert::dcb_apps(&p.app_del), &before.apps),
        &p.app_del,
    );
    let trust = match p.trust {
        None => Ok(TrustOutcome::Untouched),
        Some(trust) => {
            let order: &[AppSelector] = match trust {
                Trust::DscpThenPcp => &[AppSelector::DSCP, AppSelector::PCP],
                Trust::Pcp => &[AppSelector::PCP],
            };
            match d.set_app_trust_known(ifname, order, before.trust.is_some()) {
                Ok(()) => Ok(TrustOutcome::Set),
                Err(DcbError::NotReported { .. }) => Ok(TrustOutcome::Unsupported),
                Err(e) => Err(convert::hardware_error(e)),
            }
        }
    };
    // ETS and PFC last: ice switches a port to DSCP QoS at its first DSCP entry and
    // rewrites ETS and PFC then (`ice_dcbnl_setapp`: every class ETS, class 0 at
    // 100 %, the others at 0 %); sent after, ours is what the NIC runs.
    let ets = p
        .ets
        .as_ref()
        .map(|ets| part(d.set_ieee_ets(ifname, &convert::ieee_ets(ets))));
    // The delay allowance the headroom set is kept (a driver without ieee_getpfc
    // leaves it unknown: refused, as before).
    let pfc = part(match before.pfc {
        Some(pfc) => d.set_ieee_pfc(ifname, p.pfc_enabled, pfc.delay),
        None => Err(DcbError::NotReported {
            ifname: ifname.to_owned(),
            cmd: lossless_sys::dcbnl::DcbCmd::IeeeGet,
            what: "DCB_ATTR_IEEE_PFC",
            why: "it has no ieee_getpfc, so the delay to keep is unknown",
        }),
    });
    let nic = Some(read_nic(d, ifname));
    IeeeOutcome {
        ets,
        pfc,
        apps_added,
        apps_deleted,
        trust,
        nic,
    }
}

/// Tells the NIC the host runs DCBX in `want`'s version. A driver already in that
/// mode is not asked (ice answers a request for the mode it has with
/// ICE_DCB_NO_HW_CHG, a non-zero status); a non-zero answer is taken for a refusal
/// only when the mode read back is not the one asked for.
pub(crate) fn set_dcbx_mode(d: &mut Dcbnl, ifname: &str, want: DcbxMode) -> Result<(), DcbError> {
    if matches!(d.get_dcbx(ifname), Ok(m) if m == want) {
        return Ok(());
    }
    match d.set_dcbx(ifname, want) {
        Ok(()) => Ok(()),
        Err(e) => match d.get_dcbx(ifname) {
            Ok(m) if m == want => Ok(()),
            _ => Err(e),
        },
    }
}

/// CEE DCBX's objects as the driver holds them (`PFC_GCFG`, `PFC_GSTATE`,
/// `PGTX_GCFG`); None where the driver lacks those ops (bnxt_en, hns3).
pub(crate) fn read_cee(d: &mut Dcbnl, ifname: &str) -> Option<lossless_node::hardware::CeeNic> {
    let pfc = d.get_pfc(ifname).ok()?;
    let pfc_state = d.get_pfc_state(ifname).ok()?;
    let pg = d.get_pg_tx(ifname).ok().map(|pg| {
        let c = pg.to_cee();
        (c.pgid, c.percent)
    });
    let bits = pfc
        .iter()
        .enumerate()
        .fold(0u8, |m, (p, on)| if *on { m | (1 << p) } else { m });
    Some(lossless_node::hardware::CeeNic {
        pfc: bits,
        pfc_state,
        pg,
    })
}

/// What the NIC holds (`DCB_CMD_IEEE_GET`).
pub(crate) fn read_nic(d: &mut Dcbnl, ifname: &str) -> Result<NicState, HardwareError> {
    d.get_ieee_state(ifname)
        .map(convert::nic_state)
        .map_err(convert::hardware_error)
}

//! The order of the dcbnl requests for each of the node's NIC outputs, and what a
//! refusal in the middle means, through any [`DcbDevice`].

use lossless_dcbx::Version;
use lossless_wire::cee::{PfcConfig, PgConfig, PriorityMap};
use lossless_wire::ieee::{AppPriority, Selector};

use super::{
    DcbDevice, DeviceError, DeviceErrorKind, DCBX_HOST, DCBX_VER_CEE, DCBX_VER_IEEE, SELECTOR_PCP,
};
use crate::hardware::{
    CeeNic, DcbBuffer, HardwareError, IeeeOutcome, IeeeProgram, IeeeReadback, NicState, PartResult,
    Trust, TrustOutcome,
};

/// `Output::Probe`: whether the port's driver answers dcbnl at all.
/// `DCB_CMD_IEEE_GET`, not GSTATE: the kernel answers it for every driver with dcbnl
/// ops, and bnxt_en and hns3 have the IEEE ops without the CEE ones (GSTATE is
/// EOPNOTSUPP there, a NIC that takes IEEE 802.1Qaz all the same).
pub fn probe(dev: &mut impl DcbDevice, ifname: &str) -> Result<(), HardwareError> {
    dev.ieee_state(ifname)
        .map(|_| ())
        .map_err(HardwareError::from)
}

/// `Output::ProgramCee`: operational PFC and PG the way a CEE driver expects: DCB on,
/// per-priority PFC and its state, PG for both directions, then SET_ALL.
///
/// A driver without `setstate` (mlx5: DCB is always on there) answers EOPNOTSUPP;
/// its PFC and PG are set all the same. A driver without the PG setters dcbnl.c asks
/// for (mlx5 has no receive ones): PFC is committed all the same, and the PG's
/// refusal reported after.
pub fn program_cee(
    dev: &mut impl DcbDevice,
    ifname: &str,
    pfc: Option<&PfcConfig>,
    pg: Option<&PgConfig>,
) -> Result<(), HardwareError> {
    match dev.set_state(ifname, true) {
        Err(e) if e.kind == DeviceErrorKind::Unsupported => {}
        other => other?,
    }
    let priorities = pfc.map_or(PriorityMap::NONE, |p| p.priorities);
    dev.set_pfc(ifname, priorities)?;
    dev.set_pfc_state(ifname, pfc.is_some())?;
    let pg = match pg {
        Some(pg) => dev.set_pg(ifname, pg),
        None => Ok(()),
    };
    if let Err(e) = &pg {
        if e.kind != DeviceErrorKind::Unsupported {
            return Err(e.clone().into());
        }
    }
    dev.set_all(ifname)?;
    pg.map_err(HardwareError::from)
}

/// `Output::ProgramIeee`: IEEE 802.1Qaz, each part in a request of its own so that one
/// the driver refuses (mlx5 takes DSCP APP entries only; ice answers success with a
/// positive status) neither hides nor blocks the others: each APP entry added, each
/// of ours withdrawn (one IEEE_DEL each), the trust order (a driver without a trust
/// table is an answer, not a failure), then ETS and PFC (keeping the delay allowance
/// the headroom set). Then reads back what the NIC holds.
///
/// One IEEE_GET before, one after (each may cost a firmware command on mlx5): what
/// the kernel holds (entries it holds are not added again, entries it does not hold
/// are not deleted), whether the driver has a trust table, the delay to keep. A
/// failed IEEE_GET before fails every part with its error.
pub fn program_ieee(dev: &mut impl DcbDevice, ifname: &str, p: &IeeeProgram) -> IeeeOutcome {
    let before = match dev.ieee_state(ifname) {
        Ok(s) => s,
        Err(e) => return IeeeOutcome::failed(p, &e.into()),
    };
    let apps_added = each_app(dev, &p.app_add, |dev, app| {
        if before.apps.contains(app) {
            Ok(())
        } else {
            dev.add_app(ifname, app)
        }
    });
    let apps_deleted = each_app(dev, &p.app_del, |dev, app| {
        if before.apps.contains(app) {
            dev.del_app(ifname, app)
        } else {
            // Gone already, which was the aim.
            Ok(())
        }
    });
    let trust = match p.trust {
        None => Ok(TrustOutcome::Untouched),
        Some(_) if before.trust.is_none() => Ok(TrustOutcome::Unsupported),
        Some(trust) => match dev.set_app_trust(ifname, trust_order(trust)) {
            Ok(()) => Ok(TrustOutcome::Set),
            Err(e) if e.kind == DeviceErrorKind::NotReported => Ok(TrustOutcome::Unsupported),
            Err(e) => Err(e.into()),
        },
    };
    // ETS and PFC last: ice switches a port to DSCP QoS at its first DSCP entry and
    // rewrites ETS and PFC then (`ice_dcbnl_setapp`: every class ETS, class 0 at
    // 100 %, the others at 0 %); sent after, ours is what the NIC runs.
    let ets = p
        .ets
        .as_ref()
        .map(|ets| dev.set_ieee_ets(ifname, ets).map_err(HardwareError::from));
    // The delay allowance the headroom set is kept (a driver without ieee_getpfc
    // leaves it unknown: refused, as before).
    let pfc = match before.pfc {
        Some(pfc) => dev
            .set_ieee_pfc(ifname, p.pfc_enabled, pfc.delay)
            .map_err(HardwareError::from),
        None => Err(pfc_not_reported(ifname)),
    };
    let nic = Some(dev.ieee_state(ifname).map_err(HardwareError::from));
    IeeeOutcome {
        ets,
        pfc,
        apps_added,
        apps_deleted,
        trust,
        nic,
    }
}

/// The trust order, in the kernel's selector numbers.
fn trust_order(trust: Trust) -> &'static [u8] {
    const DSCP_THEN_PCP: [u8; 2] = [Selector::DSCP.0, SELECTOR_PCP];
    match trust {
        Trust::DscpThenPcp => &DSCP_THEN_PCP,
        Trust::Pcp => &[SELECTOR_PCP],
    }
}

/// PFC cannot be set keeping the delay when IEEE_GET did not say the delay.
fn pfc_not_reported(ifname: &str) -> HardwareError {
    DeviceError::new(
        DeviceErrorKind::NotReported,
        format!(
            "{ifname}: DCB_CMD_IEEE_GET: the driver does not report DCB_ATTR_IEEE_PFC: \
             it has no ieee_getpfc, so the delay to keep is unknown"
        ),
    )
    .into()
}

/// Runs `one` for each distinct entry of `apps`, each answered on its own; a list the
/// device cannot send at all fails every entry asked for.
fn each_app<D: DcbDevice>(
    dev: &mut D,
    apps: &[AppPriority],
    mut one: impl FnMut(&mut D, &AppPriority) -> Result<(), DeviceError>,
) -> Vec<(AppPriority, PartResult)> {
    if apps.is_empty() {
        return Vec::new();
    }
    if let Err(e) = dev.check_apps(apps) {
        let e = HardwareError::from(e);
        return apps.iter().map(|a| (*a, Err(e.clone()))).collect();
    }
    let mut out: Vec<(AppPriority, PartResult)> = Vec::new();
    for app in apps {
        if out.iter().any(|(a, _)| a == app) {
            continue;
        }
        let r = one(dev, app).map_err(HardwareError::from);
        out.push((*app, r));
    }
    out
}

/// `Output::SetDcbxMode`: tells the NIC the host runs DCBX in `version`. A driver
/// already in that mode is not asked (ice answers a request for the mode it has with
/// ICE_DCB_NO_HW_CHG, a non-zero status); a non-zero answer is taken for a refusal
/// only when the mode read back is not the one asked for.
pub fn set_dcbx_mode(
    dev: &mut impl DcbDevice,
    ifname: &str,
    version: Version,
) -> Result<(), HardwareError> {
    let want = DCBX_HOST
        | match version {
            Version::Ieee => DCBX_VER_IEEE,
            Version::Cee => DCBX_VER_CEE,
        };
    if matches!(dev.get_dcbx(ifname), Ok(m) if m == want) {
        return Ok(());
    }
    match dev.set_dcbx(ifname, want) {
        Ok(()) => Ok(()),
        Err(e) => match dev.get_dcbx(ifname) {
            Ok(m) if m == want => Ok(()),
            _ => Err(e.into()),
        },
    }
}

/// `Output::ReadNic`: what the NIC holds (`DCB_CMD_IEEE_GET`), with CEE's objects when
/// `cee` (None where the driver lacks those ops).
pub fn read_nic(
    dev: &mut impl DcbDevice,
    ifname: &str,
    cee: bool,
) -> Result<NicState, HardwareError> {
    let mut nic = dev.ieee_state(ifname)?;
    if cee {
        nic.cee = read_cee(dev, ifname);
    }
    Ok(nic)
}

/// CEE DCBX's objects as the driver holds them (`PFC_GCFG`, `PFC_GSTATE`,
/// `PGTX_GCFG`); None where the driver lacks those ops (bnxt_en, hns3).
fn read_cee(dev: &mut impl DcbDevice, ifname: &str) -> Option<CeeNic> {
    let pfc = dev.get_pfc(ifname).ok()?;
    let pfc_state = dev.get_pfc_state(ifname).ok()?;
    let pg = dev.get_pg_tx(ifname).ok();
    Some(CeeNic {
        pfc: pfc.0,
        pfc_state,
        pg,
    })
}

/// `Output::ApplyHeadroom`: IEEE PFC with the delay allowance, then, when asked (and
/// whatever the write answered), what the NIC holds for the headroom.
pub fn apply_headroom(
    dev: &mut impl DcbDevice,
    ifname: &str,
    pfc_enabled: u8,
    pfc_delay_bits: u16,
    read_buffer: bool,
) -> (
    Result<(), HardwareError>,
    Option<Result<IeeeReadback, HardwareError>>,
) {
    let written = dev
        .set_ieee_pfc(ifname, pfc_enabled, pfc_delay_bits)
        .map_err(HardwareError::from);
    let read = read_buffer.then(|| dev.ieee_readback(ifname).map_err(HardwareError::from));
    (written, read)
}

/// `Output::SetBuffer`: the DCB buffer, then what the NIC holds (a driver without
/// buffer ops drops the attribute without a word: the read-back tells).
pub fn write_buffer(
    dev: &mut impl DcbDevice,
    ifname: &str,
    buffer: &DcbBuffer,
) -> Result<IeeeReadback, HardwareError> {
    dev.set_buffer(ifname, buffer)?;
    Ok(dev.ieee_readback(ifname)?)
}

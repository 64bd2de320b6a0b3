//! A modelled NIC for the lab's nodes: answers the node core's dcbnl requests as a
//! driver would, and records what it was asked to program. It is a
//! [`DcbDevice`](lossless_node::dcb_device::DcbDevice), one dcbnl operation a method:
//! the lab carries out the node's NIC outputs through `lossless_node::dcb_device`'s
//! order, the one losslessd runs over its dcbnl socket.
//!
//! No NIC with a DCB buffer is at hand where the tests run, so the two kinds of driver
//! the daemon meets are modelled here: one with `dcbnl_getbuffer`/`dcbnl_setbuffer`
//! (takes the sizes it is given), and one with the IEEE ops but no buffer (no
//! `DCB_ATTR_DCB_BUFFER` in IEEE_GET). For IEEE 802.1Qaz it keeps ETS, PFC, the APP
//! table (whoever set its entries), the trust order and the DCBX mode. A node whose
//! port does not `apply = "dcbnl"` never asks.

use lossless_dcbx::{Instant, Version};
use lossless_node::dcb_device::{
    self, DcbDevice, DeviceError, DeviceErrorKind, DCBX_HOST, DCBX_VER_CEE, DCBX_VER_IEEE,
    SELECTOR_PCP,
};
use lossless_node::hardware::{
    DcbBuffer, EtsProgram, HardwareError, HardwareErrorKind, IeeeOutcome, IeeePfc, IeeeProgram,
    IeeeReadback, NicState, Trust,
};
use lossless_node::pfc::{Counter, PfcSample, RoceCounter, RoceSample, RoceValue};
use lossless_wire::cee::{PfcConfig, PgConfig, PriorityMap};
use lossless_wire::ieee::{AppPriority, Selector};
use std::collections::BTreeMap;

/// What kind of driver the node's port has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// No dcbnl at all (veth, most virtual NICs): the probe fails.
    NoDcbnl,
    /// dcbnl with IEEE PFC; `buffer`: the DCB buffer it exposes, if any.
    Dcbnl { buffer: Option<DcbBuffer> },
}

/// One node's NIC: its driver and what it was asked to do.
#[derive(Debug, Clone)]
pub struct Nic {
    pub driver: Driver,
    /// Every CEE programming, in order: (PFC, PG); None = feature off.
    pub cee: Vec<(Option<PfcConfig>, Option<PgConfig>)>,
    /// Every IEEE PFC write of the headroom the driver took: (enabled priorities, delay in
    /// bit times).
    pub pfc_sets: Vec<(u8, u16)>,
    /// Every DCB buffer write.
    pub buffer_sets: Vec<DcbBuffer>,
    /// The DCBX mode the host said it runs (SDCBX).
    pub dcbx_mode: Option<Version>,
    /// IEEE ETS as programmed.
    pub ets: Option<EtsProgram>,
    /// IEEE PFC priorities as programmed.
    pub ieee_pfc: Option<u8>,
    /// The NIC's APP table: whoever set each entry (a test may put some beforehand).
    pub apps: Vec<AppPriority>,
    /// Every APP entry deleted, one request each, in order.
    pub app_deletes: Vec<AppPriority>,
    /// The driver has a trust table (Linux 6.2+ drivers such as mlx5).
    pub has_trust: bool,
    /// The driver takes DSCP APP entries only (mlx5, ice, hns3).
    pub dscp_only: bool,
    /// When set, reading the NIC back (`DCB_CMD_IEEE_GET`) fails with this error.
    pub read_fails: Option<HardwareError>,
    pub trust: Option<Trust>,
    /// IEEE programming rounds the driver took (read first, not refused).
    pub ieee_programs: usize,
    /// When set, the driver refuses every set (CEE, IEEE, the headroom's PFC write, the
    /// DCBX mode; not the DCB buffer) with this error, as a driver that takes no value
    /// would: the probe and the read-backs still succeed.
    pub refuse: Option<HardwareError>,
    /// The host's RoCE settings beyond DCB (none exposed unless a scenario says).
    pub roce: crate::roce_host::RoceHostModel,
    /// The PFC frames the port receives and sends, per priority.
    pub pauses: Pauses,
    /// The driver's ethtool counters beside PFC's, per priority (the drops: mlx5's
    /// `rx_prio<N>_discards`, ...): reported once a scenario sets them.
    pub per_priority: Rising<(Counter, u8)>,
    /// The RDMA device's hw counters by the driver's names (`np_cnp_sent`, ...),
    /// reported with the PFC counters while [`Nic::roce`] has an RDMA device.
    pub hw_counters: Rising<String>,
    /// Every IEEE PFC value it was given (the negotiated program and the headroom's
    /// write alike), in order: bit p = priority p.
    pub pfc_history: Vec<u8>,
    /// IEEE PFC's delay allowance as the last write left it, in bit times.
    pfc_delay: u16,
    /// What the CEE sets gave the driver since its last SET_ALL: PFC per priority,
    /// PFC's state, the priority groups.
    cee_pending: (PriorityMap, bool, Option<PgConfig>),
}

/// PFC frames on the port, as rates a scenario sets (a stuck peer: a steady stream of
/// XOFF on one priority), counted up on the virtual clock as a driver's counters are.
#[derive(Debug, Clone, Default)]
pub struct Pauses {
    /// Frames per second received and sent, per priority.
    pub rx_rate: [f64; 8],
    pub tx_rate: [f64; 8],
    rx: [f64; 8],
    tx: [f64; 8],
    since: Instant,
}

impl Pauses {
    fn advance(&mut self, now: Instant) {
        let dt = (now - self.since).as_secs_f64();
        for p in 0..8 {
            self.rx[p] += self.rx_rate[p] * dt;
            self.tx[p] += self.tx_rate[p] * dt;
        }
        self.since = self.since.max(now);
    }

    /// From `now` on, the peer sends `rx` PFC frames per second on `priority` and we
    /// send `tx`.
    pub fn set(&mut self, now: Instant, priority: u8, rx: f64, tx: f64) {
        self.advance(now);
        self.rx_rate[usize::from(priority & 7)] = rx;
        self.tx_rate[usize::from(priority & 7)] = tx;
    }

    /// The counters at `now` (`requests` sent, `indications` received).
    pub fn read(&mut self, now: Instant) -> ([u64; 8], [u64; 8]) {
        self.advance(now);
        (self.tx.map(|v| v as u64), self.rx.map(|v| v as u64))
    }
}

/// Counters that rise at rates a scenario sets, on the virtual clock, as a driver's
/// do; a counter is reported from the first time it is set (at any rate, 0 too).
#[derive(Debug, Clone)]
pub struct Rising<K> {
    /// Per counter: (per second, value now).
    counters: BTreeMap<K, (f64, f64)>,
    since: Instant,
}

impl<K> Default for Rising<K> {
    fn default() -> Self {
        Rising {
            counters: BTreeMap::new(),
            since: Instant::default(),
        }
    }
}

impl<K: Ord + Clone> Rising<K> {
    fn advance(&mut self, now: Instant) {
        let dt = (now - self.since).as_secs_f64();
        for (rate, value) in self.counters.values_mut() {
            *value += *rate * dt;
        }
        self.since = self.since.max(now);
    }

    /// From `now` on, `key` rises by `per_second`.
    pub fn set(&mut self, now: Instant, key: K, per_second: f64) {
        self.advance(now);
        self.counters.entry(key).or_insert((0.0, 0.0)).0 = per_second;
    }

    /// Every counter at `now`.
    pub fn read(&mut self, now: Instant) -> Vec<(K, u64)> {
        self.advance(now);
        self.counters
            .iter()
            .map(|(k, (_, v))| (k.clone(), *v as u64))
            .collect()
    }
}

impl Nic {
    pub fn new(driver: Driver) -> Nic {
        Nic {
            driver,
            cee: Vec::new(),
            pfc_sets: Vec::new(),
            buffer_sets: Vec::new(),
            dcbx_mode: None,
            ets: None,
            ieee_pfc: None,
            apps: Vec::new(),
            app_deletes: Vec::new(),
            has_trust: true,
            dscp_only: false,
            read_fails: None,
            trust: None,
            ieee_programs: 0,
            refuse: None,
            roce: crate::roce_host::RoceHostModel::default(),
            pauses: Pauses::default(),
            per_priority: Rising::default(),
            hw_counters: Rising::default(),
            pfc_history: Vec::new(),
            pfc_delay: 0,
            cee_pending: (PriorityMap::NONE, false, None),
        }
    }

    /// `Output::ProgramIeee` through the daemon's order
    /// (`lossless_node::dcb_device::program_ieee`): each new APP entry (those present
    /// are left), one IEEE_DEL per entry withdrawn (an absent one is gone already), the
    /// trust order, ETS and PFC, each answered on its own, then what the NIC holds. A
    /// driver set to `refuse` refuses every part; `dscp_only` refuses every APP entry
    /// but DSCP with `EINVAL`, as mlx5's `mlx5e_dcbnl_ieee_setapp` does.
    pub fn program_ieee(&mut self, ifname: &str, p: &IeeeProgram) -> IeeeOutcome {
        let out = dcb_device::program_ieee(self, ifname, p);
        if out.nic.is_some() && self.refuse.is_none() {
            self.ieee_programs += 1;
        }
        out
    }

    /// `DCB_CMD_IEEE_GET` as a read-back: what the NIC holds.
    pub fn state(&self) -> Result<NicState, HardwareError> {
        self.probe()?;
        if let Some(e) = &self.read_fails {
            return Err(e.clone());
        }
        Ok(NicState {
            ets: self.ets.map(|e| e.table),
            pfc: Some(IeeePfc {
                cap: 8,
                enabled: self.ieee_pfc.unwrap_or(0),
                delay: self.pfc_delay,
                ..IeeePfc::default()
            }),
            apps: self.apps.clone(),
            trust: self.has_trust.then(|| match self.trust {
                Some(Trust::DscpThenPcp) => vec![Selector::DSCP.0, SELECTOR_PCP],
                _ => vec![SELECTOR_PCP],
            }),
            buffer: match self.driver {
                Driver::Dcbnl { buffer } => buffer,
                Driver::NoDcbnl => None,
            },
            dcbx: None,
            cee: None,
        })
    }

    /// The answer to the dcbnl probe.
    pub fn probe(&self) -> Result<(), HardwareError> {
        match self.driver {
            Driver::NoDcbnl => Err(HardwareError::new(
                HardwareErrorKind::NotSupported,
                "the driver does not support DCB netlink (EOPNOTSUPP)",
            )),
            Driver::Dcbnl { .. } => Ok(()),
        }
    }

    /// The error a driver set to refuse answers with.
    fn refused(&self) -> Result<(), HardwareError> {
        match &self.refuse {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// `DCB_CMD_IEEE_GET`.
    pub fn read(&self) -> Result<IeeeReadback, HardwareError> {
        self.probe()?;
        Ok(IeeeReadback {
            pfc: Some(IeeePfc {
                cap: 8,
                enabled: self.ieee_pfc.unwrap_or(0),
                delay: self.pfc_delay,
                ..IeeePfc::default()
            }),
            buffer: match self.driver {
                Driver::Dcbnl { buffer } => buffer,
                Driver::NoDcbnl => None,
            },
        })
    }

    /// `Output::ApplyHeadroom` through the daemon's order: IEEE PFC with the delay
    /// allowance (recorded in [`Nic::pfc_sets`]), then the read-back when asked.
    pub fn apply_headroom(
        &mut self,
        ifname: &str,
        enabled: u8,
        delay: u16,
        read_buffer: bool,
    ) -> (
        Result<(), HardwareError>,
        Option<Result<IeeeReadback, HardwareError>>,
    ) {
        let (written, read) = dcb_device::apply_headroom(self, ifname, enabled, delay, read_buffer);
        if written.is_ok() {
            self.pfc_sets.push((enabled, delay));
        }
        (written, read)
    }

    /// The probe's answer, or the error a driver set to refuse answers a set with.
    fn settable(&self) -> Result<(), DeviceError> {
        self.probe()
            .and_then(|()| self.refused())
            .map_err(|e| DeviceError::from_hardware(&e))
    }

    /// The last CEE programming, or the answer of a driver that had none.
    fn cee_last(&self) -> Result<&(Option<PfcConfig>, Option<PgConfig>), DeviceError> {
        self.probe().map_err(|e| DeviceError::from_hardware(&e))?;
        self.cee.last().ok_or_else(|| {
            DeviceError::new(
                DeviceErrorKind::Unsupported,
                "no CEE programming to read back",
            )
        })
    }

    /// `DCB_CMD_IEEE_GET`'s PFC counters at `now`, the ethtool counters a scenario
    /// set, and the RDMA device's hw counters (those losslessd follows) where the NIC
    /// has one.
    pub fn read_pfc(&mut self, now: Instant) -> Result<PfcSample, HardwareError> {
        self.probe()?;
        let (requests, indications) = self.pauses.read(now);
        let mut sample = PfcSample::dcbnl(requests, indications);
        for ((c, p), v) in self.per_priority.read(now) {
            sample.set(c, p, Some(v));
        }
        sample.roce = self.roce.rdma.as_ref().map(|r| RoceSample {
            device: r.device.clone(),
            port: r.port,
            values: self
                .hw_counters
                .read(now)
                .into_iter()
                .filter_map(|(name, value)| {
                    Some(RoceValue {
                        counter: RoceCounter::of(&name)?,
                        name,
                        value,
                    })
                })
                .collect(),
            error: None,
        });
        Ok(sample)
    }
}

/// The modelled driver's dcbnl operations: a driver with no dcbnl fails each as the
/// probe does; one set to `refuse` refuses every set but the headroom's buffer.
impl DcbDevice for Nic {
    fn ieee_state(&mut self, _: &str) -> Result<NicState, DeviceError> {
        self.state().map_err(|e| DeviceError::from_hardware(&e))
    }

    fn ieee_readback(&mut self, _: &str) -> Result<IeeeReadback, DeviceError> {
        self.read().map_err(|e| DeviceError::from_hardware(&e))
    }

    fn set_ieee_ets(&mut self, _: &str, ets: &EtsProgram) -> Result<(), DeviceError> {
        self.settable()?;
        self.ets = Some(*ets);
        Ok(())
    }

    fn set_ieee_pfc(&mut self, _: &str, enabled: u8, delay: u16) -> Result<(), DeviceError> {
        self.settable()?;
        self.ieee_pfc = Some(enabled);
        self.pfc_delay = delay;
        self.pfc_history.push(enabled);
        Ok(())
    }

    fn add_app(&mut self, _: &str, app: &AppPriority) -> Result<(), DeviceError> {
        self.settable()?;
        if self.dscp_only && app.selector != Selector::DSCP {
            return Err(DeviceError::new(
                DeviceErrorKind::Refused,
                "IEEE_SET: the driver refused (status 234 = -EINVAL)",
            )
            .with_code("EINVAL"));
        }
        if !self.apps.contains(app) {
            self.apps.push(*app);
        }
        Ok(())
    }

    fn del_app(&mut self, _: &str, app: &AppPriority) -> Result<(), DeviceError> {
        self.settable()?;
        if let Some(i) = self.apps.iter().position(|a| a == app) {
            self.apps.remove(i);
            self.app_deletes.push(*app);
        }
        Ok(())
    }

    fn set_app_trust(&mut self, _: &str, order: &[u8]) -> Result<(), DeviceError> {
        self.settable()?;
        if !self.has_trust {
            return Err(DeviceError::new(
                DeviceErrorKind::NotReported,
                "the driver has no selector trust table",
            ));
        }
        self.trust = Some(if order.first() == Some(&Selector::DSCP.0) {
            Trust::DscpThenPcp
        } else {
            Trust::Pcp
        });
        Ok(())
    }

    /// A driver with buffer ops takes the sizes (and keeps its total); one without
    /// drops the attribute silently, as the kernel does.
    fn set_buffer(&mut self, _: &str, want: &DcbBuffer) -> Result<(), DeviceError> {
        self.probe().map_err(|e| DeviceError::from_hardware(&e))?;
        self.buffer_sets.push(*want);
        if let Driver::Dcbnl {
            buffer: Some(have), ..
        } = &mut self.driver
        {
            have.buffer_size = want.buffer_size;
            have.prio2buffer = want.prio2buffer;
        }
        Ok(())
    }

    fn get_dcbx(&mut self, _: &str) -> Result<u8, DeviceError> {
        self.probe().map_err(|e| DeviceError::from_hardware(&e))?;
        Ok(match self.dcbx_mode {
            Some(Version::Ieee) => DCBX_HOST | DCBX_VER_IEEE,
            Some(Version::Cee) => DCBX_HOST | DCBX_VER_CEE,
            None => 0,
        })
    }

    fn set_dcbx(&mut self, _: &str, mode: u8) -> Result<(), DeviceError> {
        self.settable()?;
        self.dcbx_mode = if mode & DCBX_VER_IEEE != 0 {
            Some(Version::Ieee)
        } else if mode & DCBX_VER_CEE != 0 {
            Some(Version::Cee)
        } else {
            None
        };
        Ok(())
    }

    fn set_state(&mut self, _: &str, _on: bool) -> Result<(), DeviceError> {
        self.settable()
    }

    fn set_pfc(&mut self, _: &str, priorities: PriorityMap) -> Result<(), DeviceError> {
        self.settable()?;
        self.cee_pending.0 = priorities;
        Ok(())
    }

    fn set_pfc_state(&mut self, _: &str, on: bool) -> Result<(), DeviceError> {
        self.settable()?;
        self.cee_pending.1 = on;
        Ok(())
    }

    fn set_pg(&mut self, _: &str, pg: &PgConfig) -> Result<(), DeviceError> {
        self.settable()?;
        self.cee_pending.2 = Some(*pg);
        Ok(())
    }

    /// Commits what the sets gave it as one CEE programming ([`Nic::cee`]).
    fn set_all(&mut self, _: &str) -> Result<(), DeviceError> {
        self.settable()?;
        let (priorities, on, pg) =
            std::mem::replace(&mut self.cee_pending, (PriorityMap::NONE, false, None));
        let pfc = on.then_some(PfcConfig {
            priorities,
            ..PfcConfig::default()
        });
        self.cee.push((pfc, pg));
        Ok(())
    }

    fn get_pfc(&mut self, _: &str) -> Result<PriorityMap, DeviceError> {
        Ok(self
            .cee_last()?
            .0
            .map_or(PriorityMap::NONE, |p| p.priorities))
    }

    fn get_pfc_state(&mut self, _: &str) -> Result<bool, DeviceError> {
        Ok(self.cee_last()?.0.is_some())
    }

    fn get_pg_tx(&mut self, _: &str) -> Result<([u8; 8], [u8; 8]), DeviceError> {
        match self.cee_last()?.1 {
            Some(g) => Ok((g.pgid, g.percent)),
            None => Err(DeviceError::new(
                DeviceErrorKind::Unsupported,
                "no priority groups programmed",
            )),
        }
    }
}

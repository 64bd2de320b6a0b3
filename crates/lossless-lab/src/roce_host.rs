//! The lab's model of a host's RoCE settings beyond DCB (what losslessd reads and
//! writes under `--sysfs` and through ethtool): RDMA CM's default ToS and RoCE mode,
//! the verbs traffic class, ECN per priority, the CNP's marking, 802.3x pause and the
//! firmware LLDP agent. A node's NIC has no RDMA device unless a scenario gives it
//! one ([`RoceHostModel::connectx`]); a setting the model does not expose answers as
//! the daemon's runtime does where the file is absent.

use std::collections::BTreeMap;

use lossless_node::config::{RoceMode, RoceSetting};
use lossless_node::hardware::HardwareError;
use lossless_node::roce::{FwAgent, HostRoce, Pause, RdmaPort, Reading, WriteOutcome};
use lossless_wire::cee::PriorityMap;

/// A host's RoCE settings, as a driver holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoceHostModel {
    pub driver: String,
    /// The RDMA device (None: the settings of RDMA CM and ECN are not exposed).
    pub rdma: Option<RdmaPort>,
    /// configfs's `rdma_cm` is there (configfs mounted, rdma_cm loaded): RDMA CM's
    /// defaults can be read and set.
    pub rdma_cm: bool,
    pub tos: u8,
    pub roce_mode: RoceMode,
    /// None: the driver has no verbs traffic class file (inbox mlx5_ib).
    pub traffic_class: Option<u8>,
    /// None: no per-priority ECN files (inbox mlx5 without MLNX_OFED).
    pub ecn_rp: Option<PriorityMap>,
    pub ecn_np: Option<PriorityMap>,
    pub cnp_dscp: Option<u8>,
    pub cnp_priority: Option<u8>,
    /// None: the driver has no pause settings (veth).
    pub pause: Option<Pause>,
    pub fw_agent: Option<FwAgent>,
    /// Settings the driver refuses, with its answer.
    pub refuse: BTreeMap<&'static str, HardwareError>,
    /// Every write taken, in order.
    pub writes: Vec<RoceSetting>,
}

impl Default for RoceHostModel {
    /// A NIC without RDMA and without pause settings: nothing exposed.
    fn default() -> Self {
        RoceHostModel {
            driver: "veth".into(),
            rdma: None,
            rdma_cm: false,
            tos: 0,
            roce_mode: RoceMode::V1,
            traffic_class: None,
            ecn_rp: None,
            ecn_np: None,
            cnp_dscp: None,
            cnp_priority: None,
            pause: None,
            fw_agent: None,
            refuse: BTreeMap::new(),
            writes: Vec::new(),
        }
    }
}

impl RoceHostModel {
    /// A ConnectX port with NVIDIA's driver package (its ECN files), at power-on:
    /// RDMA CM's ToS 0 and RoCE v1 (the first GID type the device supports), ECN on
    /// at every priority, CNPs with DSCP 48 on priority 6, link pause on.
    pub fn connectx(device: &str) -> RoceHostModel {
        RoceHostModel {
            driver: "mlx5_core".into(),
            rdma: Some(RdmaPort {
                device: device.into(),
                port: 1,
            }),
            rdma_cm: true,
            tos: 0,
            roce_mode: RoceMode::V1,
            traffic_class: Some(0),
            ecn_rp: Some(PriorityMap(0xff)),
            ecn_np: Some(PriorityMap(0xff)),
            cnp_dscp: Some(48),
            cnp_priority: Some(6),
            pause: Some(Pause {
                autoneg: false,
                rx: true,
                tx: true,
            }),
            fw_agent: None,
            refuse: BTreeMap::new(),
            writes: Vec::new(),
        }
    }

    /// Writes each setting (the refused ones answer with their error), then reads.
    pub fn write_and_read(&mut self, write: &[RoceSetting]) -> (HostRoce, Vec<WriteOutcome>) {
        let outcomes = write
            .iter()
            .map(|s| WriteOutcome {
                setting: *s,
                result: self.write(s),
            })
            .collect();
        (self.read(), outcomes)
    }

    fn write(&mut self, s: &RoceSetting) -> Result<(), HardwareError> {
        if let Some(e) = self.refuse.get(s.key()) {
            return Err(e.clone());
        }
        let absent = || HardwareError {
            kind: lossless_node::hardware::HardwareErrorKind::NotSupported,
            message: format!("roce.{}: not exposed by the lab's NIC", s.key()),
            code: Some("ENOENT".into()),
        };
        let rdma = self.rdma.is_some() && self.rdma_cm;
        match *s {
            RoceSetting::Tos(v) if rdma => self.tos = v,
            RoceSetting::RoceMode(m) if rdma => self.roce_mode = m,
            RoceSetting::TrafficClass(v) => *self.traffic_class.as_mut().ok_or_else(absent)? = v,
            RoceSetting::EcnRp(p) => *self.ecn_rp.as_mut().ok_or_else(absent)? = p,
            RoceSetting::EcnNp(p) => *self.ecn_np.as_mut().ok_or_else(absent)? = p,
            RoceSetting::CnpDscp(v) => *self.cnp_dscp.as_mut().ok_or_else(absent)? = v,
            RoceSetting::CnpPriority(v) => *self.cnp_priority.as_mut().ok_or_else(absent)? = v,
            RoceSetting::GlobalPause(on) => {
                let p = self.pause.as_mut().ok_or_else(absent)?;
                p.rx = on;
                p.tx = on;
            }
            RoceSetting::FwLldpAgent(on) => self.fw_agent.as_mut().ok_or_else(absent)?.on = on,
            RoceSetting::Tos(_) | RoceSetting::RoceMode(_) => return Err(absent()),
        }
        self.writes.push(*s);
        Ok(())
    }

    /// What the daemon's runtime would read.
    pub fn read(&self) -> HostRoce {
        fn opt<T: Clone>(v: &Option<T>, why: &str) -> Reading<T> {
            match v {
                Some(v) => Reading::Value(v.clone()),
                None => Reading::NotExposed(why.into()),
            }
        }
        let no_rdma = if self.rdma.is_some() {
            "no rdma_cm in configfs (not mounted, or rdma_cm not loaded)"
        } else {
            "no RDMA device"
        };
        let rdma = self.rdma.is_some() && self.rdma_cm;
        HostRoce {
            driver: Some(self.driver.clone()),
            rdma: self.rdma.clone(),
            tos: opt(&rdma.then_some(self.tos), no_rdma),
            roce_mode: opt(&rdma.then_some(self.roce_mode), no_rdma),
            traffic_class: opt(&self.traffic_class, "no verbs traffic class file"),
            ecn_rp: opt(&self.ecn_rp, "no per-priority ECN files"),
            ecn_np: opt(&self.ecn_np, "no per-priority ECN files"),
            cnp_dscp: opt(&self.cnp_dscp, "no CNP DSCP file"),
            cnp_priority: opt(&self.cnp_priority, "no CNP priority file"),
            pause: opt(&self.pause, "the driver has no pause settings (EOPNOTSUPP)"),
            fw_agent: Reading::Value(self.fw_agent.clone()),
        }
    }
}

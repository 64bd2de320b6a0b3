//! Where the kernel keeps each setting, under the root: the layout of sysfs,
//! configfs (`kernel/config`) and debugfs (`kernel/debug`).

use std::path::{Path, PathBuf};

use lossless_node::config::RoceMode;
use lossless_node::hardware::HardwareError;
use lossless_node::roce::{RdmaPort, Reading};
use lossless_wire::cee::PriorityMap;

use crate::files;

/// The sysfs root (`/sys`), with configfs and debugfs under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    pub path: PathBuf,
}

/// The two CNP settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cnp {
    Dscp,
    Priority,
}

impl SysRoot {
    pub fn new(path: impl Into<PathBuf>) -> SysRoot {
        SysRoot { path: path.into() }
    }

    /// `class/net/IF`.
    pub fn net(&self, ifname: &str) -> PathBuf {
        self.path.join("class/net").join(ifname)
    }

    /// The RDMA device of a netdev (the entry under `class/net/IF/device/infiniband/`)
    /// and its port: the one whose `gid_attrs/ndevs/0` names the netdev, else the only
    /// one, else 1.
    pub fn rdma_port(&self, ifname: &str) -> Option<RdmaPort> {
        let dir = self.net(ifname).join("device/infiniband");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let device = names.into_iter().next()?;
        let ports_dir = self.ib(&device).join("ports");
        let mut ports: Vec<u32> = std::fs::read_dir(&ports_dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        ports.sort_unstable();
        let named = ports.iter().copied().find(|p| {
            let ndev = ports_dir.join(format!("{p}/gid_attrs/ndevs/0"));
            matches!(files::read_text(&ndev), Some(Ok(t)) if t == ifname)
        });
        let port = named
            .or_else(|| (ports.len() == 1).then(|| ports[0]))
            .unwrap_or(1);
        Some(RdmaPort { device, port })
    }

    /// `class/infiniband/DEV`.
    pub fn ib(&self, device: &str) -> PathBuf {
        self.path.join("class/infiniband").join(device)
    }

    /// mlx5_ib's `class/infiniband/DEV/tc/PORT/traffic_class`.
    pub fn traffic_class(&self, p: &RdmaPort) -> PathBuf {
        self.ib(&p.device)
            .join(format!("tc/{}/traffic_class", p.port))
    }

    /// The RDMA hw counters: `class/infiniband/DEV/ports/PORT/hw_counters`.
    pub fn hw_counters(&self, p: &RdmaPort) -> PathBuf {
        self.ib(&p.device)
            .join(format!("ports/{}/hw_counters", p.port))
    }

    /// configfs's `rdma_cm` (present when configfs is mounted and rdma_cm loaded).
    pub fn rdma_cm_root(&self) -> PathBuf {
        self.path.join("kernel/config/rdma_cm")
    }

    /// The device's rdma_cm group (made by mkdir).
    pub fn rdma_cm_group(&self, device: &str) -> PathBuf {
        self.rdma_cm_root().join(device)
    }

    fn rdma_cm_file(&self, p: &RdmaPort, name: &str) -> PathBuf {
        self.rdma_cm_group(&p.device)
            .join(format!("ports/{}/{name}", p.port))
    }

    /// RDMA CM's default ToS and RoCE mode, from the device's configfs group; without
    /// one, the kernel's defaults.
    pub fn rdma_cm(&self, p: &RdmaPort) -> (Reading<u8>, Reading<RoceMode>) {
        if !self.rdma_cm_root().is_dir() {
            let why = format!(
                "{} does not exist: configfs is not mounted there, or rdma_cm is not loaded",
                self.rdma_cm_root().display()
            );
            return (Reading::NotExposed(why.clone()), Reading::NotExposed(why));
        }
        if !self.rdma_cm_group(&p.device).is_dir() {
            // No group: RDMA CM runs the device's defaults, ToS 0 and RoCE v2 where the
            // port supports it, else its first GID type (cma.c cma_add_one), which the
            // port's default GID types show.
            let types = self.gid_types(p);
            let mode = if types.contains(&RoceMode::V2) {
                Reading::Value(RoceMode::V2)
            } else if let Some(m) = types.first() {
                Reading::Value(*m)
            } else {
                Reading::NotExposed(format!(
                    "no rdma_cm group for {} and no GID types under {}",
                    p.device,
                    self.ib(&p.device)
                        .join(format!("ports/{}/gid_attrs/types", p.port))
                        .display()
                ))
            };
            return (Reading::Value(0), mode);
        }
        let tos_path = self.rdma_cm_file(p, "default_roce_tos");
        let mode_path = self.rdma_cm_file(p, "default_roce_mode");
        let missing = |path: &Path| format!("{} does not exist", path.display());
        let tos = files::read_u8_at(&tos_path, "a ToS")
            .unwrap_or_else(|| Reading::NotExposed(missing(&tos_path)));
        let mode = crate::roce_mode(&mode_path)
            .unwrap_or_else(|| Reading::NotExposed(missing(&mode_path)));
        (tos, mode)
    }

    /// The GID types the port's GID table holds (`gid_attrs/types/N`).
    pub fn gid_types(&self, p: &RdmaPort) -> Vec<RoceMode> {
        let dir = self
            .ib(&p.device)
            .join(format!("ports/{}/gid_attrs/types", p.port));
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if let Some(Ok(t)) = files::read_text(&e.path()) {
                if let Some(m) = RoceMode::from_kernel(&t) {
                    if !out.contains(&m) {
                        out.push(m);
                    }
                }
            }
        }
        out
    }

    /// Writes one file of the device's rdma_cm group, making the group first (as
    /// `cma_roce_tos` does) when it is not there.
    pub fn write_rdma_cm(
        &self,
        p: &RdmaPort,
        name: &str,
        value: &str,
    ) -> Result<(), HardwareError> {
        let root = self.rdma_cm_root();
        if !root.is_dir() {
            return Err(files::not_exposed(format!(
                "{} does not exist: mount configfs (mount -t configfs none {}) and load \
                 rdma_cm (modprobe rdma_cm)",
                root.display(),
                self.path.join("kernel/config").display()
            )));
        }
        let group = self.rdma_cm_group(&p.device);
        if !group.is_dir() {
            std::fs::create_dir(&group)
                .map_err(|e| files::io_error("making the rdma_cm group", &group, &e))?;
        }
        files::write(&self.rdma_cm_file(p, name), value)
    }

    /// NVIDIA's driver package's `class/net/IF/ecn/`.
    fn ecn_dir(&self, ifname: &str) -> PathBuf {
        self.net(ifname).join("ecn")
    }

    /// ECN at the reaction and notification points per priority, and the CNP's DSCP
    /// and 802.1p priority: NVIDIA's driver package's `ecn/` files, else inbox mlx5's
    /// debugfs `cc_params` for the CNP (it has no per-priority ECN switch).
    pub fn ecn(
        &self,
        ifname: &str,
    ) -> (
        Reading<PriorityMap>,
        Reading<PriorityMap>,
        Reading<u8>,
        Reading<u8>,
    ) {
        let ecn = self.ecn_dir(ifname);
        let none = |what: &str| {
            format!(
                "no {what}: {} does not exist (NVIDIA's driver package, MLNX_OFED or \
                 DOCA-OFED, adds it to ConnectX ports)",
                ecn.display()
            )
        };
        let rp = crate::priority_files(&ecn.join("roce_rp/enable"))
            .unwrap_or_else(|| Reading::NotExposed(none("per-priority ECN reaction point")));
        let np = crate::priority_files(&ecn.join("roce_np/enable"))
            .unwrap_or_else(|| Reading::NotExposed(none("per-priority ECN notification point")));
        let mut dscp = files::read_u8_at(&ecn.join("roce_np/cnp_dscp"), "a DSCP");
        let mut prio = files::read_u8_at(&ecn.join("roce_np/cnp_802p_prio"), "a priority");
        if dscp.is_none() || prio.is_none() {
            if let Some(cc) = self.cc_params(ifname) {
                dscp = dscp.or_else(|| files::read_u8_at(&cc.join("np_cnp_dscp"), "a DSCP"));
                prio = prio.or_else(|| files::read_u8_at(&cc.join("np_cnp_prio"), "a priority"));
            }
        }
        (
            rp,
            np,
            dscp.unwrap_or_else(|| Reading::NotExposed(none("CNP DSCP"))),
            prio.unwrap_or_else(|| Reading::NotExposed(none("CNP priority"))),
        )
    }

    /// Inbox mlx5's debugfs `mlx5/PCI/cc_params`, when it is there.
    pub fn cc_params(&self, ifname: &str) -> Option<PathBuf> {
        let pci = std::fs::read_link(self.net(ifname).join("device")).ok()?;
        let pci = pci.file_name()?.to_string_lossy().into_owned();
        let dir = self
            .path
            .join("kernel/debug/mlx5")
            .join(pci)
            .join("cc_params");
        dir.is_dir().then_some(dir)
    }

    /// Sets ECN on exactly `want`: one write per priority that differs.
    pub fn write_ecn(
        &self,
        ifname: &str,
        point: &str,
        want: PriorityMap,
    ) -> Result<(), HardwareError> {
        let dir = self.ecn_dir(ifname).join(point).join("enable");
        let held = match crate::priority_files(&dir) {
            Some(Reading::Value(m)) => m,
            Some(Reading::Failed(e)) => {
                return Err(HardwareError {
                    kind: lossless_node::hardware::HardwareErrorKind::Other,
                    message: e,
                    code: None,
                })
            }
            _ => {
                return Err(files::not_exposed(format!(
                    "{} does not exist: per-priority ECN needs NVIDIA's driver package \
                     (MLNX_OFED or DOCA-OFED)",
                    dir.display()
                )))
            }
        };
        for p in 0..8u8 {
            let on = want.0 & (1 << p) != 0;
            if (held.0 & (1 << p) != 0) != on {
                files::write(&dir.join(p.to_string()), if on { "1" } else { "0" })?;
            }
        }
        Ok(())
    }

    /// Writes the CNP's DSCP or priority where the driver keeps it.
    pub fn write_cnp(&self, ifname: &str, which: Cnp, v: u8) -> Result<(), HardwareError> {
        let (ofed, inbox) = match which {
            Cnp::Dscp => ("roce_np/cnp_dscp", "np_cnp_dscp"),
            Cnp::Priority => ("roce_np/cnp_802p_prio", "np_cnp_prio"),
        };
        let path = self.ecn_dir(ifname).join(ofed);
        if path.exists() {
            return files::write(&path, &v.to_string());
        }
        if let Some(cc) = self.cc_params(ifname) {
            return files::write(&cc.join(inbox), &v.to_string());
        }
        Err(files::not_exposed(format!(
            "{} does not exist, nor inbox mlx5's debugfs cc_params: the driver does not \
             expose the CNP's marking",
            path.display()
        )))
    }
}

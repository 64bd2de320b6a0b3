//! The host's RoCE settings beyond DCB, where the kernel keeps them: RDMA CM's
//! default ToS and RoCE mode in configfs, the verbs traffic class and the RDMA hw
//! counters in sysfs, ECN per priority and the CNP's marking in the files NVIDIA's
//! driver package adds (or inbox mlx5's debugfs `cc_params`), 802.3x pause and the
//! firmware LLDP agent through ethtool.
//!
//! Every file is read and written under a root ([`SysRoot`], `/sys` unless told, as
//! node_exporter's `--path.sysfs`): configfs at `ROOT/kernel/config`, debugfs at
//! `ROOT/kernel/debug`, so a container that mounts the host's /sys elsewhere, and the
//! tests, use the same code. A file is written whole in one `write(2)` and never
//! created (`O_CREAT` is not asked: a missing attribute is the driver not exposing
//! it). losslessd and `lossless doctor` share this crate.

mod ethtool;
mod files;
pub mod parse;
mod paths;

use std::path::{Path, PathBuf};

use lossless_node::config::{RoceMode, RoceSetting};
use lossless_node::hardware::HardwareError;
use lossless_node::roce::{HostRoce, Reading, WriteOutcome};
use lossless_wire::cee::PriorityMap;

pub use ethtool::LinkSettings;
pub use files::io_error;
pub use paths::SysRoot;

/// Reads and writes one host's RoCE settings.
pub struct Host {
    pub root: SysRoot,
    pub link: LinkSettings,
}

impl Host {
    /// The host under `root` (`/sys` on a host, the host's /sys mounted elsewhere in
    /// a container, a laid tree in tests).
    pub fn new(root: impl Into<PathBuf>) -> Host {
        Host {
            root: SysRoot::new(root),
            link: LinkSettings::open(),
        }
    }

    /// Writes each setting in its own request (one refused does not stop the rest),
    /// then reads everything.
    pub fn write_and_read(
        &mut self,
        ifname: &str,
        write: &[RoceSetting],
    ) -> (HostRoce, Vec<WriteOutcome>) {
        let outcomes = write
            .iter()
            .map(|s| WriteOutcome {
                setting: *s,
                result: self.write(ifname, s),
            })
            .collect();
        (self.read(ifname), outcomes)
    }

    /// What the host holds for `ifname`.
    pub fn read(&mut self, ifname: &str) -> HostRoce {
        let rdma = self.root.rdma_port(ifname);
        let r = &self.root;
        let (tos, roce_mode) = match &rdma {
            Some(p) => r.rdma_cm(p),
            None => (no_rdma(), no_rdma()),
        };
        let traffic_class = match &rdma {
            Some(p) => traffic_class(&r.traffic_class(p)),
            None => no_rdma(),
        };
        let (ecn_rp, ecn_np, cnp_dscp, cnp_priority) = r.ecn(ifname);
        HostRoce {
            driver: self.link.driver(ifname),
            rdma,
            tos,
            roce_mode,
            traffic_class,
            ecn_rp,
            ecn_np,
            cnp_dscp,
            cnp_priority,
            pause: self.link.pause(ifname),
            fw_agent: self.link.fw_agent(ifname),
        }
    }

    /// Writes one setting.
    pub fn write(&mut self, ifname: &str, s: &RoceSetting) -> Result<(), HardwareError> {
        let r = &self.root;
        let rdma = || {
            r.rdma_port(ifname).ok_or_else(|| {
                files::not_exposed(format!(
                    "{ifname} has no RDMA device ({} is empty or absent)",
                    r.net(ifname).join("device/infiniband").display()
                ))
            })
        };
        match *s {
            RoceSetting::Tos(v) => {
                let p = rdma()?;
                r.write_rdma_cm(&p, "default_roce_tos", &v.to_string())
            }
            RoceSetting::RoceMode(m) => {
                let p = rdma()?;
                r.write_rdma_cm(&p, "default_roce_mode", m.kernel_name())
            }
            RoceSetting::TrafficClass(v) => {
                let p = rdma()?;
                files::write(&r.traffic_class(&p), &v.to_string())
            }
            RoceSetting::EcnRp(want) => r.write_ecn(ifname, "roce_rp", want),
            RoceSetting::EcnNp(want) => r.write_ecn(ifname, "roce_np", want),
            RoceSetting::CnpDscp(v) => r.write_cnp(ifname, paths::Cnp::Dscp, v),
            RoceSetting::CnpPriority(v) => r.write_cnp(ifname, paths::Cnp::Priority, v),
            RoceSetting::GlobalPause(on) => self.link.set_pause(ifname, on),
            RoceSetting::FwLldpAgent(on) => self.link.set_fw_agent(ifname, on),
        }
    }
}

fn no_rdma<T>() -> Reading<T> {
    Reading::NotExposed("no RDMA device".into())
}

/// mlx5_ib's (NVIDIA's driver package) `tc/N/traffic_class`: empty while unset (the
/// applications' own traffic class, 0 unless they set one), `Global tclass=N` once set.
fn traffic_class(path: &Path) -> Reading<u8> {
    match files::read_text(path) {
        None => Reading::NotExposed(format!(
            "{} does not exist (mlx5_ib of NVIDIA's driver package has it; the inbox driver \
             does not)",
            path.display()
        )),
        Some(Err(e)) => Reading::Failed(e.to_string()),
        Some(Ok(t)) => match parse::traffic_class(&t) {
            Ok(v) => Reading::Value(v),
            Err(e) => Reading::Failed(format!("{}: {e}", path.display())),
        },
    }
}

/// The RoCE mode a configfs `default_roce_mode` file shows.
fn roce_mode(path: &Path) -> Option<Reading<RoceMode>> {
    Some(match files::read_text(path)? {
        Ok(t) => match parse::roce_mode(&t) {
            Ok(m) => Reading::Value(m),
            Err(e) => Reading::Failed(format!("{}: {e}", path.display())),
        },
        Err(e) => Reading::Failed(e.to_string()),
    })
}

/// Eight per-priority `0`/`1` files, as one priority set.
fn priority_files(dir: &Path) -> Option<Reading<PriorityMap>> {
    let mut map = 0u8;
    for p in 0..8u8 {
        let path = dir.join(p.to_string());
        match files::read_text(&path)? {
            Ok(t) => match parse::enable(&t) {
                Ok(true) => map |= 1 << p,
                Ok(false) => {}
                Err(e) => return Some(Reading::Failed(format!("{}: {e}", path.display()))),
            },
            Err(e) => return Some(Reading::Failed(e.to_string())),
        }
    }
    Some(Reading::Value(PriorityMap(map)))
}

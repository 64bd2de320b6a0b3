//! An emulated host tree of RoCE NICs for tests: sysfs, configfs and debugfs laid under a
//! temporary root exactly as the kernel lays them, and, with the emulated driver library
//! preloaded (`LD_PRELOAD`, [`crate::ShimEnv::sysfs`], `LOSSLESS_DCBDRV_SYSFS=ROOT`), the
//! kernel's write semantics on those files (`c/sysfs.c`). A daemon or `lossless doctor`
//! given `--sysfs ROOT` (as node_exporter's `--path.sysfs`) reads and writes the RoCE host
//! settings there; configfs is `ROOT/kernel/config`, debugfs `ROOT/kernel/debug` (where
//! they are mounted under `/sys`).
//!
//! # The layout
//!
//! `HostTree::new(&[Port])` lays, for each port (netdev `IF`, [`Model`], [`Flavour`]:
//! the inbox driver or NVIDIA's out-of-tree MLNX_OFED/DOCA-OFED, RDMA device `IB`, PCI
//! address `PCI` such as `0000:41:00.0`). Modes are the kernel's: a sysfs attribute's
//! mode is what its driver declared, directories are 0755, symlinks are symlinks.
//! Contents are what the show function prints, trailing newline included. Power-on
//! values below; "w:" says what a write accepts and what it refuses, with the errno the
//! kernel returns (the emulation enforces it only under the preloaded library; without
//! `LOSSLESS_DCBDRV_SYSFS` nothing is intercepted and the files are plain files).
//!
//! ```text
//! ROOT/devices/pci0000:00/PCI/                      the PCI function (0755)
//!     driver  -> ../../../bus/pci/drivers/DRV       DRV: mlx5_core, ice, i40e, bnxt_en, hns3,
//!                                                   ixgbe; lossless_generic for the generic model
//! ROOT/bus/pci/drivers/DRV/                         (0755)
//! ROOT/bus/pci/devices/PCI -> ../../../devices/pci0000:00/PCI
//! ROOT/devices/pci0000:00/PCI/net/IF/               the netdev (net/core/net-sysfs.c)
//!     address        0444  "02:..:..\n"             the MAC (Port::mac, or derived from PCI)
//!     mtu            0644  "1500\n"                 w: kstrtoul base 0 (EINVAL, ERANGE), then
//!                                                   dev_set_mtu: outside the model's
//!                                                   mtu_range() EINVAL (netdev_store,
//!                                                   dev_validate_mtu)
//!     operstate      0444  "up\n"
//!     device         -> ../../../PCI                symlink
//!     ecn/           (MLNX_OFED, mlx5 only; PF) en_sysfs.c mlx5e_sysfs_create: roce_rp and
//!                    roce_np (not 802.1.qau_rp); every file 0644 (set_kobj_mode, PF)
//!       roce_rp/enable/0..7             "1\n"   w: sscanf("%d"): no number EINVAL; the value's
//!       roce_np/enable/0..7             "1\n"      bit 0 is kept ("2" writes 0, "3" writes 1)
//!                                                  (en_ecn.c mlx5e_store_ecn_enable); DCQCN on
//!                                                  every priority at power-on (NVIDIA, "DCQCN
//!                                                  CC Parameters": ROCE_CC_PRIO_MASK Enable)
//!       roce_np/cnp_dscp                "48\n"  w: sscanf("%d"); the 6-bit field keeps the low
//!                                                  6 bits (64 shows 0, -1 shows 63): MLX5_SET
//!       roce_np/cnp_802p_prio           "6\n"   w: likewise, 3 bits (8 shows 0)
//!       roce_np/min_time_between_cnps   "4\n"   w: sscanf("%d"), 32-bit field
//!       roce_rp/clamp_tgt_rate          "0\n"   w: 1-bit field
//!       roce_rp/clamp_tgt_rate_after_time_inc "1\n" w: 1-bit field
//!       roce_rp/rpg_time_reset "300\n", rpg_byte_reset "32767\n", rpg_threshold "1\n",
//!               rpg_max_rate "0\n", rpg_ai_rate "5\n", rpg_hai_rate "50\n", rpg_gd "11\n",
//!               rpg_min_dec_fac "50\n", rpg_min_rate "1\n", rate_to_set_on_first_cnp "0\n",
//!               dce_tcp_g "1019\n", dce_tcp_rtt "1\n", rate_reduce_monitor_period "4\n",
//!               initial_alpha_value "1023\n"
//!                                               w: sscanf("%d") into a 32-bit field; outside
//!                                                  NVIDIA's documented range the firmware's
//!                                                  BAD_PARAM is taken as EINVAL (assumed)
//!                      For every parameter: text that is not a number is EINVAL here (the
//!                      driver ignores sscanf's result and writes an uninitialised value).
//!                      ecn/roce_np and the debugfs cc_params are two views of the same
//!                      firmware parameters: a write through one shows in the other.
//! ROOT/devices/pci0000:00/PCI/infiniband/IB/        the RDMA device (mlx5, ice, bnxt, hns3)
//!     ports/1/link_layer      0444 "Ethernet\n"
//!     ports/1/state           0444 "4: ACTIVE\n"
//!     ports/1/phys_state      0444 "5: LinkUp\n"
//!     ports/1/gids/N          0444 the default GIDs (fe80::EUI-64 of the MAC, "%pI6")
//!     ports/1/gid_attrs/types/N  0444 "IB/RoCE v1\n" or "RoCE v2\n": one default GID per
//!                             GID type the port supports (mlx5, bnxt_re, hns_roce: v1 and v2;
//!                             irdma: v2 only); only the entries in use are laid (the kernel
//!                             lays the whole table, unused entries fail EINVAL on read)
//!     ports/1/gid_attrs/ndevs/N  0444 "IF\n"
//!     device  -> ../../../PCI
//!     ports/1/hw_counters/NAME   0444 "0\n" each (core/sysfs.c: 0444, "%llu\n"); names:
//!                             mlx5 counters.c (basic, out_of_seq, retrans, extended_err,
//!                             roce_accl, cong, ext_ppcnt groups: a ConnectX-6 Dx with every
//!                             capability), irdma verbs.c irdma_hw_stat_descs (E810, gen2),
//!                             bnxt_re hw_counters.c bnxt_re_stat_descs (P5 chip), hns_roce
//!                             hns_roce_main.c hns_roce_port_stats_descs (HIP09); see
//!                             hw_counter_names()
//!     ports/1/hw_counters/lifespan 0644 "10\n"  w: kstrtoint base 10 (EINVAL, ERANGE),
//!                             < 0 or > 10000 EINVAL (set_stats_lifespan; shown in ms, HZ=1000)
//!     tc/1/traffic_class      0644 ""  (MLNX_OFED mlx5_ib only, main_ext.c; not inbox)
//!                             empty until set; w: more than 100 bytes EINVAL; "N" or
//!                             "tclass=N" (kstrtoint base 0, > 255 EINVAL; negative: unset)
//!                             shows "Global tclass=N\n"; the per-address rule forms
//!                             (src_ip=, dst_ip=, ...) are refused EINVAL here (the driver
//!                             takes them: a limit of the emulation)
//!     ttl/1/ttl               0644 "0\n"  (MLNX_OFED only) w: kstrtol base 0, > 255 EINVAL
//! ROOT/class/net/IF        -> ../../devices/pci0000:00/PCI/net/IF
//! ROOT/class/infiniband/IB -> ../../devices/pci0000:00/PCI/infiniband/IB
//!     (the RDMA device of a netdev is the entry under class/net/IF/device/infiniband/)
//! ROOT/kernel/config/rdma_cm/                       configfs (cma_configfs.c), empty, 0755
//!     mkdir rdma_cm/IB: IB an RDMA device here: creates the group (0755)
//!         IB/ports/1/default_roce_mode  0644 "RoCE v2\n" (cma_add_one: RoCE v2 when the
//!                                       port supports it, else the first supported type)
//!         IB/ports/1/default_roce_tos   0644 "0\n"
//!         the values live in the device (cma_device), not in the group: rmdir and mkdir
//!         again shows the values last written; they are lost when the device goes
//!     mkdir of a name that is no RDMA device: ENODEV (make_cma_dev); of an existing
//!         group: EEXIST; mkdir inside a group or in ports/: EPERM (configfs_mkdir, no
//!         make_group); rmdir rdma_cm/IB removes the group; rmdir of ports/ or ports/1/:
//!         EPERM (default groups)
//!     default_roce_mode w: exactly "IB/RoCE v1" or "RoCE v2", one trailing newline allowed
//!         (ib_cache_gid_parse_type_str), else EINVAL; a type the port does not support
//!         EINVAL (cma_set_default_gid_type); the device gone ENODEV (checked first)
//!     default_roce_tos  w: kstrtou8 base 0: not a number EINVAL, > 255 ERANGE; then the
//!         device gone ENODEV (default_roce_tos_store)
//!     when the device goes the group stays (configfs keeps it): reads and writes of its
//!         attributes fail ENODEV until a device of that name comes back, and then show
//!         that device's values (power-on: the kernel looks the device up by name)
//! ROOT/kernel/debug/                                debugfs, 0700
//! ROOT/kernel/debug/mlx5/PCI/cc_params/NAME         mlx5 (inbox and MLNX_OFED: cong.c),
//!     0600 each: rp_clamp_tgt_rate "0\n", rp_clamp_tgt_rate_ati "1\n", rp_time_reset
//!     "300\n", rp_byte_reset "32767\n", rp_threshold "1\n", rp_ai_rate "5\n",
//!     rp_max_rate "0\n", rp_hai_rate "50\n", rp_min_dec_fac "50\n", rp_min_rate "1\n",
//!     rp_rate_to_set_on_first_cnp "0\n", rp_dce_tcp_g "1019\n", rp_dce_tcp_rtt "1\n",
//!     rp_rate_reduce_monitor_period "4\n", rp_initial_alpha_value "1023\n", rp_gd "11\n",
//!     np_min_time_between_cnps "4\n", np_cnp_dscp "48\n", np_cnp_prio_mode "0\n",
//!     np_cnp_prio "6\n" (rtt_resp_dscp* need roce_cc_general: not laid)
//!     w: more than 11 bytes EINVAL; the first 10 bytes are parsed by kstrtou32 base 0,
//!     any failure EINVAL (set_param); the value is cut to the field's width (np_cnp_dscp
//!     6 bits, np_cnp_prio 3, np_cnp_prio_mode and the clamps 1); writing np_cnp_prio also
//!     sets np_cnp_prio_mode 0 (mlx5_ib_set_cc_param_mask_val); shown "%d\n"
//! ```
//!
//! Per model: `mlx5` (mlx5_core + mlx5_ib, `mlx5_N`), `ice` (irdma, `irdmaN`, RoCE v2
//! only), `bnxt` (bnxt_re, `bnxt_reN`), `hns3` (hns_roce, `hns_N`) have the RDMA device;
//! `i40e` (XL710: no RDMA), `ixgbe` and `generic` (a plain DCB NIC) have none, and
//! [`HostTree::new`] refuses an RDMA device name for them. MLNX_OFED's `ecn/`, `tc/` and
//! `ttl/` only with [`Flavour::Ofed`] on `mlx5`; the other models have no out-of-tree
//! flavour here. The netdev's MTU bounds per model: [`mtu_range`].
//!
//! What every file refuses, whatever it is (the library, for paths under ROOT):
//! opening a 0444 attribute for writing EACCES even for root (kernfs_fop_open,
//! configfs_open_file); O_CREAT of a name that does not exist EACCES (fs/namei.c
//! lookup_open: no ->create in sysfs, configfs, debugfs); mkdir and rmdir in sysfs and
//! debugfs EPERM (kernfs_iop_mkdir/rmdir, vfs_mkdir/vfs_rmdir without the op); unlink
//! EPERM (vfs_unlink; configfs_unlink of a non-link); O_TRUNC and truncate() change
//! nothing (kernfs takes the size and ignores it), but truncate() of a directory is
//! EISDIR, of a file the caller may not write EACCES, and ftruncate() of an fd not
//! open for writing EINVAL (vfs_truncate, do_ftruncate). A write is one store: the buffer
//! written (up to a page) is the whole value, whatever the file offset; on success the
//! file shows the new value whole, on refusal it keeps the old one. A write on a file
//! whose device went (an fd opened before [`HostTree::unplug`]) fails ENODEV (sysfs,
//! kernfs_get_active) or EIO (debugfs, debugfs_file_get); opening it after fails ENOENT;
//! an attribute of a configfs group removed since it was opened fails ENOENT
//! (flush_write_buffer, fill_read_buffer). A 0-byte write is 0 in sysfs and EFAULT in
//! configfs (fill_write_buffer).
//!
//! Every write, open for writing, mkdir, rmdir and unlink under ROOT, done or refused, is
//! a line of the emulated driver's log (`LOSSLESS_DCBDRV_DIR/dcbdrv.log`, the dcbnl log's
//! format): `SECONDS.MILLIS PID IFNAME COMMAND RESULT path=REL [value=V] [shown=S]
//! [refused=WHY]`, COMMAND `SYSFS_WRITE`, `SYSFS_OPEN`, `SYSFS_MKDIR`, `SYSFS_RMDIR`,
//! `SYSFS_UNLINK`, RESULT `ok` or `err=-ERRNO`, REL the path under ROOT as resolved
//! (symlinks followed), IFNAME the netdev the file belongs to or `-`; V and S escaped
//! (bytes outside `!`..`~` and `\` as `\xHH`). [`crate::LogEntry`] parses them.
//!
//! The kernel's memory that no file shows (the RDMA CM's per-device values while no
//! configfs group shows them) is kept beside the root, in `ROOT.kstate/`, with the lock
//! that serialises the stores of every process and [`HostTree`]'s own changes.
//!
//! # What the library cannot see
//!
//! It wraps the exported libc calls (open, open64, openat, creat and their fortified
//! forms, write, pwrite, writev, read, pread, dup, dup2, dup3, fcntl's F_DUPFD, close,
//! mkdir, rmdir, unlink, truncate, fopen through a cookie stream). A write libc makes
//! internally does not pass through them: bash's builtin `echo` and other stdio writers
//! on an fd opened with `open` fail EBADF (the fd the library hands out is read-only
//! underneath, so nothing reaches the file unchecked); dash, coreutils, Rust's std and
//! Python call `write` and are seen. An fd inherited across `exec` is not known to the
//! new program (its writes fail EBADF). A process that does not preload the library (Go
//! programs, which make system calls directly) sees plain files.
//!
//! # The Rust side
//!
//! [`Port`] (`Port::new(ifname, model, pci)`, `.ofed()`, `.ibdev(name)`, `.mac(mac)`),
//! [`HostTree`] (`new(&[Port])`, `root()`, `configfs()`, `debugfs()`, `kstate()`,
//! `path(rel)`, `ports()`, `unplug(ifname)`, `replug(ifname)`: laid again at power-on
//! values, `set_counter(ibdev, name, value)`, `write_file(rel, contents)`,
//! `read_file(rel)` and `mode(rel)` behind the library's back), [`hw_counter_names`],
//! [`gid_types`], [`mtu_range`], [`pci_driver`], [`has_rdma`], [`CC_PARAMS`] (the
//! firmware's power-on congestion parameters), [`unescape`] (a log value's bytes);
//! [`crate::ShimEnv::sysfs`]; [`crate::LogEntry`]'s `path()`, `value()`, `shown()`,
//! `errno()`.

use std::fs;
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};

pub use crate::dcbdrv::unescape;
use crate::dcbdrv::Model;
use crate::netns::TempDir;

/// Which mlx5 driver package a port runs: the kernel's own (inbox) or NVIDIA's
/// out-of-tree MLNX_OFED / DOCA-OFED, which adds `ecn/`, `tc/` and `ttl/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Inbox,
    Ofed,
}

/// One NIC port of the emulated host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub ifname: String,
    pub model: Model,
    pub flavour: Flavour,
    /// The RDMA device (`mlx5_0`, `irdma0`, `bnxt_re0`, `hns_0`); `None`: no RDMA device
    /// (the RDMA driver not loaded, or a model without RDMA).
    pub ibdev: Option<String>,
    /// The PCI function, `DDDD:BB:DD.F`.
    pub pci: String,
    pub mac: [u8; 6],
}

impl Port {
    /// A port with the inbox driver, no RDMA device, and a MAC derived from the PCI
    /// address (`02:00:DD:BB:DD:F`).
    pub fn new(ifname: &str, model: Model, pci: &str) -> Port {
        let mut mac = [0x02, 0, 0, 0, 0, 0];
        let nums: Vec<u8> = pci
            .split([':', '.'])
            .map(|x| u32::from_str_radix(x, 16).unwrap_or(0) as u8)
            .collect();
        for (i, b) in nums.iter().take(4).enumerate() {
            mac[2 + i] = *b;
        }
        Port {
            ifname: ifname.to_string(),
            model,
            flavour: Flavour::Inbox,
            ibdev: None,
            pci: pci.to_string(),
            mac,
        }
    }

    /// NVIDIA's MLNX_OFED / DOCA-OFED driver instead of the inbox one (mlx5 only).
    pub fn ofed(mut self) -> Port {
        self.flavour = Flavour::Ofed;
        self
    }

    pub fn ibdev(mut self, name: &str) -> Port {
        self.ibdev = Some(name.to_string());
        self
    }

    pub fn mac(mut self, mac: [u8; 6]) -> Port {
        self.mac = mac;
        self
    }

    fn mac_text(&self) -> String {
        let m = self.mac;
        format!(
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }

    /// The default GID: the link-local address from the MAC's EUI-64, as `%pI6` prints
    /// it (eight groups of four hex digits).
    fn default_gid(&self) -> String {
        let m = self.mac;
        let eui = [m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]];
        format!(
            "fe80:0000:0000:0000:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}:{:02x}{:02x}",
            eui[0], eui[1], eui[2], eui[3], eui[4], eui[5], eui[6], eui[7]
        )
    }
}

/// The PCI driver bound to a model's function (`PCI/driver`), as the kernel names it.
pub fn pci_driver(model: Model) -> &'static str {
    match model {
        Model::Generic => "lossless_generic",
        Model::Mlx5 => "mlx5_core",
        Model::Ice => "ice",
        Model::I40e => "i40e",
        Model::Bnxt => "bnxt_en",
        Model::Hns3 => "hns3",
        Model::Ixgbe => "ixgbe",
    }
}

/// Whether the model has an RDMA driver here: mlx5 (mlx5_ib), ice (irdma), bnxt
/// (bnxt_re), hns3 (hns_roce). i40e's XL710 has no RDMA, ixgbe none, the generic
/// model is a plain DCB NIC.
pub fn has_rdma(model: Model) -> bool {
    matches!(model, Model::Mlx5 | Model::Ice | Model::Bnxt | Model::Hns3)
}

/// The GID types a port supports (its core_cap_flags, get_port_immutable):
/// mlx5 (mlx5_port_immutable with both RoCE version caps), bnxt_re
/// (bnxt_re_get_port_immutable) and hns_roce on HIP08 and later
/// (hns_roce_port_immutable, HNS_ROCE_CAP_FLAG_ROCE_V1_V2): RoCE v1 and v2; irdma
/// (irdma_roce_port_immutable): RoCE v2 only.
pub fn gid_types(model: Model) -> &'static [&'static str] {
    match model {
        Model::Ice => &["RoCE v2"],
        m if has_rdma(m) => &["IB/RoCE v1", "RoCE v2"],
        _ => &[],
    }
}

/// The netdev's MTU bounds (min_mtu, max_mtu; dev_validate_mtu refuses outside them
/// with EINVAL): mlx5 68..9978 (the ConnectX port's maximum, from firmware), ice
/// 68..9702 (ICE_MAX_MTU), i40e 68..9706 (I40E_MAX_RXBUFFER less the header pad),
/// bnxt 60..9500 (ETH_ZLEN, BNXT_MAX_MTU), hns3 68..9702 (max frame 9728 less the
/// headers), ixgbe 68..9710 (IXGBE_MAX_JUMBO_FRAME_SIZE less Ethernet header and FCS),
/// generic 68..9000 (ours).
pub fn mtu_range(model: Model) -> (u32, u32) {
    match model {
        Model::Mlx5 => (68, 9978),
        Model::Ice | Model::Hns3 => (68, 9702),
        Model::I40e => (68, 9706),
        Model::Bnxt => (60, 9500),
        Model::Ixgbe => (68, 9710),
        Model::Generic => (68, 9000),
    }
}

/// The port hw counters the RDMA driver registers (`ports/1/hw_counters/`; the
/// optional ones are not in sysfs). Each list is the driver's descriptor table:
/// mlx5 `drivers/infiniband/hw/mlx5/counters.c` (a ConnectX-6 Dx with every
/// capability: basic_q_cnts, out_of_seq_q_cnts, retrans_q_cnts, extended_err_cnts,
/// roce_accl_cnts, cong_cnts, ext_ppcnt_cnts; the op counters are optional), irdma
/// `verbs.c` irdma_hw_stat_descs (E810, gen 2), bnxt_re `hw_counters.c`
/// bnxt_re_stat_descs (a P5 chip, the extended counters), hns_roce `hns_roce_main.c`
/// hns_roce_port_stats_descs (HIP09: the DFX and the hardware counters).
pub fn hw_counter_names(model: Model) -> &'static [&'static str] {
    match model {
        Model::Mlx5 => MLX5_COUNTERS,
        Model::Ice => IRDMA_COUNTERS,
        Model::Bnxt => BNXT_RE_COUNTERS,
        Model::Hns3 => HNS_ROCE_COUNTERS,
        _ => &[],
    }
}

const MLX5_COUNTERS: &[&str] = &[
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
    "rx_icrc_encapsulated",
];

const IRDMA_COUNTERS: &[&str] = &[
    "ip4InDiscards",
    "ip4InTruncatedPkts",
    "ip4OutNoRoutes",
    "ip6InDiscards",
    "ip6InTruncatedPkts",
    "ip6OutNoRoutes",
    "tcpRetransSegs",
    "tcpInOptErrors",
    "tcpInProtoErrors",
    "rxVlanErrors",
    "ip4InOctets",
    "ip4InPkts",
    "ip4InReasmRqd",
    "ip4InMcastPkts",
    "ip4OutOctets",
    "ip4OutPkts",
    "ip4OutSegRqd",
    "ip4OutMcastPkts",
    "ip6InOctets",
    "ip6InPkts",
    "ip6InReasmRqd",
    "ip6InMcastPkts",
    "ip6OutOctets",
    "ip6OutPkts",
    "ip6OutSegRqd",
    "ip6OutMcastPkts",
    "tcpInSegs",
    "tcpOutSegs",
    "iwInRdmaReads",
    "iwInRdmaSends",
    "iwInRdmaWrites",
    "iwOutRdmaReads",
    "iwOutRdmaSends",
    "iwOutRdmaWrites",
    "iwRdmaBnd",
    "iwRdmaInv",
    "cnpHandled",
    "cnpIgnored",
    "cnpSent",
    "ip4InMcastOctets",
    "ip4OutMcastOctets",
    "ip6InMcastOctets",
    "ip6OutMcastOctets",
    "RxUDP",
    "TxUDP",
    "RxECNMrkd",
];

const BNXT_RE_COUNTERS: &[&str] = &[
    "active_pds",
    "active_ahs",
    "active_qps",
    "active_rc_qps",
    "active_ud_qps",
    "active_srqs",
    "active_cqs",
    "active_mrs",
    "active_mws",
    "watermark_pds",
    "watermark_ahs",
    "watermark_qps",
    "watermark_rc_qps",
    "watermark_ud_qps",
    "watermark_srqs",
    "watermark_cqs",
    "watermark_mrs",
    "watermark_mws",
    "resize_cq_cnt",
    "rx_pkts",
    "rx_bytes",
    "tx_pkts",
    "tx_bytes",
    "recoverable_errors",
    "tx_roce_errors",
    "tx_roce_discards",
    "rx_roce_errors",
    "rx_roce_discards",
    "to_retransmits",
    "seq_err_naks_rcvd",
    "max_retry_exceeded",
    "rnr_naks_rcvd",
    "missing_resp",
    "unrecoverable_err",
    "bad_resp_err",
    "local_qp_op_err",
    "local_protection_err",
    "mem_mgmt_op_err",
    "remote_invalid_req_err",
    "remote_access_err",
    "remote_op_err",
    "dup_req",
    "res_exceed_max",
    "res_length_mismatch",
    "res_exceeds_wqe",
    "res_opcode_err",
    "res_rx_invalid_rkey",
    "res_rx_domain_err",
    "res_rx_no_perm",
    "res_rx_range_err",
    "res_tx_invalid_rkey",
    "res_tx_domain_err",
    "res_tx_no_perm",
    "res_tx_range_err",
    "res_irrq_oflow",
    "res_unsup_opcode",
    "res_unaligned_atomic",
    "res_rem_inv_err",
    "res_mem_err",
    "res_srq_err",
    "res_cmp_err",
    "res_invalid_dup_rkey",
    "res_wqe_format_err",
    "res_cq_load_err",
    "res_srq_load_err",
    "res_tx_pci_err",
    "res_rx_pci_err",
    "oos_drop_count",
    "tx_atomic_req",
    "tx_read_req",
    "tx_read_resp",
    "tx_write_req",
    "tx_send_req",
    "tx_roce_only_pkts",
    "tx_roce_only_bytes",
    "rx_atomic_req",
    "rx_read_req",
    "rx_read_resp",
    "rx_write_req",
    "rx_send_req",
    "rx_roce_only_pkts",
    "rx_roce_only_bytes",
    "rx_roce_good_pkts",
    "rx_roce_good_bytes",
    "rx_out_of_buffer",
    "tx_cnp_pkts",
    "rx_cnp_pkts",
    "rx_ecn_marked_pkts",
    "pacing_reschedule",
    "pacing_complete",
    "pacing_alerts",
    "db_fifo_register",
];

const HNS_ROCE_COUNTERS: &[&str] = &[
    "aeqe",
    "ceqe",
    "cmds",
    "cmds_err",
    "posted_mbx",
    "polled_mbx",
    "mbx_event",
    "qp_create_err",
    "qp_modify_err",
    "cq_create_err",
    "srq_create_err",
    "xrcd_alloc_err",
    "mr_reg_err",
    "mr_rereg_err",
    "ah_create_err",
    "mmap_err",
    "uctx_alloc_err",
    "rx_rc_pkt",
    "rx_uc_pkt",
    "rx_ud_pkt",
    "rx_xrc_pkt",
    "rx_pkt",
    "rx_err_pkt",
    "rx_cnp_pkt",
    "tx_rc_pkt",
    "tx_uc_pkt",
    "tx_ud_pkt",
    "tx_xrc_pkt",
    "tx_pkt",
    "tx_err_pkt",
    "tx_cnp_pkt",
    "trp_get_mpt_err_pkt",
    "trp_get_irrl_err_pkt",
    "ecn_doorbell",
    "rx_buffer",
    "trp_rx_sof",
    "cq_cqe",
    "cq_poe",
    "cq_notify",
];

/// The firmware's congestion-control parameters at power-on (NVIDIA, "DCQCN CC
/// Parameters"; np_cnp_prio_mode is not documented there, 0 assumed so that the
/// documented CNP priority applies): (debugfs name under cc_params/, MLNX_OFED file
/// under ecn/ or "" when it has none, value).
pub const CC_PARAMS: &[(&str, &str, u32)] = &[
    ("rp_clamp_tgt_rate", "roce_rp/clamp_tgt_rate", 0),
    (
        "rp_clamp_tgt_rate_ati",
        "roce_rp/clamp_tgt_rate_after_time_inc",
        1,
    ),
    ("rp_time_reset", "roce_rp/rpg_time_reset", 300),
    ("rp_byte_reset", "roce_rp/rpg_byte_reset", 32767),
    ("rp_threshold", "roce_rp/rpg_threshold", 1),
    ("rp_ai_rate", "roce_rp/rpg_ai_rate", 5),
    ("rp_max_rate", "roce_rp/rpg_max_rate", 0),
    ("rp_hai_rate", "roce_rp/rpg_hai_rate", 50),
    ("rp_min_dec_fac", "roce_rp/rpg_min_dec_fac", 50),
    ("rp_min_rate", "roce_rp/rpg_min_rate", 1),
    (
        "rp_rate_to_set_on_first_cnp",
        "roce_rp/rate_to_set_on_first_cnp",
        0,
    ),
    ("rp_dce_tcp_g", "roce_rp/dce_tcp_g", 1019),
    ("rp_dce_tcp_rtt", "roce_rp/dce_tcp_rtt", 1),
    (
        "rp_rate_reduce_monitor_period",
        "roce_rp/rate_reduce_monitor_period",
        4,
    ),
    (
        "rp_initial_alpha_value",
        "roce_rp/initial_alpha_value",
        1023,
    ),
    ("rp_gd", "roce_rp/rpg_gd", 11),
    (
        "np_min_time_between_cnps",
        "roce_np/min_time_between_cnps",
        4,
    ),
    ("np_cnp_dscp", "roce_np/cnp_dscp", 48),
    ("np_cnp_prio_mode", "", 0),
    ("np_cnp_prio", "roce_np/cnp_802p_prio", 6),
];

/// The emulated host tree (see the module documentation): a temporary directory
/// holding `root/` (give it as `--sysfs`) and `root.kstate/` (the kernel's memory that
/// no file shows), removed on drop.
pub struct HostTree {
    _dir: TempDir,
    root: PathBuf,
    ports: Vec<Port>,
}

impl HostTree {
    /// Lays the tree for `ports` at power-on values. Refuses an RDMA device on a model
    /// without RDMA, MLNX_OFED on another model than mlx5, and two ports with one
    /// name, PCI address or RDMA device.
    pub fn new(ports: &[Port]) -> io::Result<HostTree> {
        for (i, p) in ports.iter().enumerate() {
            if p.ibdev.is_some() && !has_rdma(p.model) {
                return Err(invalid(format!(
                    "{}: the {} model has no RDMA driver",
                    p.ifname, p.model
                )));
            }
            if p.flavour == Flavour::Ofed && p.model != Model::Mlx5 {
                return Err(invalid(format!("{}: MLNX_OFED drives mlx5 only", p.ifname)));
            }
            if ports[..i].iter().any(|q| {
                q.ifname == p.ifname || q.pci == p.pci || (q.ibdev.is_some() && q.ibdev == p.ibdev)
            }) {
                return Err(invalid(format!(
                    "{}: a name, PCI address or RDMA device used twice",
                    p.ifname
                )));
            }
        }
        let dir = TempDir::new();
        let root = fs::canonicalize(dir.path())?.join("root");
        let tree = HostTree {
            _dir: dir,
            root,
            ports: ports.to_vec(),
        };
        mkdir(&tree.root, 0o755)?;
        mkdir(&tree.kstate(), 0o755)?;
        for d in [
            "devices/pci0000:00",
            "class/net",
            "class/infiniband",
            "bus/pci/devices",
        ] {
            mkdirs(&tree.root, d, 0o755)?;
        }
        mkdirs(&tree.root, "bus/pci/drivers", 0o755)?;
        mkdirs(&tree.root, "kernel/config/rdma_cm", 0o755)?;
        mkdir(&tree.root.join("kernel/debug"), 0o700)?;
        for p in ports {
            tree.lay(p)?;
        }
        Ok(tree)
    }

    /// The root to give as `--sysfs` (and `LOSSLESS_DCBDRV_SYSFS`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `ROOT/kernel/config`.
    pub fn configfs(&self) -> PathBuf {
        self.root.join("kernel/config")
    }

    /// `ROOT/kernel/debug`.
    pub fn debugfs(&self) -> PathBuf {
        self.root.join("kernel/debug")
    }

    /// `ROOT.kstate`: what the kernel keeps that no file shows.
    pub fn kstate(&self) -> PathBuf {
        let mut s = self.root.clone().into_os_string();
        s.push(".kstate");
        PathBuf::from(s)
    }

    /// `ROOT/rel`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn ports(&self) -> &[Port] {
        &self.ports
    }

    fn port(&self, ifname: &str) -> io::Result<&Port> {
        self.ports
            .iter()
            .find(|p| p.ifname == ifname)
            .ok_or_else(|| invalid(format!("{ifname}: no such port in the tree")))
    }

    /// The port's device goes (a driver unload, a PCI removal): its sysfs entries
    /// (the PCI function with its netdev and RDMA device, the class and bus links) and
    /// its debugfs directory, and the RDMA CM's values for it. A configfs group made
    /// for its RDMA device stays, as configfs keeps it; its attributes fail ENODEV.
    pub fn unplug(&self, ifname: &str) -> io::Result<()> {
        let p = self.port(ifname)?.clone();
        let _lock = self.lock()?;
        remove_if_there(&self.root.join("devices/pci0000:00").join(&p.pci))?;
        remove_if_there(&self.root.join("class/net").join(&p.ifname))?;
        remove_if_there(&self.root.join("bus/pci/devices").join(&p.pci))?;
        remove_if_there(&self.root.join("kernel/debug/mlx5").join(&p.pci))?;
        if let Some(ib) = &p.ibdev {
            remove_if_there(&self.root.join("class/infiniband").join(ib))?;
            remove_if_there(&self.kstate().join("rdma_cm").join(ib))?;
        }
        Ok(())
    }

    /// The device comes back, as after a driver reload: laid again at power-on values.
    pub fn replug(&self, ifname: &str) -> io::Result<()> {
        let p = self.port(ifname)?.clone();
        let _lock = self.lock()?;
        if self.root.join("devices/pci0000:00").join(&p.pci).exists() {
            return Err(invalid(format!("{ifname}: still plugged")));
        }
        self.lay(&p)?;
        // a configfs group that outlived the device shows the new device's values
        if let Some(ib) = &p.ibdev {
            let ports = self
                .root
                .join("kernel/config/rdma_cm")
                .join(ib)
                .join("ports");
            if ports.is_dir() {
                let mode = gid_types(p.model)
                    .iter()
                    .find(|t| **t == "RoCE v2")
                    .or(gid_types(p.model).first())
                    .copied()
                    .unwrap_or("RoCE v2");
                for e in fs::read_dir(&ports)? {
                    let port = e?.path();
                    file(&port.join("default_roce_mode"), 0o644, &format!("{mode}\n"))?;
                    file(&port.join("default_roce_tos"), 0o644, "0\n")?;
                }
            }
        }
        Ok(())
    }

    /// Sets hw counter `name` of RDMA device `ibdev` (port 1) to `value`.
    pub fn set_counter(&self, ibdev: &str, name: &str, value: u64) -> io::Result<()> {
        self.write_file(
            &format!("class/infiniband/{ibdev}/ports/1/hw_counters/{name}"),
            &format!("{value}\n"),
        )
    }

    /// Replaces the content of `ROOT/rel` (an existing file; symlinks followed) whole,
    /// keeping its mode: the kernel changing a value behind the processes' backs.
    /// Under the tree's lock, so no store of the emulated driver interleaves.
    pub fn write_file(&self, rel: &str, contents: &str) -> io::Result<()> {
        let _lock = self.lock()?;
        let target = fs::canonicalize(self.root.join(rel))?;
        let mode = fs::metadata(&target)?.permissions().mode();
        let tmp = self
            .kstate()
            .join(format!("tmp.rust.{}", std::process::id()));
        fs::write(&tmp, contents)?;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(mode & 0o7777))?;
        fs::rename(&tmp, &target)
    }

    /// The content of `ROOT/rel`, read directly.
    pub fn read_file(&self, rel: &str) -> io::Result<String> {
        fs::read_to_string(self.root.join(rel))
    }

    /// The mode bits of `ROOT/rel` (symlinks followed).
    pub fn mode(&self, rel: &str) -> io::Result<u32> {
        Ok(fs::metadata(self.root.join(rel))?.permissions().mode() & 0o7777)
    }

    fn lock(&self) -> io::Result<nix::fcntl::Flock<fs::File>> {
        let file = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.kstate().join("lock"))?;
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| io::Error::from(e))
    }

    fn lay(&self, p: &Port) -> io::Result<()> {
        let pci_rel = format!("devices/pci0000:00/{}", p.pci);
        let pci = self.root.join(&pci_rel);
        mkdir(&pci, 0o755)?;
        let drv = pci_driver(p.model);
        mkdirs(&self.root, &format!("bus/pci/drivers/{drv}"), 0o755)?;
        symlink(
            format!("../../../bus/pci/drivers/{drv}"),
            pci.join("driver"),
        )?;
        symlink(
            format!("../../../devices/pci0000:00/{}", p.pci),
            self.root.join("bus/pci/devices").join(&p.pci),
        )?;
        // the netdev (net/core/net-sysfs.c)
        let net = pci.join("net").join(&p.ifname);
        mkdir(&pci.join("net"), 0o755)?;
        mkdir(&net, 0o755)?;
        file(&net.join("address"), 0o444, &format!("{}\n", p.mac_text()))?;
        file(&net.join("mtu"), 0o644, "1500\n")?;
        file(&net.join("operstate"), 0o444, "up\n")?;
        symlink(format!("../../../{}", p.pci), net.join("device"))?;
        symlink(
            format!("../../{pci_rel}/net/{}", p.ifname),
            self.root.join("class/net").join(&p.ifname),
        )?;
        let ofed = p.flavour == Flavour::Ofed && p.model == Model::Mlx5;
        if ofed {
            // MLNX_OFED's ecn/ (en_sysfs.c mlx5e_sysfs_create, PF: 0644)
            for dir in ["roce_rp", "roce_np"] {
                let d = net.join("ecn").join(dir);
                mkdirs(&net, &format!("ecn/{dir}/enable"), 0o755)?;
                for prio in 0..8 {
                    file(&d.join("enable").join(prio.to_string()), 0o644, "1\n")?;
                }
            }
            for (_, ofed_name, v) in CC_PARAMS {
                if !ofed_name.is_empty() {
                    file(&net.join("ecn").join(ofed_name), 0o644, &format!("{v}\n"))?;
                }
            }
        }
        if p.model == Model::Mlx5 {
            // mlx5_ib's debugfs (cong.c mlx5_ib_init_cong_debugfs), inbox and OFED
            let cc = self
                .root
                .join("kernel/debug/mlx5")
                .join(&p.pci)
                .join("cc_params");
            mkdir_all_mode(&self.root.join("kernel/debug"), &cc, 0o755)?;
            for (name, _, v) in CC_PARAMS {
                file(&cc.join(name), 0o600, &format!("{v}\n"))?;
            }
        }
        if let Some(ib) = &p.ibdev {
            let ibd = pci.join("infiniband").join(ib);
            mkdir(&pci.join("infiniband"), 0o755)?;
            mkdir(&ibd, 0o755)?;
            symlink(format!("../../../{}", p.pci), ibd.join("device"))?;
            symlink(
                format!("../../{pci_rel}/infiniband/{ib}"),
                self.root.join("class/infiniband").join(ib),
            )?;
            let port = ibd.join("ports/1");
            mkdirs(&ibd, "ports/1", 0o755)?;
            file(&port.join("link_layer"), 0o444, "Ethernet\n")?;
            file(&port.join("state"), 0o444, "4: ACTIVE\n")?;
            file(&port.join("phys_state"), 0o444, "5: LinkUp\n")?;
            mkdir(&port.join("gids"), 0o755)?;
            mkdirs(&port, "gid_attrs/types", 0o755)?;
            mkdir(&port.join("gid_attrs/ndevs"), 0o755)?;
            for (i, t) in gid_types(p.model).iter().enumerate() {
                file(
                    &port.join("gids").join(i.to_string()),
                    0o444,
                    &format!("{}\n", p.default_gid()),
                )?;
                file(
                    &port.join("gid_attrs/types").join(i.to_string()),
                    0o444,
                    &format!("{t}\n"),
                )?;
                file(
                    &port.join("gid_attrs/ndevs").join(i.to_string()),
                    0o444,
                    &format!("{}\n", p.ifname),
                )?;
            }
            mkdir(&port.join("hw_counters"), 0o755)?;
            for name in hw_counter_names(p.model) {
                file(&port.join("hw_counters").join(name), 0o444, "0\n")?;
            }
            file(&port.join("hw_counters/lifespan"), 0o644, "10\n")?;
            if ofed {
                // MLNX_OFED mlx5_ib (main_ext.c init_tc_sysfs, init_ttl_sysfs)
                mkdirs(&ibd, "tc/1", 0o755)?;
                file(&ibd.join("tc/1/traffic_class"), 0o644, "")?;
                mkdirs(&ibd, "ttl/1", 0o755)?;
                file(&ibd.join("ttl/1/ttl"), 0o644, "0\n")?;
            }
        }
        Ok(())
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

fn mkdir(p: &Path, mode: u32) -> io::Result<()> {
    fs::create_dir(p)?;
    fs::set_permissions(p, fs::Permissions::from_mode(mode))
}

/// Creates every missing directory of `rel` under `base` with `mode`.
fn mkdirs(base: &Path, rel: &str, mode: u32) -> io::Result<()> {
    let mut p = base.to_path_buf();
    for c in rel.split('/') {
        p.push(c);
        if !p.exists() {
            mkdir(&p, mode)?;
        }
    }
    Ok(())
}

fn mkdir_all_mode(base: &Path, target: &Path, mode: u32) -> io::Result<()> {
    let rel = target.strip_prefix(base).map_err(|_| {
        invalid(format!(
            "{} is not under {}",
            target.display(),
            base.display()
        ))
    })?;
    mkdirs(base, &rel.to_string_lossy(), mode)
}

fn file(p: &Path, mode: u32, contents: &str) -> io::Result<()> {
    fs::write(p, contents)?;
    fs::set_permissions(p, fs::Permissions::from_mode(mode))
}

fn remove_if_there(p: &Path) -> io::Result<()> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

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
//! ROOT/devices/pci0000:00/PCI/net/IF/               the netdev (net/core/net-sysfs.c)
//!     address        0444  "02:..:..\n"             the MAC (Port::mac, or derived from PCI)
//!     mtu            0644  "1500\n"                 w: kstrtoul base 0 (EINVAL, ERANGE), then
//!                                                   dev_set_mtu: < 68 or > the model's max_mtu
//!                                                   EINVAL (netdev_store, dev_validate_mtu)
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
//!         attributes fail ENODEV until a device of that name comes back
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
//! flavour here. The netdev's maximum MTU per model: [`max_mtu`].
//!
//! What every file refuses, whatever it is (the library, for paths under ROOT):
//! opening a 0444 attribute for writing EACCES even for root (kernfs_fop_open,
//! configfs_open_file); O_CREAT of a name that does not exist EACCES (fs/namei.c
//! lookup_open: no ->create in sysfs, configfs, debugfs); mkdir and rmdir in sysfs and
//! debugfs EPERM (kernfs_iop_mkdir/rmdir, vfs_mkdir/vfs_rmdir without the op); unlink
//! EPERM (vfs_unlink; configfs_unlink of a non-link); O_TRUNC and truncate() change
//! nothing (kernfs takes the size and ignores it). A write is one store: the buffer
//! written (up to a page) is the whole value, whatever the file offset; on success the
//! file shows the new value whole, on refusal it keeps the old one. A write on a file
//! whose device went (an fd opened before [`HostTree::unplug`]) fails ENODEV (sysfs,
//! kernfs_get_active) or EIO (debugfs, debugfs_file_get); opening it after fails ENOENT.
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
//! configfs group shows them) is kept beside the root, in `ROOT.kstate/`.
//!
//! # The Rust side
//!
//! [`Port`] (`Port::new(ifname, model, pci)`, `.ofed()`, `.ibdev(name)`, `.mac(mac)`),
//! [`HostTree`] (`new(&[Port])`, `root()`, `configfs()`, `debugfs()`, `unplug(ifname)`,
//! `replug(ifname)`: laid again at power-on values, `set_counter(ibdev, name, value)`,
//! `write_file(rel, contents)` and `read_file(rel)` behind the library's back),
//! [`hw_counter_names`], [`max_mtu`].

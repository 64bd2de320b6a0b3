//! The emulated RoCE host tree (src/sysfs.rs) and the kernel's write semantics on it
//! (c/sysfs.c): the layout per model and flavour, then what a shell (dash, and
//! coreutils' mkdir, rmdir, rm, cat) under the emulated driver may and may not do, and
//! what the driver's log says it did.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use lossless_testkit::oracle::{require, Oracle};
use lossless_testkit::sysfs::{gid_types, hw_counter_names, mtu_range, CC_PARAMS};
use lossless_testkit::{HostTree, LogEntry, Model, Port, ShimEnv, TempDir};

const EACCES: i32 = 13;
const EINVAL: i32 = 22;
const ERANGE: i32 = 34;
const ENODEV: i32 = 19;
const EPERM: i32 = 1;
const EEXIST: i32 = 17;
const EIO: i32 = 5;

fn ports() -> Vec<Port> {
    vec![
        Port::new("cx0", Model::Mlx5, "0000:41:00.0")
            .ofed()
            .ibdev("mlx5_0"),
        Port::new("cx1", Model::Mlx5, "0000:41:00.1").ibdev("mlx5_1"),
        Port::new("e810", Model::Ice, "0000:5e:00.0").ibdev("irdma0"),
        Port::new("bnx", Model::Bnxt, "0000:61:00.0").ibdev("bnxt_re0"),
        Port::new("hns", Model::Hns3, "0000:7d:00.0").ibdev("hns_0"),
        Port::new("xl", Model::I40e, "0000:81:00.0"),
        Port::new("ix", Model::Ixgbe, "0000:82:00.0"),
        Port::new("gen", Model::Generic, "0000:83:00.0"),
    ]
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_tree_is_laid_as_the_kernel_lays_it() {
    let t = HostTree::new(&ports()).expect("tree");
    let r = t.root();
    for p in t.ports() {
        let pci = format!("devices/pci0000:00/{}", p.pci);
        // class/net/IF is a link to the netdev under the PCI function; its device link
        // goes to the function, whose driver link names the PCI driver
        assert_eq!(
            std::fs::read_link(r.join("class/net").join(&p.ifname)).expect("link"),
            Path::new(&format!("../../{pci}/net/{}", p.ifname))
        );
        assert_eq!(
            std::fs::canonicalize(r.join(format!("class/net/{}/device", p.ifname))).expect("dev"),
            r.join(&pci)
        );
        let drv = std::fs::read_link(r.join(&pci).join("driver")).expect("driver");
        assert_eq!(
            drv.file_name().expect("name").to_string_lossy(),
            lossless_testkit::sysfs::pci_driver(p.model)
        );
        assert_eq!(
            t.read_file(&format!("class/net/{}/mtu", p.ifname))
                .expect("mtu"),
            "1500\n"
        );
        assert_eq!(
            t.mode(&format!("class/net/{}/mtu", p.ifname))
                .expect("mode"),
            0o644
        );
        assert_eq!(
            t.mode(&format!("class/net/{}/operstate", p.ifname))
                .expect("m"),
            0o444
        );
        assert_eq!(
            t.read_file(&format!("class/net/{}/operstate", p.ifname))
                .expect("op"),
            "up\n"
        );
        // the RDMA device of a netdev: the entry under class/net/IF/device/infiniband/
        let ib_dir = r.join(format!("class/net/{}/device/infiniband", p.ifname));
        match &p.ibdev {
            None => assert!(!ib_dir.exists(), "{}", p.ifname),
            Some(ib) => {
                assert_eq!(names(&ib_dir), BTreeSet::from([ib.clone()]));
                assert_eq!(
                    std::fs::canonicalize(r.join("class/infiniband").join(ib)).expect("ib"),
                    r.join(&pci).join("infiniband").join(ib)
                );
                let port = format!("class/infiniband/{ib}/ports/1");
                let counters = names(&r.join(&port).join("hw_counters"));
                let mut want: BTreeSet<String> = hw_counter_names(p.model)
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                want.insert("lifespan".into());
                assert_eq!(counters, want, "{ib}");
                for c in hw_counter_names(p.model) {
                    let rel = format!("{port}/hw_counters/{c}");
                    assert_eq!(t.mode(&rel).expect("mode"), 0o444, "{rel}");
                    assert_eq!(t.read_file(&rel).expect("counter"), "0\n", "{rel}");
                }
                assert_eq!(
                    t.mode(&format!("{port}/hw_counters/lifespan")).expect("m"),
                    0o644
                );
                let types: Vec<String> = (0..gid_types(p.model).len())
                    .map(|i| {
                        t.read_file(&format!("{port}/gid_attrs/types/{i}"))
                            .expect("type")
                    })
                    .collect();
                let want: Vec<String> = gid_types(p.model)
                    .iter()
                    .map(|s| format!("{s}\n"))
                    .collect();
                assert_eq!(types, want);
                assert_eq!(
                    t.read_file(&format!("{port}/link_layer")).expect("ll"),
                    "Ethernet\n"
                );
                let ofed = p.flavour == lossless_testkit::Flavour::Ofed;
                assert_eq!(
                    r.join(format!("class/infiniband/{ib}/tc/1/traffic_class"))
                        .exists(),
                    ofed
                );
            }
        }
        // MLNX_OFED's ecn/ only with the OFED flavour; mlx5's debugfs with either
        let ecn = r.join(format!("class/net/{}/ecn", p.ifname));
        assert_eq!(ecn.exists(), p.flavour == lossless_testkit::Flavour::Ofed);
        let cc = r.join(format!("kernel/debug/mlx5/{}/cc_params", p.pci));
        assert_eq!(cc.exists(), p.model == Model::Mlx5, "{}", p.ifname);
    }
    // the counters of the drivers named in the brief, from their sources
    for c in [
        "np_cnp_sent",
        "rp_cnp_handled",
        "np_ecn_marked_roce_packets",
        "rp_cnp_ignored",
        "out_of_sequence",
        "packet_seq_err",
        "local_ack_timeout_err",
        "implied_nak_seq_err",
        "duplicate_request",
        "rnr_nak_retry_err",
    ] {
        assert!(hw_counter_names(Model::Mlx5).contains(&c), "{c}");
    }
    assert!(hw_counter_names(Model::Ice).contains(&"cnpSent"));
    assert!(hw_counter_names(Model::Bnxt).contains(&"rx_ecn_marked_pkts"));
    assert!(hw_counter_names(Model::Hns3).contains(&"tx_cnp_pkt"));
    // MLNX_OFED's files: every priority's DCQCN on, the CNP's DSCP 48 and priority 6
    for dir in ["roce_rp", "roce_np"] {
        let e = names(&r.join(format!("class/net/cx0/ecn/{dir}/enable")));
        assert_eq!(e, (0..8).map(|i| i.to_string()).collect());
        for i in 0..8 {
            let rel = format!("class/net/cx0/ecn/{dir}/enable/{i}");
            assert_eq!(t.read_file(&rel).expect("enable"), "1\n");
            assert_eq!(t.mode(&rel).expect("mode"), 0o644);
        }
    }
    assert_eq!(
        t.read_file("class/net/cx0/ecn/roce_np/cnp_dscp")
            .expect("dscp"),
        "48\n"
    );
    assert_eq!(
        t.read_file("class/net/cx0/ecn/roce_np/cnp_802p_prio")
            .expect("p"),
        "6\n"
    );
    let cc: BTreeSet<String> = CC_PARAMS.iter().map(|(n, _, _)| n.to_string()).collect();
    assert_eq!(
        names(&r.join("kernel/debug/mlx5/0000:41:00.1/cc_params")),
        cc
    );
    assert_eq!(
        t.mode("kernel/debug/mlx5/0000:41:00.1/cc_params/np_cnp_dscp")
            .expect("m"),
        0o600
    );
    assert_eq!(t.mode("kernel/debug").expect("m"), 0o700);
    assert_eq!(
        t.read_file("class/infiniband/mlx5_1/tc/1/traffic_class")
            .ok(),
        None
    );
    assert_eq!(
        t.read_file("class/infiniband/mlx5_0/tc/1/traffic_class")
            .expect("tc"),
        ""
    );
    // configfs: rdma_cm exists, empty
    assert!(names(&t.configfs().join("rdma_cm")).is_empty());
    assert_eq!(t.mode("kernel/config/rdma_cm").expect("m"), 0o755);
    // the default GID is the MAC's EUI-64 link-local address
    assert_eq!(
        t.read_file("class/infiniband/mlx5_0/ports/1/gids/0")
            .expect("gid"),
        "fe80:0000:0000:0000:0000:00ff:fe41:0000\n"
    );
    assert_eq!(mtu_range(Model::Bnxt), (60, 9500));
}

#[test]
fn a_tree_the_drivers_could_not_lay_is_refused() {
    let e = HostTree::new(&[Port::new("xl", Model::I40e, "0000:81:00.0").ibdev("i40iw0")]);
    assert!(e.is_err());
    let e = HostTree::new(&[Port::new("e", Model::Ice, "0000:81:00.0").ofed()]);
    assert!(e.is_err());
    let e = HostTree::new(&[
        Port::new("a", Model::Mlx5, "0000:81:00.0"),
        Port::new("b", Model::Mlx5, "0000:81:00.0"),
    ]);
    assert!(e.is_err());
}

/// A shell under the emulated driver with the tree; the log is in `dir`.
struct Rig {
    tree: HostTree,
    _dir: TempDir,
    env: ShimEnv,
}

impl Rig {
    fn new() -> Rig {
        let tree = HostTree::new(&ports()).expect("tree");
        let dir = TempDir::new();
        let env = ShimEnv::new(dir.path(), &[]).sysfs(tree.root());
        Rig {
            tree,
            _dir: dir,
            env,
        }
    }

    /// `sh -c script` with ROOT in $R, under the emulated driver.
    fn sh(&self, script: &str) -> Output {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script).env("R", self.tree.root());
        self.env.apply(&mut c);
        c.output().expect("sh")
    }

    /// The log lines of file operations since the last call.
    fn file_log(&self, from: &mut usize) -> Vec<LogEntry> {
        let all: Vec<LogEntry> = self
            .env
            .log()
            .into_iter()
            .filter(|e| e.cmd.starts_with("SYSFS_"))
            .collect();
        let new = all[*from..].to_vec();
        *from = all.len();
        new
    }

    fn read(&self, rel: &str) -> String {
        self.tree
            .read_file(rel)
            .unwrap_or_else(|e| panic!("{rel}: {e}"))
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout {}\nstderr {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The one SYSFS_WRITE among `log`, which must also hold its SYSFS_OPEN.
fn the_write(log: &[LogEntry]) -> &LogEntry {
    let w: Vec<&LogEntry> = log.iter().filter(|e| e.cmd == "SYSFS_WRITE").collect();
    assert_eq!(w.len(), 1, "{log:#?}");
    w[0]
}

#[test]
fn the_rdma_cm_group_takes_what_the_kernel_takes() {
    if !require(
        "the_rdma_cm_group_takes_what_the_kernel_takes",
        &[Oracle::Gcc],
    ) {
        return;
    }
    let rig = Rig::new();
    let mut at = 0;
    let g = "kernel/config/rdma_cm/mlx5_0/ports/1";
    // mkdir of a name that is no RDMA device: ENODEV (make_cma_dev)
    let o = rig.sh("mkdir $R/kernel/config/rdma_cm/mlx5_9");
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("No such device"),
        "{}",
        text(&o)
    );
    let log = rig.file_log(&mut at);
    assert_eq!(log.len(), 1, "{log:#?}");
    assert_eq!(
        (log[0].cmd.as_str(), log[0].errno()),
        ("SYSFS_MKDIR", Some(ENODEV))
    );
    assert!(!rig.tree.path("kernel/config/rdma_cm/mlx5_9").exists());
    // the group of an RDMA device, at the device's values
    let o = rig.sh("mkdir $R/kernel/config/rdma_cm/mlx5_0");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(&format!("{g}/default_roce_mode")), "RoCE v2\n");
    assert_eq!(rig.read(&format!("{g}/default_roce_tos")), "0\n");
    assert_eq!(
        rig.tree.mode(&format!("{g}/default_roce_tos")).expect("m"),
        0o644
    );
    let log = rig.file_log(&mut at);
    assert_eq!(
        (log[0].cmd.as_str(), log[0].ok()),
        ("SYSFS_MKDIR", true),
        "{log:#?}"
    );
    // again: EEXIST; inside the group: EPERM
    let o = rig.sh("mkdir $R/kernel/config/rdma_cm/mlx5_0");
    assert!(!o.status.success());
    assert_eq!(rig.file_log(&mut at)[0].errno(), Some(EEXIST));
    let o = rig.sh("mkdir $R/kernel/config/rdma_cm/mlx5_0/ports/2");
    assert!(!o.status.success());
    assert_eq!(rig.file_log(&mut at)[0].errno(), Some(EPERM));

    // default_roce_tos: kstrtou8 base 0
    for (input, errno, shown) in [
        ("300", Some(ERANGE), "0\n"),
        ("abc", Some(EINVAL), "0\n"),
        ("-1", Some(EINVAL), "0\n"),
        (" 5", Some(EINVAL), "0\n"),
        ("106", None, "106\n"),
        ("0x20", None, "32\n"),
        ("010", None, "8\n"),
        ("+7", None, "7\n"),
    ] {
        let o = rig.sh(&format!(
            "printf '%s\\n' '{input}' > $R/{g}/default_roce_tos"
        ));
        assert_eq!(o.status.success(), errno.is_none(), "{input}: {}", text(&o));
        let log = rig.file_log(&mut at);
        let w = the_write(&log);
        assert_eq!(w.errno(), errno, "{input}: {w:?}");
        assert_eq!(w.path(), Some(format!("{g}/default_roce_tos").as_str()));
        assert_eq!(w.value(), Some(format!("{input}\n").into_bytes()));
        assert_eq!(w.ifname, "cx0");
        assert_eq!(rig.read(&format!("{g}/default_roce_tos")), shown, "{input}");
        if errno.is_none() {
            assert_eq!(w.shown().as_deref(), Some(shown));
        }
    }
    // default_roce_mode: exactly the strings ib_cache_gid_parse_type_str accepts
    for (input, errno, shown) in [
        ("roce v2", Some(EINVAL), "RoCE v2\n"),
        ("RoCE v3", Some(EINVAL), "RoCE v2\n"),
        ("IB/RoCE v1", None, "IB/RoCE v1\n"),
        ("RoCE v2", None, "RoCE v2\n"),
    ] {
        let o = rig.sh(&format!("echo '{input}' > $R/{g}/default_roce_mode"));
        assert_eq!(o.status.success(), errno.is_none(), "{input}: {}", text(&o));
        assert_eq!(the_write(&rig.file_log(&mut at)).errno(), errno, "{input}");
        assert_eq!(rig.read(&format!("{g}/default_roce_mode")), shown);
    }
    // without the newline too (printf), and two newlines are refused
    let o = rig.sh(&format!("printf 'IB/RoCE v1' > $R/{g}/default_roce_mode"));
    assert!(o.status.success(), "{}", text(&o));
    let o = rig.sh(&format!(
        "printf 'RoCE v2\\n\\n' > $R/{g}/default_roce_mode"
    ));
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(&format!("{g}/default_roce_mode")), "IB/RoCE v1\n");
    rig.file_log(&mut at);
    // irdma's port supports RoCE v2 only: v1 is EINVAL (cma_set_default_gid_type)
    let o = rig.sh("mkdir $R/kernel/config/rdma_cm/irdma0 && \
         echo 'IB/RoCE v1' > $R/kernel/config/rdma_cm/irdma0/ports/1/default_roce_mode");
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(the_write(&rig.file_log(&mut at)).errno(), Some(EINVAL));
    assert_eq!(
        rig.read("kernel/config/rdma_cm/irdma0/ports/1/default_roce_mode"),
        "RoCE v2\n"
    );
    // the values live in the device: rmdir and mkdir again shows them
    let o = rig.sh(&format!("echo 106 > $R/{g}/default_roce_tos"));
    assert!(o.status.success());
    let o = rig.sh("rmdir $R/kernel/config/rdma_cm/mlx5_0/ports/1");
    assert!(!o.status.success(), "{}", text(&o));
    let o =
        rig.sh("rmdir $R/kernel/config/rdma_cm/mlx5_0 && mkdir $R/kernel/config/rdma_cm/mlx5_0");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(&format!("{g}/default_roce_tos")), "106\n");
    assert_eq!(rig.read(&format!("{g}/default_roce_mode")), "IB/RoCE v1\n");
    let log = rig.file_log(&mut at);
    let cmds: Vec<(&str, Option<i32>)> = log.iter().map(|e| (e.cmd.as_str(), e.errno())).collect();
    assert_eq!(
        cmds,
        [
            ("SYSFS_OPEN", None),
            ("SYSFS_WRITE", None),
            ("SYSFS_RMDIR", Some(EPERM)),
            ("SYSFS_RMDIR", None),
            ("SYSFS_MKDIR", None)
        ]
    );
}

#[test]
fn read_only_files_and_new_files_are_refused() {
    if !require("read_only_files_and_new_files_are_refused", &[Oracle::Gcc]) {
        return;
    }
    let rig = Rig::new();
    let mut at = 0;
    let c = "class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent";
    rig.tree
        .set_counter("mlx5_1", "np_cnp_sent", 42)
        .expect("set");
    // 0444: EACCES at open, even for root (kernfs_fop_open)
    let o = rig.sh(&format!("echo 0 > $R/{c}"));
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("Permission denied"),
        "{}",
        text(&o)
    );
    assert_eq!(rig.read(c), "42\n");
    let log = rig.file_log(&mut at);
    assert_eq!(log.len(), 1, "{log:#?}");
    assert_eq!(
        (log[0].cmd.as_str(), log[0].errno()),
        ("SYSFS_OPEN", Some(EACCES))
    );
    assert_eq!(log[0].field("refused"), Some("read_only"));
    // reading it is fine, and shows what the test set
    let o = rig.sh(&format!("cat $R/{c}"));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "42\n", "{}", text(&o));
    // a new file: EACCES (lookup_open), not created
    let o = rig.sh("echo 1 > $R/class/net/cx1/newfile");
    assert!(!o.status.success(), "{}", text(&o));
    assert!(!rig.tree.path("class/net/cx1/newfile").exists());
    assert_eq!(rig.file_log(&mut at)[0].errno(), Some(EACCES));
    // mkdir, rm and rmdir in sysfs: EPERM
    for cmd in [
        "mkdir $R/class/net/cx1/x",
        "rm -f $R/class/net/cx1/mtu",
        "rmdir $R/class/infiniband/mlx5_1/ports/1/gids",
    ] {
        let o = rig.sh(cmd);
        assert!(!o.status.success(), "{cmd}: {}", text(&o));
        let log = rig.file_log(&mut at);
        assert_eq!(
            log.last().and_then(LogEntry::errno),
            Some(EPERM),
            "{cmd}: {log:#?}"
        );
    }
    assert!(rig.tree.path("class/net/cx1/mtu").exists());
    // O_TRUNC does not empty a file; the value written is the whole value
    let o = rig.sh("echo 9000 > $R/class/net/cx1/mtu");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read("class/net/cx1/mtu"), "9000\n");
    rig.file_log(&mut at);
    for (v, errno) in [
        ("70000", EINVAL),
        ("abc", EINVAL),
        ("9979", EINVAL),
        ("67", EINVAL),
    ] {
        let o = rig.sh(&format!("echo {v} > $R/class/net/cx1/mtu"));
        assert!(!o.status.success(), "{v}");
        assert_eq!(
            the_write(&rig.file_log(&mut at)).errno(),
            Some(errno),
            "{v}"
        );
    }
    assert_eq!(rig.read("class/net/cx1/mtu"), "9000\n");
    // lifespan: kstrtoint base 10, 0..10000
    let l = "class/infiniband/mlx5_1/ports/1/hw_counters/lifespan";
    let o = rig.sh(&format!(
        "echo 10001 > $R/{l}; echo 0x10 > $R/{l}; echo 250 > $R/{l}"
    ));
    assert!(o.status.success(), "{}", text(&o));
    let errs: Vec<Option<i32>> = rig
        .file_log(&mut at)
        .iter()
        .filter(|e| e.cmd == "SYSFS_WRITE")
        .map(LogEntry::errno)
        .collect();
    assert_eq!(errs, [Some(EINVAL), Some(EINVAL), None]);
    assert_eq!(rig.read(l), "250\n");
}

#[test]
fn mlnx_ofed_ecn_and_the_debugfs_cc_params_are_one_firmware_setting() {
    if !require(
        "mlnx_ofed_ecn_and_the_debugfs_cc_params_are_one_firmware_setting",
        &[Oracle::Gcc],
    ) {
        return;
    }
    let rig = Rig::new();
    let mut at = 0;
    let np = "class/net/cx0/ecn/roce_np";
    let cc = "kernel/debug/mlx5/0000:41:00.0/cc_params";
    // enable: sscanf %d, bit 0 kept
    for (v, ok, shown) in [
        ("0", true, "0\n"),
        ("3", true, "1\n"),
        ("2", true, "0\n"),
        ("x", false, "0\n"),
        ("+1", false, "0\n"),
        ("1", true, "1\n"),
    ] {
        let o = rig.sh(&format!("echo {v} > $R/{np}/enable/3"));
        assert_eq!(o.status.success(), ok, "{v}: {}", text(&o));
        assert_eq!(rig.read(&format!("{np}/enable/3")), shown, "{v}");
    }
    rig.file_log(&mut at);
    // cnp_dscp: the 6-bit field keeps the low bits; the debugfs view follows
    let o = rig.sh(&format!("echo 26 > $R/{np}/cnp_dscp"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(&format!("{np}/cnp_dscp")), "26\n");
    assert_eq!(rig.read(&format!("{cc}/np_cnp_dscp")), "26\n");
    let o = rig.sh(&format!("echo 64 > $R/{np}/cnp_dscp"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(&format!("{np}/cnp_dscp")), "0\n");
    let o = rig.sh(&format!("echo 8 > $R/{np}/cnp_802p_prio"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(&format!("{np}/cnp_802p_prio")), "0\n");
    assert_eq!(rig.read(&format!("{cc}/np_cnp_prio")), "0\n");
    let o = rig.sh(&format!("echo abc > $R/{np}/cnp_dscp"));
    assert!(!o.status.success());
    assert_eq!(rig.read(&format!("{np}/cnp_dscp")), "0\n");
    rig.file_log(&mut at);
    // debugfs: more than 11 bytes EINVAL; kstrtou32 failures EINVAL; np_cnp_prio
    // selects the configured priority (np_cnp_prio_mode 0)
    rig.tree
        .write_file(&format!("{cc}/np_cnp_prio_mode"), "1\n")
        .expect("mode");
    for (v, errno) in [
        ("123456789012", Some(EINVAL)),
        ("-1", Some(EINVAL)),
        ("4294967296", Some(EINVAL)),
        ("5", None),
    ] {
        let o = rig.sh(&format!("echo {v} > $R/{cc}/np_cnp_prio"));
        assert_eq!(o.status.success(), errno.is_none(), "{v}: {}", text(&o));
        assert_eq!(the_write(&rig.file_log(&mut at)).errno(), errno, "{v}");
    }
    assert_eq!(rig.read(&format!("{cc}/np_cnp_prio")), "5\n");
    assert_eq!(rig.read(&format!("{cc}/np_cnp_prio_mode")), "0\n");
    assert_eq!(rig.read(&format!("{np}/cnp_802p_prio")), "5\n");
    // the inbox port has the debugfs view only
    let o = rig.sh("echo 24 > $R/kernel/debug/mlx5/0000:41:00.1/cc_params/np_cnp_dscp");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        rig.read("kernel/debug/mlx5/0000:41:00.1/cc_params/np_cnp_dscp"),
        "24\n"
    );
    // traffic_class: the global class
    let tc = "class/infiniband/mlx5_0/tc/1/traffic_class";
    let o = rig.sh(&format!("echo 106 > $R/{tc}"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(tc), "Global tclass=106\n");
    let o = rig.sh(&format!("echo 256 > $R/{tc}"));
    assert!(!o.status.success());
    assert_eq!(rig.read(tc), "Global tclass=106\n");
    let o = rig.sh(&format!("echo -1 > $R/{tc}"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(tc), "");
}

#[test]
fn a_device_that_goes_takes_its_settings_and_its_files() {
    if !require(
        "a_device_that_goes_takes_its_settings_and_its_files",
        &[Oracle::Gcc],
    ) {
        return;
    }
    let rig = Rig::new();
    let mut at = 0;
    let g = "kernel/config/rdma_cm/mlx5_0/ports/1";
    let o = rig.sh(&format!(
        "mkdir $R/kernel/config/rdma_cm/mlx5_0 && echo 106 > $R/{g}/default_roce_tos && \
         echo 0 > $R/class/net/cx0/ecn/roce_np/enable/3"
    ));
    assert!(o.status.success(), "{}", text(&o));
    rig.file_log(&mut at);
    rig.tree.unplug("cx0").expect("unplug");
    assert!(!rig.tree.path("class/net/cx0").exists());
    assert!(!rig.tree.path("class/infiniband/mlx5_0").exists());
    assert!(!rig.tree.path("kernel/debug/mlx5/0000:41:00.0").exists());
    // the group stays; its attributes fail ENODEV, after the ToS is parsed
    assert!(rig.tree.path(g).is_dir());
    let o = rig.sh(&format!("cat $R/{g}/default_roce_tos"));
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("No such device"),
        "{}",
        text(&o)
    );
    let o = rig.sh(&format!(
        "echo 300 > $R/{g}/default_roce_tos; echo 7 > $R/{g}/default_roce_tos"
    ));
    assert!(!o.status.success());
    let errs: Vec<Option<i32>> = rig
        .file_log(&mut at)
        .iter()
        .filter(|e| e.cmd == "SYSFS_WRITE")
        .map(LogEntry::errno)
        .collect();
    assert_eq!(errs, [Some(ERANGE), Some(ENODEV)]);
    // a file of the gone netdev: ENOENT
    let o = rig.sh("echo 1 > $R/class/net/cx0/ecn/roce_np/enable/3");
    assert!(!o.status.success());
    // back: the power-on values, the group shows the new device's
    rig.tree.replug("cx0").expect("replug");
    assert_eq!(rig.read("class/net/cx0/ecn/roce_np/enable/3"), "1\n");
    let o = rig.sh(&format!(
        "cat $R/{g}/default_roce_tos $R/{g}/default_roce_mode"
    ));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "0\nRoCE v2\n",
        "{}",
        text(&o)
    );
    let o = rig.sh(&format!("echo 7 > $R/{g}/default_roce_tos"));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(rig.read(&format!("{g}/default_roce_tos")), "7\n");
}

#[test]
fn an_fd_opened_before_the_device_went_is_dead() {
    if !require(
        "an_fd_opened_before_the_device_went_is_dead",
        &[Oracle::Gcc],
    ) {
        return;
    }
    let rig = Rig::new();
    let fifos = TempDir::new();
    let (opened, go) = (fifos.path().join("opened"), fifos.path().join("go"));
    for f in [&opened, &go] {
        nix::unistd::mkfifo(f, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("fifo");
    }
    // the shell opens the files, says so, waits for the go, then writes through them
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(
            "exec 3> $R/class/net/cx0/ecn/roce_np/cnp_dscp 4> $R/kernel/debug/mlx5/0000:41:00.0/cc_params/np_cnp_dscp; \
             echo opened > $O; read x < $G; \
             echo 10 >&3; echo a=$?; echo 10 >&4; echo b=$?",
        )
        .env("R", rig.tree.root())
        .env("O", &opened)
        .env("G", &go)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    rig.env.apply(&mut c);
    let child = c.spawn().expect("sh");
    let said = std::fs::read_to_string(&opened).expect("opened");
    assert_eq!(said, "opened\n");
    rig.tree.unplug("cx0").expect("unplug");
    rig.tree.replug("cx0").expect("replug");
    std::fs::write(&go, "go\n").expect("go");
    let o = child.wait_with_output().expect("wait");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("a=") && !out.contains("a=0"), "{}", text(&o));
    assert!(out.contains("b=") && !out.contains("b=0"), "{}", text(&o));
    let errs: Vec<Option<i32>> = rig
        .env
        .log()
        .iter()
        .filter(|e| e.cmd == "SYSFS_WRITE")
        .map(LogEntry::errno)
        .collect();
    // sysfs: kernfs_get_active fails, ENODEV; debugfs: EIO
    assert_eq!(errs, [Some(ENODEV), Some(EIO)]);
    // the new device is at its power-on value
    assert_eq!(rig.read("class/net/cx0/ecn/roce_np/cnp_dscp"), "48\n");
}

#[test]
fn without_the_variable_nothing_is_intercepted() {
    if !require(
        "without_the_variable_nothing_is_intercepted",
        &[Oracle::Gcc],
    ) {
        return;
    }
    let tree = HostTree::new(&ports()).expect("tree");
    let dir = TempDir::new();
    // the driver preloaded, but no LOSSLESS_DCBDRV_SYSFS: plain files
    let env = ShimEnv::new(dir.path(), &[]);
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("echo 300 > $R/class/net/cx1/mtu && mkdir $R/class/x")
        .env("R", tree.root());
    env.apply(&mut c);
    let o = c.output().expect("sh");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(tree.read_file("class/net/cx1/mtu").expect("mtu"), "300\n");
    assert!(tree.path("class/x").is_dir());
    assert!(
        env.log().iter().all(|e| !e.cmd.starts_with("SYSFS_")),
        "{}",
        env.log_text()
    );
}

#[test]
fn truncate_refuses_what_vfs_truncate_refuses() {
    if !require("truncate_refuses_what_vfs_truncate_refuses", &[Oracle::Gcc]) {
        return;
    }
    let rig = Rig::new();
    // truncate(2) of a directory: EISDIR (vfs_truncate); ftruncate(2) of an fd open
    // only for reading: EINVAL (do_ftruncate); of a writable one: nothing changes
    let o = rig.sh("perl -e '
            truncate(\"$ENV{R}/class/net/cx1\", 0) and die \"dir truncated\\n\";
            print \"dir=\", $!+0, \"\\n\";
            open(my $r, \"<\", \"$ENV{R}/class/net/cx1/mtu\") or die \"open: $!\\n\";
            truncate($r, 0) and die \"read-only fd truncated\\n\";
            print \"rofd=\", $!+0, \"\\n\";
            open(my $w, \"+<\", \"$ENV{R}/class/net/cx1/mtu\") or die \"open rw: $!\\n\";
            truncate($w, 0) or die \"rw fd: $!\\n\";
            print \"rwfd=ok\\n\";
        '");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "dir=21\nrofd=22\nrwfd=ok\n",
        "{}",
        text(&o)
    );
    assert_eq!(rig.read("class/net/cx1/mtu"), "1500\n");
}

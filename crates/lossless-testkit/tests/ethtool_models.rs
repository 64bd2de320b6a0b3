//! The emulated driver's ethtool side, per model, against an ethtool client we did not
//! write (Debian's `ethtool` 6.1: generic netlink for pause and private flags, the
//! `SIOCETHTOOL` ioctl for statistics and the driver's name) and against ours
//! (lossless-sys's `EthtoolNl` and `EthtoolStats`, in a child process under the
//! driver): both read the same link flow control and private flags; what one sets the
//! other reads; what the real driver refuses comes back to both with its errno (and
//! the kernel's extack message where the kernel gives one); the statistics a test sets
//! are read under the model's names; ice's `fw-lldp-agent` and i40e's `disable-fw-lldp`
//! flags are the firmware agent that dcbnl sees; interfaces the driver does not
//! emulate answer as the kernel does.

use std::collections::BTreeMap;
use std::process::Output;

use lossless_testkit::oracle::{require, ETHTOOL_TOOL};
use lossless_testkit::{
    dcb_tool, ethtool_tool, output_text, DriverState, Model, Netns, Pair, ShimEnv, TempDir, Veth,
};

const CHILD: &str = "LOSSLESS_TESTKIT_ETHTOOL_CHILD";

/// One emulated NIC, `va` of a veth pair, with Debian's ethtool and ours.
struct Nic {
    p: Pair,
    shim: ShimEnv,
    _tmp: TempDir,
}

impl Nic {
    fn new(model: Model) -> Nic {
        Nic::with(|s| s.model(model))
    }

    fn with(shim: impl FnOnce(ShimEnv) -> ShimEnv) -> Nic {
        let tmp = TempDir::new();
        let shim = shim(ShimEnv::new(&tmp.path().join("driver"), &["va"]));
        Nic {
            p: Pair::up(),
            shim,
            _tmp: tmp,
        }
    }

    /// Debian's `ethtool ARGS` in va's namespace under the driver.
    fn ethtool(&self, args: &str) -> Output {
        ethtool_tool(
            &self.p.a,
            &self.shim,
            &args.split_whitespace().collect::<Vec<_>>(),
        )
    }

    /// `ethtool ARGS`, which must succeed: its standard output.
    fn ethtool_ok(&self, args: &str) -> String {
        let o = self.ethtool(args);
        assert!(
            o.status.success(),
            "ethtool {args}: {}\n{}",
            output_text(&o),
            self.shim.log_text()
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn dcb(&self, args: &str) -> Output {
        dcb_tool(
            &self.p.a,
            &self.shim,
            &args.split_whitespace().collect::<Vec<_>>(),
        )
    }

    /// This test binary again, in va's namespace under the driver, running
    /// `ethtool_child` on `script` (commands separated by `;`): what each said.
    fn ours(&self, script: &str) -> Vec<String> {
        let exe = std::env::current_exe().expect("this test binary");
        let mut c = self.p.a.command(exe);
        self.shim.apply(&mut c);
        let out = c
            .env(CHILD, script)
            .args([
                "--exact",
                "ethtool_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .output()
            .expect("the child");
        let said = output_text(&out);
        assert!(out.status.success(), "{script}: {said}");
        let answers: Vec<String> = said
            .lines()
            .filter_map(|l| l.split_once(" => ").map(|(_, a)| a.to_string()))
            .collect();
        assert_eq!(answers.len(), script.split(';').count(), "{said}");
        answers
    }

    /// What lossless-sys says to one command of `ethtool_child`.
    fn our(&self, cmd: &str) -> String {
        self.ours(cmd).remove(0)
    }

    fn state(&self) -> DriverState {
        self.shim
            .state("va")
            .unwrap_or_else(|| panic!("no state file\n{}", self.shim.log_text()))
    }

    /// The log line of the last `CMD` request (`PAUSE_SET`, `PRIVFLAGS_SET`, ...).
    fn last(&self, cmd: &str) -> lossless_testkit::LogEntry {
        self.shim
            .log()
            .into_iter()
            .rev()
            .find(|e| e.cmd == cmd)
            .unwrap_or_else(|| panic!("no {cmd} in the log\n{}", self.shim.log_text()))
    }
}

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// `ethtool -a`'s answer as `autoneg=X rx=X tx=X` (on/off), the form the child prints.
fn ethtool_pause(out: &str) -> String {
    let field = |name: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {name} in {out}"))
    };
    format!(
        "autoneg={} rx={} tx={}",
        field("Autonegotiate:"),
        field("RX:"),
        field("TX:")
    )
}

/// `ethtool --show-priv-flags`'s answer as `name=on,name=off,..`, the child's form.
fn ethtool_flags(out: &str) -> String {
    out.lines()
        .skip_while(|l| !l.starts_with("Private flags for"))
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| format!("{}={}", n.trim(), v.trim()))
        .collect::<Vec<_>>()
        .join(",")
}

/// `ethtool -S`'s statistics by name.
fn ethtool_stats(out: &str) -> BTreeMap<String, u64> {
    out.lines()
        .skip(1)
        .filter_map(|l| l.trim().split_once(": "))
        .map(|(n, v)| (n.to_string(), v.parse().expect("a number")))
        .collect()
}

/// The child's `stats` answer (`name=value,..`) by name.
fn our_stats(said: &str) -> BTreeMap<String, u64> {
    said.split(',')
        .filter_map(|kv| kv.rsplit_once('='))
        .map(|(n, v)| (n.to_string(), v.parse().expect("a number")))
        .collect()
}

/// The text of an errno as ethtool prints it (`strerror`).
fn strerror(errno: i32) -> String {
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    s.split(" (os error").next().unwrap_or_default().to_string()
}

/// What each model answers at power-on: link flow control, private flags (None: the
/// driver has no priv flag ops, or, for the generic one, the veth answers), the
/// driver's name.
struct PowerOn {
    model: Model,
    pause: &'static str,
    flags: Option<&'static str>,
    driver: &'static str,
}

const POWER_ON: [PowerOn; 7] = [
    PowerOn {
        model: Model::Generic,
        pause: "autoneg=off rx=on tx=on",
        flags: None,
        driver: "veth",
    },
    PowerOn {
        model: Model::Mlx5,
        pause: "autoneg=off rx=on tx=on",
        flags: Some(
            "rx_cqe_moder=on,tx_cqe_moder=off,rx_cqe_compress=off,rx_striding_rq=on,\
             rx_no_csum_complete=off,xdp_tx_mpwqe=on,skb_tx_mpwqe=on,tx_port_ts=off",
        ),
        driver: "mlx5_core",
    },
    PowerOn {
        model: Model::Ice,
        pause: "autoneg=on rx=on tx=on",
        flags: Some(
            "link-down-on-close=off,fw-lldp-agent=off,vf-true-promisc-support=off,\
             mdd-auto-reset-vf=off,vf-vlan-pruning=off",
        ),
        driver: "ice",
    },
    PowerOn {
        model: Model::I40e,
        pause: "autoneg=on rx=on tx=on",
        flags: Some(
            "MFP=off,total-port-shutdown=off,LinkPolling=off,flow-director-atr=on,\
             veb-stats=off,hw-atr-eviction=off,link-down-on-close=off,legacy-rx=off,\
             disable-source-pruning=off,disable-fw-lldp=on,rs-fec=off,base-r-fec=off,\
             vf-vlan-pruning=off,mdd-auto-reset-vf=off,vf-true-promisc-support=off",
        ),
        driver: "i40e",
    },
    PowerOn {
        model: Model::Bnxt,
        pause: "autoneg=on rx=on tx=on",
        flags: None,
        driver: "bnxt_en",
    },
    PowerOn {
        model: Model::Hns3,
        pause: "autoneg=off rx=on tx=on",
        flags: Some("limit_promisc=off"),
        driver: "hns3",
    },
    PowerOn {
        model: Model::Ixgbe,
        pause: "autoneg=off rx=on tx=on",
        flags: Some("legacy-rx=off,vf-ipsec=off,mdd-disable-vf=off"),
        driver: "ixgbe",
    },
];

#[test]
fn both_clients_read_each_models_power_on_pause_flags_and_driver() {
    if !require(
        "both_clients_read_each_models_power_on_pause_flags_and_driver",
        ETHTOOL_TOOL,
    ) {
        return;
    }
    for want in &POWER_ON {
        let n = Nic::new(want.model);
        let m = want.model;
        assert_eq!(ethtool_pause(&n.ethtool_ok("-a va")), want.pause, "{m}");
        let ours = n.ours("pause va;flags va;driver va");
        assert_eq!(ours[0], want.pause, "{m}");
        let flags = n.ethtool("--show-priv-flags va");
        match want.flags {
            Some(f) => {
                assert!(flags.status.success(), "{m}: {}", output_text(&flags));
                assert_eq!(
                    ethtool_flags(&String::from_utf8_lossy(&flags.stdout)),
                    f,
                    "{m}"
                );
                assert_eq!(ours[1], f, "{m}");
            }
            None => {
                // No private flags: EOPNOTSUPP to both (bnxt's driver has no ops; the
                // generic driver's are the veth's, and the kernel answers).
                assert!(!flags.status.success(), "{m}: {}", output_text(&flags));
                let text = output_text(&flags);
                assert!(
                    text.contains(&strerror(nix::libc::EOPNOTSUPP)),
                    "{m}: {text}"
                );
                assert_eq!(ours[1], "err=EOPNOTSUPP msg=-", "{m}");
            }
        }
        let info = n.ethtool_ok("-i va");
        assert!(
            info.lines().next() == Some(&format!("driver: {}", want.driver)),
            "{m}: {info}"
        );
        assert_eq!(ours[2], want.driver, "{m}");
    }
}

#[test]
fn what_one_client_sets_the_other_reads() {
    if !require("what_one_client_sets_the_other_reads", ETHTOOL_TOOL) {
        return;
    }
    // A private flag each driver takes without conditions on this NIC.
    let toggles = [
        (Model::Generic, None),
        (Model::Mlx5, Some("rx_cqe_compress")),
        (Model::Ice, Some("link-down-on-close")),
        (Model::I40e, Some("LinkPolling")),
        (Model::Bnxt, None),
        (Model::Hns3, Some("limit_promisc")),
        (Model::Ixgbe, Some("vf-ipsec")),
    ];
    for (m, flag) in toggles {
        let n = Nic::new(m);
        // ethtool sets, ours reads; ours sets, ethtool reads.
        n.ethtool_ok("-A va tx off");
        assert!(n.our("pause va").ends_with("rx=on tx=off"), "{m}");
        assert_eq!(n.last("PAUSE_SET").result, "ok", "{m}");
        assert_eq!(n.our("set_pause va - off on"), "ok", "{m}");
        assert!(
            ethtool_pause(&n.ethtool_ok("-a va")).ends_with("rx=off tx=on"),
            "{m}"
        );
        assert!(!n.state().pause().1, "{m}");
        // Asking for what is already so reaches no driver (ethnl_set_pause).
        let sets = n.state().sets();
        assert_eq!(n.our("set_pause va - off on"), "ok", "{m}");
        assert_eq!(n.state().sets(), sets, "{m}");
        let Some(flag) = flag else {
            continue;
        };
        n.ethtool_ok(&format!("--set-priv-flags va {flag} on"));
        assert!(n.our("flags va").contains(&format!("{flag}=on")), "{m}");
        assert_eq!(n.our(&format!("set_flag va {flag} off")), "ok", "{m}");
        let shown = ethtool_flags(&n.ethtool_ok("--show-priv-flags va"));
        assert!(shown.contains(&format!("{flag}=off")), "{m}: {shown}");
        assert_eq!(
            n.last("PRIVFLAGS_SET").field(&format!("flag.{flag}")),
            Some("off")
        );
    }
}

/// A set both clients make, refused by the driver with `errno`: ethtool fails naming
/// the errno (and the kernel's message), ours with the errno and the same message.
fn refused_to_both(n: &Nic, ethtool: &str, ours: &str, errno: i32, message: Option<&str>) {
    let o = n.ethtool(ethtool);
    let text = output_text(&o);
    assert!(!o.status.success(), "ethtool {ethtool}: {text}");
    assert!(text.contains(&strerror(errno)), "ethtool {ethtool}: {text}");
    if let Some(msg) = message {
        assert!(text.contains(msg), "ethtool {ethtool}: {text}");
    }
    let name = lossless_sys::ethtool_nl::errno_name(errno);
    assert_eq!(
        n.our(ours),
        format!("err={name} msg={}", message.unwrap_or("-")),
        "{ours}"
    );
}

#[test]
fn each_model_refuses_as_its_driver_to_both_clients() {
    if !require(
        "each_model_refuses_as_its_driver_to_both_clients",
        ETHTOOL_TOOL,
    ) {
        return;
    }
    // mlx5e_ethtool_set_pauseparam, ixgbe_set_pauseparam: no autoneg of flow control.
    for m in [Model::Mlx5, Model::Ixgbe] {
        let n = Nic::new(m);
        refused_to_both(
            &n,
            "-A va autoneg on",
            "set_pause va on - -",
            nix::libc::EINVAL,
            None,
        );
        assert_eq!(n.last("PAUSE_SET").result, "err=-22", "{m}");
        assert!(!n.state().pause().0, "{m}");
    }
    // ice and i40e: autoneg is changed with `ethtool -s`, not here.
    for m in [Model::Ice, Model::I40e] {
        let n = Nic::new(m);
        refused_to_both(
            &n,
            "-A va autoneg off",
            "set_pause va off - -",
            nix::libc::EOPNOTSUPP,
            None,
        );
        let e = n.last("PAUSE_SET");
        assert_eq!(e.field(&format!("{m}.refused")), Some("autoneg_change"));
    }
    // ice, i40e, hns3: no link flow control while PFC is enabled; ethtool reads it off.
    for m in [Model::Ice, Model::I40e, Model::Hns3] {
        let n = Nic::new(m);
        let pfc = n.dcb("pfc set dev va prio-pfc 3:on");
        assert!(pfc.status.success(), "{m}: {}", output_text(&pfc));
        assert_eq!(n.state().ieee_pfc_en(), 0x08, "{m}\n{}", n.shim.log_text());
        let read = ethtool_pause(&n.ethtool_ok("-a va"));
        assert!(read.ends_with("rx=off tx=off"), "{m}: {read}");
        assert!(n.our("pause va").ends_with("rx=off tx=off"), "{m}");
        refused_to_both(
            &n,
            "-A va rx on",
            "set_pause va - on -",
            nix::libc::EOPNOTSUPP,
            None,
        );
        assert_eq!(
            n.last("PAUSE_SET").field(&format!("{m}.refused")),
            Some("pfc_enabled")
        );
        // Off again: what the driver was told before reads back.
        assert!(n.dcb("pfc set dev va prio-pfc 3:off").status.success());
        assert!(
            ethtool_pause(&n.ethtool_ok("-a va")).ends_with("rx=on tx=on"),
            "{m}"
        );
    }
    // hns3 without a PHY records the user's values before it refuses autoneg.
    let n = Nic::new(Model::Hns3);
    refused_to_both(
        &n,
        "-A va autoneg on rx off",
        "set_pause va on off -",
        nix::libc::EOPNOTSUPP,
        None,
    );
    assert_eq!(
        ethtool_pause(&n.ethtool_ok("-a va")),
        "autoneg=off rx=off tx=on"
    );
    // bnxt has no private flag ops.
    let n = Nic::new(Model::Bnxt);
    refused_to_both(
        &n,
        "--set-priv-flags va legacy-rx on",
        "set_flag va legacy-rx on",
        nix::libc::EOPNOTSUPP,
        None,
    );
    // A flag the driver does not have: the kernel's bitset refusal and its message.
    let n = Nic::new(Model::Mlx5);
    refused_to_both(
        &n,
        "--set-priv-flags va no-such-flag on",
        "set_flag va no-such-flag on",
        nix::libc::EOPNOTSUPP,
        Some("bit name not found"),
    );
    // i40e_set_priv_flags: read-only flags, no ATR eviction on the XL710, FEC on a
    // 25G device only; nothing changes.
    let n = Nic::new(Model::I40e);
    for (flag, why) in [
        ("MFP", "read_only_flag"),
        ("hw-atr-eviction", "no_atr_evict_cap"),
        ("rs-fec", "fec_not_25g"),
    ] {
        refused_to_both(
            &n,
            &format!("--set-priv-flags va {flag} on"),
            &format!("set_flag va {flag} on"),
            nix::libc::EOPNOTSUPP,
            None,
        );
        assert_eq!(n.last("PRIVFLAGS_SET").field("i40e.refused"), Some(why));
    }
    let i40e = POWER_ON
        .iter()
        .find(|p| p.model == Model::I40e)
        .and_then(|p| p.flags);
    assert_eq!(Some(n.our("flags va").as_str()), i40e);
}

#[test]
fn the_firmware_agent_flag_is_the_agent_dcbnl_sees() {
    if !require(
        "the_firmware_agent_flag_is_the_agent_dcbnl_sees",
        ETHTOOL_TOOL,
    ) {
        return;
    }
    // ice: fw-lldp-agent, on from power-on with LOSSLESS_DCBDRV_FW_AGENT.
    let n = Nic::with(|s| s.model(Model::Ice).fw_agent(&["va"]));
    assert!(n.our("flags va").contains("fw-lldp-agent=on"));
    assert!(n.dcb("pfc set dev va prio-pfc 3:on").status.success());
    assert_eq!(
        n.last("IEEE_SET").field("pfc.refused"),
        Some("fw_lldp_agent")
    );
    assert!(n.state().fw_agent());
    // ethtool stops the agent: the host owns DCBX, and dcbnl's PFC goes through.
    n.ethtool_ok("--set-priv-flags va fw-lldp-agent off");
    assert!(!n.state().fw_agent());
    assert!(n.dcb("pfc set dev va prio-pfc 3:on").status.success());
    assert_eq!(n.last("IEEE_SET").result, "ok", "{}", n.shim.log_text());
    assert_eq!(n.state().ieee_pfc_en(), 0x08);
    // ours starts it again: DCB is read back from the firmware (its defaults here),
    // the link restarts (ice_nway_reset), dcbnl is refused again.
    let resets = n.state().link_resets();
    assert_eq!(n.our("set_flag va fw-lldp-agent on"), "ok");
    let st = n.state();
    assert!(st.fw_agent());
    assert_eq!(st.ieee_pfc_en(), 0);
    assert_eq!(st.link_resets(), resets + 1);
    assert!(ethtool_flags(&n.ethtool_ok("--show-priv-flags va")).contains("fw-lldp-agent=on"));
    // In DSCP QoS mode the agent may not start (EOPNOTSUPP), and the flag stays off.
    n.ethtool_ok("--set-priv-flags va fw-lldp-agent off");
    assert!(n.dcb("app add dev va dscp-prio 26:3").status.success());
    refused_to_both(
        &n,
        "--set-priv-flags va fw-lldp-agent on",
        "set_flag va fw-lldp-agent on",
        nix::libc::EOPNOTSUPP,
        None,
    );
    assert_eq!(
        n.last("PRIVFLAGS_SET").field("ice.refused"),
        Some("dscp_qos_mode")
    );
    assert!(!n.state().fw_agent());
    assert!(n.our("flags va").contains("fw-lldp-agent=off"));

    // i40e: disable-fw-lldp, the other way round; a change resets the PF.
    let n = Nic::with(|s| s.model(Model::I40e).fw_agent(&["va"]));
    assert!(n.our("flags va").contains("disable-fw-lldp=off"));
    n.ethtool_ok("--set-priv-flags va disable-fw-lldp on");
    let st = n.state();
    assert!(!st.fw_agent());
    assert_eq!(st.link_resets(), 1, "{}", n.shim.log_text());
    assert!(n.dcb("pfc set dev va prio-pfc 4:on").status.success());
    assert_eq!(n.state().ieee_pfc_en(), 0x10, "{}", n.shim.log_text());
    assert_eq!(n.our("set_flag va disable-fw-lldp off"), "ok");
    assert!(n.state().fw_agent());
    assert!(n.dcb("pfc set dev va prio-pfc 4:off").status.success());
    assert_eq!(
        n.last("IEEE_SET").field("pfc.refused"),
        Some("fw_lldp_agent")
    );
}

#[test]
fn statistics_set_by_the_test_are_read_under_each_models_names() {
    if !require(
        "statistics_set_by_the_test_are_read_under_each_models_names",
        ETHTOOL_TOOL,
    ) {
        return;
    }
    // Per-priority PFC counters and discards, as each driver names them.
    let cases: [(Model, &[(&str, u64)]); 6] = [
        (
            Model::Mlx5,
            &[
                ("rx_prio0_packets", 11),
                ("rx_prio3_discards", 4),
                ("rx_prio3_buf_discard", 5),
                ("rx_prio3_cong_discard", 6),
                ("tx_pause_storm_error_events", 3),
                ("rx_global_pause", 2),
            ],
        ),
        (
            Model::Ice,
            &[("rx_priority_3_xoff.nic", 42), ("tx_priority_3_xon.nic", 7)],
        ),
        (
            Model::I40e,
            &[
                ("port.rx_priority_3_xoff_rx", 42),
                ("port.rx_priority_3_xon_2_xoff", 1),
            ],
        ),
        (
            Model::Bnxt,
            &[
                ("rx_pfc_ena_frames_pri3", 42),
                ("pfc_pri3_rx_duration_us", 900),
                ("rx_discard_packets_cos3", 8),
            ],
        ),
        (
            Model::Hns3,
            &[
                ("mac_rx_pfc_pri3_pkt_num", 42),
                ("mac_rx_pfc_pri3_xoff_time", 77),
            ],
        ),
        (Model::Ixgbe, &[("rx_pb_3_pxoff", 42), ("tx_pb_3_pxon", 2)]),
    ];
    for (m, stats) in cases {
        let n = Nic::new(m);
        let before = ethtool_stats(&n.ethtool_ok("-S va"));
        assert!(before.values().all(|&v| v == 0), "{m}: power-on {before:?}");
        for &(name, value) in stats {
            assert!(before.contains_key(name), "{m}: no {name} in {before:?}");
            n.shim.set_stat("va", name, value);
        }
        let after = ethtool_stats(&n.ethtool_ok("-S va"));
        let ours = our_stats(&n.our("stats va"));
        assert_eq!(ours, after, "{m}: EthtoolStats and ethtool -S");
        for &(name, value) in stats {
            assert_eq!(after.get(name), Some(&value), "{m}: {name}");
            assert_eq!(n.state().stat(name), value, "{m}: {name}");
        }
        assert_eq!(
            after.values().filter(|&&v| v != 0).count(),
            stats.len(),
            "{m}"
        );
    }

    // mlx5 counts a priority's pause statistics while PFC is on there, and the global
    // ones while link pause is: the list follows the NIC; a value waits for its name.
    let n = Nic::new(Model::Mlx5);
    n.shim.set_stat("va", "rx_prio3_pause_duration", 1234);
    let stats = ethtool_stats(&n.ethtool_ok("-S va"));
    assert!(!stats.contains_key("rx_prio3_pause_duration"));
    assert!(stats.contains_key("tx_global_pause_duration"));
    assert!(n.dcb("pfc set dev va prio-pfc 3:on").status.success());
    n.ethtool_ok("-A va rx off tx off");
    let stats = ethtool_stats(&n.ethtool_ok("-S va"));
    assert_eq!(stats.get("rx_prio3_pause_duration"), Some(&1234));
    assert!(!stats.contains_key("tx_prio3_pause_transition"));
    assert!(stats.contains_key("rx_prio3_pause_transition"));
    assert!(!stats.contains_key("tx_global_pause_duration"));
    assert_eq!(our_stats(&n.our("stats va")), stats);
    // get_pause_stats (ethtool -I -a): mlx5's PHY pause control frame counters.
    n.shim.set_stat("va", "rx_pause_ctrl_phy", 17);
    let pause = n.ethtool_ok("-I -a va");
    assert!(pause.contains("rx_pause_frames: 17"), "{pause}");
    assert!(pause.contains("tx_pause_frames: 0"), "{pause}");
}

#[test]
fn interfaces_the_driver_does_not_emulate_answer_as_the_kernel_does() {
    if !require(
        "interfaces_the_driver_does_not_emulate_answer_as_the_kernel_does",
        ETHTOOL_TOOL,
    ) {
        return;
    }
    let n = Nic::new(Model::Mlx5);
    // A second veth in va's namespace, not in LOSSLESS_DCBDRV_IFACES.
    let other = Netns::new();
    Veth::new(
        &n.p.a,
        "vx",
        "02:00:00:00:00:1a",
        &other,
        "vy",
        "02:00:00:00:00:1b",
    );
    let plain = |args: &[&str]| {
        n.p.a
            .command("ethtool")
            .args(args)
            .output()
            .expect("ethtool")
    };
    for args in [
        &["-a", "vx"][..],
        &["-a", "lo"],
        &["--show-priv-flags", "vx"],
        &["-S", "vx"],
        &["-i", "vx"],
        &["-A", "vx", "rx", "off"],
        &["--set-priv-flags", "vx", "rx_cqe_compress", "on"],
        &["-a", "no-such-dev"],
    ] {
        let kernel = plain(args);
        let shimmed = ethtool_tool(&n.p.a, &n.shim, args);
        assert_eq!(
            (output_text(&shimmed), shimmed.status.code()),
            (output_text(&kernel), kernel.status.code()),
            "ethtool {}",
            args.join(" ")
        );
    }
    let ours = n.ours("pause vx;flags vx;pause lo;driver vx");
    assert_eq!(ours[0], "err=EOPNOTSUPP msg=-");
    assert_eq!(ours[1], "err=EOPNOTSUPP msg=-");
    assert_eq!(ours[2], "err=EOPNOTSUPP msg=-");
    assert_eq!(ours[3], "veth");
    assert_eq!(
        n.our("pause no-such-dev"),
        "err=ENODEV msg=no device matches name"
    );
    // Nothing about vx reached the driver.
    assert!(!n.shim.log_text().contains(" vx "), "{}", n.shim.log_text());
}

#[test]
#[ignore = "a child of the tests that need a process of their own under the driver"]
fn ethtool_child() {
    let Ok(script) = std::env::var(CHILD) else {
        return;
    };
    use lossless_sys::ethtool::EthtoolStats;
    use lossless_sys::ethtool_nl::{EthtoolError, EthtoolNl};
    let said = |r: Result<String, EthtoolError>| match r {
        Ok(s) => s,
        Err(e) => format!(
            "err={} msg={}",
            e.errno_name().unwrap_or_else(|| format!("{e}")),
            e.message().unwrap_or("-")
        ),
    };
    let io = |r: std::io::Result<String>| match r {
        Ok(s) => s,
        Err(e) => format!("err={e}"),
    };
    let opt = |w: &str| match w {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    };
    let mut nl = EthtoolNl::open().expect("the ethtool family");
    let stats = EthtoolStats::open().expect("a socket");
    for cmd in script.split(';') {
        let words: Vec<&str> = cmd.split_whitespace().collect();
        let answer = match words.as_slice() {
            ["pause", ifname] => said(
                nl.pause(ifname)
                    .map(|p| format!("autoneg={} rx={} tx={}", on(p.autoneg), on(p.rx), on(p.tx))),
            ),
            ["set_pause", ifname, a, r, t] => said(
                nl.set_pause(ifname, opt(a), opt(r), opt(t))
                    .map(|()| "ok".into()),
            ),
            ["flags", ifname] => said(nl.private_flags(ifname).map(|f| {
                f.iter()
                    .map(|(n, v)| format!("{n}={}", on(*v)))
                    .collect::<Vec<_>>()
                    .join(",")
            })),
            ["set_flag", ifname, name, v] => said(
                nl.set_private_flag(ifname, name, *v == "on")
                    .map(|()| "ok".into()),
            ),
            ["stats", ifname] => io((|| {
                let n = stats.count(ifname)?;
                let names = stats.names(ifname, n)?;
                let mut buf = Vec::new();
                let values = stats.values(ifname, n, &mut buf)?;
                Ok(names
                    .iter()
                    .zip(values)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(","))
            })()),
            ["driver", ifname] => io(stats.driver(ifname)),
            other => panic!("no child command {other:?}"),
        };
        println!("child: {cmd} => {answer}");
    }
}

/// ETHTOOL_SPAUSEPARAM by ioctl (perl, as the tests' code has no `unsafe`) with
/// autoneg, rx and tx as given (ethtool(8) only sends 0 or 1): "ok" or the errno.
fn raw_set_pause(n: &Nic, autoneg: u32, rx: u32, tx: u32) -> String {
    let script = format!(
        "socket(my $s, 2, 2, 0) or die \"socket: $!\";
         my $pp = pack('L4', 0x13, {autoneg}, {rx}, {tx});
         my $ifr = pack('a16 p x16', 'va', $pp);
         print ioctl($s, 0x8946, $ifr) ? 'ok' : 'err=' . ($!+0);"
    );
    let mut c = n.p.a.command("perl");
    n.shim.apply(&mut c);
    let o = c.arg("-e").arg(&script).output().expect("perl");
    assert!(o.status.success(), "{}", output_text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn an_ioctl_autoneg_word_that_is_neither_on_nor_off_is_refused_by_ice_and_i40e() {
    if !require(
        "an_ioctl_autoneg_word_that_is_neither_on_nor_off_is_refused_by_ice_and_i40e",
        ETHTOOL_TOOL,
    ) {
        return;
    }
    // ethtool_set_pauseparam hands the u32 on as it came; ice_set_pauseparam and
    // i40e_set_pauseparam compare it with the PHY's 0 or 1: 2 is a change, EOPNOTSUPP.
    for m in [Model::Ice, Model::I40e] {
        let n = Nic::new(m);
        assert!(
            ethtool_pause(&n.ethtool_ok("-a va")).starts_with("autoneg=on"),
            "{m}"
        );
        assert_eq!(
            raw_set_pause(&n, 2, 1, 1),
            format!("err={}", nix::libc::EOPNOTSUPP),
            "{m}\n{}",
            n.shim.log_text()
        );
        assert_eq!(raw_set_pause(&n, 1, 1, 1), "ok", "{m}");
    }
}

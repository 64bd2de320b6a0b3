//! The emulated DCB driver's models (`LOSSLESS_DCBDRV_MODEL`) against a dcbnl client we
//! did not write: iproute2's `dcb` programs each model's NIC and reads back what it
//! holds. What the real driver refuses is refused with the status the driver answers
//! (the log's `status=N`, the reply's byte; `dcb app` reports it, `dcb ets`, `pfc` and
//! `buffer` of iproute2 6.1 do not) and leaves the NIC as it was; what it accepts is
//! held, as it reads back. Link flaps are seen in the kernel's carrier counter.
//!
//! Every `dcb` run is a new process: they share the NIC through the state file. The
//! sharing itself, and a firmware reset behind a running process's back, are checked
//! with a long-running reader (this test binary run again under the driver, asking
//! with lossless-sys's dcbnl client). That child also sends the requests `dcb` cannot
//! express (an ETS whose strict TC has bandwidth).

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use lossless_testkit::oracle::{require, DCB_TOOL};
use lossless_testkit::{
    dcb_tool, output_text, DriverState, LogEntry, Model, Pair, ShimEnv, TempDir,
};

const CHILD: &str = "LOSSLESS_TESTKIT_DCBNL_CHILD";
const WAIT: Duration = Duration::from_secs(10);

/// The words of `dcb OBJECT VERB dev va ARGS..` for `cmd`, "OBJECT VERB ARGS.." (split
/// at white space): every command of these tests is on `va`.
fn argv(cmd: &str) -> Vec<&str> {
    let mut words: Vec<&str> = cmd.split_whitespace().collect();
    assert!(words.len() >= 2, "not OBJECT VERB ..: {cmd}");
    words.splice(2..2, ["dev", "va"]);
    words
}

/// One emulated NIC, `va` of a veth pair, under `dcb`.
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

    /// `dcb CMD` on va ([`argv`]).
    fn dcb(&self, cmd: &str) -> Output {
        dcb_tool(&self.p.a, &self.shim, &argv(cmd))
    }

    /// `dcb -N WHAT show dev va`, which must succeed; its lines, each trimmed.
    fn show(&self, what: &str) -> String {
        let args = ["-N", what, "show", "dev", "va"];
        let o = dcb_tool(&self.p.a, &self.shim, &args);
        assert!(
            o.status.success(),
            "dcb {}: {}\n{}",
            args.join(" "),
            output_text(&o),
            self.shim.log_text()
        );
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn state(&self) -> DriverState {
        self.shim
            .state("va")
            .unwrap_or_else(|| panic!("no state file\n{}", self.shim.log_text()))
    }

    /// The log line of the last set command `dcb CMD` sent.
    fn set(&self, cmd: &str) -> (Output, LogEntry) {
        let before = self.shim.log().len();
        let o = self.dcb(cmd);
        let entry = self.shim.log()[before..]
            .iter()
            .rev()
            .find(|e| e.cmd.starts_with("IEEE_") || e.cmd == "SDCBX")
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "dcb {cmd} sent no set: {}\n{}",
                    output_text(&o),
                    self.shim.log_text()
                )
            });
        (o, entry)
    }

    /// A set the driver refuses with `status` (negative errno, or a driver's positive
    /// status) for the reason `why` (a word of the log line).
    fn refused(&self, cmd: &str, status: i32, why: &str) -> Output {
        let (o, e) = self.set(cmd);
        assert_eq!(e.result, format!("status={status}"), "{e:?}");
        assert!(e.words.iter().any(|w| w == why), "{why} not in {e:?}");
        o
    }

    /// A `dcb app` set the driver refuses with the errno `-status`, as [`Nic::refused`]:
    /// `dcb` fails, naming the errno.
    fn app_refused(&self, cmd: &str, status: i32, why: &str) {
        let o = self.refused(cmd, status, why);
        let errno = std::io::Error::from_raw_os_error(-status).to_string();
        let errno = errno.split(" (os error").next().unwrap_or_default();
        assert!(!o.status.success(), "{}", output_text(&o));
        assert!(output_text(&o).contains(errno), "{}", output_text(&o));
    }

    /// PFC and APP sets refused with EINVAL, the log saying `pfc.refused=WHY` and
    /// `app.refused=WHY`.
    fn ieee_sets_refused(&self, why: &str) {
        self.refused("pfc set prio-pfc 3:on", -22, &format!("pfc.refused={why}"));
        self.app_refused("app add dscp-prio 26:3", -22, &format!("app.refused={why}"));
    }

    /// A set the driver takes: the reply's status is 0.
    fn taken(&self, cmd: &str) -> LogEntry {
        let (o, e) = self.set(cmd);
        assert!(e.ok(), "{e:?}\n{}", output_text(&o));
        e
    }

    /// How often the kernel saw va's carrier come and go (an oracle for link flaps).
    fn carrier_changes(&self) -> u64 {
        let out = self.p.a.exec(&["cat", "/sys/class/net/va/carrier_changes"]);
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("carrier_changes")
    }

    fn link_resets(&self) -> u64 {
        self.state().link_resets()
    }

    /// This test binary run again under the driver, in va's namespace, as the child
    /// `what`.
    fn child(&self, what: &str) -> Command {
        let exe = std::env::current_exe().expect("this test binary");
        let mut c = self.p.a.command(exe);
        self.shim.apply(&mut c);
        c.env(CHILD, what).args([
            "--exact",
            "dcbnl_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ]);
        c
    }
}

#[test]
fn mlx5_takes_dscp_app_entries_only_and_reads_back_what_it_programmed() {
    if !require(
        "mlx5_takes_dscp_app_entries_only_and_reads_back_what_it_programmed",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::new(Model::Mlx5);
    // Power-on: vendor TSA at 100 % everywhere, priorities 0 and 1 swapped, 7 m of cable,
    // a DCB buffer.
    let ets = n.show("ets");
    assert!(ets.contains("tc-tsa 0:vendor 1:vendor 2:vendor"), "{ets}");
    assert!(ets.contains("prio-tc 0:1 1:0 2:2 3:3"), "{ets}");
    assert_eq!(n.show("dcbx"), "host cee ieee");
    assert!(n.show("pfc").contains("delay 7"), "{}", n.show("pfc"));
    assert!(n.show("buffer").contains("total-size 1Mb"));

    // APP: DSCP taken, anything else EINVAL, the table unchanged.
    n.taken("app add dscp-prio 26:3");
    assert_eq!(n.show("app"), "dscp-prio 26:3");
    n.app_refused(
        "app add dgram-port-prio 4791:3",
        -22,
        "app.refused=sel_3_not_dscp",
    );
    assert_eq!(n.show("app"), "dscp-prio 26:3");
    // A DSCP again is a replacement, never EEXIST.
    n.taken("app add dscp-prio 26:5");
    assert_eq!(n.show("app"), "dscp-prio 26:5");
    // Deleting a priority the NIC does not map is ENOENT.
    n.app_refused(
        "app del dscp-prio 26:3",
        -2,
        "app.refused=dscp_26_programmed_prio_5",
    );
    assert_eq!(n.state().num("hw.trust_dscp"), 1);

    // ETS: the bandwidths of the ETS TCs sum to 100 (dcb checks all TCs together).
    n.refused(
        "ets set tc-tsa all:strict 0:ets 1:ets tc-bw all:0 0:50 1:30 2:20",
        -22,
        "ets.refused=ets_bw_sum_80_not_100",
    );
    assert!(n.show("ets").contains("tc-tsa 0:vendor"));
    n.taken("ets set tc-tsa all:strict 0:ets 1:ets tc-bw all:0 0:60 1:40 prio-tc all:0 3:1");
    // Read back as programmed: a strict TC runs at 100 %.
    let ets = n.show("ets");
    assert!(
        ets.contains("tc-bw 0:60 1:40 2:100 3:100 4:100 5:100 6:100 7:100"),
        "{ets}"
    );
    assert!(ets.contains("tc-tsa 0:ets 1:ets 2:strict"), "{ets}");
    assert!(ets.contains("prio-tc 0:0 1:0 2:0 3:1 4:0"), "{ets}");

    // PFC: a change toggles the port link, the same again does not; the delay is the
    // cable length, kept.
    let carrier = n.carrier_changes();
    let e = n.taken("pfc set prio-pfc 3:on");
    assert_eq!(e.field("link.reset"), Some("down_up"), "{e:?}");
    assert_eq!(n.link_resets(), 1);
    assert!(n.carrier_changes() > carrier);
    n.taken("pfc set prio-pfc 3:on");
    assert_eq!(n.link_resets(), 1);
    n.taken("pfc set delay 30");
    let pfc = n.show("pfc");
    assert!(pfc.contains("delay 30"), "{pfc}");
    assert!(
        pfc.contains("prio-pfc 0:off 1:off 2:off 3:on 4:off"),
        "{pfc}"
    );
    assert_eq!(n.link_resets(), 1);

    // Buffer: buffer 0 holds priority 3, now lossless, so it must hold a PFC round
    // trip; sizes are kept in 128-byte cells.
    n.refused(
        "buffer set buffer-size 0:64K",
        -12,
        "buffer.refused=lossless_buffer_0_size_65536_under_101918",
    );
    assert!(n.show("buffer").contains("buffer-size 0:256Kb"));
    n.taken("buffer set buffer-size 0:300000");
    assert_eq!(n.state().list("buffer_size")[0], 300_032);

    // DCBX: host-managed modes taken as given; LLD_MANAGED refused with status 1.
    n.taken("dcbx set host ieee");
    assert_eq!(n.show("dcbx"), "host ieee");
    n.refused("dcbx set lld-managed ieee", 1, "mode=0x0a");
    assert_eq!(n.show("dcbx"), "host ieee");
}

#[test]
fn mlx5_with_the_firmware_agent_starts_with_firmware_dcbx() {
    if !require(
        "mlx5_with_the_firmware_agent_starts_with_firmware_dcbx",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::with(|s| s.model(Model::Mlx5).fw_agent(&["va"]));
    assert_eq!(n.show("dcbx"), "cee ieee");
    // mlx5 programs anyway, and a host mode takes DCBX back from the firmware.
    n.taken("app add dscp-prio 10:1");
    n.taken("dcbx set host cee ieee");
    assert_eq!(n.show("dcbx"), "host cee ieee");
    assert_eq!(n.state().num("hw.fw_mode"), 0);
}

#[test]
fn ice_refuses_app_and_ets_as_the_driver_and_flaps_the_link_on_a_change_only() {
    if !require(
        "ice_refuses_app_and_ets_as_the_driver_and_flaps_the_link_on_a_change_only",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::new(Model::Ice);
    assert_eq!(n.show("dcbx"), "host ieee");
    let ets = n.show("ets");
    assert!(ets.contains("willing on"), "{ets}");
    assert!(ets.contains("tc-tsa 0:ets 1:strict 2:strict"), "{ets}");
    // The mode already set: ICE_DCB_NO_HW_CHG, a positive status dcb reports.
    let o = n.refused("dcbx set host ieee", 1, "dcbx.refused=mode_unchanged");
    assert!(!o.status.success(), "{}", output_text(&o));
    n.app_refused(
        "app add dgram-port-prio 4791:3",
        -22,
        "app.refused=sel_3_not_dscp",
    );

    // ETS: the TCs the priorities use (0 and 1) sum to 70: refused, and the refused ETS
    // stays in the driver's desired configuration, so PFC is refused too.
    n.refused(
        "ets set prio-tc all:0 3:1 tc-tsa 0:ets 1:ets 2:ets tc-bw 0:50 1:20 2:30",
        -22,
        "ice.refused=bw_sum_70_over_2_tcs_not_100",
    );
    assert!(n.show("ets").contains("prio-tc 0:0 1:0 2:0 3:0"));
    n.refused(
        "pfc set prio-pfc 3:on",
        -22,
        "ice.refused=bw_sum_70_over_2_tcs_not_100",
    );
    assert!(n.show("pfc").contains("3:off"));

    // A good ETS: applied, the netdev closed and reopened; the same again changes
    // nothing and does not flap.
    let carrier = n.carrier_changes();
    let ets = "ets set prio-tc all:0 3:1 4:1 tc-tsa 0:ets 1:ets 2:strict tc-bw 0:50 1:50 2:0";
    let e = n.taken(ets);
    assert_eq!(e.field("link.reset"), Some("down_up"), "{e:?}");
    assert_eq!(n.link_resets(), 1);
    assert!(n.carrier_changes() >= carrier + 2);
    let e = n.taken(ets);
    assert_eq!(e.field("ice.applied"), Some("no_change"), "{e:?}");
    assert_eq!(n.link_resets(), 1);
    assert!(n.show("ets").contains("prio-tc 0:0 1:0 2:0 3:1 4:1 5:0"));
    // The PFC refused above stayed in the desired configuration too: the ETS applied it.
    assert!(n
        .show("pfc")
        .contains("prio-pfc 0:off 1:off 2:off 3:on 4:off"));
    n.taken("pfc set prio-pfc 4:on");
    assert_eq!(n.link_resets(), 2);
    n.taken("pfc set prio-pfc 4:on");
    assert_eq!(n.link_resets(), 2);

    // The first DSCP entry switches the port to DSCP QoS: priority i on TC i.
    let e = n.taken("app add dscp-prio 10:1");
    assert_eq!(e.field("ice.qos_mode"), Some("dscp"), "{e:?}");
    assert_eq!(n.link_resets(), 3);
    let ets = n.show("ets");
    assert!(ets.contains("willing off"), "{ets}");
    assert!(
        ets.contains("prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7"),
        "{ets}"
    );
    // A DSCP mapped already is EINVAL (the driver does not replace).
    n.app_refused(
        "app add dscp-prio 10:2",
        -22,
        "app.refused=dscp_10_already_mapped",
    );
    assert_eq!(n.show("app"), "dscp-prio 10:1");
    // In DSCP mode the DCBX mode stays.
    n.refused("dcbx set host cee", 1, "dcbx.refused=dscp_qos_mode");
    // The last DSCP entry deleted: back to VLAN QoS with the software defaults.
    let e = n.taken("app del dscp-prio 10:1");
    assert_eq!(e.field("ice.qos_mode"), Some("vlan"), "{e:?}");
    assert!(n.show("pfc").contains("3:off 4:off"));
    assert!(n.show("ets").contains("willing on"));
}

#[test]
fn ice_positive_statuses_stop_the_app_table_at_that_entry() {
    if !require(
        "ice_positive_statuses_stop_the_app_table_at_that_entry",
        DCB_TOOL,
    ) {
        return;
    }
    // The kernel's table holds the firmware's FCoE entry (as the driver puts it there
    // while the firmware agent runs).
    let n = Nic::with(|s| s.model(Model::Ice).apps(&[(1, 3, 0x8906)]));
    n.taken("app add dscp-prio 10:1");
    // Deleting the non-DSCP entry answers ICE_DCB_HW_CHG (2): dcbnl stops there, so
    // the DSCP entry deleted in the same request stays.
    let o = n.refused(
        "app del ethtype-prio 0x8906:3 dscp-prio 10:1",
        2,
        "app.not_reached=1",
    );
    assert!(!o.status.success(), "{}", output_text(&o));
    assert_eq!(n.show("app"), "dscp-prio 10:1");

    // An ETS whose strict TC has bandwidth (which dcb cannot send; our own client
    // can): 110 % over the 8 TCs of DSCP mode, refused, kept in the desired
    // configuration; then two DSCP entries in one request: the first is added to the
    // kernel's table but cannot be applied, ICE_DCB_NO_HW_CHG (1), and the second is
    // never set.
    let out = n.child("ice-positive").output().expect("the child");
    let said = output_text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("child: ets=Err"), "{said}");
    let e = n
        .shim
        .log()
        .into_iter()
        .rev()
        .find(|e| e.cmd == "IEEE_SET")
        .expect("the APP set");
    assert_eq!(e.result, "status=1", "{e:?}");
    assert_eq!(e.field("app+"), Some("5,2,20"), "{e:?}");
    assert_eq!(e.field("app.not_reached"), Some("1"), "{e:?}");
    let apps = n.show("app");
    assert!(apps.contains("20:2"), "{apps}");
    assert!(!apps.contains("30:3"), "{apps}");
}

#[test]
fn ice_and_i40e_and_bnxt_refuse_everything_while_the_firmware_agent_runs_dcbx() {
    if !require(
        "ice_and_i40e_and_bnxt_refuse_everything_while_the_firmware_agent_runs_dcbx",
        DCB_TOOL,
    ) {
        return;
    }
    for model in [Model::Ice, Model::I40e, Model::Bnxt] {
        let n = Nic::with(|s| s.model(model).fw_agent(&["va"]));
        assert_eq!(n.show("dcbx"), "lld-managed ieee", "{model}");
        n.ieee_sets_refused("fw_lldp_agent");
        assert_eq!(n.show("app"), "", "{model}");
        let o = n.dcb("dcbx set host ieee");
        assert!(!o.status.success(), "{model}: {}", output_text(&o));
        assert_eq!(n.show("dcbx"), "lld-managed ieee", "{model}");
        assert_eq!(n.state().model(), model);
    }
}

#[test]
fn i40e_takes_any_selector_and_checks_only_the_tsa_of_used_tcs() {
    if !require(
        "i40e_takes_any_selector_and_checks_only_the_tsa_of_used_tcs",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::new(Model::I40e);
    assert_eq!(n.show("dcbx"), "host ieee");
    // Any selector; a change of the firmware's APP table restarts the port.
    let e = n.taken("app add dgram-port-prio 4791:3");
    assert_eq!(e.field("link.reset"), Some("down_up"), "{e:?}");
    assert_eq!(n.show("app"), "dgram-port-prio 4791:3");
    // A TC in use must be ETS or strict.
    n.refused(
        "ets set prio-tc all:0 3:1 tc-tsa 0:ets 1:cbs tc-bw 0:100",
        -22,
        "i40e.refused=tc_1_tsa_1_not_ets_or_strict",
    );
    // The bandwidths are not checked: ETS TCs at 80 % in all are held.
    n.taken("ets set prio-tc all:0 3:1 4:2 tc-tsa 0:ets 1:ets 2:strict tc-bw 0:50 1:30 2:20");
    let ets = n.show("ets");
    assert!(ets.contains("tc-bw 0:50 1:30 2:20 3:0"), "{ets}");
    assert!(ets.contains("prio-tc 0:0 1:0 2:0 3:1 4:2"), "{ets}");
    // CEE and IEEE together are refused; CEE alone hides the IEEE objects.
    n.refused("dcbx set host cee ieee", 1, "dcbx.refused=mode_unsupported");
    n.taken("dcbx set host cee");
    assert!(!n.dcb("ets show").status.success());
}

#[test]
fn bnxt_needs_an_ets_before_pfc_and_lossless_queues_for_it() {
    if !require(
        "bnxt_needs_an_ets_before_pfc_and_lossless_queues_for_it",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::new(Model::Bnxt);
    assert_eq!(n.show("dcbx"), "host ieee");
    assert!(n.show("pfc").contains("pfc-cap 2"), "{}", n.show("pfc"));
    n.refused("pfc set prio-pfc 3:on", -22, "pfc.refused=no_ets_set_yet");
    // The ETS TCs below the highest TC may sum to less than 100; a TC count change
    // closes and reopens the NIC.
    let e =
        n.taken("ets set prio-tc all:0 3:1 4:2 tc-tsa 0:ets 1:ets 2:strict tc-bw 0:50 1:30 2:20");
    assert_eq!(e.field("bnxt.tcs"), Some("3"), "{e:?}");
    assert_eq!(n.link_resets(), 1);
    assert!(n.show("ets").contains("tc-bw 0:50 1:30 2:20"));
    // An ETS TC at 0 % while the others have 100: starved, refused.
    n.refused(
        "ets set prio-tc 5:3 tc-tsa 2:ets 3:strict tc-bw 0:60 1:40 2:0 3:0",
        -22,
        "ets.refused=ets_tc_at_0_starved",
    );
    // PFC on TC1 (queue 1, lossless) is taken as is; on three TCs it is refused; on
    // TC0 (queue 0, lossy) the queues are remapped, the NIC restarted.
    n.taken("pfc set prio-pfc 3:on");
    assert_eq!(n.link_resets(), 1);
    n.refused(
        "pfc set prio-pfc 0:on 3:on 4:on",
        -22,
        "pfc.refused=3_lossless_tcs_over_2",
    );
    let e = n.taken("pfc set prio-pfc 0:on 3:on 4:off");
    assert_eq!(e.field("link.reset"), Some("down_up"), "{e:?}");
    assert!(n.show("pfc").contains("prio-pfc 0:on 1:off 2:off 3:on"));
    // Any APP selector; IEEE only.
    n.taken("app add dgram-port-prio 4791:3");
    assert_eq!(n.show("app"), "dgram-port-prio 4791:3");
    n.refused("dcbx set host cee", 1, "dcbx.refused=ieee_only");
}

#[test]
fn hns3_checks_ets_per_tc_and_restarts_the_port_on_a_map_change() {
    if !require(
        "hns3_checks_ets_per_tc_and_restarts_the_port_on_a_map_change",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::with(|s| s.model(Model::Hns3).fw_agent(&["va"]));
    // No firmware agent in hns3: the switch changes nothing.
    assert_eq!(n.show("dcbx"), "host ieee");
    let ets = n.show("ets");
    assert!(ets.contains("willing on"), "{ets}");
    assert!(ets.contains("tc-tsa 0:ets 1:strict"), "{ets}");
    // ETS on a TC no priority uses, an ETS TC at 0 %, ETS TCs not at 100 %: EINVAL.
    n.refused(
        "ets set tc-tsa 2:ets tc-bw 0:50 2:50",
        -22,
        "ets.refused=tc_2_disabled_cannot_set_ets_bw",
    );
    n.refused(
        "ets set prio-tc 3:1 tc-tsa 1:ets tc-bw 0:100 1:0",
        -22,
        "ets.refused=tc_1_ets_bw_0",
    );
    n.refused(
        "ets set prio-tc 3:1 4:2 tc-tsa 1:ets 2:strict tc-bw 0:50 1:30 2:20",
        -22,
        "ets.refused=ets_bw_sum_80_not_100",
    );
    assert!(n.show("ets").contains("prio-tc 0:0 1:0 2:0 3:0"));
    // A map change restarts the port, the same again does not, nor a bandwidth change.
    let ets = "ets set prio-tc 3:1 tc-tsa 1:ets tc-bw 0:50 1:50";
    n.taken(ets);
    assert_eq!(n.link_resets(), 1);
    n.taken(ets);
    assert_eq!(n.link_resets(), 1);
    n.taken("ets set tc-bw 0:40 1:60");
    assert_eq!(n.link_resets(), 1);
    assert!(n.show("ets").contains("tc-bw 0:40 1:60 2:0"));
    n.taken("pfc set prio-pfc 3:on");
    assert_eq!(n.link_resets(), 2);
    // APP: DSCP only; a DSCP is replaced; a delete of another priority is EINVAL.
    n.app_refused(
        "app add dgram-port-prio 4791:3",
        -22,
        "app.refused=not_dscp",
    );
    n.taken("app add dscp-prio 10:1");
    n.taken("app add dscp-prio 10:2");
    assert_eq!(n.show("app"), "dscp-prio 10:2");
    n.app_refused(
        "app del dscp-prio 10:1",
        -22,
        "app.refused=dscp_10_not_mapped_to_prio_1",
    );
    n.refused("dcbx set host cee", 1, "dcbx.refused=mode_unsupported");
}

#[test]
fn ixgbe_is_cee_until_told_ieee_and_then_takes_any_ets() {
    if !require(
        "ixgbe_is_cee_until_told_ieee_and_then_takes_any_ets",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::new(Model::Ixgbe);
    assert_eq!(n.show("dcbx"), "host cee");
    n.ieee_sets_refused("dcbx_not_ieee");
    n.taken("dcbx set host ieee");
    assert_eq!(n.show("dcbx"), "host ieee");
    // Switching to IEEE set an empty ETS and PFC.
    assert!(n.show("ets").contains("tc-tsa 0:strict 1:strict"));
    // Any ETS: bandwidths and TSAs unchecked; a TC count change sets the TCs up.
    let e = n.taken("ets set prio-tc 3:1 4:2 tc-tsa 0:ets 1:ets 2:strict tc-bw 0:50 1:30 2:20");
    assert_eq!(e.field("ixgbe.tcs"), Some("3"), "{e:?}");
    assert!(n.show("ets").contains("tc-bw 0:50 1:30 2:20"));
    n.taken("app add dgram-port-prio 4791:3");
    n.taken("pfc set prio-pfc 3:on delay 4096");
    assert!(n.show("pfc").contains("delay 4096"));
    n.refused("dcbx set host cee ieee", 1, "dcbx.refused=mode_unsupported");
}

#[test]
fn the_generic_driver_takes_what_the_others_refuse() {
    if !require("the_generic_driver_takes_what_the_others_refuse", DCB_TOOL) {
        return;
    }
    let n = Nic::new(Model::Generic);
    n.taken("app add dgram-port-prio 4791:3");
    n.taken("pfc set prio-pfc 3:on");
    n.taken("ets set tc-tsa 0:ets 1:ets 2:strict tc-bw 0:50 1:30 2:20");
    assert_eq!(n.show("app"), "dgram-port-prio 4791:3");
    assert!(n.show("ets").contains("tc-bw 0:50 1:30 2:20"));
    assert_eq!(n.link_resets(), 0);
    assert_eq!(n.state().model(), Model::Generic);
}

#[test]
#[ignore = "a child of the tests that need a process of their own under the driver"]
fn dcbnl_child() {
    let Ok(what) = std::env::var(CHILD) else {
        return;
    };
    use lossless_sys::{AppSelector, DcbApp, Dcbnl, IeeeEts, IeeeSet, Tsa};
    let mut nl = Dcbnl::open().expect("a dcbnl socket");
    match what.as_str() {
        "ice-positive" => {
            let mut tsa = [Tsa::STRICT; 8];
            tsa[0] = Tsa::ETS;
            tsa[1] = Tsa::ETS;
            let ets = IeeeEts {
                ets_cap: 8,
                tc_tx_bw: [60, 40, 10, 0, 0, 0, 0, 0],
                tc_tsa: tsa,
                prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
                ..IeeeEts::default()
            };
            let r = nl.set_ieee(
                "va",
                &IeeeSet {
                    ets: Some(ets),
                    ..IeeeSet::default()
                },
            );
            println!("child: ets={:?}", r.map_err(|e| e.to_string()));
            let dscp = |protocol, priority| DcbApp {
                selector: AppSelector(5),
                priority,
                protocol,
            };
            let r = nl.set_ieee(
                "va",
                &IeeeSet {
                    apps: vec![dscp(20, 2), dscp(30, 3)],
                    ..IeeeSet::default()
                },
            );
            println!("child: apps={:?}", r.map_err(|e| e.to_string()));
        }
        "cee" => {
            let said = |r: Result<String, lossless_sys::DcbError>| {
                r.unwrap_or_else(|e| format!("err:{}", e.kind().label()))
            };
            let bits = |p: [bool; 8]| p.iter().map(|&b| if b { '1' } else { '0' }).collect();
            let mut pfc = [false; 8];
            pfc[3] = true;
            let state = said(nl.get_state("va").map(|b| b.to_string()));
            let set = said(nl.set_pfc("va", pfc).map(|()| "ok".into()));
            let before = said(nl.get_pfc("va").map(bits));
            let all = said(nl.set_all("va").map(|s| s.to_string()));
            let after = said(nl.get_pfc("va").map(bits));
            let again = said(nl.set_all("va").map(|s| s.to_string()));
            let pg = said(nl.get_pg_tx("va").map(|_| "ok".into()));
            println!(
                "child: state={state} set_pfc={set} pfc={before} set_all={all} pfc={after} \
                 set_all={again} pg_tx={pg}"
            );
        }
        "reader" => {
            for line in std::io::stdin().lock().lines() {
                let line = line.expect("stdin");
                let st = nl.get_ieee_state("va").expect("IEEE_GET");
                let pfc = st.pfc.expect("PFC");
                println!("child: {line} pfc_en=0x{:02x}", pfc.enabled);
            }
        }
        other => panic!("no child {other}"),
    }
}

#[test]
fn cee_commands_answer_as_each_driver_does() {
    if !require("cee_commands_answer_as_each_driver_does", DCB_TOOL) {
        return;
    }
    // GSTATE, PFC_SCFG of priority 3, PFC_GCFG, SET_ALL, PFC_GCFG, SET_ALL, PGTX_GCFG.
    let unsupported = "state=err:unsupported set_pfc=err:unsupported pfc=err:unsupported \
                       set_all=err:unsupported pfc=err:unsupported set_all=err:unsupported \
                       pg_tx=err:unsupported";
    for (model, want) in [
        // applied at once; SET_ALL 2 after a change, then 1
        (
            Model::Generic,
            "state=false set_pfc=ok pfc=00010000 set_all=2 pfc=00010000 set_all=1 pg_tx=ok",
        ),
        // PFC_GCFG reads the IEEE PFC; SET_ALL never programs (1); no Rx PG ops
        (
            Model::Mlx5,
            "state=true set_pfc=ok pfc=00000000 set_all=1 pfc=00000000 set_all=1 \
             pg_tx=err:unsupported",
        ),
        // in IEEE mode the CEE ops do nothing, SET_ALL answers ICE_DCB_NO_HW_CHG
        (
            Model::Ice,
            "state=true set_pfc=ok pfc=00000000 set_all=1 pfc=00000000 set_all=1 pg_tx=ok",
        ),
        (
            Model::I40e,
            "state=false set_pfc=ok pfc=00000000 set_all=1 pfc=00000000 set_all=1 pg_tx=ok",
        ),
        // pending until SET_ALL: 2 for a PFC change, then 1
        (
            Model::Ixgbe,
            "state=false set_pfc=ok pfc=00000000 set_all=2 pfc=00010000 set_all=1 pg_tx=ok",
        ),
        // no CEE op at all
        (Model::Bnxt, unsupported),
        (Model::Hns3, unsupported),
    ] {
        let n = Nic::new(model);
        let out = n.child("cee").output().expect("the child");
        let said = output_text(&out);
        assert!(out.status.success(), "{model}: {said}");
        let got = said
            .split_once("child: ")
            .and_then(|(_, l)| l.lines().next())
            .unwrap_or_else(|| panic!("{model}: {said}"));
        assert_eq!(got, want, "{model}\n{}", n.shim.log_text());
    }
}

/// The long-running reader: asks for `IEEE_GET` on every line it gets.
struct Reader {
    child: std::process::Child,
    lines: mpsc::Receiver<String>,
}

impl Reader {
    fn start(n: &Nic) -> Reader {
        let mut child = n
            .child("reader")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the reader");
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                // The harness prints "test dcbnl_child ... " before the first line.
                if let Some((_, l)) = line.split_once("child: ") {
                    if tx.send(l.to_string()).is_err() {
                        break;
                    }
                }
            }
        });
        Reader { child, lines }
    }

    /// What the reader's NIC holds now: its answer to one `IEEE_GET`.
    fn pfc_en(&mut self, tag: &str) -> String {
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{tag}").expect("to the reader");
        stdin.flush().expect("to the reader");
        let answer = self
            .lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("no answer from the reader to {tag}: {e}"));
        let (got, pfc) = answer.split_once(' ').expect("TAG pfc_en=..");
        assert_eq!(got, tag, "{answer}");
        pfc.to_string()
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn processes_with_one_directory_share_the_nic_and_a_reset_reaches_them_all() {
    if !require(
        "processes_with_one_directory_share_the_nic_and_a_reset_reaches_them_all",
        DCB_TOOL,
    ) {
        return;
    }
    let n = Nic::new(Model::Ice);
    let mut reader = Reader::start(&n);
    assert_eq!(reader.pfc_en("before"), "pfc_en=0x00");
    // Another process (dcb) programs the NIC behind the reader's back...
    n.taken("pfc set prio-pfc 3:on 4:on");
    assert_eq!(reader.pfc_en("after-set"), "pfc_en=0x18");
    // ...and a third one reads what it holds.
    assert!(n.show("pfc").contains("3:on 4:on"));
    let st = n.state();
    assert_eq!(st.ieee_pfc_en(), 0x18);
    assert_eq!(st.model(), Model::Ice);
    // A firmware reset: every process finds the power-on NIC at its next request.
    n.shim.reset_nic("va");
    assert!(n.shim.state("va").is_none());
    assert_eq!(reader.pfc_en("after-reset"), "pfc_en=0x00");
    assert!(n.show("pfc").contains("3:off 4:off"));
    assert_eq!(
        n.shim.log().last().map(|e| e.cmd.clone()),
        Some("FW_RESET".to_string())
    );
    // The NIC keeps its model whatever a later process's environment says.
    n.taken("pfc set prio-pfc 5:on");
    let other = n.shim.clone().model(Model::Mlx5);
    let o = dcb_tool(&n.p.a, &other, &argv("app add dscp-prio 8:1"));
    assert!(o.status.success(), "{}", output_text(&o));
    assert_eq!(n.state().model(), Model::Ice);
    assert_eq!(reader.pfc_en("last"), "pfc_en=0x20");
}

//! The emulated DCB driver against a dcbnl client we did not write: iproute2's `dcb`
//! (libmnl) reads and writes it under LD_PRELOAD; what it decodes and what the driver
//! recorded must agree. Each `dcb` run is a new process; with the same directory they
//! share the emulated NIC, so what one run programmed the next one reads.

use lossless_testkit::oracle::{require, EMULATED_DRIVER};
use lossless_testkit::{dcb_tool, output_text, Pair, ShimEnv, TempDir};

#[test]
fn dcb_reads_the_defaults_and_the_kernel_keeps_other_devices() {
    if !require(
        "dcb_reads_the_defaults_and_the_kernel_keeps_other_devices",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let p = Pair::up();
    let tmp = TempDir::new();
    let shim = ShimEnv::new(tmp.path(), &["va"]);
    let ets = output_text(&dcb_tool(&p.a, &shim, &["ets", "show", "dev", "va"]));
    assert!(ets.contains("willing off ets-cap 8 cbs off"), "{ets}");
    assert!(ets.contains("tc-bw 0:100 1:0"), "{ets}");
    let pfc = output_text(&dcb_tool(&p.a, &shim, &["pfc", "show", "dev", "va"]));
    assert!(pfc.contains("pfc-cap 8 macsec-bypass off delay 0"), "{pfc}");
    assert!(pfc.contains("prio-pfc 0:off 1:off"), "{pfc}");
    let dcbx = output_text(&dcb_tool(&p.a, &shim, &["dcbx", "show", "dev", "va"]));
    assert_eq!(dcbx.trim(), "host cee ieee");
    // Without buffer ops the kernel leaves DCB_ATTR_DCB_BUFFER out of IEEE_GET.
    let buf = dcb_tool(&p.a, &shim, &["buffer", "show", "dev", "va"]);
    assert!(
        !output_text(&buf).contains("buffer-size"),
        "{}",
        output_text(&buf)
    );
    // lo is not emulated: the kernel answers, and has no dcbnl ops for it.
    let lo = dcb_tool(&p.a, &shim, &["ets", "show", "dev", "lo"]);
    assert!(!lo.status.success());
    assert!(
        output_text(&lo).contains("Operation not supported"),
        "{}",
        output_text(&lo)
    );
    // Gets leave no state file and no log line unless asked to.
    assert!(!shim.any_state());
    assert!(shim.log().is_empty(), "{}", shim.log_text());
}

#[test]
fn dcb_sets_are_recorded() {
    if !require("dcb_sets_are_recorded", EMULATED_DRIVER) {
        return;
    }
    let p = Pair::up();
    let tmp = TempDir::new();
    let shim = ShimEnv::new(tmp.path(), &["va"]);
    let o = dcb_tool(
        &p.a,
        &shim,
        &[
            "pfc", "set", "dev", "va", "prio-pfc", "3:on", "4:on", "delay", "4096",
        ],
    );
    assert!(o.status.success(), "{}", output_text(&o));
    let st = shim.state("va").expect("state after a set");
    assert_eq!(st.ieee_pfc_en(), 0x18);
    assert_eq!(st.num("ieee_pfc_delay"), 4096);
    let set = shim.log().pop().expect("a log line");
    assert_eq!((set.ifname.as_str(), set.cmd.as_str()), ("va", "IEEE_SET"));
    assert!(set.ok(), "{set:?}");
    assert_eq!(set.field("pfc.en"), Some("0x18"));
    assert_eq!(set.field("pfc.delay"), Some("4096"));

    let o = dcb_tool(
        &p.a,
        &shim,
        &[
            "app",
            "add",
            "dev",
            "va",
            "dscp-prio",
            "26:3",
            "ethtype-prio",
            "0x8906:4",
        ],
    );
    assert!(o.status.success(), "{}", output_text(&o));
    let st = shim.state("va").expect("state");
    let mut apps = st.ieee_apps();
    apps.sort();
    assert_eq!(apps, [(1, 4, 0x8906), (5, 3, 26)]);

    let o = dcb_tool(
        &p.a,
        &shim,
        &[
            "ets",
            "set",
            "dev",
            "va",
            "tc-tsa",
            "all:strict",
            "1:ets",
            "tc-bw",
            "all:0",
            "1:100",
        ],
    );
    assert!(o.status.success(), "{}", output_text(&o));
    let st = shim.state("va").expect("state");
    assert_eq!(st.list("ieee_ets_tc_tsa"), [0, 2, 0, 0, 0, 0, 0, 0]);
    assert_eq!(st.list("ieee_ets_tc_tx_bw"), [0, 100, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn the_dcb_buffer_exists_only_when_asked_for() {
    if !require("the_dcb_buffer_exists_only_when_asked_for", EMULATED_DRIVER) {
        return;
    }
    let p = Pair::up();
    let tmp = TempDir::new();
    let shim = ShimEnv::new(tmp.path(), &["va"]).buffer(Some(
        "total=524288 size=131072,65536 prio2buffer=0,0,0,1,1,0,0,0",
    ));
    let show = output_text(&dcb_tool(&p.a, &shim, &["buffer", "show", "dev", "va"]));
    assert!(show.contains("prio-buffer 0:0 1:0 2:0 3:1 4:1"), "{show}");
    assert!(show.contains("buffer-size 0:128Kb 1:64Kb 2:0b"), "{show}");
    assert!(show.contains("total-size 512Kb"), "{show}");
    let o = dcb_tool(
        &p.a,
        &shim,
        &[
            "buffer",
            "set",
            "dev",
            "va",
            "buffer-size",
            "all:0",
            "0:256K",
            "1:128K",
        ],
    );
    assert!(o.status.success(), "{}", output_text(&o));
    let st = shim.state("va").expect("state");
    assert_eq!(st.list("buffer_size"), [262_144, 131_072, 0, 0, 0, 0, 0, 0]);
    assert_eq!(st.list("buffer_prio2buffer"), [0, 0, 0, 1, 1, 0, 0, 0]);
    // More than the port has: refused with the status byte of the reply (which `dcb`
    // 6.1 does not look at for buffers), nothing changed: the NIC keeps what the last
    // run programmed.
    dcb_tool(
        &p.a,
        &shim,
        &["buffer", "set", "dev", "va", "buffer-size", "0:1M"],
    );
    let last = shim.log().pop().expect("log");
    assert_eq!(last.result, "status=-22", "{last:?}");
    let st = shim.state("va").expect("state");
    assert_eq!(st.list("buffer_size"), [262_144, 131_072, 0, 0, 0, 0, 0, 0]);
    let show = output_text(&dcb_tool(&p.a, &shim, &["buffer", "show", "dev", "va"]));
    assert!(show.contains("buffer-size 0:256Kb 1:128Kb 2:0b"), "{show}");
}

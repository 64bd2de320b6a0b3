#![allow(clippy::unwrap_used)]
//! dcbnl only when asked: with `apply = "none"` not one dcbnl request leaves
//! the daemon; with `apply = "dcbnl"` on a veth (no dcbnl) the port keeps
//! negotiating and says so; with a DCB-capable driver (lossless-testkit's
//! emulated driver, which answers as the kernel's dcbnl.c does for such a driver) the
//! operational PFC and PG are programmed, and re-programmed on change.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::{FeatureChange, FeatureName, Request};

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";

/// A (not willing, PFC 3,4) with `apply` as given, under the emulated DCB driver
/// when `shim_on` is set; B willing with defaults.
struct Setup {
    a: Daemon,
    b: Daemon,
    shim: ShimEnv,
    _na: Netns,
    _nb: Netns,
    _dir: TempDir,
}

fn setup(apply: &str, shim_on: bool) -> Setup {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let conf = dir.path().join("a.toml");
    std::fs::write(
        &conf,
        format!(
            "[ports.\"vb\"]\napply = \"{apply}\"\ndcbx.mode = \"cee\"\n\
             pfc = {{ willing = false, priorities = [3, 4] }}\n\
             pg = {{ willing = false, pgid = [0, 0, 0, 1, 1, 1, 15, 2], percent = [25, 75, 0, 0, 0, 0, 0, 0] }}\n"
        ),
    )
    .unwrap();
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"]).log_gets(true);
    let env: Vec<(String, String)> = if shim_on { shim.vars() } else { Vec::new() };
    // The daemon under test runs on vb (netns B); its peer on va is willing.
    let a = Daemon::start_with_env(
        &nb,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
        &env,
    );
    let b = Daemon::start(&na, &dir.path().join("b"), &["--interface", "va"]);
    na.ip(&["link", "set", "va", "up"]);
    nb.ip(&["link", "set", "vb", "up"]);
    wait_for(Duration::from_secs(5), "convergence", || {
        converged(&b.dcbx("va")).then_some(())
    });
    Setup {
        a,
        b,
        shim,
        _na: na,
        _nb: nb,
        _dir: dir,
    }
}

#[test]
fn apply_none_writes_nothing_through_dcbnl() {
    if !require("apply_none_writes_nothing_through_dcbnl", EMULATED_DRIVER) {
        return;
    }
    let s = setup("none", true);
    assert_eq!(priorities(&s.b.dcbx("va")["pfc"]["oper"]), [3, 4]);
    let status = s.a.call(&Request::Status);
    assert_eq!(status["ports"][0]["hardware"]["mode"], "report_only");
    // The emulated driver is loaded in the daemon (else the check below proves
    // nothing) and logs every dcbnl and ethtool request it sees, gets included: the
    // only ones are reads (DCB_CMD_IEEE_GET for the PFC counters, `pfc show` and the
    // watchdog; ethtool's for the RoCE host settings: pause, private flags, the
    // driver's name and statistics), never a probe, a set or the DCBX mode.
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", s.a.pid().unwrap())).unwrap();
    assert!(
        maps.contains("liblossless_dcbdrv.so"),
        "the emulated driver is not loaded in losslessd"
    );
    let log = s.shim.log();
    assert!(
        log.iter().all(|e| e.ifname != "vb"
            || e.cmd == "IEEE_GET"
            || e.cmd.ends_with("_GET")
            || ["GDRVINFO", "GSSET_INFO", "GSTRINGS", "GSTATS"].contains(&e.cmd.as_str())),
        "requests other than reads were sent:\n{}",
        s.shim.log_text()
    );
    assert!(!s.shim.any_state());
}

#[test]
fn apply_dcbnl_on_veth_reports_and_keeps_negotiating() {
    if !require(
        "apply_dcbnl_on_veth_reports_and_keeps_negotiating",
        &[Oracle::Netns],
    ) {
        return;
    }
    let s = setup("dcbnl", false);
    let status = s.a.call(&Request::Status);
    let hw = &status["ports"][0]["hardware"];
    assert_eq!(hw["mode"], "unsupported", "{status:#}");
    assert!(hw["reason"].as_str().unwrap().contains("vb"), "{hw}");
    assert_eq!(status["ports"][0]["dcbx_active"], true);
    assert_eq!(status["ports"][0]["all_syncd"], true);
    // Asked for and not possible: a problem, named in words.
    assert_eq!(status["ports"][0]["healthy"], false, "{status:#}");
    let problem = status["ports"][0]["problems"][0].as_str().unwrap();
    assert_eq!(
        problem,
        format!(
            "dcbnl: {}: nothing is programmed",
            hw["reason"].as_str().unwrap()
        )
    );
    let out = s.a.cli(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    // The table wraps the long problem under HEALTH: read it back as one line.
    let squashed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("no dcbnl") && squashed.contains(problem),
        "{text}"
    );
}

#[test]
fn apply_dcbnl_programs_the_operational_config() {
    if !require(
        "apply_dcbnl_programs_the_operational_config",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let s = setup("dcbnl", true);
    // The driver rewrites its state after every request of a programming
    // round: wait for the whole expected state, not a prefix of the round.
    wait_for(Duration::from_secs(5), "PFC and PG programmed", || {
        let st = s.shim.state("vb")?;
        (st.dcb_state()
            && st.num("cee_pfc_state") == 1
            && st.cee_pfc() == [0, 0, 0, 1, 1, 0, 0, 0]
            && st.list("cee_pgtx_pg_bw_pct") == [25, 75, 0, 0, 0, 0, 0, 0]
            && st.list("cee_pgrx_pg_bw_pct") == [25, 75, 0, 0, 0, 0, 0, 0])
        .then_some(())
    });
    let status = s.a.call(&Request::Status);
    let hw = &status["ports"][0]["hardware"];
    assert_eq!(hw["mode"], "dcbnl", "{status:#}");
    assert!(hw["applied"].as_u64().unwrap() >= 1);
    assert!(hw.get("error").is_none(), "{hw}");
    // A change is programmed again.
    s.a.call(&Request::DcbxSet {
        port: "vb".into(),
        change: FeatureChange {
            feature: FeatureName::Pfc,
            priorities: Some(vec![0, 7]),
            ..FeatureChange::default()
        },
    });
    wait_for(Duration::from_secs(5), "new PFC programmed", || {
        (s.shim.state("vb")?.cee_pfc() == [1, 0, 0, 0, 0, 0, 0, 1]).then_some(())
    });
    assert!(
        s.shim.log().iter().any(|e| e.cmd == "SET_ALL"),
        "{}",
        s.shim.log_text()
    );
}

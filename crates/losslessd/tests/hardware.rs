#![allow(clippy::unwrap_used)]
//! dcbnl only when asked: with `apply = "none"` not one dcbnl request leaves
//! the daemon; with `apply = "dcbnl"` on a veth (no dcbnl) the port keeps
//! negotiating and says so; with a DCB-capable driver (lldpad-peer's shim,
//! which answers as the kernel's dcbnl.c does for such a driver) the
//! operational PFC and PG are programmed, and re-programmed on change.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::{FeatureChange, FeatureName, Request};

const MAC_A: &str = "02:00:00:00:00:0a";
const MAC_B: &str = "02:00:00:00:00:0b";

/// A (not willing, PFC 3,4) with `apply` as given, under the shim when
/// `shim` is set; B willing with defaults.
struct Setup {
    a: Daemon,
    b: Daemon,
    _na: Netns,
    _nb: Netns,
    dir: TempDir,
}

fn setup(apply: &str, shim: bool) -> Setup {
    let dir = TempDir::new();
    let na = Netns::new();
    let nb = Netns::new();
    Veth::new(&na, "va", MAC_A, &nb, "vb", MAC_B);
    let conf = dir.path().join("a.toml");
    std::fs::write(
        &conf,
        format!(
            "[ports.\"vb\"]\napply = \"{apply}\"\npfc = {{ willing = false, priorities = [3, 4] }}\n\
             pg = {{ willing = false, pgid = [0, 0, 0, 1, 1, 1, 15, 2], percent = [25, 75, 0, 0, 0, 0, 0, 0] }}\n"
        ),
    )
    .unwrap();
    let mut env = Vec::new();
    let so;
    let state = dir.path().join("shim-state");
    let log = dir.path().join("shim.log");
    std::fs::create_dir_all(&state).unwrap();
    if shim {
        so = build_dcbnl_shim(dir.path());
        env = vec![
            ("LD_PRELOAD", so.to_str().unwrap().to_string()),
            ("DCBNL_SHIM_IFACES", "vb".to_string()),
            ("DCBNL_SHIM_STATE", state.to_str().unwrap().to_string()),
            ("DCBNL_SHIM_LOG", log.to_str().unwrap().to_string()),
            ("DCBNL_SHIM_LOG_GETS", "1".to_string()),
        ];
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
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
        _na: na,
        _nb: nb,
        dir,
    }
}

#[test]
fn apply_none_sends_no_dcbnl_request() {
    if !can_run("apply_none_sends_no_dcbnl_request") {
        return;
    }
    let s = setup("none", true);
    assert_eq!(priorities(&s.b.dcbx("va")["pfc"]["oper"]), [3, 4]);
    let status = s.a.call(&Request::Status);
    assert_eq!(status["ports"][0]["hardware"]["mode"], "report_only");
    // The shim is loaded in the daemon (else the check below proves nothing)
    // and logs every dcbnl request it sees, gets included: none.
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", s.a.pid().unwrap())).unwrap();
    assert!(
        maps.contains("dcbnl_shim.so"),
        "the shim is not loaded in losslessd"
    );
    let log = std::fs::read_to_string(s.dir.path().join("shim.log")).unwrap_or_default();
    assert!(!log.contains(" vb "), "dcbnl requests were sent:\n{log}");
    assert!(std::fs::read_dir(s.dir.path().join("shim-state"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn apply_dcbnl_on_veth_reports_and_keeps_negotiating() {
    if !can_run("apply_dcbnl_on_veth_reports_and_keeps_negotiating") {
        return;
    }
    let s = setup("dcbnl", false);
    let status = s.a.call(&Request::Status);
    let hw = &status["ports"][0]["hardware"];
    assert_eq!(hw["mode"], "unsupported", "{status:#}");
    assert!(hw["reason"].as_str().unwrap().contains("vb"), "{hw}");
    assert_eq!(status["ports"][0]["dcbx_active"], true);
    assert_eq!(status["ports"][0]["all_syncd"], true);
    let out = s.a.cli(&["status"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("no dcbnl: report only"));
}

#[test]
fn apply_dcbnl_programs_the_operational_config() {
    if !can_run("apply_dcbnl_programs_the_operational_config") {
        return;
    }
    let s = setup("dcbnl", true);
    let file = s.dir.path().join("shim-state/vb.state");
    let read = || std::fs::read_to_string(&file).unwrap_or_default();
    // The shim rewrites the file after every request of a programming
    // round: wait for the whole expected state, not a prefix of the round.
    let expected = [
        "dcb_state=1",
        "cee_pfc_state=1",
        "cee_pfc_up=00011000",
        "cee_pgtx_pg_bwpct=25,75,0,0,0,0,0,0",
        "cee_pgrx_pg_bwpct=25,75,0,0,0,0,0,0",
    ];
    wait_for(Duration::from_secs(5), "PFC and PG programmed", || {
        let st = read();
        expected
            .iter()
            .all(|l| st.lines().any(|x| x == *l))
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
        read().contains("cee_pfc_up=10000001").then_some(())
    });
    let log = std::fs::read_to_string(s.dir.path().join("shim.log")).unwrap();
    assert!(log.contains("SET_ALL"), "{log}");
}

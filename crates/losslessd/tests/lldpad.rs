#![allow(clippy::unwrap_used)]
//! Interoperability with lldpad, the reference implementation, in CEE mode:
//! lldpad on `va` under lossless-testkit's emulated DCB driver, losslessd on
//! `vb`. lldpad's own view (`dcbtool go|gp`) and what it programmed into its
//! emulated driver are the oracle.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::{FeatureChange, FeatureName, Request};
use lossless_testkit::DriverState;
use serde_json::Value;

/// lldpad in netns A on `va`, losslessd in netns B on `vb`.
struct Interop {
    // Drop order: lldpad, then the daemon and the namespaces.
    lldpad: LldpadPeer,
    on: OnVeth,
}

impl Interop {
    fn new(losslessd_config: &str) -> Interop {
        let on = OnVeth::start(losslessd_config, &[]);
        let lldpad = LldpadPeer::start(&on.na, "va", Mode::Cee);
        Interop { lldpad, on }
    }

    /// `dcbtool ARGS` on lldpad's side; it must succeed.
    fn dcbtool(&self, args: &[&str]) -> String {
        self.lldpad.dcbtool_ok(args)
    }

    /// `dcbtool go va FEATURE` as field -> value.
    fn oper(&self, feature: &str) -> Vec<(String, String)> {
        dcbtool_fields(&self.dcbtool(&["go", "va", feature]))
    }

    /// What lldpad programmed into its emulated driver, once it did.
    fn driver(&self) -> Option<DriverState> {
        self.lldpad.driver_state()
    }
}

const NOT_WILLING: &str = r#"
[ports."vb"]
pfc = { willing = false, priorities = [3, 4] }
pg = { willing = false, pgid = [0, 0, 0, 0, 1, 1, 1, 15], percent = [25, 75, 0, 0, 0, 0, 0, 0] }
"#;

const WILLING: &str = r#"
[ports."vb"]
"#;

fn wait_lldpad(i: &Interop, feature: &str, what: &str, ok: impl Fn(&[(String, String)]) -> bool) {
    wait_for(Duration::from_secs(15), what, || {
        let f = i.oper(feature);
        ok(&f).then_some(())
    });
}

#[test]
fn a_lldpad_willing_adopts_ours() {
    if !require("a_lldpad_willing_adopts_ours", LLDPAD_PEER) {
        return;
    }
    let i = Interop::new(NOT_WILLING);
    i.dcbtool(&["sc", "va", "pfc", "e:1", "a:1", "w:1"]);
    i.dcbtool(&["sc", "va", "pg", "e:1", "a:1", "w:1"]);
    wait_lldpad(&i, "pfc", "lldpad to run our PFC", |f| {
        dcbtool_field(f, "Oper Mode") == "true"
            && dcbtool_field(f, "Syncd") == "true"
            && dcbtool_field(f, "pfcup") == "0 0 0 1 1 0 0 0"
    });
    wait_lldpad(&i, "pg", "lldpad to run our PG", |f| {
        dcbtool_field(f, "Syncd") == "true"
            && dcbtool_field(f, "pgid") == "0 0 0 0 1 1 1 F"
            && dcbtool_field(f, "pgpct").starts_with("25% 75% 0%")
    });
    // What lldpad programmed into its (emulated) driver.
    wait_for(
        Duration::from_secs(5),
        "lldpad to program PFC and PG",
        || {
            let st = i.driver()?;
            (st.cee_pfc() == [0, 0, 0, 1, 1, 0, 0, 0]
                && st.list("cee_pgtx_pg_bw_pct") == [25, 75, 0, 0, 0, 0, 0, 0])
            .then_some(())
        },
    );
    // Ours: in sync, the peer willing.
    let v = wait_for(Duration::from_secs(5), "losslessd in sync", || {
        let v = i.on.d.dcbx("vb");
        converged(&v).then_some(v)
    });
    assert_eq!(v["pfc"]["peer_willing"], true);
    assert_eq!(priorities(&v["pfc"]["oper"]), [3, 4]);
}

#[test]
fn b_ours_willing_adopts_lldpads() {
    if !require("b_ours_willing_adopts_lldpads", LLDPAD_PEER) {
        return;
    }
    let i = Interop::new(WILLING);
    i.dcbtool(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00011000"]);
    i.dcbtool(&[
        "sc",
        "va",
        "pg",
        "e:1",
        "a:1",
        "w:0",
        "pgid:0000111f",
        "pgpct:25,75,0,0,0,0,0,0",
    ]);
    let v = wait_for(
        Duration::from_secs(15),
        "losslessd to adopt lldpad's",
        || {
            let v = i.on.d.dcbx("vb");
            (converged(&v) && priorities(&v["pfc"]["oper"]) == [3, 4]).then_some(v)
        },
    );
    assert_eq!(
        v["pg"]["oper"]["pgid"],
        serde_json::json!([0, 0, 0, 0, 1, 1, 1, 15])
    );
    assert_eq!(
        v["pg"]["oper"]["percent"],
        serde_json::json!([25, 75, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(v["pfc"]["peer_willing"], false);
    wait_lldpad(&i, "pfc", "lldpad in sync", |f| {
        dcbtool_field(f, "Syncd") == "true"
    });
    // lldpad received our (willing, PFC off) configuration.
    let peer = dcbtool_fields(&i.dcbtool(&["gp", "va", "pfc"]));
    assert_eq!(dcbtool_field(&peer, "Willing"), "true");
    assert_eq!(dcbtool_field(&peer, "pfcup"), "0 0 0 0 0 0 0 0");
}

#[test]
fn c_neither_willing_both_report_the_mismatch() {
    if !require("c_neither_willing_both_report_the_mismatch", LLDPAD_PEER) {
        return;
    }
    let i = Interop::new(NOT_WILLING);
    i.dcbtool(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00100000"]);
    wait_lldpad(&i, "pfc", "lldpad to report the mismatch", |f| {
        dcbtool_field(f, "Oper Mode") == "false" && dcbtool_field(f, "Errors").contains("mismatch")
    });
    let v = wait_for(
        Duration::from_secs(10),
        "losslessd to report the mismatch",
        || {
            let v = i.on.d.dcbx("vb");
            (v["pfc"]["error"] == true && v["pfc"]["oper_mode"] == false).then_some(v)
        },
    );
    assert_eq!(priorities(&v["pfc"]["peer"]), [2]);
    assert_eq!(v["pfc"]["peer_willing"], false);
    // PG is identical on neither side here either, but the test is about PFC.
}

#[test]
fn d_a_change_on_each_side_resyncs_both() {
    if !require("d_a_change_on_each_side_resyncs_both", LLDPAD_PEER) {
        return;
    }
    let i = Interop::new(WILLING);
    i.dcbtool(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00011000"]);
    wait_for(Duration::from_secs(15), "first agreement", || {
        let v = i.on.d.dcbx("vb");
        (converged(&v) && priorities(&v["pfc"]["oper"]) == [3, 4]).then_some(())
    });
    // lldpad's side changes: ours follows.
    i.dcbtool(&["sc", "va", "pfc", "pfcup:01000001"]);
    wait_for(
        Duration::from_secs(15),
        "ours to follow lldpad's change",
        || {
            let v = i.on.d.dcbx("vb");
            (converged(&v) && priorities(&v["pfc"]["oper"]) == [1, 7]).then_some(())
        },
    );
    // Our side changes (we become the authority, lldpad willing): lldpad follows.
    i.dcbtool(&["sc", "va", "pfc", "w:1"]);
    i.on.d.call(&Request::DcbxSet {
        port: "vb".into(),
        change: FeatureChange {
            feature: FeatureName::Pfc,
            willing: Some(false),
            priorities: Some(vec![2, 6]),
            ..FeatureChange::default()
        },
    });
    wait_lldpad(&i, "pfc", "lldpad to follow our change", |f| {
        dcbtool_field(f, "Syncd") == "true" && dcbtool_field(f, "pfcup") == "0 0 1 0 0 0 1 0"
    });
    let v: Value = wait_for(Duration::from_secs(10), "ours in sync", || {
        let v = i.on.d.dcbx("vb");
        converged(&v).then_some(v)
    });
    assert_eq!(priorities(&v["pfc"]["oper"]), [2, 6]);
}

/// Adaptive PFC Headroom's capability bit in our PFC sub-TLV (bit 4 of the flags, reserved in CEE):
/// lldpad, which does not know it, still negotiates PFC and PG with us, and we see that
/// it does not advertise the capability, so nothing is measured.
#[test]
fn e_capability_bit_on_lldpad_still_negotiates() {
    if !require("e_capability_bit_on_lldpad_still_negotiates", LLDPAD_PEER) {
        return;
    }
    let conf = format!("{NOT_WILLING}\n[ports.\"vb\".headroom]\nmeasure = true\n");
    let i = Interop::new(&conf);
    i.dcbtool(&["sc", "va", "pfc", "e:1", "a:1", "w:1"]);
    i.dcbtool(&["sc", "va", "pg", "e:1", "a:1", "w:1"]);
    wait_lldpad(&i, "pfc", "lldpad to run our PFC", |f| {
        dcbtool_field(f, "Oper Mode") == "true"
            && dcbtool_field(f, "Syncd") == "true"
            && dcbtool_field(f, "pfcup") == "0 0 0 1 1 0 0 0"
    });
    wait_lldpad(&i, "pg", "lldpad to run our PG", |f| {
        dcbtool_field(f, "Syncd") == "true" && dcbtool_field(f, "pgid") == "0 0 0 0 1 1 1 F"
    });
    wait_for(Duration::from_secs(5), "lldpad to program PFC", || {
        (i.driver()?.cee_pfc() == [0, 0, 0, 1, 1, 0, 0, 0]).then_some(())
    });
    let v = wait_for(Duration::from_secs(5), "losslessd in sync", || {
        let v = i.on.d.dcbx("vb");
        converged(&v).then_some(v)
    });
    assert_eq!(priorities(&v["pfc"]["oper"]), [3, 4]);
    let h = &i.on.d.call(&Request::HeadroomShow { port: None })["ports"][0];
    assert_eq!(
        h["running"], false,
        "lldpad does not advertise the capability: {h}"
    );
    assert_eq!(h["frames"]["requests_sent"], 0, "{h}");
}

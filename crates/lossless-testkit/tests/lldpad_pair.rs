//! Two lldpads on a veth pair, each under its own emulated driver: the willing one
//! takes the other's configuration and programs it into its driver, in CEE and in
//! IEEE 802.1Qaz mode. lldpad decides; the harness only carries it.

use std::time::Duration;

use lossless_testkit::oracle::{require, LLDPAD_PEER};
use lossless_testkit::{dcbtool_field, dcbtool_fields, wait_every, LldpadPeer, Mode, Pair};

fn poll<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_every(Duration::from_secs(20), Duration::from_millis(100), what, f)
}

#[test]
fn cee_willing_lldpad_adopts_and_programs_the_peers_pfc_and_pg() {
    if !require(
        "cee_willing_lldpad_adopts_and_programs_the_peers_pfc_and_pg",
        LLDPAD_PEER,
    ) {
        return;
    }
    let p = Pair::up();
    let a = LldpadPeer::start(&p.a, "va", Mode::Cee);
    let b = LldpadPeer::start(&p.b, "vb", Mode::Cee);
    a.dcbtool_ok(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00011000"]);
    a.dcbtool_ok(&[
        "sc",
        "va",
        "pg",
        "e:1",
        "a:1",
        "w:0",
        "pgid:0000111f",
        "pgpct:25,75,0,0,0,0,0,0",
    ]);
    b.dcbtool_ok(&["sc", "vb", "pfc", "e:1", "a:1", "w:1"]);
    b.dcbtool_ok(&["sc", "vb", "pg", "e:1", "a:1", "w:1"]);
    poll("B to run A's PFC", || {
        let f = dcbtool_fields(&b.dcbtool(&["go", "vb", "pfc"]));
        (dcbtool_field(&f, "Oper Mode") == "true"
            && dcbtool_field(&f, "pfcup") == "0 0 0 1 1 0 0 0")
            .then_some(())
    });
    let st = poll("B's driver programmed", || {
        let st = b.driver_state()?;
        (st.cee_pfc() == [0, 0, 0, 1, 1, 0, 0, 0]
            && st.list("cee_pgtx_pg_bw_pct").starts_with(&[25, 75]))
        .then_some(st)
    });
    assert!(st.dcb_state());
    assert_eq!(st.num("dcbx"), 0x05, "host, CEE:\n{st}");
    assert_eq!(st.num("cee_pfc_state"), 1);
    assert_eq!(st.list("cee_pgtx_up2tc"), [0, 0, 0, 0, 1, 1, 1, 2]);
    let sets: Vec<String> = b.log().iter().map(|e| e.cmd.clone()).collect();
    for cmd in ["SDCBX", "PFC_SCFG", "PGTX_SCFG", "PGRX_SCFG", "SET_ALL"] {
        assert!(sets.iter().any(|c| c == cmd), "{cmd} not in {sets:?}");
    }
    // A, not willing, keeps its own.
    let f = dcbtool_fields(&a.dcbtool(&["go", "va", "pfc"]));
    assert_eq!(dcbtool_field(&f, "pfcup"), "0 0 0 1 1 0 0 0");
}

#[test]
fn ieee_willing_lldpad_adopts_the_peers_recommendation_pfc_and_app() {
    if !require(
        "ieee_willing_lldpad_adopts_the_peers_recommendation_pfc_and_app",
        LLDPAD_PEER,
    ) {
        return;
    }
    let p = Pair::up();
    let a = LldpadPeer::start(&p.a, "va", Mode::Ieee);
    let b = LldpadPeer::start(&p.b, "vb", Mode::Ieee);
    for args in [
        &[
            "-T",
            "-i",
            "va",
            "-V",
            "ETS-CFG",
            "willing=no",
            "tsa=0:ets,1:ets,2:strict,3:strict,4:strict,5:strict,6:strict,7:strict",
            "up2tc=0:0,1:0,2:0,3:1,4:1,5:0,6:0,7:0",
            "tcbw=40,60,0,0,0,0,0,0",
        ][..],
        &[
            "-T",
            "-i",
            "va",
            "-V",
            "ETS-REC",
            "enableTx=yes",
            "tsa=0:ets,1:ets,2:strict,3:strict,4:strict,5:strict,6:strict,7:strict",
            "up2tc=0:0,1:0,2:0,3:1,4:1,5:0,6:0,7:0",
            "tcbw=40,60,0,0,0,0,0,0",
        ][..],
        &[
            "-T",
            "-i",
            "va",
            "-V",
            "PFC",
            "enableTx=yes",
            "willing=no",
            "enabled=3,4",
        ][..],
        &["-T", "-i", "va", "-V", "APP", "app=3,5,26"][..],
        &["-T", "-i", "va", "-V", "APP", "enableTx=yes"][..],
        &["-T", "-i", "vb", "-V", "ETS-CFG", "willing=yes"][..],
        &["-T", "-i", "vb", "-V", "PFC", "willing=yes"][..],
    ] {
        let peer = if args[2] == "va" { &a } else { &b };
        peer.lldptool_ok(args);
    }
    let st = poll("B's driver to hold A's PFC, ETS and APP", || {
        let st = b.driver_state()?;
        (st.ieee_pfc_en() == 0x18
            && st.list("ieee_ets_tc_tx_bw").starts_with(&[40, 60])
            && st.ieee_apps().contains(&(5, 3, 26)))
        .then_some(st)
    });
    assert_eq!(
        st.list("ieee_ets_prio_tc"),
        [0, 0, 0, 1, 1, 0, 0, 0],
        "{st}"
    );
    assert_eq!(st.num("dcbx") & 0x08, 0x08, "IEEE mode:\n{st}");
    let pfc = b.lldptool(&["-t", "-i", "vb", "-n", "-V", "PFC"]);
    assert!(pfc.contains("3 4"), "{pfc}");
}

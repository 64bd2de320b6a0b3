#![allow(clippy::unwrap_used)]
//! Interoperability with lldpad, the reference implementation, in IEEE 802.1Qaz mode:
//! lldpad on `va` under lossless-testkit's emulated DCB driver, losslessd on `vb`.
//! The oracles are lldpad's own account (`lldptool -t` for what it runs and sends,
//! `-t -n` for what it received from us, `-c` for its configuration), what it
//! programmed into its emulated driver, and tshark for our frames. Each test runs in
//! its own namespaces; the guards stop lldpad and losslessd and delete the namespaces
//! on drop, whatever happens.

mod common;
#[path = "lldpad_ieee/harness.rs"]
mod harness;
#[path = "lldpad_ieee/tshark.rs"]
mod tshark;

use common::*;
use harness::*;
use lossless_testkit::{lldptool_app_config, lldptool_apps};
use serde_json::{json, Value};

// ------------------------------------------------------------------ lldpad adopts ours

#[test]
fn a_willing_lldpad_adopts_our_recommendation_pfc_and_app() {
    if !require(
        "a_willing_lldpad_adopts_our_recommendation_pfc_and_app",
        LLDPAD_PEER,
    ) {
        return;
    }
    let i = Interop::new(AUTHORITY, LOW_MAC, Mode::Ieee);
    lldpad_willing(&i);
    // What lldpad programmed into its driver: exactly what we advertised.
    let st = wait_every(LIMIT, EVERY, "lldpad to program our ETS and PFC", || {
        let st = i.driver()?;
        (st.ieee_pfc_en() == 0x18 && st.list("ieee_ets_prio_tc") == PRIO_TC.map(u64::from))
            .then_some(st)
    });
    assert!(st.dcb_state(), "{st}");
    assert_eq!(st.num("dcbx") & 0x08, 0x08, "IEEE mode:\n{st}");
    assert_eq!(st.list("ieee_ets_tc_tx_bw"), TC_BW.map(u64::from), "{st}");
    assert_eq!(st.list("ieee_ets_tc_tsa"), tsa_numbers(TSA), "{st}");
    let mut apps = wait_every(LIMIT, EVERY, "lldpad to program our APP", || {
        let mut a = i.driver()?.ieee_apps();
        (a.len() == 3).then(|| {
            a.sort_unstable();
            a
        })
    });
    apps.sort_unstable();
    // The driver keeps (selector, priority, protocol).
    assert_eq!(apps, [(1, 4, 0x8906), (3, 3, 4791), (5, 3, 26)]);

    // What lldpad runs and sends (it is willing, and says so).
    let table = lldptool_table(PRIO_TC, TC_BW, TSA);
    i.expect_view(
        "ETS-CFG",
        false,
        &table_fields(&table, &[("Willing", "yes")]),
    );
    i.expect_view("PFC", false, &[("Willing", "yes"), ("PFC enabled", "3 4")]);
    // Its configuration: willing, no PFC of its own; our entries learnt and set.
    assert_eq!(i.config("ETS-CFG", "willing"), "willing=yes");
    assert_eq!(i.config("PFC", "willing"), "willing=yes");
    assert_eq!(i.config("PFC", "enabled"), "enabled=");
    let learnt = [
        app(3, 3, 4791, true),
        app(3, 5, 26, true),
        app(4, 1, 0x8906, true),
    ];
    settle(
        "lldpad's APP table to hold ours, set",
        || lldptool_app_config(&i.config("APP", "app")),
        |t| t == &learnt,
    );

    // What lldpad received from us.
    i.expect_view("ETS-CFG", true, &table_fields(&table, &[("Willing", "no")]));
    i.expect_view("ETS-REC", true, &table_fields(&table, &[]));
    i.expect_view("PFC", true, &[("Willing", "no"), ("PFC enabled", "3 4")]);
    settle(
        "lldptool -t -n -V APP to show ours",
        || lldptool_apps(&i.view_text("APP", true)),
        |a| a == &AUTHORITY_APPS,
    );

    // Ours: agreed, the peer willing and running our table.
    let v = wait_for(LIMIT, "losslessd agreed", || {
        let v = i.ours();
        converged(&v).then_some(v)
    });
    assert_eq!(v["mode"]["running"], "ieee");
    assert_eq!(v["mode"]["reason"], "auto_default");
    assert_eq!(v["any_error"], false);
    let e = &v["ieee"]["ets"];
    let t = json_table(PRIO_TC, TC_BW, TSA);
    assert_eq!((&e["oper"], &e["peer"]), (&t, &t), "{e}");
    assert_eq!(e["peer_willing"], true);
    assert_eq!(e["reason"], "not_willing");
    assert_eq!(v["ieee"]["ets_recommend"], true);
    let p = &v["ieee"]["pfc"];
    assert_eq!((&p["oper"], &p["peer"]), (&json!([3, 4]), &json!([3, 4])));
    assert_eq!(
        (&p["peer_willing"], &p["reason"]),
        (&json!(true), &json!("peer_willing"))
    );
    assert_eq!(p["agreed"], true);
}

// ------------------------------------------------------------------ ours adopts lldpad's

const WILLING: &str = r#"
[ports."vb"]
apply = "dcbnl"
pfc = { willing = true }

[ports."vb".ets]
willing = true
"#;

// lldpad's ETS configuration and, different, its recommendation.
const CFG_PRIO_TC: [u8; 8] = [0, 0, 0, 1, 1, 0, 0, 0];
const CFG_TC_BW: [u8; 8] = [50, 50, 0, 0, 0, 0, 0, 0];
const CFG_TSA: [&str; 8] = [
    "ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict",
];
const REC_PRIO_TC: [u8; 8] = [0, 0, 2, 1, 1, 2, 0, 3];
const REC_TC_BW: [u8; 8] = [30, 30, 40, 0, 0, 0, 0, 0];
const REC_TSA: [&str; 8] = [
    "ets", "ets", "ets", "strict", "strict", "strict", "strict", "strict",
];

/// lldptool's `tsa=` and `up2tc=` arguments.
fn lldptool_args(prio_tc: [u8; 8], tc_bw: [u8; 8], tsa: [&str; 8]) -> [String; 3] {
    let pairs = |f: &dyn Fn(usize) -> String| (0..8).map(f).collect::<Vec<_>>().join(",");
    [
        format!("tsa={}", pairs(&|t| format!("{t}:{}", tsa[t]))),
        format!("up2tc={}", pairs(&|p| format!("{p}:{}", prio_tc[p]))),
        format!("tcbw={}", pairs(&|t| tc_bw[t].to_string())),
    ]
}

#[test]
fn b_willing_losslessd_adopts_lldpads_recommendation_and_pfc() {
    if !require(
        "b_willing_losslessd_adopts_lldpads_recommendation_and_pfc",
        LLDPAD_PEER,
    ) {
        return;
    }
    let i = Interop::with(
        WILLING,
        LOW_MAC,
        Mode::Ieee,
        Extras {
            driver: true,
            ..Extras::default()
        },
    );
    let cfg = lldptool_args(CFG_PRIO_TC, CFG_TC_BW, CFG_TSA);
    let rec = lldptool_args(REC_PRIO_TC, REC_TC_BW, REC_TSA);
    let mut args = vec!["enableTx=yes", "willing=no"];
    args.extend(cfg.iter().map(String::as_str));
    i.set("ETS-CFG", &args);
    let mut args = vec!["enableTx=yes"];
    args.extend(rec.iter().map(String::as_str));
    i.set("ETS-REC", &args);
    i.set("PFC", &["enableTx=yes", "willing=no", "enabled=3,4"]);

    let rec_json = json_table(REC_PRIO_TC, REC_TC_BW, REC_TSA);
    let v = wait_for(LIMIT, "losslessd to adopt lldpad's", || {
        let v = i.ours_cli();
        (converged(&v)
            && v["ieee"]["ets"]["oper"] == rec_json
            && v["ieee"]["pfc"]["oper"] == json!([3, 4]))
        .then_some(v)
    });
    assert_eq!(v["mode"]["running"], "ieee");
    let e = &v["ieee"]["ets"];
    assert_eq!(e["reason"], "adopted_recommendation");
    assert_eq!(
        e["peer"],
        json_table(CFG_PRIO_TC, CFG_TC_BW, CFG_TSA),
        "{e}"
    );
    assert_eq!(e["peer_willing"], false);
    let peer_rec = &v["ieee"]["peer_tlvs"]["ets_recommendation"];
    for k in ["prio_tc", "tc_bw", "tsa"] {
        assert_eq!(peer_rec[k], rec_json[k], "{peer_rec}");
    }
    let p = &v["ieee"]["pfc"];
    assert_eq!((&p["oper"], &p["peer"]), (&json!([3, 4]), &json!([3, 4])));
    assert_eq!(
        (&p["peer_willing"], &p["reason"]),
        (&json!(false), &json!("adopted_peer"))
    );
    assert_eq!(
        (&p["agreed"], &p["oper_mode"]),
        (&json!(true), &json!(true))
    );

    // lldpad received our operational values, willing; it runs its own.
    let rec_text = lldptool_table(REC_PRIO_TC, REC_TC_BW, REC_TSA);
    i.expect_view(
        "ETS-CFG",
        true,
        &table_fields(&rec_text, &[("Willing", "yes")]),
    );
    i.expect_view("PFC", true, &[("Willing", "yes"), ("PFC enabled", "3 4")]);
    let cfg_text = lldptool_table(CFG_PRIO_TC, CFG_TC_BW, CFG_TSA);
    i.expect_view(
        "ETS-CFG",
        false,
        &table_fields(&cfg_text, &[("Willing", "no")]),
    );
    let st = wait_every(LIMIT, EVERY, "lldpad to program its own", || {
        let st = i.driver()?;
        (st.ieee_pfc_en() == 0x18 && st.list("ieee_ets_prio_tc") == CFG_PRIO_TC.map(u64::from))
            .then_some(st)
    });
    assert_eq!(
        st.list("ieee_ets_tc_tx_bw"),
        CFG_TC_BW.map(u64::from),
        "{st}"
    );
    assert_eq!(st.list("ieee_ets_tc_tsa"), tsa_numbers(CFG_TSA), "{st}");

    // And ours (`apply = "dcbnl"`) programmed what it adopted: lldpad's
    // recommendation and PFC.
    let ours = i.our_driver.as_ref().unwrap();
    let st = wait_for(LIMIT, "losslessd to program what it adopted", || {
        let st = ours.state("vb")?;
        (st.ieee_pfc_en() == 0x18 && st.list("ieee_ets_prio_tc") == REC_PRIO_TC.map(u64::from))
            .then_some(st)
    });
    assert_eq!(st.num("dcbx"), 0x09, "host, IEEE:\n{st}");
    assert_eq!(
        st.list("ieee_ets_tc_tx_bw"),
        REC_TC_BW.map(u64::from),
        "{st}"
    );
    assert_eq!(st.list("ieee_ets_tc_tsa"), tsa_numbers(REC_TSA), "{st}");
}

// ------------------------------------------------------------------ both willing

const BOTH_WILLING: &str = "[ports.\"vb\"]\npfc = { willing = true, priorities = [3, 4] }\n";

/// Both willing, ours on PFC 3,4, lldpad's on 1,6: the lower MAC takes the other's
/// (IEEE 802.1Q-2018 D.3.3; lldpad's pfc_sm compares the MACs the same way).
fn both_willing(lldpad_mac: &str) -> (Interop, Value) {
    let i = Interop::new(BOTH_WILLING, lldpad_mac, Mode::Ieee);
    i.set("PFC", &["enableTx=yes", "willing=yes", "enabled=1,6"]);
    let (want, oper) = if lldpad_mac < OUR_MAC {
        (0x18, json!([3, 4]))
    } else {
        (0x42, json!([1, 6]))
    };
    wait_every(LIMIT, EVERY, "lldpad to program PFC", || {
        (i.driver()?.ieee_pfc_en() == want).then_some(())
    });
    let v = wait_for(LIMIT, "losslessd agreed", || {
        let v = i.ours();
        (converged(&v) && v["ieee"]["pfc"]["oper"] == oper).then_some(v)
    });
    // lldpad keeps its own configuration either way (`-c` prints the bitmap, 0x42,
    // in decimal).
    assert_eq!(i.config("PFC", "enabled"), "enabled=66");
    (i, v)
}

#[test]
fn c_both_willing_lldpad_with_the_lower_mac_takes_ours() {
    if !require(
        "c_both_willing_lldpad_with_the_lower_mac_takes_ours",
        LLDPAD_PEER,
    ) {
        return;
    }
    let (i, v) = both_willing(LOW_MAC);
    let p = &v["ieee"]["pfc"];
    assert_eq!(p["reason"], "tie_break_kept", "{p}");
    assert_eq!((&p["oper"], &p["peer"]), (&json!([3, 4]), &json!([3, 4])));
    assert_eq!(p["peer_willing"], true);
    i.expect_view("PFC", false, &[("Willing", "yes"), ("PFC enabled", "3 4")]);
}

#[test]
fn c_both_willing_losslessd_with_the_lower_mac_takes_lldpads() {
    if !require(
        "c_both_willing_losslessd_with_the_lower_mac_takes_lldpads",
        LLDPAD_PEER,
    ) {
        return;
    }
    let (i, v) = both_willing(HIGH_MAC);
    let p = &v["ieee"]["pfc"];
    assert_eq!(p["reason"], "tie_break_adopted", "{p}");
    assert_eq!((&p["oper"], &p["peer"]), (&json!([1, 6]), &json!([1, 6])));
    assert_eq!(p["peer_willing"], true);
    i.expect_view("PFC", false, &[("Willing", "yes"), ("PFC enabled", "1 6")]);
    i.expect_view("PFC", true, &[("Willing", "yes"), ("PFC enabled", "1 6")]);
}

// ------------------------------------------------------------------ DSCP both ways

const DSCP: &str = r#"
[ports."vb".app]
entries = [
    { selector = "dscp", protocol = 10, priority = 1 },
    { selector = "dscp", protocol = 46, priority = 5 },
]
"#;

#[test]
fn d_dscp_app_entries_cross_both_ways() {
    if !require("d_dscp_app_entries_cross_both_ways", LLDPAD_PEER) {
        return;
    }
    let i = Interop::new(DSCP, LOW_MAC, Mode::Ieee);
    i.set("APP", &["enableTx=yes", "app=3,5,26"]);
    // Ours in lldpad's neighbour view, its table and its driver.
    settle(
        "lldptool -t -n -V APP to show our DSCP entries",
        || lldptool_apps(&i.view_text("APP", true)),
        |a| a == &[(1, 5, 10), (5, 5, 46)],
    );
    let table = [
        app(1, 5, 10, true),
        app(3, 5, 26, false),
        app(5, 5, 46, true),
    ];
    settle(
        "lldpad's APP table to hold ours, set, and its own",
        || lldptool_app_config(&i.config("APP", "app")),
        |t| t == &table,
    );
    let mut driver = wait_every(LIMIT, EVERY, "lldpad's driver to hold all three", || {
        let a = i.driver()?.ieee_apps();
        (a.len() == 3).then_some(a)
    });
    driver.sort_unstable();
    assert_eq!(driver, [(5, 1, 10), (5, 3, 26), (5, 5, 46)]);

    // lldpad's in ours: the peer's table is what lldpad says it sends (its entry and,
    // as lldpad does, the ones it learnt from us); ours runs our entries, then its.
    let sent = settle(
        "lldptool -t -V APP to show what lldpad sends",
        || lldptool_apps(&i.view_text("APP", false)),
        |a| a == &[(1, 5, 10), (3, 5, 26), (5, 5, 46)],
    );
    let v = settle(
        "losslessd to show lldpad's APP table as the peer's",
        || i.ours(),
        |v| v["ieee"]["app"]["peer"].is_array() && json_apps(&v["ieee"]["app"]["peer"]) == sent,
    );
    assert!(converged(&v), "{v:#}");
    let a = &v["ieee"]["app"];
    assert_eq!(
        a["oper"],
        json!([
            { "selector": "dscp", "protocol": 10, "priority": 1 },
            { "selector": "dscp", "protocol": 46, "priority": 5 },
            { "selector": "dscp", "protocol": 26, "priority": 3 },
        ])
    );
    assert_eq!(a["reason"], "merged");
}

// ------------------------------------------------------------------ CEE lldpad

#[test]
fn e_auto_falls_back_to_cee_lldpad_and_returns_to_ieee_after_a_link_reset() {
    if !require(
        "e_auto_falls_back_to_cee_lldpad_and_returns_to_ieee_after_a_link_reset",
        LLDPAD_PEER,
    ) {
        return;
    }
    let mut i = Interop::new("[ports.\"vb\"]\n", LOW_MAC, Mode::Cee);
    i.lldpad()
        .dcbtool_ok(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00011000"]);
    let v = wait_for(LIMIT, "losslessd to run CEE PFC", || {
        let v = i.ours();
        (converged(&v) && priorities(&v["pfc"]["oper"]) == [3, 4]).then_some(v)
    });
    assert_eq!(
        (&v["mode"]["running"], &v["mode"]["reason"]),
        (&json!("cee"), &json!("peer_cee_only"))
    );
    assert_eq!(v["pfc"]["reason"], "adopted_peer");
    assert_eq!(v["pfc"]["syncd"], true);
    assert_eq!(v["ieee"]["pfc"]["reason"], "dcbx_inactive");
    wait_every(LIMIT, EVERY, "lldpad in sync", || {
        let f = dcbtool_fields(&i.lldpad().dcbtool(&["go", "va", "pfc"]));
        (dcbtool_field(&f, "Syncd") == "true").then_some(())
    });

    // lldpad stops (no shutdown LLDPDU: its neighbour entry stays with us), the link
    // resets: back to IEEE, before any IEEE peer.
    i.lldpad.take();
    assert_eq!(i.ours()["mode"]["running"], "cee");
    i.nb.ip(&["link", "set", "vb", "down"]);
    wait_for(LIMIT, "losslessd to see the link down", || {
        (i.ours()["peer_present"] == false).then_some(())
    });
    i.nb.ip(&["link", "set", "vb", "up"]);
    i.nb.wait_running("vb");
    let v = wait_for(LIMIT, "IEEE again", || {
        let v = i.ours();
        (v["mode"]["running"] == "ieee").then_some(v)
    });
    assert_eq!(v["mode"]["reason"], "link_reset");

    // lldpad again, in IEEE mode, on other priorities: negotiated in IEEE.
    let l = LldpadPeer::start(&i.na, "va", Mode::Ieee);
    i.lldpad = Some(l);
    i.set("PFC", &["enableTx=yes", "willing=no", "enabled=2,5"]);
    let v = wait_for(LIMIT, "losslessd to run lldpad's IEEE PFC", || {
        let v = i.ours();
        (converged(&v) && v["ieee"]["pfc"]["oper"] == json!([2, 5])).then_some(v)
    });
    assert_eq!(
        (&v["mode"]["running"], &v["mode"]["reason"]),
        (&json!("ieee"), &json!("link_reset"))
    );
    assert_eq!(v["ieee"]["pfc"]["reason"], "adopted_peer");
    i.expect_view("PFC", true, &[("Willing", "yes"), ("PFC enabled", "2 5")]);
    let st = i.driver().expect("lldpad programmed its driver");
    assert_eq!(st.num("dcbx") & 0x0c, 0x08, "lldpad in IEEE mode:\n{st}");
}

#[test]
fn f_ieee_only_port_has_no_dcbx_peer_in_a_cee_lldpad() {
    if !require(
        "f_ieee_only_port_has_no_dcbx_peer_in_a_cee_lldpad",
        LLDPAD_PEER,
    ) {
        return;
    }
    let i = Interop::new(
        "[ports.\"vb\"]\ndcbx = { mode = \"ieee\" }\npfc = { priorities = [3] }\n",
        LOW_MAC,
        Mode::Cee,
    );
    i.lldpad()
        .dcbtool_ok(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00011000"]);
    let v = wait_for(LIMIT, "losslessd to see a CEE-only neighbour", || {
        let v = i.ours();
        (v["ieee"]["pfc"]["reason"] == "peer_cee_only").then_some(v)
    });
    // A second look, two more of lldpad's LLDPDUs later: nothing changed.
    let frames_in = || {
        i.d.call(&lossless_node::protocol::Request::Counters {
            port: Some("vb".into()),
        })["ports"][0]["lldp"]["frames_in"]
            .as_u64()
    };
    let seen = frames_in().expect("vb's LLDP counters");
    wait_every(LIMIT, EVERY, "two more of lldpad's LLDPDUs", || {
        (frames_in()? >= seen + 2).then_some(())
    });
    for v in [v, i.ours()] {
        assert_eq!(v["peer_present"], false, "{v:#}");
        assert_eq!(v["all_syncd"], false);
        assert_eq!(
            v["mode"],
            json!({ "configured": "ieee", "running": "ieee", "reason": "configured",
                    "reason_text": "configured" })
        );
        for f in ["ets", "pfc", "app"] {
            let s = &v["ieee"][f];
            assert_eq!(s["reason"], "peer_cee_only", "{f}: {s}");
            assert_eq!(
                s["reason_text"],
                "the neighbour speaks CEE DCBX only and this port runs IEEE only"
            );
            assert_eq!(s["peer"], Value::Null, "{f}: {s}");
        }
        // Without a peer IEEE runs its own configuration.
        let p = &v["ieee"]["pfc"];
        assert_eq!((&p["oper"], &p["oper_mode"]), (&json!([3]), &json!(true)));
    }
    // lldpad (CEE) sees no DCBX peer in our IEEE TLVs either.
    let f = dcbtool_fields(&i.lldpad().dcbtool(&["gp", "va", "pfc"]));
    assert_eq!(dcbtool_field(&f, "Status"), "Peer feature not present");
}

#![allow(clippy::unwrap_used)]
//! A RoCE host's status against real peers, as a GPU-cluster operator would try it:
//! losslessd with `lossless profile roce`'s section (willing, `apply = "dcbnl"` on the
//! emulated driver) beside
//!
//! - lldpad in IEEE 802.1Qaz mode, not willing, pushing PFC on 4 only: the host takes
//!   it (the driver gets `pfc.en=0x10`), its APP entries still send RoCE to 3, and
//!   `status` must say the RoCE class is lossy (it said "ok");
//! - lldpad in CEE DCBX mode doing the same: never "ok";
//! - lldpd (no DCBX, as SONiC): in `auto` the host has no DCBX peer (unhealthy, as it
//!   should be), in `static` the file's configuration is programmed and the host is
//!   healthy; then `dcbx set PORT mode static` at run time does the same.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::Lldpd;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(20);

/// `lossless profile roce --port vb`, with the NIC programmed.
fn roce() -> String {
    roce_profile("vb", "")
}

/// losslessd on `vb` under the emulated driver, the peer's side `va`.
struct Host {
    on: OnVeth,
    shim: ShimEnv,
    _shim_dir: TempDir,
}

impl Host {
    fn start(conf: &str) -> Host {
        let dir = TempDir::new();
        let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"]);
        let on = OnVeth::start(conf, &shim.vars());
        Host {
            on,
            shim,
            _shim_dir: dir,
        }
    }

    fn port(&self) -> Value {
        self.on.d.call(&Request::Status)["ports"][0].clone()
    }
}

/// lldpad, not willing, advertises PFC on `priorities` (`lldptool -T -V PFC`).
fn lldpad_pfc(l: &LldpadPeer, priorities: &str) {
    let enabled = format!("enabled={priorities}");
    l.lldptool_ok(&[
        "-T",
        "-i",
        "va",
        "-V",
        "PFC",
        "enableTx=yes",
        "willing=no",
        &enabled,
    ]);
}

const LOSSY_3: &str = "carries a class the configuration makes lossless, but priority 3 has no \
                       PFC in operation (PFC on 4: willing: running the peer's configuration): \
                       that traffic is lossy";

#[test]
fn lldpad_ieee_pushing_pfc_on_4_makes_roce_lossy_and_status_says_so() {
    if !require(
        "lldpad_ieee_pushing_pfc_on_4_makes_roce_lossy_and_status_says_so",
        LLDPAD_PEER,
    ) {
        return;
    }
    let h = Host::start(&roce());
    let l = LldpadPeer::start(&h.on.na, "va", Mode::Ieee);
    lldpad_pfc(&l, "4");
    // The host adopts lldpad's PFC and programs it ...
    wait_for(LIMIT, "the driver to run PFC on 4", || {
        (h.shim.state("vb")?.ieee_pfc_en() == 1 << 4).then_some(())
    });
    // ... and its status says what that does to RoCE.
    let port = wait_for(LIMIT, "the lossy class in status", || {
        let p = h.port();
        (p["problems"].as_array()?.len() == 2).then_some(p)
    });
    assert_eq!(port["healthy"], false, "{port:#}");
    assert_eq!(
        port["problems"],
        json!([
            format!("APP dscp 26 (AF31) -> 3 {LOSSY_3}"),
            format!("APP udp 4791 (RoCEv2) -> 3 {LOSSY_3}"),
        ]),
        "{port:#}"
    );
    // The same from the CLI.
    let out = h.on.d.cli(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("APP dscp 26 (AF31) -> 3 carries"), "{text}");

    // lldpad back on PFC 3: nothing to say any more.
    lldpad_pfc(&l, "3");
    wait_for(LIMIT, "the host healthy again", || {
        (h.port()["healthy"] == true).then_some(())
    });
    assert_eq!(h.shim.state("vb").unwrap().ieee_pfc_en(), 1 << 3);
}

#[test]
fn lldpad_cee_pushing_pfc_on_4_is_never_ok() {
    if !require("lldpad_cee_pushing_pfc_on_4_is_never_ok", LLDPAD_PEER) {
        return;
    }
    let h = Host::start(&roce());
    let l = LldpadPeer::start(&h.on.na, "va", Mode::Cee);
    l.dcbtool_ok(&["sc", "va", "pfc", "e:1", "a:1", "w:0", "pfcup:00001000"]);
    // The host takes lldpad's PFC and programs it (CEE: per priority) ...
    wait_for(LIMIT, "the driver to run PFC on 4", || {
        (h.shim.state("vb")?.cee_pfc() == [0, 0, 0, 0, 1, 0, 0, 0]).then_some(())
    });
    // ... and never calls that "ok": RoCEv2 (port 4791 -> 3) has no PFC now. What
    // it says depends on lldpad's APP feature: Debian 12's lldpad, willing, makes
    // both ends' APP a mismatch; not willing, it reports an error of its own for
    // our APP TLV, which carries no entry of its FCoE subtype. Either way the APP
    // feature is not operational and status names it; the lossy-class rule for a
    // CEE APP table that runs is the lab's test
    // (`lossless-lab --test truthful_host cee_too_...`).
    for willing in ["w:1", "w:0"] {
        l.dcbtool_ok(&["sc", "va", "app:0", "e:1", "a:1", willing]);
        let port = wait_for(LIMIT, "status to name the APP feature", || {
            let p = h.port();
            let app = p["problems"]
                .as_array()?
                .iter()
                .any(|x| x.as_str().is_some_and(|t| t.starts_with("app: ")));
            app.then_some(p)
        });
        assert_eq!(port["mode"]["running"], "cee", "{port:#}");
        assert_eq!(port["healthy"], false, "{port:#}");
    }
}

#[test]
fn static_mode_beside_lldpd_programs_the_file_and_is_healthy() {
    if !require(
        "static_mode_beside_lldpd_programs_the_file_and_is_healthy",
        &[Oracle::Netns, Oracle::Lldpd, Oracle::Gcc],
    ) {
        return;
    }
    // auto mode: the neighbour sends no DCBX TLV, so there is no DCBX peer: unhealthy,
    // which is true (nothing was agreed), and the reason to have static mode.
    let h = Host::start(&roce());
    let lldpd = Lldpd::start(&h.on.na, "va");
    lldpd.wait_neighbor(LIMIT, |_| true);
    let port = wait_for(LIMIT, "no DCBX peer in auto mode", || {
        let p = h.port();
        (p["problems"] == json!(["the LLDP neighbour sends no DCBX TLV"])).then_some(p)
    });
    assert_eq!(port["healthy"], false);

    // At run time: static mode, persisted like any `dcbx set`.
    let out = h.on.d.cli(&["dcbx", "set", "vb", "mode", "static"]);
    assert!(out.status.success(), "{out:?}");
    let port = wait_for(LIMIT, "healthy in static mode", || {
        let p = h.port();
        (p["healthy"] == true).then_some(p)
    });
    assert_eq!(port["mode"]["configured"], "static", "{port:#}");
    // The file's configuration is in the NIC: PFC on 3, the DSCP entries, DSCP trust.
    let st = h.shim.state("vb").unwrap();
    assert_eq!(st.ieee_pfc_en(), 1 << 3);
    assert!(st.ieee_apps().contains(&(5, 3, 26)), "{:?}", st.ieee_apps());
    assert!(st.ieee_apps().contains(&(5, 6, 48)), "{:?}", st.ieee_apps());
    assert_eq!(st.list("ieee_ets_prio_tc"), [0, 0, 0, 1, 0, 0, 2, 0]);
    // No DCBX TLV leaves the host: lldpd sees none.
    let n = lldpd.neighbors().to_string();
    assert!(!n.contains("dcbx") && !n.contains("PFC"), "{n}");

    // From the file, from the start: the same.
    drop(h);
    let conf = roce().replace(
        "[ports.\"vb\"]\n",
        "[ports.\"vb\"]\ndcbx.mode = \"static\"\n",
    );
    let h = Host::start(&conf);
    let _lldpd = Lldpd::start(&h.on.na, "va");
    wait_for(LIMIT, "healthy in static mode from the file", || {
        let p = h.port();
        (p["healthy"] == true && p["neighbors"] == 1).then_some(())
    });
}

#[test]
fn a_section_that_matches_nothing_and_no_port_at_all_are_not_ok() {
    if !require(
        "a_section_that_matches_nothing_and_no_port_at_all_are_not_ok",
        &[Oracle::Netns],
    ) {
        return;
    }
    // A file written for other hardware: one section matches, one matches nothing.
    let h = Host::start("[ports.\"vb\"]\n\n[ports.\"enp9s0f0np0\"]\napply = \"dcbnl\"\n");
    let st = wait_for(LIMIT, "the unmatched section in status", || {
        let v = h.on.d.call(&Request::Status);
        (v["problems"].as_array()?.iter().any(|p| {
            p.as_str()
                .is_some_and(|t| t.starts_with("ports.\"enp9s0f0np0\""))
        }))
        .then_some(v)
    });
    assert_eq!(st["healthy"], false, "{st:#}");
    assert!(
        st["problems"].as_array().unwrap().contains(&json!(
            "ports.\"enp9s0f0np0\": matches no interface on this host"
        )),
        "{st:#}"
    );
    // Nothing managed at all: not "ok" either.
    let h = Host::start("[ports.\"enp9s0f0np0\"]\n");
    let st = wait_for(LIMIT, "no port in status", || {
        let v = h.on.d.call(&Request::Status);
        (v["problems"].as_array()?.len() == 2).then_some(v)
    });
    assert_eq!(st["healthy"], false, "{st:#}");
    assert_eq!(
        st["problems"][1],
        "no port managed: no interface here matches the configuration or --interface",
        "{st:#}"
    );
}

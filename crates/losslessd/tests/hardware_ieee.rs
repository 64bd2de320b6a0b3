#![allow(clippy::unwrap_used)]
//! IEEE 802.1Qaz reaching the NIC: losslessd (willing, `apply = "dcbnl"`) under
//! lossless-testkit's emulated DCB driver, next to a not-willing losslessd; the driver
//! records what it was told (its state file), as a real driver's dcbnl ops would hold
//! it. Checked: the DCBX mode (SDCBX HOST|VER_IEEE), ETS and PFC as negotiated, the APP
//! entries merged from the peer added beside an entry another tool set, a withdrawn
//! entry deleted alone (one IEEE_DEL), and the trust order for DSCP.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;

/// The switch side (va).
const SWITCH: &str = IEEE_SWITCH;

#[test]
fn negotiated_ieee_configuration_is_programmed_and_app_entries_withdrawn_one_by_one() {
    if !require(
        "negotiated_ieee_configuration_is_programmed",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let dir = TempDir::new();
    // Another tool (lldptool, `dcb app add`) put an entry in the NIC before: the
    // driver starts with it, and losslessd must leave it.
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"])
        .log_gets(true)
        .apps(&[(1, 2, 0x8914)]);
    let net = SwitchHost::start(
        dir.path(),
        SWITCH,
        "[ports.\"vb\"]\napply = \"dcbnl\"\n",
        &shim,
    );
    let (host, switch) = (&net.host, &net.switch);
    let dscp = (5, 3, 26);
    let udp = (3, 3, 4791);
    let foreign = (1, 2, 0x8914);
    wait_for(Duration::from_secs(5), "IEEE programmed", || {
        let st = shim.state("vb")?;
        (st.num("dcbx") == 0x09
            && st.list("ieee_ets_prio_tc") == [0, 0, 0, 1, 0, 0, 2, 0]
            && st.list("ieee_ets_tc_tx_bw") == [50, 50, 0, 0, 0, 0, 0, 0]
            && st.list("ieee_ets_tc_tsa") == [2, 2, 0, 0, 0, 0, 0, 0]
            && st.ieee_pfc_en() == 1 << 3
            && st.ieee_apps() == [foreign, dscp, udp]
            && st.list("app_trust") == [5, 255])
        .then_some(())
    });
    let status = host.call(&Request::Status);
    let hw = &status["ports"][0]["hardware"];
    assert_eq!(hw["mode"], "dcbnl", "{status:#}");
    assert!(hw.get("error").is_none(), "{hw}");

    // The switch stops advertising UDP 4791: the host deletes that entry, and only it.
    let fewer = SWITCH.replace(
        "    { selector = \"udp\", protocol = 4791, priority = 3 },\n",
        "",
    );
    std::fs::write(&net.switch_conf, fewer).unwrap();
    switch.call(&Request::Reload);
    wait_for(Duration::from_secs(5), "UDP 4791 withdrawn", || {
        (shim.state("vb")?.ieee_apps() == [foreign, dscp]).then_some(())
    });
    let deletes = shim.log().iter().filter(|e| e.cmd == "IEEE_DEL").count();
    assert_eq!(deletes, 1, "{}", shim.log_text());
}

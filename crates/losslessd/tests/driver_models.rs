#![allow(clippy::unwrap_used)]
//! losslessd against every driver model of lossless-testkit's emulated DCB driver
//! (generic, mlx5, ice, i40e, bnxt, hns3, ixgbe: each refuses what the real driver's
//! dcbnl ops refuse, as their kernel source says):
//!
//! - `lossless profile roce` (willing, `apply = "dcbnl"`) beside a not-willing switch
//!   that runs the same classes: on every model the NIC ends up with PFC on 3 and both
//!   DSCP entries, and every part the driver refused is named with its answer; the host
//!   is healthy unless a refusal leaves traffic unclassified;
//! - examples/losslessd.toml on ConnectX names: both RoCE ports programmed, the static
//!   one beside an LLDP-only leaf;
//! - the NIC changed behind the daemon's back with iproute2's `dcb` (an oracle we did
//!   not write, on the same emulated NIC), and a firmware reset: drift found, reported
//!   and repaired.

mod common;

use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::{dcb_tool, Model};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(20);

/// The switch: not willing, the profile's classes.
const SWITCH: &str = IEEE_SWITCH;

/// `lossless profile roce --port vb`, programming the NIC, `extra` in `[defaults]`.
fn roce(extra: &str) -> String {
    roce_profile("vb", extra)
}

/// The port's `dcbx show` once the NIC was read back after its programming.
fn programmed(net: &SwitchHost, shim: &ShimEnv, model: Model) -> Value {
    let t0 = std::time::Instant::now();
    loop {
        let st = shim.state("vb");
        let d = net.host.dcbx("vb");
        let done = st.as_ref().is_some_and(|st| {
            let apps = st.ieee_apps();
            st.ieee_pfc_en() == 1 << 3
                && apps.contains(&(5, 3, 26))
                && apps.contains(&(5, 6, 48))
                && d["nic"]["read_s_ago"].is_number()
        });
        if done {
            return d;
        }
        assert!(
            t0.elapsed() < LIMIT,
            "{}: the NIC not programmed in {LIMIT:?}: {:#}\ndriver log:\n{}\ndaemon log:\n{}",
            model.name(),
            d["nic"],
            std::fs::read_to_string(shim.dir().join("dcbdrv.log")).unwrap_or_default(),
            net.host.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_roce_profile_programs_every_driver_model_or_names_each_refusal() {
    if !require(
        "the_roce_profile_programs_every_driver_model_or_names_each_refusal",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let mut table = Vec::new();
    for model in Model::ALL {
        let dir = TempDir::new();
        let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"]).model(model);
        let net = SwitchHost::start(dir.path(), SWITCH, &roce(""), &shim);
        let d = programmed(&net, &shim, model);
        let nic = &d["nic"];
        let st = shim.state("vb").unwrap();
        assert_eq!(st.model(), model);
        // Every refusal is named with the driver's answer, and only the ones that
        // leave traffic unclassified are problems.
        let refused: Vec<&Value> = nic["refused"].as_array().unwrap().iter().collect();
        for r in &refused {
            let text = r["text"].as_str().unwrap();
            assert!(
                text.contains("refused by the driver (E")
                    || text.contains("refused by the driver (errno"),
                "{}: {text}",
                model.name()
            );
        }
        let uncovered: Vec<String> = refused
            .iter()
            .filter(|r| r["covered"] == false)
            .map(|r| format!("{}: not in the NIC", r["text"].as_str().unwrap()))
            .collect();
        // ice applies each change by closing and reopening the netdev: the link comes
        // back and DCBX agrees again before the status settles.
        let problems = |p: &Value| -> Vec<String> {
            p["problems"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap().to_string())
                .collect()
        };
        let t0 = std::time::Instant::now();
        let port = loop {
            let p = net.host.call(&Request::Status)["ports"][0].clone();
            if problems(&p) == uncovered || t0.elapsed() > LIMIT {
                break p;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        if problems(&port) != uncovered {
            eprintln!("{}", net.host.log());
            eprintln!(
                "{}",
                std::fs::read_to_string(dir.path().join("driver/dcbdrv.log")).unwrap_or_default()
            );
        }
        assert!(
            problems(&port) == uncovered,
            "{}: problems {:#}, expected {uncovered:?}\n{:#}",
            model.name(),
            port["problems"],
            net.host.dcbx("vb")["nic"]
        );
        if std::env::var("DEBUG_MODELS").is_ok() {
            eprintln!("{}", net.host.log());
            eprintln!(
                "{}",
                std::fs::read_to_string(dir.path().join("driver/dcbdrv.log")).unwrap_or_default()
            );
        }
        // The UDP entry is in the NIC, or refused by name.
        let udp_held = st.ieee_apps().contains(&(3, 3, 4791));
        let udp_refused = refused.iter().any(|r| {
            r["text"]
                .as_str()
                .unwrap()
                .starts_with("APP udp 4791 (RoCEv2) -> 3")
        });
        assert!(udp_held != udp_refused, "{}: {nic:#}", model.name());
        // What the NIC holds is what `dcb` (iproute2) reads there.
        let dcb = dcb_tool(&net.nb, &shim, &["-j", "app", "show", "dev", "vb"]);
        assert!(dcb.status.success(), "{}: {dcb:?}", model.name());
        let dcb: Value = serde_json::from_slice(&dcb.stdout).unwrap();
        for pair in [[26, 3], [48, 6]] {
            assert!(
                dcb["dscp_prio"]
                    .as_array()
                    .is_some_and(|v| v.contains(&serde_json::json!(pair))),
                "{}: dcb app show: {dcb}",
                model.name()
            );
        }
        // Nothing programmed again once it is held: a second look finds the same sets.
        let sets = st.sets();
        net.host.dcbx("vb");
        net.host.dcbx("vb");
        assert_eq!(shim.state("vb").unwrap().sets(), sets, "{}", model.name());
        table.push(format!(
            "{:8} healthy {:5} refused: {}",
            model.name(),
            port["healthy"],
            refused
                .iter()
                .map(|r| r["text"].as_str().unwrap())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    eprintln!("{}", table.join("\n"));
}

#[test]
fn a_change_behind_the_daemons_back_is_drift_repaired_or_reported() {
    if !require(
        "a_change_behind_the_daemons_back_is_drift_repaired_or_reported",
        &[Oracle::Netns, Oracle::Gcc, Oracle::Dcb],
    ) {
        return;
    }
    for (policy, model) in [("repair", Model::Mlx5), ("report", Model::Ice)] {
        let dir = TempDir::new();
        let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"]).model(model);
        let conf = roce(&format!("nic_drift = \"{policy}\"\n"));
        let net = SwitchHost::start(dir.path(), SWITCH, &conf, &shim);
        programmed(&net, &shim, model);
        // `dcb app del dev vb dscp-prio 26:3`, as an operator would, on the same NIC.
        let out = dcb_tool(
            &net.nb,
            &shim,
            &["app", "del", "dev", "vb", "dscp-prio", "26:3"],
        );
        assert!(out.status.success(), "{out:?}");
        assert!(!shim.state("vb").unwrap().ieee_apps().contains(&(5, 3, 26)));
        // `dcbx show` reads the NIC back: the drift is seen at once.
        let d = net.host.dcbx("vb");
        let nic = &d["nic"];
        assert_eq!(nic["drift_detected"], 1, "{nic:#}");
        // (ice, in DSCP mode, keeps priority n on class n: that ETS difference is
        // listed too, from the programming on, and is no drift.)
        assert!(
            nic["differences"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!(
                    "APP dscp 26 (AF31) -> 3: no longer in the NIC's table"
                )),
            "{nic:#}"
        );
        let events = net.host.call(&Request::Events { follow: false });
        let drift: Vec<&Value> = events["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == "nic_drift")
            .collect();
        assert_eq!(drift.len(), 1, "{events:#}");
        match policy {
            "repair" => {
                assert_eq!(drift[0]["repairing"], true);
                wait_for(LIMIT, "the entry programmed back", || {
                    shim.state("vb")?
                        .ieee_apps()
                        .contains(&(5, 3, 26))
                        .then_some(())
                });
                let port = wait_for(LIMIT, "healthy again", || {
                    let p = net.host.call(&Request::Status)["ports"][0].clone();
                    (p["healthy"] == true).then_some(p)
                });
                assert_eq!(port["problems"], serde_json::json!([]));
            }
            _ => {
                assert_eq!(drift[0]["repairing"], false);
                // ice's delete flapped the link: DCBX agrees again first.
                let want = serde_json::json!([
                    "read back: APP dscp 26 (AF31) -> 3: no longer in the NIC's table"
                ]);
                let port = wait_for(LIMIT, "the drift reported", || {
                    let p = net.host.call(&Request::Status)["ports"][0].clone();
                    (p["problems"] == want).then_some(p)
                });
                assert_eq!(port["healthy"], false);
                assert!(!shim.state("vb").unwrap().ieee_apps().contains(&(5, 3, 26)));
            }
        }
    }

    // A firmware reset: the NIC back to its power-on state, all of it repaired.
    let dir = TempDir::new();
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"]).model(Model::Mlx5);
    let net = SwitchHost::start(dir.path(), SWITCH, &roce(""), &shim);
    programmed(&net, &shim, Model::Mlx5);
    shim.reset_nic("vb");
    let d = net.host.dcbx("vb");
    assert_eq!(d["nic"]["drift_detected"], 1, "{:#}", d["nic"]);
    programmed(&net, &shim, Model::Mlx5);
}

/// examples/losslessd.toml as shipped, on ConnectX names, under every driver model:
/// the negotiating port (a leaf with DCBX, not willing) and the static one (a leaf
/// that sends LLDP only, as SONiC) each get the RoCE classes into the NIC, or name
/// what the driver refused; neither says "ok" unless it is.
#[test]
fn the_example_programs_every_driver_model_or_names_each_refusal() {
    if !require(
        "the_example_programs_every_driver_model_or_names_each_refusal",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/losslessd.toml");
    let leaf_conf = SWITCH.replace("[ports.\"va\"", "[ports.\"leaf0\"")
        + "\n[ports.\"leaf1\"]\ndcbx.enabled = false\n";
    let ports = ["enp65s0f0np0", "enp65s0f1np1"];
    for model in Model::ALL {
        let dir = TempDir::new();
        let (host, leaf) = (Netns::new(), Netns::new());
        for (i, name) in ports.iter().enumerate() {
            Veth::new(
                &host,
                name,
                &format!("02:00:00:00:01:0{i}"),
                &leaf,
                &format!("leaf{i}"),
                &format!("02:00:00:00:02:0{i}"),
            );
        }
        let shim = ShimEnv::new(&dir.path().join("driver"), &ports).model(model);
        let leaf_file = dir.path().join("leaf.toml");
        std::fs::write(&leaf_file, &leaf_conf).unwrap();
        let h = Daemon::start_with_env(
            &host,
            &dir.path().join("host"),
            &[
                "--config",
                example.to_str().unwrap(),
                "--metrics",
                "127.0.0.1:9718",
            ],
            &shim.vars(),
        );
        let _l = Daemon::start(
            &leaf,
            &dir.path().join("leaf"),
            &["--config", leaf_file.to_str().unwrap()],
        );
        for (i, port) in ports.iter().enumerate() {
            leaf.ip(&["link", "set", &format!("leaf{i}"), "up"]);
            host.ip(&["link", "set", port, "up"]);
        }
        let t0 = std::time::Instant::now();
        loop {
            let held = ports.iter().all(|p| {
                shim.state(p).is_some_and(|st| {
                    st.ieee_pfc_en() == 1 << 3
                        && st.ieee_apps().contains(&(5, 3, 26))
                        && st.ieee_apps().contains(&(5, 6, 48))
                })
            });
            let st = h.call(&Request::Status);
            let settled = st["ports"].as_array().is_some_and(|ps| {
                ps.len() == 2
                    && ps.iter().all(|p| {
                        // What is left must be a named refusal, nothing else.
                        p["problems"].as_array().is_some_and(|v| {
                            v.iter().all(|x| {
                                x.as_str()
                                    .is_some_and(|t| t.contains(": refused by the driver (E"))
                            })
                        })
                    })
            });
            if held && settled {
                let summary: Vec<String> = st["ports"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| format!("{} healthy {} {}", p["port"], p["healthy"], p["problems"]))
                    .collect();
                eprintln!("{:8} {}", model.name(), summary.join("; "));
                // The static port is static, the other negotiated.
                let f1 = h.dcbx("enp65s0f1np1");
                assert_eq!(f1["mode"]["configured"], "static");
                assert!(converged(&h.dcbx("enp65s0f0np0")));
                break;
            }
            assert!(
                t0.elapsed() < LIMIT,
                "{}: the example not programmed: {st:#}\n{}",
                model.name(),
                std::fs::read_to_string(shim.dir().join("dcbdrv.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A NIC whose firmware LLDP agent owns DCBX (ice with `fw-lldp-agent` on): the
/// driver refuses host-managed DCBX and every IEEE set; status names each refusal and
/// says a firmware agent may own DCBX, never "ok".
#[test]
fn a_firmware_agent_owning_dcbx_is_named_never_ok() {
    if !require(
        "a_firmware_agent_owning_dcbx_is_named_never_ok",
        EMULATED_DRIVER,
    ) {
        return;
    }
    let dir = TempDir::new();
    let shim = ShimEnv::new(&dir.path().join("driver"), &["vb"])
        .model(Model::Ice)
        .fw_agent(&["vb"]);
    let net = SwitchHost::start(dir.path(), SWITCH, &roce(""), &shim);
    let port = wait_for(LIMIT, "the refusals in status", || {
        let p = net.host.call(&Request::Status)["ports"][0].clone();
        let problems = p["problems"].as_array()?;
        problems
            .iter()
            .any(|x| {
                x.as_str()
                    .is_some_and(|t| t.starts_with("DCBX mode (host-managed): refused by the driver (status 1); a firmware agent may own DCBX"))
            })
            .then_some(p)
    });
    assert_eq!(port["healthy"], false, "{port:#}");
    let problems: Vec<&str> = port["problems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for part in ["ETS", "PFC", "APP dscp 26 (AF31) -> 3"] {
        assert!(
            problems
                .iter()
                .any(|t| t.starts_with(&format!("{part}: refused by the driver (EINVAL)"))),
            "{part}: {problems:#?}"
        );
    }
    // Nothing was taken: the NIC runs its firmware's defaults.
    let st = shim.state("vb").unwrap();
    assert_eq!(st.ieee_pfc_en(), 0);
    assert!(
        st.ieee_apps().iter().all(|a| a.0 != 5),
        "{:?}",
        st.ieee_apps()
    );
}

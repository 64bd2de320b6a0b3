//! `lossless lab`: the README's main job. Runs the binary and reads its JSON.

use std::process::Command;

fn lab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .arg("lab")
        .args(args)
        .output()
        .expect("run lossless");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn default_scenario_is_ieee_and_the_willing_host_runs_the_switchs_configuration() {
    let (code, stdout, _) = lab(&["--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(v["scenario"], "ieee");
    // Both links up at 0, 10 us each way: agreed after one exchange.
    assert_eq!(v["converged_at"].as_f64(), Some(0.00002));
    let (switch, host) = (&v["agents"][0], &v["agents"][1]);
    assert_eq!(host["name"], "host");
    assert_eq!(host["mode"]["configured"], "auto");
    assert_eq!(host["mode"]["running"], "ieee");
    assert_eq!(switch["mode"]["configured"], "ieee");
    assert_eq!(switch["mode"]["reason"], "configured");
    let ieee = &host["ieee"];
    for f in ["ets", "pfc", "app"] {
        assert_eq!(ieee[f]["willing"], true, "{f}");
        assert_eq!(ieee[f]["agreed"], true, "{f}");
        assert_eq!(ieee[f]["error"], false, "{f}");
        assert_eq!(switch["ieee"][f]["willing"], false, "{f}");
        assert_eq!(switch["ieee"][f]["agreed"], true, "{f}");
    }
    assert_eq!(ieee["ets"]["reason"], "adopted_recommendation");
    assert_eq!(
        ieee["ets"]["oper"]["prio_tc"],
        serde_json::json!([0, 0, 0, 1, 0, 0, 2, 0])
    );
    assert_eq!(
        ieee["ets"]["oper"]["tc_bw"],
        serde_json::json!([50, 50, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(ieee["ets"]["oper"]["tsa"][0], "ets");
    assert_eq!(ieee["ets"]["oper"]["tsa"][2], "strict");
    assert_eq!(ieee["pfc"]["oper"], serde_json::json!([3]));
    assert_eq!(ieee["pfc"]["admin"], serde_json::json!([]));
    assert_eq!(ieee["pfc"]["reason"], "adopted_peer");
    assert_eq!(ieee["app"]["reason"], "merged");
    assert_eq!(
        ieee["app"]["oper"],
        serde_json::json!([
            {"priority": 3, "selector": "dscp", "protocol": 26},
            {"priority": 3, "selector": "udp", "protocol": 4791}
        ])
    );
    assert_eq!(switch["ieee"]["ets_recommend"], true);
}

#[test]
fn willing_scenario_shows_the_cee_host_adopting_the_switch() {
    let (code, stdout, _) = lab(&["--scenario", "willing", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    assert_eq!(v["scenario"], "willing");
    assert!(v["converged_at"].as_f64().expect("converged") < 0.001);
    let host = &v["agents"][1];
    assert_eq!(host["name"], "host");
    for f in ["pg", "pfc", "app"] {
        assert_eq!(host[f]["syncd"], true, "{f}");
        assert_eq!(host[f]["oper_mode"], true, "{f}");
        assert_eq!(host[f]["error"], false, "{f}");
        assert_eq!(host[f]["willing"], true, "{f}");
        assert_eq!(host[f]["peer_willing"], false, "{f}");
    }
    assert_eq!(host["pfc"]["oper"]["priorities"], serde_json::json!([3, 4]));
    assert_eq!(host["pfc"]["desired"]["priorities"], serde_json::json!([]));
    assert_eq!(
        host["pg"]["oper"]["pgid"],
        serde_json::json!([0, 0, 0, 1, 1, 1, 15, 2])
    );
    assert_eq!(
        host["pg"]["oper"]["percent"],
        serde_json::json!([25, 75, 0, 0, 0, 0, 0, 0])
    );
    let switch = &v["agents"][0];
    assert_eq!(switch["pfc"]["peer"]["priorities"], serde_json::json!([]));
    assert_eq!(switch["control"]["seq"], 1);
    assert!(v["timeline"].as_array().expect("timeline").len() > 4);
}

#[test]
fn human_report_has_timeline_and_final_state() {
    let (code, stdout, _) = lab(&["--scenario", "willing"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("timeline"));
    assert!(stdout.contains("seq 1 ack 1"));
    assert!(stdout.contains("willing: running the peer's configuration"));
    assert!(stdout.contains("mode cee, running CEE DCBX (configured)"));
    let (code, stdout, _) = lab(&[]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("scenario ieee: "));
    assert!(stdout.contains("PFC[w] 3 | APP (none)"), "{stdout}");
    assert!(stdout.contains("REC tc0 {0,1,2,4,5,7} ets 50%; tc1 {3} ets 50%; tc2 {6} strict"));
    assert!(stdout.contains("mode auto, running IEEE 802.1Qaz"));
    assert!(stdout.contains("willing: running the peer's ETS recommendation"));
}

#[test]
fn every_listed_scenario_runs_and_mismatch_reports_errors() {
    let (code, list, _) = lab(&["--list"]);
    assert_eq!(code, 0);
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        let (code, stdout, stderr) = lab(&["--scenario", name, "--json"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        let agents = v["agents"].as_array().expect("agents");
        match name {
            "ieee-both-willing" => {
                for a in agents {
                    assert_eq!(a["ieee"]["pfc"]["oper"], serde_json::json!([3, 4]));
                }
                assert_eq!(agents[0]["ieee"]["pfc"]["reason"], "tie_break_adopted");
                assert_eq!(agents[1]["ieee"]["pfc"]["reason"], "tie_break_kept");
            }
            "auto-cee-peer" => {
                assert_eq!(agents[1]["mode"]["running"], "cee");
                assert_eq!(agents[1]["mode"]["reason"], "peer_cee_only");
                assert_eq!(agents[1]["all_syncd"], true);
            }
            "dual" => {
                // The scripted peer is in the timeline, not among the agents.
                assert_eq!(agents.len(), 1);
                assert_eq!(agents[0]["mode"]["running"], "ieee");
                assert_eq!(agents[0]["neighbors"][0]["dcbx"], "ieee+cee");
                assert_eq!(agents[0]["ieee"]["pfc"]["oper"], serde_json::json!([3]));
            }
            _ => {}
        }
        if name == "mismatch" {
            for a in v["agents"].as_array().expect("agents") {
                assert_eq!(a["pfc"]["error"], true);
                assert_eq!(a["pfc"]["oper_mode"], false);
                assert_eq!(a["pfc"]["reason"], "incompatible");
                assert_eq!(a["pg"]["oper_mode"], true, "PG is never compared");
            }
        }
    }
}

#[test]
fn unknown_scenario_is_a_usage_error() {
    let (code, _, stderr) = lab(&["--scenario", "nope"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("lossless: --scenario nope: unknown scenario"),
        "{stderr}"
    );
}

fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).expect("one JSON object")
}

#[test]
fn wan_relay_reports_each_tunnel_and_the_options_narrow_it() {
    let (code, stdout, stderr) = lab(&["--scenario", "wan-relay", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v = json(&stdout);
    let runs = v["wan_relay"].as_array().expect("runs");
    let tunnels: Vec<&str> = runs.iter().filter_map(|r| r["tunnel"].as_str()).collect();
    assert_eq!(
        tunnels,
        [
            "srv6",
            "srv6-reduced",
            "vxlan-ipv4",
            "vxlan-ipv6",
            "sr-mpls"
        ]
    );
    for r in runs {
        assert_eq!(r["pause"]["delivered"]["src"], "02:00:00:00:e1:00");
        assert_eq!(r["pause"]["delivered"]["class_enable"], 0x18);
        assert_eq!(r["illegal"]["pe2_dropped"]["bad_smac"], 1);
        assert_eq!(r["illegal"]["sent_to_wan"], 0);
    }
    let default_e2e = runs[3]["pause"]["end_to_end_ns"].as_u64().expect("delay");

    let (code, stdout, stderr) = lab(&[
        "--scenario",
        "wan-relay",
        "--tunnel",
        "vxlan-ipv6",
        "--wan-delay",
        "2ms",
        "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v = json(&stdout);
    let runs = v["wan_relay"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["tunnel"], "vxlan-ipv6");
    // One more millisecond of WAN, one more millisecond of forwarding delay.
    assert_eq!(
        runs[0]["pause"]["end_to_end_ns"].as_u64(),
        Some(default_e2e + 1_000_000)
    );
    let b = &runs[0]["gateway_buffer"];
    assert_eq!(
        b["product_bits"].as_u64(),
        Some(100 * (default_e2e + 1_000_000))
    );
}

#[test]
fn wan_relay_writes_one_pcap_per_link() {
    let dir = std::env::temp_dir().join(format!("lossless-lab-pcap-{}", std::process::id()));
    let dir_arg = dir.to_str().expect("utf-8 temp dir");
    let (code, stdout, stderr) = lab(&[
        "--scenario",
        "wan-relay",
        "--tunnel",
        "sr-mpls",
        "--pcap-dir",
        dir_arg,
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("=== sr-mpls"),
        "the report still goes to stdout"
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("pcap dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "sr-mpls-dc2gw-pe2.pcap",
            "sr-mpls-p-pe1.pcap",
            "sr-mpls-pe1-dc1gw.pcap",
            "sr-mpls-pe2-p.pcap"
        ]
    );
    for n in &names {
        let all = lossless_testkit::read_frames(&dir.join(n));
        for f in &all {
            assert!(f.len() >= 59, "{n}");
        }
        let frames = all.len();
        // The one line per file on stderr counts the same frames.
        let line = format!("{} ({frames} frames)", dir.join(n).display());
        assert!(stderr.contains(&line), "{line} in {stderr}");
        assert!(frames > 0, "{n}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn human_wan_relay_report_names_what_happened() {
    let (code, stdout, _) = lab(&["--scenario", "wan-relay", "--tunnel", "srv6"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("DC1-GW accepted it from 02:00:00:00:e1:00"));
    assert!(stdout.contains("dropped: class_vector_reserved"));
    assert!(stdout.contains("final resume relayed: yes"));
}

#[test]
fn relay_options_are_refused_elsewhere_and_checked() {
    let (code, _, stderr) = lab(&["--tunnel", "srv6"]);
    assert_eq!(code, 2);
    assert_eq!(
        stderr.trim_end(),
        "lossless: --scenario ieee: --tunnel applies to the wan-relay scenario only"
    );
    let (code, _, stderr) = lab(&["--scenario", "wan-relay", "--wan-delay", "10kn"]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("lossless: --wan-delay: "), "{stderr}");
    let (code, _, stderr) = lab(&["--scenario", "wan-relay", "--tunnel", "gre"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("gre"), "{stderr}");
}

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
fn default_scenario_shows_the_willing_host_adopting_the_switch() {
    let (code, stdout, _) = lab(&["--json"]);
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
    let (code, stdout, _) = lab(&[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("timeline"));
    assert!(stdout.contains("seq 1 ack 1"));
    assert!(stdout.contains("willing: running the peer's configuration"));
}

#[test]
fn every_listed_scenario_runs_and_mismatch_reports_errors() {
    let (code, list, _) = lab(&["--list"]);
    assert_eq!(code, 0);
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        let (code, stdout, stderr) = lab(&["--scenario", name, "--json"]);
        assert_eq!(code, 0, "{name}: {stderr}");
        let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
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
        let file = std::fs::File::open(dir.join(n)).expect("open pcap");
        let mut r = pcap_file::pcap::PcapReader::new(file).expect("a pcap file");
        let mut frames = 0;
        while let Some(p) = r.next_packet() {
            let p = p.expect("a whole packet");
            assert!(p.data.len() >= 59, "{n}");
            frames += 1;
        }
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
        "lossless: --scenario willing: --tunnel applies to the wan-relay scenario only"
    );
    let (code, _, stderr) = lab(&["--scenario", "wan-relay", "--wan-delay", "10kn"]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("lossless: --wan-delay: "), "{stderr}");
    let (code, _, stderr) = lab(&["--scenario", "wan-relay", "--tunnel", "gre"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("gre"), "{stderr}");
}

//! `lossless headroom calc`: the worked examples of the PFC Delay Value Constraint Model and of
//! IEEE 802.1Q-2018 Annex N typed in with flags, errors, JSON.

use std::process::Command;

fn calc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["headroom", "calc"])
        .args(args)
        .output()
        .expect("run lossless");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, stdout, stderr) = calc(&all);
    assert_eq!(code, 0, "{stderr}");
    serde_json::from_str(&stdout).expect("one JSON object")
}

const DV_MODEL_EXAMPLE: &[&str] = &[
    "--speed",
    "10G",
    "--cable",
    "100m",
    "--medium",
    "cat6",
    "--max-frame",
    "2000",
    "--pfc-frame",
    "64",
    "--interface-delay",
    "37888",
    "--higher-layer-delay",
    "33184",
];

/// PFC Delay Value Constraint Model, section 7: DV = 153,064 BT, "roughly 19.1K Bytes".
#[test]
fn dv_model_worked_example() {
    let v = json(DV_MODEL_EXAMPLE);
    assert_eq!(v["dv_bit_times"], 153_064);
    assert_eq!(v["dv_bytes"], 19_133);
    let terms = v["terms"].as_array().expect("terms");
    let bits = |name: &str| {
        terms
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["bit_times"].clone())
    };
    assert_eq!(bits("max_frame"), Some(32_320.into()));
    assert_eq!(bits("pfc_frame"), Some(672.into()));
    assert_eq!(bits("cable_delay"), Some(11_112.into()));
    assert_eq!(bits("interface_delay_local"), Some(37_888.into()));
    assert_eq!(bits("interface_delay_peer"), Some(37_888.into()));
    assert_eq!(bits("higher_layer_delay"), Some(33_184.into()));
    for t in terms {
        assert!(t["source"]["kind"].is_string(), "{t}");
    }
    let (code, text, _) = calc(DV_MODEL_EXAMPLE);
    assert_eq!(code, 0);
    assert!(text.contains("153,064 bit times"), "{text}");
    assert!(text.contains("19.1 KB"), "{text}");
}

/// The same from the tables: 10G default interface delay (PFC Delay Value Constraint
/// Model, table 1) and the named higher-layer components of its table 2.
#[test]
fn dv_model_from_the_tables() {
    let v = json(&[
        "--speed",
        "10G",
        "--cable",
        "100m",
        "--medium",
        "cat6",
        "--higher-layer-delay",
        "macsec+pipelining",
    ]);
    assert_eq!(v["dv_bit_times"], 153_064);
}

/// IEEE 802.1Q-2018 Annex N as Adaptive PFC Headroom quotes it: 126,024 bit times.
#[test]
fn annex_n_example() {
    let v = json(&[
        "--speed",
        "10G",
        "--cable",
        "100m",
        "--medium",
        "0.6c",
        "--max-frame",
        "16160bt",
        "--pfc-frame",
        "672bt",
        "--interface-delay",
        "37888",
        "--higher-layer-delay",
        "6144",
    ]);
    assert_eq!(v["dv_bit_times"], 126_024);
    assert_eq!(v["dv_bytes"], 15_753);
}

#[test]
fn explain_lists_every_term_and_source() {
    let mut args = DV_MODEL_EXAMPLE.to_vec();
    args.push("--explain");
    let (code, text, _) = calc(&args);
    assert_eq!(code, 0);
    for needle in [
        "max_frame_size",
        "PFC_frame_size",
        "cable_delay",
        "ID_s1",
        "ID_s2",
        "HD_s2",
        "response_s2",
        "user:",
        "document: PFC Delay Value Constraint Model s7: Cat 6",
    ] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
    // Defaults say where they come from.
    let (_, text, _) = calc(&["--speed", "400G", "--cable", "30m", "--explain"]);
    assert!(text.contains("assumption:"), "{text}");
    assert!(
        text.contains("document: Adaptive PFC Headroom, delay table: fibre at 5 ns/m"),
        "{text}"
    );
    // Sources name the velocity, not a row of the table: a 2 km link does not cite "10 m".
    let (_, text, _) = calc(&["--speed", "100G", "--cable", "2km", "--explain"]);
    assert!(text.contains("fibre at 5 ns/m"), "{text}");
    assert!(!text.contains("10 m"), "{text}");
}

/// Every default's source is named by the document's title, never by an internal label.
#[test]
fn explain_names_documents_by_title() {
    for speed in ["1G", "10G", "25G", "100G", "400G", "800G"] {
        let (code, text, _) = calc(&[
            "--speed",
            speed,
            "--cable",
            "100m",
            "--wan-delay",
            "1ms",
            "--explain",
        ]);
        assert_eq!(code, 0, "{text}");
        assert!(!text.to_lowercase().contains("seed"), "{speed}:\n{text}");
        assert!(!text.contains("REFERENCE"), "{speed}:\n{text}");
    }
    let (_, text, _) = calc(&[
        "--speed",
        "100G",
        "--cable",
        "1m",
        "--wan-delay",
        "1ms",
        "--explain",
    ]);
    assert!(text.contains("draft-he-rtgwg-wan-pfc-00 s3.2"), "{text}");
}

/// draft-he-rtgwg-wan-pfc-00: (rx - tx) x delay on top of the DV. 2 ms at 100G = 200,000,000 bits.
#[test]
fn wan_delay_adds_the_wan_pfc_draft_condition() {
    let base = ["--speed", "100G", "--cable", "80km", "--medium", "fiber"];
    let link = json(&base);
    let mut args = base.to_vec();
    args.extend(["--wan-delay", "2ms"]);
    let v = json(&args);
    assert_eq!(v["wan"]["bit_times"], 200_000_000);
    assert_eq!(v["dv_bit_times"], link["dv_bit_times"]);
    assert_eq!(
        v["total_bit_times"].as_u64(),
        Some(link["dv_bit_times"].as_u64().expect("dv") + 200_000_000)
    );
    // 80 km of fibre at 100G: 400 us each way = 40,000,000 bit times.
    let cable = v["terms"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "cable_delay"))
        .map(|t| t["each_bit_times"].clone());
    assert_eq!(cable, Some(40_000_000.into()));
    args.extend(["--wan-tx-rate", "40G"]);
    assert_eq!(json(&args)["wan"]["bit_times"], 120_000_000);
}

#[test]
fn cells_and_thresholds() {
    let mut args = DV_MODEL_EXAMPLE.to_vec();
    args.extend(["--cell-size", "160", "--buffer", "100000"]);
    let v = json(&args);
    // 19,133 bytes in 160-byte cells: 120 cells, 19,200 bytes.
    assert_eq!(v["headroom"]["cells"], 120);
    assert_eq!(v["headroom"]["bytes"], 19_200);
    assert_eq!(v["thresholds"]["xoff_bytes"], 100_000 - 19_200);
}

#[test]
fn bad_input_names_the_flag_and_exits_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--speed", "10G", "--cable", "10kn"],
            "lossless: --cable: \"10kn\": unknown unit \"kn\"",
        ),
        (
            &["--speed", "fast", "--cable", "1m"],
            "lossless: --speed: \"fast\"",
        ),
        (
            &["--speed", "10G", "--cable", "1m", "--medium", "1.5c"],
            "faster than light",
        ),
        (
            &["--speed", "10G", "--cable", "1m", "--wan-delay", "2"],
            "lossless: --wan-delay: \"2\": no unit",
        ),
        (
            &["--speed", "10G", "--cable", "1m", "--buffer", "10KB"],
            "lossless: --buffer:",
        ),
        (&["--speed", "20G", "--cable", "1m"], "--interface-delay"),
        (&["--speed", "1T", "--cable", "1m"], "outside 1G..800G"),
        (
            &["--speed", "10G", "--cable", "1m", "--phy", "10gbase-q"],
            "lossless: --phy:",
        ),
    ];
    for (args, want) in cases {
        let (code, stdout, stderr) = calc(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.starts_with("lossless: "), "{stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
}

#[test]
fn help_teaches_with_the_worked_examples() {
    let (code, text, _) = calc(&["--help"]);
    assert_eq!(code, 0);
    assert!(text.contains("--higher-layer-delay 33184"), "{text}");
    assert!(text.contains("--higher-layer-delay 6144"), "{text}");
    assert!(text.contains("--wan-delay 2ms"), "{text}");
}

/// Without --explain the answer still says which terms were not given and what was
/// taken for them; given terms are not listed.
#[test]
fn the_short_answer_lists_what_it_assumed() {
    let (code, out, err) = calc(&["--speed", "100G", "--cable", "2km"]);
    assert_eq!(code, 0, "{err}");
    let assumed = out
        .lines()
        .find(|l| l.starts_with("assumed"))
        .unwrap_or_else(|| panic!("no assumed line:\n{out}"));
    for part in [
        "max_frame_size 2,000 octets",
        "PFC_frame_size 64 octets",
        "ID_s1 66,304 bit times",
        "ID_s2 66,304 bit times",
        "HD_s2 0 bit times",
        "response_s2 0 bit times",
    ] {
        assert!(assumed.contains(part), "{part:?} not in {assumed:?}");
    }
    let (_, out, _) = calc(&["--speed", "100G", "--cable", "2km", "--max-frame", "9022"]);
    let assumed = out
        .lines()
        .find(|l| l.starts_with("assumed"))
        .expect("an assumed line");
    assert!(!assumed.contains("max_frame_size"), "{assumed}");
    // Every term given: no line.
    let (_, out, _) = calc(&[DV_MODEL_EXAMPLE, &["--response-time", "0"]].concat());
    assert!(!out.contains("assumed"), "{out}");
}

/// --mtu is the MTU plus 22 octets (header, 802.1Q tag, FCS) as the maximum frame:
/// the same DV as --max-frame with that size; it cannot be given with --max-frame, and
/// a bad value names the flag.
#[test]
fn mtu_sets_the_maximum_frame() {
    let mtu = json(&["--speed", "100G", "--cable", "2km", "--mtu", "9000"]);
    let frame = json(&["--speed", "100G", "--cable", "2km", "--max-frame", "9022"]);
    assert_eq!(mtu["dv_bit_times"], frame["dv_bit_times"]);
    let default = json(&["--speed", "100G", "--cable", "2km"]);
    let d = |v: &serde_json::Value| v["dv_bit_times"].as_u64().expect("dv_bit_times");
    assert_eq!(d(&mtu) - d(&default), 2 * (9022 - 2000) * 8);
    let (code, _, err) = calc(&[
        "--speed",
        "100G",
        "--cable",
        "2km",
        "--mtu",
        "9000",
        "--max-frame",
        "2000",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with"), "{err}");
    for bad in ["9x", "67", "65536", ""] {
        let (code, _, err) = calc(&["--speed", "100G", "--cable", "2km", "--mtu", bad]);
        assert_eq!(code, 2, "{bad:?}");
        assert!(err.contains("--mtu"), "{bad:?}: {err}");
    }
}

//! `lossless headroom compare`: the static column is SONiC's table as recorded in
//! `lossless_headroom::static_table`, lengths the table does not list give SONiC's error,
//! the adaptive column (real measurement sessions on simulated links) matches the model
//! to the simulator's rounding, the JSON keys are stable, bad flags are named.

use std::collections::BTreeSet;
use std::process::Command;

use lossless_headroom::static_table::SONIC_SN4700;
use lossless_headroom::units::{Length, Rate};
use serde_json::Value;

fn compare(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["headroom", "compare"])
        .args(args)
        .output()
        .expect("run lossless");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(args: &[&str]) -> Vec<Value> {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, stdout, stderr) = compare(&all);
    assert_eq!(code, 0, "{stderr}");
    match serde_json::from_str(&stdout).expect("JSON") {
        Value::Array(rows) => rows,
        other => panic!("not an array: {other}"),
    }
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} not a u64 in {v}"))
}

fn link(v: &Value) -> (Rate, Length) {
    let metres = v["cable_m"].as_f64().expect("cable_m");
    (
        Rate(u(v, "speed_bps")),
        Length((metres * 1e6).round() as u64),
    )
}

const KEYS: &[&str] = &[
    "speed_bps",
    "cable_m",
    "medium",
    "static_bytes",
    "static_error",
    "static_row",
    "static_minus_model_bytes",
    "static_over_provision_pct",
    "model_dv_bit_times",
    "model_hd_bit_times",
    "model_interface_delay_bit_times",
    "model_headroom_bytes",
    "model_headroom_cells",
    "adaptive_round_trip_ps",
    "adaptive_dv_bit_times",
    "adaptive_headroom_bytes",
    "adaptive_headroom_cells",
    "cell_bytes",
    "alpha",
];

/// The defaults: 100G and 400G over 5 m, 500 m, 10 km and 80 km, in that order, every key
/// in every object.
#[test]
fn defaults_cover_the_issue_links_with_stable_keys() {
    let rows = json(&[]);
    let got: Vec<(u64, f64)> = rows
        .iter()
        .map(|r| (u(r, "speed_bps"), r["cable_m"].as_f64().expect("cable_m")))
        .collect();
    let mut want = Vec::new();
    for g in [100_000_000_000u64, 400_000_000_000] {
        for m in [5.0, 500.0, 10_000.0, 80_000.0] {
            want.push((g, m));
        }
    }
    assert_eq!(got, want);
    let keys: BTreeSet<&str> = KEYS.iter().copied().collect();
    for r in &rows {
        let have: BTreeSet<&str> = r
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(have, keys, "{r}");
        assert_eq!(r["medium"], "fiber");
        assert_eq!((u(r, "cell_bytes"), r["alpha"].as_f64()), (160, Some(1.0)));
    }
}

/// Where the table lists the link, the static column is that row's xoff (and the whole row
/// is reported); elsewhere it is SONiC's error, and the data module agrees it has no row.
#[test]
fn static_column_is_the_recorded_table() {
    let rows = json(&["--lengths", "5m,40m,300m,500m,10km,80km"]);
    assert_eq!(rows.len(), 12);
    let mut listed = 0;
    for r in &rows {
        let (speed, cable) = link(r);
        match SONIC_SN4700.lookup(speed, cable) {
            Ok(row) => {
                listed += 1;
                assert_eq!(u(r, "static_bytes"), row.xoff, "{r}");
                assert!(r["static_error"].is_null());
                let s = &r["static_row"];
                assert_eq!(u(s, "speed_mbps"), row.speed_mbps);
                assert_eq!(s["cable"], row.cable);
                assert_eq!(
                    (u(s, "size"), u(s, "xon"), u(s, "xoff")),
                    (row.size, row.xon, row.xoff)
                );
                assert_eq!(s["threshold"].as_i64(), Some(i64::from(row.threshold)));
                // Over-provisioning against the model's reservation, and its percentage.
                let model = u(r, "model_headroom_bytes") as i64;
                let diff = row.xoff as i64 - model;
                assert_eq!(r["static_minus_model_bytes"].as_i64(), Some(diff));
                let pct = (diff as f64 * 1000.0 / model as f64).round() / 10.0;
                assert_eq!(r["static_over_provision_pct"].as_f64(), Some(pct));
            }
            Err(e) => {
                assert!(
                    r["static_bytes"].is_null() && r["static_row"].is_null(),
                    "{r}"
                );
                assert!(r["static_minus_model_bytes"].is_null());
                assert!(r["static_over_provision_pct"].is_null());
                assert_eq!(r["static_error"].as_str(), Some(e.to_string().as_str()));
            }
        }
    }
    // 5m, 40m and 300m at both speeds are in the table.
    assert_eq!(listed, 6);
    // The figures themselves, from the file (sonic-buildimage ACS-MSN4700).
    let xoff = |i: usize| u(&rows[i], "static_bytes");
    assert_eq!(
        (xoff(0), xoff(1), xoff(2)),
        (33_792, 44_032, 117_760),
        "100G 5m/40m/300m"
    );
    assert_eq!(
        (xoff(6), xoff(7), xoff(8)),
        (38_912, 77_824, 373_760),
        "400G 5m/40m/300m"
    );
}

/// 500 m, 10 km and 80 km: SONiC's "No PG profile" error, in its words and its keys (speed
/// in Mb/s, cable in metres), at both speeds; and no such row exists in the data module.
#[test]
fn unlisted_lengths_give_no_pg_profile() {
    let rows = json(&["--lengths", "500m,10km,80km"]);
    let want = [
        "No PG profile configured for speed 100000 and cable length 500m",
        "No PG profile configured for speed 100000 and cable length 10000m",
        "No PG profile configured for speed 100000 and cable length 80000m",
        "No PG profile configured for speed 400000 and cable length 500m",
        "No PG profile configured for speed 400000 and cable length 10000m",
        "No PG profile configured for speed 400000 and cable length 80000m",
    ];
    let got: Vec<&str> = rows
        .iter()
        .map(|r| r["static_error"].as_str().expect("static_error"))
        .collect();
    assert_eq!(got, want);
    for cable in ["500m", "10000m", "80000m", "10km", "80km"] {
        assert!(
            SONIC_SN4700.rows.iter().all(|r| r.cable != cable),
            "{cable}"
        );
    }
    let (code, text, _) = compare(&["--lengths", "500m,10km,80km"]);
    assert_eq!(code, 0);
    for w in want {
        assert!(text.contains(w), "{w}\n{text}");
    }
    assert_eq!(text.matches("no PG profile").count(), 6, "{text}");
}

/// The simulator injects the model's delays (cable + interface delay each way, truncated
/// to whole nanoseconds), so the measured round trip gives the model's DV less the terms a
/// round trip does not pass (HD_s2, response_s2), to within two nanoseconds of bits.
#[test]
fn adaptive_equals_model_within_rounding() {
    for args in [&[][..], &["--cell", "256", "--alpha", "1.25"][..]] {
        for r in json(args) {
            let speed = u(&r, "speed_bps");
            let rtt_ps = u(&r, "adaptive_round_trip_ps");
            let adaptive = u(&r, "adaptive_dv_bit_times");
            let model = u(&r, "model_dv_bit_times");
            let unseen = u(&r, "model_hd_bit_times");
            // Adaptive PFC Headroom: DV = speed x RTT + 2 x MaxFrame + PFCFrame.
            let x = (u128::from(rtt_ps) * u128::from(speed)).div_ceil(1_000_000_000_000);
            assert_eq!(u128::from(adaptive), x + 2 * 16_160 + 672, "{r}");
            let tolerance = 2 * speed.div_ceil(1_000_000_000);
            let gap = (model - unseen).abs_diff(adaptive);
            assert!(gap <= tolerance, "gap {gap} > {tolerance}: {r}");
            // And in bytes: the same up to one cell plus that rounding.
            let cell = u(&r, "cell_bytes");
            let a = u(&r, "adaptive_headroom_bytes");
            let m = u(&r, "model_headroom_bytes");
            let unseen_bytes = (unseen as f64 * r["alpha"].as_f64().expect("alpha") / 8.0) as u64;
            let slack = cell + tolerance + 1;
            assert!(
                (m - unseen_bytes).abs_diff(a) <= slack,
                "adaptive {a} vs model {m} - {unseen_bytes}: {r}"
            );
            assert_eq!(a % cell, 0);
            assert_eq!(u(&r, "adaptive_headroom_cells") * cell, a);
            assert_eq!(u(&r, "model_headroom_cells") * cell, m);
        }
    }
    // At 100G the model's HD is inside Adaptive PFC Headroom's ID + HD figure: equal to the
    // byte.
    for r in json(&["--speeds", "100G"]) {
        assert_eq!(u(&r, "model_hd_bit_times"), 0);
        assert_eq!(
            u(&r, "adaptive_headroom_bytes"),
            u(&r, "model_headroom_bytes"),
            "{r}"
        );
    }
}

/// The text form: every row, the source of the table, the note on the simulator.
#[test]
fn text_names_its_sources() {
    let (code, text, stderr) = compare(&[]);
    assert_eq!(code, 0, "{stderr}");
    for needle in [
        "33,792 B",
        "38,912 B",
        "170,600",
        "21,440 (134)",
        "+12,352 B (+57.6 %) over",
        "UNDER",
        "sonic-net/sonic-buildimage",
        "device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/pg_profile_lookup.ini",
        SONIC_SN4700.source.commit.get(..12).expect("commit"),
        "xoff column",
        "lists 5m, 40m, 300m only",
        "the simulator injects the model's",
        "HD_s2 (400G 16,160 bit times)",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
    // One table line per link.
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with(" 100G") || l.starts_with(" 400G"))
            .count(),
        8,
        "{text}"
    );
}

/// Bad flags: exit 2, the flag, the item and why.
#[test]
fn bad_flags_are_named() {
    for (args, want) in [
        (
            &["--lengths", "5m,10kn"][..],
            "lossless: --lengths: item 2 of 2: \"10kn\": unknown unit \"kn\"; expected a length",
        ),
        (
            &["--lengths", "5m,,80km"][..],
            "lossless: --lengths: item 2 of 3 in \"5m,,80km\" is empty",
        ),
        (
            &["--speeds", "100G,20G"][..],
            "lossless: --speeds: item 2 of 2: 20G: no interface-delay figure for this speed",
        ),
        (
            &["--speeds", "100"][..],
            "lossless: --speeds: item 1 of 1: \"100\": no unit",
        ),
        (
            &["--medium", "air"][..],
            "lossless: --medium: \"air\": unknown medium",
        ),
        (
            &["--cell", "0"][..],
            "lossless: --cell: \"0\": a cell holds at least one byte",
        ),
        (
            &["--cell", "2kb"][..],
            "lossless: --cell: \"2kb\": a lowercase b means bits",
        ),
        (
            &["--alpha", "0.9"][..],
            "lossless: --alpha: \"0.9\": below 1",
        ),
        (
            &[
                "--speeds",
                "1G,10G,25G,40G,50G,100G,200G,400G",
                "--lengths",
                "1m,2m,3m,4m,5m,6m,7m,8m,9m",
            ][..],
            "lossless: --speeds/--lengths: 8 speeds x 9 lengths = 72 links; at most 64",
        ),
    ] {
        let (code, stdout, stderr) = compare(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert!(stderr.starts_with(want), "{args:?}:\n{stderr}");
    }
}

#[test]
fn help_teaches() {
    let (code, text, _) = compare(&["--help"]);
    assert_eq!(code, 0);
    for needle in [
        "No PG profile configured",
        "xoff",
        "PFC Delay Value Constraint Model",
        "Adaptive PFC Headroom",
        "Examples:",
        "--lengths 5m,40m,300m,500m",
        "static_error",
        "adaptive_headroom_bytes",
    ] {
        assert!(text.contains(needle), "{needle:?} missing:\n{text}");
    }
}

//! `[ports."X".pfc_watchdog]`: defaults, layering, rendering back, and every refusal
//! with its file, line, column and key.

use std::path::Path;

use lossless_node::config::{
    DaemonConfig, PfcWatchdogSetting, PfcWatchdogSettings, RawValue, WatchdogAction,
};
use lossless_wire::cee::PriorityMap;

const FILE: &str = "/etc/lossless/losslessd.toml";

fn parse(text: &str) -> DaemonConfig {
    DaemonConfig::parse(text, Path::new(FILE)).unwrap_or_else(|e| panic!("refused: {e}"))
}

fn refuse(text: &str) -> String {
    match DaemonConfig::parse(text, Path::new(FILE)) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn off_by_default_with_the_documented_defaults() {
    let c = parse("[ports.\"eth0\"]\n");
    let w = c.port("eth0").pfc_watchdog;
    assert_eq!(
        w,
        PfcWatchdogSettings {
            enabled: false,
            detection_ms: 200,
            restoration_ms: 200,
            action: WatchdogAction::Alert,
            priorities: None,
            interval_ms: 200,
        }
    );
}

#[test]
fn a_section_sets_every_key_and_layers_over_defaults() {
    let c = parse(
        r#"
[defaults.pfc_watchdog]
enabled = true
detection_ms = 400

[ports."eth*".pfc_watchdog]
action = "forward"

[ports."eth0".pfc_watchdog]
restoration_ms = 60000
priorities = [3, 4]
interval_ms = 100
"#,
    );
    let w = c.port("eth0").pfc_watchdog;
    assert!(w.enabled);
    assert_eq!(w.detection_ms, 400);
    assert_eq!(w.restoration_ms, 60_000);
    assert_eq!(w.action, WatchdogAction::Forward);
    assert_eq!(w.priorities, Some(PriorityMap(0b1_1000)));
    assert_eq!(w.interval_ms, 100);
    let w1 = c.port("eth1").pfc_watchdog;
    assert_eq!(
        (w1.action, w1.priorities, w1.interval_ms),
        (WatchdogAction::Forward, None, 200)
    );
    // Rendered back, the section gives the same settings.
    let s = c.port("eth0");
    let again = parse(&format!("[ports.\"eth0\"]\n{}", s.to_toml()));
    assert_eq!(again.port("eth0").pfc_watchdog, w);
}

#[test]
fn out_of_range_and_unknown_values_are_refused_where_they_are() {
    let cases = [
        (
            "[ports.\"eth0\".pfc_watchdog]\ndetection_ms = 99\n",
            "/etc/lossless/losslessd.toml:2:16: ports.\"eth0\".pfc_watchdog.detection_ms: 99 ms is out of range 100..=5000",
        ),
        (
            "[ports.\"eth0\".pfc_watchdog]\ndetection_ms = 5001\n",
            "5001 ms is out of range 100..=5000",
        ),
        (
            "[ports.\"eth0\"]\npfc_watchdog.restoration_ms = 60001\n",
            ":2:31: ports.\"eth0\".pfc_watchdog.restoration_ms: 60001 ms is out of range 100..=60000",
        ),
        (
            "[ports.\"eth0\".pfc_watchdog]\ninterval_ms = 10\n",
            "10 ms is out of range 50..=5000",
        ),
        (
            "[ports.\"eth0\".pfc_watchdog]\naction = \"drop\"\n",
            ":2:10: ports.\"eth0\".pfc_watchdog.action: unknown action \"drop\"; expected \"alert\" or \"forward\"",
        ),
        (
            "[ports.\"eth0\".pfc_watchdog]\npriorities = [3, 8]\n",
            "priority 8 is out of range 0..=7",
        ),
        (
            "[ports.\"eth0\".pfc_watchdog]\npriorities = [3, 3]\n",
            "priority 3 is listed twice",
        ),
        (
            "[ports.\"eth0\".pfc_watchdog]\nenabled = \"yes\"\n",
            "expected a boolean",
        ),
        (
            "[ports.\"eth0\".pfc_watchdog]\ndetection = 200\n",
            "ports.\"eth0\".pfc_watchdog.detection",
        ),
    ];
    for (text, want) in cases {
        let got = refuse(text);
        assert!(got.contains(want), "{text}\n got: {got}\nwant: {want}");
    }
}

#[test]
fn the_one_rule_answers_the_same_outside_the_file() {
    assert_eq!(
        PfcWatchdogSetting::check("detection_ms", &RawValue::Int(99)).map_err(|e| e.to_string()),
        Err("99 ms is out of range 100..=5000".into())
    );
    assert_eq!(
        PfcWatchdogSetting::check("detection_ms", &RawValue::Int(100)),
        Ok(PfcWatchdogSetting::DetectionMs(100))
    );
    assert_eq!(
        PfcWatchdogSetting::check("restoration_ms", &RawValue::Int(60_000)),
        Ok(PfcWatchdogSetting::RestorationMs(60_000))
    );
    assert!(PfcWatchdogSetting::check("action", &RawValue::Str("drop".into())).is_err());
}

//! The `pfc-storm` scenario on the virtual clock: a stuck peer, the watchdog's
//! detection within the detection time and one reading interval, PFC off on that
//! priority only, and back on within the restoration time and one interval of the
//! peer's recovery; the same with `alert` (detected, nothing programmed).

use lossless_lab::scenario::pfc_storm::{
    simulate, watchdog, PRIORITY, RECOVERS_AT, STUCK_AT, STUCK_RATE,
};
use lossless_lab::scenario::run;
use lossless_lab::sim::LogEntry;
use lossless_node::config::WatchdogAction;
use lossless_node::pfc::PfcEvent;

const MS: f64 = 1e-3;

#[test]
fn a_stuck_peer_is_detected_turned_off_and_restored_in_time() {
    let wd = watchdog();
    let (sim, host, _, run) = simulate(1, wd);
    let d = f64::from(wd.detection_ms) * MS;
    let r = f64::from(wd.restoration_ms) * MS;
    let i = f64::from(wd.interval_ms) * MS;
    let detected = run.detected_at.expect("the storm is detected");
    assert!(
        detected > STUCK_AT + d - 1e-9 && detected <= STUCK_AT + d + i + 1e-9,
        "detected at {detected}: not within detection {d} + one interval {i} of {STUCK_AT}"
    );
    assert_eq!(run.pfc_off_at, Some(detected), "PFC goes off at detection");
    let over = run.over_at.expect("the storm ends");
    assert!(
        over >= RECOVERS_AT + r - 1e-9 && over <= RECOVERS_AT + r + i + 1e-9,
        "over at {over}"
    );
    assert_eq!(run.pfc_back_at, Some(over));
    // Unhealthy while it storms, with the reason; healthy again after.
    assert_eq!(
        run.health_in_storm.as_deref(),
        Some(
            "PFC storm on priority 3 (the peer keeps pausing it): PFC turned off on it by \
             the watchdog until the storm is over"
        )
    );
    assert_eq!(run.health_after.as_deref(), Some("ok"));
    // Only priority 3 went off, and the negotiated PFC came back exactly.
    let oper = 1u8 << PRIORITY;
    let last = run
        .pfc_programs
        .iter()
        .rposition(|p| *p == oper)
        .expect("PFC on 3");
    assert!(
        run.pfc_programs[..last].contains(&0),
        "{:?}",
        run.pfc_programs
    );
    assert_eq!(sim.nic(host).ieee_pfc, Some(oper));
    // The storm's evidence: 2 readings, the frames the stuck peer sent over them.
    let storm = sim
        .log()
        .iter()
        .find_map(|e| match e {
            LogEntry::Pfc {
                event: e @ PfcEvent::PfcStorm { .. },
                ..
            } => Some(e.clone()),
            _ => None,
        })
        .expect("a storm event");
    let PfcEvent::PfcStorm {
        priority,
        readings,
        frames,
        pfc_off,
        ..
    } = storm
    else {
        unreachable!()
    };
    assert_eq!((priority, readings, pfc_off), (PRIORITY, 2, true));
    let expected = (detected - STUCK_AT) * STUCK_RATE;
    assert!(
        (frames as f64 - expected).abs() <= 2.0,
        "{frames} vs {expected}"
    );
    let text = sim.metrics(host);
    assert!(text.contains("lossless_pfc_watchdog_storms_total{port=\"p0\",priority=\"3\"} 1"));
    assert!(text.contains("lossless_pfc_watchdog_restorations_total{port=\"p0\",priority=\"3\"} 1"));
    if let Err(e) = lossless_testkit::promtool_check_metrics(&text) {
        panic!("promtool check metrics:\n{e}\n---\n{text}");
    }
}

#[test]
fn alert_only_programs_nothing() {
    let wd = lossless_node::config::PfcWatchdogSettings {
        action: WatchdogAction::Alert,
        ..watchdog()
    };
    let (sim, host, _, run) = simulate(1, wd);
    assert!(run.detected_at.is_some() && run.over_at.is_some());
    assert_eq!(run.pfc_off_at, None);
    // Unhealthy while it storms (sampled at 8 s, before the restoration time passed),
    // PFC still on.
    assert_eq!(
        run.health_in_storm.as_deref(),
        Some("PFC storm on priority 3 (the peer keeps pausing it)")
    );
    assert_eq!(run.health_after.as_deref(), Some("ok"));
    let after: Vec<u8> = run
        .pfc_programs
        .iter()
        .skip_while(|p| **p != 8)
        .copied()
        .collect();
    assert!(
        !after.is_empty() && after.iter().all(|p| *p == 8),
        "alert changed PFC: {after:?}"
    );
    assert_eq!(sim.nic(host).ieee_pfc, Some(8));
}

#[test]
fn the_scenario_reports_its_times() {
    let r = run("pfc-storm", 1).expect("known scenario");
    let text = r.render_text();
    assert!(text.contains("storm detected at  5.300 s"), "{text}");
    assert!(text.contains("PFC back at        8.200 s"), "{text}");
    assert!(r.timeline.iter().any(|row| row.kind == "pfc"));
}

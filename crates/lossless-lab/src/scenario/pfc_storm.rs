//! `pfc-storm`: a peer stuck pausing one priority, the host's PFC watchdog detecting
//! it, turning PFC off on that priority (`action = "forward"`) and putting it back once
//! the peer is quiet again, on the virtual clock.

use lossless_dcbx::{Duration, Instant};
use lossless_node::config::{Apply, PfcWatchdogSettings, PortSettings, WatchdogAction};
use lossless_node::pfc::PfcEvent;
use lossless_wire::cee::PriorityMap;
use serde::Serialize;

use super::{converged, ieee_host_config, ieee_switch_config, report, Report, ScenarioInfo};
use crate::nic::Driver;
use crate::sim::{LogEntry, NodeId, PathProps, Sim};

/// The priority the peer gets stuck on.
pub const PRIORITY: u8 = 3;
/// When the peer starts pausing it, and when it stops (seconds).
pub const STUCK_AT: f64 = 5.0;
pub const RECOVERS_AT: f64 = 8.0;
/// XOFF frames per second from the stuck peer (a 100G port refreshing its pause).
pub const STUCK_RATE: f64 = 20_000.0;

/// What the watchdog did, and when (seconds on the virtual clock).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StormRun {
    pub priority: u8,
    pub detection_ms: u32,
    pub restoration_ms: u32,
    pub interval_ms: u32,
    pub stuck_at: f64,
    pub recovers_at: f64,
    /// The watchdog declared the storm.
    pub detected_at: Option<f64>,
    /// The NIC took PFC off the priority.
    pub pfc_off_at: Option<f64>,
    /// The watchdog saw the storm end.
    pub over_at: Option<f64>,
    /// The NIC runs PFC on the priority again.
    pub pfc_back_at: Option<f64>,
    /// Every IEEE PFC value the NIC was given, in order (bit p: priority p).
    pub pfc_programs: Vec<u8>,
    /// The host port's health (as `lossless status` shows it) while PFC is off, and
    /// at the end.
    pub health_in_storm: Option<String>,
    pub health_after: Option<String>,
}

/// The host's settings: what `ieee_host_config` runs, programmed through dcbnl, with
/// the watchdog on priority 3 in `forward`.
pub fn host_settings(watchdog: PfcWatchdogSettings) -> PortSettings {
    PortSettings {
        apply: Apply::Dcbnl,
        pfc_watchdog: watchdog,
        ..PortSettings::from_port_config(&ieee_host_config())
    }
}

/// The watchdog of the scenario: the defaults, on, `forward`, priority 3.
pub fn watchdog() -> PfcWatchdogSettings {
    PfcWatchdogSettings {
        enabled: true,
        action: WatchdogAction::Forward,
        priorities: Some(PriorityMap(1 << PRIORITY)),
        ..PfcWatchdogSettings::default()
    }
}

/// Runs the scenario; the host is the second node.
pub fn run(info: &ScenarioInfo, seed: u64) -> Report {
    let wd = watchdog();
    let (sim, host, converged_at, run) = simulate(seed, wd);
    let mut r = report(info, seed, &sim, converged_at, &[0, host]);
    r.pfc_storm = Some(run);
    r
}

/// The scenario's run: (the simulator, the host, convergence, what happened).
pub fn simulate(seed: u64, wd: PfcWatchdogSettings) -> (Sim, NodeId, Option<Instant>, StormRun) {
    let mut sim = Sim::new(seed).with_capture();
    let switch = ieee_switch_config();
    let a = sim
        .add_agent("switch", switch)
        .expect("valid switch config");
    let host_cfg = ieee_host_config();
    let b = sim
        .add_node(
            "host",
            host_cfg.mac,
            host_settings(wd),
            Driver::Dcbnl { buffer: None },
        )
        .expect("valid host settings");
    let link = sim.connect(a, b);
    sim.set_link_props(
        a,
        b,
        PathProps {
            delay: Duration::from_micros(10),
            loss: 0.0,
        },
    );
    sim.set_link(link, true);
    let converged_at = sim.run_until_true(Instant::from_secs_f64(60.0), converged);
    sim.run_until(Instant::from_secs_f64(STUCK_AT));
    let now = sim.now();
    sim.nic_mut(b).pauses.set(now, PRIORITY, STUCK_RATE, 0.0);
    sim.note(format!(
        "the switch gets stuck: {STUCK_RATE} XOFF/s on priority {PRIORITY}"
    ));
    let mut run = StormRun {
        priority: PRIORITY,
        detection_ms: wd.detection_ms,
        restoration_ms: wd.restoration_ms,
        interval_ms: wd.interval_ms,
        stuck_at: STUCK_AT,
        recovers_at: RECOVERS_AT,
        ..StormRun::default()
    };
    let pfc_off = |sim: &Sim| {
        sim.nic(b)
            .ieee_pfc
            .is_some_and(|p| p & (1 << PRIORITY) == 0)
    };
    run.pfc_off_at = step_until(&mut sim, RECOVERS_AT, pfc_off);
    run.health_in_storm = Some(sim.port(b).health().health);
    sim.run_until(Instant::from_secs_f64(RECOVERS_AT));
    let now = sim.now();
    sim.nic_mut(b).pauses.set(now, PRIORITY, 0.0, 0.0);
    sim.note(format!(
        "the switch recovers: no more XOFF on priority {PRIORITY}"
    ));
    run.pfc_back_at = step_until(&mut sim, RECOVERS_AT + 5.0, |s| !pfc_off(s));
    sim.run_until(Instant::from_secs_f64(RECOVERS_AT + 2.0));
    for e in sim.log() {
        if let LogEntry::Pfc { at, node, event } = e {
            if *node != b {
                continue;
            }
            let t = at.since_epoch().as_secs_f64();
            match event {
                PfcEvent::PfcStorm { .. } => run.detected_at = run.detected_at.or(Some(t)),
                PfcEvent::PfcStormOver { .. } => run.over_at = run.over_at.or(Some(t)),
                _ => {}
            }
        }
    }
    run.pfc_programs = sim.nic(b).pfc_history.clone();
    run.health_after = Some(sim.port(b).health().health);
    (sim, b, converged_at, run)
}

/// Runs the simulator event by event until `f` holds (returning when) or `limit`.
fn step_until(sim: &mut Sim, limit: f64, f: impl Fn(&Sim) -> bool) -> Option<f64> {
    let limit = Instant::from_secs_f64(limit);
    loop {
        if f(sim) {
            return Some(sim.now().since_epoch().as_secs_f64());
        }
        if !sim.step(limit) {
            return None;
        }
    }
}

/// The run for people.
pub fn render(r: &StormRun) -> String {
    let t = |v: Option<f64>| v.map_or("never".to_string(), |v| format!("{v:.3} s"));
    let mut s = String::new();
    s.push_str(&format!(
        "\nPFC storm on priority {} (detection {} ms, restoration {} ms, read every {} ms):\n",
        r.priority, r.detection_ms, r.restoration_ms, r.interval_ms
    ));
    s.push_str(&format!("  peer stuck at      {:.3} s\n", r.stuck_at));
    s.push_str(&format!("  storm detected at  {}\n", t(r.detected_at)));
    s.push_str(&format!("  PFC off at         {}\n", t(r.pfc_off_at)));
    s.push_str(&format!("  peer recovers at   {:.3} s\n", r.recovers_at));
    s.push_str(&format!("  storm over at      {}\n", t(r.over_at)));
    s.push_str(&format!("  PFC back at        {}\n", t(r.pfc_back_at)));
    let h = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    s.push_str(&format!("  health in storm    {}\n", h(&r.health_in_storm)));
    s.push_str(&format!("  health after       {}\n", h(&r.health_after)));
    let list: Vec<String> = r
        .pfc_programs
        .iter()
        .map(|p| {
            let v: Vec<String> = PriorityMap(*p)
                .priorities()
                .map(|p| p.to_string())
                .collect();
            format!("[{}]", v.join(","))
        })
        .collect();
    s.push_str(&format!("  NIC PFC programs   {}\n", list.join(" -> ")));
    s
}

//! The PFC counters and the watchdog in Prometheus form, per port and priority.

use std::fmt::Write;

use super::counters::Counter;
use super::PortPfc;
use crate::metrics::{esc, header};

/// Every PFC series for these ports (name, counters and watchdog).
pub fn render(out: &mut String, ports: &[(&str, &PortPfc)]) {
    header(
        out,
        "lossless_pfc_available",
        "1 when the driver reports PFC counters for the port (dcbnl or ethtool), 0 when not.",
        "gauge",
    );
    for (name, p) in ports {
        let v = u8::from(p.counters.available());
        let _ = writeln!(out, "lossless_pfc_available{{port=\"{}\"}} {v}", esc(name));
    }
    header(
        out,
        "lossless_pfc_frames_total",
        "PFC frames per priority: received (rx, the peer paused us) and sent (tx, we paused the peer).",
        "counter",
    );
    let dirs = [
        ("rx", Counter::RxPause, Counter::RxPauseDuration),
        ("tx", Counter::TxPause, Counter::TxPauseDuration),
    ];
    for (name, p) in ports {
        for (dir, frames, _) in dirs {
            for prio in 0..8u8 {
                if let Some(v) = p.counters.total(frames, prio) {
                    let _ = writeln!(out, "lossless_pfc_frames_total{{port=\"{}\",priority=\"{prio}\",direction=\"{dir}\"}} {v}", esc(name));
                }
            }
        }
    }
    header(
        out,
        "lossless_pfc_paused_seconds_total",
        "Time paused per priority, where the driver reports it (rx: by the peer; tx: the peer by us).",
        "counter",
    );
    for (name, p) in ports {
        for (dir, _, time) in dirs {
            for prio in 0..8u8 {
                if let Some(us) = p.counters.total(time, prio) {
                    let s = us as f64 / 1e6;
                    let _ = writeln!(out, "lossless_pfc_paused_seconds_total{{port=\"{}\",priority=\"{prio}\",direction=\"{dir}\"}} {s}", esc(name));
                }
            }
        }
    }
    header(
        out,
        "lossless_pfc_discontinuities_total",
        "PFC counter readings that did not continue the last (reset, wrap, vanished): never taken as pauses.",
        "counter",
    );
    for (name, p) in ports {
        let d = p.counters.discontinuities;
        for (kind, v) in [
            ("reset", d.resets),
            ("wrap", d.wraps),
            ("vanished", d.vanished),
        ] {
            let _ = writeln!(
                out,
                "lossless_pfc_discontinuities_total{{port=\"{}\",kind=\"{kind}\"}} {v}",
                esc(name)
            );
        }
    }
    watchdog(out, ports);
}

/// A metric: its name, help, type, and its value for a port's priority.
type Series = (
    &'static str,
    &'static str,
    &'static str,
    fn(&PortPfc, u8) -> u64,
);

fn watchdog(out: &mut String, ports: &[(&str, &PortPfc)]) {
    let watched = |p: &PortPfc| {
        let w = &p.watchdog;
        let m = if w.enabled { w.watched.0 } else { 0 };
        (0..8u8).filter(move |i| m & (1 << i) != 0)
    };
    let series: [Series; 4] = [
        (
            "lossless_pfc_watchdog_storm",
            "1 while the PFC watchdog holds the priority in storm.",
            "gauge",
            |p, i| u64::from(p.watchdog.stormed().contains(i)),
        ),
        (
            "lossless_pfc_watchdog_pfc_off",
            "1 while the watchdog (action forward) keeps PFC off on the priority.",
            "gauge",
            |p, i| u64::from(p.forced_off().contains(i)),
        ),
        (
            "lossless_pfc_watchdog_storms_total",
            "PFC storms the watchdog declared on the priority.",
            "counter",
            |p, i| p.watchdog.storms[usize::from(i)],
        ),
        (
            "lossless_pfc_watchdog_restorations_total",
            "PFC storms the watchdog saw end on the priority.",
            "counter",
            |p, i| p.watchdog.restorations[usize::from(i)],
        ),
    ];
    for (metric, help, kind, get) in series {
        header(out, metric, help, kind);
        for (name, p) in ports {
            for prio in watched(p) {
                let _ = writeln!(
                    out,
                    "{metric}{{port=\"{}\",priority=\"{prio}\"}} {}",
                    esc(name),
                    get(p, prio)
                );
            }
        }
    }
}

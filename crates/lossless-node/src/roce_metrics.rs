//! The RoCE host settings' series: whether each configured setting holds, and the
//! writes, refusals and drift the watch counted ([`crate::roce`]).

use std::fmt::Write as _;

use crate::exposition::{esc, header};
use crate::port::Port;

/// A counter's name, help and value per port.
type Counter = (&'static str, &'static str, fn(&Port) -> u64);

pub(crate) fn render(out: &mut String, ports: &[&Port]) {
    header(
        out,
        "lossless_roce_setting_held",
        "1 when the host holds what [ports.X.roce] configures for the setting, 0 when it \
         does not (refused, not exposed, not read, changed); configured settings only.",
        "gauge",
    );
    for p in ports {
        for s in crate::roce::configured(&p.roce.settings) {
            let held = p
                .roce
                .host
                .as_ref()
                .is_some_and(|h| crate::roce::standing(&s, h) == crate::roce::Standing::Holds);
            let _ = writeln!(
                out,
                "lossless_roce_setting_held{{port=\"{}\",setting=\"{}\"}} {}",
                esc(&p.name),
                s.key(),
                u8::from(held)
            );
        }
    }
    let counters: [Counter; 3] = [
        (
            "lossless_roce_writes_total",
            "RoCE host settings written (configfs, sysfs, ethtool), refused or not.",
            |p| p.roce.writes,
        ),
        (
            "lossless_roce_write_failures_total",
            "RoCE host setting writes the host refused or did not keep.",
            |p| p.roce.write_failures,
        ),
        (
            "lossless_roce_drift_total",
            "Readings that found a configured RoCE host setting changed behind the \
             daemon's back.",
            |p| p.roce.drift_detected,
        ),
    ];
    for (name, help, value) in counters {
        header(out, name, help, "counter");
        for p in ports {
            let _ = writeln!(out, "{name}{{port=\"{}\"}} {}", esc(&p.name), value(p));
        }
    }
}

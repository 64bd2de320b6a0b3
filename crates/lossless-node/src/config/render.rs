//! Writes port settings back as the keys of a configuration section.

use std::fmt::Write;

use lossless_dcbx::FeatureAdmin;
use lossless_wire::cee::{PriorityMap, DCBX_OUI};

use super::app::RuleSelector;

use super::read::quoted;
use super::{Apply, PortSettings};

impl PortSettings {
    /// The body of a `[defaults]` or `[ports."NAME"]` section that gives
    /// exactly these settings: every key, one dotted `key = value` per line.
    /// (An unset `chassis_id` or `port_id` is left out, as the file cannot unset
    /// them.)
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        let mut line = |key: &str, value: String| {
            let _ = writeln!(out, "{key} = {value}");
        };
        let word = |w: &str| quoted(w);
        line(
            "apply",
            word(match self.apply {
                Apply::None => "none",
                Apply::Dcbnl => "dcbnl",
            }),
        );
        line("nic_drift", word(self.nic_drift.name()));
        line("nic_hold_ms", self.nic_hold_ms.to_string());
        let admin = match self.admin_status {
            lossless_dcbx::AdminStatus::RxTx => "rxtx",
            lossless_dcbx::AdminStatus::TxOnly => "txonly",
            lossless_dcbx::AdminStatus::RxOnly => "rxonly",
            lossless_dcbx::AdminStatus::Disabled => "disabled",
        };
        line("admin_status", word(admin));
        super::identity::render(&self.identity, &mut line);
        for (key, value) in [("chassis_id", &self.chassis_id), ("port_id", &self.port_id)] {
            if let Some(v) = value {
                line(key, quoted(v));
            }
        }
        line("max_neighbors", self.max_neighbors.to_string());
        line("max_neighbor_hold", self.max_neighbor_hold.to_string());
        let t = &self.timers;
        for (key, value) in [
            ("msg_tx_interval", t.msg_tx_interval),
            ("msg_tx_hold", t.msg_tx_hold),
            ("msg_fast_tx", t.msg_fast_tx),
            ("tx_fast_init", t.tx_fast_init.into()),
            ("tx_credit_max", t.tx_credit_max.into()),
            ("reinit_delay", t.reinit_delay),
        ] {
            line(&format!("timers.{key}"), value.to_string());
        }
        let d = &self.dcbx;
        line("dcbx.enabled", d.enabled.to_string());
        line("dcbx.mode", word(d.mode.name()));
        line("dcbx.max_version", d.max_version.to_string());
        flags(&mut line, "pg", &d.pg);
        line("pg.pgid", list(d.pg.cfg.pgid));
        line("pg.percent", list(d.pg.cfg.percent));
        line("pg.num_tcs", d.pg.cfg.num_tcs.to_string());
        flags(&mut line, "pfc", &d.pfc);
        line("pfc.priorities", priorities(d.pfc.cfg.priorities));
        line("pfc.num_tcs", d.pfc.cfg.num_tcs.to_string());
        line("pfc.mbc", d.ieee.pfc_mbc.to_string());
        flags(&mut line, "app", &d.app);
        let entries: Vec<String> = self
            .app
            .entries
            .iter()
            .map(|e| {
                let (selector, protocol) = match e.selector {
                    RuleSelector::Ethertype => {
                        (quoted("ethertype"), format!("0x{:04x}", e.protocol))
                    }
                    s => (
                        s.name().map_or_else(|| s.to_string(), quoted),
                        e.protocol.to_string(),
                    ),
                };
                let oui = if e.oui == DCBX_OUI {
                    String::new()
                } else {
                    format!(
                        ", oui = \"{:02x}-{:02x}-{:02x}\"",
                        e.oui[0], e.oui[1], e.oui[2]
                    )
                };
                format!(
                    "{{ selector = {selector}, protocol = {protocol}{oui}, priorities = {} }}",
                    priorities(e.priorities)
                )
            })
            .collect();
        line("app.entries", format!("[{}]", entries.join(", ")));
        super::ets::render(d, &mut line);
        super::headroom::render(d.headroom_measurement, &self.headroom, &mut line);
        super::pfc_watchdog::render(&self.pfc_watchdog, &mut line);
        super::roce::render(&self.roce, &mut line);
        out
    }
}

fn flags<C>(line: &mut impl FnMut(&str, String), feature: &str, f: &FeatureAdmin<C>) {
    line(&format!("{feature}.enable"), f.enable.to_string());
    line(&format!("{feature}.willing"), f.willing.to_string());
    line(&format!("{feature}.advertise"), f.advertise.to_string());
}

fn list(values: impl IntoIterator<Item = u8>) -> String {
    let v: Vec<String> = values.into_iter().map(|v| v.to_string()).collect();
    format!("[{}]", v.join(", "))
}

fn priorities(p: PriorityMap) -> String {
    list(p.priorities())
}

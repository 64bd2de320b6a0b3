//! The report for people: timeline, then per agent the DCBX version it runs and
//! why, and the final state of each feature of that version (CEE DCBX: PG, PFC, APP
//! with Syncd; IEEE 802.1Qaz: ETS, PFC, APP with admin, peer and operational
//! configuration).

use std::fmt::Write;

use lossless_dcbx::{PortStatus, Version};

use super::{AgentReport, Report};
use crate::describe::{describe_app_table, describe_ets_table};
use crate::headroom::LinkOutcome;

fn yn(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// Rows of cells, columns padded to their widest cell; the last column is not
/// padded. Each line starts with two spaces.
fn table(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; n];
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in rows {
        let mut line = String::from(" ");
        for (i, (c, w)) in r.iter().zip(&widths).enumerate() {
            line.push(' ');
            if i + 1 == r.len() {
                line.push_str(c);
            } else {
                let _ = write!(line, "{c:<w$}");
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
    s
}

impl Report {
    /// The report for people: timeline, then the final state per agent and feature.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "scenario {}: {}", self.scenario, self.description);
        if !self.wan_relay.is_empty() {
            s.push_str(&crate::wan_relay::render(&self.wan_relay));
            return s;
        }
        let _ = writeln!(s, "\ntimeline (virtual clock, seconds):");
        let width = self
            .timeline
            .iter()
            .map(|r| r.node.len())
            .max()
            .unwrap_or(1);
        for r in &self.timeline {
            let _ = writeln!(
                s,
                "  {:>10.6}  {:<width$}  {:<6} {}",
                r.t, r.node, r.kind, r.text
            );
        }
        let _ = writeln!(s);
        match self.converged_at {
            Some(t) => {
                let _ = writeln!(
                    s,
                    "converged at {:.6} s ({} frames sent, {} lost in all)",
                    t, self.frames_sent, self.frames_lost
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "did not converge ({} frames sent, {} lost)",
                    self.frames_sent, self.frames_lost
                );
            }
        }
        for a in &self.agents {
            s.push_str(&render_agent(a));
        }
        if !self.headroom.is_empty() {
            s.push_str(&render_headroom(&self.headroom));
        }
        if let Some(run) = &self.pfc_storm {
            s.push_str(&super::pfc_storm::render(run));
        }
        if let Some(run) = &self.roce_discards {
            s.push_str(&super::roce_discards::render(run));
        }
        s
    }
}

/// One agent: its header, the mode line, the table of the version it runs.
fn render_agent(a: &AgentReport) -> String {
    let st = &a.status;
    let mut s = String::new();
    let _ = write!(
        s,
        "\n{} ({}): DCBX {}, peer {}",
        a.name,
        a.mac,
        if st.dcbx_active { "active" } else { "inactive" },
        if st.peer_present { "present" } else { "absent" },
    );
    if st.mode.running == Version::Cee {
        let _ = write!(
            s,
            ", SeqNo {} AckNo {} RcvdAckNo {}",
            st.control.seq, st.control.ack, st.control.rcvd_ack
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "  health: {}", a.health.health);
    let _ = writeln!(
        s,
        "  mode {}, running {} ({})",
        st.mode.configured.name(),
        match st.mode.running {
            Version::Ieee => "IEEE 802.1Qaz",
            Version::Cee => "CEE DCBX",
        },
        st.mode.reason_text
    );
    match st.mode.running {
        Version::Cee => s.push_str(&cee_table(st)),
        Version::Ieee => s.push_str(&ieee_table(st)),
    }
    s
}

/// CEE: per feature willing, Syncd, OperMode, Error, OperCfg, why.
fn cee_table(st: &PortStatus) -> String {
    let (pg, pfc, app) = (&st.pg, &st.pfc, &st.app);
    let pg_cfg = format!(
        "pgid {} pct {}",
        crate::describe::describe_pgid(&pg.oper.pgid),
        pg.oper
            .percent
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join("/")
    );
    let app_cfg = crate::describe::describe_cee_app(&app.oper.entries);
    let row = |name: &str, willing, syncd, oper_mode, error, cfg: &str, why: &str| {
        [
            name,
            yn(willing),
            yn(syncd),
            on(oper_mode),
            yn(error),
            cfg,
            why,
        ]
        .map(String::from)
        .to_vec()
    };
    let rows = vec![
        [
            "feat",
            "willing",
            "syncd",
            "oper",
            "error",
            "operational config",
            "why",
        ]
        .map(String::from)
        .to_vec(),
        row(
            "pg",
            pg.willing,
            pg.syncd,
            pg.oper_mode,
            pg.error,
            &pg_cfg,
            &pg.reason_text,
        ),
        row(
            "pfc",
            pfc.willing,
            pfc.syncd,
            pfc.oper_mode,
            pfc.error,
            &format!("priorities {}", pfc.oper.priorities),
            &pfc.reason_text,
        ),
        row(
            "app",
            app.willing,
            app.syncd,
            app.oper_mode,
            app.error,
            &app_cfg,
            &app.reason_text,
        ),
    ];
    table(&rows)
}

/// IEEE 802.1Qaz: per feature willing (ours and the peer's), agreed, OperMode,
/// error, why; then per feature the configuration we want, the peer's, and what runs.
fn ieee_table(st: &PortStatus) -> String {
    let i = &st.ieee;
    let peer_w = |w: Option<bool>| w.map_or("-", yn).to_string();
    let row = |name: &str, f: (bool, Option<bool>, bool, bool, bool, &str)| {
        vec![
            name.to_string(),
            yn(f.0).to_string(),
            peer_w(f.1),
            yn(f.2).to_string(),
            on(f.3).to_string(),
            yn(f.4).to_string(),
            f.5.to_string(),
        ]
    };
    let mut rows = vec![[
        "feat",
        "willing",
        "peer willing",
        "agreed",
        "oper",
        "error",
        "why",
    ]
    .map(String::from)
    .to_vec()];
    rows.push(row(
        "ets",
        (
            i.ets.willing,
            i.ets.peer_willing,
            i.ets.agreed,
            i.ets.oper_mode,
            i.ets.error,
            &i.ets.reason_text,
        ),
    ));
    rows.push(row(
        "pfc",
        (
            i.pfc.willing,
            i.pfc.peer_willing,
            i.pfc.agreed,
            i.pfc.oper_mode,
            i.pfc.error,
            &i.pfc.reason_text,
        ),
    ));
    rows.push(row(
        "app",
        (
            i.app.willing,
            i.app.peer_willing,
            i.app.agreed,
            i.app.oper_mode,
            i.app.error,
            &i.app.reason_text,
        ),
    ));
    let mut s = table(&rows);
    let none = || "-".to_string();
    let mut cfg = Vec::new();
    let rec = if i.ets_recommend {
        " (also sent as the ETS recommendation)"
    } else {
        ""
    };
    cfg.push(vec![
        "ets".into(),
        "admin".into(),
        format!("{}{rec}", describe_ets_table(&i.ets.admin)),
    ]);
    cfg.push(vec![
        String::new(),
        "peer".into(),
        i.ets.peer.as_ref().map_or_else(none, describe_ets_table),
    ]);
    if let Some(r) = &i.peer_tlvs.ets_recommendation {
        cfg.push(vec![
            String::new(),
            "peer rec".into(),
            describe_ets_table(&r.table),
        ]);
    }
    cfg.push(vec![
        String::new(),
        "oper".into(),
        describe_ets_table(&i.ets.oper),
    ]);
    let pfc = |p: lossless_wire::ieee::PriorityMap| format!("priorities {p}");
    cfg.push(vec!["pfc".into(), "admin".into(), pfc(i.pfc.admin)]);
    cfg.push(vec![
        String::new(),
        "peer".into(),
        i.pfc.peer.map_or_else(none, pfc),
    ]);
    cfg.push(vec![String::new(), "oper".into(), pfc(i.pfc.oper)]);
    cfg.push(vec![
        "app".into(),
        "admin".into(),
        describe_app_table(&i.app.admin),
    ]);
    cfg.push(vec![
        String::new(),
        "peer".into(),
        i.app.peer.as_ref().map_or_else(none, describe_app_table),
    ]);
    cfg.push(vec![
        String::new(),
        "oper".into(),
        describe_app_table(&i.app.oper),
    ]);
    s.push_str(&table(&cfg));
    s
}

/// The adaptive-headroom table: per link, what was injected, measured and sized.
pub fn render_headroom(rows: &[LinkOutcome]) -> String {
    use lossless_headroom::units::grouped;
    let mut s = String::from(
        "\nadaptive headroom (Adaptive PFC Headroom), switch end of each link, alpha 1, 160-byte cells:\n",
    );
    let header = [
        "link",
        "one-way",
        "measured RTT",
        "X (bits)",
        "DV (bits)",
        "headroom",
        "model DV",
    ];
    let mut t = vec![header.map(String::from).to_vec()];
    for o in rows {
        let (rtt, x, dv, h) = match (&o.measured, &o.adaptive) {
            (Some(m), Some(n)) => (
                format!("{:.3} us", m.round_trip.0 as f64 / 1e6),
                grouped(n.x_bit_times),
                grouped(n.dv_bit_times),
                format!(
                    "{} B ({} cells)",
                    grouped(n.headroom.bytes),
                    n.headroom.cells
                ),
            ),
            _ => ("not measured".into(), "-".into(), "-".into(), "-".into()),
        };
        t.push(vec![
            format!("{} {}", o.label, o.medium),
            format!("{:.3} us", o.injected_one_way_ns as f64 / 1e3),
            rtt,
            x,
            dv,
            h,
            grouped(o.model_dv_bit_times),
        ]);
    }
    s.push_str(&table(&t));
    s.push_str(
        "  model DV: the PFC Delay Value Constraint Model with its defaults for the same link. The simulated paths\n  \
         carry exactly the model's cable and interface delays, so the two agree to rounding; on a\n  \
         real link the measurement replaces the model's assumptions (see `lossless headroom compare`).\n",
    );
    s
}

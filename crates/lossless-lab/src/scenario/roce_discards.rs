//! `roce-discards`: a ConnectX host whose receive buffer on the PFC priority overflows
//! (headroom too small for the link, or a peer that does not honour the pause): its
//! NIC drops packets on priority 3, RoCE loses packets and sends them again, and the
//! host's metrics, scraped every minute of the virtual clock, carry what an operator's
//! Prometheus would alert on.
//!
//! The NIC is the lab's model of mlx5 (`crate::nic::Nic::per_priority`,
//! `crate::nic::Nic::hw_counters`): its ethtool drops per priority
//! (`rx_prio<N>_discards`, `_buf_discard`, `_cong_discard`) and the RDMA device's hw
//! counters losslessd follows, at power-on 0, counting up at the rates set here.

use lossless_dcbx::{Duration, Instant};
use lossless_node::config::{Apply, PortSettings};
use lossless_node::pfc::rdma::HW_COUNTERS;
use lossless_node::pfc::view::{port_pfc_view, PortPfcView};
use lossless_node::pfc::Counter;
use serde::Serialize;

use super::{converged, ieee_host_config, ieee_switch_config, report, Report, ScenarioInfo};
use crate::nic::Driver;
use crate::roce_host::RoceHostModel;
use crate::sim::{NodeId, PathProps, Sim};

/// The priority that overflows.
pub const PRIORITY: u8 = 3;
/// When it starts to (seconds), and the run's end.
pub const OVERFLOW_AT: f64 = 120.0;
pub const END: f64 = 1200.0;
/// How often the metrics are scraped (seconds).
pub const SCRAPE: f64 = 60.0;
/// Packets dropped a second on the priority once it overflows.
pub const DROP_RATE: f64 = 20.0;
/// What the drops cost RoCE, a second: the responders see the gaps (out of sequence)
/// and the requesters the NAKs (sequence errors).
pub const OUT_OF_SEQUENCE_RATE: f64 = 15.0;
pub const SEQ_ERR_RATE: f64 = 15.0;
/// DCQCN at work all along: the switch marks, the host answers with CNPs and slows down
/// on the CNPs it receives.
pub const ECN_RATE: f64 = 500.0;
pub const CNP_RATE: f64 = 50.0;

/// One scrape of the host's metrics.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scrape {
    /// Seconds on the virtual clock.
    pub at: f64,
    /// The priority's drops so far, every kind.
    pub discards: u64,
    /// Retransmission events so far, every reason.
    pub retransmissions: u64,
    pub ecn_marked: u64,
    pub cnp_sent: u64,
    /// The metrics text as /metrics served it.
    #[serde(skip)]
    pub text: String,
}

/// What the run showed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiscardsRun {
    pub priority: u8,
    pub overflow_at: f64,
    pub scrapes: Vec<Scrape>,
    /// The host port's `pfc show` at the end.
    pub pfc_show: PortPfcView,
}

/// The host's settings: `ieee_host_config` (willing: it runs the switch's PFC on 3),
/// programmed through dcbnl.
pub fn host_settings() -> PortSettings {
    PortSettings {
        apply: Apply::Dcbnl,
        ..PortSettings::from_port_config(&ieee_host_config())
    }
}

/// Runs the scenario; the host is the second node.
pub fn run(info: &ScenarioInfo, seed: u64) -> Report {
    let (sim, host, converged_at, run) = simulate(seed);
    let mut r = report(info, seed, &sim, converged_at, &[0, host]);
    r.roce_discards = Some(run);
    r
}

fn total(text: &str, metric: &str, filter: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with(metric) && l.contains(filter))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

/// The scenario's run: (the simulator, the host, convergence, what happened).
pub fn simulate(seed: u64) -> (Sim, NodeId, Option<Instant>, DiscardsRun) {
    let mut sim = Sim::new(seed);
    let a = sim
        .add_agent("switch", ieee_switch_config())
        .expect("valid switch config");
    let host_cfg = ieee_host_config();
    let b = sim
        .add_node(
            "host",
            host_cfg.mac,
            host_settings(),
            Driver::Dcbnl { buffer: None },
        )
        .expect("valid host settings");
    // A ConnectX port: its RDMA device, mlx5's drops per priority and hw counters at 0.
    let now = sim.now();
    let nic = sim.nic_mut(b);
    nic.roce = RoceHostModel::connectx("mlx5_0");
    for (counter, _) in Counter::DISCARDS {
        for p in 0..8 {
            nic.per_priority.set(now, (counter, p), 0.0);
        }
    }
    for (_, name, _) in HW_COUNTERS.iter().filter(|(d, _, _)| *d == "mlx5_ib") {
        nic.hw_counters.set(now, name.to_string(), 0.0);
    }
    nic.hw_counters
        .set(now, "np_ecn_marked_roce_packets".into(), ECN_RATE);
    nic.hw_counters.set(now, "np_cnp_sent".into(), CNP_RATE);
    nic.hw_counters.set(now, "rp_cnp_handled".into(), CNP_RATE);
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
    let mut scrapes = Vec::new();
    let mut next = 0.0;
    let mut overflowing = false;
    while next <= END + 1e-9 {
        if !overflowing && next >= OVERFLOW_AT {
            sim.run_until(Instant::from_secs_f64(OVERFLOW_AT));
            let now = sim.now();
            let nic = sim.nic_mut(b);
            nic.per_priority
                .set(now, (Counter::RxDiscards, PRIORITY), DROP_RATE);
            nic.hw_counters
                .set(now, "out_of_sequence".into(), OUT_OF_SEQUENCE_RATE);
            nic.hw_counters
                .set(now, "packet_seq_err".into(), SEQ_ERR_RATE);
            sim.note(format!(
                "priority {PRIORITY} overflows: {DROP_RATE} drops/s (rx_prio{PRIORITY}_discards), \
                 {OUT_OF_SEQUENCE_RATE} out of sequence/s, {SEQ_ERR_RATE} sequence error NAKs/s"
            ));
            overflowing = true;
        }
        sim.run_until(Instant::from_secs_f64(next));
        let text = sim.metrics(b);
        let prio = format!("priority=\"{PRIORITY}\"");
        scrapes.push(Scrape {
            at: next,
            discards: total(&text, "lossless_priority_discards_total{", &prio),
            retransmissions: total(&text, "lossless_roce_retransmissions_total{", ""),
            ecn_marked: total(&text, "lossless_roce_ecn_marked_total{", ""),
            cnp_sent: total(&text, "lossless_roce_cnp_sent_total{", ""),
            text,
        });
        next += SCRAPE;
    }
    let port = sim.port(b);
    let pfc_show = port_pfc_view(&port.name, port.agent.applied_pfc(), &port.pfc, sim.now());
    let run = DiscardsRun {
        priority: PRIORITY,
        overflow_at: OVERFLOW_AT,
        scrapes,
        pfc_show,
    };
    (sim, b, converged_at, run)
}

/// The run for people.
pub fn render(r: &DiscardsRun) -> String {
    let mut s = format!(
        "\nThe host's metrics every {SCRAPE} s (priority {} overflows at {} s):\n  \
         {:>7}  {:>9}  {:>15}  {:>10}  {:>8}\n",
        r.priority, r.overflow_at, "TIME", "DISCARDS", "RETRANSMISSIONS", "ECN-MARKED", "CNP-SENT"
    );
    for sc in &r.scrapes {
        s.push_str(&format!(
            "  {:>5} s  {:>9}  {:>15}  {:>10}  {:>8}\n",
            sc.at, sc.discards, sc.retransmissions, sc.ecn_marked, sc.cnp_sent
        ));
    }
    s.push_str(
        "  lossless_priority_discards_total rises on a PFC priority: dist/prometheus's \
         LosslessPfcPriorityDiscards fires, and with the retransmissions LosslessRoceRetransmissionsRising.\n",
    );
    s
}

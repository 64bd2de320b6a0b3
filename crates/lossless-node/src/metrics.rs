//! Prometheus metrics in the text exposition format (version 0.0.4), rendered
//! from the ports' own counters at scrape time plus a negotiation latency
//! histogram and event counters kept here.

use std::collections::BTreeMap;
use std::fmt::Write;

use lossless_dcbx::{Duration, Event, EventKind, Version};

use crate::exposition::{esc, header};

use crate::port::Port;
use crate::protocol::Hardware;

/// Upper bounds of the negotiation latency buckets, seconds.
const BUCKETS: [f64; 12] = [
    0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0,
];

#[derive(Debug, Default)]
pub struct Metrics {
    /// Cumulative counts per bucket, then +Inf.
    latency: [u64; BUCKETS.len() + 1],
    latency_sum: f64,
    /// Agent notifications by port, and by kind ([`EVENT_KINDS`]) within a port.
    events: BTreeMap<String, [u64; EVENT_KINDS.len()]>,
}

/// The kinds of agent notification, in the order the metrics list them (by name).
const EVENT_KINDS: [EventKind; 13] = EventKind::ALL;

impl Metrics {
    pub fn observe_convergence(&mut self, took: Duration) {
        let s = took.as_secs_f64();
        for (i, b) in BUCKETS.iter().enumerate() {
            if s <= *b {
                self.latency[i] += 1;
            }
        }
        self.latency[BUCKETS.len()] += 1;
        self.latency_sum += s;
    }

    /// Counts an agent notification on `port`.
    pub fn count_event(&mut self, port: &str, e: &Event) {
        let i = e.kind() as usize;
        match self.events.get_mut(port) {
            Some(counts) => counts[i] += 1,
            None => {
                let mut counts = [0; EVENT_KINDS.len()];
                counts[i] = 1;
                self.events.insert(port.to_string(), counts);
            }
        }
    }

    /// A port that is gone: its series go with it.
    pub fn forget_port(&mut self, port: &str) {
        self.events.remove(port);
    }

    pub fn render<'a>(&self, ports: impl Iterator<Item = &'a Port>, uptime: Duration) -> String {
        let ports: Vec<&Port> = ports.collect();
        let mut out = String::new();
        process(&mut out, &ports, uptime);
        port_counters(&mut out, &ports);
        port_gauges(&mut out, &ports);
        dcbx_features(&mut out, &ports);
        crate::dcbx_config_metrics::render(&mut out, &ports);
        hardware(&mut out, &ports);
        headroom(&mut out, &ports);
        crate::roce_metrics::render(&mut out, &ports);
        crate::damping_metrics::render_metrics(&mut out, &ports);
        self.events(&mut out);
        self.convergence(&mut out);
        out
    }

    /// The agents' notifications, by port and kind.
    fn events(&self, out: &mut String) {
        header(
            out,
            "lossless_dcbx_events_total",
            "DCBX notifications to the manager (CEE DCBX 2.4.4; IEEE 802.1Qaz alike) by port \
             and kind.",
            "counter",
        );
        for (port, counts) in &self.events {
            for (kind, n) in EVENT_KINDS
                .iter()
                .map(|k| k.name())
                .zip(counts)
                .filter(|(_, n)| **n > 0)
            {
                let _ = writeln!(
                    out,
                    "lossless_dcbx_events_total{{port=\"{}\",kind=\"{kind}\"}} {n}",
                    esc(port)
                );
            }
        }
    }

    /// The negotiation latency histogram.
    fn convergence(&self, out: &mut String) {
        header(
            out,
            "lossless_dcbx_convergence_seconds",
            "Link-up or configuration change to every feature Syncd with the peer.",
            "histogram",
        );
        for (i, b) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "lossless_dcbx_convergence_seconds_bucket{{le=\"{b}\"}} {}",
                self.latency[i]
            );
        }
        let total = self.latency[BUCKETS.len()];
        let _ = writeln!(
            out,
            "lossless_dcbx_convergence_seconds_bucket{{le=\"+Inf\"}} {total}"
        );
        let _ = writeln!(
            out,
            "lossless_dcbx_convergence_seconds_sum {}",
            self.latency_sum
        );
        let _ = writeln!(out, "lossless_dcbx_convergence_seconds_count {total}");
    }
}

/// Uptime and port count.
fn process(out: &mut String, ports: &[&Port], uptime: Duration) {
    gauge(
        out,
        "lossless_uptime_seconds",
        "Seconds since losslessd started.",
    );
    let _ = writeln!(out, "lossless_uptime_seconds {:.3}", uptime.as_secs_f64());
    gauge(out, "lossless_ports", "Ports the daemon runs DCBX on.");
    let _ = writeln!(out, "lossless_ports {}", ports.len());
}

/// The packet sockets shared by the ports: what the kernel dropped on them and their
/// receive buffer.
pub(crate) fn shared_socket(out: &mut String, s: &crate::protocol::SharedSocketCounters) {
    header(
        out,
        "lossless_shared_packet_socket_drops_total",
        "Frames the kernel dropped on the packet sockets the ports share (one per \
         EtherType), their receive buffer full (PACKET_STATISTICS).",
        "counter",
    );
    let _ = writeln!(
        out,
        "lossless_shared_packet_socket_drops_total {}",
        s.kernel_drops
    );
    if let Some(b) = s.rcvbuf_bytes {
        gauge(
            out,
            "lossless_shared_packet_socket_rcvbuf_bytes",
            "The receive buffer the kernel granted each shared packet socket (SO_RCVBUF).",
        );
        let _ = writeln!(out, "lossless_shared_packet_socket_rcvbuf_bytes {b}");
    }
}

/// The LLDP MIB's and DCBX's counters per port.
fn port_counters(out: &mut String, ports: &[&Port]) {
    let counters: [(&str, &str, Get); 19] = [
        (
            "lldp_frames_out_total",
            "LLDPDUs sent (statsFramesOutTotal).",
            |p| p.agent.lldp_stats().frames_out,
        ),
        (
            "lldp_frames_in_total",
            "LLDPDUs received (statsFramesInTotal).",
            |p| p.agent.lldp_stats().frames_in,
        ),
        (
            "lldp_frames_in_errors_total",
            "LLDPDUs that failed validation.",
            |p| p.agent.lldp_stats().frames_in_errors,
        ),
        (
            "lldp_frames_discarded_total",
            "LLDPDUs discarded (statsFramesDiscardedTotal).",
            |p| p.agent.lldp_stats().frames_discarded,
        ),
        (
            "lldp_tlvs_discarded_total",
            "TLVs discarded (statsTLVsDiscardedTotal).",
            |p| p.agent.lldp_stats().tlvs_discarded,
        ),
        (
            "lldp_tlvs_unrecognized_total",
            "TLVs not recognised (statsTLVsUnrecognizedTotal).",
            |p| p.agent.lldp_stats().tlvs_unrecognized,
        ),
        (
            "lldp_ageouts_total",
            "Neighbours aged out (statsAgeoutsTotal).",
            |p| p.agent.lldp_stats().ageouts,
        ),
        (
            "lldp_neighbor_hold_expiries_total",
            "Neighbours never negotiated with that kept the port without a DCBX peer for max_neighbor_hold and were set aside.",
            |p| p.agent.lldp_stats().neighbor_hold_expiries,
        ),
        ("dcbx_tlvs_in_total", "CEE DCBX TLVs received.", |p| {
            p.agent.dcbx_stats().tlvs_in
        }),
        (
            "dcbx_peer_losses_total",
            "Times the peer's DCBX went away.",
            |p| p.agent.dcbx_stats().peer_losses,
        ),
        ("dcbx_seq_changes_total", "Times our SeqNo advanced.", |p| {
            p.agent.dcbx_stats().seq_changes
        }),
        (
            "port_tx_errors_total",
            "Frames the socket refused to send.",
            |p| p.io.tx_errors,
        ),
        (
            "port_mac_control_frames_in_total",
            "MAC control (PAUSE/PFC) frames seen.",
            |p| p.io.mac_control_rx,
        ),
        (
            "packet_socket_drops_total",
            "Frames the kernel dropped before losslessd read them, the receive buffer of \
             the port's own packet socket full (PACKET_STATISTICS; 0 while the port reads \
             the shared sockets: lossless_shared_packet_socket_drops_total).",
            |p| p.io.kernel_drops,
        ),
        (
            "packet_socket_lldp_drops_total",
            "Of lossless_packet_socket_drops_total, the LLDPDUs the kernel dropped on the \
             port's own LLDP socket (its own sockets are one per EtherType: a PFC storm \
             fills the MAC Control one's buffer, not this one's).",
            |p| p.io.kernel_drops_lldp,
        ),
        (
            "port_rx_over_budget_total",
            "Frames dropped unread, the port's receive budget spent (rx_budget_per_s, \
             rx_budget_burst); the DCBX peer's included.",
            |p| p.io.rx_over_budget,
        ),
        (
            "port_rx_peer_over_budget_total",
            "Frames from the port's DCBX peer (its MSAP, or its MAC) dropped unread, the \
             peer's own receive budget spent: a flood copying its identity, or a PFC storm \
             (its PFC frames are still counted per priority).",
            |p| p.io.rx_peer_over_budget,
        ),
        (
            "port_rx_own_lldpdus_total",
            "LLDPDUs received that this host sent (the MSAP of one of its ports: a looped \
             cable, or a device reflecting frames), discarded.",
            |p| p.io.rx_own_lldpdus,
        ),
        (
            "port_own_socket_skipped_total",
            "Frames read from both the shared packet sockets and the port's own one while \
             it switched to its own, delivered once: the copies skipped (matched by the \
             kernel's receive stamps).",
            |p| p.io.own_socket_skipped,
        ),
    ];
    for (name, help, get) in counters {
        per_port(
            out,
            name,
            help,
            "counter",
            ports.iter().map(|p| (*p, Some(get(p)))),
        );
    }
    decode_errors(out, ports);
}

/// Malformed input by port, field and kind; a port with none has no sample.
fn decode_errors(out: &mut String, ports: &[&Port]) {
    header(
        out,
        "lossless_decode_errors_total",
        "Malformed input received, by the field at fault (in the standard's terms) and \
         what was wrong with it: LLDPDUs discarded, DCBX TLVs treated as absent.",
        "counter",
    );
    for p in ports {
        for (field, kind, n) in p.agent.decode_errors().iter() {
            let _ = writeln!(
                out,
                "lossless_decode_errors_total{{port=\"{}\",field=\"{}\",kind=\"{kind}\"}} {n}",
                esc(&p.name),
                esc(field)
            );
        }
    }
}

/// Link, DCBX and peers per port.
fn port_gauges(out: &mut String, ports: &[&Port]) {
    let gauges: [(&str, &str, Get); 4] = [
        ("link_up", "1 when the port's link is up.", |p| {
            u64::from(p.agent.link_up())
        }),
        (
            "dcbx_active",
            "1 when DCBX runs on the port (enabled, admin status rxtx, link up).",
            |p| u64::from(p.agent.dcbx_active()),
        ),
        ("dcbx_peer_present", "1 when a DCBX peer is in view.", |p| {
            u64::from(p.agent.peer_present())
        }),
        (
            "lldp_neighbors",
            "LLDP neighbours in the remote MIB (DCBX needs exactly one).",
            |p| p.agent.neighbors().len() as u64,
        ),
    ];
    for (name, help, get) in gauges {
        per_port(
            out,
            name,
            help,
            "gauge",
            ports.iter().map(|p| (*p, Some(get(p)))),
        );
    }
    per_port(
        out,
        "packet_socket_rcvbuf_bytes",
        "The receive buffer the kernel granted the packet socket the port's frames wait \
         in, its own or the shared one (SO_RCVBUF; [daemon] packet_rcvbuf_bytes asks for \
         half of it).",
        "gauge",
        ports.iter().map(|p| (*p, p.io.rcvbuf_bytes)),
    );
    per_port(
        out,
        "port_own_packet_socket",
        "1 when the port reads a packet socket of its own (since its receive budget was \
         spent), 0 while it reads the shared ones.",
        "gauge",
        ports.iter().map(|p| (*p, Some(u8::from(p.io.own_socket)))),
    );
    // Each port's problems once (its agent's status is a copy of every table): the
    // gauge and the kinds below both read them.
    let problems: Vec<Vec<crate::health::Problem>> = ports
        .iter()
        .map(|p| crate::health::problems(&p.facts(&p.agent.status())))
        .collect();
    per_port(
        out,
        "port_healthy",
        "1 when nothing is wrong on the port: link up, DCBX peer, every feature operational, \
         in sync and not in error, with apply = dcbnl the NIC programmed (`lossless status` says \
         what is wrong).",
        "gauge",
        ports
            .iter()
            .zip(&problems)
            .map(|(p, pr)| (*p, Some(u64::from(pr.is_empty())))),
    );
    header(
        out,
        "lossless_port_problem",
        "1 for each kind of problem a port has, by kind (lossy_class: an APP entry of a \
         lossless class on a priority without PFC; refused: the driver refused a part of the \
         programming; nic_differs: the NIC holds other than was programmed; ...); `lossless \
         status` says each in words. No series: no problem of that kind.",
        "gauge",
    );
    for (p, pr) in ports.iter().zip(&problems) {
        let mut kinds: Vec<&str> = pr.iter().map(crate::health::Problem::kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for k in kinds {
            let _ = writeln!(
                out,
                "lossless_port_problem{{port=\"{}\",problem=\"{k}\"}} 1",
                esc(&p.name)
            );
        }
    }
    let dcbnl: Vec<&Port> = ports
        .iter()
        .copied()
        .filter(|p| matches!(p.hardware, crate::protocol::Hardware::Dcbnl { .. }))
        .collect();
    per_port(
        out,
        "nic_refused",
        "Parts of the NIC programming (APP entries, ETS, PFC, the trust order) the driver \
         refused, as last answered (ports with apply = dcbnl).",
        "gauge",
        dcbnl
            .iter()
            .map(|p| (*p, Some(p.ieee_hw.nic.refused.len()))),
    );
    per_port(
        out,
        "nic_drift_total",
        "Read-backs that found the NIC changed behind the daemon's back (dcb, mlnx_qos, \
         lldpad, a firmware reset).",
        "counter",
        dcbnl
            .iter()
            .map(|p| (*p, Some(p.ieee_hw.nic.drift_detected))),
    );
    per_port(
        out,
        "nic_drift_repaired_total",
        "Programmings that put back what drift had changed (nic_drift = \"repair\").",
        "counter",
        dcbnl
            .iter()
            .map(|p| (*p, Some(p.ieee_hw.nic.drift_repaired))),
    );
}

/// The running DCBX version and each of its features per port, and the malformed IEEE
/// TLVs by reason.
fn dcbx_features(out: &mut String, ports: &[&Port]) {
    // Per port and feature of the running DCBX version: [Syncd (IEEE: agreed),
    // Error, OperMode], one status() per port.
    let flags: Vec<[(&str, [bool; 3]); 3]> = ports
        .iter()
        .map(|p| {
            let s = p.agent.status();
            match s.mode.running {
                Version::Cee => [
                    ("pg", [s.pg.syncd, s.pg.error, s.pg.oper_mode]),
                    ("pfc", [s.pfc.syncd, s.pfc.error, s.pfc.oper_mode]),
                    ("app", [s.app.syncd, s.app.error, s.app.oper_mode]),
                ],
                Version::Ieee => {
                    let i = &s.ieee;
                    [
                        ("ets", [i.ets.agreed, i.ets.error, i.ets.oper_mode]),
                        ("pfc", [i.pfc.agreed, i.pfc.error, i.pfc.oper_mode]),
                        ("app", [i.app.agreed, i.app.error, i.app.oper_mode]),
                    ]
                }
            }
        })
        .collect();
    header(
        out,
        "lossless_dcbx_mode",
        "The DCBX version the port runs (running) and the one configured (configured: \
             auto, ieee, cee, static): 1 on the port's current pair.",
        "gauge",
    );
    for p in ports {
        let _ = writeln!(
            out,
            "lossless_dcbx_mode{{port=\"{}\",configured=\"{}\",running=\"{}\"}} 1",
            esc(&p.name),
            p.agent.config().dcbx.mode.name(),
            p.agent.running().name()
        );
    }
    header(
        out,
        "lossless_dcbx_ieee_tlvs_invalid_total",
        "Malformed IEEE 802.1Qaz TLVs received, by reason (treated as absent).",
        "counter",
    );
    for p in ports {
        let i = p.agent.dcbx_stats().ieee;
        for (reason, n) in [
            ("bad_length", i.bad_length),
            ("bad_value", i.bad_value),
            ("duplicate", i.duplicate),
            ("other", i.other),
        ] {
            let _ = writeln!(
                out,
                "lossless_dcbx_ieee_tlvs_invalid_total{{port=\"{}\",reason=\"{reason}\"}} {n}",
                esc(&p.name)
            );
        }
    }
    for (k, (metric, help)) in [
        (
            "lossless_dcbx_syncd",
            "1 when the feature agrees with the peer (CEE: Syncd; IEEE: agreed).",
        ),
        (
            "lossless_dcbx_error",
            "1 when the feature is in error (CEE: the Error flag).",
        ),
        (
            "lossless_dcbx_oper_mode",
            "1 when the feature's OperMode is on.",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        header(out, metric, help, "gauge");
        for (p, features) in ports.iter().zip(&flags) {
            for (f, v) in features {
                let _ = writeln!(
                    out,
                    "{metric}{{port=\"{}\",feature=\"{f}\"}} {}",
                    esc(&p.name),
                    u8::from(v[k])
                );
            }
        }
    }
}

/// How the operational configuration reaches the NIC, and dcbnl failures by kind.
fn hardware(out: &mut String, ports: &[&Port]) {
    header(
        out,
        "lossless_hardware_apply",
        "How the operational config reaches the NIC: 1 on the port's current mode.",
        "gauge",
    );
    for p in ports {
        let mode = match &p.hardware {
            Hardware::ReportOnly => "report_only",
            Hardware::Probing => "probing",
            Hardware::Dcbnl { error: None, .. } => "dcbnl",
            Hardware::Dcbnl { .. } => "dcbnl_error",
            Hardware::Unsupported { .. } => "unsupported",
        };
        let _ = writeln!(
            out,
            "lossless_hardware_apply{{port=\"{}\",mode=\"{mode}\"}} 1",
            esc(&p.name)
        );
    }
    header(
        out,
        "lossless_hardware_errors_total",
        "dcbnl operations that failed, by kind (not_supported, no_device, refused, \
         permission, busy, timeout, malformed, other).",
        "counter",
    );
    for p in ports {
        for (kind, n) in p.hw_errors.iter() {
            let _ = writeln!(
                out,
                "lossless_hardware_errors_total{{port=\"{}\",kind=\"{}\"}} {n}",
                esc(&p.name),
                kind.name()
            );
        }
    }
}

/// Adaptive headroom on the ports that measure, and the DCB buffer.
fn headroom(out: &mut String, ports: &[&Port]) {
    // Adaptive headroom, on the ports that measure.
    let measuring: Vec<(&Port, &crate::headroom::PortHeadroom)> = ports
        .iter()
        .filter_map(|p| p.headroom.as_ref().map(|h| (*p, &**h)))
        .collect();
    type GetH = fn(&crate::headroom::PortHeadroom) -> Option<f64>;
    let headroom: [(&str, &str, &str, GetH); 7] = [
        (
            "headroom_round_trip_seconds",
            "Last measured link round trip, T4 - T1 - (T3 - T2) (minimum filter).",
            "gauge",
            |h| h.session.last().map(|m| m.round_trip.0 as f64 / 1e12),
        ),
        (
            "headroom_bytes",
            "Headroom the port holds per lossless priority (DV x alpha in cells).",
            "gauge",
            |h| h.applied().map(|a| a.bytes as f64),
        ),
        (
            "headroom_need_bytes",
            "Headroom the last measurement needs per lossless priority (DV x alpha in cells), \
             before the hysteresis.",
            "gauge",
            |h| h.need().map(|n| n.headroom.bytes as f64),
        ),
        (
            "headroom_cells",
            "The same headroom in buffer cells.",
            "gauge",
            |h| h.applied().map(|a| a.cells as f64),
        ),
        (
            "headroom_measurements_total",
            "Measurement rounds with a result.",
            "counter",
            |h| Some(h.measurements as f64),
        ),
        (
            "headroom_measurement_failures_total",
            "Measurement rounds with too few answers.",
            "counter",
            |h| Some(h.failures as f64),
        ),
        (
            "headroom_frames_out_total",
            "Measurement frames sent (requests, responses, follow-ups).",
            "counter",
            |h| {
                let s = h.session.stats();
                Some((s.requests_sent + s.responses_sent + s.follow_ups_sent) as f64)
            },
        ),
    ];
    for (name, help, kind, get) in headroom {
        per_port(
            out,
            name,
            help,
            kind,
            measuring.iter().map(|(p, h)| (*p, get(h))),
        );
    }

    per_port(
        out,
        "headroom_pfc_delay_bit_times",
        "IEEE PFC delay allowance programmed through dcbnl, bit times.",
        "gauge",
        measuring.iter().map(|(p, h)| {
            let bits = match h.hardware {
                crate::headroom::HeadroomHardware::Applied { pfc_delay_bits, .. } => {
                    Some(pfc_delay_bits)
                }
                _ => None,
            };
            (*p, bits)
        }),
    );
    header(
        out,
        "lossless_headroom_buffer_state",
        "The DCB buffer for the headroom: 1 on the port's state, with the reason when it \
             was not sized (off, unsupported, no_pfc_priority, does_not_fit, error).",
        "gauge",
    );
    let buffers: Vec<_> = measuring
        .iter()
        .map(|(p, h)| (*p, h.buffer_state(p.settings.apply, &p.hardware)))
        .collect();
    for (p, b) in &buffers {
        let (state, reason) = b.label();
        let _ = writeln!(
            out,
            "lossless_headroom_buffer_state{{port=\"{}\",state=\"{state}\",reason=\"{}\"}} 1",
            esc(&p.name),
            esc(&reason)
        );
    }
    header(
        out,
        "lossless_headroom_buffer_bytes",
        "Size of each DCB buffer holding a PFC priority, as the driver reports it.",
        "gauge",
    );
    for (p, b) in &buffers {
        if let crate::headroom::BufferState::Sized {
            lossless,
            buffer_size,
            ..
        } = b
        {
            for &i in lossless {
                let _ = writeln!(
                    out,
                    "lossless_headroom_buffer_bytes{{port=\"{}\",buffer=\"{i}\"}} {}",
                    esc(&p.name),
                    buffer_size[usize::from(i)]
                );
            }
        }
    }
}

/// A per-port sample of a counter or gauge.
type Get = fn(&Port) -> u64;

/// One metric `lossless_NAME` with a sample per port; ports without a value are left out.
fn per_port<'a, V: std::fmt::Display>(
    out: &mut String,
    name: &str,
    help: &str,
    kind: &str,
    samples: impl Iterator<Item = (&'a Port, Option<V>)>,
) {
    let full = format!("lossless_{name}");
    header(out, &full, help, kind);
    for (p, v) in samples {
        if let Some(v) = v {
            let _ = writeln!(out, "{full}{{port=\"{}\"}} {v}", esc(&p.name));
        }
    }
}

fn gauge(out: &mut String, name: &str, help: &str) {
    header(out, name, help, "gauge");
}

#[cfg(test)]
mod tests {
    use lossless_dcbx::FeatureId;

    use super::*;

    #[test]
    fn event_counts_are_listed_by_port_then_kind() {
        assert!(
            EVENT_KINDS.windows(2).all(|w| w[0].name() < w[1].name()),
            "the kinds are in name order"
        );
        for (i, k) in EVENT_KINDS.iter().enumerate() {
            assert_eq!(*k as usize, i, "{k:?} indexes its own count");
        }
        let mut m = Metrics::default();
        let syncd = Event::Syncd {
            feature: FeatureId::Pfc,
        };
        let incompatible = Event::Incompatible {
            feature: FeatureId::Ets,
        };
        for (port, e) in [
            ("p1", &syncd),
            ("p0", &syncd),
            ("p1", &incompatible),
            ("p0", &syncd),
            ("p2", &incompatible),
        ] {
            m.count_event(port, e);
        }
        m.forget_port("p2");
        let mut out = String::new();
        m.events(&mut out);
        let lines: Vec<&str> = out.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "lossless_dcbx_events_total{port=\"p0\",kind=\"syncd\"} 2",
                "lossless_dcbx_events_total{port=\"p1\",kind=\"incompatible\"} 1",
                "lossless_dcbx_events_total{port=\"p1\",kind=\"syncd\"} 1",
            ]
        );
    }
}

//! The PFC counters, the drops per priority, the watchdog and the RDMA device's
//! congestion and retransmission counters in Prometheus form, per port (and priority).

use std::fmt::Write;

use super::counters::Counter;
use super::rdma::{self, Family};
use super::PortPfc;
use crate::exposition::{esc, header};

/// Every PFC series for these ports (name, counters and watchdog).
pub fn render(out: &mut String, ports: &[(&str, &PortPfc)]) {
    header(
        out,
        "lossless_pfc_available",
        "1 when the port has PFC counters: the driver's (dcbnl or ethtool), or with the \
         watchdog on where the driver has none the PFC frames the host received \
         (lossless_pfc_host_source); 0 when not.",
        "gauge",
    );
    for (name, p) in ports {
        let v = u8::from(p.counters.available());
        let _ = writeln!(out, "lossless_pfc_available{{port=\"{}\"}} {v}", esc(name));
    }
    header(
        out,
        "lossless_pfc_host_source",
        "1 when the watchdog's counters are the PFC frames the host received (the driver \
         has none): pauses received only, not those this NIC sends.",
        "gauge",
    );
    for (name, p) in ports {
        let v = u8::from(p.host_source().is_some());
        let _ = writeln!(
            out,
            "lossless_pfc_host_source{{port=\"{}\"}} {v}",
            esc(name)
        );
    }
    header(
        out,
        "lossless_pfc_host_frames_total",
        "PFC frames the host received per priority, counted from the packet socket whatever \
         the driver reports (kind: xoff, a pause; xon, a resume); no series before the \
         port's first.",
        "counter",
    );
    for (name, p) in ports {
        let Some(h) = &p.host else { continue };
        for prio in 0..8usize {
            for (kind, v) in [("xoff", h.counts.xoff[prio]), ("xon", h.counts.xon[prio])] {
                let _ = writeln!(
                    out,
                    "lossless_pfc_host_frames_total{{port=\"{}\",priority=\"{prio}\",kind=\"{kind}\"}} {v}",
                    esc(name)
                );
            }
        }
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
    discards(out, ports);
    watchdog(out, ports);
    roce(out, ports);
}

fn discards(out: &mut String, ports: &[(&str, &PortPfc)]) {
    header(
        out,
        "lossless_priority_discards_total",
        "Packets received on the priority and dropped by the NIC, by kind: no_buffer (the port's receive buffer overflowed: on a PFC priority, headroom too small or PFC not honoured; mlx5 rx_prio<N>_discards), host_buffer (rx_prio<N>_buf_discard), host_congestion (rx_prio<N>_cong_discard).",
        "counter",
    );
    for (name, p) in ports {
        for (counter, kind) in Counter::DISCARDS {
            for prio in 0..8u8 {
                if let Some(v) = p.counters.total(counter, prio) {
                    let _ = writeln!(out, "lossless_priority_discards_total{{port=\"{}\",priority=\"{prio}\",kind=\"{kind}\"}} {v}", esc(name));
                }
            }
        }
    }
}

/// The RDMA hw counters: one metric per thing counted, the driver's name for it in
/// `counter`.
fn roce(out: &mut String, ports: &[(&str, &PortPfc)]) {
    header(
        out,
        "lossless_roce_counters_available",
        "1 when the last reading had the port's RDMA hw counters (device: the RDMA device), 0 when its device is gone or they could not be read.",
        "gauge",
    );
    for (name, p) in ports {
        let r = &p.counters.roce;
        if let Some((device, _)) = &r.device {
            let v = u8::from(r.present() && r.error.is_none());
            let _ = writeln!(
                out,
                "lossless_roce_counters_available{{port=\"{}\",device=\"{}\"}} {v}",
                esc(name),
                esc(device)
            );
        }
    }
    let families: [(Family, &str, &str); 5] = [
        (
            Family::CnpSent,
            "lossless_roce_cnp_sent_total",
            "CNPs the RDMA device sent for ECN-marked packets it received (DCQCN's notification point); counter: the driver's name (mlx5 np_cnp_sent, irdma cnpSent, bnxt_re tx_cnp_pkts, hns_roce tx_cnp_pkt).",
        ),
        (
            Family::CnpHandled,
            "lossless_roce_cnp_handled_total",
            "CNPs received that slowed a queue pair down (DCQCN's reaction point; mlx5 rp_cnp_handled, irdma cnpHandled; bnxt_re rx_cnp_pkts and hns_roce rx_cnp_pkt count every CNP received).",
        ),
        (
            Family::CnpIgnored,
            "lossless_roce_cnp_ignored_total",
            "CNPs received and ignored: the queue pair runs no congestion control (mlx5 rp_cnp_ignored, irdma cnpIgnored).",
        ),
        (
            Family::EcnMarked,
            "lossless_roce_ecn_marked_total",
            "RoCE packets received with ECN CE set by a switch (mlx5 np_ecn_marked_roce_packets, irdma RxECNMrkd, bnxt_re rx_ecn_marked_pkts).",
        ),
        (
            Family::OutOfBuffer,
            "lossless_roce_out_of_buffer_total",
            "RoCE packets dropped for lack of a posted receive (mlx5 out_of_buffer, bnxt_re rx_out_of_buffer): the application's receive queue, not the fabric.",
        ),
    ];
    for (family, metric, help) in families {
        header(out, metric, help, "counter");
        for (name, p) in ports {
            for t in p
                .counters
                .roce
                .tracks
                .iter()
                .filter(|t| rdma::family(t.counter) == family)
            {
                if let Some(v) = t.total() {
                    let _ = writeln!(
                        out,
                        "{metric}{{port=\"{}\",counter=\"{}\"}} {v}",
                        esc(name),
                        esc(&t.name)
                    );
                }
            }
        }
    }
    header(
        out,
        "lossless_roce_retransmissions_total",
        "Events of the RDMA device that mean a RoCE packet was lost and sent again, by reason: out_of_sequence (the responder saw a gap), sequence_error_nak (the requester got a NAK), implied_nak, ack_timeout (the requester's ACK timer expired), duplicate_request (the responder got a request again), rnr_nak (receiver not ready: the peer's application), adaptive, adaptive_timeout (mlx5's adaptive retransmission); counter: the driver's name.",
        "counter",
    );
    for (name, p) in ports {
        for t in &p.counters.roce.tracks {
            let (Family::Retransmission(reason), Some(v)) = (rdma::family(t.counter), t.total())
            else {
                continue;
            };
            let _ = writeln!(
                out,
                "lossless_roce_retransmissions_total{{port=\"{}\",reason=\"{reason}\",counter=\"{}\"}} {v}",
                esc(name),
                esc(&t.name)
            );
        }
    }
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

//! The scenario's steps on the path, each read back from the path's log: a
//! pause followed hop by hop, illegal frames at PE2, a storm under the
//! ceiling; and the path's log as timeline rows.

use lossless_dcbx::{Duration, Instant};
use lossless_relay::example::{pfc, DC2_GW};
use lossless_relay::{DropCounts, EgressCounters, PauseClock, PauseTimeline, Port, Verdict};
use lossless_wire::{emit_mac_control_frame, MacAddr, MacControl};

use super::path::{Node, Path, Record, Toward, What};
use super::{
    ns, HopFrame, IllegalCase, IllegalResult, PauseResult, PfcContent, StormArrival, StormResult,
    WanRelayConfig,
};
use crate::describe::describe_relay_layers;
use crate::timeline::TimelineRow;

/// Step 1's frame: DC2-GW pauses priorities 3 (65,535 quanta) and 4 (4,660).
pub fn first_pause() -> Vec<u8> {
    pfc(DC2_GW, 0x18, [0, 0, 0, 0xffff, 0x1234, 0, 0, 0])
}

/// Step 2's frames, each breaking one rule of draft-he-rtgwg-wan-pfc-00 section 3.2.
pub fn illegal_frames() -> Vec<(&'static str, Vec<u8>)> {
    let good = first_pause();
    let mut bad_dmac = good.clone();
    bad_dmac[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0x0e]);
    let bad_smac = pfc(
        MacAddr([2, 0, 0, 0, 0x66, 6]),
        0x18,
        [0, 0, 0, 1, 1, 0, 0, 0],
    );
    let mut short = good.clone();
    short.truncate(59);
    let mut pause = Vec::new();
    emit_mac_control_frame(
        DC2_GW,
        MacAddr::MAC_CONTROL,
        None,
        &MacControl::Pause { quanta: 0xffff },
        &mut pause,
    );
    let mut high_byte = good;
    high_byte[16] = 0x01;
    vec![
        ("wrong DMAC (LLDP's 01:80:c2:00:00:0e)", bad_dmac),
        ("wrong SMAC (02:00:00:00:66:06, not DC2-GW)", bad_smac),
        ("short frame (59 bytes)", short),
        ("wrong opcode (0x0001, 802.3x PAUSE)", pause),
        ("class-enable vector 0x0118 (high byte set)", high_byte),
    ]
}

fn content(p: &lossless_relay::PfcFrame) -> PfcContent {
    PfcContent {
        src: p.src,
        dst: p.dst,
        class_enable: p.class_enable,
        quanta: p.quanta,
    }
}

/// What `a` counted since `b` (counters only grow).
fn sub(a: &EgressCounters, b: &EgressCounters) -> EgressCounters {
    let mut dropped = DropCounts::default();
    for (reason, n) in a.dropped.iter() {
        for _ in b.dropped.get(reason)..n {
            dropped.add(reason);
        }
    }
    EgressCounters {
        received: a.received - b.received,
        relayed: a.relayed - b.relayed,
        masked: a.masked - b.masked,
        suppressed: a.suppressed - b.suppressed,
        flushed: a.flushed - b.flushed,
        dropped,
        measurement: a.measurement - b.measurement,
    }
}

pub(super) fn link_name(link: usize, toward: Toward) -> String {
    let (a, b) = (Node::ALL[link].name(), Node::ALL[link + 1].name());
    match toward {
        Toward::Dc1 => format!("{a} > {b}"),
        Toward::Dc2 => format!("{b} > {a}"),
    }
}

pub(super) fn verdict_text(port: Port, v: &Verdict) -> String {
    let side = match port {
        Port::Dc => "from its gateway",
        Port::Wan => "from the WAN",
    };
    match v {
        Verdict::Relayed { held: 0 } => format!("checked it ({side}), relayed it into the tunnel"),
        Verdict::Relayed { held } => format!(
            "checked it ({side}), relayed it with priorities {held:#04x} held back by the storm ceiling"
        ),
        Verdict::Suppressed => format!("checked it ({side}), suppressed it (storm ceiling)"),
        Verdict::Delivered => {
            format!("took it out of the tunnel ({side}), checked it, rewrote the SMAC, delivered it")
        }
        Verdict::Measured => {
            format!("took it out of the tunnel ({side}): a WAN delay measurement frame")
        }
        Verdict::Dropped(r) => format!("dropped it ({side}): {r}"),
    }
}

fn pfc_text(p: &lossless_relay::PfcFrame) -> String {
    let times: Vec<String> = (0..8)
        .filter(|i| p.class_enable & (1 << i) != 0)
        .map(|i| format!("p{i}={}", p.quanta[i]))
        .collect();
    format!(
        "from {} vector {:#06x} {}",
        p.src,
        p.class_enable,
        times.join(" ")
    )
}

/// What the node at the far end of a link did with the frame that arrived
/// at `arrives`: the first record of that node at that instant after `from`.
fn outcome(log: &[Record], from: usize, node: Node, arrives: Instant) -> String {
    log[from..]
        .iter()
        .find(|r| r.node == node && r.at == arrives && !matches!(r.what, What::Sent { .. }))
        .map(|r| {
            let text = match &r.what {
                What::Verdict { port, verdict } => verdict_text(*port, verdict),
                What::Routed(l) => format!("routed {l}"),
                What::Unrouted(why) => format!("dropped: {why:?}"),
                What::Accepted(p) => format!("accepted PFC {}", pfc_text(p)),
                What::Refused(r) => format!("refused: {r}"),
                What::Sent { .. } => String::new(),
            };
            format!("{} {text}", node.name())
        })
        .unwrap_or_default()
}

pub(super) fn timeline(log: &[Record]) -> Vec<TimelineRow> {
    let mut rows: Vec<TimelineRow> = log
        .iter()
        .map(|r| {
            let (kind, text) = match &r.what {
                What::Sent {
                    link,
                    toward,
                    len,
                    cause,
                    text,
                    ..
                } => (
                    "tx",
                    format!(
                        "{} {len} B ({}): {text}",
                        link_name(*link, *toward),
                        serde_json::to_value(cause)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default()
                    ),
                ),
                What::Verdict { port, verdict } => ("relay", verdict_text(*port, verdict)),
                What::Routed(l) => ("route", l.to_string()),
                What::Unrouted(why) => ("drop", why.to_string()),
                What::Accepted(p) => ("accept", format!("PFC {}", pfc_text(p))),
                What::Refused(r) => ("refuse", r.to_string()),
            };
            TimelineRow {
                t: r.at.since_epoch().as_secs_f64(),
                node: r.node.name().to_string(),
                kind,
                text,
                event: None,
            }
        })
        .collect();
    // A frame waiting for a busy link is logged when queued, at its start.
    rows.sort_by(|a, b| a.t.total_cmp(&b.t));
    rows
}

pub(super) fn step_pause(path: &mut Path) -> PauseResult {
    let from = path.log().len();
    let start = path.now();
    let frame = first_pause();
    path.gateway_sends(2, &frame);
    path.run_until_idle();
    let log = &path.log()[from..];
    let since = |t: Instant| ns(t - start);
    let mut hops = Vec::new();
    let mut serialization = Duration::ZERO;
    for r in log {
        if let What::Sent {
            link,
            toward,
            len,
            arrives,
            ..
        } = &r.what
        {
            let bytes = path
                .captures_of(*link)
                .find(|c| c.at == r.at && c.from == path.id(r.node))
                .map(|c| c.bytes.as_slice())
                .unwrap_or_default();
            let (outer, inner) = describe_relay_layers(bytes);
            let to = match toward {
                Toward::Dc1 => Node::ALL[link + 1],
                Toward::Dc2 => Node::ALL[*link],
            };
            serialization += path.config().serialization(*len);
            hops.push(HopFrame {
                link: link_name(*link, *toward),
                sent_ns: since(r.at),
                arrived_ns: since(*arrives),
                len: *len,
                outer,
                inner,
                outcome: outcome(path.log(), from, to, *arrives),
            });
        }
    }
    let at_dc1 = log.iter().find(|r| r.node == Node::Dc1Gw);
    let (delivered, refused, end_to_end_ns) = match at_dc1.map(|r| (r.at, &r.what)) {
        Some((at, What::Accepted(p))) => (Some(content(p)), None, Some(since(at))),
        Some((_, What::Refused(r))) => (None, Some(*r), None),
        _ => (None, None, None),
    };
    // The frame is built above as legal PFC; a failure is a bug in this file.
    let sent = content(&lossless_relay::check_pfc(&frame).expect("step 1 sends legal PFC"));
    PauseResult {
        sent,
        hops,
        delivered,
        refused,
        end_to_end_ns,
        propagation_ns: ns(path.config().propagation()),
        serialization_ns: ns(serialization),
    }
}

pub(super) fn step_illegal(path: &mut Path) -> IllegalResult {
    let from = path.log().len();
    let frames = illegal_frames();
    let gap = Duration::from_micros(10);
    for (i, (_, bytes)) in frames.iter().enumerate() {
        if i > 0 {
            let next = path.now() + gap;
            path.run_until(next);
        }
        path.gateway_sends(2, bytes);
    }
    path.run_until_idle();
    let log = &path.log()[from..];
    let verdicts: Vec<Verdict> = log
        .iter()
        .filter_map(|r| match (&r.node, &r.what) {
            (
                Node::Pe2,
                What::Verdict {
                    port: Port::Dc,
                    verdict,
                },
            ) => Some(*verdict),
            _ => None,
        })
        .collect();
    let cases = frames
        .iter()
        .enumerate()
        .map(|(i, (what, bytes))| IllegalCase {
            what,
            len: bytes.len(),
            dropped: match verdicts.get(i) {
                Some(Verdict::Dropped(r)) => Some(*r),
                _ => None,
            },
        })
        .collect();
    IllegalResult {
        cases,
        pe2_dropped: path.pe(2).egress_counters().dropped,
        sent_to_wan: log
            .iter()
            .filter(|r| {
                r.node == Node::Pe2
                    && matches!(
                        r.what,
                        What::Sent {
                            toward: Toward::Dc1,
                            ..
                        }
                    )
            })
            .count(),
        reached_dc1: log.iter().filter(|r| r.node == Node::Dc1Gw).count(),
    }
}

pub(super) fn step_storm(path: &mut Path, cfg: &WanRelayConfig) -> StormResult {
    let from = path.log().len();
    let before = *path.pe(2).egress_counters();
    let held_before = path.pe(2).storm().map_or(0, |s| s.suppressed());
    let start = path.now();
    let p = usize::from(cfg.storm_priority.min(7));
    let frame = |q: u16| {
        let mut quanta = [0; 8];
        quanta[p] = q;
        pfc(DC2_GW, 1 << p, quanta)
    };
    for k in 0..cfg.storm_pauses {
        path.run_until(start + cfg.storm_interval * k);
        path.gateway_sends(2, &frame(0xffff));
    }
    let resume_at = start + cfg.storm_interval * cfg.storm_pauses;
    path.run_until(resume_at);
    path.gateway_sends(2, &frame(0));
    path.run_until_idle();
    let log = &path.log()[from..];
    // PE2's tunnel frames and DC1-GW's acceptances pair up in order: the
    // path is FIFO and loses nothing.
    let causes = log.iter().filter_map(|r| match &r.what {
        What::Sent {
            toward: Toward::Dc1,
            cause,
            ..
        } if r.node == Node::Pe2 => Some(*cause),
        _ => None,
    });
    let accepted = log.iter().filter_map(|r| match &r.what {
        What::Accepted(pfc) if r.node == Node::Dc1Gw => Some((r.at, pfc.quanta[p])),
        _ => None,
    });
    let arrivals: Vec<StormArrival> = accepted
        .zip(causes)
        .map(|((at, quanta), cause)| StormArrival {
            at_ns: ns(at - start),
            quanta,
            cause,
        })
        .collect();
    let after = *path.pe(2).egress_counters();
    let (far_gaps, far_paused_ns) = far_pause(&arrivals, p, cfg);
    StormResult {
        priority: p as u8,
        pauses: cfg.storm_pauses,
        interval_ns: ns(cfg.storm_interval),
        max_per_second: cfg.storm.max_per_second,
        burst: cfg.storm.burst,
        episode_gap: cfg.storm.episode_gap.clone(),
        offered: u64::from(cfg.storm_pauses) + 1,
        pe2: sub(&after, &before),
        suppressed_instances: path.pe(2).storm().map_or(0, |s| s.suppressed()) - held_before,
        arrivals,
        resume_sent_ns: ns(resume_at - start),
        far_gaps,
        far_paused_ns,
    }
}

/// DC1-GW's pause timer for priority `p` from the storm's arrivals: the gaps
/// between the first arrival and the resume's, and the time paused.
fn far_pause(arrivals: &[StormArrival], p: usize, cfg: &WanRelayConfig) -> (Vec<(u64, u64)>, u64) {
    let clock = PauseClock::new(cfg.rate_bps, Duration::ZERO);
    let mut line = PauseTimeline::new(clock, p);
    let at = |a: &StormArrival| Instant::from_duration(Duration::from_nanos(a.at_ns));
    for a in arrivals {
        let mut quanta = [0; 8];
        quanta[p] = a.quanta;
        line.frame(at(a), 1 << p, &quanta);
    }
    let (Some(first), Some(last)) = (arrivals.first(), arrivals.last()) else {
        return (Vec::new(), 0);
    };
    let (from, to) = (at(first), at(last));
    let gaps: Vec<(u64, u64)> = line
        .gaps(from, to)
        .into_iter()
        .map(|(a, b)| (ns(a.since_epoch()), ns(b.since_epoch())))
        .collect();
    let unpaused: u64 = gaps.iter().map(|(a, b)| b - a).sum();
    (gaps, ns(to - from) - unpaused)
}

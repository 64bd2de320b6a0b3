//! The `wan-relay` scenario: seed 002's two-DC path ([`crate::relay`]) run
//! through four steps per tunnel kind, each reported from what the
//! simulated nodes did:
//!
//! 1. DC2-GW pauses two priorities: the frame is followed hop by hop to
//!    DC1-GW, which must accept it with PE1's DC port MAC as the source and
//!    the class-enable vector and pause times as sent; the end-to-end
//!    forwarding delay is measured.
//! 2. DC2-GW sends five illegal frames (wrong DMAC, wrong SMAC, short, wrong
//!    opcode, reserved vector bits): PE2 must drop each, counted by reason,
//!    and nothing may cross the WAN.
//! 3. A PFC storm: one priority paused every `storm_interval`, then resumed.
//!    PE2's storm ceiling holds most of it back; the first pause and the
//!    final resume must still reach DC1-GW.
//! 4. Seed 002's buffer condition at DC2-GW for the forwarding delay
//!    measured in step 1 ([`lossless_relay::buffer`], by
//!    [`lossless_headroom::wan`]).

use std::fmt::Write;

use lossless_dcbx::{Duration, Instant};
use lossless_headroom::units::{self, grouped, Rate};
use lossless_headroom::wan::Wan;
use lossless_relay::buffer::GatewayBuffer;
use lossless_relay::example::{pfc, Kind, DC2_GW};
use lossless_relay::{
    ConfigError, DropCounts, EgressCounters, GatewayCounters, Port, RelayStatus, StormConfig,
    Verdict,
};
use lossless_wire::{emit_mac_control_frame, MacAddr, MacControl};
use serde::Serialize;

use crate::describe::describe_relay_layers;
use crate::pcap::Capture;
use crate::relay::{Cause, Node, Path, PathConfig, Record, Toward, What, LINKS};
use crate::scenario::TimelineRow;
use crate::transit::TransitCounters;

/// A tunnel kind by the name the CLI takes.
#[derive(Debug, Clone, Copy)]
pub struct Tunnel {
    pub name: &'static str,
    pub kind: Kind,
    pub what: &'static str,
}

/// Every kind of [`lossless_relay::example`], in the order they run.
pub const TUNNELS: [Tunnel; 5] = [
    Tunnel {
        name: "srv6",
        kind: Kind::Srv6,
        what: "SRv6: IPv6 + SRH to PE1's End.DX2 SID",
    },
    Tunnel {
        name: "srv6-reduced",
        kind: Kind::Srv6Reduced,
        what: "SRv6 reduced: no SRH, PE1's End.DX2 SID as the IPv6 destination",
    },
    Tunnel {
        name: "vxlan-ipv4",
        kind: Kind::Vxlan4,
        what: "VXLAN over IPv4, VNI 4242",
    },
    Tunnel {
        name: "vxlan-ipv6",
        kind: Kind::Vxlan6,
        what: "VXLAN over IPv6, VNI 4242",
    },
    Tunnel {
        name: "sr-mpls",
        kind: Kind::Mpls,
        what: "SR-MPLS: PE1's node SID over its pseudowire label, control word",
    },
];

/// The tunnel of `kind`.
pub fn tunnel(kind: Kind) -> Tunnel {
    TUNNELS
        .into_iter()
        .find(|t| t.kind == kind)
        .unwrap_or(TUNNELS[0])
}

/// The tunnel named `name`.
pub fn tunnel_named(name: &str) -> Option<Tunnel> {
    TUNNELS.into_iter().find(|t| t.name == name)
}

/// What the scenario runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WanRelayConfig {
    /// One run per kind, in this order.
    pub tunnels: Vec<Kind>,
    pub rate_bps: u64,
    pub dc_link_delay: Duration,
    /// One-way propagation PE2 to PE1.
    pub wan_delay: Duration,
    /// PE2's (and PE1's) storm ceiling.
    pub storm: StormConfig,
    /// The storm: `storm_pauses` pauses of `storm_priority`, one every
    /// `storm_interval`, then one resume.
    pub storm_priority: u8,
    pub storm_pauses: u32,
    pub storm_interval: Duration,
    /// Seed 002's rates at DC2-GW for the buffer condition: the paused
    /// priority's average receive rate at its port (default the line rate)
    /// and send rate (default 0, the worst case).
    pub rx_rate_bps: u64,
    pub tx_rate_bps: u64,
}

impl Default for WanRelayConfig {
    /// 100 Gb/s links, 100 m (0.5 us) from each gateway to its PE, 1 ms
    /// across the WAN (about 200 km of fibre at 5 us/km), a ceiling of 100
    /// frames per second per priority with a burst of 5, and a storm of 50
    /// pauses 1 ms apart.
    fn default() -> Self {
        WanRelayConfig {
            tunnels: TUNNELS.iter().map(|t| t.kind).collect(),
            rate_bps: 100_000_000_000,
            dc_link_delay: Duration::from_nanos(500),
            wan_delay: Duration::from_millis(1),
            storm: StormConfig {
                max_per_second: Some(100),
                burst: Some(5),
                episode_gap: "100ms".to_string(),
            },
            storm_priority: 3,
            storm_pauses: 50,
            storm_interval: Duration::from_millis(1),
            rx_rate_bps: 100_000_000_000,
            tx_rate_bps: 0,
        }
    }
}

/// The path's figures, as run.
#[derive(Debug, Clone, Serialize)]
pub struct PathSummary {
    pub rate_bps: u64,
    /// Per link, in path order: `dc2gw-pe2`, `pe2-p`, `p-pe1`, `pe1-dc1gw`.
    pub links: Vec<LinkSummary>,
    pub propagation_ns: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkSummary {
    pub name: &'static str,
    pub delay_ns: u64,
    /// Frames sent on it, both directions, whole run.
    pub frames: usize,
}

/// The contents of a PFC frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PfcContent {
    pub src: MacAddr,
    pub dst: MacAddr,
    pub class_enable: u8,
    pub quanta: [u16; 8],
}

/// One frame on one link.
#[derive(Debug, Clone, Serialize)]
pub struct HopFrame {
    /// `DC2-GW > PE2`, ...
    pub link: String,
    /// First bit sent, since the step began.
    pub sent_ns: u64,
    /// Last bit received by the next node.
    pub arrived_ns: u64,
    pub len: usize,
    /// The tunnel headers, on the WAN links.
    pub outer: Option<String>,
    /// The PFC frame (inside the tunnel on the WAN links).
    pub inner: String,
    /// What the receiving node did with it.
    pub outcome: String,
}

/// Step 1: one pause, DC2-GW to DC1-GW.
#[derive(Debug, Clone, Serialize)]
pub struct PauseResult {
    /// What DC2-GW sent.
    pub sent: PfcContent,
    pub hops: Vec<HopFrame>,
    /// What DC1-GW's check accepted (None: nothing arrived or it refused).
    pub delivered: Option<PfcContent>,
    /// DC1-GW's refusal, if it refused.
    pub refused: Option<lossless_relay::DropReason>,
    /// From DC2-GW's first bit to DC1-GW holding the whole frame.
    pub end_to_end_ns: Option<u64>,
    /// Of which: propagation on the four links, and the frame's
    /// serialization on each.
    pub propagation_ns: u64,
    pub serialization_ns: u64,
}

/// One illegal frame of step 2.
#[derive(Debug, Clone, Serialize)]
pub struct IllegalCase {
    pub what: &'static str,
    pub len: usize,
    /// PE2's verdict: the reason it dropped the frame, None if it did not.
    pub dropped: Option<lossless_relay::DropReason>,
}

/// Step 2.
#[derive(Debug, Clone, Serialize)]
pub struct IllegalResult {
    pub cases: Vec<IllegalCase>,
    /// PE2's drop counters (egress) after the step, every reason.
    pub pe2_dropped: DropCounts,
    /// Frames PE2 sent toward the WAN during the step.
    pub sent_to_wan: usize,
    /// Frames DC1-GW received during the step.
    pub reached_dc1: usize,
}

/// A frame of the storm that reached DC1-GW.
#[derive(Debug, Clone, Serialize)]
pub struct StormArrival {
    /// Since the storm's first pause left DC2-GW.
    pub at_ns: u64,
    /// The storm priority's pause time in it (0: resume).
    pub quanta: u16,
    /// How PE2 sent it: `relayed` at once, or `flushed` (a held-back value,
    /// sent when a token came or the episode ended).
    pub cause: Cause,
}

/// Step 3.
#[derive(Debug, Clone, Serialize)]
pub struct StormResult {
    pub priority: u8,
    pub pauses: u32,
    pub interval_ns: u64,
    pub max_per_second: Option<u32>,
    pub burst: Option<u32>,
    pub episode_gap: String,
    /// Frames DC2-GW sent: the pauses and the resume.
    pub offered: u64,
    /// PE2's egress counters for the step alone.
    pub pe2: EgressCounters,
    /// Priority instances PE2's ceiling held back during the step.
    pub suppressed_instances: u64,
    /// Everything DC1-GW accepted during the step, in order.
    pub arrivals: Vec<StormArrival>,
    /// When DC2-GW sent the resume, since the first pause.
    pub resume_sent_ns: u64,
}

/// Step 4: seed 002's condition for DC2-GW's receiving port.
#[derive(Debug, Clone, Serialize)]
pub struct BufferResult {
    /// The forwarding delay measured in step 1.
    pub forwarding_delay_ns: u64,
    pub rx_rate_bps: u64,
    pub tx_rate_bps: u64,
    #[serde(flatten)]
    pub condition: GatewayBuffer,
}

/// One run of the path with one tunnel kind.
#[derive(Debug, Clone, Serialize)]
pub struct RelayRun {
    pub tunnel: &'static str,
    pub tunnel_description: &'static str,
    pub path: PathSummary,
    pub pause: PauseResult,
    pub illegal: IllegalResult,
    pub storm: StormResult,
    /// Seed 002's condition for DC2-GW's receiving port, for the measured
    /// forwarding delay (None: nothing arrived to measure).
    pub gateway_buffer: Option<BufferResult>,
    pub pe2: RelayStatus,
    pub pe1: RelayStatus,
    pub transit: TransitCounters,
    pub dc1_gateway: GatewayCounters,
    pub timeline: Vec<TimelineRow>,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Step 1's frame: DC2-GW pauses priorities 3 (65,535 quanta) and 4 (4,660).
pub fn first_pause() -> Vec<u8> {
    pfc(DC2_GW, 0x18, [0, 0, 0, 0xffff, 0x1234, 0, 0, 0])
}

/// Step 2's frames, each breaking one rule of seed 002 section 3.2.
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
    }
}

fn link_name(link: usize, toward: Toward) -> String {
    let (a, b) = (Node::ALL[link].name(), Node::ALL[link + 1].name());
    match toward {
        Toward::Dc1 => format!("{a} > {b}"),
        Toward::Dc2 => format!("{b} > {a}"),
    }
}

fn verdict_text(port: Port, v: &Verdict) -> String {
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

fn timeline(log: &[Record]) -> Vec<TimelineRow> {
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
                What::Unrouted(why) => ("drop", format!("{why:?}")),
                What::Accepted(p) => ("accept", format!("PFC {}", pfc_text(p))),
                What::Refused(r) => ("refuse", r.to_string()),
            };
            TimelineRow {
                t: r.at.since_epoch().as_secs_f64(),
                node: r.node.name().to_string(),
                kind,
                text,
            }
        })
        .collect();
    // A frame waiting for a busy link is logged when queued, at its start.
    rows.sort_by(|a, b| a.t.total_cmp(&b.t));
    rows
}

/// Runs every configured tunnel kind; returns the runs and one capture per
/// link and kind, named `<tunnel>-<link>`.
pub fn run(cfg: &WanRelayConfig) -> Result<(Vec<RelayRun>, Vec<Capture>), ConfigError> {
    let mut runs = Vec::new();
    let mut captures = Vec::new();
    for kind in &cfg.tunnels {
        let (r, c) = run_one(cfg, *kind)?;
        runs.push(r);
        captures.extend(c);
    }
    Ok((runs, captures))
}

/// One tunnel kind through the four steps.
pub fn run_one(cfg: &WanRelayConfig, kind: Kind) -> Result<(RelayRun, Vec<Capture>), ConfigError> {
    let t = tunnel(kind);
    let path_cfg = PathConfig {
        kind,
        rate_bps: cfg.rate_bps,
        dc_link_delay: cfg.dc_link_delay,
        wan_delay: cfg.wan_delay,
        storm: cfg.storm.clone(),
    };
    let mut path = Path::new(path_cfg.clone())?;

    let pause = step_pause(&mut path);
    let settle = path.now() + Duration::from_millis(1);
    path.run_until(settle);
    let illegal = step_illegal(&mut path);
    // The storm starts on a fresh episode with a full bucket: the first
    // pause's episode has ended and its token has come back.
    let gap = cfg.storm.gap()?;
    let refill = match (cfg.storm.max_per_second, cfg.storm.burst) {
        (Some(rate), burst) => Duration::from_nanos(
            u64::from(burst.unwrap_or(rate)) * 1_000_000_000 / u64::from(rate.max(1)),
        ),
        (None, _) => Duration::ZERO,
    };
    let start = path.now() + gap + refill;
    path.run_until(start);
    let storm = step_storm(&mut path, cfg);

    let gateway_buffer = pause.end_to_end_ns.map(|e2e| BufferResult {
        forwarding_delay_ns: e2e,
        rx_rate_bps: cfg.rx_rate_bps,
        tx_rate_bps: cfg.tx_rate_bps,
        condition: GatewayBuffer::evaluate(
            &Wan {
                delay: units::Duration(e2e.saturating_mul(1000)),
                rx_rate: Rate(cfg.rx_rate_bps),
                tx_rate: Rate(cfg.tx_rate_bps),
            },
            None,
        ),
    });
    let captures = path.captures(&format!("{}-", t.name));
    let links = LINKS
        .iter()
        .enumerate()
        .map(|(i, name)| LinkSummary {
            name,
            delay_ns: ns(path_cfg.link_delay(i)),
            frames: captures[i].frames.len(),
        })
        .collect();
    let run = RelayRun {
        tunnel: t.name,
        tunnel_description: t.what,
        path: PathSummary {
            rate_bps: cfg.rate_bps,
            links,
            propagation_ns: ns(path_cfg.propagation()),
        },
        pause,
        illegal,
        storm,
        gateway_buffer,
        pe2: path.pe(2).status(),
        pe1: path.pe(1).status(),
        transit: *path.transit().counters(),
        dc1_gateway: *path.gateway(1).counters(),
        timeline: timeline(path.log()),
    };
    Ok((run, captures))
}

fn step_pause(path: &mut Path) -> PauseResult {
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
                .iter()
                .find(|c| c.at == r.at && c.from == r.node.index())
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

fn step_illegal(path: &mut Path) -> IllegalResult {
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

fn step_storm(path: &mut Path, cfg: &WanRelayConfig) -> StormResult {
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
    let arrivals = accepted
        .zip(causes)
        .map(|((at, quanta), cause)| StormArrival {
            at_ns: ns(at - start),
            quanta,
            cause,
        })
        .collect();
    let after = *path.pe(2).egress_counters();
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
    }
}

fn us(ns: u64) -> String {
    let whole = ns / 1000;
    format!("{}.{:03}", grouped(whole), ns % 1000)
}

fn rate_text(bps: u64) -> String {
    if bps == 0 {
        "0".to_string()
    } else {
        format!("{}b/s", Rate(bps))
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The report for people: the path once, then per tunnel the four steps,
/// then a table across tunnels.
pub fn render(runs: &[RelayRun]) -> String {
    let mut s = String::new();
    let Some(first) = runs.first() else {
        return s;
    };
    let p = &first.path;
    let d = |i: usize| p.links.get(i).map_or(0, |l| l.delay_ns);
    let _ = writeln!(
        s,
        "\npath (seed 002 figure 2), {} links, store and forward, nodes add no delay of their own:",
        rate_text(p.rate_bps)
    );
    let _ = writeln!(
        s,
        "  DC2-GW --{} us-- PE2 ==={} us=== P ==={} us=== PE1 --{} us-- DC1-GW",
        us(d(0)),
        us(d(1)),
        us(d(2)),
        us(d(3))
    );
    s.push_str(
        "  P routes on the outer header only (IPv6/IPv4 destination, top MPLS label), decrements\n  \
         the hop limit / TTL and rewrites the outer MACs; it never looks at the PFC frame.\n",
    );
    let st = &first.storm;
    let _ = writeln!(
        s,
        "  PE2 storm ceiling: {} frames/s per priority, burst {}, episode gap {}",
        st.max_per_second
            .map_or("none".to_string(), |r| r.to_string()),
        st.burst
            .or(st.max_per_second)
            .map_or("-".to_string(), |b| b.to_string()),
        st.episode_gap
    );
    for r in runs {
        render_run(&mut s, r);
    }
    render_summary(&mut s, runs);
    s
}

fn render_run(s: &mut String, r: &RelayRun) {
    let _ = writeln!(s, "\n=== {}: {} ===", r.tunnel, r.tunnel_description);
    let pz = &r.pause;
    let times: Vec<String> = (0..8)
        .filter(|i| pz.sent.class_enable & (1 << i) != 0)
        .map(|i| format!("p{i} {}", pz.sent.quanta[i]))
        .collect();
    let _ = writeln!(
        s,
        "1. DC2-GW pauses priorities (vector {:#06x}, {} quanta), hop by hop (us since sent):",
        pz.sent.class_enable,
        times.join(", ")
    );
    for h in &pz.hops {
        let _ = writeln!(
            s,
            "   {:<14} {:>4} B  sent {:>9}, received {:>9}",
            h.link,
            h.len,
            us(h.sent_ns),
            us(h.arrived_ns)
        );
        match &h.outer {
            Some(outer) => {
                let _ = writeln!(s, "     outer  {outer}");
                let _ = writeln!(s, "     inner  {}", h.inner);
            }
            None => {
                let _ = writeln!(s, "     frame  {}", h.inner);
            }
        }
        let _ = writeln!(s, "     then   {}", h.outcome);
    }
    match (&pz.delivered, pz.end_to_end_ns) {
        (Some(d), Some(e2e)) => {
            let intact = d.class_enable == pz.sent.class_enable && d.quanta == pz.sent.quanta;
            let _ = writeln!(
                s,
                "   DC1-GW accepted it from {} (PE1's DC port; DC2-GW sent it from {}), vector and pause times {}",
                d.src,
                pz.sent.src,
                if intact { "as sent" } else { "CHANGED" }
            );
            let _ = writeln!(
                s,
                "   forwarding delay DC2-GW to DC1-GW: {} us = propagation {} us + serialization {} us on 4 links",
                us(e2e),
                us(pz.propagation_ns),
                us(pz.serialization_ns)
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "   DC1-GW did not accept it{}",
                pz.refused.map_or(String::new(), |r| format!(": {r}"))
            );
        }
    }

    let il = &r.illegal;
    let _ = writeln!(s, "2. illegal frames from DC2-GW, PE2's verdict:");
    for c in &il.cases {
        let _ = writeln!(
            s,
            "   {:<46} {:>3} B  {}",
            c.what,
            c.len,
            c.dropped
                .map_or("NOT DROPPED".to_string(), |d| format!("dropped: {d}"))
        );
    }
    let counted: Vec<String> = il
        .pe2_dropped
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(reason, n)| format!("{reason} {n}"))
        .collect();
    let _ = writeln!(
        s,
        "   PE2 drop counters: {} (other reasons 0); sent to the WAN: {}, reached DC1-GW: {}",
        counted.join(", "),
        il.sent_to_wan,
        il.reached_dc1
    );

    let st = &r.storm;
    let _ = writeln!(
        s,
        "3. storm: DC2-GW pauses priority {} every {} ms, {} times, then resumes ({} frames)",
        st.priority,
        ms(st.interval_ns),
        st.pauses,
        st.offered
    );
    let _ = writeln!(
        s,
        "   PE2: {} relayed at once, {} suppressed, {} sent later from held-back values; {} priority instances held back",
        st.pe2.relayed, st.pe2.suppressed, st.pe2.flushed, st.suppressed_instances
    );
    let arrivals: Vec<String> = st
        .arrivals
        .iter()
        .map(|a| {
            format!(
                "{}{}{}",
                ms(a.at_ns),
                if a.quanta == 0 { " resume" } else { "" },
                if a.cause == Cause::Flushed { "*" } else { "" }
            )
        })
        .collect();
    let _ = writeln!(
        s,
        "   DC1-GW received {} (ms since the first pause left DC2-GW; * = held back, sent later):",
        st.arrivals.len()
    );
    for chunk in arrivals.chunks(8) {
        let _ = writeln!(s, "     {}", chunk.join("  "));
    }
    let first = st.arrivals.first();
    let last = st.arrivals.last();
    let _ = writeln!(
        s,
        "   first pause relayed: {}; final resume relayed: {} (sent by DC2-GW at {} ms{})",
        if first.is_some_and(|a| a.quanta != 0) {
            "yes"
        } else {
            "NO"
        },
        if last.is_some_and(|a| a.quanta == 0) {
            "yes"
        } else {
            "NO"
        },
        ms(st.resume_sent_ns),
        last.filter(|a| a.quanta == 0)
            .map_or(String::new(), |a| format!(", at DC1-GW {} ms", ms(a.at_ns)))
    );

    match &r.gateway_buffer {
        Some(b) => {
            let _ = writeln!(
                s,
                "4. gateway buffer (seed 002) at DC2-GW's receiving port, per lossless priority:\n   \
                 (receive {} - send {}) x forwarding delay {} us = {} bits,\n   \
                 so reserve more than that: at least {} bytes (a lower bound: the link's own\n   \
                 delay value, seed 003, comes on top)",
                rate_text(b.rx_rate_bps),
                rate_text(b.tx_rate_bps),
                us(b.forwarding_delay_ns),
                grouped(b.condition.product_bits),
                grouped(b.condition.minimum_bytes)
            );
        }
        None => {
            let _ = writeln!(s, "4. gateway buffer: no forwarding delay was measured");
        }
    }
}

fn render_summary(s: &mut String, runs: &[RelayRun]) {
    let _ = writeln!(s, "\nsummary:");
    let header = [
        "tunnel",
        "WAN frame",
        "DC2-GW to DC1-GW",
        "accepted",
        "dropped at PE2",
        "storm: crossed/offered",
        "held back",
        "buffer at DC2-GW",
    ];
    let mut rows = vec![header.map(String::from).to_vec()];
    for r in runs {
        let wan = r.pause.hops.get(1).map_or(0, |h| h.len);
        rows.push(vec![
            r.tunnel.to_string(),
            format!("{wan} B"),
            r.pause
                .end_to_end_ns
                .map_or("-".to_string(), |e| format!("{} us", us(e))),
            if r.pause.delivered.is_some() {
                "yes"
            } else {
                "NO"
            }
            .to_string(),
            format!(
                "{}/{}",
                r.illegal
                    .cases
                    .iter()
                    .filter(|c| c.dropped.is_some())
                    .count(),
                r.illegal.cases.len()
            ),
            format!("{}/{}", r.storm.arrivals.len(), r.storm.offered),
            r.storm.suppressed_instances.to_string(),
            r.gateway_buffer.as_ref().map_or("-".to_string(), |b| {
                format!("{} B", grouped(b.condition.minimum_bytes))
            }),
        ]);
    }
    let mut widths = vec![0usize; header.len()];
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.len());
        }
    }
    for row in &rows {
        let mut line = String::from(" ");
        for (c, w) in row.iter().zip(&widths) {
            let _ = write!(line, " {c:<w$}");
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}

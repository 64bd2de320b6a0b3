//! The `wan-relay` scenario: draft-he-rtgwg-wan-pfc-00's two-DC path, on the lab's simulator,
//! run through four steps per tunnel kind, each reported from what the
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
//! 4. draft-he-rtgwg-wan-pfc-00's buffer condition at DC2-GW for the forwarding delay
//!    measured in step 1 ([`lossless_relay::buffer`], by
//!    [`lossless_headroom::wan`]).
//!
//! - `path`: the path on the simulator; `steps`: the four steps and what
//!   they read from the path's log; `render`: the report for people.

mod path;
mod render;
mod steps;

use lossless_dcbx::Duration;
use lossless_headroom::units::{self, Rate};
use lossless_headroom::wan::Wan;
use lossless_relay::buffer::GatewayBuffer;
use lossless_relay::example::Kind;
use lossless_relay::{
    ConfigError, DropCounts, EgressCounters, GatewayCounters, RelayStatus, StormConfig,
};
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::pcap::Capture;
use crate::timeline::TimelineRow;
use crate::transit::TransitCounters;
use steps::{step_illegal, step_pause, step_storm, timeline};

pub use crate::sim::Cause;
pub use path::{
    gateway_config, pe_config, transit, Node, Path, PathConfig, Record, Toward, What, LINKS,
    P_TOWARD_PE1, P_TOWARD_PE2,
};
pub use render::render;
pub use steps::{first_pause, illegal_frames};

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
    /// draft-he-rtgwg-wan-pfc-00's rates at DC2-GW for the buffer condition: the paused
    /// priority's average receive rate at its port (default the line rate)
    /// and send rate (default 0, the worst case).
    pub rx_rate_bps: u64,
    pub tx_rate_bps: u64,
}

impl Default for WanRelayConfig {
    /// 100 Gb/s links, 100 m (0.5 us) from each gateway to its PE, 1 ms
    /// across the WAN (about 200 km of fibre at 5 us/km), a ceiling of 100
    /// resumes per second per priority with a burst of 5, and a storm of
    /// 2,500 pauses of 65,535 quanta (335.5 us at 100 Gb/s) 20 us apart:
    /// 50 ms of a gateway refreshing its pause as fast as a congested
    /// switch does.
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
                ..StormConfig::default()
            },
            storm_priority: 3,
            storm_pauses: 2_500,
            storm_interval: Duration::from_micros(20),
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
    /// DC1-GW's own pause timer for the storm priority, from what it
    /// accepted (each pause reloads it for its quanta at the link rate):
    /// the spans, between the first arrival and the resume's, when it was
    /// not paused. Empty: paused without a gap through the storm.
    pub far_gaps: Vec<(u64, u64)>,
    /// How long DC1-GW was paused, first arrival to the resume's.
    pub far_paused_ns: u64,
}

/// Step 4: draft-he-rtgwg-wan-pfc-00's condition for DC2-GW's receiving port.
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
    /// draft-he-rtgwg-wan-pfc-00's condition for DC2-GW's receiving port, for the measured
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

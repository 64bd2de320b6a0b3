//! Adaptive headroom on simulated links: each link is a pair of agents that advertise
//! the measurement capability in DCBX, with a path delay per direction equal to the
//! cable's propagation delay plus the interface delay of the speed's profile. The
//! sessions timestamp with the virtual clock, so what they measure is exactly what was
//! injected, and the sizing that follows is what losslessd would apply on such a link.

use lossless_dcbx::{Duration, PortConfig};
use lossless_headroom::dv::Inputs;
use lossless_headroom::medium::Medium;
use lossless_headroom::phy;
use lossless_headroom::report::{calc, CalcError, Request};
use lossless_headroom::session::Measurement;
use lossless_headroom::sizing::{need, Need, SizingConfig};
use lossless_headroom::units::{self, Length, Rate};
use lossless_node::config::HeadroomSettings;
use lossless_wire::MacAddr;
use serde::Serialize;

use crate::sim::{NodeId, PathProps, Sim};

/// One simulated link.
#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub label: String,
    pub speed: Rate,
    pub cable: Length,
    pub medium: Medium,
}

/// What a link's measurement and sizing came to.
#[derive(Debug, Clone, Serialize)]
pub struct LinkOutcome {
    pub label: String,
    pub speed_bps: u64,
    pub cable_m: f64,
    pub medium: &'static str,
    /// The path delay put on each direction: cable plus the interface delay (ns).
    pub injected_one_way_ns: u64,
    /// The switch end's result (None: no round completed).
    pub measured: Option<Measurement>,
    /// Adaptive PFC Headroom's phase 3 on that result.
    pub adaptive: Option<Need>,
    /// The PFC Delay Value Constraint Model for the same link, every term from its defaults.
    pub model_dv_bit_times: u64,
    pub model_headroom_bytes: u64,
}

/// Errors building the links (a speed or length the model refuses).
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("{label}: {source}")]
    Model {
        label: String,
        #[source]
        source: CalcError,
    },
    #[error("{label}: no interface-delay profile for {speed} bit/s")]
    NoProfile { label: String, speed: u64 },
}

/// One-way delay of a link in whole nanoseconds (the simulator's resolution):
/// propagation on the cable plus one station's interface delay at the line rate (a
/// frame crosses the sender's transmit and the receiver's receive path, which
/// together are one station's figure).
pub fn one_way_ns(spec: &LinkSpec) -> Result<u64, LinkError> {
    let profile = phy::profile(spec.speed).ok_or_else(|| LinkError::NoProfile {
        label: spec.label.clone(),
        speed: spec.speed.0,
    })?;
    let ps_per_bit = |bits: u64| (bits as u128 * 1_000_000_000_000) / spec.speed.0.max(1) as u128;
    let cable = ps_per_bit(spec.medium.cable_bits(spec.cable, spec.speed));
    let interface = ps_per_bit(profile.interface_delay);
    Ok(((cable + interface) / 1000) as u64)
}

/// The agents of one link: both advertise the capability; the switch is not willing.
fn link_configs(i: usize) -> (PortConfig, PortConfig) {
    let mut sw = crate::agents::switch_config();
    sw.mac = MacAddr([0x02, 0, 0, 0, i as u8 + 1, 0x0a]);
    sw.dcbx.headroom_measurement = true;
    let mut host = crate::agents::host_config();
    host.mac = MacAddr([0x02, 0, 0, 0, i as u8 + 1, 0x0b]);
    host.dcbx.headroom_measurement = true;
    (sw, host)
}

/// Builds every link in `sim` and runs until each switch end has a result (or a minute
/// of virtual time passed). Returns the switch node of each link.
pub fn run_links(sim: &mut Sim, specs: &[LinkSpec]) -> Result<Vec<NodeId>, LinkError> {
    let switches = build_links(sim, specs)?;
    run_until_measured(sim, &switches);
    Ok(switches)
}

/// Builds every link in `sim` and brings it up; returns the switch node of each.
pub fn build_links(sim: &mut Sim, specs: &[LinkSpec]) -> Result<Vec<NodeId>, LinkError> {
    let mut switches = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let delay = Duration::from_nanos(one_way_ns(spec)?);
        let (sw, host) = link_configs(i);
        let a = sim
            .add_agent(&format!("{}/sw", spec.label), sw)
            .expect("valid switch config");
        let b = sim
            .add_agent(&format!("{}/host", spec.label), host)
            .expect("valid host config");
        let settings = HeadroomSettings {
            speed: Some(spec.speed.0),
            ..HeadroomSettings::default()
        };
        for n in [a, b] {
            sim.set_headroom(n, settings)
                .expect("default headroom settings are valid");
        }
        let seg = sim.connect(a, b);
        sim.set_link_props(a, b, PathProps { delay, loss: 0.0 });
        sim.set_link(seg, true);
        switches.push(a);
    }
    Ok(switches)
}

/// Runs until every one of `switches` has a result, or a minute of virtual time passed.
pub fn run_until_measured(sim: &mut Sim, switches: &[NodeId]) {
    let limit = sim.now() + Duration::from_secs(60);
    sim.run_until_true(limit, |s| {
        switches
            .iter()
            .all(|n| s.measurement(*n).is_some_and(|m| m.last().is_some()))
    });
}

/// Measures and sizes each link; `sizing` turns a measurement into headroom.
pub fn outcomes(
    sim: &Sim,
    specs: &[LinkSpec],
    switches: &[NodeId],
    sizing: &SizingConfig,
) -> Result<Vec<LinkOutcome>, LinkError> {
    specs
        .iter()
        .zip(switches)
        .map(|(spec, node)| {
            let measured = sim.measurement(*node).and_then(|m| m.last().copied());
            let adaptive = measured.map(|m| need(sizing, m.round_trip, spec.speed));
            let mut req = Request::new(Inputs::new(spec.speed, spec.cable, spec.medium));
            req.alpha = sizing.alpha;
            req.cell = sizing.cell;
            let model = calc(&req).map_err(|source| LinkError::Model {
                label: spec.label.clone(),
                source,
            })?;
            Ok(LinkOutcome {
                label: spec.label.clone(),
                speed_bps: spec.speed.0,
                cable_m: spec.cable.0 as f64 / 1e6,
                medium: spec.medium.name,
                injected_one_way_ns: one_way_ns(spec)?,
                measured,
                adaptive,
                model_dv_bit_times: model.dv_bit_times,
                model_headroom_bytes: model.headroom.bytes,
            })
        })
        .collect()
}

/// Measures `specs` on a fresh simulator: the one-call form for `headroom compare`.
pub fn measure(specs: &[LinkSpec], sizing: &SizingConfig) -> Result<Vec<LinkOutcome>, LinkError> {
    let mut sim = Sim::new(1).without_log();
    let switches = run_links(&mut sim, specs)?;
    outcomes(&sim, specs, &switches, sizing)
}

/// The round trip a link's measurement should find: twice the injected one-way delay.
pub fn expected_round_trip(o: &LinkOutcome) -> units::Duration {
    units::Duration(o.injected_one_way_ns * 2 * 1000)
}

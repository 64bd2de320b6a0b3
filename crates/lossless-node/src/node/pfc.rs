//! PFC counters and the storm watchdog on the node's ports: readings asked for every
//! interval, their answers fed to the port's watchdog, its transitions published and
//! its action carried out (PFC off on a stormed priority, back when it is over, through
//! the same programming as the negotiated PFC, so the delay allowance and the
//! negotiated priorities come back exactly).

use tracing::{info, warn};

use super::{measure, program, Node, Now, Output, PortId};
use crate::config::WatchdogAction;
use crate::hardware::{HardwareError, HardwareErrorKind};
use crate::pfc::{ms, PfcEvent, PfcSample, PfcSource, Transition};
use crate::port::Port;
use crate::protocol::{EventBody, Hardware};

impl Node {
    /// A port's reading is due: ask for it.
    pub(super) fn pfc_due(&mut self, now: Now, id: PortId) {
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        if !port.pfc.due(now.mono) {
            return;
        }
        let ifindex = port.ifindex;
        // The host's counts stand in for a driver without any: read here, no request.
        match port.pfc.host_reading(now.mono) {
            Some(sample) => self.handle_pfc_counters(now, ifindex, Ok(sample)),
            None => self.outputs.push_back(Output::ReadPfc {
                ifindex,
                name: port.name.clone(),
            }),
        }
    }

    /// The answer to [`Output::ReadPfc`]: the port's PFC counters as the driver
    /// reported them just now, or why they could not be read.
    pub fn handle_pfc_counters(
        &mut self,
        now: Now,
        ifindex: u32,
        result: Result<PfcSample, HardwareError>,
    ) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        let c = &port.pfc.counters;
        let first = c.samples == 0 && c.failures == 0;
        let was = c.available();
        let was_source = c.source.filter(|_| was);
        let before = port.pfc.forced_off();
        // A driver without counters: with the watchdog on, the PFC frames the host
        // received stand in ([`crate::pfc::host`]).
        let result = match result {
            Ok(s) if s.source == PfcSource::Host => Ok(s),
            Ok(s) if !s.is_empty() => {
                port.pfc.stand_down();
                Ok(s)
            }
            Ok(s) => match port
                .pfc
                .stand_in(now.mono, "the driver reported no PFC counter".to_string())
            {
                Some(host) => Ok(host),
                None => Ok(s),
            },
            Err(e) if e.kind == HardwareErrorKind::NotSupported => {
                match port.pfc.stand_in(now.mono, e.to_string()) {
                    Some(host) => Ok(host),
                    None => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        let (transitions, discontinuities) = match &result {
            Ok(sample) => port.pfc.handle_sample(now.mono, sample),
            Err(e) => {
                let later = e.kind == HardwareErrorKind::NotSupported;
                port.pfc.handle_failure(now.mono, e.to_string(), later);
                (Vec::new(), Vec::new())
            }
        };
        let available = port.pfc.counters.available();
        let source = port.pfc.counters.source.filter(|_| available);
        if first || was != available || was_source != source {
            let body = PfcEvent::PfcCounters {
                available,
                source: port.pfc.counters.source.filter(|_| available),
                reason: port.pfc.counters.unavailable.clone().or_else(|| {
                    let h = port.pfc.host_source()?;
                    h.standing_in.as_ref().map(|(_, why)| why.clone())
                }),
            };
            if !available {
                info!(port = %name, reason = ?port.pfc.counters.unavailable, "PFC counters unavailable");
            } else if let Some(h) = port.pfc.host_source() {
                let why = h.standing_in.as_ref().map(|(_, why)| why.as_str());
                info!(port = %name, driver = ?why, "the driver has no PFC counters: the \
                    watchdog counts the PFC frames the host receives (pauses received only; \
                    not those this NIC sends, nor any a NIC handling PFC in hardware keeps \
                    from the host)");
            }
            self.publish(now, &name, EventBody::Pfc(body));
        }
        for ev in discontinuities {
            warn!(port = %name, event = ?ev, "PFC counter discontinuity: evidence starts again");
            self.publish(now, &name, EventBody::Pfc(ev));
        }
        self.pfc_transitions(now, id, before, transitions);
    }

    /// Settings may have changed (reload, a runtime PFC change): the watchdog follows.
    pub(super) fn sync_pfc(&mut self, now: Now, id: PortId) {
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        port.pfc.can_forward = matches!(port.hardware, Hardware::Dcbnl { .. });
        let before = port.pfc.forced_off();
        let s = port.settings.pfc_watchdog;
        // Unless the section names them: the priorities configured for PFC and those
        // PFC runs on as negotiated (a willing host configures none).
        let prios = lossless_wire::cee::PriorityMap(
            port.settings.dcbx.pfc.cfg.priorities.0 | port.agent.applied_pfc().0,
        );
        let t = port.pfc.set_settings(now.mono, &s, prios);
        if !t.is_empty() {
            self.pfc_transitions(now, id, before, t);
        }
    }

    /// Publishes the watchdog's transitions and, when the priorities it turns off
    /// changed, programs the NIC.
    fn pfc_transitions(
        &mut self,
        now: Now,
        id: PortId,
        before: lossless_wire::cee::PriorityMap,
        transitions: Vec<Transition>,
    ) {
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        let after = port.pfc.forced_off();
        let programs = matches!(port.hardware, Hardware::Dcbnl { .. });
        let applied = port.agent.applied_pfc();
        let mut events = Vec::new();
        for t in transitions {
            events.push(event(port, t, before, after, programs, applied));
        }
        let reprogram = before != after && programs;
        let outs = if reprogram {
            reprogram_pfc(port)
        } else {
            Vec::new()
        };
        for ev in events {
            match &ev {
                PfcEvent::PfcStorm { .. } => warn!(port = %name, event = ?ev, "PFC storm"),
                _ => info!(port = %name, event = ?ev, "PFC storm over"),
            }
            self.publish(now, &name, EventBody::Pfc(ev));
        }
        self.outputs.extend(outs);
    }
}

/// The event for a transition, with what the action did.
fn event(
    port: &Port,
    t: Transition,
    before: lossless_wire::cee::PriorityMap,
    after: lossless_wire::cee::PriorityMap,
    programs: bool,
    applied: lossless_wire::cee::PriorityMap,
) -> PfcEvent {
    let s = &port.pfc.settings;
    match t {
        Transition::Storm {
            priority,
            direction,
            window,
            readings,
            frames,
        } => {
            let forward = port.pfc.action() == WatchdogAction::Forward;
            let pfc_off = forward && programs && applied.contains(priority);
            let note = match (forward, programs, applied.contains(priority)) {
                (false, _, _) | (true, true, true) => None,
                (true, false, _) => Some(format!(
                    "forward needs apply = \"dcbnl\" and a NIC that answers it (port: {}): alert only",
                    hardware_word(&port.hardware)
                )),
                (true, true, false) => {
                    Some("PFC is not on for this priority: nothing to turn off".to_string())
                }
            };
            PfcEvent::PfcStorm {
                priority,
                direction,
                window_ms: ms(window),
                readings,
                frames,
                detection_ms: s.detection_ms,
                action: port.pfc.action(),
                pfc_off,
                note,
            }
        }
        Transition::Over {
            priority,
            direction,
            stormed,
            quiet,
            rx_frames,
            tx_frames,
            reason,
        } => PfcEvent::PfcStormOver {
            priority,
            direction,
            stormed_ms: ms(stormed),
            quiet_ms: ms(quiet),
            rx_frames,
            tx_frames,
            reason: reason.into(),
            pfc_restored: programs
                && before.contains(priority)
                && !after.contains(priority)
                && applied.contains(priority),
        },
    }
}

fn hardware_word(h: &Hardware) -> &'static str {
    match h {
        Hardware::ReportOnly => "apply = \"none\"",
        Hardware::Probing => "dcbnl probe not answered yet",
        Hardware::Dcbnl { .. } => "dcbnl",
        Hardware::Unsupported { .. } => "no dcbnl",
    }
}

/// The programming that brings the NIC's PFC to the negotiated priorities less those
/// the watchdog turns off: the running DCBX version's, and the headroom's (which writes
/// PFC with its delay allowance).
fn reprogram_pfc(port: &mut Port) -> Vec<Output> {
    let mut out = Vec::new();
    match port.agent.running() {
        lossless_dcbx::Version::Cee => out.push(program::program_cee(port)),
        lossless_dcbx::Version::Ieee => out.extend(program::program_ieee(port)),
    }
    if let Some(o) = measure::apply_headroom(port) {
        out.push(o);
    }
    out
}

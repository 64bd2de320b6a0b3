//! What the NIC of a port with `apply = "dcbnl"` is told, after the agent decided
//! something: the DCBX version (SDCBX), then the running version's operational
//! configuration: CEE's PFC and PG, or IEEE 802.1Qaz's ETS, PFC and APP entries.
//!
//! APP entries: the node remembers which entries it installed and changes only those,
//! adding what the operational table gained and deleting, one by one, what it lost;
//! entries another tool set stay (lldpad's blanket resets are a known complaint). A
//! port that leaves IEEE withdraws its entries.

use lossless_dcbx::{Event, FeatureId, Instant, Version};
use lossless_wire::ieee::{AppPriority, Selector};
use tracing::warn;

use super::{Node, Now, Output};
use crate::hardware::{EtsProgram, HardwareError, IeeeOutcome, IeeeProgram, Trust, TrustOutcome};
use crate::nic::{Meant, Part};
use crate::port::Port;
use crate::protocol::{DaemonEvent, EventBody, Hardware};

use crate::port::PROGRAM_SETTLE;

/// The negotiation has settled enough to program the NIC: the link is up, and a
/// DCBX peer is in view, or DCBX does not run (static mode, DCBX off), or the link
/// has been up for [`PROGRAM_SETTLE`].
fn settled(port: &Port, now: Instant) -> bool {
    let a = &port.agent;
    a.link_up()
        && (a.peer_present()
            || !a.dcbx_active()
            || port.link_up_at.is_some_and(|t| now >= t + PROGRAM_SETTLE))
}

/// The outputs that bring a port's NIC to what the agent runs now. `events`: what the
/// agent just reported; `force`: program whatever the events say (after a probe).
/// Nothing is programmed while the link is down (the NIC keeps what it holds, and what
/// runs on a down link is not what the link will run); an IEEE programming waits for
/// the negotiation to settle after a link-up ([`PROGRAM_SETTLE`]), then goes once.
pub(super) fn outputs(port: &mut Port, now: Instant, events: &[Event], force: bool) -> Vec<Output> {
    if !matches!(port.hardware, Hardware::Dcbnl { .. }) {
        return Vec::new();
    }
    if !port.agent.link_up() {
        port.ieee_hw.held |= force;
        return Vec::new();
    }
    let mut out = Vec::new();
    let running = port.agent.running();
    // A refused mode is not asked again (every frame would): until a new probe.
    let refused = port.ieee_hw.nic.refusal(&Part::DcbxMode).is_some();
    let hold = port.nic_hold();
    if !port.damping.may_program(now, hold) {
        // No credit left: whatever this input asks waits for the next, coalesced with
        // what the inputs until then ask (the latest configuration goes).
        let mode = port.ieee_hw.dcbx_mode != Some(running) && !refused;
        let withdraw = running == Version::Cee && !port.ieee_hw.apps.is_empty();
        let oper = events
            .iter()
            .any(|e| matches!(e, Event::OperChanged { .. } | Event::ModeChanged { .. }));
        if force || oper || mode || withdraw || port.ieee_hw.held {
            port.damping.wait_nic();
        }
        return out;
    }
    let waited = port.damping.take_nic_waiting();
    let force = force || waited;
    if port.ieee_hw.dcbx_mode != Some(running) && !refused {
        out.push(Output::SetDcbxMode {
            ifindex: port.ifindex,
            name: port.name.clone(),
            version: running,
        });
    }
    let mode_changed = events
        .iter()
        .any(|e| matches!(e, Event::ModeChanged { .. }));
    let changed = |cee: bool| {
        events.iter().any(|e| match e {
            Event::OperChanged { feature, .. } if cee => *feature != FeatureId::App,
            Event::OperChanged { .. } => true,
            _ => false,
        })
    };
    match running {
        Version::Cee => {
            if force || mode_changed || changed(true) || port.ieee_hw.held {
                port.ieee_hw.held = false;
                out.push(program_cee(port));
            }
            // Entries installed while IEEE ran are withdrawn.
            if !port.ieee_hw.apps.is_empty() && port.ieee_hw.pending.is_none() {
                out.extend(program_ieee(port));
            }
        }
        Version::Ieee => {
            let wanted = force || mode_changed || changed(false) || port.ieee_hw.held;
            if wanted && !settled(port, now) {
                port.ieee_hw.held = true;
            } else if wanted {
                port.ieee_hw.held = false;
                out.extend(program_ieee(port));
            }
        }
    }
    // The DCBX mode alone spends no credit (`auto` changes it once per 5 s at most).
    let programs = out
        .iter()
        .any(|o| matches!(o, Output::ProgramCee { .. } | Output::ProgramIeee { .. }));
    if programs {
        port.damping.programmed(now, hold);
    }
    out
}

/// The CEE programming for a port's operational configuration.
pub(super) fn program_cee(port: &mut Port) -> Output {
    let s = port.agent.status();
    // What this programming means the NIC to hold, once it answers.
    port.ieee_hw.cee_sent = Some((
        s.pfc.applied.map_or(0, |p| p.priorities.0),
        s.pg.applied.map(|g| (g.pgid, g.percent)),
    ));
    Output::ProgramCee {
        ifindex: port.ifindex,
        name: port.name.clone(),
        pfc: s.pfc.applied,
        pg: s.pg.applied,
    }
}

/// The IEEE programming that brings the NIC to what runs now: the operational ETS and
/// PFC, and the APP entries' change since the last accepted program. None while a
/// program waits for its answer (the answer looks again), or when a port that left
/// IEEE has nothing to withdraw.
pub(super) fn program_ieee(port: &mut Port) -> Option<Output> {
    if port.ieee_hw.pending.is_some() {
        return None;
    }
    let program = desired(port)?;
    if port.ieee_hw.nic.holds(&program) {
        return None;
    }
    Some(issue(port, program))
}

fn issue(port: &mut Port, program: IeeeProgram) -> Output {
    port.ieee_hw.pending = Some(program.clone());
    Output::ProgramIeee {
        ifindex: port.ifindex,
        name: port.name.clone(),
        program: Box::new(program),
    }
}

/// What to program now, as [`program_ieee`] says.
fn desired(port: &Port) -> Option<IeeeProgram> {
    let a = &port.agent;
    let d = &a.config().dcbx;
    let m = a.ieee();
    let ieee = a.running() == Version::Ieee;
    let ets = (ieee && m.ets.oper_mode).then(|| EtsProgram {
        willing: d.ieee.ets.willing,
        cbs: d.ieee.ets.cfg.cbs,
        max_tcs: d.ieee.ets.cfg.max_tcs,
        table: m.ets.oper,
        recommendation: d
            .ieee
            .ets
            .cfg
            .recommends(d.ieee.ets.willing)
            .then_some(d.ieee.ets.cfg.table),
    });
    let want: Vec<AppPriority> = if ieee && m.app.oper_mode {
        m.app.oper.to_vec()
    } else {
        Vec::new()
    };
    let have = &port.ieee_hw.apps;
    let nic = &port.ieee_hw.nic;
    // What the driver refused is not sent again until what is wanted changes (a
    // refusal is the driver's final word on that value; asking again at every answer
    // would be a loop, and on ice every accepted change is a link flap).
    let app_add: Vec<AppPriority> = want
        .iter()
        .filter(|e| !have.contains(e) && nic.refusal(&Part::App(**e)).is_none())
        .copied()
        .collect();
    let app_del: Vec<AppPriority> = have
        .iter()
        .filter(|e| !want.contains(e) && nic.refusal(&Part::Withdrawal(**e)).is_none())
        .copied()
        .collect();
    let dscp = want
        .iter()
        .any(|e| e.selector == Selector::DSCP && nic.refusal(&Part::App(*e)).is_none());
    let trust_refused = nic.refusal(&Part::Trust).is_some();
    let trust = match (dscp, port.ieee_hw.trust) {
        _ if trust_refused => None,
        (true, None | Some(Trust::Pcp)) if port.ieee_hw.trust_supported != Some(false) => {
            Some(Trust::DscpThenPcp)
        }
        // Back to PCP only if we were the ones who set DSCP trust.
        (false, Some(Trust::DscpThenPcp)) => Some(Trust::Pcp),
        _ => None,
    };
    let program = IeeeProgram {
        ets,
        pfc_enabled: a.applied_pfc().0 & !port.pfc.forced_off().0,
        app_add,
        app_del,
        trust,
    };
    (ieee || !program.app_del.is_empty()).then_some(program)
}

impl Node {
    /// The answer to [`Output::ProgramIeee`]: each part the driver took is the NIC's
    /// from now on (the APP entries ours to withdraw later), each part it refused is
    /// kept with its answer (a health problem, not sent again until what is wanted
    /// changes), and the read-back taken right after is the baseline drift is judged
    /// against.
    pub fn handle_ieee_programmed(&mut self, now: Now, ifindex: u32, outcome: IeeeOutcome) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        let Some(program) = port.ieee_hw.pending.take() else {
            return;
        };
        let running_cee = port.agent.running() == Version::Cee;
        let hw = &mut port.ieee_hw;
        if let Some(r) = &outcome.ets {
            hw.nic.answer(Part::Ets, r);
        }
        hw.nic.answer(Part::Pfc, &outcome.pfc);
        for (e, r) in &outcome.apps_added {
            hw.nic.answer(Part::App(*e), r);
            if r.is_ok() && !hw.apps.contains(e) {
                hw.apps.push(*e);
            }
        }
        for (e, r) in &outcome.apps_deleted {
            hw.nic.answer(Part::Withdrawal(*e), r);
            if r.is_ok() {
                hw.apps.retain(|a| a != e);
            }
        }
        match &outcome.trust {
            Ok(TrustOutcome::Set) => {
                hw.trust = program.trust;
                hw.trust_supported = Some(true);
                hw.nic.answer(Part::Trust, &Ok(()));
            }
            Ok(TrustOutcome::Unsupported) => hw.trust_supported = Some(false),
            Ok(TrustOutcome::Untouched) => {}
            Err(e) => hw.nic.answer(Part::Trust, &Err(e.clone())),
        }
        let previous = hw.nic.meant.take().map(|m| *m).unwrap_or_default();
        if running_cee {
            // A withdrawal while CEE runs: what CEE meant stays, our entries changed;
            // the IEEE objects read now are no baseline for CEE's.
            hw.nic.meant = Some(Box::new(Meant {
                apps: hw.apps.clone(),
                ..previous
            }));
        } else {
            hw.nic.meant = Some(Box::new(Meant {
                ets: match (&outcome.ets, program.ets) {
                    (Some(Ok(())), Some(e)) => Some(e.table),
                    (None, _) => None,
                    _ => previous.ets,
                },
                pfc: if outcome.pfc.is_ok() {
                    Some(program.pfc_enabled)
                } else {
                    previous.pfc
                },
                apps: hw.apps.clone(),
                trust: hw.trust,
                ets_program: match &outcome.ets {
                    Some(Ok(())) => program.ets,
                    _ => previous.ets_program,
                },
                // IEEE runs now: CEE's objects are not compared.
                cee_pfc: None,
                cee_pg: None,
            }));
            match outcome.nic.clone() {
                Some(Ok(state)) => {
                    hw.nic.baseline = Some(Box::new(state.clone()));
                    hw.nic.state = Some(Box::new(state));
                    hw.nic.read_at = Some(now.mono);
                    hw.nic.read_error = None;
                }
                Some(Err(e)) => hw.nic.read_error = Some(e.to_string()),
                None => {}
            }
        }
        hw.nic.next_read = Some(now.mono + crate::nic::READ_INTERVAL);
        // Every refusal is counted and published; the programming failed (`dcbnl
        // failed` in status) only for those that leave traffic unclassified: a UDP
        // entry a DSCP-only driver refuses, beside a DSCP entry to the same priority,
        // is no failure of the port (see `health::covered`).
        let refusals: Vec<HardwareError> = outcome.refusals().cloned().collect();
        for e in &refusals {
            port.hw_errors.count(e.kind);
        }
        for e in &refusals {
            warn!(port = %name, error = %e, "the driver refused a part of the programming");
            let ev = DaemonEvent::HardwareError {
                error: e.to_string(),
                kind: Some(e.kind),
            };
            self.publish(now, &name, EventBody::Daemon(ev));
        }
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let hw = &port.ieee_hw;
        let uncovered: Vec<&crate::nic::Refusal> = hw
            .nic
            .refused
            .iter()
            .filter(|r| !crate::health::covered(&hw.nic, r))
            .collect();
        let result = match uncovered.first() {
            None => Ok(()),
            Some(first) => {
                let words: Vec<String> = uncovered.iter().map(ToString::to_string).collect();
                let mut e = HardwareError::new(first.error.kind, words.join("; "));
                e.code = first.error.code.clone();
                Err(e)
            }
        };
        if let Hardware::Dcbnl { error, applied } = &mut port.hardware {
            match &result {
                Ok(()) => {
                    *error = None;
                    *applied += 1;
                }
                Err(e) => *error = Some(Box::new(e.clone())),
            }
        }
        if refusals.is_empty() {
            self.publish(now, &name, EventBody::Daemon(DaemonEvent::HardwareApplied));
        }
        // What changed while the program was out goes now; nothing when the NIC runs
        // what runs (each answer would otherwise ask again). Refused parts are left
        // out of what is wanted, so a refusing driver is not asked again in a loop.
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        if let Some(next) = desired(port) {
            let same = next.ets == program.ets
                && next.pfc_enabled == program.pfc_enabled
                && next.app_add.is_empty()
                && next.app_del.is_empty()
                && next.trust.is_none();
            if !same && port.damping.may_program(now.mono, port.nic_hold()) {
                let out = issue(port, next);
                port.damping.programmed(now.mono, port.nic_hold());
                self.outputs.push_back(out);
            } else if !same {
                // No credit left: the latest configuration goes with the next.
                port.damping.wait_nic();
            }
        }
    }

    /// The answer to [`Output::SetDcbxMode`].
    pub fn handle_dcbx_mode_set(
        &mut self,
        now: Now,
        ifindex: u32,
        version: Version,
        result: Result<(), HardwareError>,
    ) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        port.ieee_hw.nic.answer(Part::DcbxMode, &result);
        match result {
            Ok(()) => port.ieee_hw.dcbx_mode = Some(version),
            Err(error) => {
                port.hw_errors.count(error.kind);
                warn!(port = %name, %error, "setting the NIC's DCBX mode failed");
                let ev = DaemonEvent::HardwareError {
                    error: error.to_string(),
                    kind: Some(error.kind),
                };
                self.publish(now, &name, EventBody::Daemon(ev));
            }
        }
    }
}

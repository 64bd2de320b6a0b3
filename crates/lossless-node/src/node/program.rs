//! What the NIC of a port with `apply = "dcbnl"` is told, after the agent decided
//! something: the DCBX version (SDCBX), then the running version's operational
//! configuration: CEE's PFC and PG, or IEEE 802.1Qaz's ETS, PFC and APP entries.
//!
//! APP entries: the node remembers which entries it installed and changes only those,
//! adding what the operational table gained and deleting, one by one, what it lost;
//! entries another tool set stay (lldpad's blanket resets are a known complaint). A
//! port that leaves IEEE withdraws its entries.

use lossless_dcbx::{Event, FeatureId, Version};
use lossless_wire::ieee::{AppPriority, Selector};
use tracing::warn;

use super::{Node, Now, Output};
use crate::hardware::{EtsProgram, HardwareError, IeeeProgram, Trust, TrustOutcome};
use crate::port::Port;
use crate::protocol::{DaemonEvent, EventBody, Hardware};

/// The outputs that bring a port's NIC to what the agent runs now. `events`: what the
/// agent just reported; `force`: program whatever the events say (after a probe).
pub(super) fn outputs(port: &mut Port, events: &[Event], force: bool) -> Vec<Output> {
    if !matches!(port.hardware, Hardware::Dcbnl { .. }) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let running = port.agent.running();
    if port.ieee_hw.dcbx_mode != Some(running) {
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
            if force || mode_changed || changed(true) {
                out.push(program_cee(port));
            }
            // Entries installed while IEEE ran are withdrawn.
            if !port.ieee_hw.apps.is_empty() && port.ieee_hw.pending.is_none() {
                out.extend(program_ieee(port));
            }
        }
        Version::Ieee => {
            if force || mode_changed || changed(false) {
                out.extend(program_ieee(port));
            }
        }
    }
    out
}

/// The CEE programming for a port's operational configuration.
pub(super) fn program_cee(port: &Port) -> Output {
    let s = port.agent.status();
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
    let app_add: Vec<AppPriority> = want.iter().filter(|e| !have.contains(e)).copied().collect();
    let app_del: Vec<AppPriority> = have.iter().filter(|e| !want.contains(e)).copied().collect();
    let dscp = want.iter().any(|e| e.selector == Selector::DSCP);
    let trust = match (dscp, port.ieee_hw.trust) {
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
    /// The answer to [`Output::ProgramIeee`]: the APP entries are ours from now on when
    /// it went through; a failure is reported and the next change tries again.
    pub fn handle_ieee_programmed(
        &mut self,
        now: Now,
        ifindex: u32,
        result: Result<TrustOutcome, HardwareError>,
    ) {
        let Some(name) = self.name_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
        let Some(program) = port.ieee_hw.pending.take() else {
            return;
        };
        if let Ok(trust) = &result {
            let hw = &mut port.ieee_hw;
            hw.apps.retain(|e| !program.app_del.contains(e));
            for e in &program.app_add {
                if !hw.apps.contains(e) {
                    hw.apps.push(*e);
                }
            }
            match trust {
                TrustOutcome::Set => {
                    hw.trust = program.trust;
                    hw.trust_supported = Some(true);
                }
                TrustOutcome::Unsupported => hw.trust_supported = Some(false),
                TrustOutcome::Untouched => {}
            }
        }
        let ok = result.is_ok();
        self.record_programmed(now, &name, result.map(|_| ()));
        // What changed while the program was out goes now; nothing when the NIC runs
        // what runs (each answer would otherwise ask again), nor after a failure (the
        // next change tries again, rather than a loop against a refusing driver).
        let Some(port) = self.ports.get_mut(&name).filter(|_| ok) else {
            return;
        };
        if let Some(next) = desired(port) {
            let same = next.ets == program.ets
                && next.pfc_enabled == program.pfc_enabled
                && next.app_add.is_empty()
                && next.app_del.is_empty()
                && next.trust.is_none();
            if !same {
                let out = issue(port, next);
                self.outputs.push_back(out);
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
        let Some(name) = self.name_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
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

//! The NIC's answers: whether it speaks dcbnl, and how programming the negotiated
//! configuration went.

use tracing::{info, warn};

use super::measure::apply_headroom;
use super::{program, Node, Now, PortId};
use crate::hardware::{HardwareError, HardwareErrorKind};
use crate::protocol::{DaemonEvent, EventBody, Hardware};

impl Node {
    /// The answer to an [`Output::Probe`](super::Output::Probe): Ok(()) when the NIC
    /// speaks dcbnl. The operational configuration, and a headroom sized while the probe
    /// was out, are programmed at once.
    pub fn handle_probe(&mut self, now: Now, ifindex: u32, result: Result<(), HardwareError>) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        match result {
            Ok(()) => {
                port.hardware = Hardware::Dcbnl {
                    error: None,
                    applied: 0,
                };
                port.pfc.can_forward = true;
                // A driver answering anew (a new port, a driver reloaded): nothing
                // it refused or held before counts.
                port.ieee_hw.nic = crate::nic::NicWatch::default();
                let outs = program::outputs(port, now.mono, &[], true);
                self.outputs.extend(outs);
                if let Some(out) = apply_headroom(port) {
                    self.outputs.push_back(out);
                }
            }
            Err(e) => {
                if e.kind != HardwareErrorKind::NotSupported {
                    port.hw_errors.count(e.kind);
                }
                info!(port = %name, reason = %e, "no dcbnl: negotiating and reporting only");
                port.hardware = Hardware::Unsupported {
                    reason: e.to_string(),
                };
                port.pfc.can_forward = false;
            }
        }
    }

    /// The answer to an [`Output::ProgramCee`](super::Output::ProgramCee).
    pub fn handle_programmed(&mut self, now: Now, ifindex: u32, result: Result<(), HardwareError>) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        // Taken: what it meant is what the NIC should hold; the read that follows is
        // the baseline drift is judged against (a CEE programming reads nothing back).
        if let Some(port) = self.ports.get_mut(id) {
            let sent = port.ieee_hw.cee_sent.take();
            if let (Ok(()), Some((pfc, pg))) = (&result, sent) {
                let nic = &mut port.ieee_hw.nic;
                // CEE runs: only CEE's objects are compared (the IEEE ones of a
                // driver that maps both to one table would look changed).
                let apps = nic.meant.take().map(|m| m.apps).unwrap_or_default();
                nic.meant = Some(Box::new(crate::nic::Meant {
                    apps,
                    cee_pfc: Some(pfc),
                    cee_pg: pg,
                    ..crate::nic::Meant::default()
                }));
                nic.baseline_next = true;
                nic.next_read = Some(now.mono + crate::nic::READ_INTERVAL);
                self.outputs.push_back(super::Output::ReadNic {
                    ifindex,
                    name: port.name.clone(),
                    cee: true,
                });
            }
        }
        self.record_programmed(now, id, result);
    }

    /// A programming round's outcome: counted, kept for `status`, published.
    pub(super) fn record_programmed(
        &mut self,
        now: Now,
        id: PortId,
        result: Result<(), HardwareError>,
    ) {
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        if let Err(e) = &result {
            port.hw_errors.count(e.kind);
        }
        if let Hardware::Dcbnl { error, applied } = &mut port.hardware {
            match &result {
                Ok(()) => {
                    *error = None;
                    *applied += 1;
                }
                Err(e) => *error = Some(Box::new(e.clone())),
            }
        }
        let ev = match result {
            Ok(()) => DaemonEvent::HardwareApplied,
            Err(error) => {
                warn!(port = %name, %error, "dcbnl programming failed");
                DaemonEvent::HardwareError {
                    error: error.to_string(),
                    kind: Some(error.kind),
                }
            }
        };
        self.publish(now, &name, EventBody::Daemon(ev));
    }
}

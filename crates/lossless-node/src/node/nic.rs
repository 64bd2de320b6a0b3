//! Reading the NIC back: every [`READ_INTERVAL`](crate::nic::READ_INTERVAL) on a
//! programmed port, and for `dcbx show`; drift against the read taken right after
//! the last programming is counted, published and, with `nic_drift = "repair"`,
//! programmed back once per read.

use tracing::warn;

use super::{program, Node, Now, Output, PortId};
use crate::hardware::{HardwareError, NicState, Trust};
use crate::nic::{Difference, DriftPolicy, READ_INTERVAL};
use crate::protocol::{DaemonEvent, EventBody, Hardware};

impl Node {
    /// A port's periodic read-back is due: ask for it.
    pub(super) fn nic_due(&mut self, now: Now, id: PortId) {
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let due = port.ieee_hw.nic.next_read.is_some_and(|t| t <= now.mono);
        if !due || !matches!(port.hardware, Hardware::Dcbnl { .. }) {
            return;
        }
        port.ieee_hw.nic.next_read = Some(now.mono + READ_INTERVAL);
        self.outputs.push_back(Output::ReadNic {
            ifindex: port.ifindex,
            name: port.name.clone(),
            cee: port.agent.running() == lossless_dcbx::Version::Cee,
        });
    }

    /// The answer to [`Output::ReadNic`]: what the NIC holds now, or why it could
    /// not be read.
    pub fn handle_nic_read(
        &mut self,
        now: Now,
        ifindex: u32,
        result: Result<NicState, HardwareError>,
    ) {
        self.take_nic_read(now, ifindex, result);
        self.nic_read_done(now, ifindex);
    }

    fn take_nic_read(&mut self, now: Now, ifindex: u32, result: Result<NicState, HardwareError>) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        let policy = port.settings.nic_drift;
        let nic = &mut port.ieee_hw.nic;
        let read = match result {
            Ok(read) => read,
            Err(e) => {
                port.hw_errors.count(e.kind);
                nic.read_error = Some(e.to_string());
                return;
            }
        };
        nic.read_error = None;
        nic.read_at = Some(now.mono);
        if std::mem::take(&mut nic.baseline_next) {
            nic.baseline = Some(Box::new(read.clone()));
            nic.state = Some(Box::new(read));
            return;
        }
        let before = nic.differences();
        nic.state = Some(Box::new(read));
        let after = nic.differences();
        // Drift: differences the baseline (what the NIC held right after our last
        // programming) did not have. What the driver never kept is reported, not
        // programmed again in a loop. No baseline yet: nothing to judge against.
        if nic.meant.is_none() || nic.baseline.is_none() {
            return;
        }
        let new = nic.drifted_differences();
        if new.is_empty() {
            return;
        }
        let repairing = policy == DriftPolicy::Repair && port.ieee_hw.pending.is_none();
        if after != before {
            port.ieee_hw.nic.drift_detected += 1;
            let words: Vec<String> = new.iter().map(ToString::to_string).collect();
            warn!(port = %name, differences = %words.join("; "), repairing,
                "the NIC no longer holds what was programmed");
            self.publish(
                now,
                &name,
                EventBody::Daemon(DaemonEvent::NicDrift {
                    differences: words,
                    repairing,
                }),
            );
        }
        if !repairing {
            return;
        }
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        // Forget what the NIC no longer holds, so the next programming sends it.
        let hw = &mut port.ieee_hw;
        for d in &new {
            match d {
                Difference::AppMissing { entry } => hw.apps.retain(|a| a != entry),
                Difference::Trust { .. } => hw.trust = Some(Trust::Pcp),
                // Someone else's entry is never deleted by us: reported only.
                Difference::AppConflict { .. }
                | Difference::Pfc { .. }
                | Difference::Ets { .. }
                | Difference::Pg { .. } => {}
            }
        }
        let out = match port.agent.running() {
            lossless_dcbx::Version::Cee => Some(program::program_cee(port)),
            lossless_dcbx::Version::Ieee => program::program_ieee(port),
        };
        if let Some(out) = out {
            port.ieee_hw.nic.drift_repaired += 1;
            self.outputs.push_back(out);
        }
    }
}

//! The RoCE host settings beyond DCB ([`crate::roce`]): read when the port comes, when
//! its settings change and every [`READ_INTERVAL`](crate::roce::READ_INTERVAL); what
//! the configuration gives and the host does not hold is written once, then read back;
//! a change behind our back is drift (written back with `nic_drift = "repair"`).

use tracing::{info, warn};

use super::{Node, Now, Output, PortId};
use crate::protocol::{DaemonEvent, EventBody};
use crate::roce::{HostRoce, WriteOutcome};

impl Node {
    /// A port's RoCE host read is due: ask for it.
    pub(super) fn roce_due(&mut self, now: Now, id: PortId) {
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        if !port.roce.due(now.mono) {
            return;
        }
        port.roce.in_flight = true;
        self.outputs.push_back(Output::RoceHost {
            ifindex: port.ifindex,
            name: port.name.clone(),
            write: Vec::new(),
        });
    }

    /// The answer to [`Output::RoceHost`]: what the host holds after the writes
    /// asked, and each write's outcome.
    pub fn handle_roce_host(
        &mut self,
        now: Now,
        ifindex: u32,
        host: HostRoce,
        written: Vec<WriteOutcome>,
    ) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        let repairing = port.settings.nic_drift == crate::nic::DriftPolicy::Repair;
        let applied: Vec<String> = written
            .iter()
            .filter(|w| w.result.is_ok())
            .map(|w| {
                format!(
                    "roce.{} = {}",
                    w.setting.key(),
                    crate::roce::wanted_text(&w.setting)
                )
            })
            .collect();
        let after = port.roce.take_read(now.mono, host, &written);
        if !after.write.is_empty() {
            port.roce.in_flight = true;
            self.outputs.push_back(Output::RoceHost {
                ifindex,
                name: name.clone(),
                write: after.write,
            });
        }
        if !applied.is_empty() {
            info!(port = %name, settings = %applied.join("; "), "RoCE host settings written");
            self.publish(
                now,
                &name,
                EventBody::Daemon(DaemonEvent::RoceApplied { settings: applied }),
            );
        }
        if !after.refused.is_empty() {
            warn!(port = %name, refusals = %after.refused.join("; "),
                "the host did not take RoCE host settings");
            self.publish(
                now,
                &name,
                EventBody::Daemon(DaemonEvent::RoceRefused {
                    refusals: after.refused,
                }),
            );
        }
        if !after.drifted.is_empty() {
            warn!(port = %name, settings = %after.drifted.join("; "), repairing,
                "RoCE host settings changed behind the daemon's back");
            self.publish(
                now,
                &name,
                EventBody::Daemon(DaemonEvent::RoceDrift {
                    settings: after.drifted,
                    repairing,
                }),
            );
        }
        self.after(now, id);
    }
}

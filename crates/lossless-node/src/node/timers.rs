//! Timers: every port whose deadline is due runs.

use super::{Node, Now};

impl Node {
    /// Time passed: every port whose deadline is due runs.
    pub fn handle_timeout(&mut self, now: Now) {
        self.sighup_timeout(now);
        for name in self.ports.due(now.mono) {
            if let Some(p) = self.ports.get_mut(&name) {
                p.handle_timeout(now.mono);
            }
            self.pfc_due(now, &name);
            self.nic_due(now, &name);
            self.roce_due(now, &name);
            self.after(now, &name);
        }
    }
}

//! Timers: every port whose deadline is due runs.

use super::{Node, Now};

impl Node {
    /// Time passed: every port whose deadline is due runs.
    pub fn handle_timeout(&mut self, now: Now) {
        self.sighup_timeout(now);
        for id in self.ports.due(now.mono) {
            if let Some(p) = self.ports.get_mut(id) {
                p.handle_timeout(now.mono);
            }
            self.pfc_due(now, id);
            self.nic_due(now, id);
            self.roce_due(now, id);
            self.after(now, id);
        }
    }
}

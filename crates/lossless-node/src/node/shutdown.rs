//! Stopping: a shutdown LLDPDU on every port, then every port closed, and the relay.

use super::{Node, Now, Output};

impl Node {
    /// Stop: a shutdown LLDPDU on every port, then close them all, and the relay.
    pub fn shutdown(&mut self, now: Now) {
        for id in self.ports.ids() {
            self.remove_port(now, id, true);
        }
        if self.relay.running() {
            self.outputs.push_back(Output::StopRelay);
        }
    }
}

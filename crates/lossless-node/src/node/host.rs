//! The host's identity (name, description, forwarding, addresses): every port whose
//! identity TLVs change with it sends them at once.

use super::{Node, Now};
use crate::identity::{HostInfo, LocalInfo};

impl Node {
    /// What the host is (name, description, forwarding, addresses), as the runtime read
    /// it: at start and whenever it may have changed (an address came or went, a
    /// reload). Every port whose identity TLVs change sends them at once.
    pub fn handle_host(&mut self, now: Now, host: HostInfo) {
        if host == *self.host.info() {
            return;
        }
        self.host = crate::identity::Host::new(host);
        for id in self.ports.ids() {
            let Some(port) = self.ports.get_mut(id) else {
                continue;
            };
            let Some(link) = self.links.get(&port.ifindex) else {
                continue;
            };
            if port.set_local(now.mono, LocalInfo::of(&self.host, link)) {
                self.after(now, id);
            }
        }
    }
}

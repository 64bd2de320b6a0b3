//! What an operator does to a node core at the current instant: its line rate,
//! its configuration file (a reload), a control request, a crash and restart.

use lossless_dcbx::{ConfigError, PortConfig};
use lossless_node::config::{HeadroomSettings, PortSettings};
use lossless_node::link::LinkChange;
use lossless_node::node::Node;
use lossless_node::protocol::{ErrorKind, Request, Response};

use super::build::identity;
use super::node::ifindex;
use super::{NodeId, Sim};

impl Sim {
    /// The line rate the node's "kernel" reports for its first port.
    pub fn set_speed(&mut self, node: NodeId, mbps: Option<u64>) {
        self.nodes[node].ports[0].speed_mbps = mbps;
        let now = self.clock();
        self.core_mut(node).node.handle_speed(now, ifindex(0), mbps);
        self.after(node);
    }

    /// Makes the node's state directory fail writes (true) or work again.
    pub fn set_persist_fails(&mut self, node: NodeId, fails: bool) {
        self.core_mut(node).persist_fails = fails;
    }

    /// The node's adaptive-headroom settings (`[ports."p0".headroom]`); whether it
    /// measures is the port's `dcbx.headroom_measurement`, advertised in DCBX: it
    /// measures its link once the peer advertises it too. Timestamps are the
    /// node's clock ([`Sim::set_clock_offset`]), so what it measures is exactly
    /// the paths' delays.
    pub fn set_headroom(
        &mut self,
        node: NodeId,
        settings: HeadroomSettings,
    ) -> Result<(), ConfigError> {
        let mut s = self.settings(node).clone();
        s.headroom = settings;
        self.write_settings(node, s)
    }

    /// Changes the configuration of a node's first port now: the lab rewrites the
    /// node's file and the node reloads it (as on SIGHUP). A bad one is refused and
    /// nothing changes.
    pub fn set_config(&mut self, node: NodeId, cfg: PortConfig) -> Result<(), ConfigError> {
        let mut s = PortSettings::from_port_config(&cfg);
        let old = self.settings(node);
        s.apply = old.apply;
        s.headroom = old.headroom;
        if cfg.mac != self.nodes[node].ports[0].mac {
            self.nodes[node].ports[0].mac = cfg.mac;
            let now = self.clock();
            let link = self.nodes[node].link(0);
            self.core_mut(node)
                .node
                .handle_link_change(now, LinkChange::New(link));
        }
        self.write_settings(node, s)?;
        self.note(format!("config change on {}", self.nodes[node].name));
        Ok(())
    }

    /// Writes `settings` into the node's file and has it reloaded.
    pub fn write_settings(
        &mut self,
        node: NodeId,
        settings: PortSettings,
    ) -> Result<(), ConfigError> {
        let mac = self.nodes[node].ports[0].mac;
        Self::parse(&self.nodes[node].name, mac, &settings)?;
        self.core_mut(node).settings = Some(settings);
        // As `lossless reload` (SIGHUP would read the file SIGHUP_SETTLE later).
        self.request(node, Request::Reload);
        Ok(())
    }

    /// Sends a control request to a node, as `lossless` would, and returns its answer
    /// (what it waited for, such as persisting, is carried out meanwhile).
    pub fn request(&mut self, node: NodeId, req: Request) -> Response {
        self.next_request += 1;
        let id = self.next_request;
        let now = self.clock();
        self.core_mut(node).node.handle_request(now, id, req);
        self.after(node);
        let replies = &mut self.core_mut(node).replies;
        match replies.iter().position(|(r, _)| *r == id) {
            Some(i) => replies.remove(i).1,
            None => Response::err(ErrorKind::Unavailable, "no reply"),
        }
    }

    /// Replaces a node by a fresh one with `cfg` (a crash and restart: no shutdown
    /// frame, all memory lost, the state directory kept and the start counted) and
    /// brings its first port's link up.
    pub fn restart(&mut self, node: NodeId, cfg: PortConfig) -> Result<(), ConfigError> {
        let mut settings = PortSettings::from_port_config(&cfg);
        let old = self.settings(node);
        settings.apply = old.apply;
        settings.headroom = old.headroom;
        let config = Self::parse(&self.nodes[node].name, cfg.mac, &settings)?;
        let now = self.clock();
        let n = &mut self.nodes[node];
        n.ports[0].mac = cfg.mac;
        n.ports[0].link_up = true;
        n.scheduled = None;
        let name = n.name.clone();
        let c = self.core_mut(node);
        c.store.boots = c.store.boots.wrapping_add(1);
        c.settings = Some(settings);
        c.datapath = None;
        c.node = Node::new(config, identity(&name), c.store.clone(), now);
        let links = (0..self.nodes[node].ports.len())
            .map(|i| self.nodes[node].link(i))
            .collect();
        let core = &mut self.core_mut(node).node;
        core.handle_host(now, super::build::host(&name));
        core.handle_links(now, links);
        self.note(format!("{} restarted", self.nodes[node].name));
        self.after(node);
        Ok(())
    }
}

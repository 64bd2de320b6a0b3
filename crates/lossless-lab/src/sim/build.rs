//! Adding nodes. An agent's settings, and a relay node's `[relay]` section, are
//! rendered into a configuration file the node core parses, so a change of
//! configuration is a reload, as on a host.

use std::path::PathBuf;

use lossless_dcbx::{ConfigError, PortConfig};
use lossless_headroom::session::Session;
use lossless_node::config::{ConfigFileError, DaemonConfig, PortSettings};
use lossless_node::identity::{HostInfo, LocalInfo};
use lossless_node::node::{Identity, Node};
use lossless_node::state::PersistedState;
use lossless_relay::RelaySection;
use lossless_wire::MacAddr;

use super::node::{CoreNode, Kind, SimNode, SimPort, Station};
use super::{NodeId, Sim, PORT};
use crate::nic::{Driver, Nic};
use crate::transit::Transit;

pub(super) fn config_path(name: &str) -> PathBuf {
    PathBuf::from(format!("lab/{name}.toml"))
}

pub(super) fn identity(name: &str) -> Identity {
    Identity {
        config_path: Some(config_path(name)),
        cli_ports: Vec::new(),
        pid: 0,
    }
}

/// Who a simulated host is: named as the node; no addresses, no IP forwarding.
pub(super) fn host(name: &str) -> HostInfo {
    HostInfo {
        hostname: Some(name.to_string()),
        ..HostInfo::default()
    }
}

/// The `[relay]` section as it stands in a configuration file.
fn relay_text(section: &RelaySection) -> Result<String, ConfigFileError> {
    #[derive(serde::Serialize)]
    struct File<'a> {
        relay: &'a RelaySection,
    }
    toml::to_string(&File { relay: section }).map_err(|e| ConfigFileError::Invalid {
        path: PathBuf::from("(rendered configuration)"),
        line: 0,
        column: 0,
        key: "relay".into(),
        reason: e.to_string(),
    })
}

impl Sim {
    /// Adds a node whose one port runs `cfg` (link down, not on any segment). The port
    /// takes `cfg.mac`; nothing is programmed into its NIC (`apply = "none"`).
    pub fn add_agent(&mut self, name: &str, cfg: PortConfig) -> Result<NodeId, ConfigError> {
        let settings = PortSettings::from_port_config(&cfg);
        self.add_node(name, cfg.mac, settings, Driver::NoDcbnl)
    }

    /// Adds a node whose one port has `settings`, the MAC `mac` and a NIC with this
    /// driver (which the node programs when the port has `apply = "dcbnl"`).
    pub fn add_node(
        &mut self,
        name: &str,
        mac: MacAddr,
        settings: PortSettings,
        driver: Driver,
    ) -> Result<NodeId, ConfigError> {
        let config = Self::parse(name, mac, &settings)?;
        let store = PersistedState {
            boots: 0,
            ..PersistedState::default()
        };
        let core = CoreNode {
            node: Node::new(config, identity(name), store.clone(), self.clock()),
            settings: Some(settings),
            relay: None,
            store,
            persist_fails: false,
            nic: Nic::new(driver),
            replies: Vec::new(),
            datapath: None,
        };
        let ports = vec![SimPort::new(PORT, mac)];
        Ok(self.push_core(name, ports, core))
    }

    /// Adds a node running losslessd's core with the configuration file
    /// `[relay]` = `section` (a PE or a DC gateway), and the ports `ports`
    /// (name, MAC) that the section names as its interfaces. The core asks for
    /// the relay's data path at once; the simulator starts it on those ports.
    pub fn add_relay_node(
        &mut self,
        name: &str,
        ports: &[(&str, MacAddr)],
        section: &RelaySection,
    ) -> Result<NodeId, ConfigFileError> {
        let text = relay_text(section)?;
        let config = DaemonConfig::parse(&text, &config_path(name))?;
        let store = PersistedState {
            boots: 0,
            ..PersistedState::default()
        };
        let core = CoreNode {
            node: Node::new(config, identity(name), store.clone(), self.clock()),
            settings: None,
            relay: Some(text),
            store,
            persist_fails: false,
            nic: Nic::new(Driver::NoDcbnl),
            replies: Vec::new(),
            datapath: None,
        };
        let ports = ports.iter().map(|(n, m)| SimPort::new(n, *m)).collect();
        Ok(self.push_core(name, ports, core))
    }

    fn push_core(&mut self, name: &str, ports: Vec<SimPort>, core: CoreNode) -> NodeId {
        self.nodes
            .push(SimNode::new(name, ports, Kind::Core(Box::new(core))));
        let id = self.nodes.len() - 1;
        let now = self.clock();
        let links = (0..self.nodes[id].ports.len())
            .map(|i| self.nodes[id].link(i))
            .collect();
        if let Kind::Core(c) = &mut self.nodes[id].kind {
            c.node.handle_host(now, host(name));
            c.node.handle_links(now, links);
        }
        self.after(id);
        id
    }

    /// Adds a transit router with one port per interface of `transit`, named
    /// `if0`, `if1`, ... with the interface's MAC.
    pub fn add_transit(&mut self, name: &str, transit: Transit) -> NodeId {
        let ports = transit
            .interfaces()
            .iter()
            .enumerate()
            .map(|(i, f)| SimPort::new(&format!("if{i}"), f.mac))
            .collect();
        self.nodes
            .push(SimNode::new(name, ports, Kind::Transit(transit)));
        self.nodes.len() - 1
    }

    /// Adds a measurement station: `session` alone on one port with `mac`, link
    /// down. The test drives the session ([`Sim::with_station`]); its link
    /// follows the port's.
    pub fn add_station(&mut self, name: &str, mac: MacAddr, session: Session) -> NodeId {
        let station = Station {
            session,
            events: Vec::new(),
        };
        let kind = Kind::Station(Box::new(station));
        self.nodes
            .push(SimNode::new(name, vec![SimPort::new(PORT, mac)], kind));
        let id = self.nodes.len() - 1;
        self.after(id);
        id
    }

    /// Checks the settings as the agent would, then parses the file they render to.
    pub(super) fn parse(
        name: &str,
        mac: MacAddr,
        settings: &PortSettings,
    ) -> Result<DaemonConfig, ConfigError> {
        settings
            .port_config(mac, &LocalInfo::longest())
            .validate()?;
        let text = format!("[ports.\"{PORT}\"]\n{}", settings.to_toml());
        DaemonConfig::parse(&text, &config_path(name)).map_err(|e| ConfigError::Value {
            path: "(rendered configuration)".into(),
            reason: e.to_string(),
        })
    }
}

//! `reload` and SIGHUP: the configuration file read again, every port's new settings
//! checked before any is touched, then applied; ports the file no longer selects go,
//! newly selected links come, the relay follows its section.

use tracing::{info, warn};

use super::{shadow, Node, Now, Output, PortId, ReloadError};
use crate::config::{Apply, ConfigFileError, DaemonConfig, DaemonSettings};
use crate::link::Link;
use crate::protocol::{DaemonEvent, EventBody, ReloadResult, Source};

impl Node {
    /// Applies the file's text (None: no file, every default). A refused file changes
    /// nothing; the error says where and why.
    pub(super) fn reload(
        &mut self,
        now: Now,
        read: Result<Option<String>, ConfigFileError>,
    ) -> Result<ReloadResult, ReloadError> {
        let text = read?;
        if let (Some(""), Some(path)) = (text.as_deref(), &self.identity.config_path) {
            // Valid TOML that selects no port: most likely a file caught half
            // written (an editor that truncates it, then writes), which would
            // remove every port the file selects.
            return Err(ReloadError::Empty { path: path.clone() });
        }
        let config = match (&text, &self.identity.config_path) {
            (Some(text), Some(path)) => DaemonConfig::parse(text, path)?,
            _ => DaemonConfig::default(),
        };
        // Check every staying port's new configuration before touching any. A port
        // the new file no longer selects is only removed (below), not reconfigured
        // to the defaults first: a reload reports it once, as removed.
        let mut planned = Vec::new();
        let stays =
            |name: &str| self.identity.cli_ports.iter().any(|p| p == name) || config.selects(name);
        for (id, port) in self.ports.iter().filter(|(_, p)| stays(&p.name)) {
            let name = &port.name;
            let mut settings = config.port(name);
            if let Some(o) = self.persisted.ports.get(name) {
                o.apply(&mut settings);
            }
            let cfg = port.port_config(&settings);
            cfg.validate().map_err(|error| ReloadError::Port {
                port: name.clone(),
                error,
            })?;
            planned.push((id, name.clone(), settings, cfg));
        }
        // Socket, state directory and metrics address are bound at start and
        // stay (documented); the rest of [daemon] follows the file.
        let old = std::mem::replace(&mut self.config, config);
        self.config.daemon = DaemonSettings {
            log: self.config.daemon.log.clone(),
            ..old.daemon.clone()
        };
        let mut result = ReloadResult {
            config: self
                .identity
                .config_path
                .as_ref()
                .map(|p| p.display().to_string()),
            ..ReloadResult::default()
        };
        for (id, name, settings, cfg) in planned {
            let Some(port) = self.ports.get_mut(id) else {
                continue;
            };
            let apply_changed = port.settings.apply != settings.apply;
            let headroom_changed = port.settings.headroom != settings.headroom;
            if port.roce.configure(&settings) {
                port.roce.next_read = Some(now.mono);
            }
            if *port.agent.config() == cfg && !apply_changed && !headroom_changed {
                port.settings = settings;
                result.unchanged += 1;
                continue;
            }
            if let Err(e) = port.agent.set_config(now.mono, cfg) {
                warn!(port = %name, error = %e, "reload refused for this port");
                continue;
            }
            port.settings = settings;
            self.sync_headroom(now, id);
            let Some(port) = self.ports.get_mut(id) else {
                continue;
            };
            port.negotiating_since = Some(now.mono);
            if apply_changed {
                port.hardware = crate::hardware::before_probe(port.settings.apply);
                if port.settings.apply == Apply::Dcbnl {
                    self.outputs.push_back(Output::Probe {
                        ifindex: port.ifindex,
                        name: name.clone(),
                    });
                }
            }
            result.changed.push(name.clone());
            self.publish(
                now,
                &name,
                EventBody::Daemon(DaemonEvent::ConfigChanged {
                    source: Source::Config,
                }),
            );
            self.after(now, id);
        }
        // Ports the new file no longer selects go; newly selected links come.
        let going: Vec<(PortId, String)> = self
            .ports
            .iter()
            .filter(|(_, p)| !self.selected(&p.name))
            .map(|(id, p)| (id, p.name.clone()))
            .collect();
        for (id, name) in going {
            self.remove_port(now, id, true);
            result.removed.push(name);
        }
        let coming: Vec<Link> = self
            .links
            .values()
            .filter(|l| !self.ports.contains_key(&l.name) && self.selected(&l.name))
            .cloned()
            .collect();
        for l in coming {
            self.add_port(now, &l);
            if self.ports.contains_key(&l.name) {
                result.added.push(l.name.clone());
            }
        }
        result.relay = self.sync_relay().into();
        result.shadowed = shadow::shadowed(&old, &self.config, &self.persisted, self.ports.keys());
        for s in &result.shadowed {
            if s.file_changed {
                warn!(port = %s.port, feature = %s.feature.name(), "{}", s.message);
            } else {
                info!(port = %s.port, feature = %s.feature.name(), "{}", s.message);
            }
        }
        info!(
            changed = result.changed.len(),
            added = result.added.len(),
            removed = result.removed.len(),
            unchanged = result.unchanged,
            relay = %result.relay,
            shadowed = result.shadowed.len(),
            "configuration reloaded"
        );
        Ok(result)
    }
}

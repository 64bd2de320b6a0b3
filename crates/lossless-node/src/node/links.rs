//! Links: which links are ports (a selected link added, a renamed or removed one
//! closed), their link state, and a link read for a frame that came first.

use crate::rx_budget::RxBudget;
use std::collections::HashSet;

use lossless_wire::MacAddr;
use tracing::{debug, info, warn};

use super::frames::Budget;
use super::{Node, Now, Output, PortId};
use crate::config::Apply;
use crate::identity::LocalInfo;
use crate::link::{Link, LinkChange};
use crate::port::{Port, MAX_HELD};
use crate::protocol::{DaemonEvent, EventBody};

impl Node {
    /// A full link dump (at start, or after a netlink overrun).
    pub fn handle_links(&mut self, now: Now, links: Vec<Link>) {
        let present: HashSet<u32> = links.iter().map(|l| l.ifindex).collect();
        let gone: Vec<u32> = self
            .links
            .keys()
            .filter(|i| !present.contains(i))
            .copied()
            .collect();
        for ifindex in gone {
            self.handle_link_change(now, LinkChange::Del { ifindex });
        }
        for l in links {
            self.handle_link_change(now, LinkChange::New(l));
        }
    }

    /// A link appeared, changed or went away.
    pub fn handle_link_change(&mut self, now: Now, change: LinkChange) {
        match change {
            LinkChange::New(link) => {
                // A rename looks like a new link with a known ifindex.
                if let Some(old) = self.id_of(link.ifindex) {
                    if self.ports.get(old).is_some_and(|p| p.name != link.name) {
                        self.remove_port(now, old, false);
                    }
                }
                self.links.insert(link.ifindex, link.clone());
                if let Some(id) = self.ports.id(&link.name) {
                    self.update_port_link(now, id, &link);
                } else if self.selected(&link.name) {
                    self.add_port(now, &link);
                }
            }
            LinkChange::Del { ifindex } => {
                self.links.remove(&ifindex);
                if let Some(id) = self.id_of(ifindex) {
                    // The interface is gone: nothing can be sent on it.
                    self.remove_port(now, id, false);
                }
            }
        }
    }

    pub(super) fn add_port(&mut self, now: Now, link: &Link) {
        let Some(mac) = link.mac else {
            warn!(port = %link.name, "no MAC address: not an Ethernet interface, skipped");
            return;
        };
        let (settings, overrides) = self.effective(&link.name);
        let apply = settings.apply;
        let port = match Port::new(
            &link.name,
            link.ifindex,
            MacAddr(mac),
            settings,
            LocalInfo::of(&self.host, link),
            overrides,
            self.seq_base(),
            now.mono,
        ) {
            Ok(p) => p,
            Err(e) => {
                // The file was validated as a whole; this is an override gone bad.
                warn!(port = %link.name, error = %e, "configuration refused: port not started");
                return;
            }
        };
        info!(port = %link.name, ifindex = link.ifindex, mac = %MacAddr(mac), "port added");
        let mut port = port;
        port.rx_budget = RxBudget::new(self.config.daemon.limits.rx_budget, now.mono);
        let id = self.ports.insert(link.name.clone(), Box::new(port));
        self.by_index.insert(link.ifindex, id);
        self.outputs.push_back(Output::Open {
            ifindex: link.ifindex,
            name: link.name.clone(),
        });
        self.open_measure(id);
        if apply == Apply::Dcbnl {
            self.outputs.push_back(Output::Probe {
                ifindex: link.ifindex,
                name: link.name.clone(),
            });
        }
        self.publish(
            now,
            &link.name,
            EventBody::Daemon(DaemonEvent::PortAdded {
                ifindex: link.ifindex,
            }),
        );
        self.update_port_link(now, id, link);
    }

    /// Port `id`'s link changed (or was read): `link`.
    fn update_port_link(&mut self, now: Now, id: PortId, link: &Link) {
        let up = link.is_up();
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        if let Some(mac) = link.mac {
            port.set_mac(now.mono, MacAddr(mac));
        }
        // A new alias is a new Port Description.
        port.set_local(now.mono, LocalInfo::of(&self.host, link));
        let changed = port.set_link(now.mono, up);
        if changed {
            info!(port = %link.name, up, "link");
        }
        // Frames kept while the link came up are for this link-up only; a link
        // reported down forgets them (they could be from another peer by the
        // time it comes up again).
        let held = if up {
            std::mem::take(&mut port.held)
        } else {
            port.held.clear();
            Vec::new()
        };
        if let Some(h) = &mut port.headroom {
            // Any link message may come with a new speed (autonegotiation): re-read it.
            if up {
                self.outputs.push_back(Output::ReadSpeed {
                    ifindex: link.ifindex,
                    name: link.name.clone(),
                });
            } else {
                h.set_kernel_speed(now.mono, None);
            }
        }
        if changed {
            self.publish(
                now,
                &link.name,
                EventBody::Daemon(DaemonEvent::LinkChanged { up }),
            );
        }
        self.after(now, id);
        for frame in held {
            self.frame_in(now, link.ifindex, &frame, Budget::Charged);
        }
    }

    pub(super) fn remove_port(&mut self, now: Now, id: PortId, shutdown: bool) {
        let Some(mut port) = self.ports.remove(id) else {
            return;
        };
        let name = port.name.clone();
        let name = name.as_str();
        self.own_msaps.remove(port.ifindex);
        self.by_index.remove(&port.ifindex);
        self.metrics.forget_port(name);
        if shutdown {
            for frame in port.shutdown(now.mono) {
                self.outputs.push_back(Output::Send {
                    ifindex: port.ifindex,
                    frame,
                });
            }
        }
        self.outputs.push_back(Output::Close {
            ifindex: port.ifindex,
        });
        info!(port = %name, "port removed");
        self.publish(
            now,
            name,
            EventBody::Daemon(DaemonEvent::PortRemoved {
                ifindex: port.ifindex,
            }),
        );
    }

    /// The answer to [`Output::ReadLink`]: the link as the kernel sees it now (None: it
    /// could not be read). The frame is processed if the link turned out to be up,
    /// dropped otherwise (a late frame of a link that went down).
    ///
    /// Read this way, the carrier alone does not make the link up: the kernel turns it
    /// on before its linkwatch worker has activated the device's queue, and until then
    /// whatever is sent is dropped (the `noop` qdisc), so answering the frame at once
    /// could lose the answer (for an LLDPDU, a second until the next fast
    /// transmission). Linkwatch marks the device running, activates it and then
    /// notifies; a notification with the carrier therefore always comes after the
    /// device can send. So with the carrier on and the device not yet running, the
    /// frame is kept for the notification ([`MAX_HELD`] at most).
    pub fn handle_link_read(&mut self, now: Now, link: Option<Link>, frame: &[u8]) {
        let Some(link) = link else {
            return;
        };
        let Some(id) = self.ports.id(&link.name) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        debug!(port = %link.name, admin_up = link.admin_up, carrier = link.carrier,
            running = link.oper_up, "frame before the link notification: link read");
        if link.admin_up && link.carrier && !link.oper_up && !port.agent.link_up() {
            if port.held.len() < MAX_HELD {
                port.held.push(frame.to_vec());
            }
            return;
        }
        self.links.insert(link.ifindex, link.clone());
        self.update_port_link(now, id, &link);
        if self.ports.get(id).is_some_and(|p| p.agent.link_up()) {
            self.frame_in(now, link.ifindex, frame, Budget::Charged);
        }
    }
}

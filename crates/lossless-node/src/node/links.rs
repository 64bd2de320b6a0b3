//! Links, frames and time: which links are ports, their link state, what arrives on
//! them, and the timers.

use crate::rx_budget::RxBudget;
use std::collections::HashSet;

use lossless_wire::MacAddr;
use tracing::{debug, info, warn};

use super::{Node, Now, Output};
use crate::config::Apply;
use crate::identity::{HostInfo, LocalInfo};
use crate::link::{Link, LinkChange};
use crate::port::{Port, MAX_HELD};
use crate::protocol::{DaemonEvent, EventBody};

/// How long after a failure to open a port's own packet socket it is asked for
/// again (a port whose budget stays spent would otherwise ask at every frame).
pub const OWN_SOCKET_RETRY: lossless_dcbx::Duration = lossless_dcbx::Duration::from_secs(10);

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

    /// What the host is (name, description, forwarding, addresses), as the runtime read
    /// it: at start and whenever it may have changed (an address came or went, a
    /// reload). Every port whose identity TLVs change sends them at once.
    pub fn handle_host(&mut self, now: Now, host: HostInfo) {
        if host == *self.host.info() {
            return;
        }
        self.host = crate::identity::Host::new(host);
        let names: Vec<String> = self.ports.keys().cloned().collect();
        for name in names {
            let Some(port) = self.ports.get_mut(&name) else {
                continue;
            };
            let Some(link) = self.links.get(&port.ifindex) else {
                continue;
            };
            if port.set_local(now.mono, LocalInfo::of(&self.host, link)) {
                self.after(now, &name);
            }
        }
    }

    /// A link appeared, changed or went away.
    pub fn handle_link_change(&mut self, now: Now, change: LinkChange) {
        match change {
            LinkChange::New(link) => {
                // A rename looks like a new link with a known ifindex.
                if let Some(old) = self.by_index.get(&link.ifindex) {
                    if *old != link.name {
                        let old = old.clone();
                        self.remove_port(now, &old, false);
                    }
                }
                self.links.insert(link.ifindex, link.clone());
                if self.ports.contains_key(&link.name) {
                    self.update_port_link(now, &link);
                } else if self.selected(&link.name) {
                    self.add_port(now, &link);
                }
            }
            LinkChange::Del { ifindex } => {
                self.links.remove(&ifindex);
                if let Some(name) = self.name_of(ifindex) {
                    // The interface is gone: nothing can be sent on it.
                    self.remove_port(now, &name, false);
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
        self.ports.insert(link.name.clone(), Box::new(port));
        self.by_index.insert(link.ifindex, link.name.clone());
        self.outputs.push_back(Output::Open {
            ifindex: link.ifindex,
            name: link.name.clone(),
        });
        self.open_measure(&link.name);
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
        self.update_port_link(now, link);
    }

    fn update_port_link(&mut self, now: Now, link: &Link) {
        let up = link.is_up();
        let Some(port) = self.ports.get_mut(&link.name) else {
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
        self.after(now, &link.name);
        for frame in held {
            self.frame_in(now, link.ifindex, &frame, Budget::Charged);
        }
    }

    pub(super) fn remove_port(&mut self, now: Now, name: &str, shutdown: bool) {
        let Some(mut port) = self.ports.remove(name) else {
            return;
        };
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

    /// A frame arrived on a port (a whole Ethernet frame, FCS stripped).
    pub fn handle_frame(&mut self, now: Now, ifindex: u32, frame: &[u8]) {
        self.frame_in(now, ifindex, frame, Budget::Charge);
    }

    /// A frame for `ifindex`'s port. A frame is charged to the receive budget
    /// once, when it arrives: not again when it comes back with the link read
    /// or after the link notification ([`Budget::Charged`]).
    fn frame_in(&mut self, now: Now, ifindex: u32, frame: &[u8], budget: Budget) {
        let Some(port) = self
            .by_index
            .get(&ifindex)
            .and_then(|name| self.ports.get_mut(name))
        else {
            return;
        };
        // Before anything that costs: a flood stops here (from a stranger or with the
        // peer's identity), and the port's frames go to a socket of its own. PFC frames
        // are counted per priority first, whatever their sender and the budget (the
        // watchdog's source where the NIC has no counters).
        if budget == Budget::Charge {
            port.pfc.host_frame(frame);
        }
        if budget == Budget::Charge && !port.admits(now.mono, frame) {
            if !port.io.own_socket && port.own_socket_retry.is_none_or(|t| now.mono >= t) {
                port.io.own_socket = true;
                port.own_socket_retry = None;
                warn!(port = %port.name, "receive budget spent: the port reads a packet socket \
                    of its own from now on (the shared one stays free for the other ports)");
                self.outputs.push_back(Output::ReceiveAlone { ifindex });
            }
            return;
        }
        let name = port.name.clone();
        if !port.agent.link_up() {
            // A frame on a port we believe down: the netlink notification of the
            // carrier can lag (linkwatch) behind the peer's first LLDPDU. Ask for the
            // link now; the frame is handed back with the answer.
            self.outputs.push_back(Output::ReadLink {
                ifindex,
                frame: frame.to_vec(),
            });
            return;
        }
        if self.own_lldpdu(now, &name, frame) {
            return;
        }
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
        port.receive(now.mono, frame);
        self.after(now, &name);
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
        let Some(port) = self.ports.get_mut(&link.name) else {
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
        self.update_port_link(now, &link);
        if self
            .ports
            .get(&link.name)
            .is_some_and(|p| p.agent.link_up())
        {
            self.frame_in(now, link.ifindex, frame, Budget::Charged);
        }
    }

    /// The runtime could not open the socket of its own a port asked for
    /// ([`Output::ReceiveAlone`]): the port stays on the shared sockets, and asks
    /// again [`OWN_SOCKET_RETRY`] later if its budget is still spent then.
    pub fn handle_own_socket_failed(&mut self, now: Now, ifindex: u32) {
        let Some(name) = self.name_of(ifindex) else {
            return;
        };
        if let Some(port) = self.ports.get_mut(&name) {
            port.io.own_socket = false;
            port.io.own_socket_failures += 1;
            port.own_socket_retry = Some(now.mono + OWN_SOCKET_RETRY);
        }
    }

    /// A frame could not be read (`tx` false) or sent on a port.
    pub fn handle_io_error(&mut self, ifindex: u32, tx: bool) {
        let Some(name) = self.name_of(ifindex) else {
            return;
        };
        if let Some(port) = self.ports.get_mut(&name) {
            if tx {
                port.io.tx_errors += 1;
            } else {
                port.io.rx_errors += 1;
            }
        }
    }

    /// The kernel's counters of the packet socket a port's frames wait in, read by the
    /// runtime (`PACKET_STATISTICS` resets them: `drops` is new since the last
    /// reading; always 0 for a port reading the shared sockets, whose drops are no
    /// port's in particular: [`Node::handle_shared_socket_stats`]) and the receive
    /// buffer it has. New drops are logged: frames from the link were lost before the
    /// daemon saw them.
    pub fn handle_socket_stats(&mut self, ifindex: u32, drops: u64, rcvbuf_bytes: Option<u64>) {
        let Some(name) = self.name_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(&name) else {
            return;
        };
        port.io.kernel_drops += drops;
        if rcvbuf_bytes.is_some() {
            port.io.rcvbuf_bytes = rcvbuf_bytes;
        }
        if port.io.rx_over_budget > port.rx_over_budget_logged {
            let b = port.rx_budget.limits();
            warn!(
                port = %name,
                dropped = port.io.rx_over_budget - port.rx_over_budget_logged,
                total = port.io.rx_over_budget,
                from_peer = port.io.rx_peer_over_budget,
                rx_budget_per_s = b.per_s,
                rx_budget_burst = b.burst,
                "frames were dropped unread: the port's receive budget was spent (a flood \
                 on the link?); from_peer: of the total, from the DCBX peer's identity"
            );
            port.rx_over_budget_logged = port.io.rx_over_budget;
        }
        if drops > 0 {
            warn!(
                port = %name,
                dropped = drops,
                total = port.io.kernel_drops,
                rcvbuf_bytes = port.io.rcvbuf_bytes.unwrap_or_default(),
                "the kernel dropped frames for this port: the packet socket's receive buffer \
                 was full (raise [daemon] packet_rcvbuf_bytes if this recurs)"
            );
        }
    }

    /// Frames of a port the runtime read from both the shared sockets and the port's
    /// own as it switched, and delivered once: `n` copies skipped.
    pub fn handle_own_socket_skipped(&mut self, ifindex: u32, n: u64) {
        let Some(name) = self.name_of(ifindex) else {
            return;
        };
        if let Some(port) = self.ports.get_mut(&name) {
            port.io.own_socket_skipped += n;
        }
    }

    /// The kernel's counters of the packet sockets shared by the ports (their drops
    /// since the last reading, summed; the receive buffer each has). New drops are
    /// logged.
    pub fn handle_shared_socket_stats(&mut self, drops: u64, rcvbuf_bytes: Option<u64>) {
        let s = &mut self.shared_socket;
        s.kernel_drops += drops;
        if rcvbuf_bytes.is_some() {
            s.rcvbuf_bytes = rcvbuf_bytes;
        }
        if drops > 0 {
            warn!(
                dropped = drops,
                total = s.kernel_drops,
                rcvbuf_bytes = s.rcvbuf_bytes.unwrap_or_default(),
                "the kernel dropped frames on the shared packet socket: its receive buffer \
                 was full (raise [daemon] packet_rcvbuf_bytes if this recurs)"
            );
        }
    }

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

    /// Stop: a shutdown LLDPDU on every port, then close them all, and the relay.
    pub fn shutdown(&mut self, now: Now) {
        let names: Vec<String> = self.ports.keys().cloned().collect();
        for name in names {
            self.remove_port(now, &name, true);
        }
        if self.relay.running() {
            self.outputs.push_back(Output::StopRelay);
        }
    }
}

/// Whether a frame is still to be charged to its port's receive budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Budget {
    Charge,
    Charged,
}

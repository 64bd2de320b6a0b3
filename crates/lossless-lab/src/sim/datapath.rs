//! The relay's data path on a simulated node, as losslessd's runtime runs it
//! (`losslessd/src/relay/`): the node core asks for it with
//! `Output::StartRelay(section)` when its file has a `[relay]` section, and the
//! simulator starts the real core on the node's ports named in the section: a
//! PE's [`Relay`] on its DC and WAN interfaces, or a DC gateway's
//! [`GatewayCheck`] on the interface facing its PE. `StopRelay` stops it,
//! `ReadRelay` reads what `lossless relay show` prints.
//!
//! Each port hands the data path what the daemon's socket filter would pass
//! (MAC Control on a DC side; the tunnel's frames on a WAN side); everything
//! else goes to the node core as before. The core's clock starts at zero
//! when the data path starts, as in the daemon. The simulator carries out what
//! it yields at once (nodes take no time of their own) and wakes it at its
//! `poll_timeout()` for the storm ceiling's held-back frames.

use lossless_dcbx::Instant;
use lossless_node::node::Output;
use lossless_node::relay::{AcceptedPfc, GatewayShow, PortIo, RelayShow};
use lossless_relay::{
    Datapath as DatapathCfg, GatewayCheck, GatewayConfig, Port as Side, Relay, RelaySection,
    TunnelConfig, Verdict,
};

use super::log::{Cause, LogEntry};
use super::node::{Kind, SimPort};
use super::queue::{Delivery, Due};
use super::{NodeId, Sim};

/// Which frames a port of the data path reads (losslessd's socket filters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filter {
    MacControl,
    Srv6,
    Udp(u16),
    Mpls,
}

const ETH_MAC_CONTROL: u16 = 0x8808;
const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
const ETH_MPLS: u16 = 0x8847;
const IPPROTO_UDP: u8 = 17;
const IPPROTO_ROUTING: u8 = 43;
const IPPROTO_ETHERNET: u8 = 143;

fn u16_at(f: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*f.get(at)?, *f.get(at + 1)?]))
}

impl Filter {
    fn wan(tunnel: &TunnelConfig) -> Filter {
        match tunnel {
            TunnelConfig::Srv6 { .. } => Filter::Srv6,
            TunnelConfig::Vxlan { port, .. } => Filter::Udp(*port),
            TunnelConfig::SrMpls { .. } => Filter::Mpls,
        }
    }

    /// Whether the filter passes `f`; like a socket filter, a frame too short
    /// for a field it reads does not pass.
    fn passes(self, f: &[u8]) -> bool {
        let ty = u16_at(f, 12);
        match self {
            Filter::MacControl => ty == Some(ETH_MAC_CONTROL),
            Filter::Mpls => ty == Some(ETH_MPLS),
            Filter::Srv6 => {
                ty == Some(ETH_IPV6)
                    && matches!(f.get(14 + 6), Some(&(IPPROTO_ROUTING | IPPROTO_ETHERNET)))
            }
            Filter::Udp(port) => match ty {
                Some(ETH_IPV4) => {
                    let first = u16_at(f, 14 + 6).is_some_and(|o| o & 0x1fff == 0);
                    let ihl = f.get(14).map(|b| usize::from(b & 0x0f) * 4);
                    f.get(14 + 9) == Some(&IPPROTO_UDP)
                        && first
                        && ihl.and_then(|l| u16_at(f, 14 + l + 2)) == Some(port)
                }
                Some(ETH_IPV6) => {
                    f.get(14 + 6) == Some(&IPPROTO_UDP) && u16_at(f, 14 + 40 + 2) == Some(port)
                }
                _ => false,
            },
        }
    }
}

/// One interface of the data path: the node's port it runs on (None: no port
/// of that name) and its counters.
struct Io {
    port: Option<usize>,
    side: Side,
    filter: Filter,
    counters: PortIo,
}

impl Io {
    fn new(ports: &[SimPort], side: &str, kind: Side, name: Option<&str>, filter: Filter) -> Io {
        let name = name.unwrap_or_default();
        let port = ports.iter().position(|p| p.name == name);
        Io {
            port,
            side: kind,
            filter,
            counters: PortIo {
                side: side.into(),
                interface: name.into(),
                open: port.is_some(),
                error: port.is_none().then(|| format!("{name}: no such port")),
                ..PortIo::default()
            },
        }
    }
}

/// The sans-IO core (one per node: the size difference between the variants
/// costs nothing).
#[allow(clippy::large_enum_variant)]
enum Core {
    Pe {
        relay: Relay,
        /// The storm timer queued (older entries are stale).
        wake: Option<Instant>,
    },
    Gateway {
        check: GatewayCheck,
        cfg: GatewayConfig,
        last_accepted: Option<AcceptedPfc>,
    },
}

/// A running data path.
pub(super) struct Datapath {
    section: RelaySection,
    core: Core,
    io: Vec<Io>,
    started: Instant,
}

impl Datapath {
    /// Starts the data path of `section` on `ports` at `now`.
    fn start(section: RelaySection, ports: &[SimPort], now: Instant) -> Result<Datapath, String> {
        let (core, io) = match &section {
            RelaySection::Pe(cfg) => {
                let relay = Relay::new(cfg.clone(), Instant::ZERO).map_err(|e| e.to_string())?;
                let io = vec![
                    Io::new(
                        ports,
                        "dc",
                        Side::Dc,
                        cfg.dc.interface.as_deref(),
                        Filter::MacControl,
                    ),
                    Io::new(
                        ports,
                        "wan",
                        Side::Wan,
                        cfg.wan.interface.as_deref(),
                        Filter::wan(&cfg.tunnel),
                    ),
                ];
                let core = Core::Pe { relay, wake: None };
                (core, io)
            }
            RelaySection::Gateway(cfg) => {
                let check = GatewayCheck::new(cfg).map_err(|e| e.to_string())?;
                let io = vec![Io::new(
                    ports,
                    "pe",
                    Side::Dc,
                    cfg.interface.as_deref(),
                    Filter::MacControl,
                )];
                let core = Core::Gateway {
                    check,
                    cfg: cfg.clone(),
                    last_accepted: None,
                };
                (core, io)
            }
        };
        Ok(Datapath {
            section,
            core,
            io,
            started: now,
        })
    }

    /// The data path core's clock at `now`.
    fn clock(&self, now: Instant) -> Instant {
        Instant::ZERO + now.saturating_since(self.started)
    }

    /// The interface on `port` that reads `frame`, if any.
    fn takes(&self, port: usize, frame: &[u8]) -> Option<usize> {
        self.io
            .iter()
            .position(|io| io.port == Some(port) && io.filter.passes(frame))
    }

    /// The relay core of a PE.
    pub(super) fn relay(&self) -> Option<&Relay> {
        match &self.core {
            Core::Pe { relay, .. } => Some(relay),
            Core::Gateway { .. } => None,
        }
    }

    /// The check of a DC gateway.
    pub(super) fn gateway(&self) -> Option<&GatewayCheck> {
        match &self.core {
            Core::Gateway { check, .. } => Some(check),
            Core::Pe { .. } => None,
        }
    }

    /// What `lossless relay show` prints.
    fn show(&self, now: Instant) -> RelayShow {
        let (role, datapath, pe, gateway) = match (&self.core, &self.section) {
            (Core::Pe { relay, .. }, RelaySection::Pe(cfg)) => {
                ("pe", cfg.datapath, Some(relay.status()), None)
            }
            (
                Core::Gateway {
                    check,
                    cfg,
                    last_accepted,
                },
                _,
            ) => {
                let show = GatewayShow {
                    pe_port_mac: cfg.pe_port_mac,
                    pe_system_mac: cfg.pe_system_mac,
                    counters: *check.counters(),
                    last_accepted: *last_accepted,
                    buffer: check.buffer().cloned(),
                };
                ("gateway", DatapathCfg::default(), None, Some(show))
            }
            (Core::Pe { relay, .. }, _) => {
                ("pe", DatapathCfg::default(), Some(relay.status()), None)
            }
        };
        RelayShow {
            role: role.into(),
            uptime_s: now.saturating_since(self.started).as_secs_f64(),
            datapath,
            ports: self.io.iter().map(|io| io.counters.clone()).collect(),
            pe,
            gateway,
            xdp: None,
        }
    }
}

impl Sim {
    /// Carries out the node core's relay outputs, as losslessd's `execute` does.
    pub(super) fn execute_relay(&mut self, node: NodeId, out: Output) {
        let now = self.clock();
        let n = &mut self.nodes[node];
        let ports = &n.ports;
        let Kind::Core(c) = &mut n.kind else {
            return;
        };
        match out {
            Output::StartRelay(section) => {
                // The old data path stops before the new one starts.
                c.datapath = None;
                let started = Datapath::start(*section, ports, now.mono);
                let result = started.map(|d| c.datapath = Some(d));
                c.node.handle_relay_started(now, result);
                self.datapath_drain(node, None);
            }
            Output::StopRelay => c.datapath = None,
            Output::ReadRelay { id } => {
                let show = c.datapath.as_ref().map(|d| d.show(now.mono));
                c.node.handle_relay_status(now, id, show);
            }
            _ => {}
        }
    }

    /// Hands a frame that arrived on `port` of `node` to its data path if that
    /// reads it; returns false when it does not.
    pub(super) fn datapath_receive(&mut self, node: NodeId, port: usize, bytes: &[u8]) -> bool {
        let now = self.now;
        let Kind::Core(c) = &mut self.nodes[node].kind else {
            return false;
        };
        let Some(d) = c.datapath.as_mut() else {
            return false;
        };
        let Some(i) = d.takes(port, bytes) else {
            return false;
        };
        let t = d.clock(now);
        let io = &mut d.io[i];
        io.counters.received += 1;
        io.counters.batches += 1;
        io.counters.largest_batch = 1;
        let side = io.side;
        let (entry, verdict) = match &mut d.core {
            Core::Pe { relay, .. } => {
                let verdict = relay.handle_frame(t, side, bytes);
                let entry = LogEntry::Relay {
                    at: now,
                    node,
                    port: side,
                    verdict,
                };
                (entry, Some(verdict))
            }
            Core::Gateway {
                check,
                last_accepted,
                ..
            } => {
                let entry = match check.check(bytes) {
                    Ok(pfc) => {
                        *last_accepted = Some(AcceptedPfc {
                            src: pfc.src,
                            class_enable: pfc.class_enable,
                            quanta: pfc.quanta,
                            at_s: t.since_epoch().as_secs_f64(),
                        });
                        LogEntry::Accepted { at: now, node, pfc }
                    }
                    Err(reason) => LogEntry::Refused {
                        at: now,
                        node,
                        reason,
                    },
                };
                (entry, None)
            }
        };
        self.push_log(entry);
        if verdict.is_some() {
            self.datapath_drain(node, verdict);
        }
        true
    }

    /// The data path's storm timer.
    pub(super) fn datapath_wake(&mut self, node: NodeId) {
        let now = self.now;
        let Kind::Core(c) = &mut self.nodes[node].kind else {
            return;
        };
        let Some(d) = c.datapath.as_mut() else {
            return;
        };
        let t = d.clock(now);
        let Core::Pe { relay, wake } = &mut d.core else {
            return;
        };
        if *wake != Some(now) {
            return;
        }
        *wake = None;
        relay.handle_timeout(t);
        self.datapath_drain(node, None);
    }

    /// Sends what a PE's relay queued and sets its timer. `verdict` is the
    /// frame just handled, if any: the last frame queued is that frame's relay
    /// or delivery; anything before it (and everything after a timer) is the
    /// storm ceiling's held-back values falling due.
    fn datapath_drain(&mut self, node: NodeId, verdict: Option<Verdict>) {
        let now = self.now;
        let Kind::Core(c) = &mut self.nodes[node].kind else {
            return;
        };
        let Some(d) = c.datapath.as_mut() else {
            return;
        };
        let started = d.started;
        let Core::Pe { relay, .. } = &mut d.core else {
            return;
        };
        let mut out = Vec::new();
        while let Some(tx) = relay.poll_transmit() {
            out.push((tx.port, tx.frame.to_vec()));
        }
        let next = relay
            .poll_timeout()
            .map(|t| (started + t.since_epoch()).max(now));
        let last = match verdict {
            Some(Verdict::Relayed { .. }) => Some(Cause::Relayed),
            Some(Verdict::Delivered) => Some(Cause::Delivered),
            _ => None,
        };
        let n = out.len();
        let mut sends = Vec::with_capacity(n);
        for (i, (side, bytes)) in out.into_iter().enumerate() {
            let cause = match last {
                Some(c) if i + 1 == n => c,
                _ => Cause::Flushed,
            };
            let Some(io) = d.io.iter_mut().find(|io| io.side == side) else {
                continue;
            };
            match io.port {
                Some(port) => {
                    io.counters.sent += 1;
                    sends.push((port, bytes, cause));
                }
                // No such port on the node: the socket never opened.
                None => io.counters.send_errors += 1,
            }
        }
        for (port, bytes, cause) in sends {
            self.transmit(node, port, bytes, Delivery::Frame, cause, now);
        }
        let Some(Kind::Core(c)) = self.nodes.get_mut(node).map(|n| &mut n.kind) else {
            return;
        };
        if let Some(Datapath {
            core: Core::Pe { wake, .. },
            ..
        }) = c.datapath.as_mut()
        {
            if next != *wake {
                *wake = next;
                if let Some(at) = next {
                    self.queue.push(at, Due::Wake(node));
                }
            }
        }
    }
}

//! Carrying out what a node asks for, as losslessd's runtime would
//! (`losslessd/src/execute.rs`): frames onto the simulated wire, measurement
//! frames timestamped with the node's clock, the NIC answered by a modelled
//! driver ([`crate::nic`]) in the order losslessd's dcbnl runs
//! (`lossless_node::dcb_device`), the state directory kept in memory, the
//! configuration file read from the text the lab wrote, the relay's data path
//! started on the node's ports ([`super::datapath`]). A measurement station's
//! session is drained the same way.

use lossless_dcbx::Instant;
use lossless_node::dcb_device;
use lossless_node::node::Output;
use lossless_node::protocol::{DaemonEvent, EventBody};
use lossless_node::state::{PersistError, StateDirProblem, StateDirReason};
use lossless_node::timestamps::{Clock, Clocks};
use lossless_wire::measure::{Measure, MessageKind};
use lossless_wire::{Frame, Payload};

use super::log::{Cause, LogEntry};
use super::node::{ifindex, port_of, Kind};
use super::queue::{Delivery, Due};
use super::{NodeId, Sim};

/// Whether a frame is a measurement response.
fn is_response(bytes: &[u8]) -> bool {
    matches!(
        Frame::parse(bytes).map(|f| f.payload),
        Ok(Payload::Measure(Measure {
            kind: MessageKind::Response,
            ..
        }))
    )
}

impl Sim {
    /// Carries out a node's outputs (frames onto the wire, the NIC, the state
    /// directory, its file, its relay), logs its events, queues its next deadline.
    pub(super) fn after(&mut self, node: NodeId) {
        loop {
            let out = match &mut self.nodes[node].kind {
                Kind::Core(c) => c.node.poll_output(),
                Kind::Station(_) => {
                    self.drain_station(node);
                    None
                }
                Kind::Transit(_) => None,
            };
            let Some(out) = out else { break };
            self.execute(node, out);
        }
        let now = self.now;
        let next = self.nodes[node].poll_timeout().map(|t| t.max(now));
        if next != self.nodes[node].scheduled {
            self.nodes[node].scheduled = next;
            if let Some(t) = next {
                self.queue.push_timer(t, node);
            }
        }
    }

    /// The node's timestamp clock at `t` (picoseconds, modulo 2^64).
    pub(super) fn stamp(&self, node: NodeId, t: Instant) -> u64 {
        picoseconds(t).wrapping_add(self.nodes[node].clock_offset)
    }

    /// Sends a measurement frame the node's core (or session) yielded: it leaves
    /// now, or a response `turnaround` after the request; its transmit timestamp
    /// reaches the core `tx_report_delay` after it left (at once when that is now).
    fn send_measure(&mut self, node: NodeId, port: usize, frame: Vec<u8>) {
        let n = &self.nodes[node];
        let depart = if n.turnaround > lossless_dcbx::Duration::ZERO && is_response(&frame) {
            self.now + n.turnaround
        } else {
            self.now
        };
        let ts = self.stamp(node, depart);
        let report = depart + self.nodes[node].tx_report_delay;
        if report == self.now {
            self.tx_stamp(node, port, &frame, ts);
        } else {
            self.queue.push(
                report,
                Due::TxStamp {
                    node,
                    port,
                    bytes: frame.clone(),
                    ts,
                },
            );
        }
        self.transmit(node, port, frame, Delivery::Measure, Cause::Core, depart);
    }

    /// A transmit timestamp reaches the core that sent the frame.
    pub(super) fn tx_stamp(&mut self, node: NodeId, port: usize, frame: &[u8], ts: u64) {
        let now = self.clock();
        match &mut self.nodes[node].kind {
            Kind::Core(c) => c
                .node
                .handle_measure_tx_timestamp(now, ifindex(port), frame, ts),
            Kind::Station(s) => s.session.handle_tx_timestamp(now.mono, frame, ts),
            Kind::Transit(_) => {}
        }
    }

    fn drain_station(&mut self, node: NodeId) {
        loop {
            let Kind::Station(s) = &mut self.nodes[node].kind else {
                return;
            };
            if let Some(frame) = s.session.poll_transmit() {
                self.send_measure(node, 0, frame);
                continue;
            }
            while let Some(e) = s.session.poll_event() {
                s.events.push(e);
            }
            return;
        }
    }

    fn execute(&mut self, node: NodeId, out: Output) {
        let now = self.clock();
        let out = match out {
            Output::Send { ifindex, frame } => {
                let at = self.now;
                return self.transmit(
                    node,
                    port_of(ifindex),
                    frame,
                    Delivery::Frame,
                    Cause::Core,
                    at,
                );
            }
            Output::SendMeasure { ifindex, frame } => {
                return self.send_measure(node, port_of(ifindex), frame);
            }
            Output::ReadLink { ifindex, frame } => {
                let link = self.nodes[node].link(port_of(ifindex));
                if let Kind::Core(c) = &mut self.nodes[node].kind {
                    c.node.handle_link_read(now, Some(link), &frame);
                }
                return;
            }
            Output::Event(record) => return self.log_event(node, record.event),
            out @ (Output::StartRelay(_) | Output::StopRelay | Output::ReadRelay { .. }) => {
                return self.execute_relay(node, out);
            }
            other => other,
        };
        let n = &mut self.nodes[node];
        let ports = &n.ports;
        let Kind::Core(c) = &mut n.kind else {
            return;
        };
        match out {
            Output::OpenMeasure { ifindex, .. } => c.node.handle_measure_opened(
                ifindex,
                Ok(Clocks {
                    rx: Clock::Software,
                    tx: Clock::Software,
                }),
            ),
            Output::ReadSpeed { ifindex, .. } => {
                let mbps = ports.get(port_of(ifindex)).and_then(|p| p.speed_mbps);
                c.node.handle_speed(now, ifindex, mbps);
            }
            Output::Probe { ifindex, name } => {
                let r = dcb_device::probe(&mut c.nic, &name);
                c.node.handle_probe(now, ifindex, r);
            }
            Output::ProgramCee {
                ifindex,
                name,
                pfc,
                pg,
            } => {
                let r = dcb_device::program_cee(&mut c.nic, &name, pfc.as_ref(), pg.as_ref());
                c.node.handle_programmed(now, ifindex, r);
            }
            Output::ProgramIeee {
                ifindex,
                name,
                program,
            } => {
                let r = c.nic.program_ieee(&name, &program);
                c.node.handle_ieee_programmed(now, ifindex, r);
            }
            Output::ReadNic { ifindex, name, cee } => {
                let r = dcb_device::read_nic(&mut c.nic, &name, cee);
                c.node.handle_nic_read(now, ifindex, r);
            }
            Output::SetDcbxMode {
                ifindex,
                name,
                version,
            } => {
                let r = dcb_device::set_dcbx_mode(&mut c.nic, &name, version);
                c.node.handle_dcbx_mode_set(now, ifindex, version, r);
            }
            Output::ApplyHeadroom {
                ifindex,
                name,
                pfc_enabled,
                pfc_delay_bits,
                read_buffer,
            } => {
                let (r, ieee) =
                    c.nic
                        .apply_headroom(&name, pfc_enabled, pfc_delay_bits, read_buffer);
                c.node
                    .handle_headroom_applied(now, ifindex, pfc_delay_bits, r, ieee);
            }
            Output::SetBuffer {
                ifindex,
                name,
                buffer,
            } => {
                let r = dcb_device::write_buffer(&mut c.nic, &name, &buffer);
                c.node.handle_buffer_written(now, ifindex, r);
            }
            Output::Persist { state } => {
                let r = if c.persist_fails {
                    Err(PersistError::NotWritten(StateDirProblem {
                        reason: StateDirReason::NotWritable,
                        path: "lab".into(),
                        message: "lab: the state directory refuses writes".into(),
                    }))
                } else {
                    c.store = state;
                    Ok(())
                };
                c.node.handle_persisted(now, r);
            }
            Output::ReadConfig => {
                let text = c.config_text(&ports[0].name);
                c.node.handle_config(now, Ok(Some(text)));
            }
            Output::ReadPfc { ifindex, .. } => {
                let r = c.nic.read_pfc(now.mono);
                c.node.handle_pfc_counters(now, ifindex, r);
            }
            Output::RoceHost { ifindex, write, .. } => {
                let (host, written) = c.nic.roce.write_and_read(&write);
                c.node.handle_roce_host(now, ifindex, host, written);
            }
            Output::Reply { id, response } => c.replies.push((id, response)),
            Output::Send { .. }
            | Output::SendMeasure { .. }
            | Output::ReadLink { .. }
            | Output::Event(_)
            | Output::StartRelay(_)
            | Output::StopRelay
            | Output::ReadRelay { .. }
            | Output::Open { .. }
            | Output::ReceiveAlone { .. }
            | Output::Close { .. }
            | Output::CloseMeasure { .. } => {}
        }
    }

    fn log_event(&mut self, node: NodeId, event: EventBody) {
        let at = self.now;
        let entry = match event {
            EventBody::Agent(event) => LogEntry::Event { at, node, event },
            EventBody::Daemon(DaemonEvent::HeadroomMeasured { result }) => LogEntry::Measure {
                at,
                node,
                event: result,
            },
            EventBody::Daemon(event) => LogEntry::Node { at, node, event },
            EventBody::Pfc(event) => LogEntry::Pfc { at, node, event },
        };
        self.push_log(entry);
    }
}

/// The virtual clock as a measurement timestamp (picoseconds, modulo 2^64).
pub(super) fn picoseconds(t: Instant) -> u64 {
    (t.since_epoch().as_nanos() as u64).wrapping_mul(1000)
}

//! Adaptive headroom on the node's ports: the measurement's sockets and frames, the
//! line rate, and programming what it sized (the IEEE PFC delay, the DCB buffer).

use lossless_headroom::session::MeasureEvent;
use tracing::{info, warn};

use super::{Node, Now, Output, PortId};
use crate::hardware::{HardwareError, IeeeReadback};
use crate::headroom::{pfc_delay_bits, Change, HeadroomHardware, PortHeadroom};
use crate::port::{round_ids, Port};
use crate::protocol::{DaemonEvent, EventBody, Hardware};
use crate::timestamps::{Clock, Clocks};

impl Node {
    /// The measurement follows the agent (link, both ends capable); its frames go out,
    /// its results are sized and, through the hysteresis, programmed.
    pub(super) fn after_headroom(&mut self, now: Now, id: PortId) {
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let ifindex = port.ifindex;
        let dcbnl = matches!(port.hardware, Hardware::Dcbnl { .. });
        let Some(h) = &mut port.headroom else {
            return;
        };
        h.session.follow(now.mono, &port.agent);
        let mut changes: Vec<Change> = Vec::new();
        let mut events = Vec::new();
        while let Some(frame) = h.session.poll_transmit() {
            self.outputs
                .push_back(Output::SendMeasure { ifindex, frame });
        }
        while let Some(ev) = h.session.poll_event() {
            if let Some(c) = h.on_event(now.mono, &ev) {
                changes.push(c);
            }
            events.push(ev);
        }
        let (speed, _) = h.speed();
        let mut reported = None;
        if !changes.is_empty() {
            if dcbnl {
                if let Some(out) = apply_headroom(port) {
                    self.outputs.push_back(out);
                }
            } else if let Some(h) = &mut port.headroom {
                h.hardware = match &port.hardware {
                    Hardware::Unsupported { reason } => HeadroomHardware::Unsupported {
                        reason: reason.clone(),
                    },
                    Hardware::Probing => HeadroomHardware::Pending,
                    _ => HeadroomHardware::ReportOnly,
                };
                reported = Some(hardware_event(port));
            }
        }
        if events.is_empty() && changes.is_empty() && reported.is_none() {
            return;
        }
        // The name, for what goes out: logs and events.
        let name = port.name.clone();
        let name = name.as_str();
        for ev in &events {
            log_measurement(name, ev, speed.is_some());
            let body = EventBody::Daemon(DaemonEvent::HeadroomMeasured { result: ev.clone() });
            self.publish(now, name, body);
        }
        for c in changes {
            info!(port = %name, headroom_bytes = c.need.headroom.bytes, cells = c.need.headroom.cells,
                decision = %super::log::name(&c.decision), "headroom sized");
            let body = EventBody::Daemon(DaemonEvent::HeadroomChanged {
                bytes: c.need.headroom.bytes,
                cells: c.need.headroom.cells,
                decision: c.decision,
            });
            self.publish(now, name, body);
        }
        if let Some(body) = reported {
            self.publish(now, name, body);
        }
    }

    /// Starts or stops a port's measurement to match its settings, or hands the
    /// session its new settings.
    pub(super) fn sync_headroom(&mut self, now: Now, id: PortId) {
        let seq_base = self.seq_base();
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let want = port.settings.dcbx.headroom_measurement;
        match (&mut port.headroom, want) {
            (None, true) => {
                port.headroom = PortHeadroom::new(
                    port.settings.headroom,
                    port.agent.mac(),
                    round_ids(seq_base),
                )
                .map(Box::new);
                let (ifindex, up) = (port.ifindex, port.agent.link_up());
                let name = up.then(|| port.name.clone());
                self.open_measure(id);
                if let Some(name) = name {
                    self.outputs.push_back(Output::ReadSpeed { ifindex, name });
                }
            }
            (Some(_), false) => {
                port.headroom = None;
                self.outputs.push_back(Output::CloseMeasure {
                    ifindex: port.ifindex,
                });
            }
            (Some(h), true) => {
                let reopen = h.settings.timestamps != port.settings.headroom.timestamps;
                h.set_settings(now.mono, port.settings.headroom);
                if reopen {
                    self.open_measure(id);
                }
            }
            (None, false) => {}
        }
    }

    /// Asks for the measurement socket of a port that measures.
    pub(super) fn open_measure(&mut self, id: PortId) {
        if let Some(p) = self.ports.get(id) {
            if let Some(h) = &p.headroom {
                self.outputs.push_back(Output::OpenMeasure {
                    ifindex: p.ifindex,
                    name: p.name.clone(),
                    timestamps: h.settings.timestamps,
                });
            }
        }
    }

    /// The measuring port on `ifindex`: its id, its name (for logs) and its headroom.
    fn headroom_mut(&mut self, ifindex: u32) -> Option<(PortId, &str, &mut PortHeadroom)> {
        let id = self.id_of(ifindex)?;
        let port = self.ports.get_mut(id)?;
        Some((id, &port.name, port.headroom.as_mut()?))
    }

    /// The answer to [`Output::OpenMeasure`]: the clocks the socket timestamps with, or
    /// why it could not be opened.
    pub fn handle_measure_opened(
        &mut self,
        ifindex: u32,
        result: Result<Clocks, super::MeasureOpenError>,
    ) {
        let Some((_, name, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        match result {
            Ok(c) => {
                info!(port = %name, rx = %super::log::name(&c.rx), tx = %super::log::name(&c.tx),
                    "measurement socket open");
                h.clocks = Some(c);
                h.socket_error = None;
                h.session.set_hardware_timestamps(c.rx == Clock::Hardware);
            }
            Err(e) => {
                warn!(port = %name, error = %e, "cannot open the measurement socket");
                h.socket_error = Some(e.to_string());
            }
        }
    }

    /// A measurement frame with its receive timestamp (None: the kernel gave none, and
    /// the frame cannot be used as a sample).
    pub fn handle_measure_frame(&mut self, now: Now, ifindex: u32, frame: &[u8], rx: Option<u64>) {
        let Some((id, name, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        match rx {
            Some(rx) => h.session.handle_frame(now.mono, frame, rx),
            None => {
                h.frames_without_timestamp += 1;
                warn!(port = %name, "measurement frame without a receive timestamp: not used");
            }
        }
        self.after_headroom(now, id);
    }

    /// The transmit timestamp of a measurement frame we sent.
    pub fn handle_measure_tx_timestamp(&mut self, now: Now, ifindex: u32, frame: &[u8], tx: u64) {
        let Some((id, _, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        h.session.handle_tx_timestamp(now.mono, frame, tx);
        self.after_headroom(now, id);
    }

    /// The answer to [`Output::ReadSpeed`]: Mb/s, None when the kernel does not know.
    pub fn handle_speed(&mut self, now: Now, ifindex: u32, mbps: Option<u64>) {
        let Some((id, name, h)) = self.headroom_mut(ifindex) else {
            return;
        };
        if h.set_kernel_speed(now.mono, mbps) {
            info!(port = %name, mbps, "line rate changed: measuring again");
        }
        self.after_headroom(now, id);
    }

    /// The answer to [`Output::ApplyHeadroom`]: how setting the PFC delay went and,
    /// when asked for, the IEEE configuration read after it (for the DCB buffer).
    pub fn handle_headroom_applied(
        &mut self,
        now: Now,
        ifindex: u32,
        delay: u16,
        result: Result<(), HardwareError>,
        ieee: Option<Result<IeeeReadback, HardwareError>>,
    ) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        if let Err(e) = &result {
            port.hw_errors.count(e.kind);
        }
        let pfc_enabled = oper_pfc(port);
        let Some(h) = &mut port.headroom else {
            return;
        };
        h.hardware = match result {
            Ok(()) => HeadroomHardware::Applied {
                pfc_delay_bits: delay,
                saturated: h
                    .applied_need()
                    .is_some_and(|n| n.x_bit_times > u64::from(u16::MAX)),
            },
            Err(error) => {
                warn!(port = %name, %error, "programming the headroom failed");
                HeadroomHardware::Error {
                    error: error.to_string(),
                }
            }
        };
        if let Some(ieee) = ieee {
            if let Some(buffer) = h.buffer_read(pfc_enabled, ieee) {
                let sizes = buffer.buffer_size.map(|b| b.to_string()).join(",");
                info!(port = %name, sizes = %sizes, "writing the DCB buffer");
                self.outputs.push_back(Output::SetBuffer {
                    ifindex,
                    name,
                    buffer,
                });
                return;
            }
        }
        let body = hardware_event(port);
        self.publish(now, &name, body);
    }

    /// The answer to [`Output::SetBuffer`]: the IEEE configuration read back after the
    /// write, or why the write or the read failed.
    pub fn handle_buffer_written(
        &mut self,
        now: Now,
        ifindex: u32,
        readback: Result<IeeeReadback, HardwareError>,
    ) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
        if let Err(e) = &readback {
            port.hw_errors.count(e.kind);
        }
        let Some(h) = &mut port.headroom else {
            return;
        };
        h.buffer_written(readback);
        let body = hardware_event(port);
        self.publish(now, &name, body);
    }
}

fn log_measurement(name: &str, ev: &MeasureEvent, speed_known: bool) {
    match ev {
        MeasureEvent::Measured(m) => {
            info!(port = %name, round_trip_ns = super::log::round2(m.round_trip.0 as f64 / 1e3),
                valid = m.valid, "link delay measured");
            if !speed_known {
                warn!(port = %name, "line rate unknown: set headroom.speed to size the headroom");
            }
        }
        MeasureEvent::Failed {
            valid,
            sent,
            missing_t1,
            missing_response,
            missing_follow_up,
            ..
        } => {
            warn!(port = %name, valid, sent, missing_t1, missing_response, missing_follow_up,
                "link delay measurement failed: too few complete exchanges");
        }
    }
}

/// The PFC priorities the NIC runs now: the operational ones, if PFC is on, less those
/// the PFC watchdog turned off.
pub(super) fn oper_pfc(port: &Port) -> u8 {
    port.agent.applied_pfc().0 & !port.pfc.forced_off().0
}

/// Programming of the headroom the port holds, on a port whose NIC answered dcbnl.
pub(super) fn apply_headroom(port: &Port) -> Option<Output> {
    if !matches!(port.hardware, Hardware::Dcbnl { .. }) {
        return None;
    }
    let h = port.headroom.as_ref()?;
    let need = h.applied_need()?;
    Some(Output::ApplyHeadroom {
        ifindex: port.ifindex,
        name: port.name.clone(),
        pfc_enabled: oper_pfc(port),
        pfc_delay_bits: pfc_delay_bits(need),
        read_buffer: h.settings.buffer,
    })
}

/// What reached the NIC for the port's headroom, as an event.
fn hardware_event(port: &Port) -> EventBody {
    let (pfc_delay, buffer) = match &port.headroom {
        Some(h) => (
            serde_json::to_value(&h.hardware).unwrap_or_default(),
            serde_json::to_value(h.buffer_state(port.settings.apply, &port.hardware))
                .unwrap_or_default(),
        ),
        None => Default::default(),
    };
    EventBody::Daemon(DaemonEvent::HeadroomHardware { pfc_delay, buffer })
}

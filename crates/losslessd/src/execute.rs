//! Carrying out the node's outputs: sockets opened, frames sent, the NIC programmed,
//! state persisted, the file read, the relay started, replies sent. Each answer goes
//! back to the node at once, as the typed input it asked for.

use std::sync::Arc;

use lossless_node::dcb_device;
use lossless_node::hardware::{HardwareError, HardwareErrorKind};
use lossless_node::node::{Node, Output};
use lossless_node::timestamps::Clock as TsClock;
use lossless_sys::timestamp::realtime_ps;
use tracing::{debug, error, warn};

use crate::clock::Clock;
use crate::config_file;
use crate::convert;
use crate::io::Io;
use crate::measure_io::MeasureIo;
use crate::relay::RelayRuntime;

/// Carries out everything the node asked for, including what the answers produce.
pub(crate) fn execute(node: &mut Node, io: &mut Io, clock: &Clock) {
    while let Some(out) = node.poll_output() {
        let started = std::time::Instant::now();
        let kind = output_kind(&out);
        execute_one(node, io, clock, out);
        // Everything here runs on the one thread that also carries the frames: a
        // blocked loop delays measurement answers and LLDPDUs.
        let ms = (started.elapsed().as_secs_f64() * 1e5).round() / 100.0;
        if ms > 100.0 {
            warn!(output = %kind, ms, "the event loop was blocked");
        } else if ms > 10.0 {
            debug!(output = %kind, ms, "the event loop was blocked");
        }
    }
}

fn output_kind(out: &Output) -> &'static str {
    match out {
        Output::Open { .. } => "open",
        Output::ReceiveAlone { .. } => "receive_alone",
        Output::ReadLink { .. } => "read_link",
        Output::Close { .. } => "close",
        Output::Send { .. } => "send",
        Output::Probe { .. } => "probe",
        Output::ProgramCee { .. } => "program_cee",
        Output::ProgramIeee { .. } => "program_ieee",
        Output::ReadNic { .. } => "read_nic",
        Output::SetDcbxMode { .. } => "set_dcbx_mode",
        Output::OpenMeasure { .. } => "open_measure",
        Output::CloseMeasure { .. } => "close_measure",
        Output::SendMeasure { .. } => "send_measure",
        Output::ReadSpeed { .. } => "read_speed",
        Output::ApplyHeadroom { .. } => "apply_headroom",
        Output::SetBuffer { .. } => "set_buffer",
        Output::Persist { .. } => "persist",
        Output::ReadConfig => "read_config",
        Output::StartRelay(_) => "start_relay",
        Output::StopRelay => "stop_relay",
        Output::ReadRelay { .. } => "read_relay",
        Output::ReadPfc { .. } => "read_pfc",
        Output::RoceHost { .. } => "roce_host",
        Output::Reply { .. } => "reply",
        Output::Event(_) => "event",
    }
}

fn execute_one(node: &mut Node, io: &mut Io, clock: &Clock, out: Output) {
    match out {
        Output::Open { ifindex, name } => match io.ports.open(ifindex) {
            Ok(rcvbuf) => node.handle_socket_stats(ifindex, 0, rcvbuf),
            Err(e) => {
                error!(port = %name, error = %e, "cannot receive on the port: shared packet sockets")
            }
        },
        Output::ReceiveAlone { ifindex } => match io.ports.receive_alone(ifindex) {
            Ok(rcvbuf) => node.handle_socket_stats(ifindex, 0, rcvbuf),
            Err(e) => {
                error!(ifindex, error = %e,
                    retry_s = lossless_node::node::OWN_SOCKET_RETRY.as_secs(),
                    "cannot open the port's own packet socket: it stays on the shared ones");
                node.handle_own_socket_failed(clock.now(), ifindex);
            }
        },
        Output::ReadLink { ifindex, frame } => {
            let link = lossless_sys::link::get_link(ifindex)
                .map_err(|e| warn!(ifindex, error = %e, "cannot read the link"))
                .ok()
                .map(convert::link);
            node.handle_link_read(clock.now(), link, &frame);
        }
        Output::Close { ifindex } => io.close_port(ifindex),
        Output::Send { ifindex, frame } => {
            if io.ports.send(ifindex, &frame).is_err() {
                node.handle_io_error(ifindex, true);
            }
        }
        Output::Probe { ifindex, name } => {
            let result = dcb_device::probe(&mut io.dcb, &name);
            node.handle_probe(clock.now(), ifindex, result);
        }
        Output::ProgramCee {
            ifindex,
            name,
            pfc,
            pg,
        } => {
            let result = dcb_device::program_cee(&mut io.dcb, &name, pfc.as_ref(), pg.as_ref());
            node.handle_programmed(clock.now(), ifindex, result);
        }
        Output::ProgramIeee {
            ifindex,
            name,
            program,
        } => {
            let outcome = dcb_device::program_ieee(&mut io.dcb, &name, &program);
            node.handle_ieee_programmed(clock.now(), ifindex, outcome);
        }
        Output::ReadNic { ifindex, name, cee } => {
            let result = dcb_device::read_nic(&mut io.dcb, &name, cee);
            node.handle_nic_read(clock.now(), ifindex, result);
        }
        Output::SetDcbxMode {
            ifindex,
            name,
            version,
        } => {
            let result = dcb_device::set_dcbx_mode(&mut io.dcb, &name, version);
            node.handle_dcbx_mode_set(clock.now(), ifindex, version, result);
        }
        Output::OpenMeasure {
            ifindex,
            name,
            timestamps,
        } => {
            let mode = convert::timestamp_mode(timestamps);
            match MeasureIo::open(ifindex, &name, mode, &io.input) {
                Ok((m, clocks)) => {
                    if let Some(old) = io.measure.insert(ifindex, m) {
                        io.closer.close(old.socket, old.reader);
                    }
                    node.handle_measure_opened(ifindex, Ok(clocks));
                }
                Err(e) => node.handle_measure_opened(ifindex, Err(e.into())),
            }
        }
        Output::CloseMeasure { ifindex } => io.close_measure(ifindex),
        Output::SendMeasure { ifindex, frame } => {
            let Some(m) = io.measure.get(&ifindex) else {
                return;
            };
            let sock = m.socket.get_ref();
            match sock.send(&frame) {
                // No driver timestamp: our own clock, right after the send.
                Ok(()) if convert::clocks(sock.clocks()).tx == TsClock::Userspace => {
                    node.handle_measure_tx_timestamp(clock.now(), ifindex, &frame, realtime_ps());
                }
                Ok(()) => {}
                Err(_) => node.handle_io_error(ifindex, true),
            }
        }
        Output::ReadSpeed { ifindex, name } => {
            node.handle_speed(clock.now(), ifindex, read_speed(&name));
        }
        Output::ApplyHeadroom {
            ifindex,
            name,
            pfc_enabled,
            pfc_delay_bits,
            read_buffer,
        } => {
            let (result, ieee) = dcb_device::apply_headroom(
                &mut io.dcb,
                &name,
                pfc_enabled,
                pfc_delay_bits,
                read_buffer,
            );
            node.handle_headroom_applied(clock.now(), ifindex, pfc_delay_bits, result, ieee);
        }
        Output::SetBuffer {
            ifindex,
            name,
            buffer,
        } => {
            let readback = dcb_device::write_buffer(&mut io.dcb, &name, &buffer);
            node.handle_buffer_written(clock.now(), ifindex, readback);
        }
        Output::Persist { state } => {
            let result = io.state.save(&state);
            node.handle_persisted(clock.now(), result);
        }
        Output::ReadConfig => {
            let read = match &io.config_path {
                Some(path) => config_file::read(path).map(Some),
                None => Ok(None),
            };
            node.handle_config(clock.now(), read);
        }
        Output::StartRelay(section) => {
            // Stop the old thread (and close its sockets) before the new one opens.
            io.relay = None;
            let result = RelayRuntime::start(*section).map(|r| io.relay = Some(r));
            node.handle_relay_started(clock.now(), result.map_err(Into::into));
        }
        Output::StopRelay => io.relay = None,
        Output::ReadRelay { id } => {
            let show = io.relay.as_ref().map(|r| r.show());
            node.handle_relay_status(clock.now(), id, show);
        }
        Output::RoceHost {
            ifindex,
            name,
            write,
        } => {
            if !io.roce.request(ifindex, name.clone(), write) {
                error!(port = %name, "the RoCE host settings thread is gone: not read");
            }
        }
        Output::ReadPfc { ifindex, name } => {
            if !io.pfc.request(ifindex, name) {
                let e =
                    HardwareError::new(HardwareErrorKind::Other, "the PFC counter thread is gone");
                node.handle_pfc_counters(clock.now(), ifindex, Err(e));
            }
        }
        Output::Reply { id, response } => {
            if let Some(reply) = io.replies.remove(&id) {
                let sub = (reply.follow && response.ok).then(|| io.events.subscribe());
                let _ = reply.tx.send((response, sub));
            }
        }
        Output::Event(record) => {
            if let Ok(line) = serde_json::to_string(&record) {
                let _ = io.events.send(Arc::from(line));
            }
        }
    }
}

/// The line rate the kernel reports, Mb/s (`/sys/class/net/IF/speed`; -1 or absent
/// when it does not know, e.g. link down or a driver without ethtool link settings).
fn read_speed(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{name}/speed")).ok()?;
    text.trim()
        .parse::<i64>()
        .ok()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|v| *v > 0)
}

//! Carrying out the node's outputs: sockets opened, frames sent, the NIC programmed,
//! state persisted, the file read, the relay started, replies sent. Each answer goes
//! back to the node at once, as the typed input it asked for.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use lossless_node::hardware::{
    HardwareError, HardwareErrorKind, IeeeOutcome, IeeeProgram, NicState, Trust, TrustOutcome,
};
use lossless_node::node::{Node, Output};
use lossless_node::timestamps::Clock as TsClock;
use lossless_sys::dcbnl::{AppSelector, DcbError, Dcbnl, DcbxMode, PgSetting};
use lossless_sys::reactor::async_fd_with_interest;
use lossless_sys::timestamp::{realtime_ps, MeasureSocket};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::{broadcast, mpsc, OwnedSemaphorePermit};
use tokio::task::JoinHandle;
use tracing::{debug, error, warn};

use crate::closer::Closer;
use crate::config_file;
use crate::convert;
use crate::pfc_reader::{PfcRead, PfcReader};
use crate::port_sockets::{FrameBatch, PortSockets};
use crate::relay::RelayRuntime;
use crate::runtime::{Clock, Replies};
use crate::state_dir::StateDir;

/// What the socket tasks hand the core task.
pub(crate) enum Input {
    /// The frames one `recvmmsg` read (a shared socket's or a port's own); the permit
    /// returns to the socket's reader when the core has handled them.
    Frames(FrameBatch, OwnedSemaphorePermit),
    RxError(u32),
    /// A measurement frame and its receive timestamp.
    Measure(u32, Vec<u8>, Option<u64>),
    /// A measurement frame we sent, back from the error queue with its timestamp.
    MeasureTx(u32, Vec<u8>, u64),
    /// Ports' PFC counters, read by the counter thread (a batch: all it was asked
    /// for while it was busy).
    Pfc(Vec<PfcRead>),
    /// A port's RoCE host settings, written and read by their thread.
    Roce(Box<crate::roce_worker::RoceRead>),
}

struct MeasureIo {
    socket: Arc<AsyncFd<MeasureSocket>>,
    reader: JoinHandle<()>,
}

/// Everything the runtime owns for the node.
pub(crate) struct Io {
    ports: PortSockets,
    measure: HashMap<u32, MeasureIo>,
    input: mpsc::Sender<Input>,
    pub(crate) events: broadcast::Sender<Arc<str>>,
    dcbnl: Option<Dcbnl>,
    pub(crate) state: StateDir,
    config_path: Option<PathBuf>,
    pub(crate) relay: Option<RelayRuntime>,
    pub(crate) replies: Replies,
    /// Sockets of ports gone, being closed off the loop.
    closer: Closer,
    pfc: PfcReader,
    /// The RoCE host settings beyond DCB, under the `--sysfs` root and through ethtool,
    /// on a thread of their own.
    roce: crate::roce_worker::RoceWorker,
}

impl Io {
    pub(crate) fn new(
        input: mpsc::Sender<Input>,
        state: StateDir,
        config: Option<PathBuf>,
        rcvbuf: usize,
        host: lossless_host::Host,
    ) -> Io {
        // The RDMA hw counters are read with the PFC counters, under the same root.
        let sysfs = host.root.path.clone();
        Io {
            roce: crate::roce_worker::RoceWorker::for_inputs(input.clone(), host),
            pfc: PfcReader::for_inputs(input.clone(), sysfs),
            ports: PortSockets::new(input.clone(), rcvbuf),
            measure: HashMap::new(),
            input,
            events: broadcast::channel(4096).0,
            dcbnl: None,
            state,
            config_path: config,
            relay: None,
            replies: HashMap::new(),
            closer: Closer::default(),
        }
    }

    /// Hands the node what the kernel counted on the packet sockets since the last
    /// reading: frames dropped on a full receive buffer (`PACKET_STATISTICS`, read
    /// and reset), and the buffers' sizes.
    pub(crate) fn read_socket_stats(&self, node: &mut Node) {
        self.ports.read_stats(node);
    }

    fn close_port(&mut self, ifindex: u32) {
        self.ports.close(ifindex, &mut self.closer);
        self.close_measure(ifindex);
    }

    fn close_measure(&mut self, ifindex: u32) {
        if let Some(m) = self.measure.remove(&ifindex) {
            self.closer.close(m.socket, m.reader);
        }
    }

    /// Closes every socket still open, all at once, and waits for them (`limit` at
    /// most): the last step before the process exits.
    pub(crate) async fn close_all(&mut self, limit: std::time::Duration) {
        self.ports.close_all(&mut self.closer);
        let measured: Vec<u32> = self.measure.keys().copied().collect();
        for ifindex in measured {
            self.close_measure(ifindex);
        }
        self.closer.finish(limit).await;
    }

    pub(crate) fn handle_input(&mut self, node: &mut Node, clock: &Clock, input: Input) {
        match input {
            Input::Frames(batch, _permit) => self.ports.deliver(node, clock.now(), &batch),
            Input::RxError(ifindex) => node.handle_io_error(ifindex, false),
            Input::Measure(ifindex, frame, rx) => {
                node.handle_measure_frame(clock.now(), ifindex, &frame, rx)
            }
            Input::MeasureTx(ifindex, frame, tx) => {
                node.handle_measure_tx_timestamp(clock.now(), ifindex, &frame, tx)
            }
            // Judged on when each was taken, not on when the loop got to it.
            Input::Pfc(reads) => {
                for r in reads {
                    node.handle_pfc_counters(clock.at(r.taken), r.ifindex, r.result);
                }
            }
            Input::Roce(r) => node.handle_roce_host(clock.now(), r.ifindex, r.host, r.written),
        }
    }

    fn with_dcbnl<T>(
        &mut self,
        f: impl FnOnce(&mut Dcbnl) -> Result<T, DcbError>,
    ) -> Result<T, HardwareError> {
        let d = self.dcbnl()?;
        f(d).map_err(convert::hardware_error)
    }

    /// The dcbnl socket, opened at first use.
    fn dcbnl(&mut self) -> Result<&mut Dcbnl, HardwareError> {
        if self.dcbnl.is_none() {
            let d = Dcbnl::open().map_err(|e| {
                HardwareError::new(HardwareErrorKind::Other, format!("dcbnl socket: {e}"))
            })?;
            self.dcbnl = Some(d);
        }
        self.dcbnl
            .as_mut()
            .ok_or_else(|| HardwareError::new(HardwareErrorKind::Other, "dcbnl socket: not open"))
    }
}

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
            // DCB_CMD_IEEE_GET, not GSTATE: the kernel answers it for every driver with
            // dcbnl ops, and bnxt_en and hns3 have the IEEE ops without the CEE ones
            // (GSTATE is EOPNOTSUPP there, a NIC that takes IEEE 802.1Qaz all the same).
            let result = io.with_dcbnl(|d| d.get_ieee_state(&name).map(|_| ()));
            node.handle_probe(clock.now(), ifindex, result);
        }
        Output::ProgramCee {
            ifindex,
            name,
            pfc,
            pg,
        } => {
            let result = io.with_dcbnl(|d| program_cee(d, &name, pfc.as_ref(), pg.as_ref()));
            node.handle_programmed(clock.now(), ifindex, result);
        }
        Output::ProgramIeee {
            ifindex,
            name,
            program,
        } => {
            let outcome = program_ieee(io, &name, &program);
            node.handle_ieee_programmed(clock.now(), ifindex, outcome);
        }
        Output::ReadNic { ifindex, name, cee } => {
            let result = io.with_dcbnl(|d| {
                let mut nic = convert::nic_state(d.get_ieee_state(&name)?);
                if cee {
                    nic.cee = read_cee(d, &name);
                }
                Ok(nic)
            });
            node.handle_nic_read(clock.now(), ifindex, result);
        }
        Output::SetDcbxMode {
            ifindex,
            name,
            version,
        } => {
            let flag = match version {
                lossless_dcbx::Version::Ieee => DcbxMode::VER_IEEE,
                lossless_dcbx::Version::Cee => DcbxMode::VER_CEE,
            };
            let want = DcbxMode::HOST | flag;
            let result = io.with_dcbnl(|d| set_dcbx_mode(d, &name, want));
            node.handle_dcbx_mode_set(clock.now(), ifindex, version, result);
        }
        Output::OpenMeasure {
            ifindex,
            name,
            timestamps,
        } => {
            let mode = convert::timestamp_mode(timestamps);
            let opened = MeasureSocket::open(ifindex, &name, mode).and_then(|s| {
                let clocks = s.clocks();
                let socket = Arc::new(async_fd_with_interest(
                    s,
                    Interest::READABLE | Interest::ERROR,
                )?);
                let reader = tokio::spawn(read_measure(ifindex, socket.clone(), io.input.clone()));
                Ok((MeasureIo { socket, reader }, clocks))
            });
            match opened {
                Ok((m, clocks)) => {
                    if let Some(old) = io.measure.insert(ifindex, m) {
                        io.closer.close(old.socket, old.reader);
                    }
                    node.handle_measure_opened(ifindex, Ok(convert::clocks(clocks)));
                }
                Err(e) => node.handle_measure_opened(ifindex, Err(e.to_string())),
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
            let result = io.with_dcbnl(|d| d.set_ieee_pfc(&name, pfc_enabled, pfc_delay_bits));
            let ieee = read_buffer.then(|| {
                io.with_dcbnl(|d| d.get_ieee(&name))
                    .map(convert::ieee_readback)
            });
            node.handle_headroom_applied(clock.now(), ifindex, pfc_delay_bits, result, ieee);
        }
        Output::SetBuffer {
            ifindex,
            name,
            buffer,
        } => {
            let buffer = convert::sys_buffer(&buffer);
            let readback = io
                .with_dcbnl(|d| {
                    d.set_dcb_buffer(&name, &buffer)?;
                    d.get_ieee(&name)
                })
                .map(convert::ieee_readback);
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
            node.handle_relay_started(clock.now(), result.map_err(|e| e.to_string()));
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

/// Programs operational PFC and PG the way a CEE driver expects: DCB on,
/// per-priority PFC and its state, PG for both directions, then SET_ALL.
fn program_cee(
    d: &mut Dcbnl,
    ifname: &str,
    pfc: Option<&lossless_wire::cee::PfcConfig>,
    pg: Option<&lossless_wire::cee::PgConfig>,
) -> Result<(), DcbError> {
    // Drivers without `setstate` (mlx5: DCB is always on there) answer EOPNOTSUPP;
    // their PFC and PG are set all the same.
    match d.set_state(ifname, true) {
        Err(DcbError::Unsupported { .. }) => {}
        other => other?,
    }
    let mut prios = [false; 8];
    if let Some(pfc) = pfc {
        for p in pfc.priorities.priorities() {
            prios[usize::from(p)] = true;
        }
    }
    d.set_pfc(ifname, prios)?;
    d.set_pfc_state(ifname, pfc.is_some())?;
    // A driver without the PG setters dcbnl.c asks for (mlx5 has no receive ones):
    // PFC is committed all the same, and the PG's refusal reported after.
    let pg = match pg {
        Some(pg) => d.set_pg(
            ifname,
            &PgSetting {
                pgid: pg.pgid,
                percent: pg.percent,
            },
        ),
        None => Ok(()),
    };
    if !matches!(pg, Ok(()) | Err(DcbError::Unsupported { .. })) {
        return pg;
    }
    d.set_all(ifname)?;
    pg
}

/// Programs IEEE 802.1Qaz, each part in a request of its own so that one the driver
/// refuses (mlx5 takes DSCP APP entries only; ice answers success with a positive
/// status) neither hides nor blocks the others: each APP entry added, each of ours
/// withdrawn (one IEEE_DEL each), the trust order (a driver without a trust table is
/// an answer, not a failure), then ETS and PFC (keeping the delay allowance the
/// headroom set). Then reads back what the NIC holds.
fn program_ieee(io: &mut Io, ifname: &str, p: &IeeeProgram) -> IeeeOutcome {
    let d = match io.dcbnl() {
        Ok(d) => d,
        Err(e) => return IeeeOutcome::failed(p, &e),
    };
    // One IEEE_GET before, one after (each may cost a firmware command on mlx5):
    // what the kernel holds, whether the driver has a trust table, the delay to keep.
    let before = match d.get_ieee_state(ifname) {
        Ok(s) => s,
        Err(e) => return IeeeOutcome::failed(p, &convert::hardware_error(e)),
    };
    let part = |r: Result<(), DcbError>| r.map_err(convert::hardware_error);
    let each = |r: Result<lossless_sys::dcbnl::AppAnswers, DcbError>,
                asked: &[lossless_wire::ieee::AppPriority]| match r {
        Ok(list) => list
            .into_iter()
            .map(|(a, r)| (convert::app_priority(a), part(r)))
            .collect(),
        Err(e) => {
            let e = convert::hardware_error(e);
            asked.iter().map(|a| (*a, Err(e.clone()))).collect()
        }
    };
    let apps_added = each(
        d.add_ieee_apps_each(ifname, &convert::dcb_apps(&p.app_add), &before.apps),
        &p.app_add,
    );
    let apps_deleted = each(
        d.del_ieee_apps_each(ifname, &convert::dcb_apps(&p.app_del), &before.apps),
        &p.app_del,
    );
    let trust = match p.trust {
        None => Ok(TrustOutcome::Untouched),
        Some(trust) => {
            let order: &[AppSelector] = match trust {
                Trust::DscpThenPcp => &[AppSelector::DSCP, AppSelector::PCP],
                Trust::Pcp => &[AppSelector::PCP],
            };
            match d.set_app_trust_known(ifname, order, before.trust.is_some()) {
                Ok(()) => Ok(TrustOutcome::Set),
                Err(DcbError::NotReported { .. }) => Ok(TrustOutcome::Unsupported),
                Err(e) => Err(convert::hardware_error(e)),
            }
        }
    };
    // ETS and PFC last: ice switches a port to DSCP QoS at its first DSCP entry and
    // rewrites ETS and PFC then (`ice_dcbnl_setapp`: every class ETS, class 0 at
    // 100 %, the others at 0 %); sent after, ours is what the NIC runs.
    let ets = p
        .ets
        .as_ref()
        .map(|ets| part(d.set_ieee_ets(ifname, &convert::ieee_ets(ets))));
    // The delay allowance the headroom set is kept (a driver without ieee_getpfc
    // leaves it unknown: refused, as before).
    let pfc = part(match before.pfc {
        Some(pfc) => d.set_ieee_pfc(ifname, p.pfc_enabled, pfc.delay),
        None => Err(DcbError::NotReported {
            ifname: ifname.to_owned(),
            cmd: lossless_sys::dcbnl::DcbCmd::IeeeGet,
            what: "DCB_ATTR_IEEE_PFC",
            why: "it has no ieee_getpfc, so the delay to keep is unknown",
        }),
    });
    let nic = Some(read_nic(d, ifname));
    IeeeOutcome {
        ets,
        pfc,
        apps_added,
        apps_deleted,
        trust,
        nic,
    }
}

/// Tells the NIC the host runs DCBX in `want`'s version. A driver already in that
/// mode is not asked (ice answers a request for the mode it has with
/// ICE_DCB_NO_HW_CHG, a non-zero status); a non-zero answer is taken for a refusal
/// only when the mode read back is not the one asked for.
fn set_dcbx_mode(d: &mut Dcbnl, ifname: &str, want: DcbxMode) -> Result<(), DcbError> {
    if matches!(d.get_dcbx(ifname), Ok(m) if m == want) {
        return Ok(());
    }
    match d.set_dcbx(ifname, want) {
        Ok(()) => Ok(()),
        Err(e) => match d.get_dcbx(ifname) {
            Ok(m) if m == want => Ok(()),
            _ => Err(e),
        },
    }
}

/// CEE DCBX's objects as the driver holds them (`PFC_GCFG`, `PFC_GSTATE`,
/// `PGTX_GCFG`); None where the driver lacks those ops (bnxt_en, hns3).
fn read_cee(d: &mut Dcbnl, ifname: &str) -> Option<lossless_node::hardware::CeeNic> {
    let pfc = d.get_pfc(ifname).ok()?;
    let pfc_state = d.get_pfc_state(ifname).ok()?;
    let pg = d.get_pg_tx(ifname).ok().map(|pg| {
        let c = pg.to_cee();
        (c.pgid, c.percent)
    });
    let bits = pfc
        .iter()
        .enumerate()
        .fold(0u8, |m, (p, on)| if *on { m | (1 << p) } else { m });
    Some(lossless_node::hardware::CeeNic {
        pfc: bits,
        pfc_state,
        pg,
    })
}

/// What the NIC holds (`DCB_CMD_IEEE_GET`).
fn read_nic(d: &mut Dcbnl, ifname: &str) -> Result<NicState, HardwareError> {
    d.get_ieee_state(ifname)
        .map(convert::nic_state)
        .map_err(convert::hardware_error)
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

/// Reads a measurement socket: frames (with receive timestamps) and, from the error
/// queue, the transmit timestamps of what we sent.
async fn read_measure(
    ifindex: u32,
    socket: Arc<AsyncFd<MeasureSocket>>,
    input: mpsc::Sender<Input>,
) {
    let mut buf = vec![0u8; 2048];
    loop {
        let Ok(mut guard) = socket.ready(Interest::READABLE | Interest::ERROR).await else {
            return;
        };
        loop {
            let msg = match socket.get_ref().recv(&mut buf) {
                Ok((n, rx)) => Input::Measure(ifindex, buf[..n].to_vec(), rx),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => Input::RxError(ifindex),
            };
            if input.send(msg).await.is_err() {
                return;
            }
        }
        while let Ok((n, tx)) = socket.get_ref().recv_tx_timestamp(&mut buf) {
            let msg = Input::MeasureTx(ifindex, buf[..n].to_vec(), tx);
            if input.send(msg).await.is_err() {
                return;
            }
        }
        // Both queues drained; readiness that arrived meanwhile is kept by tokio.
        guard.clear_ready();
    }
}

//! Everything the runtime owns for the node: the ports' sockets, the measurement
//! sockets, the dcbnl socket, the reading threads, the state directory, the relay and
//! the replies waiting for the node. [`crate::route`] hands the node what comes in;
//! [`crate::execute`] carries out what it asks for.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use lossless_node::node::{Node, RequestId};
use tokio::sync::{broadcast, mpsc};

use crate::closer::Closer;
use crate::control::Reply;
use crate::dcbnl_device::DcbnlDevice;
use crate::input::Input;
use crate::measure_io::MeasureIo;
use crate::pfc_reader::PfcReader;
use crate::port_sockets::PortSockets;
use crate::relay::RelayRuntime;
use crate::roce_worker::RoceWorker;
use crate::state_dir::StateDir;

/// Replies waiting for the node, by request.
pub(crate) type Replies = HashMap<RequestId, Reply>;

/// Everything the runtime owns for the node.
pub(crate) struct Io {
    pub(crate) ports: PortSockets,
    pub(crate) measure: HashMap<u32, MeasureIo>,
    pub(crate) input: mpsc::Sender<Input>,
    pub(crate) events: broadcast::Sender<Arc<str>>,
    pub(crate) dcb: DcbnlDevice,
    pub(crate) state: StateDir,
    pub(crate) config_path: Option<PathBuf>,
    pub(crate) relay: Option<RelayRuntime>,
    pub(crate) replies: Replies,
    /// Sockets of ports gone, being closed off the loop.
    pub(crate) closer: Closer,
    pub(crate) pfc: PfcReader,
    /// The RoCE host settings beyond DCB, under the `--sysfs` root and through ethtool,
    /// on a thread of their own.
    pub(crate) roce: RoceWorker,
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
            roce: RoceWorker::start(host, {
                let input = input.clone();
                move |read| input.blocking_send(Input::Roce(Box::new(read))).is_ok()
            }),
            pfc: PfcReader::start_at(sysfs, {
                let input = input.clone();
                move |reads| input.blocking_send(Input::Pfc(reads)).is_ok()
            }),
            ports: PortSockets::new(input.clone(), rcvbuf),
            measure: HashMap::new(),
            input,
            events: broadcast::channel(4096).0,
            dcb: DcbnlDevice::default(),
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

    pub(crate) fn close_port(&mut self, ifindex: u32) {
        self.ports.close(ifindex, &mut self.closer);
        self.close_measure(ifindex);
    }

    pub(crate) fn close_measure(&mut self, ifindex: u32) {
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
}

//! The ports' packet sockets: every port reads and sends through two sockets shared
//! by all of them (one for LLDP, one for MAC Control) until a flood makes the node
//! give it a socket of its own ([`Output::ReceiveAlone`]).
//!
//! Why shared: the kernel walks every packet socket of the namespace on each device
//! event (`packet_notifier`, under RTNL). With a socket per port, the link-up of
//! 4,096 ports took 2.6 times as long as with no socket at all, whoever held them.
//!
//! Why a socket of its own after a flood: frames wait in the socket's receive buffer
//! until the loop reads them. In a shared buffer a flood on one port could crowd out
//! the other ports' LLDPDUs; in its own, what the kernel holds or drops is that
//! port's alone (and counted for it: `kernel_drops`).
//!
//! A port's own sockets are two, like the shared ones: one per EtherType (LLDP, MAC
//! Control), each bound to it with its own receive buffer and reader. Under a PFC
//! storm from the peer, MAC Control frames at line rate fill the MAC Control socket's
//! buffer; the peer's LLDPDUs wait in the LLDP one's, and are never dropped for room
//! the storm took (its drops apart: `kernel_drops_lldp`).
//!
//! The switch loses nothing and delivers nothing twice. The port's own socket opens
//! first; from then on its frames reach both sockets of their EtherType until the
//! shared ones exclude its interface (their filter, replaced atomically). Every socket stamps each frame
//! with the time the kernel received it (`SO_TIMESTAMPNS`), the same stamp on each
//! socket that received it: a frame read from one socket is skipped when a frame with
//! its stamp was already delivered from the other of its class ([`crate::socket_switch`],
//! a switch per EtherType class; counted, `own_socket_skipped`). Stamps are matched, never compared with a time the daemon
//! read: a step of the wall clock (chrony's `makestep`, a VM resume) changes nothing.
//! What the own socket dropped before its first statistics reading the shared ones
//! had too, and is not counted; a drop of the own socket in the window both receive
//! in is counted although the shared sockets read the frame (it needs a buffer
//! smaller than the frames of a few system calls).
//!
//! [`Output::ReceiveAlone`]: lossless_node::node::Output::ReceiveAlone

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use lossless_node::node::{Node, Now};
use lossless_sys::batch::RxBatch;
use lossless_sys::packet::{
    PacketSocket, ETH_P_LLDP, ETH_P_MAC_CONTROL, LLDP_MULTICAST, MAC_CONTROL_MULTICAST,
};
use lossless_sys::reactor::{async_fd, OwnsFd};
use lossless_sys::shared_packet::{SharedPacketSocket, MAX_EXCLUDED};
use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::closer::Closer;
use crate::frames::{FrameBatch, Source};
use crate::input::Input;
use crate::socket_switch::{Class, Delivery, Verdict};

/// The longest frame a port reads (a jumbo LLDPDU); longer ones are receive errors.
const MAX_FRAME: usize = 9216;
/// Frames one `recvmmsg` reads.
const RX_BATCH: usize = 64;
/// Batches of one socket that may wait for the core at once: a flooded port's own
/// socket cannot fill the core's queue ahead of the other ports (the kernel's buffer
/// holds the rest, and drops and counts what does not fit).
const RX_IN_FLIGHT: usize = 2;

thread_local! {
    /// The one receive batch every reader fills in turn (all of them run on the
    /// runtime's one thread).
    static RX: std::cell::RefCell<RxBatch> = std::cell::RefCell::new(RxBatch::new(RX_BATCH, MAX_FRAME));
}

/// A socket a reader task can read in batches.
trait BatchRead: OwnsFd + Send + Sync + 'static {
    fn read_batch(&self, rx: &mut RxBatch) -> io::Result<usize>;
}

impl BatchRead for PacketSocket {
    fn read_batch(&self, rx: &mut RxBatch) -> io::Result<usize> {
        self.recv_batch(rx)
    }
}

impl BatchRead for SharedPacketSocket {
    fn read_batch(&self, rx: &mut RxBatch) -> io::Result<usize> {
        self.recv_batch(rx)
    }
}

struct Shared {
    lldp: Arc<AsyncFd<SharedPacketSocket>>,
    mac_control: Arc<AsyncFd<SharedPacketSocket>>,
    readers: [JoinHandle<()>; 2],
}

impl Shared {
    fn open(rcvbuf: usize, input: &mpsc::Sender<Input>) -> io::Result<Shared> {
        let open = |ethertype, group| -> io::Result<Arc<AsyncFd<SharedPacketSocket>>> {
            let sock = SharedPacketSocket::open(ethertype, group)?;
            if let Err(e) = sock.set_rcvbuf(rcvbuf) {
                warn!(bytes = rcvbuf, error = %e, "cannot size the shared packet socket's receive buffer");
            }
            Ok(Arc::new(async_fd(sock)?))
        };
        let lldp = open(ETH_P_LLDP, LLDP_MULTICAST)?;
        let mac_control = open(ETH_P_MAC_CONTROL, MAC_CONTROL_MULTICAST)?;
        let readers = [
            tokio::spawn(read(
                Source::Shared(Class::Lldp),
                lldp.clone(),
                input.clone(),
            )),
            tokio::spawn(read(
                Source::Shared(Class::MacControl),
                mac_control.clone(),
                input.clone(),
            )),
        ];
        Ok(Shared {
            lldp,
            mac_control,
            readers,
        })
    }

    fn both(&self) -> [&SharedPacketSocket; 2] {
        [self.lldp.get_ref(), self.mac_control.get_ref()]
    }
}

/// One of a port's own sockets (one per EtherType class) and its reader.
struct OwnSocket {
    socket: Arc<AsyncFd<PacketSocket>>,
    reader: JoinHandle<()>,
}

/// A port's own sockets: LLDP and MAC Control, each with its receive buffer.
struct Own {
    lldp: OwnSocket,
    mac_control: OwnSocket,
}

impl Own {
    /// Opens and binds both (sized before the bind: frames the kernel held in its
    /// backlog reach them at once, and one dropped for room the shared socket may
    /// have read too), and starts their readers. Nothing is left open on an error.
    fn open(ifindex: u32, rcvbuf: usize, input: &mpsc::Sender<Input>) -> io::Result<Own> {
        let open = |class| -> io::Result<Arc<AsyncFd<PacketSocket>>> {
            let (ethertype, group) = match class {
                Class::Lldp => (ETH_P_LLDP, LLDP_MULTICAST),
                Class::MacControl => (ETH_P_MAC_CONTROL, MAC_CONTROL_MULTICAST),
            };
            let sock = PacketSocket::open_ethertype(ifindex, ethertype, group, Some(rcvbuf))?;
            sock.stamp_receives()?;
            // What it dropped so far the shared sockets had too (their exclusion comes
            // after this): not the port's loss.
            let _ = sock.stats();
            Ok(Arc::new(async_fd(sock)?))
        };
        let lldp = open(Class::Lldp)?;
        let mac_control = open(Class::MacControl)?;
        let reader = |class, socket: &Arc<AsyncFd<PacketSocket>>| OwnSocket {
            socket: socket.clone(),
            reader: tokio::spawn(read(
                Source::Own(ifindex, class),
                socket.clone(),
                input.clone(),
            )),
        };
        Ok(Own {
            lldp: reader(Class::Lldp, &lldp),
            mac_control: reader(Class::MacControl, &mac_control),
        })
    }
}

/// Every port's sockets.
pub(crate) struct PortSockets {
    /// Opened with the first port.
    shared: Option<Shared>,
    /// Ports reading their own socket.
    own: HashMap<u32, Own>,
    /// Which frames go to the node: the ports open (their interfaces joined the group
    /// addresses on the shared sockets), those alone, the interfaces that are no port
    /// (excluded from the shared sockets too: a flood there costs nothing).
    delivery: Delivery,
    /// The receive buffer asked for each socket (`packet_rcvbuf_bytes`).
    rcvbuf: usize,
    input: mpsc::Sender<Input>,
}

impl PortSockets {
    pub(crate) fn new(input: mpsc::Sender<Input>, rcvbuf: usize) -> PortSockets {
        PortSockets {
            shared: None,
            own: HashMap::new(),
            delivery: Delivery::default(),
            rcvbuf,
            input,
        }
    }

    fn shared(&mut self) -> io::Result<&Shared> {
        if self.shared.is_none() {
            self.shared = Some(Shared::open(self.rcvbuf, &self.input)?);
        }
        Ok(self.shared.as_ref().expect("opened above"))
    }

    /// A new port: its interface joins the group addresses on the shared sockets.
    /// Returns the receive buffer its frames wait in.
    pub(crate) fn open(&mut self, ifindex: u32) -> io::Result<Option<u64>> {
        if self.delivery.forget_stranger(ifindex) {
            self.refilter();
        }
        let shared = self.shared()?;
        for s in shared.both() {
            s.join(ifindex)?;
        }
        let rcvbuf = shared.lldp.get_ref().rcvbuf().ok().map(|b| b as u64);
        self.delivery.opened(ifindex);
        Ok(rcvbuf)
    }

    /// The port reads sockets of its own from now on (LLDP, MAC Control). Returns
    /// the receive buffer of each.
    pub(crate) fn receive_alone(&mut self, ifindex: u32) -> io::Result<Option<u64>> {
        if !self.delivery.may_receive_alone(ifindex) {
            return Ok(None);
        }
        let own = Own::open(ifindex, self.rcvbuf, &self.input)?;
        let rcvbuf = own.lldp.socket.get_ref().rcvbuf().ok().map(|b| b as u64);
        self.own.insert(ifindex, own);
        self.delivery.receives_alone(ifindex);
        self.refilter();
        Ok(rcvbuf)
    }

    /// A port gone: its interface leaves the groups, its own sockets (if any) close.
    pub(crate) fn close(&mut self, ifindex: u32, closer: &mut Closer) {
        let Some(had_own) = self.delivery.closed(ifindex) else {
            return;
        };
        if let Some(shared) = &self.shared {
            for s in shared.both() {
                if let Err(e) = s.leave(ifindex) {
                    debug!(ifindex, error = %e, "cannot leave the group address");
                }
            }
        }
        if let Some(own) = self.own.remove(&ifindex) {
            for o in [own.lldp, own.mac_control] {
                closer.close(o.socket, o.reader);
            }
        }
        if had_own {
            self.refilter();
        }
    }

    /// Every port closed, then the shared sockets.
    pub(crate) fn close_all(&mut self, closer: &mut Closer) {
        for ifindex in self.delivery.ports() {
            self.close(ifindex, closer);
        }
        if let Some(Shared {
            lldp,
            mac_control,
            readers: [a, b],
        }) = self.shared.take()
        {
            closer.close(lldp, a);
            closer.close(mac_control, b);
        }
    }

    /// Sends a frame on a port.
    pub(crate) fn send(&self, ifindex: u32, frame: &[u8]) -> io::Result<()> {
        match &self.shared {
            Some(s) if self.delivery.is_open(ifindex) => s.lldp.get_ref().send(ifindex, frame),
            _ => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                format!("interface {ifindex} is not an open port"),
            )),
        }
    }

    /// Hands the node what the kernel counted since the last reading: on each port's
    /// own sockets (summed, the LLDP one's drops apart too), and on the shared ones.
    pub(crate) fn read_stats(&self, node: &mut Node) {
        let drops = |ifindex: u32, sock: &PacketSocket| match sock.stats() {
            Ok(st) => st.drops,
            Err(e) => {
                debug!(ifindex, error = %e, "cannot read the packet socket's statistics");
                0
            }
        };
        for (&ifindex, own) in &self.own {
            let lldp = drops(ifindex, own.lldp.socket.get_ref());
            let mac_control = drops(ifindex, own.mac_control.socket.get_ref());
            let rcvbuf = own.lldp.socket.get_ref().rcvbuf().ok().map(|b| b as u64);
            node.handle_own_lldp_socket_drops(ifindex, lldp);
            node.handle_socket_stats(ifindex, lldp + mac_control, rcvbuf);
        }
        if let Some(shared) = &self.shared {
            let drops = shared
                .both()
                .iter()
                .filter_map(|s| s.stats().ok())
                .map(|st| st.drops)
                .sum();
            let rcvbuf = shared.lldp.get_ref().rcvbuf().ok().map(|b| b as u64);
            node.handle_shared_socket_stats(drops, rcvbuf);
        }
    }

    /// Frames read: each to the node, but those the port's own socket also has, and
    /// those of interfaces that are no port (which the shared sockets then exclude).
    pub(crate) fn deliver(&mut self, node: &mut Node, now: Now, batch: &FrameBatch) {
        let mut new_strangers = false;
        for (i, frame) in batch.frames() {
            let ifindex = batch.ifindexes[i];
            match self
                .delivery
                .frame(ifindex, batch.class, batch.shared, batch.stamps[i])
            {
                Verdict::Deliver => node.handle_frame(now, ifindex, frame),
                Verdict::Copy => node.handle_own_socket_skipped(ifindex, 1),
                Verdict::Stranger { new } => new_strangers |= new,
            }
        }
        for &ifindex in &batch.too_long {
            node.handle_io_error(ifindex, false);
        }
        if new_strangers {
            self.refilter();
        }
    }

    /// The shared sockets drop, in the kernel, the frames of ports with their own
    /// socket and of interfaces that are no port (the ports first, if the list is full).
    fn refilter(&mut self) {
        let Some(shared) = &self.shared else {
            return;
        };
        let excluded = self.delivery.excluded(MAX_EXCLUDED);
        for s in shared.both() {
            if let Err(e) = s.exclude(&excluded) {
                warn!(error = %e, "cannot set the shared packet socket's filter");
            }
        }
    }
}

/// Reads a socket in batches (one `recvmmsg` for up to [`RX_BATCH`] frames) into the
/// shared [`RX`] batch, and hands each batch to the core with one of the socket's
/// [`RX_IN_FLIGHT`] permits.
async fn read<S: BatchRead>(from: Source, socket: Arc<AsyncFd<S>>, input: mpsc::Sender<Input>) {
    let credit = Arc::new(Semaphore::new(RX_IN_FLIGHT));
    loop {
        let Ok(permit) = credit.clone().acquire_owned().await else {
            return;
        };
        let Ok(mut guard) = socket.readable().await else {
            return;
        };
        let read = guard.try_io(|s| {
            RX.with_borrow_mut(|rx| match s.get_ref().read_batch(rx) {
                Ok(0) => Err(io::ErrorKind::WouldBlock.into()),
                Ok(_) => Ok(FrameBatch::copy_of(rx, from)),
                Err(e) => Err(e),
            })
        });
        let msg = match (read, from) {
            (Ok(Ok(batch)), _) => Input::Frames(batch, permit),
            (Ok(Err(_)), Source::Own(ifindex, _)) => Input::RxError(ifindex),
            (Ok(Err(e)), Source::Shared(_)) => {
                debug!(error = %e, "cannot read the shared packet socket");
                continue;
            }
            (Err(_would_block), _) => continue,
        };
        if input.send(msg).await.is_err() {
            return;
        }
    }
}

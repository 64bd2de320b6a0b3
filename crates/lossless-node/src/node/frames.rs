//! Frames: what arrives on a port (its receive budget, a frame before the link is
//! known up, the agent's), and the packet sockets they arrive on (a port's own
//! socket, read and send errors, the kernel's counters).

use tracing::warn;

use super::{Node, Now, Output};

/// How long after a failure to open a port's own packet socket it is asked for
/// again (a port whose budget stays spent would otherwise ask at every frame).
pub const OWN_SOCKET_RETRY: lossless_dcbx::Duration = lossless_dcbx::Duration::from_secs(10);

impl Node {
    /// A frame arrived on a port (a whole Ethernet frame, FCS stripped).
    pub fn handle_frame(&mut self, now: Now, ifindex: u32, frame: &[u8]) {
        self.frame_in(now, ifindex, frame, Budget::Charge);
    }

    /// A frame for `ifindex`'s port. A frame is charged to the receive budget
    /// once, when it arrives: not again when it comes back with the link read
    /// or after the link notification ([`Budget::Charged`]).
    pub(super) fn frame_in(&mut self, now: Now, ifindex: u32, frame: &[u8], budget: Budget) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
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
        if self.own_lldpdu(now, id, frame) {
            return;
        }
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        port.receive(now.mono, frame);
        self.after(now, id);
    }

    /// The runtime could not open the socket of its own a port asked for
    /// ([`Output::ReceiveAlone`]): the port stays on the shared sockets, and asks
    /// again [`OWN_SOCKET_RETRY`] later if its budget is still spent then.
    pub fn handle_own_socket_failed(&mut self, now: Now, ifindex: u32) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        if let Some(port) = self.ports.get_mut(id) {
            port.io.own_socket = false;
            port.io.own_socket_failures += 1;
            port.own_socket_retry = Some(now.mono + OWN_SOCKET_RETRY);
        }
    }

    /// A frame could not be read (`tx` false) or sent on a port.
    pub fn handle_io_error(&mut self, ifindex: u32, tx: bool) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        if let Some(port) = self.ports.get_mut(id) {
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
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        let Some(port) = self.ports.get_mut(id) else {
            return;
        };
        let name = port.name.clone();
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

    /// Of the drops the next [`Node::handle_socket_stats`] hands for a port, those of
    /// its own LLDP socket (LLDPDUs lost; counted apart, `kernel_drops_lldp`: a PFC
    /// storm fills the port's own MAC Control socket, never this one).
    pub fn handle_own_lldp_socket_drops(&mut self, ifindex: u32, drops: u64) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        if let Some(port) = self.ports.get_mut(id) {
            port.io.kernel_drops_lldp += drops;
        }
    }

    /// Frames of a port the runtime read from both the shared sockets and the port's
    /// own as it switched, and delivered once: `n` copies skipped.
    pub fn handle_own_socket_skipped(&mut self, ifindex: u32, n: u64) {
        let Some(id) = self.id_of(ifindex) else {
            return;
        };
        if let Some(port) = self.ports.get_mut(id) {
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
}

/// Whether a frame is still to be charged to its port's receive budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Budget {
    Charge,
    Charged,
}

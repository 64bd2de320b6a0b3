//! The relay's data path on a simulated node, as losslessd's runtime runs it
//! (`losslessd/src/relay/`): the node core asks for it with
//! `Output::StartRelay(section)` when its file has a `[relay]` section, and the
//! simulator starts the relay host ([`lossless_relay::Host`], the one the
//! daemon runs: a PE's `Relay` on its DC and WAN interfaces, or a DC
//! gateway's `GatewayCheck` on the interface facing its PE) on the node's
//! ports named in the section. `StopRelay` stops it, `ReadRelay` reads what
//! `lossless relay show` prints (the host's `show`).
//!
//! This file is only the virtual links: each port hands the host what the
//! host's filter takes (the predicate the daemon's socket filters are checked
//! against); everything else goes to the node core as before. A port the
//! section names that the node does not have stays closed, as the daemon's
//! would (`<name>: No such device (os error 19)`). The host's clock starts at
//! zero when the data path starts, as in the daemon. The simulator carries
//! out what it yields at once (nodes take no time of their own) and wakes it
//! at its `poll_timeout()` for the storm ceiling's held-back frames. The running
//! data path itself (the host and its ports) is `relay_host.rs`'s.

use lossless_node::node::Output;
use lossless_relay::{Handled, Verdict};

use super::log::{Cause, LogEntry};
use super::node::Kind;
use super::queue::{Delivery, Due};
use super::relay_host::Datapath;
use super::{NodeId, Sim};

impl Sim {
    /// Carries out the node core's relay outputs, as losslessd's `execute` does.
    pub(super) fn execute_relay(&mut self, node: NodeId, out: Output) {
        let now = self.clock();
        let n = &mut self.nodes[node];
        let ports = &n.ports;
        let port_of = |name: &str| ports.iter().position(|p| p.name == name);
        let Kind::Core(c) = &mut n.kind else {
            return;
        };
        match out {
            Output::StartRelay(section) => {
                // The old data path stops before the new one starts.
                c.datapath = None;
                let started = Datapath::start(*section, port_of, now.mono);
                let result = started.map(|d| c.datapath = Some(d));
                c.node.handle_relay_started(now, result);
                self.datapath_drain(node, None);
            }
            Output::StopRelay => c.datapath = None,
            Output::ReadRelay { id } => {
                let show = c.datapath.as_ref().map(|d| d.host.show(d.clock(now.mono)));
                c.node.handle_relay_status(now, id, show);
            }
            _ => {}
        }
    }

    /// Hands a frame that arrived on `port` of `node` to its data path if that
    /// takes it; returns false when it does not.
    pub(super) fn datapath_receive(&mut self, node: NodeId, port: usize, bytes: &[u8]) -> bool {
        let now = self.now;
        let Kind::Core(c) = &mut self.nodes[node].kind else {
            return false;
        };
        let Some(d) = c.datapath.as_mut() else {
            return false;
        };
        let Some(side) = d.takes(port, bytes) else {
            return false;
        };
        let t = d.clock(now);
        let (entry, verdict) = match d.host.handle_frame(t, side, bytes) {
            Handled::Pe(verdict) => {
                let entry = LogEntry::Relay {
                    at: now,
                    node,
                    port: side,
                    verdict,
                };
                (entry, Some(verdict))
            }
            Handled::Gateway(Ok(pfc)) => (LogEntry::Accepted { at: now, node, pfc }, None),
            Handled::Gateway(Err(reason)) => (
                LogEntry::Refused {
                    at: now,
                    node,
                    reason,
                },
                None,
            ),
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
        if d.wake != Some(now) {
            return;
        }
        d.wake = None;
        let t = d.clock(now);
        d.host.handle_timeout(t);
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
        let mut out = Vec::new();
        while let Some(tx) = d.host.poll_transmit() {
            out.push((tx.port, tx.frame.to_vec()));
        }
        let next = d
            .host
            .poll_timeout()
            .map(|t| (d.started + t.since_epoch()).max(now));
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
            match d.port(side) {
                Some(port) => {
                    d.host.count_sent(side, 1, 0, None);
                    sends.push((port, bytes, cause));
                }
                // No such port on the node: the interface never opened.
                None => d.host.count_sent(side, 0, 1, None),
            }
        }
        for (port, bytes, cause) in sends {
            self.transmit(node, port, bytes, Delivery::Frame, cause, now);
        }
        let Some(Kind::Core(c)) = self.nodes.get_mut(node).map(|n| &mut n.kind) else {
            return;
        };
        if let Some(d) = c.datapath.as_mut() {
            if next != d.wake {
                d.wake = next;
                if let Some(at) = next {
                    self.queue.push(at, Due::Wake(node));
                }
            }
        }
    }
}

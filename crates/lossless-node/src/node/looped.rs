//! Our own LLDPDUs coming back: a looped cable, a port joined to another port of this
//! host, or a device that reflects frames. Such an LLDPDU carries the MSAP (Chassis
//! ID and Port ID) of one of this host's ports; taken as a neighbour it would agree on
//! everything and the port would look healthy with no peer at all. lldpd discards
//! the frames it sent itself the same way. Each is counted (`io.rx_own_lldpdus`),
//! dropped before the agent sees it, and makes the port's health say so for as long
//! as such LLDPDUs keep coming (their TTL), or until the link goes down. By its MSAP
//! alone, a neighbour given this port's MAC cannot be told from a loop: it is taken
//! for one.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use lossless_dcbx::PortConfig;
use lossless_wire::lldp::{Id, Lldpdu, ETHERTYPE_LLDP};
use lossless_wire::EthernetFrame;
use tracing::warn;

use super::{Node, Now, PortId};
use crate::port::Looped;

/// The MSAP of every port of the node, to tell our own LLDPDUs from a neighbour's:
/// a hash of each (a few bytes per port, with thousands of ports), and on a hit the
/// port's own MSAP compared whole.
#[derive(Debug, Default)]
pub(super) struct OwnMsaps {
    by_hash: HashMap<u64, u32>,
    of_port: HashMap<u32, u64>,
}

fn hash(chassis: &Id<'_>, port: &Id<'_>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (chassis.subtype, chassis.id, port.subtype, port.id).hash(&mut h);
    h.finish()
}

fn same(a: (Id<'_>, Id<'_>), b: (Id<'_>, Id<'_>)) -> bool {
    a.0.subtype == b.0.subtype && a.0.id == b.0.id && a.1.subtype == b.1.subtype && a.1.id == b.1.id
}

impl OwnMsaps {
    /// The port `ifindex` sends this configuration's MSAP (from now on).
    pub(super) fn set(&mut self, ifindex: u32, cfg: &PortConfig) {
        let (chassis, port) = cfg.msap();
        let h = hash(&chassis, &port);
        if self.of_port.get(&ifindex) == Some(&h) {
            return;
        }
        self.remove(ifindex);
        self.by_hash.insert(h, ifindex);
        self.of_port.insert(ifindex, h);
    }

    /// The port `ifindex` is gone.
    pub(super) fn remove(&mut self, ifindex: u32) {
        if let Some(old) = self.of_port.remove(&ifindex) {
            if self.by_hash.get(&old) == Some(&ifindex) {
                self.by_hash.remove(&old);
            }
        }
    }

    /// The MSAP of `frame`, if it is an LLDPDU, and the port of ours whose MSAP
    /// hashes the same.
    fn candidate<'f>(&self, frame: &'f [u8]) -> Option<(u32, (Id<'f>, Id<'f>))> {
        let eth = EthernetFrame::new_checked(frame).ok()?;
        if eth.ethertype() != ETHERTYPE_LLDP {
            return None;
        }
        let payload = frame.get(frame.len() - eth.payload().len()..)?;
        let (chassis, port) = Lldpdu::msap_of(payload)?;
        let ifindex = *self.by_hash.get(&hash(&chassis, &port))?;
        Some((ifindex, (chassis, port)))
    }
}

impl Node {
    /// Whether `frame`, received on port `id`, is an LLDPDU this host sent (on that
    /// port or another): then it is counted and the port is looped until the TTL of
    /// what its sender sends has passed. True: drop the frame.
    pub(super) fn own_lldpdu(&mut self, now: Now, id: PortId, frame: &[u8]) -> bool {
        let Some((ifindex, msap)) = self.own_msaps.candidate(frame) else {
            return false;
        };
        let Some(sender) = self.id_of(ifindex).and_then(|s| self.ports.get(s)) else {
            return false;
        };
        let cfg = sender.agent.config();
        if !same(msap, cfg.msap()) {
            return false;
        }
        let (from, ttl) = (sender.name.clone(), cfg.timers.ttl());
        let Some(port) = self.ports.get_mut(id) else {
            return true;
        };
        port.io.rx_own_lldpdus += 1;
        let until = now.mono + lossless_dcbx::Duration::from_secs(ttl.into());
        if port.looped.as_ref().is_none_or(|l| l.from != from) {
            warn!(port = %port.name, from = %from, "LLDPDU with the MSAP of a port of this host \
                received: a looped cable, a device reflecting frames or a neighbour given \
                this host's MAC; such LLDPDUs are discarded");
        }
        port.looped = Some(Box::new(Looped { from, until }));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lossless_wire::MacAddr;

    fn lldpdu(cfg: &PortConfig) -> Vec<u8> {
        let (c, p) = cfg.msap();
        let pdu = Lldpdu::new(c, p, 120);
        let mut body = vec![0u8; pdu.buffer_len()];
        pdu.emit(&mut body).unwrap_or_default();
        let mut f = vec![0x01, 0x80, 0xc2, 0, 0, 0x0e];
        f.extend_from_slice(&cfg.mac.0);
        f.extend_from_slice(&ETHERTYPE_LLDP.to_be_bytes());
        f.extend_from_slice(&body);
        f
    }

    #[test]
    fn a_port_is_known_by_its_msap_until_it_changes_or_goes() {
        let mut own = OwnMsaps::default();
        let mut a = PortConfig::new(MacAddr([2, 0, 0, 0, 0, 1]));
        let sender = |own: &OwnMsaps, f: &[u8]| own.candidate(f).map(|(i, _)| i);
        own.set(7, &a);
        assert_eq!(sender(&own, &lldpdu(&a)), Some(7));
        let old = lldpdu(&a);
        a.chassis_id = Some("host1".into());
        own.set(7, &a);
        assert_eq!(sender(&own, &old), None);
        assert_eq!(sender(&own, &lldpdu(&a)), Some(7));
        own.remove(7);
        assert_eq!(sender(&own, &lldpdu(&a)), None);
    }
}

//! A device on a link that only one end hears: LLDPDUs put on an interface with
//! `PACKET_QDISC_BYPASS`, so the agent on that interface (lldpad) does not see them
//! while the agent at the other end of the veth receives them as from a neighbour.

use lossless_sys::link::if_nametoindex;
use lossless_sys::PacketSocket;
use lossless_wire::frame::emit_lldp_frame;
use lossless_wire::lldp::Lldpdu;
use lossless_wire::MacAddr;

use crate::netns::Netns;

/// A packet socket on one interface of a namespace, sending past its qdisc.
pub struct Injector {
    sock: PacketSocket,
    what: String,
}

impl Injector {
    /// Opens the socket on `ifname` in `ns`.
    pub fn open(ns: &Netns, ifname: &str) -> Injector {
        let what = format!("{ifname} in {}", ns.name);
        let sock = ns.run(|| {
            let index = if_nametoindex(ifname).unwrap_or_else(|e| panic!("{what}: {e}"));
            let sock = PacketSocket::open(index).unwrap_or_else(|e| panic!("{what}: {e}"));
            sock.bypass_qdisc()
                .unwrap_or_else(|e| panic!("{what}: PACKET_QDISC_BYPASS: {e}"));
            sock
        });
        Injector { sock, what }
    }

    /// Sends one whole Ethernet frame.
    pub fn send(&self, frame: &[u8]) {
        self.sock
            .send(frame)
            .unwrap_or_else(|e| panic!("send on {}: {e}", self.what));
    }

    /// Sends [`lldpdu`]`(mac, ttl)`.
    pub fn lldpdu(&self, mac: [u8; 6], ttl: u16) {
        self.send(&lldpdu(mac, ttl));
    }
}

/// A PFC frame (MAC Control, 0x8808, opcode 0x0101) from 02:00:00:00:00:0b with no
/// priority enabled, padded to the minimum frame size.
pub fn pfc_frame() -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0x0b, 0x88, 0x08, 0x01, 0x01]);
    f.resize(60, 0);
    f
}

/// A PFC frame from `mac` pausing `priority` for the longest time (XOFF, 0xffff
/// quanta), padded to the minimum frame size.
pub fn xoff_frame(mac: [u8; 6], priority: u8) -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];
    f.extend_from_slice(&mac);
    f.extend_from_slice(&[0x88, 0x08, 0x01, 0x01, 0x00, 1 << (priority & 7)]);
    for p in 0..8u8 {
        f.extend_from_slice(if p == priority & 7 {
            &[0xff, 0xff]
        } else {
            &[0, 0]
        });
    }
    f.resize(60, 0);
    f
}

/// An LLDPDU with the mandatory TLVs only, from `mac` (its Chassis ID and Port ID, MAC
/// subtype) to the nearest-bridge address; TTL 0 is a shutdown LLDPDU.
pub fn lldpdu(mac: [u8; 6], ttl: u16) -> Vec<u8> {
    let mac = MacAddr(mac);
    let (chassis, port) = Lldpdu::mac_ids(&mac);
    let pdu = Lldpdu::new(chassis, port, ttl);
    let mut out = Vec::new();
    emit_lldp_frame(mac, &pdu, &mut out).unwrap_or_else(|e| panic!("emit: {e}"));
    out
}

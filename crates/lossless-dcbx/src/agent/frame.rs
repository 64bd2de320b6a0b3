//! The LLDPDUs the agent sends, and what it recognises of the frames it receives.

use lossless_wire::frame::emit_lldp_frame;
use lossless_wire::lldp::{Lldpdu, ETHERTYPE_LLDP};
use lossless_wire::EmitError;
use lossless_wire::EthernetFrame;

use crate::config::lldpdu;
use crate::config::PortConfig;
use crate::lldp::tx::TxKind;
use crate::mode::Version;

use super::Agent;

impl Agent {
    /// Writes the LLDPDU of `kind` (our current information) as a whole frame into `out`.
    pub(super) fn build_frame(&self, kind: TxKind, out: &mut Vec<u8>) -> Result<(), EmitError> {
        let cfg = &self.cfg;
        lldpdu::with_lldpdu(cfg, kind == TxKind::Shutdown, |pdu| {
            if kind == TxKind::Solicit {
                pdu.ttl = cfg.timers.solicit_ttl();
            }
            if kind != TxKind::Shutdown && self.dcbx_active() {
                match self.mode.running() {
                    Version::Cee => pdu.cee_dcbx = Some(self.cee.tlv()),
                    Version::Ieee => pdu.ieee_dcbx = self.ieee_advertised(),
                }
            }
            emit_lldp_frame(cfg.mac, pdu, out)
        })
    }
}

/// The shutdown LLDPDU (TTL 0, mandatory TLVs only) of an identity the port had:
/// `cfg`'s MSAP, from `cfg`'s MAC.
pub(super) fn build_shutdown(cfg: &PortConfig, out: &mut Vec<u8>) -> Result<(), EmitError> {
    lldpdu::with_lldpdu(cfg, true, |pdu| emit_lldp_frame(cfg.mac, pdu, out))
}

/// Ethertype 0x88cc, untagged or behind one 802.1Q tag.
pub(super) fn is_lldp_frame(frame: &[u8]) -> bool {
    matches!(
        (frame.get(12..14), frame.get(16..18)),
        (Some([0x88, 0xcc]), _) | (Some([0x81, 0x00]), Some([0x88, 0xcc]))
    )
}

impl Agent {
    /// Whether `frame` comes from the neighbour the port has negotiated with (its
    /// DCBX peer): an LLDPDU with that neighbour's MSAP, or any other frame (MAC
    /// Control) from its source MAC. Reads the Ethernet header and, for LLDP, only
    /// the first two TLVs: cheap enough to run on every frame before deciding
    /// whether to process it. False while the port has no negotiated peer.
    pub fn from_peer(&self, frame: &[u8]) -> bool {
        // Of two (one silent since the other replaced it), the one heard last.
        let negotiated = self.mib.neighbors().iter().filter(|n| n.negotiated);
        let Some(peer) = negotiated.max_by_key(|n| n.last_rx) else {
            return false;
        };
        let Ok(eth) = EthernetFrame::new_checked(frame) else {
            return false;
        };
        if eth.ethertype() != ETHERTYPE_LLDP {
            return eth.src() == peer.mac;
        }
        Lldpdu::msap_of(eth.payload()).is_some_and(|(chassis, port)| {
            let m = &peer.msap;
            m.chassis_id.subtype == chassis.subtype
                && m.chassis_id.id == chassis.id
                && m.port_id.subtype == port.subtype
                && m.port_id.id == port.id
        })
    }
}

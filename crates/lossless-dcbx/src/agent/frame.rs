//! The LLDPDUs the agent sends, and what it recognises of the frames it receives.

use lossless_wire::frame::emit_lldp_frame;
use lossless_wire::lldp::{chassis_subtype, port_subtype, Id, Lldpdu};
use lossless_wire::EmitError;

use crate::lldp::tx::TxKind;
use crate::mode::Version;

use super::Agent;

impl Agent {
    /// Writes the LLDPDU of `kind` (our current information) as a whole frame into `out`.
    pub(super) fn build_frame(&self, kind: TxKind, out: &mut Vec<u8>) -> Result<(), EmitError> {
        let cfg = &self.cfg;
        let chassis_id = match &cfg.chassis_id {
            Some(s) => Id {
                subtype: chassis_subtype::LOCAL,
                id: s.as_bytes(),
            },
            None => Id {
                subtype: chassis_subtype::MAC_ADDRESS,
                id: &cfg.mac.0,
            },
        };
        let port_id = match &cfg.port_id {
            Some(s) => Id {
                subtype: port_subtype::INTERFACE_NAME,
                id: s.as_bytes(),
            },
            None => Id {
                subtype: port_subtype::MAC_ADDRESS,
                id: &cfg.mac.0,
            },
        };
        let ttl = match kind {
            TxKind::Info => cfg.timers.ttl(),
            TxKind::Solicit => cfg.timers.solicit_ttl(),
            TxKind::Shutdown => 0,
        };
        let mut pdu = Lldpdu::new(chassis_id, port_id, ttl);
        if kind != TxKind::Shutdown {
            pdu.port_description = cfg.port_description.as_deref().map(str::as_bytes);
            pdu.system_name = cfg.system_name.as_deref().map(str::as_bytes);
            if self.dcbx_active() {
                match self.mode.running() {
                    Version::Cee => pdu.cee_dcbx = Some(self.cee.tlv()),
                    Version::Ieee => pdu.ieee_dcbx = self.ieee_advertised(),
                }
            }
        }
        emit_lldp_frame(cfg.mac, &pdu, out)
    }
}

/// Ethertype 0x88cc, untagged or behind one 802.1Q tag.
pub(super) fn is_lldp_frame(frame: &[u8]) -> bool {
    matches!(
        (frame.get(12..14), frame.get(16..18)),
        (Some([0x88, 0xcc]), _) | (Some([0x81, 0x00]), Some([0x88, 0xcc]))
    )
}

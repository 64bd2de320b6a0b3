//! The LLDPDUs the agent sends, and what it recognises of the frames it receives.

use lossless_wire::frame::emit_lldp_frame;
use lossless_wire::EmitError;

use crate::lldp::local;
use crate::lldp::tx::TxKind;
use crate::mode::Version;

use super::Agent;

impl Agent {
    /// Writes the LLDPDU of `kind` (our current information) as a whole frame into `out`.
    pub(super) fn build_frame(&self, kind: TxKind, out: &mut Vec<u8>) -> Result<(), EmitError> {
        let cfg = &self.cfg;
        local::with_lldpdu(cfg, kind == TxKind::Shutdown, |pdu| {
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

/// Ethertype 0x88cc, untagged or behind one 802.1Q tag.
pub(super) fn is_lldp_frame(frame: &[u8]) -> bool {
    matches!(
        (frame.get(12..14), frame.get(16..18)),
        (Some([0x88, 0xcc]), _) | (Some([0x81, 0x00]), Some([0x88, 0xcc]))
    )
}

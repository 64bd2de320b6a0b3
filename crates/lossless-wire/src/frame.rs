//! Whole Ethernet frames: the header plus the payloads this crate decodes.
//!
//! A receive path hands every frame from its socket to [`Frame::parse`] and
//! matches on [`Payload`]; a transmit path builds its frames with
//! [`emit_lldp_frame`] and [`emit_mac_control_frame`] into a reused `Vec`.

use crate::ethernet::{EthernetHeader, VlanTag, MIN_FRAME_LEN};
use crate::lldp::{Lldpdu, ETHERTYPE_LLDP};
use crate::mac_control::{MacControl, ETHERTYPE_MAC_CONTROL};
use crate::measure::{Measure, ETHERTYPE_MEASURE};
use crate::{DecodeError, EmitError, MacAddr};

/// What an Ethernet frame carries.
///
/// `Lldp` is far larger than the others (the CEE and IEEE DCBX TLVs are
/// inline): boxing it would cost an allocation per received LLDPDU, which the
/// receive path is written to avoid.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload<'a> {
    Lldp(Lldpdu<'a>),
    MacControl(MacControl),
    /// A link-delay measurement message (adaptive headroom, Ethertype 0x88B5).
    Measure(Measure),
    /// Any other Ethertype: the payload bytes, untouched.
    Other(&'a [u8]),
}

/// A decoded Ethernet frame (without FCS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    pub header: EthernetHeader,
    pub payload: Payload<'a>,
}

impl<'a> Frame<'a> {
    /// Parses a frame starting at the destination MAC. Every error offset,
    /// including those kept inside a CEE TLV's feature errors, counts from
    /// the first byte of the frame.
    ///
    /// The LLDP payload includes any Ethernet padding; the LLDPDU parser
    /// accepts zero octets after End, so padded frames parse.
    pub fn parse(data: &'a [u8]) -> Result<Frame<'a>, DecodeError> {
        let (header, len) = EthernetHeader::parse(data)?;
        let rest = data.get(len..).unwrap_or(&[]);
        let payload = match header.ethertype {
            ETHERTYPE_LLDP => Payload::Lldp(Lldpdu::parse_at(rest, len)?),
            ETHERTYPE_MAC_CONTROL => {
                Payload::MacControl(MacControl::parse(rest).map_err(|e| e.shifted(len))?)
            }
            ETHERTYPE_MEASURE => {
                Payload::Measure(Measure::parse(rest).map_err(|e| e.shifted(len))?)
            }
            _ => Payload::Other(rest),
        };
        Ok(Frame { header, payload })
    }

    /// Header plus payload, without padding to the minimum frame size.
    pub fn buffer_len(&self) -> usize {
        self.header.buffer_len()
            + match &self.payload {
                Payload::Lldp(pdu) => pdu.buffer_len(),
                Payload::MacControl(ctl) => ctl.buffer_len(),
                Payload::Measure(m) => m.buffer_len(),
                Payload::Other(bytes) => bytes.len(),
            }
    }

    /// Writes `buffer_len()` bytes and returns that count. The header is
    /// written as given: the caller keeps its Ethertype consistent with the
    /// payload. An LLDPDU that [`Lldpdu::emit`] refuses is refused.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let h = self.header.buffer_len();
        self.header.emit(buf);
        let body = &mut buf[h..];
        Ok(h + match &self.payload {
            Payload::Lldp(pdu) => pdu.emit(body)?,
            Payload::MacControl(ctl) => {
                ctl.emit(body);
                ctl.buffer_len()
            }
            Payload::Measure(m) => {
                m.emit(body);
                m.buffer_len()
            }
            Payload::Other(bytes) => {
                body[..bytes.len()].copy_from_slice(bytes);
                bytes.len()
            }
        })
    }
}

/// Builds an LLDP frame to the nearest-bridge group address in `out`
/// (cleared first; reusing one `Vec` avoids an allocation per frame), padded
/// with zeros to the 60-octet minimum. LLDP frames are never VLAN-tagged.
/// An LLDPDU that [`Lldpdu::emit`] refuses leaves `out` empty.
pub fn emit_lldp_frame(src: MacAddr, pdu: &Lldpdu, out: &mut Vec<u8>) -> Result<(), EmitError> {
    let header = EthernetHeader {
        dst: MacAddr::LLDP_NEAREST_BRIDGE,
        src,
        vlan: None,
        ethertype: ETHERTYPE_LLDP,
    };
    let h = header.buffer_len();
    out.clear();
    out.resize((h + pdu.buffer_len()).max(MIN_FRAME_LEN), 0);
    header.emit(out);
    if let Err(e) = pdu.emit(&mut out[h..]) {
        out.clear();
        return Err(e);
    }
    Ok(())
}

/// Builds a PAUSE or PFC frame in `out` (cleared first). PFC goes to
/// [`MacAddr::MAC_CONTROL`] in practice, but `dst` is a parameter so tests
/// and unicast PAUSE can use others; a VLAN tag is allowed because some
/// switches expect priority-tagged PFC.
pub fn emit_mac_control_frame(
    src: MacAddr,
    dst: MacAddr,
    vlan: Option<VlanTag>,
    ctl: &MacControl,
    out: &mut Vec<u8>,
) {
    let header = EthernetHeader {
        dst,
        src,
        vlan,
        ethertype: ETHERTYPE_MAC_CONTROL,
    };
    let h = header.buffer_len();
    out.clear();
    out.resize((h + ctl.buffer_len()).max(MIN_FRAME_LEN), 0);
    header.emit(out);
    ctl.emit(&mut out[h..]);
}

/// Builds a link-delay measurement frame in `out` (cleared first): untagged, to the
/// nearest-bridge group address, so no bridge forwards it off the link it measures.
pub fn emit_measure_frame(src: MacAddr, msg: &Measure, out: &mut Vec<u8>) {
    let header = EthernetHeader {
        dst: MacAddr::LLDP_NEAREST_BRIDGE,
        src,
        vlan: None,
        ethertype: ETHERTYPE_MEASURE,
    };
    let h = header.buffer_len();
    out.clear();
    out.resize((h + msg.buffer_len()).max(MIN_FRAME_LEN), 0);
    header.emit(out);
    msg.emit(&mut out[h..]);
}

//! MAC Control frames (Ethertype 0x8808): 802.3x PAUSE (opcode 0x0001) and
//! Priority-based Flow Control (802.1Qbb / 802.3 Annex 31D, opcode 0x0101).

/// MAC Control Ethertype.
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;
/// Opcode plus parameters are padded to this many bytes (minimum frame payload).
pub const MIN_PAYLOAD_LEN: usize = 46;

/// A MAC Control frame's payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacControl {
    /// 802.3x PAUSE: stop all traffic for `quanta` x 512 bit times.
    Pause { quanta: u16 },
    /// PFC: per priority n, when bit n of `class_enable` is set, pause it for
    /// `quanta[n]` x 512 bit times (0 = resume). The vector's high byte is
    /// reserved and must be zero.
    Pfc { class_enable: u16, quanta: [u16; 8] },
}

use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

impl MacControl {
    /// Parses a MAC Control payload (the bytes after the Ethertype).
    ///
    /// Only the opcode and its parameters are required; the padding that fills
    /// the frame to its minimum size is not checked (802.3 says "ignored on
    /// receipt", and some NICs pad with garbage). The PFC class-enable vector's
    /// reserved high byte must be zero: a nonzero one means either a future
    /// extension or a corrupted frame, and acting on either could pause the
    /// wrong priority.
    pub fn parse(payload: &[u8]) -> Result<MacControl, DecodeError> {
        let mut r = Reader::new(payload);
        let opcode_at = r.offset();
        let opcode = r.u16("macc.opcode")?;
        match opcode {
            OPCODE_PAUSE => Ok(MacControl::Pause {
                quanta: r.u16("macc.pause_time")?,
            }),
            OPCODE_PFC => {
                let enbv_at = r.offset();
                let class_enable = r.u16("macc.cbfc.enbv")?;
                if class_enable & 0xff00 != 0 {
                    return Err(DecodeError::new(
                        enbv_at,
                        "macc.cbfc.enbv",
                        DecodeErrorKind::BadValue {
                            value: class_enable.into(),
                            reason: "reserved high byte of the class-enable vector must be zero",
                        },
                    ));
                }
                let mut quanta = [0u16; 8];
                for q in quanta.iter_mut() {
                    *q = r.u16("macc.cbfc.pause_time")?;
                }
                Ok(MacControl::Pfc {
                    class_enable,
                    quanta,
                })
            }
            other => Err(DecodeError::new(
                opcode_at,
                "macc.opcode",
                DecodeErrorKind::BadValue {
                    value: other.into(),
                    reason: "neither PAUSE (0x0001) nor PFC (0x0101)",
                },
            )),
        }
    }

    pub fn opcode(&self) -> u16 {
        match self {
            MacControl::Pause { .. } => OPCODE_PAUSE,
            MacControl::Pfc { .. } => OPCODE_PFC,
        }
    }

    /// Opcode plus parameters, padded to [`MIN_PAYLOAD_LEN`].
    pub fn buffer_len(&self) -> usize {
        MIN_PAYLOAD_LEN
    }

    /// Writes `buffer_len()` bytes: opcode, parameters, zero padding.
    ///
    /// A PFC `class_enable` with its reserved high byte set is written as
    /// given, so tests can build the frames a parser must refuse.
    pub fn emit(&self, buf: &mut [u8]) {
        let mut w = Writer::new(buf);
        w.u16(self.opcode());
        match self {
            MacControl::Pause { quanta } => w.u16(*quanta),
            MacControl::Pfc {
                class_enable,
                quanta,
            } => {
                w.u16(*class_enable);
                for q in quanta {
                    w.u16(*q);
                }
            }
        }
        while w.written() < MIN_PAYLOAD_LEN {
            w.u8(0);
        }
    }
}

//! Link-delay measurement frames for adaptive PFC headroom (Adaptive PFC Headroom,
//! phase 2).
//!
//! Adaptive PFC Headroom asks for "a new MAC control frame" but names no format or
//! opcode. A new MAC Control opcode (Ethertype 0x8808) would be consumed or dropped by
//! the MAC of most NICs before software could timestamp it, and every PAUSE/PFC
//! receiver parses 0x8808. So the measurement travels under the IEEE 802 Local
//! Experimental Ethertype 1 (0x88B5, IEEE Std 802 clause 9.2.2), which no PAUSE/PFC
//! receiver acts on and tshark shows as data, to the nearest-bridge group address
//! 01-80-C2-00-00-0E, which no 802.1Q bridge forwards: a measurement never leaves the
//! link it measures.
//!
//! ```text
//! offset (after the Ethertype)
//!  0  magic u16 = 0x4C48 ("LH": lossless headroom; 0x88B5 is shared by experiments)
//!  2  version u8 = 1
//!  3  message u8: 1 request, 2 response, 3 follow-up
//!  4  session u16: chosen by the requester per measurement round; stale answers are dropped
//!  6  sequence u16: one per exchange within the session
//!  8  flags u8: bit 0 = the sender's timestamps are hardware timestamps
//!  9  reserved, 3 bytes of zero
//! 12  t1 u64: request: 0; response and follow-up: 0 (T1 never leaves station 1)
//! 20  t2 u64: response and follow-up: station 2's receive timestamp of the request
//! 28  t3 u64: follow-up: station 2's transmit timestamp of the response
//! 36  end; zero padding to the 46-byte minimum payload
//! ```
//!
//! Timestamps are picoseconds on the sender's own clock, modulo 2^64: only
//! differences taken on one clock are ever used (T4 - T1 on station 1, T3 - T2 on
//! station 2), so the two clocks need no synchronisation and wrapping is harmless.
//!
//! The exchange is two-step, as IEEE 1588's peer delay (Pdelay_Req, Pdelay_Resp,
//! Pdelay_Resp_Follow_Up): station 2's transmit timestamp of its response exists only
//! after the response has left, so it follows in a third frame.

use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

/// IEEE 802 Local Experimental Ethertype 1.
pub const ETHERTYPE_MEASURE: u16 = 0x88b5;
/// Distinguishes our frames from other experiments on 0x88B5.
pub const MAGIC: u16 = 0x4c48;
pub const VERSION: u8 = 1;
/// Bytes of a measurement message; the frame is padded to the 46-byte minimum payload.
pub const MESSAGE_LEN: usize = 36;
/// Flag: the sender's timestamps come from the NIC's clock.
pub const FLAG_HARDWARE: u8 = 0x01;

/// The three messages of one exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// Station 1 to station 2; station 1 keeps its transmit timestamp T1.
    Request = 1,
    /// Station 2 to station 1, carrying T2; station 1 keeps its receive timestamp T4.
    Response = 2,
    /// Station 2 to station 1, carrying T2 and T3 once the response has left.
    FollowUp = 3,
}

impl MessageKind {
    fn from_u8(v: u8) -> Option<Self> {
        match v {
            1 => Some(MessageKind::Request),
            2 => Some(MessageKind::Response),
            3 => Some(MessageKind::FollowUp),
            _ => None,
        }
    }
}

/// One measurement message (the payload after the Ethertype).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Measure {
    pub kind: MessageKind,
    pub session: u16,
    pub sequence: u16,
    pub flags: u8,
    pub t1: u64,
    pub t2: u64,
    pub t3: u64,
}

impl Measure {
    /// Parses a measurement payload. Padding after the 36 message bytes is ignored,
    /// as Ethernet padding is.
    pub fn parse(payload: &[u8]) -> Result<Measure, DecodeError> {
        let mut r = Reader::new(payload);
        let at = r.offset();
        let magic = r.u16("measure.magic")?;
        if magic != MAGIC {
            return Err(DecodeError::new(
                at,
                "measure.magic",
                DecodeErrorKind::NotThisProtocol {
                    reason: "another experiment on Ethertype 0x88B5 (magic is not 0x4C48)",
                },
            ));
        }
        let at = r.offset();
        let version = r.u8("measure.version")?;
        if version != VERSION {
            return Err(DecodeError::new(
                at,
                "measure.version",
                DecodeErrorKind::BadValue {
                    value: version.into(),
                    reason: "only version 1 is defined",
                },
            ));
        }
        let at = r.offset();
        let kind_byte = r.u8("measure.message")?;
        let kind = MessageKind::from_u8(kind_byte).ok_or_else(|| {
            DecodeError::new(
                at,
                "measure.message",
                DecodeErrorKind::BadValue {
                    value: kind_byte.into(),
                    reason: "neither request (1), response (2) nor follow-up (3)",
                },
            )
        })?;
        let session = r.u16("measure.session")?;
        let sequence = r.u16("measure.sequence")?;
        let flags = r.u8("measure.flags")?;
        r.take(3, "measure.reserved")?;
        let t1 = u64_be(&mut r, "measure.t1")?;
        let t2 = u64_be(&mut r, "measure.t2")?;
        let t3 = u64_be(&mut r, "measure.t3")?;
        Ok(Measure {
            kind,
            session,
            sequence,
            flags,
            t1,
            t2,
            t3,
        })
    }

    /// The message, padded to the minimum payload.
    pub fn buffer_len(&self) -> usize {
        crate::mac_control::MIN_PAYLOAD_LEN
    }

    /// Writes `buffer_len()` bytes.
    pub fn emit(&self, buf: &mut [u8]) {
        let mut w = Writer::new(buf);
        w.u16(MAGIC);
        w.u8(VERSION);
        w.u8(self.kind as u8);
        w.u16(self.session);
        w.u16(self.sequence);
        w.u8(self.flags);
        w.put(&[0; 3]);
        for t in [self.t1, self.t2, self.t3] {
            w.put(&t.to_be_bytes());
        }
        while w.written() < self.buffer_len() {
            w.u8(0);
        }
    }
}

fn u64_be(r: &mut Reader<'_>, field: &'static str) -> Result<u64, DecodeError> {
    let b: [u8; 8] = r.array(field)?;
    Ok(u64::from_be_bytes(b))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Measure {
        Measure {
            kind: MessageKind::FollowUp,
            session: 0xbeef,
            sequence: 7,
            flags: FLAG_HARDWARE,
            t1: 0,
            t2: 0x0102_0304_0506_0708,
            t3: u64::MAX,
        }
    }

    #[test]
    fn round_trip_and_layout() {
        let m = sample();
        let mut buf = [0xaau8; 46];
        m.emit(&mut buf);
        assert_eq!(&buf[..4], &[0x4c, 0x48, 1, 3]);
        assert_eq!(&buf[4..9], &[0xbe, 0xef, 0, 7, 1]);
        assert_eq!(&buf[20..28], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(buf[36..].iter().all(|&b| b == 0));
        assert_eq!(Measure::parse(&buf), Ok(m));
    }

    #[test]
    fn every_truncation_is_an_error() {
        let mut buf = [0u8; 46];
        sample().emit(&mut buf);
        for n in 0..MESSAGE_LEN {
            let e = Measure::parse(&buf[..n]).unwrap_err();
            assert!(
                matches!(e.kind, DecodeErrorKind::Truncated { .. }),
                "{n}: {e}"
            );
        }
        assert!(Measure::parse(&buf[..MESSAGE_LEN]).is_ok());
    }

    #[test]
    fn foreign_or_bad_fields_are_named() {
        let mut buf = [0u8; 46];
        sample().emit(&mut buf);
        let mut other = buf;
        other[0] = 0;
        assert_eq!(Measure::parse(&other).unwrap_err().field, "measure.magic");
        let mut v2 = buf;
        v2[2] = 2;
        assert_eq!(Measure::parse(&v2).unwrap_err().offset, 2);
        let mut k = buf;
        k[3] = 9;
        assert_eq!(Measure::parse(&k).unwrap_err().field, "measure.message");
    }
}

//! A bounded reader and a plain writer shared by every parser and emitter.
//!
//! The reader (after rustls' `codec::Reader`) is the only place that touches
//! input bytes by position: every other function asks it for `n` bytes and gets
//! either them or a [`DecodeError`] saying how many were missing and where.
//! That is what makes "no parser panics on any input" checkable by reading one
//! small file.

use crate::{DecodeError, DecodeErrorKind, EmitError};

/// The largest value a 9-bit TLV length field holds (LLDP TLVs and CEE sub-TLVs).
pub(crate) const MAX_TLV_LEN: usize = 0x1ff;

/// A cursor over a byte slice that never reads past its end.
///
/// `base` is the offset of `buf[0]` from the start of the buffer the outermost
/// parser of this call was handed, so errors from nested readers (see
/// [`Reader::sub`]) carry offsets a user can find in a hex dump.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader::with_base(buf, 0)
    }

    /// A reader whose errors count offsets from `base` bytes before `buf`.
    pub(crate) fn with_base(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    /// Offset of the next unread byte, from the start of the outermost buffer.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Bytes not yet read.
    pub(crate) fn left(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.left() == 0
    }

    /// The unread bytes, without consuming them.
    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// The error for a field of `needed` bytes that does not fit.
    pub(crate) fn truncated(&self, field: &'static str, needed: usize) -> DecodeError {
        DecodeError::new(
            self.offset(),
            field,
            DecodeErrorKind::Truncated {
                needed,
                available: self.left(),
            },
        )
    }

    /// The next `n` bytes, or `Truncated` naming `field`.
    pub(crate) fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n);
        match end.and_then(|end| self.buf.get(self.pos..end)) {
            Some(bytes) => {
                self.pos += n;
                Ok(bytes)
            }
            None => Err(self.truncated(field, n)),
        }
    }

    /// A reader over the next `n` bytes (a length-prefixed body); this reader
    /// moves past them.
    pub(crate) fn sub(&mut self, n: usize, field: &'static str) -> Result<Reader<'a>, DecodeError> {
        let base = self.offset();
        let buf = self.take(n, field)?;
        Ok(Reader { buf, pos: 0, base })
    }

    pub(crate) fn array<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<[u8; N], DecodeError> {
        let bytes = self.take(N, field)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, field: &'static str) -> Result<u8, DecodeError> {
        let [b] = self.array::<1>(field)?;
        Ok(b)
    }

    pub(crate) fn u16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }

    pub(crate) fn u32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array(field)?))
    }
}

/// A cursor over an output buffer the caller sized with `buffer_len()`.
///
/// The caller provides `buffer_len()` bytes, as in smoltcp: a too-small
/// buffer is a programming error and panics (in the emitter, never in a
/// parser). A value that does not fit its length field is not: it is an
/// [`EmitError`] from [`Writer::tlv_header`].
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Writer { buf, pos: 0 }
    }

    /// Bytes written so far.
    pub(crate) fn written(&self) -> usize {
        self.pos
    }

    /// The unwritten part of the buffer, for a nested emitter; follow with
    /// [`Writer::advance`] by what it wrote.
    pub(crate) fn rest_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.pos..]
    }

    pub(crate) fn advance(&mut self, n: usize) {
        self.pos += n;
    }

    pub(crate) fn put(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        self.buf[self.pos..end].copy_from_slice(bytes);
        self.pos = end;
    }

    pub(crate) fn u8(&mut self, v: u8) {
        self.put(&[v]);
    }

    pub(crate) fn u16(&mut self, v: u16) {
        self.put(&v.to_be_bytes());
    }

    pub(crate) fn u32(&mut self, v: u32) {
        self.put(&v.to_be_bytes());
    }

    /// A TLV header: 7-bit type, 9-bit length (used by LLDP and by the CEE
    /// sub-TLVs alike). A length over 511 cannot be represented: it is
    /// refused, naming `field`, and nothing is written.
    pub(crate) fn tlv_header(
        &mut self,
        tlv_type: u8,
        len: usize,
        field: &'static str,
    ) -> Result<(), EmitError> {
        EmitError::check(field, len, 0, MAX_TLV_LEN)?;
        self.u16((u16::from(tlv_type & 0x7f) << 9) | len as u16);
        Ok(())
    }
}

/// Splits a TLV header word into (type, length).
pub(crate) fn split_tlv_header(word: u16) -> (u8, usize) {
    ((word >> 9) as u8, (word & 0x1ff) as usize)
}

/// One TLV as read: its type, where its header starts, its value.
pub(crate) struct Tlv<'a> {
    pub tlv_type: u8,
    pub at: usize,
    pub value: Reader<'a>,
}

/// Reads one TLV header and takes its value; a length running past the data is an
/// error at the header.
pub(crate) fn read_tlv<'a>(r: &mut Reader<'a>) -> Result<Tlv<'a>, DecodeError> {
    let at = r.offset();
    let (tlv_type, len) = split_tlv_header(r.u16("lldp.tlv")?);
    if len > r.left() {
        return Err(DecodeError::new(
            at,
            "lldp.tlv.length",
            DecodeErrorKind::LengthBeyondContainer {
                length: len,
                available: r.left(),
            },
        ));
    }
    let value = r.sub(len, "lldp.tlv")?;
    Ok(Tlv {
        tlv_type,
        at,
        value,
    })
}

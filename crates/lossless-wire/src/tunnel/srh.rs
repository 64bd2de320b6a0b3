//! The IPv6 Segment Routing Header (RFC 8754 section 2).
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! | Next Header   |  Hdr Ext Len  | Routing Type  | Segments Left |
//! |  Last Entry   |     Flags     |              Tag              |
//! |            Segment List[0] (128-bit IPv6 address)             |
//! |                              ...                              |
//! |            Segment List[n] (128-bit IPv6 address)             |
//! //         Optional Type Length Value objects (variable)       //
//! ```
//!
//! "Hdr Ext Len: 8-bit unsigned integer. Defines the length of the SRH header
//! in 8-octet units, not including the first 8 octets." "Last Entry: contains
//! the index (zero based), in the Segment List, of the last element of the
//! Segment List." The list is in reverse order of the path: Segment List\[0\] is
//! the last segment, Segment List\[Last Entry\] the first; Segments Left indexes
//! the next one to visit. With the Linux kernel's `seg6 mode l2encap segs A,B`
//! the outer destination is A = Segment List\[1\], Segments Left is 1, Last Entry
//! 1; the last SID (B) is the far end's `End.DX2`, which decapsulates only
//! when Segments Left has reached 0.

use std::fmt;
use std::net::Ipv6Addr;

use super::ip::IpProtocol;
use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

/// Routing Type of the SRH (RFC 8754 section 8.1).
pub const ROUTING_TYPE_SRH: u8 = 4;
/// The fixed part before the segment list.
pub const FIXED_LEN: usize = 8;
/// Octets per segment.
pub const SEGMENT_LEN: usize = 16;
/// Last Entry is 8 bits, but Hdr Ext Len (8 bits, 8-octet units) bounds the
/// list first: 255 units hold 127 segments.
pub const MAX_SEGMENTS: usize = 127;

/// A segment list as it is on the wire: 16 octets per segment, Segment
/// List\[0\] first. Borrowed, so that parsing copies nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SegmentList<'a>(&'a [u8]);

/// Why bytes are not a segment list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SegmentListError {
    #[error("a segment list holds at least one segment")]
    Empty,
    #[error("{0} octets is not a whole number of 16-octet segments")]
    Partial(usize),
    #[error("{0} segments; an SRH holds at most {MAX_SEGMENTS}")]
    TooMany(usize),
}

impl<'a> SegmentList<'a> {
    /// `bytes` in wire order (Segment List\[0\] first): 1 to [`MAX_SEGMENTS`]
    /// whole segments.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<SegmentList<'a>, SegmentListError> {
        if bytes.is_empty() {
            return Err(SegmentListError::Empty);
        }
        if !bytes.len().is_multiple_of(SEGMENT_LEN) {
            return Err(SegmentListError::Partial(bytes.len()));
        }
        let n = bytes.len() / SEGMENT_LEN;
        if n > MAX_SEGMENTS {
            return Err(SegmentListError::TooMany(n));
        }
        Ok(SegmentList(bytes))
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// Number of segments (Last Entry + 1); never zero.
    pub fn len(&self) -> usize {
        self.0.len() / SEGMENT_LEN
    }

    /// Always false: a segment list is never empty. Here for clippy's sake.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Segment List\[i\].
    pub fn get(&self, i: usize) -> Option<Ipv6Addr> {
        let start = i.checked_mul(SEGMENT_LEN)?;
        let bytes = self.0.get(start..start.checked_add(SEGMENT_LEN)?)?;
        <[u8; 16]>::try_from(bytes).ok().map(Ipv6Addr::from)
    }

    /// Segment List\[0\], \[1\], ... (the path in reverse).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Ipv6Addr> + 'a {
        self.0.chunks_exact(SEGMENT_LEN).map(|c| {
            let mut a = [0u8; 16];
            a.copy_from_slice(c);
            Ipv6Addr::from(a)
        })
    }

    /// The segments in path order (the first to visit first): the list reversed.
    pub fn path(&self) -> impl Iterator<Item = Ipv6Addr> + 'a {
        self.iter().rev()
    }
}

impl fmt::Debug for SegmentList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The wire bytes of a segment list for `path` given in travel order (as
/// `ip route ... encap seg6 ... segs A,B,C` takes it): reversed, so Segment
/// List\[0\] is the last segment.
pub fn encode_path(path: &[Ipv6Addr]) -> Vec<u8> {
    path.iter().rev().flat_map(|a| a.octets()).collect()
}

/// A Segment Routing Header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Srh<'a> {
    /// The header after the SRH: [`IpProtocol::ETHERNET`] for L2 payloads.
    pub next_header: IpProtocol,
    pub segments_left: u8,
    pub flags: u8,
    pub tag: u16,
    /// Segment List\[0..=Last Entry\]; Last Entry is `segments.len() - 1`.
    pub segments: SegmentList<'a>,
    /// The octets after the segment list up to Hdr Ext Len: TLVs and their
    /// padding (RFC 8754 section 2.1), carried as they are. Always a multiple
    /// of 8 octets when parsed; an emitter given another length panics.
    pub tlvs: &'a [u8],
}

impl<'a> Srh<'a> {
    /// Parses an SRH at the start of `data` (the IPv6 payload) and returns it
    /// with the bytes after it.
    ///
    /// Refused, with the field named: a routing type other than 4; a header
    /// longer than `data`; a Last Entry beyond what Hdr Ext Len holds; a
    /// Segments Left above Last Entry + 1. The last two are RFC 8754 section
    /// 4.3.1.1's "max_LE = (Hdr Ext Len / 2) - 1; if ((Last Entry > max_LE)
    /// or (Segments Left > Last Entry+1))" check, applied to every header and
    /// not only when Segments Left is nonzero, because a header that fails it
    /// cannot be re-emitted as it was.
    pub fn parse(data: &'a [u8]) -> Result<(Srh<'a>, &'a [u8]), DecodeError> {
        let mut r = Reader::new(data);
        let next_header = IpProtocol(r.u8("ipv6.routing.nxt")?);
        let len_at = r.offset();
        let hdr_ext_len = r.u8("ipv6.routing.len")?;
        let type_at = r.offset();
        let routing_type = r.u8("ipv6.routing.type")?;
        let sl_at = r.offset();
        let segments_left = r.u8("ipv6.routing.segleft")?;
        let le_at = r.offset();
        let last_entry = r.u8("ipv6.routing.srh.last_entry")?;
        let flags = r.u8("ipv6.routing.srh.flags")?;
        let tag = r.u16("ipv6.routing.srh.tag")?;
        if routing_type != ROUTING_TYPE_SRH {
            return Err(DecodeError::new(
                type_at,
                "ipv6.routing.type",
                DecodeErrorKind::BadValue {
                    value: routing_type.into(),
                    reason: "routing header is not a Segment Routing Header (type 4)",
                },
            ));
        }
        let body_len = usize::from(hdr_ext_len) * 8;
        if body_len > r.left() {
            return Err(DecodeError::new(
                len_at,
                "ipv6.routing.len",
                DecodeErrorKind::LengthBeyondContainer {
                    length: body_len,
                    available: r.left(),
                },
            ));
        }
        let n_segments = usize::from(last_entry) + 1;
        if n_segments * SEGMENT_LEN > body_len {
            return Err(DecodeError::new(
                le_at,
                "ipv6.routing.srh.last_entry",
                DecodeErrorKind::BadValue {
                    value: last_entry.into(),
                    reason: "Last Entry beyond the segments Hdr Ext Len holds (RFC 8754 4.3.1.1)",
                },
            ));
        }
        if usize::from(segments_left) > n_segments {
            return Err(DecodeError::new(
                sl_at,
                "ipv6.routing.segleft",
                DecodeErrorKind::BadValue {
                    value: segments_left.into(),
                    reason: "Segments Left above Last Entry + 1 (RFC 8754 4.3.1.1)",
                },
            ));
        }
        let segment_bytes = r.take(n_segments * SEGMENT_LEN, "ipv6.routing.srh.addr")?;
        let tlvs = r.take(body_len - n_segments * SEGMENT_LEN, "ipv6.routing.srh.tlv")?;
        // from_bytes cannot fail here: 1..=127 whole segments fit in 255 units.
        let segments = SegmentList::from_bytes(segment_bytes).map_err(|_| {
            DecodeError::new(
                le_at,
                "ipv6.routing.srh.last_entry",
                DecodeErrorKind::BadValue {
                    value: last_entry.into(),
                    reason: "segment list out of bounds",
                },
            )
        })?;
        let srh = Srh {
            next_header,
            segments_left,
            flags,
            tag,
            segments,
            tlvs,
        };
        Ok((srh, r.rest()))
    }

    /// Last Entry: the index of the last element of the segment list.
    pub fn last_entry(&self) -> u8 {
        (self.segments.len() - 1) as u8
    }

    /// The segment Segments Left points at: the current destination while
    /// the packet travels, Segment List\[0\] once Segments Left is 0. `None`
    /// for a reduced SRH whose first segment is only in the IPv6 destination
    /// (Segments Left = Last Entry + 1).
    pub fn active_segment(&self) -> Option<Ipv6Addr> {
        self.segments.get(self.segments_left.into())
    }

    /// Hdr Ext Len as emitted.
    pub fn hdr_ext_len(&self) -> u8 {
        ((self.buffer_len() - FIXED_LEN) / 8) as u8
    }

    pub fn buffer_len(&self) -> usize {
        FIXED_LEN + self.segments.as_bytes().len() + self.tlvs.len()
    }

    /// Writes `buffer_len()` bytes. Panics if `tlvs` is not a multiple of 8
    /// octets or makes the header longer than Hdr Ext Len can say (a caller
    /// bug: parsed headers never do).
    pub fn emit(&self, buf: &mut [u8]) {
        assert!(
            self.tlvs.len().is_multiple_of(8) && self.buffer_len() - FIXED_LEN <= 255 * 8,
            "SRH TLVs of {} octets do not fit Hdr Ext Len",
            self.tlvs.len()
        );
        let mut w = Writer::new(buf);
        w.u8(self.next_header.0);
        w.u8(self.hdr_ext_len());
        w.u8(ROUTING_TYPE_SRH);
        w.u8(self.segments_left);
        w.u8(self.last_entry());
        w.u8(self.flags);
        w.u16(self.tag);
        w.put(self.segments.as_bytes());
        w.put(self.tlvs);
    }
}

//! An MPLS label stack (RFC 3032 section 2.1; TC named by RFC 5462) and the
//! Ethernet pseudowire control word (RFC 4448 section 4.6), for SR-MPLS.
//!
//! ```text
//! Label stack entry:
//! |                Label                  | TC  |S|       TTL     |
//!   20 bits                                 3    1     8
//! Control word:
//! |0 0 0 0|       Reserved        |       Sequence Number         |
//! ```
//!
//! With SR-MPLS the stack is the segment list as labels (top first) over the
//! pseudowire label the far PE bound to the Ethernet service; "S" marks the
//! bottom entry. The payload after the stack carries no type: an LSR that
//! peeks past the stack takes a first nibble of 4 or 6 for IP. A PFC frame
//! starts with 01-80-C2, first nibble 0, which Wireshark (and a deep-looking
//! LSR) reads as a control word, so the control word is what keeps the inner
//! frame unambiguous.

use std::fmt;

use crate::codec::{Reader, Writer};
use crate::{DecodeError, DecodeErrorKind};

/// MPLS unicast.
pub const ETHERTYPE_MPLS: u16 = 0x8847;
pub const ENTRY_LEN: usize = 4;
pub const CONTROL_WORD_LEN: usize = 4;
/// Labels are 20 bits.
pub const LABEL_MAX: u32 = 0x000f_ffff;
/// Reserved label values (RFC 3032 section 2.1).
pub const LABEL_IPV4_EXPLICIT_NULL: u32 = 0;
pub const LABEL_ROUTER_ALERT: u32 = 1;
pub const LABEL_IPV6_EXPLICIT_NULL: u32 = 2;
pub const LABEL_IMPLICIT_NULL: u32 = 3;
/// 0..=15 are reserved; a pseudowire or SID label is above.
pub const LABEL_FIRST_UNRESERVED: u32 = 16;

/// One label stack entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelEntry {
    /// 20 bits; higher bits are dropped on emit.
    pub label: u32,
    /// Traffic Class, 3 bits (the former EXP field).
    pub tc: u8,
    /// Bottom of stack.
    pub bos: bool,
    pub ttl: u8,
}

impl LabelEntry {
    pub fn from_word(w: u32) -> LabelEntry {
        LabelEntry {
            label: w >> 12,
            tc: ((w >> 9) & 0x7) as u8,
            bos: w & 0x100 != 0,
            ttl: w as u8,
        }
    }

    pub fn to_word(self) -> u32 {
        (self.label & LABEL_MAX) << 12
            | u32::from(self.tc & 0x7) << 9
            | u32::from(self.bos) << 8
            | u32::from(self.ttl)
    }

    pub fn to_bytes(self) -> [u8; ENTRY_LEN] {
        self.to_word().to_be_bytes()
    }
}

/// A label stack as it is on the wire, top entry first, ending with the one
/// entry whose S bit is set. Borrowed, so parsing copies nothing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LabelStack<'a>(&'a [u8]);

/// Why bytes are not a label stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LabelStackError {
    #[error("a label stack holds at least one entry")]
    Empty,
    #[error("{0} octets is not a whole number of 4-octet entries")]
    Partial(usize),
    #[error("entry {0} has the bottom-of-stack bit but is not the last")]
    EarlyBottom(usize),
    #[error("the last entry lacks the bottom-of-stack bit")]
    NoBottom,
}

impl<'a> LabelStack<'a> {
    /// `bytes` as on the wire: whole entries, S set on the last only.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<LabelStack<'a>, LabelStackError> {
        if bytes.is_empty() {
            return Err(LabelStackError::Empty);
        }
        if !bytes.len().is_multiple_of(ENTRY_LEN) {
            return Err(LabelStackError::Partial(bytes.len()));
        }
        let stack = LabelStack(bytes);
        let n = stack.len();
        for (i, e) in stack.iter().enumerate() {
            if e.bos && i + 1 != n {
                return Err(LabelStackError::EarlyBottom(i));
            }
            if !e.bos && i + 1 == n {
                return Err(LabelStackError::NoBottom);
            }
        }
        Ok(stack)
    }

    /// Parses entries from the start of `data` up to and including the first
    /// with the S bit, and returns the stack with the bytes after it. Running
    /// out of bytes first is `Truncated` on `mpls.label` at the entry that
    /// is missing.
    pub fn parse(data: &'a [u8]) -> Result<(LabelStack<'a>, &'a [u8]), DecodeError> {
        let mut r = Reader::new(data);
        loop {
            let word = r.u32("mpls.label")?;
            if word & 0x100 != 0 {
                break;
            }
        }
        let end = r.offset();
        let bytes = data.get(..end).unwrap_or(&[]);
        Ok((LabelStack(bytes), r.rest()))
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }

    /// Number of entries; never zero.
    pub fn len(&self) -> usize {
        self.0.len() / ENTRY_LEN
    }

    /// Always false: a stack has a bottom entry. Here for clippy's sake.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Entries top first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = LabelEntry> + 'a {
        self.0
            .chunks_exact(ENTRY_LEN)
            .map(|c| LabelEntry::from_word(u32::from_be_bytes([c[0], c[1], c[2], c[3]])))
    }

    pub fn top(&self) -> Option<LabelEntry> {
        self.iter().next()
    }

    /// The bottom entry: with an Ethernet pseudowire, the PW label.
    pub fn bottom(&self) -> Option<LabelEntry> {
        self.iter().next_back()
    }

    pub fn buffer_len(&self) -> usize {
        self.0.len()
    }

    pub fn emit(&self, buf: &mut [u8]) {
        Writer::new(buf).put(self.0);
    }
}

impl fmt::Debug for LabelStack<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The wire bytes of a stack with `labels` top first, each with `tc` and
/// `ttl`, S set on the last. Labels are masked to 20 bits.
pub fn encode_stack(labels: &[u32], tc: u8, ttl: u8) -> Vec<u8> {
    let n = labels.len();
    labels
        .iter()
        .enumerate()
        .flat_map(|(i, &label)| {
            LabelEntry {
                label,
                tc,
                bos: i + 1 == n,
                ttl,
            }
            .to_bytes()
        })
        .collect()
}

/// The Ethernet pseudowire control word. The reserved bits "MUST be set to
/// 0 when transmitting, and MUST be ignored upon receipt"; they are kept so
/// that a parsed word emits as it came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ControlWord {
    /// Bits 4..16, 12 bits.
    pub reserved: u16,
    /// 0 when sequencing is not used.
    pub sequence: u16,
}

impl ControlWord {
    /// Parses the word at the start of `data` and returns it with the frame
    /// after it. A first nibble other than 0 is refused (1 is the PW
    /// Associated Channel, 4 and 6 would be IP).
    pub fn parse(data: &[u8]) -> Result<(ControlWord, &[u8]), DecodeError> {
        let mut r = Reader::new(data);
        let word = r.u32("pwethcw")?;
        let nibble = word >> 28;
        if nibble != 0 {
            return Err(DecodeError::new(
                0,
                "pwethcw",
                DecodeErrorKind::BadValue {
                    value: nibble.into(),
                    reason: "first nibble of an Ethernet PW control word must be 0 (RFC 4448 4.6)",
                },
            ));
        }
        let cw = ControlWord {
            reserved: (word >> 16) as u16 & 0x0fff,
            sequence: word as u16,
        };
        Ok((cw, r.rest()))
    }

    pub const fn buffer_len(&self) -> usize {
        CONTROL_WORD_LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        let mut w = Writer::new(buf);
        w.u16(self.reserved & 0x0fff);
        w.u16(self.sequence);
    }
}

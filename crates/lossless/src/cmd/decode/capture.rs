//! Reading pcap and pcapng captures from memory, with errors that say where.
//!
//! The whole file is read first so that every error can name the byte offset
//! where the capture stops making sense; the captures this tool is for (LLDP
//! and PFC, a few frames a second) are small.

use std::borrow::Cow;
use std::fmt;

use pcap_file::pcap::{PcapHeader, PcapParser};
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

/// Which container the file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap,
    PcapNg,
}

/// A capture that cannot be read on from `offset` (bytes from the start of the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureError {
    pub offset: usize,
    pub reason: String,
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.reason)
    }
}

/// Seconds and nanoseconds since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp {
    pub secs: u64,
    pub nanos: u32,
}

impl Timestamp {
    pub fn as_f64(self) -> f64 {
        self.secs as f64 + f64::from(self.nanos) / 1e9
    }
}

impl fmt::Display for Timestamp {
    /// Microseconds unless the capture carries finer digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos.is_multiple_of(1000) {
            write!(f, "{}.{:06}", self.secs, self.nanos / 1000)
        } else {
            write!(f, "{}.{:09}", self.secs, self.nanos)
        }
    }
}

/// One captured frame.
#[derive(Debug, Clone)]
pub struct Packet<'a> {
    /// Absent for pcapng Simple Packet Blocks, which carry none.
    pub time: Option<Timestamp>,
    pub linktype: DataLink,
    /// The captured bytes (possibly fewer than were on the wire).
    pub data: Cow<'a, [u8]>,
    /// Length on the wire.
    pub orig_len: u32,
}

/// Tells pcap from pcapng by the first four bytes.
pub fn detect(data: &[u8]) -> Result<Format, CaptureError> {
    let not_capture = |reason: String| CaptureError { offset: 0, reason };
    let Some(magic) = data.get(..4) else {
        return Err(not_capture(format!(
            "not a pcap or pcapng capture: the file has {} bytes, too short for a magic number",
            data.len()
        )));
    };
    match magic {
        [0xa1, 0xb2, 0xc3, 0xd4]
        | [0xd4, 0xc3, 0xb2, 0xa1]
        | [0xa1, 0xb2, 0x3c, 0x4d]
        | [0x4d, 0x3c, 0xb2, 0xa1] => Ok(Format::Pcap),
        [0x0a, 0x0d, 0x0d, 0x0a] => Ok(Format::PcapNg),
        m => Err(not_capture(format!(
            "not a pcap or pcapng capture: starts with {:02x} {:02x} {:02x} {:02x} \
             (pcap starts with a1 b2 c3 d4 or d4 c3 b2 a1, pcapng with 0a 0d 0d 0a)",
            m[0], m[1], m[2], m[3]
        ))),
    }
}

/// An iterator over the frames of a capture held in memory. After the first
/// error it yields nothing more.
pub struct Capture<'a> {
    data: &'a [u8],
    rest: &'a [u8],
    inner: Inner,
    frames: usize,
    done: bool,
}

enum Inner {
    Pcap(PcapHeader),
    PcapNg(Box<PcapNgParser>),
}

const PCAP_HEADER_LEN: usize = 24;
const PCAP_RECORD_HEADER_LEN: usize = 16;
const PCAPNG_BLOCK_HEADER_LEN: usize = 12;

impl<'a> Capture<'a> {
    /// Reads the file header (pcap) or first Section Header Block (pcapng).
    pub fn open(data: &'a [u8]) -> Result<Capture<'a>, CaptureError> {
        let (rest, inner) = match detect(data)? {
            Format::Pcap => {
                let (rest, parser) = PcapParser::new(data).map_err(|e| match e {
                    PcapError::IncompleteBuffer => CaptureError {
                        offset: 0,
                        reason: format!(
                            "truncated pcap file header: need {PCAP_HEADER_LEN} bytes, the file has {}",
                            data.len()
                        ),
                    },
                    other => CaptureError {
                        offset: 0,
                        reason: format!("bad pcap file header: {other}"),
                    },
                })?;
                (rest, Inner::Pcap(parser.header()))
            }
            Format::PcapNg => {
                let (rest, parser) = PcapNgParser::new(data)
                    .map_err(|e| pcapng_error(data, data, e, None, "section header block"))?;
                (rest, Inner::PcapNg(Box::new(parser)))
            }
        };
        Ok(Capture {
            data,
            rest,
            inner,
            frames: 0,
            done: false,
        })
    }

    fn offset(&self) -> usize {
        self.data.len() - self.rest.len()
    }

    fn next_pcap(&mut self, header: PcapHeader) -> Option<Result<Packet<'a>, CaptureError>> {
        if self.rest.is_empty() {
            return None;
        }
        let at = self.offset();
        let frame = self.frames + 1;
        let parser_header = header;
        let big = parser_header.endianness == Endianness::Big;
        let rest = self.rest;
        if rest.len() < PCAP_RECORD_HEADER_LEN {
            return Some(Err(CaptureError {
                offset: at,
                reason: format!(
                    "truncated record of frame {frame}: its header needs {PCAP_RECORD_HEADER_LEN} bytes, {} left",
                    rest.len()
                ),
            }));
        }
        let word = |i: usize| {
            let b = [rest[i], rest[i + 1], rest[i + 2], rest[i + 3]];
            if big {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let (ts_sec, ts_frac, incl_len, orig_len) = (word(0), word(4), word(8), word(12));
        let body = &rest[PCAP_RECORD_HEADER_LEN..];
        let incl = incl_len as usize;
        let Some(bytes) = body.get(..incl) else {
            return Some(Err(CaptureError {
                offset: at,
                reason: format!(
                    "truncated record of frame {frame}: it claims {incl} captured bytes, {} left",
                    body.len()
                ),
            }));
        };
        self.rest = &body[incl..];
        let frac_ns = match parser_header.ts_resolution {
            TsResolution::MicroSecond => u64::from(ts_frac) * 1000,
            TsResolution::NanoSecond => u64::from(ts_frac),
        };
        // A fraction of a second or more is carried into the seconds rather
        // than refused: the frame itself is still worth decoding.
        let time = Timestamp {
            secs: u64::from(ts_sec) + frac_ns / 1_000_000_000,
            nanos: (frac_ns % 1_000_000_000) as u32,
        };
        Some(Ok(Packet {
            time: Some(time),
            linktype: parser_header.datalink,
            data: Cow::Borrowed(bytes),
            orig_len,
        }))
    }

    fn next_pcapng(&mut self) -> Option<Result<Packet<'a>, CaptureError>> {
        loop {
            if self.rest.is_empty() {
                return None;
            }
            let at = self.offset();
            let Inner::PcapNg(parser) = &mut self.inner else {
                return None;
            };
            let block_rest = self.rest;
            let (rest, block) = match parser.next_block(block_rest) {
                Ok(ok) => ok,
                Err(e) => {
                    // A block this tool has no use for, whose body pcap-file
                    // refuses (an odd option in a name-resolution block...),
                    // is skipped when its framing is sound.
                    let skippable = !matches!(e, PcapError::IncompleteBuffer)
                        && first_word(block_rest, parser.section().endianness)
                            .is_some_and(|t| !matches!(t, 1 | 2 | 3 | 6 | 0x0a0d_0d0a));
                    if skippable {
                        if let Ok((rest, _)) = parser.next_raw_block(block_rest) {
                            self.rest = rest;
                            continue;
                        }
                    }
                    let endianness = parser.section().endianness;
                    return Some(Err(pcapng_error(
                        self.data,
                        block_rest,
                        e,
                        Some(endianness),
                        describe_block(block_rest, endianness),
                    )));
                }
            };
            self.rest = rest;
            let (interface, time_ticks, data, orig_len) = match block {
                Block::EnhancedPacket(b) => {
                    // pcap-file hands the raw 64-bit tick count over as nanoseconds.
                    let ticks = b.timestamp.as_nanos() as u64;
                    (b.interface_id, Some(ticks), b.data, b.original_len)
                }
                Block::Packet(b) => (
                    u32::from(b.interface_id),
                    Some(b.timestamp),
                    b.data,
                    b.original_len,
                ),
                Block::SimplePacket(b) => (0, None, b.data, b.original_len),
                _ => continue,
            };
            let frame = self.frames + 1;
            let Some(idb) = parser.interfaces().get(interface as usize) else {
                return Some(Err(CaptureError {
                    offset: at,
                    reason: format!(
                        "frame {frame} names interface {interface}, but the section describes {}",
                        parser.interfaces().len()
                    ),
                }));
            };
            let mut resol = 6u8;
            let mut tsoffset = 0u64;
            for opt in &idb.options {
                use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption as O;
                match opt {
                    O::IfTsResol(r) => resol = *r,
                    O::IfTsOffset(o) => tsoffset = *o,
                    _ => {}
                }
            }
            let time = match time_ticks {
                None => None,
                Some(ticks) => match ticks_to_time(ticks, resol, tsoffset) {
                    Some(t) => Some(t),
                    None => {
                        return Some(Err(CaptureError {
                            offset: at,
                            reason: format!(
                                "frame {frame}: interface {interface} has an unusable timestamp resolution (if_tsresol {resol:#04x})"
                            ),
                        }))
                    }
                },
            };
            return Some(Ok(Packet {
                time,
                linktype: idb.linktype,
                data,
                orig_len,
            }));
        }
    }
}

impl<'a> Iterator for Capture<'a> {
    type Item = Result<Packet<'a>, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = match &self.inner {
            Inner::Pcap(h) => {
                let h = *h;
                self.next_pcap(h)
            }
            Inner::PcapNg(_) => self.next_pcapng(),
        };
        match &item {
            Some(Ok(_)) => self.frames += 1,
            Some(Err(_)) | None => self.done = true,
        }
        item
    }
}

/// if_tsresol: high bit clear, 10^-n seconds per tick; set, 2^-n.
fn ticks_to_time(ticks: u64, resol: u8, tsoffset: u64) -> Option<Timestamp> {
    let n = u32::from(resol & 0x7f);
    let per_sec: u128 = if resol & 0x80 == 0 {
        10u128.checked_pow(n)?
    } else {
        2u128.checked_pow(n)?
    };
    let ticks = u128::from(ticks);
    let secs = u64::try_from(ticks / per_sec).ok()?.checked_add(tsoffset)?;
    let nanos = ((ticks % per_sec) * 1_000_000_000 / per_sec) as u32;
    Some(Timestamp { secs, nanos })
}

/// The first 32-bit word of `rest` in the given byte order (a block type or length).
fn first_word(rest: &[u8], endianness: Endianness) -> Option<u32> {
    let b: [u8; 4] = rest.get(..4)?.try_into().ok()?;
    Some(match endianness {
        Endianness::Big => u32::from_be_bytes(b),
        Endianness::Little => u32::from_le_bytes(b),
    })
}

fn describe_block(rest: &[u8], endianness: Endianness) -> &'static str {
    match first_word(rest, endianness) {
        Some(0x0a0d_0d0a) => "section header block",
        Some(1) => "interface description block",
        Some(2) => "packet block",
        Some(3) => "simple packet block",
        Some(4) => "name resolution block",
        Some(5) => "interface statistics block",
        Some(6) => "enhanced packet block",
        _ => "block",
    }
}

fn pcapng_error(
    data: &[u8],
    rest: &[u8],
    e: PcapError,
    endianness: Option<Endianness>,
    what: &str,
) -> CaptureError {
    let offset = data.len() - rest.len();
    // A section header block says its own byte order in bytes 8..12.
    let endianness = endianness.or_else(|| match rest.get(8..12) {
        Some([0x1a, 0x2b, 0x3c, 0x4d]) => Some(Endianness::Big),
        Some([0x4d, 0x3c, 0x2b, 0x1a]) => Some(Endianness::Little),
        _ => None,
    });
    let reason = match e {
        PcapError::IncompleteBuffer => {
            let claimed = rest
                .get(4..)
                .zip(endianness)
                .and_then(|(r, end)| first_word(r, end));
            match claimed {
                Some(len) if rest.len() >= PCAPNG_BLOCK_HEADER_LEN => format!(
                    "truncated {what}: it claims {len} bytes, {} left in the file",
                    rest.len()
                ),
                _ => format!(
                    "truncated {what}: a block header needs {PCAPNG_BLOCK_HEADER_LEN} bytes, {} left in the file",
                    rest.len()
                ),
            }
        }
        other => format!("corrupt {what}: {other}"),
    };
    CaptureError { offset, reason }
}

//! Reading pcap and pcapng captures as they arrive, with errors that say where.
//!
//! [`Capture`] reads from any [`Read`] (a file, or standard input fed by `tcpdump -w -`)
//! and yields each frame as soon as its record or block is complete, so a live
//! writer's frames come out while it is still writing. Every error names the byte
//! offset, from the start of the input, where the capture stops making sense. The
//! parsing is `pcap-file`'s; this module frames records and blocks and reads what
//! each needs, never more.

use std::fmt;
use std::io::{self, Read};

use pcap_file::pcap::{PcapHeader, PcapParser};
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

/// Which container the input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap,
    PcapNg,
}

/// A capture that cannot be read on from `offset` (bytes from the start of the input).
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Absent for pcapng Simple Packet Blocks, which carry none.
    pub time: Option<Timestamp>,
    pub linktype: DataLink,
    /// The captured bytes (possibly fewer than were on the wire).
    pub data: Vec<u8>,
    /// Length on the wire.
    pub orig_len: u32,
}

/// Tells pcap from pcapng by the first four bytes of the input.
fn detect(magic: &[u8], noun: &str) -> Result<Format, CaptureError> {
    let not_capture = |reason: String| CaptureError { offset: 0, reason };
    let Some(magic) = magic.get(..4) else {
        return Err(not_capture(format!(
            "not a pcap or pcapng capture: the {noun} has {} bytes, too short for a magic number",
            magic.len()
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

const PCAP_HEADER_LEN: usize = 24;
const PCAP_RECORD_HEADER_LEN: usize = 16;
const PCAPNG_BLOCK_HEADER_LEN: usize = 12;
/// The largest record or block read: a length beyond it is corruption, refused at
/// once rather than waited for (a live writer would never send it).
pub const MAX_RECORD: usize = 16 << 20;
/// How much is asked of the source at a time.
const CHUNK: usize = 64 << 10;

/// The unread part of the input, and where it starts in the input.
struct Input<R> {
    src: R,
    buf: Vec<u8>,
    /// `buf[start..]` is unread; `buf[..start]` is dropped on the next compaction.
    start: usize,
    /// Offset in the input of `buf[0]`.
    base: usize,
    eof: bool,
}

impl<R: Read> Input<R> {
    fn rest(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    fn offset(&self) -> usize {
        self.base + self.start
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
    }

    /// Reads until at least `need` bytes are unread or the input ends; whether
    /// they are there. Each read takes what the source has (a pipe returns what
    /// the writer wrote), so nothing waits for more than the record at hand.
    fn fill(&mut self, need: usize) -> io::Result<bool> {
        while self.rest().len() < need && !self.eof {
            if self.start > 0 && self.start >= self.buf.len() / 2 {
                self.buf.drain(..self.start);
                self.base += self.start;
                self.start = 0;
            }
            let len = self.buf.len();
            self.buf
                .resize(len + CHUNK.max(need - (len - self.start)), 0);
            let got = loop {
                match self.src.read(&mut self.buf[len..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            self.buf.truncate(len + *got.as_ref().unwrap_or(&0));
            if got? == 0 {
                self.eof = true;
            }
        }
        Ok(self.rest().len() >= need)
    }
}

/// The frames of a capture read from `R`, as an iterator. After the first error it
/// yields nothing more.
pub struct Capture<R> {
    input: Input<R>,
    /// What the messages call the input: "file" or "input".
    noun: &'static str,
    inner: Inner,
    frames: usize,
    done: bool,
}

enum Inner {
    Pcap(PcapHeader),
    PcapNg(Box<PcapNgParser>),
}

impl<R: Read> Capture<R> {
    /// Reads the file header (pcap) or first Section Header Block (pcapng).
    /// `noun` names the input in messages ("file", "input").
    pub fn open(src: R, noun: &'static str) -> Result<Capture<R>, CaptureError> {
        let mut input = Input {
            src,
            buf: Vec::new(),
            start: 0,
            base: 0,
            eof: false,
        };
        let read_error = |e: io::Error, at: usize| CaptureError {
            offset: at,
            reason: format!("cannot read: {e}"),
        };
        input.fill(4).map_err(|e| read_error(e, 0))?;
        let inner = match detect(input.rest(), noun)? {
            Format::Pcap => {
                input.fill(PCAP_HEADER_LEN).map_err(|e| read_error(e, 0))?;
                let data = input.rest();
                let (rest, parser) = PcapParser::new(data).map_err(|e| match e {
                    PcapError::IncompleteBuffer => CaptureError {
                        offset: 0,
                        reason: format!(
                            "truncated pcap file header: need {PCAP_HEADER_LEN} bytes, the {noun} has {}",
                            data.len()
                        ),
                    },
                    other => CaptureError {
                        offset: 0,
                        reason: format!("bad pcap file header: {other}"),
                    },
                })?;
                let used = data.len() - rest.len();
                input.consume(used);
                Inner::Pcap(parser.header())
            }
            Format::PcapNg => {
                // The block's header says its length and byte order: read it whole
                // first, then the block.
                input
                    .fill(PCAPNG_BLOCK_HEADER_LEN)
                    .map_err(|e| read_error(e, 0))?;
                let need = block_len(input.rest(), None);
                input
                    .fill(need.unwrap_or(PCAPNG_BLOCK_HEADER_LEN).min(MAX_RECORD))
                    .map_err(|e| read_error(e, 0))?;
                let data = input.rest();
                let (rest, parser) = PcapNgParser::new(data)
                    .map_err(|e| pcapng_error(0, data, e, None, "section header block", noun))?;
                let used = data.len() - rest.len();
                input.consume(used);
                Inner::PcapNg(Box::new(parser))
            }
        };
        Ok(Capture {
            input,
            noun,
            inner,
            frames: 0,
            done: false,
        })
    }

    fn read_error(&self, e: io::Error) -> CaptureError {
        CaptureError {
            offset: self.input.offset(),
            reason: format!("cannot read: {e}"),
        }
    }

    /// Whether the input ended cleanly before another record; an error if it
    /// could not be read.
    fn at_end(&mut self) -> Result<bool, CaptureError> {
        match self.input.fill(1) {
            Ok(more) => Ok(!more),
            Err(e) => Err(self.read_error(e)),
        }
    }

    fn next_pcap(&mut self, header: PcapHeader) -> Result<Option<Packet>, CaptureError> {
        if self.at_end()? {
            return Ok(None);
        }
        let at = self.input.offset();
        let frame = self.frames + 1;
        let big = header.endianness == Endianness::Big;
        let noun = self.noun;
        self.input
            .fill(PCAP_RECORD_HEADER_LEN)
            .map_err(|e| self.read_error(e))?;
        let rest = self.input.rest();
        if rest.len() < PCAP_RECORD_HEADER_LEN {
            return Err(CaptureError {
                offset: at,
                reason: format!(
                    "truncated record of frame {frame}: its header needs {PCAP_RECORD_HEADER_LEN} bytes, {} left",
                    rest.len()
                ),
            });
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
        let incl = incl_len as usize;
        if incl > MAX_RECORD {
            return Err(CaptureError {
                offset: at,
                reason: format!(
                    "corrupt record of frame {frame}: it claims {incl} captured bytes, more than \
                     the {} MiB a record may have (snap length {} in the {noun} header)",
                    MAX_RECORD >> 20,
                    header.snaplen
                ),
            });
        }
        self.input
            .fill(PCAP_RECORD_HEADER_LEN + incl)
            .map_err(|e| self.read_error(e))?;
        let body = &self.input.rest()[PCAP_RECORD_HEADER_LEN..];
        let Some(bytes) = body.get(..incl) else {
            return Err(CaptureError {
                offset: at,
                reason: format!(
                    "truncated record of frame {frame}: it claims {incl} captured bytes, {} left",
                    body.len()
                ),
            });
        };
        let data = bytes.to_vec();
        self.input.consume(PCAP_RECORD_HEADER_LEN + incl);
        let frac_ns = match header.ts_resolution {
            TsResolution::MicroSecond => u64::from(ts_frac) * 1000,
            TsResolution::NanoSecond => u64::from(ts_frac),
        };
        // A fraction of a second or more is carried into the seconds rather
        // than refused: the frame itself is still worth decoding.
        let time = Timestamp {
            secs: u64::from(ts_sec) + frac_ns / 1_000_000_000,
            nanos: (frac_ns % 1_000_000_000) as u32,
        };
        Ok(Some(Packet {
            time: Some(time),
            linktype: header.datalink,
            data,
            orig_len,
        }))
    }

    /// Reads the whole of the next pcapng block (or what is left of the input).
    fn fill_block(&mut self) -> Result<(), CaptureError> {
        let Inner::PcapNg(parser) = &self.inner else {
            return Ok(());
        };
        let endianness = parser.section().endianness;
        let at = self.input.offset();
        self.input
            .fill(PCAPNG_BLOCK_HEADER_LEN)
            .map_err(|e| self.read_error(e))?;
        let rest = self.input.rest();
        let Some(len) = block_len(rest, Some(endianness)) else {
            return Ok(());
        };
        if len > MAX_RECORD {
            return Err(CaptureError {
                offset: at,
                reason: format!(
                    "corrupt {}: it claims {len} bytes, more than the {} MiB a block may have",
                    describe_block(rest, endianness),
                    MAX_RECORD >> 20
                ),
            });
        }
        self.input.fill(len).map_err(|e| self.read_error(e))?;
        Ok(())
    }

    fn next_pcapng(&mut self) -> Result<Option<Packet>, CaptureError> {
        loop {
            if self.at_end()? {
                return Ok(None);
            }
            self.fill_block()?;
            let at = self.input.offset();
            let noun = self.noun;
            let Inner::PcapNg(parser) = &mut self.inner else {
                return Ok(None);
            };
            let block_rest = self.input.rest();
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
                            let used = block_rest.len() - rest.len();
                            self.input.consume(used);
                            continue;
                        }
                    }
                    let endianness = parser.section().endianness;
                    return Err(pcapng_error(
                        at,
                        block_rest,
                        e,
                        Some(endianness),
                        describe_block(block_rest, endianness),
                        noun,
                    ));
                }
            };
            let used = block_rest.len() - rest.len();
            let packet = match block {
                Block::EnhancedPacket(b) => {
                    // pcap-file hands the raw 64-bit tick count over as nanoseconds.
                    let ticks = b.timestamp.as_nanos() as u64;
                    Some((b.interface_id, Some(ticks), b.data, b.original_len))
                }
                Block::Packet(b) => Some((
                    u32::from(b.interface_id),
                    Some(b.timestamp),
                    b.data,
                    b.original_len,
                )),
                Block::SimplePacket(b) => Some((0, None, b.data, b.original_len)),
                _ => None,
            }
            .map(|(i, t, d, l)| (i, t, d.into_owned(), l));
            let Some((interface, time_ticks, data, orig_len)) = packet else {
                self.input.consume(used);
                continue;
            };
            let frame = self.frames + 1;
            let Some(idb) = parser.interfaces().get(interface as usize) else {
                return Err(CaptureError {
                    offset: at,
                    reason: format!(
                        "frame {frame} names interface {interface}, but the section describes {}",
                        parser.interfaces().len()
                    ),
                });
            };
            let linktype = idb.linktype;
            let time = match time_ticks {
                None => None,
                Some(ticks) => Some(interface_time(idb, ticks).map_err(|resol| CaptureError {
                    offset: at,
                    reason: format!(
                        "frame {frame}: interface {interface} has an unusable timestamp resolution (if_tsresol {resol:#04x})"
                    ),
                })?),
            };
            self.input.consume(used);
            return Ok(Some(Packet {
                time,
                linktype,
                data,
                orig_len,
            }));
        }
    }
}

/// The time of `ticks` on an interface, by its if_tsresol and if_tsoffset; the
/// if_tsresol when it cannot be used.
fn interface_time(
    idb: &pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock<'_>,
    ticks: u64,
) -> Result<Timestamp, u8> {
    use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption as O;
    let mut resol = 6u8;
    let mut tsoffset = 0u64;
    for opt in &idb.options {
        match opt {
            O::IfTsResol(r) => resol = *r,
            O::IfTsOffset(o) => tsoffset = *o,
            _ => {}
        }
    }
    ticks_to_time(ticks, resol, tsoffset).ok_or(resol)
}

impl<R: Read> Iterator for Capture<R> {
    type Item = Result<Packet, CaptureError>;

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
        match item {
            Ok(Some(p)) => {
                self.frames += 1;
                Some(Ok(p))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
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

/// The byte order a Section Header Block states in its bytes 8..12.
fn section_endianness(rest: &[u8]) -> Option<Endianness> {
    match rest.get(8..12) {
        Some([0x1a, 0x2b, 0x3c, 0x4d]) => Some(Endianness::Big),
        Some([0x4d, 0x3c, 0x2b, 0x1a]) => Some(Endianness::Little),
        _ => None,
    }
}

/// The total length the block at the start of `rest` claims, once its header is
/// there: a Section Header Block in its own byte order, any other in the section's.
fn block_len(rest: &[u8], section: Option<Endianness>) -> Option<usize> {
    let shb = rest.get(..4) == Some(&[0x0a, 0x0d, 0x0d, 0x0a]);
    let endianness = if shb {
        section_endianness(rest)?
    } else {
        section?
    };
    first_word(rest.get(4..)?, endianness).map(|l| l as usize)
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
    offset: usize,
    rest: &[u8],
    e: PcapError,
    endianness: Option<Endianness>,
    what: &str,
    noun: &str,
) -> CaptureError {
    let endianness = endianness.or_else(|| section_endianness(rest));
    let reason = match e {
        PcapError::IncompleteBuffer => {
            let claimed = rest
                .get(4..)
                .zip(endianness)
                .and_then(|(r, end)| first_word(r, end));
            match claimed {
                Some(len) if rest.len() >= PCAPNG_BLOCK_HEADER_LEN => format!(
                    "truncated {what}: it claims {len} bytes, {} left in the {noun}",
                    rest.len()
                ),
                _ => format!(
                    "truncated {what}: a block header needs {PCAPNG_BLOCK_HEADER_LEN} bytes, {} left in the {noun}",
                    rest.len()
                ),
            }
        }
        other => format!("corrupt {what}: {other}"),
    };
    CaptureError { offset, reason }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Hands its bytes over `piece` at a time, as a pipe may.
    struct Pieces<'a> {
        data: &'a [u8],
        piece: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.data.len().min(buf.len()).min(self.piece);
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    type Frames = Result<Vec<Result<Packet, CaptureError>>, CaptureError>;

    fn read_all(src: impl Read) -> Frames {
        Ok(Capture::open(src, "input")?.collect())
    }

    /// A capture handed over a byte at a time (or any other size) reads as the
    /// whole does: each record or block is read to its end before it is parsed.
    /// (The fuzz target `capture` found the Section Header Block parsed from its
    /// first four bytes.)
    #[test]
    fn pieces_of_any_size_read_as_the_whole() {
        let pcapng = include_bytes!("../tests/data/lldpad-ieee.pcapng").as_slice();
        let mut cut = pcapng.to_vec();
        cut.truncate(cut.len() - 7);
        for data in [pcapng, &cut] {
            let whole = read_all(data);
            assert!(
                matches!(&whole, Ok(frames) if frames.len() >= 6),
                "{whole:?}"
            );
            for piece in [1, 2, 3, 5, 12, 64] {
                assert_eq!(read_all(Pieces { data, piece }), whole, "pieces of {piece}");
            }
        }
    }
}

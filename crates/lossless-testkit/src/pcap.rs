//! Capture files written from frames a test built, for tshark or `lossless decode` to
//! read: pcap (any link type) and pcapng, frame `i` (0-based) stamped
//! [`frame_time`]`(i)`; and the frames of a capture read back.

use std::borrow::Cow;
use std::path::Path;
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::{Block, PcapNgReader, PcapNgWriter};
pub use pcap_file::DataLink;

/// The time stamp of frame `i`: 1,700,000,000 s + `i` s + 250 ms after the epoch (whole
/// seconds apart, so a decoder's relative times are easy to read).
pub fn frame_time(i: usize) -> Duration {
    Duration::new(1_700_000_000 + i as u64, 250_000_000)
}

/// Writes `frames` (Ethernet) to `path` as pcap.
pub fn write_pcap<F: AsRef<[u8]>>(path: &Path, frames: &[F]) {
    write_pcap_linktype(path, frames, DataLink::ETHERNET);
}

/// Writes `frames` to `path` as pcap with link type `datalink`.
pub fn write_pcap_linktype<F: AsRef<[u8]>>(path: &Path, frames: &[F], datalink: DataLink) {
    let file =
        std::fs::File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let header = PcapHeader {
        datalink,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(file, header).expect("pcap header");
    for (i, f) in frames.iter().enumerate() {
        let f = f.as_ref();
        w.write_packet(&PcapPacket::new(frame_time(i), f.len() as u32, f))
            .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

/// Writes `frames` (Ethernet) to `path` as pcapng: one interface at nanosecond
/// resolution.
pub fn write_pcapng<F: AsRef<[u8]>>(path: &Path, frames: &[F]) {
    let file =
        std::fs::File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let mut w = PcapNgWriter::new(file).expect("section header");
    w.write_pcapng_block(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen: 65535,
        options: vec![InterfaceDescriptionOption::IfTsResol(9)],
    })
    .expect("interface");
    for (i, f) in frames.iter().enumerate() {
        let f = f.as_ref();
        w.write_pcapng_block(EnhancedPacketBlock {
            interface_id: 0,
            timestamp: frame_time(i),
            original_len: f.len() as u32,
            data: Cow::Borrowed(f),
            options: vec![],
        })
        .unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

/// The frames of a pcap or pcapng file (told apart by magic number), in order; panics
/// on a file that is not a whole capture.
pub fn read_frames(path: &Path) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut frames = Vec::new();
    if bytes.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        let mut r = PcapNgReader::new(&bytes[..])
            .unwrap_or_else(|e| panic!("{}: pcapng header: {e}", path.display()));
        while let Some(block) = r.next_block() {
            match block.unwrap_or_else(|e| panic!("{}: pcapng block: {e}", path.display())) {
                Block::EnhancedPacket(p) => frames.push(p.data.into_owned()),
                Block::SimplePacket(p) => frames.push(p.data.into_owned()),
                _ => {}
            }
        }
    } else {
        let mut r = PcapReader::new(&bytes[..])
            .unwrap_or_else(|e| panic!("{}: pcap header: {e}", path.display()));
        while let Some(p) = r.next_packet() {
            let p = p.unwrap_or_else(|e| panic!("{}: pcap record: {e}", path.display()));
            frames.push(p.data.into_owned());
        }
    }
    frames
}

/// The whole frames of a pcap file being written (a live capture): up to the first
/// that is not whole yet; none while the file has no header.
pub fn read_frames_so_far(path: &Path) -> Vec<Vec<u8>> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let Ok(mut r) = PcapReader::new(file) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    while let Some(Ok(p)) = r.next_packet() {
        out.push(p.data.into_owned());
    }
    out
}

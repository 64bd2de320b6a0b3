//! Writes what crossed the simulated wire as a pcap file, so tshark (an
//! oracle we did not write) can read it.

use std::io::Write;

use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;

use crate::sim::Captured;

/// Writes frames as an Ethernet pcap with nanosecond timestamps.
pub fn write_pcap<W: Write>(out: W, frames: &[Captured]) -> Result<(), pcap_file::PcapError> {
    let header = PcapHeader {
        datalink: DataLink::ETHERNET,
        ts_resolution: pcap_file::TsResolution::NanoSecond,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(out, header)?;
    for f in frames {
        let len = f.bytes.len() as u32;
        w.write_packet(&PcapPacket::new(f.at.since_epoch(), len, &f.bytes))?;
    }
    Ok(())
}

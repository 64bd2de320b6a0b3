//! Writes what crossed the simulated wire as a pcap file, so tshark (an
//! oracle we did not write) can read it.

use std::io::Write;
use std::path::{Path, PathBuf};

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

/// The frames seen at one capture point (a link, or a whole simulation),
/// named for its file: `<name>.pcap`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub name: String,
    pub frames: Vec<Captured>,
}

/// A capture that could not be written, with its file.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Pcap {
        path: PathBuf,
        #[source]
        source: pcap_file::PcapError,
    },
}

/// Writes each capture to `dir/<name>.pcap` (creating `dir`), in order;
/// returns the files written.
pub fn write_captures(dir: &Path, captures: &[Capture]) -> Result<Vec<PathBuf>, CaptureError> {
    std::fs::create_dir_all(dir).map_err(|source| CaptureError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut written = Vec::with_capacity(captures.len());
    for c in captures {
        let path = dir.join(format!("{}.pcap", c.name));
        let file = std::fs::File::create(&path).map_err(|source| CaptureError::Io {
            path: path.clone(),
            source,
        })?;
        let mut out = std::io::BufWriter::new(file);
        write_pcap(&mut out, &c.frames).map_err(|source| CaptureError::Pcap {
            path: path.clone(),
            source,
        })?;
        out.flush().map_err(|source| CaptureError::Io {
            path: path.clone(),
            source,
        })?;
        written.push(path);
    }
    Ok(written)
}

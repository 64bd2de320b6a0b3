//! Any bytes as a pcap or pcapng capture, read by `lossless decode`'s reader (the
//! first byte sets the size of the pieces the source hands over, as a pipe fed by
//! `tcpdump -w -` does): never a panic, and the same frames and the same error,
//! at the same offset, as when the whole input is there at once.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use lossless::capture::{Capture, CaptureError, Packet};

/// Hands `data` over at most `piece` bytes per read.
struct Pieces<'a> {
    data: &'a [u8],
    piece: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.data.len().min(buf.len()).min(self.piece);
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn read_all(src: impl Read) -> Result<Vec<Result<Packet, CaptureError>>, CaptureError> {
    Ok(Capture::open(src, "input")?.collect())
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, capture)) = data.split_first() else {
        return;
    };
    let whole = read_all(capture);
    let pieces = read_all(Pieces {
        data: capture,
        piece: usize::from(sel % 64) + 1,
    });
    assert_eq!(whole, pieces);
});

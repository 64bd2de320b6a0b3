#![allow(clippy::unwrap_used)]
//! `lossless decode -` reads a capture from standard input as it arrives, the way
//! `tcpdump -w - | lossless decode -` feeds it: each frame is printed before the
//! writer has finished (or even written the next frame).

mod common;

use std::borrow::Cow;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{data, lldp_frame, reference_cee, stderr, stdout};
use lossless_testkit::pcap::frame_time as stamp;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::DataLink;

/// A capture cut into what a live writer sends: the file header, then one piece
/// per frame.
fn pieces(pcapng: bool, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut cuts = Vec::new();
    let bytes = if pcapng {
        let mut w = PcapNgWriter::new(Vec::new()).unwrap();
        w.write_pcapng_block(InterfaceDescriptionBlock {
            linktype: DataLink::ETHERNET,
            snaplen: 65535,
            options: vec![InterfaceDescriptionOption::IfTsResol(9)],
        })
        .unwrap();
        cuts.push(w.get_ref().len());
        for (i, f) in frames.iter().enumerate() {
            w.write_pcapng_block(EnhancedPacketBlock {
                interface_id: 0,
                timestamp: stamp(i),
                original_len: f.len() as u32,
                data: Cow::Borrowed(f),
                options: vec![],
            })
            .unwrap();
            cuts.push(w.get_ref().len());
        }
        w.into_inner()
    } else {
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ..PcapHeader::default()
        };
        let mut w = PcapWriter::with_header(Vec::new(), header).unwrap();
        let mut at = 24;
        cuts.push(at);
        for (i, f) in frames.iter().enumerate() {
            at += w
                .write_packet(&PcapPacket::new(stamp(i), f.len() as u32, f))
                .unwrap();
            cuts.push(at);
        }
        w.into_writer()
    };
    let mut start = 0;
    cuts.into_iter()
        .map(|end| {
            let piece = bytes[start..end].to_vec();
            start = end;
            piece
        })
        .collect()
}

/// `lossless decode - ARGS` with both ends piped, and its stdout lines on a channel.
fn spawn(args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["decode", "-"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits for the line that starts with `prefix`, failing after a generous while.
fn wait_line(rx: &mpsc::Receiver<String>, prefix: &str) -> String {
    loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(l) if l.starts_with(prefix) => return l,
            Ok(_) => {}
            Err(e) => panic!("no line starting {prefix:?} while the writer is still open: {e}"),
        }
    }
}

fn frames_print_as_they_arrive(pcapng: bool, json: bool) {
    let frames = vec![lldp_frame(Some(reference_cee())), lldp_frame(None)];
    let mut pieces = pieces(pcapng, &frames).into_iter();
    let args: &[&str] = if json { &["--json"] } else { &[] };
    let (mut child, rx) = spawn(args);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pieces.next().unwrap()).unwrap();
    for n in 1..=frames.len() {
        stdin.write_all(&pieces.next().unwrap()).unwrap();
        stdin.flush().unwrap();
        let prefix = if json {
            format!("{{\"frame\":{n},")
        } else {
            format!("frame {n} ")
        };
        wait_line(&rx, &prefix);
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn pcap_frames_print_before_the_writer_ends() {
    frames_print_as_they_arrive(false, false);
    frames_print_as_they_arrive(false, true);
}

#[test]
fn pcapng_frames_print_before_the_writer_ends() {
    frames_print_as_they_arrive(true, false);
    frames_print_as_they_arrive(true, true);
}

/// What tshark writes to a pipe (`tshark -w -`, pcapng) decodes as the file does.
#[test]
fn tshark_writing_to_a_pipe_decodes_as_the_file() {
    if !lossless_testkit::require(
        "tshark_writing_to_a_pipe_decodes_as_the_file",
        &[lossless_testkit::Oracle::Tshark],
    ) {
        return;
    }
    let file = data("lldpad-ieee.pcapng");
    let mut tshark = lossless_testkit::tshark::Pipe::start(&file);
    let piped = Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(["decode", "-", "--json"])
        .stdin(tshark.stdout())
        .output()
        .unwrap();
    tshark.finish();
    assert_eq!(piped.status.code(), Some(0), "{}", stderr(&piped));
    let direct = common::decode(&file, true);
    assert!(!stdout(&direct).is_empty());
    assert_eq!(stdout(&piped), stdout(&direct));
}

/// A cut-off stream is reported as a cut-off file is, naming standard input.
#[test]
fn a_stream_cut_short_is_an_error_after_its_frames() {
    let frames = vec![lldp_frame(None), lldp_frame(None)];
    let mut bytes: Vec<u8> = pieces(false, &frames).concat();
    bytes.truncate(bytes.len() - 10);
    let (mut child, rx) = spawn(&[]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&bytes).unwrap();
    drop(stdin);
    wait_line(&rx, "frame 1 ");
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("lossless: standard input: at byte "),
        "{err}"
    );
    assert!(err.contains("truncated record of frame 2"), "{err}");
    assert!(err.contains("(1 frame(s) before it decoded)"), "{err}");
}

#![allow(clippy::unwrap_used)]
//! `decode --json` writes each key once per object, whatever the frame: every line
//! printed for frames cut at every length and with every single bit flipped is read
//! with a parser that refuses a key given twice (a `bad_value` error once had
//! `reason` twice: the kind's and the sentence's).

mod common;

use std::fs::File;

use common::{data, decode, lldp_frame, parse_strict_json, reference_cee, stdout, write_pcap};
use lossless_relay::example::{self, KINDS};
use pcap_file::pcapng::{Block, PcapNgReader};

/// The frames of a pcapng test capture.
fn frames_of(name: &str) -> Vec<Vec<u8>> {
    let mut r = PcapNgReader::new(File::open(data(name)).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(block) = r.next_block() {
        if let Block::EnhancedPacket(p) = block.unwrap() {
            out.push(p.data.into_owned());
        }
    }
    out
}

/// Real DCBX frames (lldpad in both modes), a CEE frame with every feature, a PFC
/// frame, and a PFC frame in each relay tunnel.
fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = frames_of("lldpad-ieee.pcapng");
    seeds.extend(frames_of("lldpad-cee.pcapng"));
    seeds.push(lldp_frame(Some(reference_cee())));
    let pfc = example::pfc(example::DC2_GW, 0x18, [0, 0, 0, 0xffff, 0xffff, 0, 0, 0]);
    seeds.push(pfc.clone());
    for kind in KINDS {
        seeds.push(common::tunnelled(kind, &pfc));
    }
    seeds
}

#[test]
fn every_json_line_has_each_key_once_for_cut_and_flipped_frames() {
    let mut frames = Vec::new();
    for seed in seeds() {
        for cut in 0..seed.len() {
            frames.push(seed[..cut].to_vec());
        }
        for bit in 0..seed.len() * 8 {
            let mut f = seed.clone();
            f[bit / 8] ^= 1 << (bit % 8);
            frames.push(f);
        }
    }
    let path = write_pcap("json-keys.pcap", &frames);
    let out = decode(&path, true);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), frames.len());
    let bad: Vec<String> = lines
        .iter()
        .filter_map(|l| parse_strict_json(l).err().map(|e| format!("{e}: {l}")))
        .collect();
    assert!(
        bad.is_empty(),
        "{} of {} lines have a key twice, the first: {}",
        bad.len(),
        lines.len(),
        bad[0]
    );
    // The mutations reach the errors that carry values of their own.
    for kind in [
        "\"bad_value\"",
        "\"truncated\"",
        "\"bad_length\"",
        "\"duplicate\"",
    ] {
        assert!(text.contains(kind), "no {kind} error among the mutations");
    }
}

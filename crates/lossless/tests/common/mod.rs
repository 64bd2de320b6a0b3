//! Helpers for the CLI tests: build captures from known frames, run the
//! built binary, read its JSON Lines.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use lossless_testkit::pcap::DataLink;
use lossless_wire::cee::{
    AppConfig, AppEntry, AppSelector, AppTable, CeeDcbx, Control, FeatureHeader, FeatureTlv,
    PfcConfig, PgConfig, PriorityMap, DCBX_OUI,
};
use lossless_wire::lldp::{Id, Lldpdu};
use lossless_wire::{emit_lldp_frame, MacAddr};

pub const SRC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x01]);

/// A path under cargo's per-target temporary directory.
pub fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

/// `tests/data/NAME`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// Writes `frames` (Ethernet) as pcap to [`tmp`]`(name)`, frame `i` stamped
/// 1_700_000_000 + i seconds + 250 ms (lossless-testkit's `frame_time`).
pub fn write_pcap(name: &str, frames: &[Vec<u8>]) -> PathBuf {
    write_pcap_linktype(name, frames, DataLink::ETHERNET)
}

pub fn write_pcap_linktype(name: &str, frames: &[Vec<u8>], datalink: DataLink) -> PathBuf {
    let path = tmp(name);
    lossless_testkit::write_pcap_linktype(&path, frames, datalink);
    path
}

/// A pcapng with one Ethernet interface at nanosecond resolution.
pub fn write_pcapng(name: &str, frames: &[Vec<u8>]) -> PathBuf {
    let path = tmp(name);
    lossless_testkit::write_pcapng(&path, frames);
    path
}

pub fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lossless"))
        .args(args)
        .output()
        .expect("run lossless")
}

pub fn decode(path: &Path, json: bool) -> Output {
    let p = path.to_str().expect("utf-8 path");
    if json {
        run(&["decode", p, "--json"])
    } else {
        run(&["decode", p])
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// Every stdout line parsed as one JSON object.
pub fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    stdout(o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("each line is JSON");
            assert!(v.is_object(), "each line is an object: {l}");
            v
        })
        .collect()
}

/// An example CEE DCBX TLV: SeqNo 7, AckNo 6; PGIDs 0,0,0,1,1,1,15,2 at
/// 25/75 %; PFC on 3; APP FCoE->3, iSCSI->4.
pub fn reference_cee() -> CeeDcbx {
    let mut entries = AppTable::new();
    entries.push(AppEntry {
        selector: AppSelector::ETHERTYPE,
        protocol: 0x8906,
        oui: DCBX_OUI,
        priorities: PriorityMap(1 << 3),
    });
    entries.push(AppEntry {
        selector: AppSelector::PORT,
        protocol: 3260,
        oui: DCBX_OUI,
        priorities: PriorityMap(1 << 4),
    });
    CeeDcbx::new(
        Control {
            oper_version: 0,
            max_version: 0,
            seq: 7,
            ack: 6,
        },
        Some(FeatureTlv::new(
            FeatureHeader::new(true, false),
            PgConfig {
                pgid: [0, 0, 0, 1, 1, 1, 15, 2],
                percent: [25, 75, 0, 0, 0, 0, 0, 0],
                num_tcs: 8,
            },
        )),
        Some(FeatureTlv::new(
            FeatureHeader::new(true, true),
            PfcConfig {
                priorities: PriorityMap(1 << 3),
                num_tcs: 8,
            },
        )),
        Some(FeatureTlv::new(
            FeatureHeader::new(true, false),
            AppConfig { entries },
        )),
    )
}

/// An LLDP frame from [`SRC`] with MAC-subtype IDs, TTL 120 and `cee`.
pub fn lldp_frame(cee: Option<CeeDcbx>) -> Vec<u8> {
    let (chassis, port): (Id<'_>, Id<'_>) = Lldpdu::mac_ids(&SRC);
    let mut pdu = Lldpdu::new(chassis, port, 120);
    pdu.cee_dcbx = cee;
    let mut out = Vec::new();
    emit_lldp_frame(SRC, &pdu, &mut out).expect("emits");
    out
}

/// Ethernet header to the LLDP group address + Chassis ID, Port ID, TTL:
/// 14 + 9 + 9 + 4 = 36 bytes; the next TLV starts at offset 36.
pub fn lldp_prefix() -> Vec<u8> {
    let mut f = vec![0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];
    f.extend_from_slice(&SRC.0);
    f.extend_from_slice(&[0x88, 0xcc]);
    f.extend_from_slice(&[0x02, 0x07, 0x04]);
    f.extend_from_slice(&SRC.0);
    f.extend_from_slice(&[0x04, 0x07, 0x03]);
    f.extend_from_slice(&SRC.0);
    f.extend_from_slice(&[0x06, 0x02, 0x00, 0x78]);
    assert_eq!(f.len(), 36);
    f
}

/// Appends a CEE org TLV header for a body of `body_len` bytes (the TLV
/// header at the current end, body from +6).
pub fn push_cee_header(f: &mut Vec<u8>, body_len: usize) {
    let len = 4 + body_len;
    f.push(0xfe | ((len >> 8) as u8 & 1));
    f.push(len as u8);
    f.extend_from_slice(&DCBX_OUI);
    f.push(2);
}

/// A Control sub-TLV (12 bytes with its header).
pub fn control_subtlv(seq: u32, ack: u32) -> Vec<u8> {
    let mut v = vec![0x02, 0x0a, 0, 0];
    v.extend_from_slice(&seq.to_be_bytes());
    v.extend_from_slice(&ack.to_be_bytes());
    v
}

/// A PFC sub-TLV (8 bytes with its header), Enable set.
pub fn pfc_subtlv(bitmap: u8) -> Vec<u8> {
    vec![0x06, 0x06, 0, 0, 0x80, 0, bitmap, 8]
}

/// Pads to the 60-byte Ethernet minimum.
pub fn pad(mut f: Vec<u8>) -> Vec<u8> {
    if f.len() < 60 {
        f.resize(60, 0);
    }
    f
}

/// Parses `text` as JSON and fails on an object that has a key twice, at any
/// depth (`serde_json::Value` keeps the last of duplicates silently). The error
/// names the key.
pub fn parse_strict_json(text: &str) -> Result<(), String> {
    use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
    use std::collections::BTreeSet;
    use std::fmt;

    struct Strict;
    impl<'de> Deserialize<'de> for Strict {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
            d.deserialize_any(StrictVisitor)
        }
    }
    struct StrictVisitor;
    impl<'de> Visitor<'de> for StrictVisitor {
        type Value = Strict;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_str<E>(self, _: &str) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_unit<E>(self) -> Result<Strict, E> {
            Ok(Strict)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Strict, A::Error> {
            while seq.next_element::<Strict>()?.is_some() {}
            Ok(Strict)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Strict, A::Error> {
            let mut seen = BTreeSet::new();
            while let Some(key) = map.next_key::<String>()? {
                if !seen.insert(key.clone()) {
                    return Err(A::Error::custom(format!("key {key:?} appears twice")));
                }
                map.next_value::<Strict>()?;
            }
            Ok(Strict)
        }
    }
    serde_json::from_str::<Strict>(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// `inner` as PE2 of the relay example sends it across the WAN in tunnel `kind`.
pub fn tunnelled(kind: lossless_relay::example::Kind, inner: &[u8]) -> Vec<u8> {
    let cfg = lossless_relay::example::pe(2, kind);
    let enc = lossless_relay::tunnel::Encapsulator::new(&cfg.tunnel, &cfg.wan, &cfg.marking)
        .expect("encapsulator");
    let tf = enc.frame(inner);
    let mut out = vec![0u8; tf.buffer_len()];
    tf.emit(&mut out);
    out
}

/// tshark's decode of `path` for `fields`: one map per frame (occurrences joined by
/// ","; booleans as 1/0, as tshark 4.0 prints them and later versions do not), or
/// `None` when tshark is missing and `LOSSLESS_SKIP_ORACLES=1` skips it.
pub fn tshark(
    path: &Path,
    fields: &[String],
) -> Option<Vec<std::collections::BTreeMap<String, String>>> {
    let what = format!("tshark on {}", path.display());
    if !lossless_testkit::require(&what, &[lossless_testkit::Oracle::Tshark]) {
        return None;
    }
    let names: Vec<&str> = fields.iter().map(String::as_str).collect();
    let rows = lossless_testkit::tshark_fields(path, &[], &names).rows;
    Some(
        rows.into_iter()
            .map(|row| {
                fields
                    .iter()
                    .cloned()
                    .zip(
                        row.iter()
                            .map(|v| v.replace("True", "1").replace("False", "0")),
                    )
                    .collect()
            })
            .collect(),
    )
}

/// An IEEE 802.1 org TLV, assembled by hand: `info` is what follows the subtype.
pub fn ieee_tlv(subtype: u8, info: &[u8]) -> Vec<u8> {
    let len = 4 + info.len();
    let mut v = vec![
        0xfe | (len >> 8) as u8,
        len as u8,
        0x00,
        0x80,
        0xc2,
        subtype,
    ];
    v.extend_from_slice(info);
    v
}

/// An LLDP frame (Chassis ID, Port ID, TTL from `lldp_prefix`) with `tlvs` and End.
pub fn lldp_with(tlvs: &[Vec<u8>]) -> Vec<u8> {
    let mut f = lldp_prefix();
    for t in tlvs {
        f.extend_from_slice(t);
    }
    f.extend_from_slice(&[0, 0]);
    pad(f)
}

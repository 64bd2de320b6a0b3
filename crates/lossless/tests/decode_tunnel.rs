#![allow(clippy::unwrap_used)]
//! `decode` shows the PFC frame inside the relay's tunnels (draft-he-rtgwg-wan-pfc-00:
//! SRv6 with and without SRH, VXLAN over IPv4 and IPv6, SR-MPLS), outer headers and
//! inner frame, checked field by field against tshark on the captures `lossless lab
//! --scenario wan-relay --pcap-dir` writes of the WAN link between the PEs.

mod common;

use std::path::{Path, PathBuf};

use common::{decode, json_lines, run, stderr, stdout, tmp};
use lossless_testkit::tshark::{pfc_pause_time, tshark_fields, Fields, PFC_ENABLE, PFC_FIELDS};
use serde_json::Value;

const KINDS: [&str; 5] = [
    "srv6",
    "srv6-reduced",
    "vxlan-ipv4",
    "vxlan-ipv6",
    "sr-mpls",
];

const FIELDS: &[&str] = &[
    "eth.src",
    "eth.dst",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.tclass.dscp",
    "ipv6.hlim",
    "ipv6.routing.segleft",
    "ipv6.routing.srh.addr",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.ttl",
    "udp.srcport",
    "udp.dstport",
    "vxlan.vni",
    "mpls.label",
    "mpls.exp",
    "mpls.ttl",
    "mpls.bottom",
];

/// The lab's wan-relay captures, written once per test into its own directory.
fn lab_captures(dir: &str) -> PathBuf {
    let dir = tmp(dir);
    let _ = std::fs::remove_dir_all(&dir);
    let out = run(&[
        "lab",
        "--scenario",
        "wan-relay",
        "--pcap-dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

fn join(v: &Value, f: impl Fn(&Value) -> String) -> String {
    v.as_array()
        .unwrap()
        .iter()
        .map(f)
        .collect::<Vec<_>>()
        .join(",")
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What tshark shows of the frame, from decode's JSON record.
fn as_tshark_shows_it(kind: &str, r: &Value) -> Vec<(&'static str, String)> {
    let t = &r["tunnel"];
    let inner = &r["inner"];
    let mut f = vec![
        (
            "eth.src",
            format!("{},{}", text(&r["src"]), text(&inner["src"])),
        ),
        (
            "eth.dst",
            format!("{},{}", text(&r["dst"]), text(&inner["dst"])),
        ),
        (
            PFC_ENABLE,
            format!("{:#06x}", inner["class_enable"].as_u64().unwrap()),
        ),
    ];
    for p in 0..8 {
        f.push((pfc_pause_time(p), text(&inner["quanta"][p])));
    }
    match kind {
        "srv6" | "srv6-reduced" => {
            f.push(("ipv6.src", text(&t["src"])));
            f.push(("ipv6.dst", text(&t["dst"])));
            f.push(("ipv6.tclass.dscp", text(&t["dscp"])));
            f.push(("ipv6.hlim", text(&t["hop_limit"])));
            let srh = &t["srh"];
            if kind == "srv6" {
                f.push(("ipv6.routing.segleft", text(&srh["segments_left"])));
                f.push(("ipv6.routing.srh.addr", join(&srh["segments"], text)));
            } else {
                assert!(srh.is_null(), "{r}");
                f.push(("ipv6.routing.segleft", String::new()));
            }
        }
        "vxlan-ipv4" | "vxlan-ipv6" => {
            let (src, dst, dscp, ttl) = if kind == "vxlan-ipv4" {
                ("ip.src", "ip.dst", "ip.dsfield.dscp", "ip.ttl")
            } else {
                ("ipv6.src", "ipv6.dst", "ipv6.tclass.dscp", "ipv6.hlim")
            };
            f.push((src, text(&t["src"])));
            f.push((dst, text(&t["dst"])));
            f.push((dscp, text(&t["dscp"])));
            f.push((ttl, text(&t["ttl"])));
            f.push(("udp.srcport", text(&t["src_port"])));
            f.push(("udp.dstport", text(&t["dst_port"])));
            f.push(("vxlan.vni", text(&t["vni"])));
        }
        "sr-mpls" => {
            let labels = &t["labels"];
            f.push(("mpls.label", join(labels, |l| text(&l["label"]))));
            f.push(("mpls.exp", join(labels, |l| text(&l["tc"]))));
            f.push(("mpls.ttl", join(labels, |l| text(&l["ttl"]))));
            f.push((
                "mpls.bottom",
                join(labels, |l| {
                    if l["bottom"] == true { "1" } else { "0" }.to_string()
                }),
            ));
        }
        _ => unreachable!(),
    }
    f
}

fn tshark_value(fields: &Fields, row: usize, name: &str) -> String {
    fields
        .get(row, name)
        .replace("True", "1")
        .replace("False", "0")
}

fn check_capture(kind: &str, pcap: &Path) {
    let out = decode(pcap, true);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let recs = json_lines(&out);
    assert!(!recs.is_empty(), "{kind}: no frames");
    let fields = tshark_fields(pcap, &[], &[FIELDS, &PFC_FIELDS[..]].concat());
    assert_eq!(fields.len(), recs.len(), "{kind}");
    let expected_kind = match kind {
        "srv6" | "srv6-reduced" => "srv6",
        "vxlan-ipv4" | "vxlan-ipv6" => "vxlan",
        _ => "sr-mpls",
    };
    for (row, r) in recs.iter().enumerate() {
        assert_eq!(r["type"], "tunnel", "{kind} frame {}: {r}", row + 1);
        assert_eq!(r["tunnel"]["kind"], expected_kind, "{r}");
        assert_eq!(r["inner"]["type"], "pfc", "{r}");
        for (name, ours) in as_tshark_shows_it(kind, r) {
            assert_eq!(
                ours,
                tshark_value(&fields, row, name),
                "{kind} frame {}: {name} (decode: {r})",
                row + 1
            );
        }
    }
}

#[test]
fn relay_tunnels_decode_as_tshark_shows_them() {
    if !lossless_testkit::require(
        "relay_tunnels_decode_as_tshark_shows_them",
        &[lossless_testkit::Oracle::Tshark],
    ) {
        return;
    }
    let dir = lab_captures("tunnel-json");
    for kind in KINDS {
        check_capture(kind, &dir.join(format!("{kind}-pe2-p.pcap")));
    }
}

#[test]
fn relay_tunnels_readable_show_the_inner_pfc() {
    let dir = lab_captures("tunnel-text");
    for kind in KINDS {
        let out = decode(&dir.join(format!("{kind}-pe2-p.pcap")), false);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(!text.contains("not decoded"), "{kind}:\n{text}");
        let first: Vec<&str> = text.split("\n\n").next().unwrap().lines().collect();
        assert!(first[0].contains("tunnel ("), "{kind}:\n{text}");
        let inner = first
            .iter()
            .find(|l| l.trim_start().starts_with("inner"))
            .unwrap_or_else(|| panic!("{kind}: no inner line:\n{text}"));
        assert!(
            inner.contains("02:00:00:00:d2:01 -> 01:80:c2:00:00:01  PFC (0x8808)"),
            "{kind}: {inner}"
        );
        assert!(
            first
                .iter()
                .any(|l| l.contains("priorities") && l.contains("[3, 4]")),
            "{kind}:\n{text}"
        );
    }
}

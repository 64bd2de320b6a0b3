//! Every frame of the `wan-relay` scenario, checked by an oracle we did not
//! write: the scenario's per-link captures, read by tshark. On each of the
//! four links and for each tunnel kind, tshark must decode the outer tunnel
//! (with P's hop limit / TTL decrement and good checksums) and, inside it,
//! the PFC frame: opcode 0x0101, the class-enable vector and the eight pause
//! times DC2-GW sent, with PE1's MAC as the source on the last link.
//!
//! Needs tshark (CI installs it). Without it the test fails, unless
//! LOSSLESS_SKIP_ORACLES=1 says to skip on purpose.

use std::path::Path;

use lossless_lab::pcap::write_captures;
use lossless_lab::scenario;
use lossless_testkit::tshark::{tshark_fields, Fields, PFC_FIELDS};

const FIELDS: &[&str] = &[
    "frame.len",
    "frame.protocols",
    "eth.src",
    "eth.dst",
    "ipv6.tclass",
    "ipv6.hlim",
    "ipv6.dst",
    "ipv6.routing.segleft",
    "ip.dsfield.dscp",
    "ip.ttl",
    "ip.dst",
    "ip.checksum.status",
    "udp.dstport",
    "udp.checksum.status",
    "vxlan.vni",
    "mpls.label",
    "mpls.exp",
    "mpls.ttl",
    "macc.opcode",
    "_ws.expert.message",
];

const DC2_GW: &str = "02:00:00:00:d2:01";
const PE1_DC: &str = "02:00:00:00:e1:00";
const PFC_DMAC: &str = "01:80:c2:00:00:01";

/// tshark's fields for every frame of a capture (PFC's included), with the
/// checksums checked.
fn read(path: &Path) -> Fields {
    tshark_fields(
        path,
        &[
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ],
        &[FIELDS, &PFC_FIELDS[..]].concat(),
    )
}

fn times(t: [u16; 8]) -> [String; 8] {
    t.map(|q| q.to_string())
}

/// The outer layers tshark must show on the WAN for each tunnel, and the
/// field carrying the hop limit / TTL P decrements.
struct Outer {
    protocols: &'static str,
    ttl_field: &'static str,
    ttl_before: &'static str,
    ttl_after: &'static str,
    checks: &'static [(&'static str, &'static str)],
}

fn outer(tunnel: &str) -> Outer {
    match tunnel {
        "srv6" => Outer {
            protocols: "eth:ethertype:ipv6:ipv6.routing:eth:ethertype:macc",
            ttl_field: "ipv6.hlim",
            ttl_before: "64",
            ttl_after: "63",
            checks: &[
                ("ipv6.dst", "fc00::e1:d2"),
                ("ipv6.routing.segleft", "0"),
                ("ipv6.tclass", "0x000000c0"),
            ],
        },
        "srv6-reduced" => Outer {
            protocols: "eth:ethertype:ipv6:eth:ethertype:macc",
            ttl_field: "ipv6.hlim",
            ttl_before: "64",
            ttl_after: "63",
            checks: &[
                ("ipv6.dst", "fc00::e1:d2"),
                ("ipv6.routing.segleft", ""),
                ("ipv6.tclass", "0x000000c0"),
            ],
        },
        "vxlan-ipv4" => Outer {
            protocols: "eth:ethertype:ip:udp:vxlan:eth:ethertype:macc",
            ttl_field: "ip.ttl",
            ttl_before: "64",
            ttl_after: "63",
            checks: &[
                ("ip.dst", "10.0.0.1"),
                ("ip.dsfield.dscp", "48"),
                ("ip.checksum.status", "1"),
                ("udp.dstport", "4789"),
                ("udp.checksum.status", "1"),
                ("vxlan.vni", "4242"),
            ],
        },
        "vxlan-ipv6" => Outer {
            protocols: "eth:ethertype:ipv6:udp:vxlan:eth:ethertype:macc",
            ttl_field: "ipv6.hlim",
            ttl_before: "64",
            ttl_after: "63",
            checks: &[
                ("ipv6.dst", "fc00::1"),
                ("ipv6.tclass", "0x000000c0"),
                ("udp.dstport", "4789"),
                ("udp.checksum.status", "1"),
                ("vxlan.vni", "4242"),
            ],
        },
        "sr-mpls" => Outer {
            protocols: "eth:ethertype:mpls:pwethheuristic:pwethcw:eth:ethertype:macc",
            ttl_field: "mpls.ttl",
            ttl_before: "64,64",
            ttl_after: "63,64",
            checks: &[("mpls.label", "16001,101"), ("mpls.exp", "7,7")],
        },
        other => panic!("no expectations for tunnel {other}"),
    }
}

#[test]
fn tshark_decodes_the_tunnel_and_the_pfc_frame_on_every_link() {
    if !lossless_testkit::require(
        "tshark_decodes_the_tunnel_and_the_pfc_frame_on_every_link",
        &[lossless_testkit::Oracle::Tshark],
    ) {
        return;
    }
    let report = scenario::run("wan-relay", 1).expect("known scenario");
    let dir = std::env::temp_dir().join(format!("lossless-relay-tshark-{}", std::process::id()));
    let files = write_captures(&dir, &report.captures).expect("write captures");
    assert_eq!(files.len(), report.wan_relay.len() * 4);

    // What DC2-GW sent: step 1's pause of priorities 3 and 4, then the storm on
    // priority 3: pauses of 65,535 quanta and one resume.
    let first = ("0x0018".to_string(), times([0, 0, 0, 65535, 4660, 0, 0, 0]));
    let pause3 = ("0x0008".to_string(), times([0, 0, 0, 65535, 0, 0, 0, 0]));
    let resume3 = ("0x0008".to_string(), times([0; 8]));

    let runs = report
        .wan_relay
        .iter()
        .zip(files.chunks(4))
        .zip(report.captures.chunks(4));
    for ((run, files), captures) in runs {
        let t = run.tunnel;
        let links: Vec<Fields> = files.iter().map(|f| read(f)).collect();
        for (rows, cap) in links.iter().zip(captures) {
            assert_eq!(rows.len(), cap.frames.len(), "{t}: tshark saw every frame");
        }

        // DC2-GW > PE2: the pause, the five illegal frames as tshark sees
        // them, then the storm.
        let l0 = &links[0];
        assert_eq!(l0.len(), 1 + 5 + 2501, "{t}");
        for row in 0..l0.len() {
            assert_eq!(
                l0.get(row, "frame.protocols"),
                "eth:ethertype:macc",
                "{t} {row}"
            );
        }
        assert_eq!(l0.get(0, "macc.opcode"), "0x0101");
        assert_eq!(l0.pfc(0), first, "{t}");
        assert_eq!(l0.get(1, "eth.dst"), "01:80:c2:00:00:0e", "{t}: wrong DMAC");
        assert_eq!(
            l0.get(1, "_ws.expert.message"),
            "Destination address must be 01-80-C2-00-00-01"
        );
        assert_eq!(l0.get(2, "eth.src"), "02:00:00:00:66:06", "{t}: wrong SMAC");
        assert_eq!(l0.get(3, "frame.len"), "59", "{t}: short");
        assert_eq!(l0.get(4, "macc.opcode"), "0x0001", "{t}: 802.3x PAUSE");
        assert_eq!(l0.get(5, "macc.cbfc.enbv"), "0x0118", "{t}: high byte");
        assert_eq!(l0.get(5, "_ws.expert.message"), "8 MSbs of ENBV must be 0");
        for row in 6..l0.len() - 1 {
            assert_eq!(l0.pfc(row), pause3, "{t} storm frame {row}");
            assert_eq!(l0.get(row, "eth.src"), DC2_GW);
        }
        assert_eq!(l0.pfc(l0.len() - 1), resume3, "{t}: the resume");

        // The three links after PE2 carry the same PFC frames, in the same
        // order: the pause, then what of the storm crossed (its first pause,
        // refreshes with what was left of DC2-GW's latest), ending in the
        // resume.
        let n = run.storm.arrivals.len();
        assert!((3..200).contains(&n), "{t}: {n} storm frames crossed");
        let mut expected = vec![first.clone(), pause3.clone()];
        expected.extend(run.storm.arrivals[1..n - 1].iter().map(|a| {
            let mut q = [0; 8];
            q[3] = a.quanta;
            ("0x0008".to_string(), times(q))
        }));
        expected.push(resume3.clone());
        for (i, rows) in links.iter().enumerate().skip(1) {
            assert_eq!(rows.len(), expected.len(), "{t} link {i}");
            for (row, want) in expected.iter().enumerate() {
                assert_eq!(rows.get(row, "macc.opcode"), "0x0101", "{t} {i}/{row}");
                assert_eq!(&rows.pfc(row), want, "{t} link {i} frame {row}");
            }
        }

        // The WAN: outer tunnel as configured, P's decrement, the inner frame
        // still from DC2-GW to the PFC address.
        let o = outer(t);
        for (i, outer_src, outer_dst, ttl) in [
            (1, "02:00:00:00:e2:01", "02:00:00:00:f0:02", o.ttl_before),
            (2, "02:00:00:00:f0:01", "02:00:00:00:e1:01", o.ttl_after),
        ] {
            let rows = &links[i];
            for row in 0..rows.len() {
                assert_eq!(rows.get(row, "frame.protocols"), o.protocols, "{t} {i}");
                assert_eq!(
                    rows.get(row, "eth.src"),
                    format!("{outer_src},{DC2_GW}"),
                    "{t} {i}"
                );
                assert_eq!(
                    rows.get(row, "eth.dst"),
                    format!("{outer_dst},{PFC_DMAC}"),
                    "{t} {i}"
                );
                assert_eq!(rows.get(row, o.ttl_field), ttl, "{t} link {i}");
                for (field, value) in o.checks {
                    assert_eq!(rows.get(row, field), *value, "{t} link {i} {field}");
                }
            }
        }

        // PE1 > DC1-GW: plain PFC again, from PE1's DC port.
        let l3 = &links[3];
        for row in 0..l3.len() {
            assert_eq!(l3.get(row, "frame.protocols"), "eth:ethertype:macc", "{t}");
            assert_eq!(l3.get(row, "eth.src"), PE1_DC, "{t}: SMAC rewritten");
            assert_eq!(l3.get(row, "eth.dst"), PFC_DMAC, "{t}");
            assert_eq!(l3.get(row, "frame.len"), "60", "{t}");
            assert_eq!(l3.get(row, "_ws.expert.message"), "", "{t}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

//! The tunnel frames we emit, checked by an oracle we did not write: tshark
//! decodes the outer layers (IPv6 + SRH, VXLAN over IPv4 and IPv6 with good
//! checksums, the MPLS stack and control word) and, inside each, the PFC frame
//! with its opcode, class-enable vector and pause times.
//!
//! Needs tshark (CI installs it). Without it the test fails, unless
//! LOSSLESS_SKIP_ORACLES=1 says to skip on purpose.

mod tunnel_vectors;

use std::net::Ipv4Addr;

use lossless_testkit::{require, write_pcap, Oracle};
use lossless_wire::tunnel::ip::IpProtocol;
use lossless_wire::tunnel::mpls::encode_stack;
use lossless_wire::tunnel::srh::encode_path;
use lossless_wire::tunnel::{
    ControlWord, Encap, IpHeader, Ipv4Header, Ipv6Header, LabelStack, SegmentList, Srh,
    TunnelFrame, UdpHeader, Vni, VxlanHeader,
};
use lossless_wire::{EthernetHeader, MacAddr, VlanTag};
use tunnel_vectors::*;

const FIELDS: &[&str] = &[
    "frame.protocols",
    "eth.src",
    "vlan.priority",
    "ipv6.tclass",
    "ipv6.flow",
    "ipv6.hlim",
    "ipv6.dst",
    "ipv6.routing.type",
    "ipv6.routing.segleft",
    "ipv6.routing.srh.last_entry",
    "ipv6.routing.srh.addr",
    "ipv6.routing.nxt",
    "ip.dsfield.dscp",
    "ip.ttl",
    "ip.checksum.status",
    "udp.dstport",
    "udp.checksum.status",
    "vxlan.flag_i",
    "vxlan.vni",
    "mpls.label",
    "mpls.exp",
    "mpls.bottom",
    "mpls.ttl",
    "macc.opcode",
    "macc.cbfc.enbv",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
];

fn outer(vlan: Option<VlanTag>) -> EthernetHeader {
    EthernetHeader {
        dst: MacAddr([2, 0, 0, 0, 0x0b, 1]),
        src: MacAddr([2, 0, 0, 0, 0x0e, 1]),
        vlan,
        ethertype: 0,
    }
}

fn ip6(dst: &str, tc: u8) -> Ipv6Header {
    Ipv6Header {
        traffic_class: tc,
        flow_label: 0xbeef,
        payload_len: 0,
        next_header: IpProtocol(0),
        hop_limit: 64,
        src: v6("fc00::1"),
        dst: v6(dst),
    }
}

/// The five encapsulations of [`PFC`], in order: SRv6 with a two-segment SRH
/// (VLAN PCP 7), SRv6 reduced, VXLAN/IPv6, VXLAN/IPv4, SR-MPLS with CW.
fn frames() -> Vec<Vec<u8>> {
    let pfc = hex(PFC);
    let path = encode_path(&[v6("fc00::2:1"), v6("fc00::d2")]);
    let srh = Srh {
        next_header: IpProtocol::ETHERNET,
        segments_left: 1,
        flags: 0,
        tag: 0,
        segments: SegmentList::from_bytes(&path).expect("segments"),
        tlvs: &[],
    };
    let vxlan = VxlanHeader::new(Vni::new(0x00ab_cdef).expect("vni"));
    let udp = UdpHeader {
        src_port: 49152,
        dst_port: 4789,
        length: 0,
        checksum: 1,
    };
    let labels = encode_stack(&[16002, 100], 7, 64);
    let tag = Some(VlanTag {
        pcp: 7,
        dei: false,
        vid: 10,
    });
    let list = [
        TunnelFrame {
            outer: outer(tag),
            encap: Encap::Srv6 {
                ipv6: ip6("fc00::2:1", 0xc0),
                srh: Some(srh),
            },
            inner: &pfc,
        },
        TunnelFrame {
            outer: outer(None),
            encap: Encap::Srv6 {
                ipv6: ip6("fc00::d2", 0xc0),
                srh: None,
            },
            inner: &pfc,
        },
        TunnelFrame {
            outer: outer(None),
            encap: Encap::Vxlan {
                ip: IpHeader::V6(ip6("fc00::b", 0xc0)),
                udp,
                vxlan,
            },
            inner: &pfc,
        },
        TunnelFrame {
            outer: outer(None),
            encap: Encap::Vxlan {
                ip: IpHeader::V4(Ipv4Header {
                    tos: 0xc0,
                    total_len: 0,
                    ident: 0,
                    dont_fragment: true,
                    more_fragments: false,
                    fragment_offset: 0,
                    ttl: 64,
                    protocol: IpProtocol(0),
                    src: Ipv4Addr::new(10, 0, 1, 14),
                    dst: Ipv4Addr::new(10, 0, 1, 11),
                    options: &[],
                }),
                udp,
                vxlan,
            },
            inner: &pfc,
        },
        TunnelFrame {
            outer: outer(None),
            encap: Encap::Mpls {
                labels: LabelStack::from_bytes(&labels).expect("labels"),
                control_word: Some(ControlWord::default()),
            },
            inner: &pfc,
        },
    ];
    list.iter().map(emit).collect()
}

#[test]
fn tshark_decodes_outer_and_inner_layers() {
    if !require("tshark_decodes_outer_and_inner_layers", &[Oracle::Tshark]) {
        return;
    }
    let frames = frames();
    let dir = std::env::temp_dir().join(format!("lossless-tunnel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("tunnels.pcap");
    write_pcap(&path, &frames);
    let rows = lossless_testkit::tshark_fields(
        &path,
        &[
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ],
        FIELDS,
    );
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        rows.len(),
        frames.len(),
        "tshark saw every frame:\n{rows:?}"
    );
    let col = |row: usize, name: &str| -> String { rows.get(row, name).to_string() };

    // Every frame: the inner PFC frame as sent, behind the outer layers.
    for row in 0..rows.len() {
        assert!(
            col(row, "frame.protocols").ends_with(":eth:ethertype:macc"),
            "frame {row}: {}",
            col(row, "frame.protocols")
        );
        assert_eq!(col(row, "eth.src"), "02:00:00:00:0e:01,02:00:00:00:0d:01");
        assert_eq!(col(row, "macc.opcode"), "0x0101");
        assert_eq!(col(row, "macc.cbfc.enbv"), "0x0018");
        assert_eq!(col(row, "macc.cbfc.pause_time.c3"), "65535");
        assert_eq!(col(row, "macc.cbfc.pause_time.c4"), "65535");
    }

    // SRv6 with an SRH, tagged with PCP 7.
    assert_eq!(
        col(0, "frame.protocols"),
        "eth:ethertype:vlan:ethertype:ipv6:ipv6.routing:eth:ethertype:macc"
    );
    assert_eq!(col(0, "vlan.priority"), "7");
    assert_eq!(col(0, "ipv6.tclass"), "0x000000c0");
    assert_eq!(col(0, "ipv6.flow"), "0x00beef");
    assert_eq!(col(0, "ipv6.hlim"), "64");
    assert_eq!(col(0, "ipv6.dst"), "fc00::2:1");
    assert_eq!(col(0, "ipv6.routing.type"), "4");
    assert_eq!(col(0, "ipv6.routing.segleft"), "1");
    assert_eq!(col(0, "ipv6.routing.srh.last_entry"), "1");
    assert_eq!(col(0, "ipv6.routing.srh.addr"), "fc00::d2,fc00::2:1");
    assert_eq!(col(0, "ipv6.routing.nxt"), "143");

    // SRv6 reduced: no routing header, straight to Ethernet.
    assert_eq!(
        col(1, "frame.protocols"),
        "eth:ethertype:ipv6:eth:ethertype:macc"
    );
    assert_eq!(col(1, "ipv6.dst"), "fc00::d2");
    assert_eq!(col(1, "ipv6.routing.type"), "");

    // VXLAN over IPv6: the UDP checksum tshark computes agrees.
    assert_eq!(
        col(2, "frame.protocols"),
        "eth:ethertype:ipv6:udp:vxlan:eth:ethertype:macc"
    );
    assert_eq!(col(2, "udp.dstport"), "4789");
    assert_eq!(col(2, "udp.checksum.status"), "1", "Good");
    assert_eq!(col(2, "vxlan.flag_i"), "1");
    assert_eq!(col(2, "vxlan.vni"), "11259375");

    // VXLAN over IPv4: header checksum and UDP checksum good, DSCP CS6.
    assert_eq!(
        col(3, "frame.protocols"),
        "eth:ethertype:ip:udp:vxlan:eth:ethertype:macc"
    );
    assert_eq!(col(3, "ip.dsfield.dscp"), "48");
    assert_eq!(col(3, "ip.ttl"), "64");
    assert_eq!(col(3, "ip.checksum.status"), "1", "Good");
    assert_eq!(col(3, "udp.checksum.status"), "1", "Good");
    assert_eq!(col(3, "vxlan.vni"), "11259375");

    // SR-MPLS: two labels, TC 7, S on the second, the control word, Ethernet.
    assert_eq!(
        col(4, "frame.protocols"),
        "eth:ethertype:mpls:pwethheuristic:pwethcw:eth:ethertype:macc"
    );
    assert_eq!(col(4, "mpls.label"), "16002,100");
    assert_eq!(col(4, "mpls.exp"), "7,7");
    assert_eq!(col(4, "mpls.bottom"), "0,1");
    assert_eq!(col(4, "mpls.ttl"), "64,64");
}

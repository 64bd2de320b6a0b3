//! Tunnel headers, golden frames: what the Linux kernel sent (VXLAN over IPv4
//! and IPv6, seg6 l2encap) and what the RFC layouts say (SRv6 with and without
//! an SRH, SR-MPLS with a control word) parse to the expected headers and emit
//! back byte for byte; the building blocks' constructors check their bytes.
//! The malformed frames are in `tunnel_malformed.rs`, the truncated ones in
//! `tunnel_truncated.rs`.

mod tunnel_vectors;

use std::net::Ipv4Addr;

use lossless_wire::tunnel::ip::IpProtocol;
use lossless_wire::tunnel::mpls::{encode_stack, LabelStackError};
use lossless_wire::tunnel::srh::{encode_path, SegmentListError};
use lossless_wire::tunnel::{
    ControlWord, Encap, IpHeader, Ipv4Header, Ipv6Header, LabelEntry, LabelStack, ParseOptions,
    SegmentList, Srh, TunnelFrame, UdpHeader, Vni, VxlanHeader,
};
use lossless_wire::{DecodeErrorKind as K, EthernetHeader, MacAddr, VlanTag};
use tunnel_vectors::*;

// ---- golden frames -----------------------------------------------------------

#[test]
fn kernel_vxlan_over_ipv6() {
    let f = hex(KERNEL_VXLAN6);
    let t = parse(&f).expect("valid");
    assert_eq!(t.outer.src, MacAddr([2, 0, 0, 0, 0x0e, 1]));
    assert_eq!(t.outer.ethertype, 0x86dd);
    let Encap::Vxlan {
        ip: IpHeader::V6(ip),
        udp,
        vxlan,
    } = t.encap
    else {
        panic!("not VXLAN over IPv6: {:?}", t.encap)
    };
    assert_eq!(
        ip,
        Ipv6Header {
            traffic_class: 0,
            flow_label: 0,
            payload_len: 76,
            next_header: IpProtocol::UDP,
            hop_limit: 64,
            src: v6("fc00:1::e"),
            dst: v6("fc00:1::b"),
        }
    );
    assert_eq!(
        udp,
        UdpHeader {
            src_port: 44463,
            dst_port: 4789,
            length: 76,
            checksum: 0x5120
        }
    );
    assert_eq!(vxlan, VxlanHeader::new(Vni::new(4242).expect("vni")));
    assert_eq!(t.inner, &hex(PFC)[..]);
    assert_eq!(t.ip_offset(), Some(14));
    assert_eq!(t.header_len(), 14 + 40 + 8 + 8);
    assert_eq!(emit(&t), f);
}

#[test]
fn kernel_vxlan_over_ipv4() {
    let f = hex(KERNEL_VXLAN4);
    let t = parse(&f).expect("valid");
    let Encap::Vxlan {
        ip: IpHeader::V4(ip),
        udp,
        vxlan,
    } = t.encap
    else {
        panic!("not VXLAN over IPv4: {:?}", t.encap)
    };
    assert_eq!(
        ip,
        Ipv4Header {
            tos: 0,
            total_len: 96,
            ident: 0xe984,
            dont_fragment: false,
            more_fragments: false,
            fragment_offset: 0,
            ttl: 64,
            protocol: IpProtocol::UDP,
            src: Ipv4Addr::new(10, 0, 1, 14),
            dst: Ipv4Addr::new(10, 0, 1, 11),
            options: &[],
        }
    );
    assert_eq!((udp.src_port, udp.dst_port, udp.length), (44463, 4789, 76));
    assert_eq!(udp.checksum, 0x7834);
    assert_eq!(vxlan.vni.get(), 77);
    assert_eq!(t.inner, &hex(PFC)[..]);
    // The IPv4 header checksum (0x7af0) and the UDP checksum are recomputed
    // on emit and come out as the kernel wrote them.
    assert_eq!(emit(&t), f);
}

#[test]
fn kernel_seg6_l2encap() {
    let f = hex(KERNEL_L2ENCAP);
    let t = parse(&f).expect("valid");
    let Encap::Srv6 {
        ipv6,
        srh: Some(srh),
    } = t.encap
    else {
        panic!("not SRv6 with an SRH: {:?}", t.encap)
    };
    assert_eq!(ipv6.flow_label, 0x28816);
    assert_eq!(ipv6.traffic_class, 0);
    assert_eq!(ipv6.hop_limit, 63);
    assert_eq!(ipv6.payload_len, 106);
    assert_eq!(ipv6.next_header, IpProtocol::ROUTING);
    assert_eq!((ipv6.src, ipv6.dst), (v6("fc00:1::e"), v6("fc00:1::b")));
    assert_eq!(srh.next_header, IpProtocol::ETHERNET);
    assert_eq!(srh.hdr_ext_len(), 2);
    assert_eq!((srh.segments_left, srh.last_entry()), (0, 0));
    assert_eq!((srh.flags, srh.tag), (0, 0));
    assert_eq!(srh.segments.iter().collect::<Vec<_>>(), [v6("fc00:1::b")]);
    assert_eq!(srh.active_segment(), Some(ipv6.dst));
    assert!(srh.tlvs.is_empty());
    // The inner frame is the one the router received, from its DMAC.
    let (inner, _) = EthernetHeader::parse(t.inner).expect("inner Ethernet");
    assert_eq!(inner.dst, MacAddr([2, 0, 0, 0, 0x0e, 0]));
    assert_eq!(inner.src, MacAddr([2, 0, 0, 0, 0x0a, 1]));
    assert_eq!(inner.ethertype, 0x86dd);
    assert_eq!(t.inner.len(), 106 - 24);
    assert_eq!(emit(&t), f);
}

#[test]
fn srv6_two_segments_by_hand() {
    let f = hex(SRV6_TWO_SEGMENTS);
    let t = parse(&f).expect("valid");
    let Encap::Srv6 {
        ipv6,
        srh: Some(srh),
    } = t.encap
    else {
        panic!("not SRv6: {:?}", t.encap)
    };
    assert_eq!(ipv6.traffic_class, 0xc0);
    assert_eq!(ipv6.flow_label, 0x12345);
    assert_eq!(ipv6.dst, v6("fc00::2:1"));
    assert_eq!(srh.segments_left, 1);
    assert_eq!(srh.last_entry(), 1);
    assert_eq!(srh.tag, 7);
    assert_eq!(srh.segments.get(0), Some(v6("fc00::d2")));
    assert_eq!(srh.segments.get(1), Some(v6("fc00::2:1")));
    assert_eq!(srh.segments.get(2), None);
    assert_eq!(
        srh.segments.path().collect::<Vec<_>>(),
        [v6("fc00::2:1"), v6("fc00::d2")]
    );
    assert_eq!(srh.active_segment(), Some(ipv6.dst));
    assert_eq!(t.inner, &hex(PFC)[..]);
    assert_eq!(emit(&t), f);

    // The same frame built from values: lengths and next headers derived.
    let path = encode_path(&[v6("fc00::2:1"), v6("fc00::d2")]);
    let built = TunnelFrame {
        outer: EthernetHeader {
            dst: MacAddr([2, 0, 0, 0, 0x0b, 1]),
            src: MacAddr([2, 0, 0, 0, 0x0e, 1]),
            vlan: None,
            ethertype: 0,
        },
        encap: Encap::Srv6 {
            ipv6: Ipv6Header {
                traffic_class: 0xc0,
                flow_label: 0x12345,
                payload_len: 0,
                next_header: IpProtocol(0),
                hop_limit: 64,
                src: v6("fc00::1"),
                dst: v6("fc00::2:1"),
            },
            srh: Some(Srh {
                next_header: IpProtocol(0),
                segments_left: 1,
                flags: 0,
                tag: 7,
                segments: SegmentList::from_bytes(&path).expect("segments"),
                tlvs: &[],
            }),
        },
        inner: &hex(PFC),
    };
    assert_eq!(emit(&built), f);
}

#[test]
fn srv6_reduced_without_srh() {
    // l2encap.red with one SID: IPv6 next header 143 straight away.
    let pfc = hex(PFC);
    let t = TunnelFrame {
        outer: EthernetHeader {
            dst: MacAddr([2, 0, 0, 0, 0x0b, 1]),
            src: MacAddr([2, 0, 0, 0, 0x0e, 1]),
            vlan: Some(VlanTag {
                pcp: 7,
                dei: false,
                vid: 100,
            }),
            ethertype: 0,
        },
        encap: Encap::Srv6 {
            ipv6: Ipv6Header {
                traffic_class: 0,
                flow_label: 0,
                payload_len: 0,
                next_header: IpProtocol(0),
                hop_limit: 64,
                src: v6("fc00::1"),
                dst: v6("fc00::d2"),
            },
            srh: None,
        },
        inner: &pfc,
    };
    let f = emit(&t);
    let expected = hex(&format!(
        "020000000b01 020000000e01 8100 e064 86dd 60000000 003c 8f 40 \
         fc000000000000000000000000000001 fc0000000000000000000000000000d2 {PFC}"
    ));
    assert_eq!(f, expected);
    let parsed = parse(&f).expect("valid");
    assert_eq!(
        parsed.encap,
        Encap::Srv6 {
            ipv6: Ipv6Header {
                payload_len: 60,
                next_header: IpProtocol::ETHERNET,
                ..match t.encap {
                    Encap::Srv6 { ipv6, .. } => ipv6,
                    _ => unreachable!(),
                }
            },
            srh: None
        }
    );
    assert_eq!(parsed.outer.vlan.map(|v| v.pcp), Some(7));
    assert_eq!(parsed.ip_offset(), Some(18));
}

#[test]
fn mpls_with_control_word_by_hand() {
    let f = hex(MPLS_CW);
    let t = parse(&f).expect("valid");
    let Encap::Mpls {
        labels,
        control_word,
    } = t.encap
    else {
        panic!("not MPLS: {:?}", t.encap)
    };
    assert_eq!(
        labels.iter().collect::<Vec<_>>(),
        [
            LabelEntry {
                label: 16002,
                tc: 7,
                bos: false,
                ttl: 64
            },
            LabelEntry {
                label: 100,
                tc: 7,
                bos: true,
                ttl: 64
            }
        ]
    );
    assert_eq!(labels.top().map(|e| e.label), Some(16002));
    assert_eq!(labels.bottom().map(|e| e.label), Some(100));
    assert_eq!(control_word, Some(ControlWord::default()));
    assert_eq!(t.inner, &hex(PFC)[..]);
    assert_eq!(t.ip_offset(), None);
    assert_eq!(emit(&t), f);
    assert_eq!(encode_stack(&[16002, 100], 7, 64), hex("03e82e40 00064f40"));

    // Without a control word the same bytes read differently: the zero word
    // is inner frame.
    let no_cw = ParseOptions {
        control_word: false,
        ..opts()
    };
    let t = TunnelFrame::parse(&f, &no_cw).expect("valid");
    assert_eq!(t.inner.len(), 64);
    assert_eq!(t.inner[..4], [0, 0, 0, 0]);
}

#[test]
fn vxlan_port_is_an_option() {
    // Linux's default vxlan port 8472: other traffic under 4789, VXLAN when
    // the receiver is told.
    let mut f = hex(KERNEL_VXLAN4);
    f[36..38].copy_from_slice(&8472u16.to_be_bytes());
    assert_eq!(
        err(&f),
        de(
            36,
            "udp.dstport",
            K::NotThisProtocol {
                reason: "UDP destination port is not the VXLAN port"
            }
        )
    );
    let linux = ParseOptions {
        vxlan_port: 8472,
        ..opts()
    };
    // The checksum covers the port: it is now wrong, and says so.
    let e = TunnelFrame::parse(&f, &linux).expect_err("checksum");
    assert_eq!((e.offset, e.field), (40, "udp.checksum"));
    assert!(matches!(e.kind, K::Checksum { found: 0x7834, .. }), "{e}");
}

// ---- building blocks -----------------------------------------------------------

#[test]
fn segment_list_and_label_stack_constructors_check_their_bytes() {
    assert_eq!(SegmentList::from_bytes(&[]), Err(SegmentListError::Empty));
    assert_eq!(
        SegmentList::from_bytes(&[0; 20]),
        Err(SegmentListError::Partial(20))
    );
    assert_eq!(
        SegmentList::from_bytes(&[0; 16 * 128]),
        Err(SegmentListError::TooMany(128))
    );
    assert_eq!(
        SegmentList::from_bytes(&[0; 16 * 127]).map(|s| s.len()),
        Ok(127)
    );
    assert_eq!(LabelStack::from_bytes(&[]), Err(LabelStackError::Empty));
    assert_eq!(
        LabelStack::from_bytes(&[0; 6]),
        Err(LabelStackError::Partial(6))
    );
    assert_eq!(
        LabelStack::from_bytes(&hex("00064f40 00064f40")),
        Err(LabelStackError::EarlyBottom(0))
    );
    assert_eq!(
        LabelStack::from_bytes(&hex("03e82e40")),
        Err(LabelStackError::NoBottom)
    );
    assert_eq!(
        LabelStack::from_bytes(&hex("03e82e40 00064f40")).map(|s| s.len()),
        Ok(2)
    );
    assert_eq!(Vni::new(0x00ff_ffff).map(Vni::get), Some(0x00ff_ffff));
    assert_eq!(Vni::new(0x0100_0000), None);
}

#[test]
fn label_entry_fields() {
    let e = LabelEntry::from_word(0xffff_ffff);
    assert_eq!(e.label, 0xfffff);
    let e = LabelEntry {
        label: 0x12345,
        tc: 5,
        bos: true,
        ttl: 1,
    };
    assert_eq!(e.to_word(), 0x1234_5b01);
    assert_eq!(LabelEntry::from_word(e.to_word()), e);
    // Out-of-range values are masked to their widths.
    let wide = LabelEntry {
        label: 0x1_00001,
        tc: 0x9,
        ..e
    };
    assert_eq!(LabelEntry::from_word(wide.to_word()).label, 1);
    assert_eq!(LabelEntry::from_word(wide.to_word()).tc, 1);
}

#[test]
fn srh_with_tlvs_round_trips() {
    // One segment and 8 octets of TLVs (a PadN of 6): Hdr Ext Len 3.
    let srh = hex(
        "8f 03 04 00 00 00 0000 fc0000000000000000000000000000d2 0406000000000000 \
         aabb",
    );
    let (parsed, rest) = Srh::parse(&srh).expect("valid");
    assert_eq!(parsed.tlvs, &hex("0406000000000000")[..]);
    assert_eq!(rest, [0xaa, 0xbb]);
    assert_eq!(parsed.hdr_ext_len(), 3);
    let mut out = vec![0u8; parsed.buffer_len()];
    parsed.emit(&mut out);
    assert_eq!(out, srh[..32]);
}

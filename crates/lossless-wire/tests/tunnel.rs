//! Tunnel headers: golden frames from the Linux kernel and from the RFC
//! layouts, one test per way a tunnel frame can be malformed (kind, field and
//! offset from the outer destination MAC), and every truncated length.

mod tunnel_vectors;

use std::net::{Ipv4Addr, Ipv6Addr};

use lossless_wire::tunnel::ip::IpProtocol;
use lossless_wire::tunnel::mpls::{encode_stack, LabelStackError};
use lossless_wire::tunnel::srh::{encode_path, SegmentListError};
use lossless_wire::tunnel::{
    ControlWord, Encap, IpHeader, Ipv4Header, Ipv6Header, LabelEntry, LabelStack, ParseOptions,
    SegmentList, Srh, TunnelFrame, UdpHeader, Vni, VxlanHeader,
};
use lossless_wire::{DecodeError, DecodeErrorKind as K, EthernetHeader, MacAddr, VlanTag};
use tunnel_vectors::*;

fn opts() -> ParseOptions {
    ParseOptions::default()
}

fn parse(f: &[u8]) -> Result<TunnelFrame<'_>, DecodeError> {
    TunnelFrame::parse(f, &opts())
}

fn err(f: &[u8]) -> DecodeError {
    parse(f).expect_err("must be refused")
}

fn de(offset: usize, field: &'static str, kind: K) -> DecodeError {
    DecodeError::new(offset, field, kind)
}

fn v6(s: &str) -> Ipv6Addr {
    s.parse().expect("IPv6 address")
}

fn reemit(t: &TunnelFrame) -> Vec<u8> {
    let mut out = vec![0u8; t.buffer_len()];
    assert_eq!(t.emit(&mut out), out.len());
    out
}

const GW: MacAddr = MacAddr([2, 0, 0, 0, 0x0d, 1]);

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
    assert_eq!(reemit(&t), f);
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
    assert_eq!(reemit(&t), f);
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
    assert_eq!(reemit(&t), f);
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
    assert_eq!(reemit(&t), f);

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
    assert_eq!(reemit(&built), f);
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
    let f = reemit(&t);
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
    assert_eq!(reemit(&t), f);
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

// ---- one test per malformation ---------------------------------------------------

#[test]
fn not_a_tunnel_ethertype() {
    assert_eq!(
        err(&hex(PFC)),
        de(
            12,
            "eth.type",
            K::NotThisProtocol {
                reason: "Ethertype is not IPv4, IPv6 or MPLS unicast"
            }
        )
    );
}

#[test]
fn ipv6_version() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[14] = 0x4c;
    assert_eq!(
        err(&f),
        de(
            14,
            "ipv6.version",
            K::BadValue {
                value: 4,
                reason: "IP version is not 6"
            }
        )
    );
}

#[test]
fn ipv6_payload_length_beyond_frame() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[18..20].copy_from_slice(&101u16.to_be_bytes());
    assert_eq!(
        err(&f),
        de(
            18,
            "ipv6.plen",
            K::LengthBeyondContainer {
                length: 101,
                available: 100
            }
        )
    );
}

#[test]
fn ipv6_trailing_padding_is_not_payload() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f.extend_from_slice(&[0xee; 4]);
    let t = parse(&f).expect("valid");
    assert_eq!(t.inner, &hex(PFC)[..]);
    assert_eq!(reemit(&t), hex(SRV6_TWO_SEGMENTS));
}

#[test]
fn ipv6_other_next_header() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[20] = 58; // ICMPv6
    assert_eq!(
        err(&f),
        de(
            20,
            "ipv6.nxt",
            K::NotThisProtocol {
                reason: "next header is not Routing/SRH (43), Ethernet (143) or UDP (17)"
            }
        )
    );
}

#[test]
fn srh_routing_type() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[56] = 3; // RPL source route
    assert_eq!(
        err(&f),
        de(
            56,
            "ipv6.routing.type",
            K::BadValue {
                value: 3,
                reason: "routing header is not a Segment Routing Header (type 4)"
            }
        )
    );
}

#[test]
fn srh_length_beyond_payload() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[55] = 13; // 104 octets after the fixed 8, 92 left in the payload
    assert_eq!(
        err(&f),
        de(
            55,
            "ipv6.routing.len",
            K::LengthBeyondContainer {
                length: 104,
                available: 92
            }
        )
    );
}

#[test]
fn srh_last_entry_beyond_header() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[58] = 2; // three segments in a header that holds two
    assert_eq!(
        err(&f),
        de(
            58,
            "ipv6.routing.srh.last_entry",
            K::BadValue {
                value: 2,
                reason: "Last Entry beyond the segments Hdr Ext Len holds (RFC 8754 4.3.1.1)"
            }
        )
    );
    // Hdr Ext Len 0 holds no segment at all.
    let srh = hex("8f 00 04 00 00 00 0000");
    assert_eq!(
        Srh::parse(&srh).expect_err("no segment"),
        de(
            4,
            "ipv6.routing.srh.last_entry",
            K::BadValue {
                value: 0,
                reason: "Last Entry beyond the segments Hdr Ext Len holds (RFC 8754 4.3.1.1)"
            }
        )
    );
}

#[test]
fn srh_segments_left_beyond_last_entry() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[57] = 2; // Last Entry + 1: the reduced-SRH case, accepted
    let t = parse(&f).expect("reduced SRH segments left");
    let Encap::Srv6 { srh: Some(srh), .. } = t.encap else {
        panic!()
    };
    assert_eq!(srh.active_segment(), None);
    f[57] = 3;
    assert_eq!(
        err(&f),
        de(
            57,
            "ipv6.routing.segleft",
            K::BadValue {
                value: 3,
                reason: "Segments Left above Last Entry + 1 (RFC 8754 4.3.1.1)"
            }
        )
    );
}

#[test]
fn srh_next_header_not_ethernet() {
    let mut f = hex(SRV6_TWO_SEGMENTS);
    f[54] = 41; // IPv6 in SRv6 (L3 encap): not ours
    assert_eq!(
        err(&f),
        de(
            54,
            "ipv6.routing.nxt",
            K::NotThisProtocol {
                reason: "SRH next header is not Ethernet (143)"
            }
        )
    );
}

#[test]
fn ipv4_version_header_length_and_total_length() {
    let f = hex(KERNEL_VXLAN4);
    let mut bad = f.clone();
    bad[14] = 0x65;
    assert_eq!(
        err(&bad),
        de(
            14,
            "ip.version",
            K::BadValue {
                value: 6,
                reason: "IP version is not 4"
            }
        )
    );
    let mut bad = f.clone();
    bad[14] = 0x44;
    assert_eq!(
        err(&bad),
        de(
            14,
            "ip.hdr_len",
            K::TooShort {
                length: 16,
                minimum: 20
            }
        )
    );
    let mut bad = f.clone();
    bad[16..18].copy_from_slice(&19u16.to_be_bytes());
    assert_eq!(
        err(&bad),
        de(
            16,
            "ip.len",
            K::TooShort {
                length: 19,
                minimum: 20
            }
        )
    );
    let mut bad = f.clone();
    bad[16..18].copy_from_slice(&97u16.to_be_bytes());
    assert_eq!(
        err(&bad),
        de(
            16,
            "ip.len",
            K::LengthBeyondContainer {
                length: 97,
                available: 96
            }
        )
    );
}

#[test]
fn ipv4_header_checksum() {
    let mut f = hex(KERNEL_VXLAN4);
    f[22] = 63; // TTL changed, checksum not
    assert_eq!(
        err(&f),
        de(
            24,
            "ip.checksum",
            K::Checksum {
                computed: 0x7bf0,
                found: 0x7af0
            }
        )
    );
}

#[test]
fn ipv4_options_are_carried() {
    // IHL 6: one 4-octet option (NOP NOP NOP EOL).
    let f = hex(KERNEL_VXLAN4);
    let t = parse(&f).expect("valid");
    let Encap::Vxlan {
        ip: IpHeader::V4(mut ip),
        udp,
        vxlan,
    } = t.encap
    else {
        panic!()
    };
    let opt = [1, 1, 1, 0];
    ip.options = &opt;
    let with_opts = TunnelFrame {
        encap: Encap::Vxlan {
            ip: IpHeader::V4(ip),
            udp,
            vxlan,
        },
        ..t
    };
    let bytes = reemit(&with_opts);
    assert_eq!(bytes[14], 0x46);
    assert_eq!(bytes.len(), f.len() + 4);
    let again = parse(&bytes).expect("valid with options");
    assert_eq!(again.inner, t.inner);
    let Encap::Vxlan {
        ip: IpHeader::V4(ip2),
        ..
    } = again.encap
    else {
        panic!()
    };
    assert_eq!(ip2.options, &opt[..]);
}

#[test]
fn ipv4_fragment_is_refused() {
    let f = hex(KERNEL_VXLAN4);
    let t = parse(&f).expect("valid");
    let Encap::Vxlan {
        ip: IpHeader::V4(mut ip),
        udp,
        vxlan,
    } = t.encap
    else {
        panic!()
    };
    ip.more_fragments = true;
    let frag = TunnelFrame {
        encap: Encap::Vxlan {
            ip: IpHeader::V4(ip),
            udp,
            vxlan,
        },
        ..t
    };
    assert_eq!(
        err(&reemit(&frag)),
        de(
            20,
            "ip.frag_offset",
            K::BadValue {
                value: 0x2000,
                reason: "a fragment: tunnel packets are not reassembled"
            }
        )
    );
}

#[test]
fn ipv4_not_udp() {
    let t = hex(KERNEL_VXLAN4);
    let mut f = t.clone();
    f[23] = 47; // GRE; fix the header checksum so the protocol is what fails
    let sum = lossless_wire::tunnel::checksum::Sum::new()
        .add_bytes(&f[14..24])
        .add_bytes(&f[26..34])
        .checksum();
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    assert_eq!(
        err(&f),
        de(
            23,
            "ip.proto",
            K::NotThisProtocol {
                reason: "protocol is not UDP (17)"
            }
        )
    );
}

#[test]
fn udp_length_too_short_and_too_long() {
    let mut f = hex(KERNEL_VXLAN6);
    f[58..60].copy_from_slice(&7u16.to_be_bytes());
    assert_eq!(
        err(&f),
        de(
            58,
            "udp.length",
            K::TooShort {
                length: 7,
                minimum: 8
            }
        )
    );
    f[58..60].copy_from_slice(&77u16.to_be_bytes());
    assert_eq!(
        err(&f),
        de(
            58,
            "udp.length",
            K::LengthBeyondContainer {
                length: 77,
                available: 76
            }
        )
    );
}

#[test]
fn udp_checksum_over_ipv6() {
    let mut f = hex(KERNEL_VXLAN6);
    f[60..62].copy_from_slice(&[0, 0]);
    assert_eq!(
        err(&f),
        de(
            60,
            "udp.checksum",
            K::BadValue {
                value: 0,
                reason: "zero UDP checksum over IPv6 (RFC 8200 8.1)"
            }
        )
    );
    let mut f = hex(KERNEL_VXLAN6);
    let last = f.len() - 1;
    f[last] = 1; // a payload bit flipped
    assert_eq!(
        err(&f),
        de(
            60,
            "udp.checksum",
            K::Checksum {
                computed: 0x511f,
                found: 0x5120
            }
        )
    );
}

#[test]
fn udp_checksum_over_ipv4_zero_means_none() {
    let mut f = hex(KERNEL_VXLAN4);
    f[40..42].copy_from_slice(&[0, 0]);
    let t = parse(&f).expect("zero: no checksum");
    let Encap::Vxlan { udp, .. } = t.encap else {
        panic!()
    };
    assert_eq!(udp.checksum, 0);
    // ... and stays zero on emit.
    assert_eq!(reemit(&t), f);
    let mut f = hex(KERNEL_VXLAN4);
    f[41] ^= 0xff;
    let e = err(&f);
    assert_eq!((e.offset, e.field), (40, "udp.checksum"));
    assert!(
        matches!(
            e.kind,
            K::Checksum {
                computed: 0x7834,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn vxlan_i_flag_clear() {
    let mut f = hex(KERNEL_VXLAN4);
    f[42] = 0x00;
    // Keep the UDP checksum right so the flag is what fails.
    f[40..42].copy_from_slice(&[0, 0]);
    assert_eq!(
        err(&f),
        de(
            42,
            "vxlan.flag_i",
            K::BadValue {
                value: 0,
                reason: "I flag clear: no valid VNI (RFC 7348 section 5)"
            }
        )
    );
}

/// Reserved bits mean nothing ("ignored on receipt") but are kept: the UDP
/// checksum covers them, so zeroing them on the way back out would break it.
/// (Found by the `tunnel` fuzz target.)
#[test]
fn vxlan_reserved_bits_are_ignored_and_kept() {
    for h in [KERNEL_VXLAN4, KERNEL_VXLAN6] {
        let mut f = hex(h);
        let (ip_len, checksum_at) = if h == KERNEL_VXLAN4 {
            (20, 40)
        } else {
            (40, 60)
        };
        let vx = 14 + ip_len + 8;
        f[vx + 1..vx + 4].copy_from_slice(&[0xff, 0xff, 0xff]);
        f[vx + 7] = 0xa5;
        // Over IPv4 without a checksum, nothing else to fix.
        let mut g = f.clone();
        g[checksum_at..checksum_at + 2].copy_from_slice(&[0, 0]);
        let no_checksum = parse(&g).map(|t| reemit(&t));
        // A sender that set them would have checksummed them.
        let udp = &mut f[14 + ip_len..];
        udp[6] = 0;
        udp[7] = 0;
        let c = if h == KERNEL_VXLAN4 {
            lossless_wire::tunnel::udp::checksum_v4(
                &Ipv4Addr::new(10, 0, 1, 14),
                &Ipv4Addr::new(10, 0, 1, 11),
                udp,
            )
        } else {
            lossless_wire::tunnel::udp::checksum_v6(&v6("fc00:1::e"), &v6("fc00:1::b"), udp)
        };
        udp[6..8].copy_from_slice(&c.to_be_bytes());
        if h == KERNEL_VXLAN4 {
            assert_eq!(no_checksum, Ok(g.clone()), "IPv4 without a checksum");
        } else {
            assert!(no_checksum.is_err(), "IPv6 needs its checksum");
        }
        let t = parse(&f).expect("reserved bits ignored");
        let Encap::Vxlan { vxlan, .. } = t.encap else {
            panic!()
        };
        assert_eq!(vxlan.vni.get(), if h == KERNEL_VXLAN4 { 77 } else { 4242 });
        assert_eq!((vxlan.reserved, vxlan.reserved_low), ([0xff; 3], 0xa5));
        assert_eq!(reemit(&t), f, "byte for byte, checksum included");
    }
}

#[test]
fn mpls_without_bottom_of_stack() {
    // Two entries, neither with S, then the data runs out.
    let f = hex("020000000b01 020000000e01 8847 03e82e40 03e82e40");
    assert_eq!(
        err(&f),
        de(
            22,
            "mpls.label",
            K::Truncated {
                needed: 4,
                available: 0
            }
        )
    );
}

#[test]
fn mpls_control_word_nibble() {
    let mut f = hex(MPLS_CW);
    f[22] = 0x40; // "IPv4" where the control word should be
    assert_eq!(
        err(&f),
        de(
            22,
            "pwethcw",
            K::BadValue {
                value: 4,
                reason: "first nibble of an Ethernet PW control word must be 0 (RFC 4448 4.6)"
            }
        )
    );
}

#[test]
fn control_word_keeps_reserved_bits_and_sequence() {
    let bytes = hex("0abc 1234 ff");
    let (cw, rest) = ControlWord::parse(&bytes).expect("valid");
    assert_eq!(
        cw,
        ControlWord {
            reserved: 0xabc,
            sequence: 0x1234
        }
    );
    assert_eq!(rest, [0xff]);
    let mut out = [0u8; 4];
    cw.emit(&mut out);
    assert_eq!(out, [0x0a, 0xbc, 0x12, 0x34]);
}

// ---- every truncated length ----------------------------------------------------------

/// Every prefix of an IP-carried tunnel frame is refused: IPv4 Total Length,
/// IPv6 Payload Length and UDP Length all say how much must be there.
#[test]
fn every_truncated_ip_tunnel_frame_is_refused() {
    for h in [
        KERNEL_VXLAN6,
        KERNEL_VXLAN4,
        KERNEL_L2ENCAP,
        SRV6_TWO_SEGMENTS,
    ] {
        let f = hex(h);
        assert!(parse(&f).is_ok());
        for n in 0..f.len() {
            let e = parse(&f[..n]).expect_err("a prefix must not parse");
            assert!(e.offset <= n, "prefix {n}: offset beyond it: {e}");
            assert!(
                matches!(
                    e.kind,
                    K::Truncated { .. } | K::LengthBeyondContainer { .. }
                ),
                "prefix {n} of {h}: {e}"
            );
        }
    }
}

/// The exact error for a cut at every field boundary of the SRv6 frame, and
/// the `available` count inside the length errors.
#[test]
fn truncated_srv6_names_the_missing_field() {
    let f = hex(SRV6_TWO_SEGMENTS);
    let cases: &[(usize, usize, &str)] = &[
        (0, 0, "eth.dst"),
        (6, 6, "eth.src"),
        (12, 12, "eth.ethertype"),
        (14, 14, "ipv6.version"),
        (18, 18, "ipv6.plen"),
        (20, 20, "ipv6.nxt"),
        (21, 21, "ipv6.hlim"),
        (22, 22, "ipv6.src"),
        (38, 38, "ipv6.dst"),
    ];
    for &(cut, offset, field) in cases {
        let e = err(&f[..cut]);
        assert_eq!((e.offset, e.field), (offset, field), "cut at {cut}: {e}");
    }
    for cut in 54..f.len() {
        assert_eq!(
            err(&f[..cut]),
            de(
                18,
                "ipv6.plen",
                K::LengthBeyondContainer {
                    length: 100,
                    available: cut - 54
                }
            )
        );
    }
}

/// The SRH parser alone, cut at every length.
#[test]
fn every_truncated_srh_is_refused() {
    let f = hex(SRV6_TWO_SEGMENTS);
    let srh = &f[54..94];
    assert!(Srh::parse(srh).is_ok());
    let fields = [
        "ipv6.routing.nxt",
        "ipv6.routing.len",
        "ipv6.routing.type",
        "ipv6.routing.segleft",
        "ipv6.routing.srh.last_entry",
        "ipv6.routing.srh.flags",
        "ipv6.routing.srh.tag",
        "ipv6.routing.srh.tag",
    ];
    for (n, field) in fields.iter().enumerate() {
        let e = Srh::parse(&srh[..n]).expect_err("cut");
        let at = if n == 7 { 6 } else { n };
        assert_eq!((e.offset, e.field), (at, *field), "cut at {n}: {e}");
    }
    for n in 8..srh.len() {
        assert_eq!(
            Srh::parse(&srh[..n]).expect_err("cut"),
            de(
                1,
                "ipv6.routing.len",
                K::LengthBeyondContainer {
                    length: 32,
                    available: n - 8
                }
            )
        );
    }
}

/// An MPLS frame carries no length: a prefix that keeps the label stack and
/// the control word parses, with a shorter inner frame (the relay's PFC
/// check refuses that); any shorter prefix is refused.
#[test]
fn truncated_mpls_frame() {
    let f = hex(MPLS_CW);
    for n in 0..26 {
        let e = err(&f[..n]);
        assert!(matches!(e.kind, K::Truncated { .. }), "prefix {n}: {e}");
    }
    for (n, field) in [(14, "mpls.label"), (18, "mpls.label"), (22, "pwethcw")] {
        assert_eq!(err(&f[..n]).field, field);
        assert_eq!(err(&f[..n]).offset, n);
    }
    for n in 26..f.len() {
        assert_eq!(parse(&f[..n]).expect("header complete").inner.len(), n - 26);
    }
}

#[test]
fn every_truncated_building_block_is_refused() {
    let v4 = hex(KERNEL_VXLAN4);
    let ip = &v4[14..];
    for n in 0..20 {
        assert!(
            matches!(
                Ipv4Header::parse(&ip[..n]).expect_err("cut").kind,
                K::Truncated { .. }
            ),
            "IPv4 prefix {n}"
        );
    }
    let v6 = hex(KERNEL_VXLAN6);
    for n in 0..40 {
        assert!(
            matches!(
                Ipv6Header::parse(&v6[14..14 + n]).expect_err("cut").kind,
                K::Truncated { .. }
            ),
            "IPv6 prefix {n}"
        );
    }
    let udp = &v6[54..];
    for n in 0..8 {
        assert!(matches!(
            UdpHeader::parse(&udp[..n]).expect_err("cut").kind,
            K::Truncated { .. }
        ));
    }
    let vxlan = &v6[62..70];
    for n in 0..8 {
        let e = VxlanHeader::parse(&vxlan[..n]).expect_err("cut");
        assert!(matches!(e.kind, K::Truncated { .. }), "{e}");
    }
    for n in 0..4 {
        assert!(ControlWord::parse(&[0u8; 4][..n]).is_err());
        assert!(LabelStack::parse(&hex("00064f40")[..n]).is_err());
    }
}

#[test]
fn gateway_mac_is_inner_source() {
    // The inner frame of every golden PFC tunnel frame is the gateway's.
    for h in [KERNEL_VXLAN6, KERNEL_VXLAN4, SRV6_TWO_SEGMENTS, MPLS_CW] {
        let f = hex(h);
        let t = parse(&f).expect("valid");
        let (inner, _) = EthernetHeader::parse(t.inner).expect("inner");
        assert_eq!(inner.src, GW);
        assert_eq!(inner.dst, MacAddr::MAC_CONTROL);
    }
}

#[test]
fn udp_length_short_of_the_ip_payload() {
    let mut f = hex(KERNEL_VXLAN4);
    f[38..40].copy_from_slice(&75u16.to_be_bytes());
    f[40..42].copy_from_slice(&[0, 0]);
    assert_eq!(
        err(&f),
        de(
            38,
            "udp.length",
            K::BadLength {
                length: 75,
                expected: 76
            }
        )
    );
}

//! Property tests for the tunnel headers: any frame built from valid values
//! emits, parses back to the same values (the derived fields filled in), and
//! re-emits to the same bytes; no input, however mangled, makes a parser
//! panic, and whatever parses re-emits to bytes that parse the same.

mod tunnel_vectors;

use std::net::{Ipv4Addr, Ipv6Addr};

use lossless_wire::tunnel::ip::IpProtocol;
use lossless_wire::tunnel::{
    ControlWord, Encap, IpHeader, Ipv4Header, Ipv6Header, LabelEntry, LabelStack, ParseOptions,
    SegmentList, Srh, TunnelFrame, UdpHeader, Vni, VxlanHeader,
};
use lossless_wire::{EthernetHeader, MacAddr, VlanTag};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use tunnel_vectors::*;

#[derive(Debug, Clone)]
struct OwnedSrh {
    segments: Vec<u8>,
    segments_left: u8,
    flags: u8,
    tag: u16,
    tlvs: Vec<u8>,
}

#[derive(Debug, Clone)]
enum OwnedEncap {
    Srv6 {
        ipv6: Ipv6Header,
        srh: Option<OwnedSrh>,
    },
    Vxlan4 {
        ip: (Ipv4Header<'static>, Vec<u8>),
        udp: UdpHeader,
        vxlan: VxlanHeader,
    },
    Vxlan6 {
        ip: Ipv6Header,
        udp: UdpHeader,
        vxlan: VxlanHeader,
    },
    Mpls {
        labels: Vec<u8>,
        cw: Option<ControlWord>,
    },
}

#[derive(Debug, Clone)]
struct Owned {
    outer: EthernetHeader,
    encap: OwnedEncap,
    inner: Vec<u8>,
}

fn mac() -> impl Strategy<Value = MacAddr> {
    any::<[u8; 6]>().prop_map(MacAddr)
}

fn outer() -> impl Strategy<Value = EthernetHeader> {
    let vlan = option::of(
        (0u8..8, any::<bool>(), 0u16..4096).prop_map(|(pcp, dei, vid)| VlanTag { pcp, dei, vid }),
    );
    (mac(), mac(), vlan).prop_map(|(dst, src, vlan)| EthernetHeader {
        dst,
        src,
        vlan,
        ethertype: 0,
    })
}

fn ipv6() -> impl Strategy<Value = Ipv6Header> {
    (
        any::<u8>(),
        0u32..=0xf_ffff,
        any::<u8>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
    )
        .prop_map(
            |(traffic_class, flow_label, hop_limit, src, dst)| Ipv6Header {
                traffic_class,
                flow_label,
                payload_len: 0,
                next_header: IpProtocol(0),
                hop_limit,
                src: Ipv6Addr::from(src),
                dst: Ipv6Addr::from(dst),
            },
        )
}

fn srh() -> impl Strategy<Value = OwnedSrh> {
    (1usize..=6, 0usize..=3)
        .prop_flat_map(|(n, tlv_units)| {
            (
                vec(any::<u8>(), n * 16),
                0..=n as u8,
                any::<u8>(),
                any::<u16>(),
                vec(any::<u8>(), tlv_units * 8),
            )
        })
        .prop_map(|(segments, segments_left, flags, tag, tlvs)| OwnedSrh {
            segments,
            segments_left,
            flags,
            tag,
            tlvs,
        })
}

fn udp(port: u16) -> impl Strategy<Value = UdpHeader> {
    (any::<u16>(), any::<bool>()).prop_map(move |(src_port, with_checksum)| UdpHeader {
        src_port,
        dst_port: port,
        length: 0,
        // Over IPv4, nonzero asks for a checksum; over IPv6 it is always there.
        checksum: u16::from(with_checksum),
    })
}

fn vxlan() -> impl Strategy<Value = VxlanHeader> {
    (any::<u8>(), any::<[u8; 3]>(), 0u32..=Vni::MAX, any::<u8>()).prop_map(
        |(flags, reserved, vni, reserved_low)| VxlanHeader {
            flags: flags | 0x08,
            reserved,
            vni: Vni::new(vni).expect("in range"),
            reserved_low,
        },
    )
}

fn ipv4() -> impl Strategy<Value = (Ipv4Header<'static>, Vec<u8>)> {
    (
        any::<u8>(),
        any::<u16>(),
        any::<bool>(),
        any::<u8>(),
        any::<[u8; 4]>(),
        any::<[u8; 4]>(),
        (0usize..=10).prop_flat_map(|words| vec(any::<u8>(), words * 4)),
    )
        .prop_map(|(tos, ident, dont_fragment, ttl, src, dst, options)| {
            (
                Ipv4Header {
                    tos,
                    total_len: 0,
                    ident,
                    dont_fragment,
                    more_fragments: false,
                    fragment_offset: 0,
                    ttl,
                    protocol: IpProtocol(0),
                    src: Ipv4Addr::from(src),
                    dst: Ipv4Addr::from(dst),
                    options: &[],
                },
                options,
            )
        })
}

fn labels() -> impl Strategy<Value = Vec<u8>> {
    vec((0u32..=0xf_ffff, 0u8..8, any::<u8>()), 1..=8).prop_map(|entries| {
        let n = entries.len();
        entries
            .into_iter()
            .enumerate()
            .flat_map(|(i, (label, tc, ttl))| {
                LabelEntry {
                    label,
                    tc,
                    bos: i + 1 == n,
                    ttl,
                }
                .to_bytes()
            })
            .collect()
    })
}

fn encap(port: u16) -> impl Strategy<Value = OwnedEncap> {
    prop_oneof![
        (ipv6(), option::of(srh())).prop_map(|(ipv6, srh)| OwnedEncap::Srv6 { ipv6, srh }),
        (ipv4(), udp(port), vxlan()).prop_map(|(ip, udp, vxlan)| OwnedEncap::Vxlan4 {
            ip,
            udp,
            vxlan
        }),
        (ipv6(), udp(port), vxlan()).prop_map(|(ip, udp, vxlan)| OwnedEncap::Vxlan6 {
            ip,
            udp,
            vxlan
        }),
        (
            labels(),
            option::of(
                (0u16..0x1000, any::<u16>())
                    .prop_map(|(reserved, sequence)| { ControlWord { reserved, sequence } })
            )
        )
            .prop_map(|(labels, cw)| OwnedEncap::Mpls { labels, cw }),
    ]
}

fn owned() -> impl Strategy<Value = (Owned, u16)> {
    prop_oneof![Just(4789u16), Just(8472u16), any::<u16>()].prop_flat_map(|port| {
        (outer(), encap(port), vec(any::<u8>(), 0..=200)).prop_map(move |(outer, encap, inner)| {
            (
                Owned {
                    outer,
                    encap,
                    inner,
                },
                port,
            )
        })
    })
}

fn borrow(o: &Owned) -> TunnelFrame<'_> {
    let encap = match &o.encap {
        OwnedEncap::Srv6 { ipv6, srh } => Encap::Srv6 {
            ipv6: *ipv6,
            srh: srh.as_ref().map(|s| Srh {
                next_header: IpProtocol(0),
                segments_left: s.segments_left,
                flags: s.flags,
                tag: s.tag,
                segments: SegmentList::from_bytes(&s.segments).expect("segments"),
                tlvs: &s.tlvs,
            }),
        },
        OwnedEncap::Vxlan4 {
            ip: (ip, options),
            udp,
            vxlan,
        } => Encap::Vxlan {
            ip: IpHeader::V4(Ipv4Header { options, ..*ip }),
            udp: *udp,
            vxlan: *vxlan,
        },
        OwnedEncap::Vxlan6 { ip, udp, vxlan } => Encap::Vxlan {
            ip: IpHeader::V6(*ip),
            udp: *udp,
            vxlan: *vxlan,
        },
        OwnedEncap::Mpls { labels, cw } => Encap::Mpls {
            labels: LabelStack::from_bytes(labels).expect("labels"),
            control_word: *cw,
        },
    };
    TunnelFrame {
        outer: o.outer,
        encap,
        inner: &o.inner,
    }
}

/// `t` with the fields `emit` derives set to what it wrote into `bytes`.
fn derived<'a>(t: &TunnelFrame<'a>, bytes: &[u8]) -> TunnelFrame<'a> {
    let inner = t.inner.len();
    let h = t.outer.buffer_len();
    let outer = EthernetHeader {
        ethertype: t.encap.ethertype(),
        ..t.outer
    };
    let encap = match t.encap {
        Encap::Srv6 { ipv6, srh } => Encap::Srv6 {
            ipv6: Ipv6Header {
                payload_len: (srh.map_or(0, |s| s.buffer_len()) + inner) as u16,
                next_header: if srh.is_some() {
                    IpProtocol::ROUTING
                } else {
                    IpProtocol::ETHERNET
                },
                ..ipv6
            },
            srh: srh.map(|s| Srh {
                next_header: IpProtocol::ETHERNET,
                ..s
            }),
        },
        Encap::Vxlan { ip, udp, vxlan } => {
            let udp_len = 16 + inner;
            let at = h + ip.buffer_len() + 6;
            let checksum = u16::from_be_bytes([bytes[at], bytes[at + 1]]);
            let ip = match ip {
                IpHeader::V4(v4) => IpHeader::V4(Ipv4Header {
                    total_len: (v4.buffer_len() + udp_len) as u16,
                    protocol: IpProtocol::UDP,
                    ..v4
                }),
                IpHeader::V6(v6) => IpHeader::V6(Ipv6Header {
                    payload_len: udp_len as u16,
                    next_header: IpProtocol::UDP,
                    ..v6
                }),
            };
            Encap::Vxlan {
                ip,
                udp: UdpHeader {
                    length: udp_len as u16,
                    checksum,
                    ..udp
                },
                vxlan,
            }
        }
        mpls @ Encap::Mpls { .. } => mpls,
    };
    TunnelFrame {
        outer,
        encap,
        inner: t.inner,
    }
}

fn opts_for(t: &TunnelFrame, port: u16) -> ParseOptions {
    ParseOptions {
        vxlan_port: port,
        control_word: matches!(
            t.encap,
            Encap::Mpls {
                control_word: Some(_),
                ..
            }
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn built_frames_round_trip((o, port) in owned()) {
        let t = borrow(&o);
        let bytes = emit(&t);
        prop_assert_eq!(bytes.len(), t.buffer_len());
        let opts = opts_for(&t, port);
        let parsed = TunnelFrame::parse(&bytes, &opts).expect("an emitted frame parses");
        prop_assert_eq!(parsed, derived(&t, &bytes));
        prop_assert_eq!(emit(&parsed), bytes);
    }

    #[test]
    fn udp_checksums_verify_over_ipv6((o, port) in owned()) {
        let t = borrow(&o);
        let bytes = emit(&t);
        if let Encap::Vxlan { ip: IpHeader::V6(v6), .. } = t.encap {
            let h = t.outer.buffer_len() + 40;
            let sum = lossless_wire::tunnel::checksum::pseudo_header_v6(
                &v6.src, &v6.dst, (bytes.len() - h) as u32, IpProtocol::UDP,
            )
            .add_bytes(&bytes[h..]);
            prop_assert!(sum.verifies());
            prop_assert_ne!(u16::from_be_bytes([bytes[h + 6], bytes[h + 7]]), 0);
        }
        let opts = opts_for(&t, port);
        prop_assert!(TunnelFrame::parse(&bytes, &opts).is_ok());
    }

    /// Any single corrupted byte of an emitted frame: no panic, and what still
    /// parses re-emits to bytes that parse to the same value.
    #[test]
    fn corrupted_frames_never_panic((o, port) in owned(), at in any::<prop::sample::Index>(), b in any::<u8>()) {
        let t = borrow(&o);
        let mut bytes = emit(&t);
        let i = at.index(bytes.len());
        bytes[i] = b;
        let opts = opts_for(&t, port);
        if let Ok(p) = TunnelFrame::parse(&bytes, &opts) {
            let again = emit(&p);
            prop_assert_eq!(TunnelFrame::parse(&again, &opts), Ok(p));
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..300), cw in any::<bool>()) {
        let opts = ParseOptions { control_word: cw, ..ParseOptions::default() };
        if let Ok(p) = TunnelFrame::parse(&bytes, &opts) {
            let again = emit(&p);
            prop_assert_eq!(TunnelFrame::parse(&again, &opts), Ok(p));
        }
    }

    #[test]
    fn mutated_golden_frames_never_panic(
        which in 0usize..5,
        edits in vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let h = [KERNEL_VXLAN6, KERNEL_VXLAN4, KERNEL_L2ENCAP, SRV6_TWO_SEGMENTS, MPLS_CW][which];
        let mut bytes = hex(h);
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let opts = ParseOptions::default();
        if let Ok(p) = TunnelFrame::parse(&bytes, &opts) {
            let again = emit(&p);
            prop_assert_eq!(TunnelFrame::parse(&again, &opts), Ok(p));
        }
    }
}

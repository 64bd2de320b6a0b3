//! Tunnel headers, one test per way a tunnel frame can be malformed: the
//! error names the kind, the field and the offset from the outer destination
//! MAC. Golden frames are in `tunnel_golden.rs`, truncations in
//! `tunnel_truncated.rs`.

mod tunnel_vectors;

use std::net::Ipv4Addr;

use lossless_wire::tunnel::{ControlWord, Encap, IpHeader, Srh, TunnelFrame};
use lossless_wire::DecodeErrorKind as K;
use tunnel_vectors::*;

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
    assert_eq!(emit(&t), hex(SRV6_TWO_SEGMENTS));
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
    let bytes = emit(&with_opts);
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
        err(&emit(&frag)),
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
    assert_eq!(emit(&t), f);
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
        let no_checksum = parse(&g).map(|t| emit(&t));
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
        assert_eq!(emit(&t), f, "byte for byte, checksum included");
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

//! Tunnel headers cut at every length: each prefix of a golden frame, and of
//! each building block, is refused with the field that is missing (an MPLS
//! frame, which carries no length, parses once its header is complete).
//! Golden frames are in `tunnel_golden.rs`, malformations in
//! `tunnel_malformed.rs`.

mod tunnel_vectors;

use lossless_wire::tunnel::{
    ControlWord, Ipv4Header, Ipv6Header, LabelStack, Srh, UdpHeader, VxlanHeader,
};
use lossless_wire::{DecodeErrorKind as K, EthernetHeader, MacAddr};
use tunnel_vectors::*;

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

//! The relay's rules, one test each: every illegal-frame reason in both
//! directions, the encapsulation and marking of each tunnel, the SMAC rewrite
//! with the class vector and pause times intact, and the DC gateway's check.

mod common;

use common::*;
use lossless_relay::{
    DropReason, GatewayCheck, GatewayConfig, Marking, Port, Relay, TunnelConfig, Verdict,
};
use lossless_wire::tunnel::ip::IpProtocol;
use lossless_wire::tunnel::{Encap, IpHeader, ParseOptions, TunnelFrame};
use lossless_wire::MacAddr;

fn egress_verdict(frame: &[u8]) -> Verdict {
    let mut pe = relay(pe2(Kind::Srv6));
    pe.handle_frame(t(0), Port::Dc, frame)
}

/// One frame per egress rule, each failing exactly that rule; each counted
/// under its reason and nothing sent.
#[test]
fn every_illegal_egress_frame_is_dropped_and_counted_by_reason() {
    let good = pfc_3_4();
    let mut short = good.clone();
    short.truncate(59);
    let mut long = good.clone();
    long.push(0);
    let mut not_mac_control = good.clone();
    not_mac_control[12..14].copy_from_slice(&0x88ccu16.to_be_bytes());
    let pause = {
        let mut f = Vec::new();
        lossless_wire::emit_mac_control_frame(
            DC2_GW,
            MacAddr::MAC_CONTROL,
            None,
            &lossless_wire::MacControl::Pause { quanta: 0xffff },
            &mut f,
        );
        f
    };
    let mut high_byte = good.clone();
    high_byte[16] = 0x01;
    let empty = pfc_from(DC2_GW, 0, [0; 8]);
    let mut bad_dmac = good.clone();
    bad_dmac[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0x0e]);
    let bad_smac = pfc_from(STRANGER, 0x18, [0, 0, 0, 1, 1, 0, 0, 0]);
    let cases: [(&str, Vec<u8>, DropReason); 10] = [
        (
            "14-byte header only",
            good[..14].to_vec(),
            DropReason::ShortFrame,
        ),
        ("59 bytes", short, DropReason::ShortFrame),
        ("61 bytes", long, DropReason::LongFrame),
        ("LLDP Ethertype", not_mac_control, DropReason::NotMacControl),
        ("802.3x PAUSE", pause, DropReason::NotPfc),
        ("vector 0x0118", high_byte, DropReason::ClassVectorReserved),
        ("vector 0", empty, DropReason::EmptyClassVector),
        ("LLDP multicast DMAC", bad_dmac, DropReason::BadDmac),
        ("unknown SMAC", bad_smac, DropReason::BadSmac),
        ("empty", Vec::new(), DropReason::ShortFrame),
    ];
    let mut pe = relay(pe2(Kind::Srv6));
    for (what, frame, reason) in &cases {
        assert_eq!(
            pe.handle_frame(t(0), Port::Dc, frame),
            Verdict::Dropped(*reason),
            "{what}"
        );
        assert!(pe.poll_transmit().is_none(), "{what}: nothing sent");
    }
    let c = pe.egress_counters();
    assert_eq!(c.received, cases.len() as u64);
    assert_eq!(c.relayed, 0);
    assert_eq!(c.dropped.total(), cases.len() as u64);
    for reason in DropReason::ALL {
        let expected = cases.iter().filter(|c| c.2 == reason).count() as u64;
        assert_eq!(c.dropped.get(reason), expected, "{reason}");
    }
}

#[test]
fn gateway_port_and_system_mac_are_both_accepted() {
    assert_eq!(egress_verdict(&pfc_3_4()), Verdict::Relayed { held: 0 });
    let from_system = pfc_from(DC2_GW_SYSTEM, 0x01, [7, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(egress_verdict(&from_system), Verdict::Relayed { held: 0 });
    // Without a configured system MAC, that one is a stranger.
    let mut cfg = pe2(Kind::Srv6);
    cfg.dc.gateway_system_mac = None;
    let mut pe = relay(cfg);
    assert_eq!(
        pe.handle_frame(t(0), Port::Dc, &from_system),
        Verdict::Dropped(DropReason::BadSmac)
    );
    // Our own MAC is not the gateway's either.
    assert_eq!(
        egress_verdict(&pfc_from(PE2_DC, 1, [1, 0, 0, 0, 0, 0, 0, 0])),
        Verdict::Dropped(DropReason::BadSmac)
    );
}

#[test]
fn a_priority_tagged_pfc_frame_is_legal_at_64_bytes() {
    let tagged = pfc_tagged(DC2_GW, 0x08, [0, 0, 0, 99, 0, 0, 0, 0]);
    assert_eq!(tagged.len(), 64);
    assert_eq!(egress_verdict(&tagged), Verdict::Relayed { held: 0 });
    assert_eq!(
        egress_verdict(&tagged[..63]),
        Verdict::Dropped(DropReason::ShortFrame)
    );
    // An untagged frame of 64 bytes (a kept FCS, say) is not.
    let mut long = pfc_3_4();
    long.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(
        egress_verdict(&long),
        Verdict::Dropped(DropReason::LongFrame)
    );
}

/// Egress over each tunnel: the bytes as tshark and the kernel expect them,
/// marked with the highest priority, the inner frame as received.
#[test]
fn egress_encapsulates_and_marks_for_each_tunnel() {
    let frame = pfc_3_4();
    for kind in KINDS {
        let mut pe = relay(pe2(kind));
        assert_eq!(
            pe.handle_frame(t(0), Port::Dc, &frame),
            Verdict::Relayed { held: 0 },
            "{kind:?}"
        );
        let out = drain(&mut pe);
        assert_eq!(out.len(), 1);
        let (port, prio, ip_offset, bytes) = &out[0];
        assert_eq!((*port, *prio), (Port::Wan, 7), "{kind:?}");
        let opts = ParseOptions::default();
        let tf = TunnelFrame::parse(bytes, &opts).expect("our own tunnel frame parses");
        assert_eq!(tf.inner, &frame[..], "{kind:?}: inner frame as received");
        assert_eq!(tf.outer.src, PE2_WAN);
        assert_eq!(tf.outer.dst, PE1_WAN);
        assert_eq!(tf.outer.vlan, None);
        assert_eq!(*ip_offset, tf.ip_offset());
        match (kind, tf.encap) {
            (
                Kind::Srv6,
                Encap::Srv6 {
                    ipv6,
                    srh: Some(srh),
                },
            ) => {
                assert_eq!(ipv6.traffic_class, 48 << 2, "DSCP CS6");
                assert_eq!(ipv6.dst, v6("fc00::e1:d2"));
                assert_eq!(ipv6.src, v6("fc00::e2"));
                assert_eq!(ipv6.hop_limit, 64);
                assert_eq!(srh.next_header, IpProtocol::ETHERNET);
                assert_eq!(srh.segments_left, 0);
                assert_eq!(srh.segments.iter().collect::<Vec<_>>(), [v6("fc00::e1:d2")]);
            }
            (Kind::Srv6Reduced, Encap::Srv6 { ipv6, srh: None }) => {
                assert_eq!(ipv6.next_header, IpProtocol::ETHERNET);
                assert_eq!(ipv6.dst, v6("fc00::e1:d2"));
            }
            (
                Kind::Vxlan4,
                Encap::Vxlan {
                    ip: IpHeader::V4(h),
                    udp,
                    vxlan,
                },
            ) => {
                assert_eq!(h.tos, 48 << 2);
                assert!(h.dont_fragment);
                assert_eq!(
                    (h.src, h.dst),
                    (
                        "10.0.0.2".parse().expect("v4"),
                        "10.0.0.1".parse().expect("v4")
                    )
                );
                assert_eq!((udp.src_port, udp.dst_port), (49152, 4789));
                assert_ne!(udp.checksum, 0, "checksummed over IPv4 too");
                assert_eq!(vxlan.vni.get(), 4242);
            }
            (
                Kind::Vxlan6,
                Encap::Vxlan {
                    ip: IpHeader::V6(h),
                    udp,
                    ..
                },
            ) => {
                assert_eq!(h.traffic_class, 48 << 2);
                assert_ne!(udp.checksum, 0);
            }
            (
                Kind::Mpls,
                Encap::Mpls {
                    labels,
                    control_word,
                },
            ) => {
                let entries: Vec<_> = labels.iter().collect();
                assert_eq!(entries.len(), 2);
                assert_eq!((entries[0].label, entries[1].label), (16001, 101));
                assert!(entries.iter().all(|e| e.tc == 7 && e.ttl == 64));
                assert!(entries[1].bos && !entries[0].bos);
                assert!(control_word.is_some());
            }
            (k, e) => panic!("{k:?} encapsulated as {e:?}"),
        }
    }
}

#[test]
fn a_tagged_wan_side_carries_pcp_7() {
    let mut cfg = pe2(Kind::Srv6);
    cfg.wan.vlan = Some(100);
    let mut pe = relay(cfg);
    pe.handle_frame(t(0), Port::Dc, &pfc_3_4());
    let out = drain(&mut pe);
    let tf = TunnelFrame::parse(&out[0].3, &ParseOptions::default()).expect("parses");
    let tag = tf.outer.vlan.expect("tagged");
    assert_eq!((tag.pcp, tag.vid), (7, 100));
    assert_eq!(out[0].2, Some(18));
}

#[test]
fn marking_is_configurable() {
    let mut cfg = pe2(Kind::Vxlan6);
    cfg.marking = Marking {
        dscp: 56,
        vlan_pcp: 6,
        mpls_tc: 5,
        socket_priority: 6,
    };
    cfg.wan.vlan = Some(0);
    let mut pe = relay(cfg);
    pe.handle_frame(t(0), Port::Dc, &pfc_3_4());
    let out = drain(&mut pe);
    assert_eq!(out[0].1, 6);
    let tf = TunnelFrame::parse(&out[0].3, &ParseOptions::default()).expect("parses");
    assert_eq!(tf.outer.vlan.map(|v| (v.pcp, v.vid)), Some((6, 0)));
    let Encap::Vxlan {
        ip: IpHeader::V6(h),
        ..
    } = tf.encap
    else {
        panic!()
    };
    assert_eq!(h.traffic_class, 56 << 2);

    let mut cfg = pe2(Kind::Mpls);
    cfg.marking.mpls_tc = 5;
    let mut pe = relay(cfg);
    pe.handle_frame(t(0), Port::Dc, &pfc_3_4());
    let out = drain(&mut pe);
    let tf = TunnelFrame::parse(&out[0].3, &ParseOptions::default()).expect("parses");
    let Encap::Mpls { labels, .. } = tf.encap else {
        panic!()
    };
    assert!(labels.iter().all(|e| e.tc == 5));
}

/// DC2 GW -> PE2 -> PE1 -> DC1 GW over each tunnel: the source MAC becomes
/// PE1's DC-facing MAC, everything else is the frame DC2 GW sent, and DC1
/// GW's check accepts it.
#[test]
fn end_to_end_rewrites_the_smac_and_keeps_vector_and_times() {
    for kind in KINDS {
        for frame in [
            pfc_3_4(),
            pfc_from(DC2_GW_SYSTEM, 0xff, [1, 2, 3, 4, 5, 6, 7, 0xffff]),
            pfc_from(DC2_GW, 0x80, [0; 8]),
            pfc_tagged(DC2_GW, 0x41, [9, 0, 0, 0, 0, 0, 8, 0]),
        ] {
            let mut pe2 = relay(pe2(kind));
            let mut pe1 = relay(pe1(kind));
            let mut dc1 = GatewayCheck::new(&GatewayConfig {
                interface: None,
                pe_port_mac: PE1_DC,
                pe_system_mac: None,
                buffer: None,
                datapath: lossless_relay::Datapath::default(),
            })
            .expect("gateway config");
            assert!(matches!(
                pe2.handle_frame(t(0), Port::Dc, &frame),
                Verdict::Relayed { .. }
            ));
            let wan = drain(&mut pe2);
            assert_eq!(
                pe1.handle_frame(t(1), Port::Wan, &wan[0].3),
                Verdict::Delivered,
                "{kind:?}"
            );
            let out = drain(&mut pe1);
            assert_eq!(out.len(), 1);
            let (port, prio, ip_offset, delivered) = &out[0];
            assert_eq!((*port, *prio, *ip_offset), (Port::Dc, 7, None));
            assert_eq!(&delivered[6..12], &PE1_DC.0, "{kind:?}: SMAC rewritten");
            assert_eq!(delivered[..6], frame[..6], "DMAC kept");
            assert_eq!(delivered[12..], frame[12..], "{kind:?}: the rest untouched");
            assert_eq!(pfc_content(delivered), pfc_content(&frame));
            let accepted = dc1.check(delivered).expect("DC1 GW accepts it");
            assert_eq!(accepted.src, PE1_DC);
            assert_eq!(pe1.ingress_counters().delivered, 1);
        }
    }
}

fn pe1_receives(kind: Kind, frame: &[u8]) -> Verdict {
    let mut pe = relay(pe1(kind));
    let v = pe.handle_frame(t(0), Port::Wan, frame);
    if v != Verdict::Delivered {
        assert!(pe.poll_transmit().is_none());
        assert_eq!(pe.ingress_counters().dropped.total(), 1);
    }
    v
}

/// What PE2 sends for `inner` (any bytes, legal or not).
fn wrapped(kind: Kind, inner: &[u8]) -> Vec<u8> {
    let enc = lossless_relay::tunnel::Encapsulator::new(
        &tunnel(kind, 2),
        &pe2(kind).wan,
        &Marking::default(),
    )
    .expect("encapsulator");
    let tf = enc.frame(inner);
    let mut out = vec![0u8; tf.buffer_len()];
    tf.emit(&mut out);
    out
}

#[test]
fn every_illegal_inner_frame_is_dropped_at_ingress() {
    let good = pfc_3_4();
    let mut short = good.clone();
    short.truncate(40);
    let mut long = good.clone();
    long.push(0);
    let mut lldp = good.clone();
    lldp[12..14].copy_from_slice(&0x88ccu16.to_be_bytes());
    let mut pause = good.clone();
    pause[14..16].copy_from_slice(&[0, 1]);
    let mut high = good.clone();
    high[16] = 0x80;
    let empty = pfc_from(DC2_GW, 0, [0; 8]);
    let mut dmac = good.clone();
    dmac[5] = 0x02;
    for kind in KINDS {
        for (inner, reason) in [
            (&short, DropReason::ShortFrame),
            (&long, DropReason::LongFrame),
            (&lldp, DropReason::NotMacControl),
            (&pause, DropReason::NotPfc),
            (&high, DropReason::ClassVectorReserved),
            (&empty, DropReason::EmptyClassVector),
            (&dmac, DropReason::BadDmac),
        ] {
            assert_eq!(
                pe1_receives(kind, &wrapped(kind, inner)),
                Verdict::Dropped(reason),
                "{kind:?}"
            );
        }
        // The inner source MAC is not checked at ingress: PE1 cannot know
        // DC2's MACs (PE2 checked them).
        let from_anyone = pfc_from(STRANGER, 1, [1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            pe1_receives(kind, &wrapped(kind, &from_anyone)),
            Verdict::Delivered
        );
    }
}

#[test]
fn ingress_refuses_tunnels_not_meant_for_it() {
    let inner = pfc_3_4();
    // Outer destination MAC: someone else's.
    for kind in KINDS {
        let mut f = wrapped(kind, &inner);
        f[..6].copy_from_slice(&STRANGER.0);
        assert_eq!(
            pe1_receives(kind, &f),
            Verdict::Dropped(DropReason::NotForUs)
        );
    }
    // SRv6 to another SID (PE2 built toward fc00::e1:d3).
    let mut other = pe2(Kind::Srv6);
    other.tunnel = TunnelConfig::Srv6 {
        source: v6("fc00::e2"),
        segments: vec![v6("fc00::e1:d3")],
        local_sid: v6("fc00::e2:d2"),
        reduced: false,
        hop_limit: 64,
        flow_label: 0,
    };
    let mut pe = relay(other);
    pe.handle_frame(t(0), Port::Dc, &inner);
    let f = drain(&mut pe).remove(0).3;
    assert_eq!(
        pe1_receives(Kind::Srv6, &f),
        Verdict::Dropped(DropReason::NotForUs)
    );
    // VXLAN with another VNI, or to another address.
    for (vni, dst) in [(4243, "10.0.0.1"), (4242, "10.0.0.9")] {
        let mut other = pe2(Kind::Vxlan4);
        other.tunnel = TunnelConfig::Vxlan {
            source: ip("10.0.0.2"),
            destination: ip(dst),
            vni,
            port: 4789,
            source_port: 49152,
            ttl: 64,
            ipv4_checksum: true,
        };
        let mut pe = relay(other);
        pe.handle_frame(t(0), Port::Dc, &inner);
        let f = drain(&mut pe).remove(0).3;
        assert_eq!(
            pe1_receives(Kind::Vxlan4, &f),
            Verdict::Dropped(DropReason::NotForUs),
            "vni {vni} to {dst}"
        );
    }
    // MPLS: another PW label at the bottom, or an unknown label above ours.
    for labels in [
        vec![102],
        vec![16001, 102],
        vec![16009, 101],
        vec![101, 101],
    ] {
        let mut other = pe2(Kind::Mpls);
        other.tunnel = TunnelConfig::SrMpls {
            labels: labels.clone(),
            local_label: 102,
            pop_labels: vec![],
            control_word: true,
            ttl: 64,
        };
        let mut pe = relay(other);
        pe.handle_frame(t(0), Port::Dc, &inner);
        let f = drain(&mut pe).remove(0).3;
        assert_eq!(
            pe1_receives(Kind::Mpls, &f),
            Verdict::Dropped(DropReason::NotForUs),
            "{labels:?}"
        );
    }
    // Our node SID on top is popped only when configured as ours; explicit
    // null (0, 2) always.
    let f = wrapped(Kind::Mpls, &inner);
    let mut cfg = pe1(Kind::Mpls);
    if let TunnelConfig::SrMpls { pop_labels, .. } = &mut cfg.tunnel {
        pop_labels.clear();
    }
    assert_eq!(
        relay(cfg.clone()).handle_frame(t(0), Port::Wan, &f),
        Verdict::Dropped(DropReason::NotForUs)
    );
    for null in [0u8, 2] {
        let mut g = f.clone();
        // Label 16001 -> 0 or 2: the top 20 bits of the first entry.
        g[14] = 0;
        g[15] = 0;
        g[16] = (null << 4) | (g[16] & 0x0f);
        assert_eq!(
            relay(cfg.clone()).handle_frame(t(0), Port::Wan, &g),
            Verdict::Delivered,
            "explicit null {null}"
        );
    }
    // Another kind of tunnel than configured.
    let f = wrapped(Kind::Vxlan6, &inner);
    assert_eq!(
        pe1_receives(Kind::Srv6, &f),
        Verdict::Dropped(DropReason::NotForUs)
    );
}

#[test]
fn ingress_refuses_an_srh_with_segments_left() {
    // PE2 routes through a transit SID first; delivered straight to PE1
    // without that hop, Segments Left is still 1.
    let mut via = pe2(Kind::Srv6);
    via.tunnel = TunnelConfig::Srv6 {
        source: v6("fc00::e2"),
        segments: vec![v6("fc00::e1:d2"), v6("fc00::e1:d2")],
        local_sid: v6("fc00::e2:d2"),
        reduced: false,
        hop_limit: 64,
        flow_label: 0,
    };
    let mut pe = relay(via);
    pe.handle_frame(t(0), Port::Dc, &pfc_3_4());
    let f = drain(&mut pe).remove(0).3;
    assert_eq!(
        pe1_receives(Kind::Srv6, &f),
        Verdict::Dropped(DropReason::SegmentsLeft)
    );
}

#[test]
fn ingress_counts_other_traffic_and_malformed_tunnels_apart() {
    let mut pe = relay(pe1(Kind::Srv6));
    // An ARP request on the WAN port: not a tunnel.
    let arp = {
        let mut f = vec![0xff; 6];
        f.extend_from_slice(&PE2_WAN.0);
        f.extend_from_slice(&[0x08, 0x06]);
        f.resize(60, 0);
        f
    };
    assert_eq!(
        pe.handle_frame(t(0), Port::Wan, &arp),
        Verdict::Dropped(DropReason::NotTunnel)
    );
    // Our tunnel, cut short inside the SRH.
    let f = wrapped(Kind::Srv6, &pfc_3_4());
    assert_eq!(
        pe.handle_frame(t(0), Port::Wan, &f[..70]),
        Verdict::Dropped(DropReason::MalformedTunnel)
    );
    let e = pe.last_malformed().expect("kept");
    assert_eq!((e.offset, e.field), (18, "ipv6.plen"));
    assert_eq!(
        pe.status().last_malformed.as_deref(),
        Some("ipv6.plen at offset 18: length 84 exceeds the 16 bytes left in the enclosing TLV")
    );
    let c = pe.ingress_counters();
    assert_eq!(c.dropped.get(DropReason::NotTunnel), 1);
    assert_eq!(c.dropped.get(DropReason::MalformedTunnel), 1);
    assert_eq!(c.received, 2);
    assert_eq!(c.delivered, 0);
}

#[test]
fn gateway_check_accepts_only_the_pe() {
    let mut gw = GatewayCheck::new(&GatewayConfig {
        interface: None,
        pe_port_mac: PE1_DC,
        pe_system_mac: Some(PE1_WAN),
        buffer: None,
        datapath: lossless_relay::Datapath::default(),
    })
    .expect("config");
    let from = |mac| pfc_from(mac, 0x08, [0, 0, 0, 5, 0, 0, 0, 0]);
    assert_eq!(gw.check(&from(PE1_DC)).map(|p| p.src), Ok(PE1_DC));
    assert_eq!(gw.check(&from(PE1_WAN)).map(|p| p.src), Ok(PE1_WAN));
    assert_eq!(gw.check(&from(STRANGER)), Err(DropReason::BadSmac));
    assert_eq!(gw.check(&from(DC2_GW)), Err(DropReason::BadSmac));
    let mut bad = from(PE1_DC);
    bad[0] = 0x03;
    assert_eq!(gw.check(&bad), Err(DropReason::BadDmac));
    assert_eq!(gw.check(&from(PE1_DC)[..50]), Err(DropReason::ShortFrame));
    let c = gw.counters();
    assert_eq!((c.received, c.accepted), (6, 2));
    assert_eq!(c.dropped.get(DropReason::BadSmac), 2);
    assert_eq!(c.dropped.get(DropReason::BadDmac), 1);
    assert_eq!(c.dropped.get(DropReason::ShortFrame), 1);
    assert!(GatewayCheck::new(&GatewayConfig {
        interface: None,
        pe_port_mac: MacAddr::MAC_CONTROL,
        pe_system_mac: None,
        buffer: None,
        datapath: lossless_relay::Datapath::default(),
    })
    .is_err());
}

#[test]
fn batch_processing_matches_one_at_a_time() {
    let frames: Vec<Vec<u8>> = (0..50)
        .map(|i| match i % 5 {
            0 => pfc_3_4(),
            1 => pfc_from(STRANGER, 1, [1, 0, 0, 0, 0, 0, 0, 0]),
            2 => pfc_one(i % 8, i as u16),
            3 => pfc_tagged(DC2_GW_SYSTEM, 0xff, [3; 8]),
            _ => pfc_from(DC2_GW, 0x100, [0; 8]),
        })
        .collect();
    for kind in KINDS {
        let mut one = relay(pe2(kind));
        let mut expected = Vec::new();
        for f in &frames {
            one.handle_frame(t(5), Port::Dc, f);
            expected.extend(drain(&mut one));
        }
        let mut batch = relay(pe2(kind));
        let mut out = lossless_relay::TxBatch::new();
        let n = batch.process(t(5), Port::Dc, frames.iter().map(Vec::as_slice), &mut out);
        assert_eq!(n, 30);
        let got: Vec<_> = out
            .iter()
            .map(|tx| (tx.port, tx.socket_priority, tx.ip_offset, tx.frame.to_vec()))
            .collect();
        assert_eq!(got, expected, "{kind:?}");
        assert_eq!(batch.egress_counters(), one.egress_counters());
    }
}

#[test]
fn status_describes_the_tunnel_and_serializes() {
    let pe = relay(pe2(Kind::Srv6));
    let s = pe.status();
    assert_eq!(s.tunnel, "srv6");
    assert_eq!(s.remote, "segments fc00::e1:d2");
    assert_eq!(s.local, "End.DX2 SID fc00::e2:d2");
    assert!(s.storm.is_none());
    let json = serde_json::to_value(&s).expect("json");
    assert_eq!(json["egress"]["dropped"]["bad_smac"], 0);
    let back: lossless_relay::RelayStatus = serde_json::from_value(json).expect("back");
    assert_eq!(back, s);
    let s = relay(pe2(Kind::Mpls)).status();
    assert_eq!(
        (s.remote.as_str(), s.local.as_str()),
        ("labels 16001,101", "label 102")
    );
    let s = relay(pe1(Kind::Vxlan6)).status();
    assert_eq!(s.remote, "VTEP fc00::2 port 4789");
    assert_eq!(s.local, "VTEP fc00::1 VNI 4242");
}

#[test]
fn reconfigure_keeps_counters() {
    let mut pe: Relay = relay(pe2(Kind::Srv6));
    pe.handle_frame(t(0), Port::Dc, &pfc_3_4());
    pe.handle_frame(t(0), Port::Dc, &pfc_from(STRANGER, 1, [1; 8]));
    pe.reconfigure(pe2(Kind::Vxlan4), t(1)).expect("valid");
    assert_eq!(pe.egress_counters().relayed, 1);
    assert_eq!(pe.egress_counters().dropped.get(DropReason::BadSmac), 1);
    assert_eq!(pe.status().tunnel, "vxlan");
    // The frame queued before is still there, then the new tunnel's.
    pe.handle_frame(t(1), Port::Dc, &pfc_3_4());
    let out = drain(&mut pe);
    assert_eq!(out.len(), 2);
    assert_eq!(u16::from_be_bytes([out[1].3[12], out[1].3[13]]), 0x0800);
    let mut bad = pe2(Kind::Srv6);
    bad.marking.dscp = 64;
    assert!(pe.reconfigure(bad, t(2)).is_err());
    assert_eq!(
        pe.status().tunnel,
        "vxlan",
        "a refused config changes nothing"
    );
}

//! The `wan-relay` scenario: draft-he-rtgwg-wan-pfc-00's two-DC path, DC2-GW - PE2 - P - PE1 -
//! DC1-GW, asserted from what the simulated nodes did (the run's results and
//! the bytes on each link), per tunnel kind.

use lossless_dcbx::Duration;
use lossless_lab::pcap::Capture;
use lossless_lab::scenario::{self, Options, RunError};
use lossless_lab::wan_relay::{run_one, RelayRun, WanRelayConfig, TUNNELS};
use lossless_lab::wan_relay::{transit, Cause, P_TOWARD_PE1, P_TOWARD_PE2};
use lossless_relay::example::{self, Kind, DC1_GW, DC2_GW, PE1_DC, PE1_WAN, PE2_WAN};
use lossless_relay::{DropReason, Instant, Port, Relay, StormConfig};
use lossless_wire::tunnel::{Encap, IpHeader, ParseOptions, TunnelFrame};
use lossless_wire::MacAddr;

fn run(cfg: &WanRelayConfig, kind: Kind) -> (RelayRun, Vec<Capture>) {
    run_one(cfg, kind).expect("valid configuration")
}

fn each_kind() -> impl Iterator<Item = Kind> {
    TUNNELS.iter().map(|t| t.kind)
}

/// Outer hop limit (IPv6), TTL (IPv4) or top label TTL (MPLS).
fn outer_ttl(t: &TunnelFrame) -> u8 {
    match &t.encap {
        Encap::Srv6 { ipv6, .. } => ipv6.hop_limit,
        Encap::Vxlan {
            ip: IpHeader::V6(h),
            ..
        } => h.hop_limit,
        Encap::Vxlan {
            ip: IpHeader::V4(h),
            ..
        } => h.ttl,
        Encap::Mpls { labels, .. } => labels.top().expect("a label").ttl,
    }
}

fn tunnel(bytes: &[u8]) -> TunnelFrame<'_> {
    TunnelFrame::parse(bytes, &ParseOptions::default()).expect("a tunnel frame")
}

/// Serialization of a frame of `len` octets at 100 Gb/s, as the path models
/// it: padded to 60, plus FCS, preamble and SFD; nanoseconds rounded up.
fn serialization_ns(len: usize) -> u64 {
    let bits = (len.max(60) as u64 + 4 + 8) * 8;
    bits.div_ceil(100)
}

#[test]
fn a_pause_reaches_dc1_with_pe1s_source_mac_and_its_vector_and_times_intact() {
    let cfg = WanRelayConfig::default();
    for kind in each_kind() {
        let (r, caps) = run(&cfg, kind);
        let p = &r.pause;
        assert_eq!(p.sent.src, DC2_GW, "{kind:?}");
        assert_eq!(p.sent.class_enable, 0x18, "{kind:?}");
        assert_eq!(p.sent.quanta, [0, 0, 0, 0xffff, 0x1234, 0, 0, 0]);
        let d = p.delivered.expect("DC1-GW accepted the pause");
        assert_eq!(d.src, PE1_DC, "{kind:?}: SMAC rewritten to PE1's DC port");
        assert_eq!(d.dst, MacAddr::MAC_CONTROL);
        assert_eq!(
            (d.class_enable, d.quanta),
            (0x18, p.sent.quanta),
            "{kind:?}"
        );
        assert_eq!(p.refused, None);
        assert_eq!(r.dc1_gateway.dropped.total(), 0, "{kind:?}");
        assert_eq!(r.dc1_gateway.accepted, r.dc1_gateway.received);

        // Byte for byte: what DC1-GW got is what DC2-GW sent with bytes 6..12
        // (the SMAC) replaced, nothing else.
        let sent = &caps[0].frames[0].bytes;
        let got = &caps[3].frames[0].bytes;
        let mut expected = sent.clone();
        expected[6..12].copy_from_slice(&PE1_DC.0);
        assert_eq!(got, &expected, "{kind:?}");

        // Across the WAN the inner frame is DC2-GW's, untouched; P rewrote the
        // outer MACs and took one off the hop limit / TTL, and nothing else
        // before the inner frame changed but that (and the IPv4 checksum).
        let a = tunnel(&caps[1].frames[0].bytes);
        let b = tunnel(&caps[2].frames[0].bytes);
        assert_eq!(a.inner, &sent[..], "{kind:?}");
        assert_eq!(b.inner, &sent[..], "{kind:?}");
        assert_eq!((a.outer.src, a.outer.dst), (PE2_WAN, P_TOWARD_PE2));
        assert_eq!((b.outer.src, b.outer.dst), (P_TOWARD_PE1, PE1_WAN));
        assert_eq!(outer_ttl(&a), 64, "{kind:?}");
        assert_eq!(outer_ttl(&b), 63, "{kind:?}");
        let tail = |t: &TunnelFrame, bytes: &[u8]| bytes[t.header_len()..].to_vec();
        assert_eq!(
            tail(&a, &caps[1].frames[0].bytes),
            tail(&b, &caps[2].frames[0].bytes)
        );
        assert_eq!(r.transit.forwarded, r.transit.received, "{kind:?}");
    }
}

#[test]
fn the_forwarding_delay_is_the_links_propagation_plus_each_hops_serialization() {
    for kind in each_kind() {
        let cfg = WanRelayConfig::default();
        let (r, caps) = run(&cfg, kind);
        // 100 m to each PE (500 ns), 1 ms across the WAN.
        let propagation = 500 + 1_000_000 + 500;
        let serialization: u64 = caps
            .iter()
            .map(|c| serialization_ns(c.frames[0].bytes.len()))
            .sum();
        let e2e = r.pause.end_to_end_ns.expect("measured");
        assert_eq!(e2e, propagation + serialization, "{kind:?}");
        assert_eq!(r.pause.propagation_ns, propagation);
        assert_eq!(r.pause.serialization_ns, serialization);
        // Each hop starts when the previous one's last bit is in.
        for w in r.pause.hops.windows(2) {
            assert_eq!(w[0].arrived_ns, w[1].sent_ns, "{kind:?}");
        }

        // Another WAN, another delay: 2 ms more of fibre, 2 ms more delay.
        let longer = WanRelayConfig {
            wan_delay: Duration::from_millis(3),
            ..cfg
        };
        let (r3, _) = run(&longer, kind);
        assert_eq!(
            r3.pause.end_to_end_ns,
            Some(e2e + 2_000_000),
            "{kind:?}: 3 ms WAN"
        );
    }
}

#[test]
fn illegal_frames_are_dropped_at_pe2_each_counted_under_its_reason() {
    let expected = [
        DropReason::BadDmac,
        DropReason::BadSmac,
        DropReason::ShortFrame,
        DropReason::NotPfc,
        DropReason::ClassVectorReserved,
    ];
    let cfg = WanRelayConfig::default();
    for kind in each_kind() {
        let (r, caps) = run(&cfg, kind);
        let il = &r.illegal;
        let got: Vec<Option<DropReason>> = il.cases.iter().map(|c| c.dropped).collect();
        assert_eq!(got, expected.map(Some).to_vec(), "{kind:?}");
        for reason in DropReason::ALL {
            let n = u64::from(expected.contains(&reason));
            assert_eq!(il.pe2_dropped.get(reason), n, "{kind:?} {reason}");
            assert_eq!(r.pe2.egress.dropped.get(reason), n, "{kind:?} {reason}");
        }
        assert_eq!(il.sent_to_wan, 0, "{kind:?}");
        assert_eq!(il.reached_dc1, 0, "{kind:?}");
        // None of them is on the WAN: every inner frame there is legal PFC from
        // DC2-GW, and the WAN carries exactly what PE2 relayed and flushed.
        for f in &caps[1].frames {
            let inner = tunnel(&f.bytes).inner;
            let pfc = lossless_relay::check_pfc(inner).expect("legal PFC on the WAN");
            assert_eq!(pfc.src, DC2_GW);
        }
        let e = &r.pe2.egress;
        assert_eq!(
            caps[1].frames.len() as u64,
            e.relayed + e.flushed,
            "{kind:?}"
        );
        assert_eq!(e.received, e.relayed + e.suppressed + e.dropped.total());
        assert_eq!(r.pe1.ingress.dropped.total(), 0);
    }
}

/// DC2-GW refreshes its pause every 20 us for 50 ms. PE2 relays the first
/// pause, then one refresh per DC1-GW pause time less the margin, and the
/// resume: DC1-GW's own pause timer runs without a gap from the first
/// arrival to the resume's, and the WAN carries 180 frames of 2,501.
#[test]
fn a_storm_keeps_dc1_paused_without_gaps_and_the_wan_load_bounded() {
    let cfg = WanRelayConfig::default();
    for kind in each_kind() {
        let (r, _) = run(&cfg, kind);
        let s = &r.storm;
        let e2e = r.pause.end_to_end_ns.expect("measured");
        assert_eq!(s.offered, 2501);
        assert_eq!(s.pe2.received, 2501, "{kind:?}");
        let first = s.arrivals.first().expect("something crossed");
        let last = s.arrivals.last().expect("something crossed");
        // The first pause crosses at once: one forwarding delay after it left.
        assert_eq!((first.quanta, first.cause), (0xffff, Cause::Relayed));
        assert_eq!(first.at_ns, e2e, "{kind:?}");
        // The resume crosses at once too (the bucket is full): one forwarding
        // delay after DC2-GW sent it.
        assert_eq!((last.quanta, last.cause), (0, Cause::Relayed), "{kind:?}");
        assert_eq!(last.at_ns, s.resume_sent_ns + e2e, "{kind:?}");
        // In between, refreshes only: each sent before the last lapses.
        let refreshes = &s.arrivals[1..s.arrivals.len() - 1];
        assert!(refreshes
            .iter()
            .all(|a| a.cause == Cause::Flushed && a.quanta > 60_000));
        for w in s.arrivals[..s.arrivals.len() - 1].windows(2) {
            let apart = w[1].at_ns - w[0].at_ns;
            assert!(
                (270_000..=286_000).contains(&apart),
                "{kind:?}: {apart} ns apart"
            );
        }
        // DC1-GW paused without a gap from the first pause to the resume.
        assert_eq!(s.far_gaps, vec![], "{kind:?}");
        assert_eq!(s.far_paused_ns, last.at_ns - first.at_ns);
        // The WAN load: one frame per 270 us at most, against one per 20 us offered.
        assert_eq!(s.arrivals.len(), 180, "{kind:?}");
        assert_eq!(s.pe2.relayed + s.pe2.flushed, 180, "{kind:?}");
        assert_eq!(s.pe2.suppressed, 2499, "{kind:?}");
        assert_eq!(s.suppressed_instances, 2499, "one priority each");
        let storm = r.pe2.storm.as_ref().expect("ceiling configured");
        assert_eq!(storm.suppressed, s.suppressed_instances);
        assert_eq!(storm.priorities[3].counters.refreshed, 178);
    }
}

#[test]
fn without_a_ceiling_the_whole_storm_crosses() {
    let cfg = WanRelayConfig {
        storm: StormConfig::default(),
        ..WanRelayConfig::default()
    };
    let (r, caps) = run(&cfg, Kind::Srv6);
    assert_eq!(r.storm.arrivals.len(), 2501);
    assert_eq!(r.storm.suppressed_instances, 0);
    assert_eq!(r.storm.far_gaps, vec![]);
    // 1 pause + 2501 storm frames, all on the WAN.
    assert_eq!(caps[1].frames.len(), 2502);
}

#[test]
fn the_gateway_buffer_is_seed_002s_condition_for_the_measured_delay() {
    for kind in each_kind() {
        let cfg = WanRelayConfig::default();
        let (r, _) = run(&cfg, kind);
        let e2e = r.pause.end_to_end_ns.expect("measured");
        let b = r.gateway_buffer.as_ref().expect("evaluated");
        assert_eq!(b.forwarding_delay_ns, e2e);
        // (100 Gb/s - 0) x e2e: 100 bits per nanosecond.
        assert_eq!(b.condition.product_bits, 100 * e2e, "{kind:?}");
        assert_eq!(b.condition.minimum_bytes, 100 * e2e / 8 + 1);
        // A port that drains 40 Gb/s of the 100 leaves 60 bits per ns.
        let draining = WanRelayConfig {
            tx_rate_bps: 40_000_000_000,
            ..cfg
        };
        let (d, _) = run(&draining, kind);
        let b = d.gateway_buffer.expect("evaluated");
        assert_eq!(b.condition.product_bits, 60 * e2e, "{kind:?}");
    }
}

/// P forwards by outer headers only: a tunnel frame from PE2 toward PE1 is
/// routed; one not addressed to P, toward nowhere, or out of hops is not.
#[test]
fn p_routes_on_the_outer_header_and_drops_what_it_cannot_route() {
    for kind in each_kind() {
        let mut cfg = example::pe(2, kind);
        cfg.wan.next_hop_mac = P_TOWARD_PE2;
        let mut pe2 = Relay::new(cfg, Instant::ZERO).expect("valid");
        let pause = lossless_lab::wan_relay::first_pause();
        pe2.handle_frame(Instant::ZERO, Port::Dc, &pause);
        let frame = pe2.poll_transmit().expect("relayed").frame.to_vec();

        let mut p = transit();
        let f = p.forward(0, &frame).expect("routed toward PE1");
        assert_eq!(f.interface, 1, "{kind:?}");
        assert_eq!(tunnel(&f.frame).inner, &pause[..]);
        // PE1 takes it (with its own next hop irrelevant here).
        let mut pe1 = Relay::new(example::pe(1, kind), Instant::ZERO).expect("valid");
        assert_eq!(
            pe1.handle_frame(Instant::ZERO, Port::Wan, &f.frame),
            lossless_relay::Verdict::Delivered,
            "{kind:?}"
        );

        // Not for P: the outer DMAC is another router's.
        let mut stray = frame.clone();
        stray[..6].copy_from_slice(&[2, 0, 0, 0, 0x77, 7]);
        assert_eq!(
            p.forward(0, &stray),
            Err(lossless_lab::transit::TransitDrop::NotForUs)
        );
        // Received on the other interface, whose MAC it is not either.
        assert_eq!(
            p.forward(1, &frame),
            Err(lossless_lab::transit::TransitDrop::NotForUs)
        );
        // Forwarding it again and again runs the hop limit / TTL out.
        // (A TTL is 8 bits: 256 tries are more than enough to see it end.)
        let mut again = f.frame.clone();
        let mut hops = 1;
        let mut end = None;
        for _ in 0..256 {
            again[..6].copy_from_slice(&P_TOWARD_PE2.0);
            match p.forward(0, &again) {
                Ok(next) => {
                    again = next.frame;
                    hops += 1;
                }
                Err(e) => {
                    end = Some(e);
                    break;
                }
            }
        }
        assert_eq!(
            end,
            Some(lossless_lab::transit::TransitDrop::Expired),
            "{kind:?}"
        );
        assert_eq!(hops, 63, "{kind:?}: TTL 64 allows 63 routers");
        let c = p.counters();
        assert_eq!((c.not_for_us, c.expired), (2, 1), "{kind:?}");
    }
}

#[test]
fn p_has_no_route_for_an_unknown_destination() {
    let mut cfg = example::pe(2, Kind::Vxlan4);
    cfg.wan.next_hop_mac = P_TOWARD_PE2;
    if let lossless_relay::TunnelConfig::Vxlan { destination, .. } = &mut cfg.tunnel {
        *destination = "10.9.9.9".parse().expect("v4");
    }
    let mut pe2 = Relay::new(cfg, Instant::ZERO).expect("valid");
    pe2.handle_frame(
        Instant::ZERO,
        Port::Dc,
        &lossless_lab::wan_relay::first_pause(),
    );
    let frame = pe2.poll_transmit().expect("relayed").frame.to_vec();
    let mut p = transit();
    assert_eq!(
        p.forward(0, &frame),
        Err(lossless_lab::transit::TransitDrop::NoRoute)
    );
    // And an IPv4 header with a bad checksum is malformed, not routed.
    let mut bad = frame;
    bad[14 + 10] ^= 0xff;
    assert_eq!(
        p.forward(0, &bad),
        Err(lossless_lab::transit::TransitDrop::Malformed)
    );
}

#[test]
fn the_scenario_runs_every_tunnel_and_captures_each_link() {
    let report = scenario::run("wan-relay", 1).expect("known scenario");
    let names: Vec<&str> = report.wan_relay.iter().map(|r| r.tunnel).collect();
    assert_eq!(
        names,
        [
            "srv6",
            "srv6-reduced",
            "vxlan-ipv4",
            "vxlan-ipv6",
            "sr-mpls"
        ]
    );
    assert_eq!(report.captures.len(), 5 * 4);
    assert_eq!(report.captures[0].name, "srv6-dc2gw-pe2");
    assert_eq!(report.captures[19].name, "sr-mpls-pe1-dc1gw");
    let total: u64 = report.captures.iter().map(|c| c.frames.len() as u64).sum();
    assert_eq!(report.frames_sent, total);
    // Every run is the same run: nothing random, nothing from the wall clock.
    let again = scenario::run("wan-relay", 99).expect("known scenario");
    let json = |r: &scenario::Report| serde_json::to_value(&r.wan_relay).expect("json");
    assert_eq!(json(&report), json(&again));

    let one = scenario::run_with(
        "wan-relay",
        1,
        &Options {
            tunnel: Some(Kind::Mpls),
            wan_delay: Some(Duration::from_micros(250)),
        },
    )
    .expect("runs");
    assert_eq!(one.wan_relay.len(), 1);
    assert_eq!(one.wan_relay[0].tunnel, "sr-mpls");
    assert_eq!(one.wan_relay[0].path.links[1].delay_ns, 125_000);
    assert_eq!(one.wan_relay[0].path.links[2].delay_ns, 125_000);

    let err = scenario::run_with(
        "willing",
        1,
        &Options {
            tunnel: Some(Kind::Srv6),
            ..Options::default()
        },
    )
    .expect_err("not a relay scenario");
    assert!(matches!(
        err,
        RunError::NotApplicable {
            option: "--tunnel",
            ..
        }
    ));
}

/// A PE is a node core with a `[relay]` section, as losslessd runs it: the
/// core asks for its data path, the simulator starts the relay on the ports
/// the section names, and `relay show` reads the relay's counters back
/// through the control request. A node without the section says so.
#[test]
fn a_pe_nodes_core_starts_its_relay_and_answers_relay_show() {
    use lossless_lab::scripted::ScriptedPeer;
    use lossless_lab::Sim;
    use lossless_node::protocol::Request;
    use lossless_node::relay::RelayShow;
    use lossless_relay::RelaySection;

    let cfg = example::pe(2, Kind::Srv6);
    let mut sim = Sim::new(1);
    let gw = ScriptedPeer::add(&mut sim, "DC2-GW", DC2_GW);
    let pe = sim
        .add_relay_node(
            "PE2",
            &[("pe2-dc", cfg.dc.port_mac), ("pe2-wan", cfg.wan.port_mac)],
            &RelaySection::Pe(cfg.clone()),
        )
        .expect("a valid [relay] section");
    let sink = ScriptedPeer::add(&mut sim, "P", cfg.wan.next_hop_mac);
    let dc = sim.connect_ports((gw.node, 0), (pe, 0));
    let wan = sim.connect_ports((pe, 1), (sink.node, 0));
    for seg in [dc, wan] {
        sim.set_link(seg, true);
    }
    let relay = sim.relay(pe).expect("the relay runs from the start");
    assert_eq!(relay.egress_counters().received, 0);

    sim.send_frame(gw.node, lossless_lab::wan_relay::first_pause());
    sim.run_for(Duration::from_millis(1));
    let e = sim.relay(pe).expect("running").egress_counters();
    assert_eq!((e.received, e.relayed), (1, 1));
    // One frame out (the tunnel frame to P), and P got it.
    assert_eq!(sim.frames_sent_by(pe), 1);
    assert_eq!(sim.stats().frames_delivered, 2);

    let r = sim.request(pe, Request::RelayShow);
    assert!(r.ok, "{r:?}");
    let show: RelayShow =
        serde_json::from_value(r.result.expect("a result")).expect("relay show JSON");
    assert_eq!(show.role, "pe");
    let ports: Vec<(&str, &str, bool, u64, u64)> = show
        .ports
        .iter()
        .map(|p| {
            (
                p.side.as_str(),
                p.interface.as_str(),
                p.open,
                p.received,
                p.sent,
            )
        })
        .collect();
    assert_eq!(
        ports,
        [("dc", "pe2-dc", true, 1, 0), ("wan", "pe2-wan", true, 0, 1)]
    );
    assert_eq!(show.pe.expect("a PE's status").egress.relayed, 1);

    // The gateway's node has no [relay] section: nothing to show.
    let r = sim.request(gw.node, Request::RelayShow);
    assert!(!r.ok);
}

/// The lab runs the daemon's relay host (`lossless_relay::Host`), so its
/// `relay show` says what losslessd's does: a gateway's `datapath` is its
/// section's (the lab's own copy printed the defaults), and an interface
/// the node does not have is not open, in the words the daemon uses for a
/// missing interface (the lab said `no such port`); what the relay sends
/// there is a send error.
#[test]
fn relay_show_in_the_lab_is_the_daemons_for_a_gateway_and_a_missing_port() {
    use lossless_lab::scripted::ScriptedPeer;
    use lossless_lab::Sim;
    use lossless_node::protocol::Request;
    use lossless_relay::show::RelayShow;
    use lossless_relay::{Datapath, GatewayConfig, RelaySection};

    let show = |sim: &mut Sim, node| -> RelayShow {
        let r = sim.request(node, Request::RelayShow);
        assert!(r.ok, "{r:?}");
        serde_json::from_value(r.result.expect("a result")).expect("relay show JSON")
    };
    let mut sim = Sim::new(1);
    let datapath = Datapath {
        batch: 7,
        ..Datapath::default()
    };
    let gw = sim
        .add_relay_node(
            "DC1-GW",
            &[("dc1-pe", DC1_GW)],
            &RelaySection::Gateway(GatewayConfig {
                interface: Some("dc1-pe".into()),
                pe_port_mac: PE1_DC,
                pe_system_mac: None,
                buffer: None,
                datapath,
            }),
        )
        .expect("a valid [relay] section");
    let s = show(&mut sim, gw);
    assert_eq!((s.role.as_str(), s.datapath), ("gateway", datapath));
    assert!(s.ports[0].open && s.ports[0].error.is_none());

    // PE2 without its WAN interface.
    let cfg = example::pe(2, Kind::Srv6);
    let dc_gw = ScriptedPeer::add(&mut sim, "DC2-GW", DC2_GW);
    let pe = sim
        .add_relay_node(
            "PE2",
            &[("pe2-dc", cfg.dc.port_mac)],
            &RelaySection::Pe(cfg.clone()),
        )
        .expect("a valid [relay] section");
    let dc = sim.connect_ports((dc_gw.node, 0), (pe, 0));
    sim.set_link(dc, true);
    sim.send_frame(dc_gw.node, lossless_lab::wan_relay::first_pause());
    sim.run_for(Duration::from_millis(1));
    let s = show(&mut sim, pe);
    let wan = &s.ports[1];
    assert!(!wan.open);
    assert_eq!(
        wan.error.as_deref(),
        Some("pe2-wan: No such device (os error 19)")
    );
    assert_eq!((s.ports[0].received, wan.sent, wan.send_errors), (1, 0, 1));
}

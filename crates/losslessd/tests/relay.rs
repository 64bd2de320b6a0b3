#![allow(clippy::unwrap_used)]
//! The PFC relay of draft-he-rtgwg-wan-pfc-00 run by losslessd in network
//! namespaces, both PEs ours, against the Linux kernel and tshark as oracles
//! (`relay_kernel.rs` has the kernel play a PE; the lab and the tshark checks
//! are in `common/relay`).
//!
//! ```text
//!  DC2-GW         PE2 (pe)               transit            PE1 (pe)               DC1-GW (gateway)
//!  gw2 ====== pe2-dc  pe2-wan ====== t2  kernel    t1 ====== pe1-wan  pe1-dc ====== gw1
//!  d2:01      e2:00   e2:01      f0:02  IPv4/IPv6  f0:01     e1:01    e1:00      d1:01
//! ```
//!
//! Each of the five is a network namespace the test makes and deletes; the
//! PEs and DC1-GW run losslessd with a `[relay]` section of that role.
//!
//! DC2-GW sends PFC from a packet socket; every link is read by a packet
//! socket in the namespace of its receiving end, the frames go to one pcap
//! and tshark decodes them. SR-MPLS crosses one veth between the PEs (this
//! kernel has no MPLS forwarding).

mod common;

use common::relay::*;
use common::*;
use lossless_node::relay::RelayShow;
use lossless_relay::example::{Kind, PE1_DC, PE1_WAN, PE2_WAN};
use lossless_relay::{DropCounts, DropReason};
use lossless_sys::batch::Filter;
use lossless_wire::MacAddr;

// ---------------------------------------------------------------------------
// DC2-GW -> PE2 -> (transit) -> PE1 -> DC1-GW, both PEs ours

/// Two legal frames cross, byte for byte but for PE1's SMAC; five illegal
/// ones are refused at PE2 under their reasons and nothing of them crosses.
fn relay_end_to_end(kind: Kind, wan: Wan) {
    let lab = Lab::new(wan);
    let tunnel = lab.pe_config(2, kind).tunnel;
    let pe2 = lab.our_pe(2, kind);
    let pe1 = lab.our_pe(1, kind);
    let gw1 = lab.gateway();

    let tx = Port::open("DC2-GW", &lab.dc2, "gw2", Filter::MacControl);
    let mut dc2_link = Port::open("DC2-GW -> PE2", &lab.pe2, "pe2-dc", Filter::MacControl);
    let mut wan_links = match &lab.transit {
        Some(t) => vec![
            Port::open("PE2 -> transit", t, "t2", wan_filter(kind)),
            Port::open("transit -> PE1", &lab.pe1, "pe1-wan", wan_filter(kind)),
        ],
        None => vec![Port::open(
            "PE2 -> PE1",
            &lab.pe1,
            "pe1-wan",
            wan_filter(kind),
        )],
    };
    let mut dc1_link = Port::open("PE1 -> DC1-GW", &lab.dc1, "gw1", Filter::MacControl);

    // The legal frames first and last: once the last one is at DC1-GW, any
    // illegal frame that was going to cross would have crossed before it.
    let bad = illegal();
    let mut sent = vec![legal_a()];
    sent.extend(bad.iter().map(|b| b.frame.clone()));
    sent.push(legal_b());
    for f in &sent {
        tx.send(f);
    }
    let delivered = dc1_link.wait(2);
    let wanted = [rewritten(&legal_a()), rewritten(&legal_b())];
    assert_eq!(
        delivered.iter().map(|f| hex(f)).collect::<Vec<_>>(),
        wanted.iter().map(|f| hex(f)).collect::<Vec<_>>(),
        "DC1-GW received exactly the two legal frames, SMAC rewritten, all else as sent"
    );

    // PE2 counted each illegal frame under its reason, PE1 delivered both.
    let s2 = wait_for(WAIT, "PE2 to count every frame", || {
        let s = show(&pe2);
        (s.pe.as_ref()?.egress.received == sent.len() as u64).then_some(s)
    });
    let e = s2.pe.as_ref().unwrap().egress;
    let reasons: Vec<DropReason> = bad.iter().map(|b| b.reason).collect();
    assert_eq!(e.dropped, counts(&reasons), "PE2's drops: {e:?}");
    assert_eq!((e.relayed, e.suppressed, e.masked), (2, 0, 0), "{e:?}");
    assert_eq!(s2.ports[0].received, sent.len() as u64, "{:?}", s2.ports);
    assert_eq!(s2.ports[1].sent, 2, "{:?}", s2.ports);
    let s1 = show(&pe1);
    let i = s1.pe.as_ref().unwrap().ingress;
    assert_eq!((i.received, i.delivered), (2, 2), "{i:?}");
    assert_eq!(i.dropped, DropCounts::default(), "{i:?}");
    assert_eq!(s1.ports[0].sent, 2, "{:?}", s1.ports);

    // DC1-GW accepted both; `lossless relay show --json` says so.
    wait_for(WAIT, "DC1-GW to accept 2 frames", || {
        (show(&gw1).gateway?.counters.accepted == 2).then_some(())
    });
    let out = gw1.cli(&["relay", "show", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let g: RelayShow = serde_json::from_slice(&out.stdout).unwrap();
    let g = g.gateway.expect("a gateway's show");
    assert_eq!(g.counters.received, 2);
    assert_eq!(g.counters.dropped, DropCounts::default());
    let last = g.last_accepted.expect("last_accepted");
    assert_eq!(last.src, PE1_DC);
    assert_eq!(u16::from(last.class_enable), VECTOR_B);
    assert_eq!(last.quanta, TIMES_B);

    // Every hop: the tunnel carried each legal frame untouched.
    let mut hops = Vec::new();
    for link in &mut wan_links {
        let frames = link.wait(2);
        assert_eq!(frames.len(), 2, "{}: only the legal frames", link.label);
        assert_eq!(inner(&frames[0]), legal_a(), "{}", link.label);
        assert_eq!(inner(&frames[1]), legal_b(), "{}", link.label);
        hops.push((link.label, frames));
    }

    // tshark decodes every hop.
    let mut all: Vec<(&'static str, Vec<u8>)> = Vec::new();
    let dc2_frames = dc2_link.wait(sent.len());
    assert_eq!(dc2_frames, sent, "PE2 received what DC2-GW sent");
    all.extend(dc2_frames.into_iter().map(|f| (dc2_link.label, f)));
    for (label, frames) in &hops {
        all.extend(frames.iter().map(|f| (*label, f.clone())));
    }
    all.extend(delivered.iter().map(|f| (dc1_link.label, f.clone())));
    let rows = tshark(lab.dir.path(), &all);
    let (dc2_rows, rest) = rows.split_at(sent.len());
    let (wan_rows, dc1_rows) = rest.split_at(2 * hops.len());

    // DC2-GW -> PE2: the frames as sent, the illegal ones what they claim.
    dc2_rows[0].expect_pfc(&legal_a());
    dc2_rows[sent.len() - 1].expect_pfc(&legal_b());
    for (r, b) in dc2_rows[1..].iter().zip(&bad) {
        r.expect(b.field, &b.value);
    }
    for r in dc2_rows {
        if r.frame.len() == 60 {
            r.expect("frame.protocols", "eth:ethertype:macc");
        }
    }

    // The WAN: outer headers per tunnel, DSCP 48, and the frame inside.
    for (h, pair) in wan_rows.chunks(2).enumerate() {
        let routed = wan == Wan::Transit && h == 1;
        let (src, dst) = match (wan, h) {
            (Wan::Direct, _) => (PE2_WAN, PE1_WAN),
            (Wan::Transit, 0) => (PE2_WAN, T2),
            (Wan::Transit, _) => (T1, PE1_WAN),
        };
        for (r, f) in pair.iter().zip([legal_a(), legal_b()]) {
            expect_tunnel(r, &tunnel, routed);
            r.expect("eth.src", &format!("{src},{}", mac(&f[6..12])));
            r.expect("eth.dst", &format!("{dst},{}", MacAddr::MAC_CONTROL));
            r.expect_pfc(&f);
        }
    }

    // PE1 -> DC1-GW: SMAC PE1's, the rest as sent.
    for (r, f) in dc1_rows.iter().zip(&wanted) {
        r.expect("frame.protocols", "eth:ethertype:macc");
        r.expect("eth.src", &PE1_DC.to_string());
        r.expect_pfc(f);
    }

    // Still nothing more anywhere (tshark took its time).
    assert_eq!(dc1_link.poll().len(), 2);
    for link in &mut wan_links {
        assert_eq!(link.poll().len(), 2, "{}", link.label);
    }
}

#[test]
fn srv6_relays_legal_pfc_and_refuses_the_rest() {
    if require(
        "srv6_relays_legal_pfc_and_refuses_the_rest",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        relay_end_to_end(Kind::Srv6, Wan::Transit);
    }
}

#[test]
fn srv6_reduced_relays_legal_pfc_and_refuses_the_rest() {
    if require(
        "srv6_reduced_relays_legal_pfc_and_refuses_the_rest",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        relay_end_to_end(Kind::Srv6Reduced, Wan::Transit);
    }
}

#[test]
fn vxlan_over_ipv6_relays_legal_pfc_and_refuses_the_rest() {
    if require(
        "vxlan_over_ipv6_relays_legal_pfc_and_refuses_the_rest",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        relay_end_to_end(Kind::Vxlan6, Wan::Transit);
    }
}

#[test]
fn vxlan_over_ipv4_relays_legal_pfc_and_refuses_the_rest() {
    if require(
        "vxlan_over_ipv4_relays_legal_pfc_and_refuses_the_rest",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        relay_end_to_end(Kind::Vxlan4, Wan::Transit);
    }
}

/// This kernel has no MPLS forwarding (`/proc/sys/net/mpls` is absent, no
/// `mpls_router` module), so the PEs share one veth.
#[test]
fn sr_mpls_relays_legal_pfc_and_refuses_the_rest() {
    if require(
        "sr_mpls_relays_legal_pfc_and_refuses_the_rest",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        relay_end_to_end(Kind::Mpls, Wan::Direct);
    }
}

#![allow(clippy::unwrap_used)]
//! Interop of losslessd's PFC relay with the Linux kernel playing the other PE,
//! in the network namespaces of `common/relay` (DC2-GW, PE2, transit, PE1,
//! DC1-GW): the kernel's `seg6local End.DX2` and a `vxlan` device decapsulate
//! what our PE sends; `seg6 mode l2encap` and a `vxlan` device encapsulate
//! what our PE takes; our PE2 both on its AF_PACKET path and on its XDP path.
//! Both PEs ours is `relay.rs`.

mod common;

use std::net::UdpSocket;

use common::relay::*;
use common::*;
use lossless_relay::example::{Kind, DC2_GW, PE1_DC, PE1_WAN, PE2_DC};
use lossless_relay::{DropCounts, DropReason};
use lossless_sys::batch::Filter;
use lossless_sys::netns::in_netns;
use lossless_sys::xdp::PassProgram;
use lossless_wire::tunnel::{Encap, IpProtocol, ParseOptions, TunnelFrame};

// ---------------------------------------------------------------------------
// The kernel as the other PE

/// Which data path our PE2 runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    AfPacket,
    Xdp,
}

/// Our PE2 on `path` (with the pass-through program its XDP path needs on
/// the transit side).
fn our_pe2(lab: &Lab, kind: Kind, path: Path) -> (Daemon, Option<PassProgram>) {
    match path {
        Path::AfPacket => (lab.our_pe(2, kind), None),
        Path::Xdp => {
            let (d, pass) = lab.our_pe2_xdp(kind);
            (d, Some(pass))
        }
    }
}

/// On the XDP path, the program relayed the `n` frames (not the socket's
/// fallback).
fn relayed_on(pe2: &Daemon, path: Path, n: u64) {
    if path == Path::Xdp {
        wait_for(WAIT, "PE2's program to count the frames", || {
            let x = show(pe2).xdp?;
            (x.egress_relayed == n && x.egress_passed == 0).then_some(())
        });
    }
}

/// The XDP path's oracles; its program must have been built where they are.
fn xdp_oracles(test: &str) -> bool {
    if !require(test, &[Oracle::Netns, Oracle::Tshark, Oracle::Bpf]) {
        return false;
    }
    if let Err(why) = lossless_sys::xdp::object() {
        panic!("the relay's XDP program was not built: {why} (install clang and libbpf-dev)");
    }
    true
}

fn pe2_relayed(pe2: &Daemon, n: u64) {
    let s = wait_for(WAIT, "PE2 to relay", || {
        let s = show(pe2);
        (s.pe.as_ref()?.egress.received == n).then_some(s)
    });
    let e = s.pe.unwrap().egress;
    assert_eq!(e.relayed, n, "{e:?}");
    assert_eq!(e.dropped, DropCounts::default(), "{e:?}");
}

/// Our PE2 encapsulates, the kernel's `seg6local action End.DX2` in PE1's
/// place decapsulates: the PFC frame reaches DC1-GW exactly as DC2-GW sent
/// it. End.DX2 does not rewrite the source MAC, so DC1-GW's check refuses it
/// (bad_smac): the kernel alone is not the ingress PE of the draft.
fn kernel_end_dx2_decapsulates(kind: Kind, path: Path) {
    let lab = Lab::new(Wan::Transit);
    let k = &lab.pe1;
    k.sysctl("net.ipv6.conf.all.forwarding=1");
    ip(
        k,
        &format!("-6 route add {PE1_SID} encap seg6local action End.DX2 oif pe1-dc dev pe1-wan"),
    );
    let (pe2, _pass) = our_pe2(&lab, kind, path);
    let gw1 = lab.gateway();
    let tx = Port::open("DC2-GW", &lab.dc2, "gw2", Filter::MacControl);
    let mut wan = Port::open("transit -> kernel PE1", k, "pe1-wan", Filter::Srv6);
    let mut dc1 = Port::open("kernel PE1 -> DC1-GW", &lab.dc1, "gw1", Filter::MacControl);

    tx.send(&legal_a());
    assert_eq!(
        dc1.wait(1),
        vec![legal_a()],
        "End.DX2 delivered the frame as sent"
    );
    pe2_relayed(&pe2, 1);
    relayed_on(&pe2, path, 1);
    let g = wait_for(WAIT, "DC1-GW to check the frame", || {
        let g = show(&gw1).gateway?;
        (g.counters.received == 1).then_some(g)
    });
    assert_eq!(g.counters.accepted, 0);
    assert_eq!(g.counters.dropped, counts(&[DropReason::BadSmac]));

    let frames = wan.wait(1);
    assert_eq!(inner(&frames[0]), legal_a());
    let rows = tshark(
        lab.dir.path(),
        &[(wan.label, frames[0].clone()), (dc1.label, legal_a())],
    );
    expect_tunnel(&rows[0], &lab.pe_config(2, kind).tunnel, true);
    rows[0].expect("eth.src", &format!("{T1},{DC2_GW}"));
    rows[0].expect_pfc(&legal_a());
    rows[1].expect("frame.protocols", "eth:ethertype:macc");
    rows[1].expect_pfc(&legal_a());
}

#[test]
fn kernel_end_dx2_decapsulates_our_srv6() {
    if require(
        "kernel_end_dx2_decapsulates_our_srv6",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_end_dx2_decapsulates(Kind::Srv6, Path::AfPacket);
    }
}

#[test]
fn kernel_end_dx2_decapsulates_our_reduced_srv6() {
    if require(
        "kernel_end_dx2_decapsulates_our_reduced_srv6",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_end_dx2_decapsulates(Kind::Srv6Reduced, Path::AfPacket);
    }
}

/// The kernel's `seg6 mode l2encap` in PE2's place encapsulates, our PE1
/// decapsulates. The kernel only encapsulates routed IP packets (with the
/// Ethernet header they arrived with), so DC2-GW sends a UDP datagram routed
/// into the l2encap route: PE1 must take the tunnel apart and refuse the
/// frame inside for what it is (not MAC Control), not the tunnel itself.
#[test]
fn our_pe_decapsulates_kernel_seg6_l2encap() {
    if !require(
        "our_pe_decapsulates_kernel_seg6_l2encap",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        return;
    }
    let lab = Lab::new(Wan::Transit);
    let k = &lab.pe2;
    k.sysctl("net.ipv4.ip_forward=1");
    k.sysctl("net.ipv6.conf.all.forwarding=1");
    ip(k, "addr add 198.51.100.1/24 dev pe2-dc");
    ip(
        k,
        &format!("-6 route add {PE1_SID} via fd00:2::f dev pe2-wan"),
    );
    ip(
        k,
        &format!("route add 203.0.113.0/24 encap seg6 mode l2encap segs {PE1_SID} dev pe2-wan"),
    );
    ip(&lab.dc2, "addr add 198.51.100.2/24 dev gw2");
    ip(&lab.dc2, "route add default via 198.51.100.1");
    let pe1 = lab.our_pe(1, Kind::Srv6);
    let mut wan = Port::open("transit -> PE1", &lab.pe1, "pe1-wan", Filter::Srv6);
    let mut dc1 = Port::open("PE1 -> DC1-GW", &lab.dc1, "gw1", Filter::MacControl);

    let payload = b"wan-pfc relay: l2encap probe";
    in_netns(&lab.dc2.name, || {
        UdpSocket::bind("198.51.100.2:0")?.send_to(payload, "203.0.113.9:9")
    })
    .and_then(|r| r)
    .unwrap();

    // What the kernel sent, by our decoder: IPv6 + SRH (one segment, our
    // SID, Segments Left 0, next header Ethernet) + the datagram's frame as
    // it arrived at the kernel PE.
    let frames = wan.wait(1);
    let t = TunnelFrame::parse(&frames[0], &ParseOptions::default()).unwrap();
    let Encap::Srv6 {
        ipv6,
        srh: Some(srh),
    } = t.encap
    else {
        panic!("not SRv6 with an SRH: {:?}", t.encap);
    };
    assert_eq!(ipv6.dst.to_string(), PE1_SID);
    assert_eq!(srh.segments_left, 0);
    assert_eq!(srh.next_header, IpProtocol::ETHERNET);
    let segs: Vec<String> = srh.segments.iter().map(|a| a.to_string()).collect();
    assert_eq!(segs, [PE1_SID]);
    assert_eq!(t.outer.dst, PE1_WAN);
    assert_eq!(&t.inner[0..6], &PE2_DC.0, "the received frame's DMAC");
    assert_eq!(&t.inner[6..12], &DC2_GW.0, "the received frame's SMAC");
    assert_eq!(&t.inner[12..14], &[0x08, 0x00], "IPv4");
    assert!(t.inner.ends_with(payload), "{}", hex(t.inner));

    // Our PE1 decapsulated it and refused the inner frame as not MAC
    // Control: not as not_tunnel, malformed_tunnel or not_for_us.
    let i = wait_for(WAIT, "PE1 to take the frame", || {
        let s = show(&pe1);
        let i = s.pe?.ingress;
        (i.received == 1).then_some(i)
    });
    assert_eq!(i.dropped, counts(&[DropReason::NotMacControl]), "{i:?}");
    assert_eq!(i.delivered, 0);
    assert!(dc1.poll().is_empty(), "nothing reached DC1-GW");

    let rows = tshark(lab.dir.path(), &[(wan.label, frames[0].clone())]);
    let r = &rows[0];
    r.expect(
        "frame.protocols",
        "eth:ethertype:ipv6:ipv6.routing:eth:ethertype:ip:udp:data",
    );
    r.expect("ipv6.dst", PE1_SID);
    r.expect("ipv6.routing.type", "4");
    r.expect("ipv6.routing.segleft", "0");
    r.expect("ipv6.routing.srh.addr", PE1_SID);
    r.expect("ipv6.routing.nxt", "143");
    r.expect("eth.src", &format!("{T1},{DC2_GW}"));
    r.expect("ip.dst", "203.0.113.9");
    r.expect("udp.dstport", "9");
}

/// A kernel `vxlan` device in `ns` from `local` to `remote` (VNI 4242, port
/// 4789) with the route to `remote` through `via` on `dev`. IPv6 is off on
/// the device, so no neighbour or router solicitation enters the tunnel.
fn kernel_vtep(ns: &Netns, local: &str, remote: &str, via: &str, dev: &str) {
    let host = if local.contains(':') { "/128" } else { "/32" };
    ip(ns, &format!("addr add {local}{host} dev lo"));
    ip(ns, &format!("route add {remote} via {via} dev {dev}"));
    ip(
        ns,
        &format!("link add vx0 type vxlan id 4242 dstport 4789 local {local} remote {remote}"),
    );
    ns.sysctl("net.ipv6.conf.vx0.disable_ipv6=1");
    up(&[(ns, "vx0")]);
}

/// The VTEP addresses of `kind` (example.rs): PE1's, PE2's, and the transit
/// router's addresses toward PE1 and PE2.
fn vteps(kind: Kind) -> [&'static str; 4] {
    match kind {
        Kind::Vxlan4 => ["10.0.0.1", "10.0.0.2", "192.168.1.15", "192.168.2.15"],
        _ => ["fc00::1", "fc00::2", "fd00:1::f", "fd00:2::f"],
    }
}

/// A kernel `vxlan` device in PE2's place encapsulates a PFC frame written
/// to it; our PE1 decapsulates it and delivers it with its own SMAC.
fn kernel_vxlan_encapsulates(kind: Kind) {
    let lab = Lab::new(Wan::Transit);
    let [pe1_vtep, pe2_vtep, _, via] = vteps(kind);
    kernel_vtep(&lab.pe2, pe2_vtep, pe1_vtep, via, "pe2-wan");
    let pe1 = lab.our_pe(1, kind);
    let gw1 = lab.gateway();
    let tx = Port::open("kernel PE2's vx0", &lab.pe2, "vx0", Filter::MacControl);
    let mut wan = Port::open("transit -> PE1", &lab.pe1, "pe1-wan", wan_filter(kind));
    let mut dc1 = Port::open("PE1 -> DC1-GW", &lab.dc1, "gw1", Filter::MacControl);

    tx.send(&legal_a());
    assert_eq!(dc1.wait(1), vec![rewritten(&legal_a())]);
    let s = show(&pe1);
    let i = s.pe.unwrap().ingress;
    assert_eq!((i.received, i.delivered), (1, 1), "{i:?}");
    assert_eq!(i.dropped, DropCounts::default(), "{i:?}");
    let g = wait_for(WAIT, "DC1-GW to accept the frame", || {
        let g = show(&gw1).gateway?;
        (g.counters.accepted == 1).then_some(g)
    });
    let last = g.last_accepted.unwrap();
    assert_eq!(
        (last.src, u16::from(last.class_enable), last.quanta),
        (PE1_DC, VECTOR_A, TIMES_A)
    );

    // The kernel left the UDP checksum to offload that veth does not do, so
    // a packet socket reads only the pseudo-header sum there (PE1 completes
    // it, as TP_STATUS_CSUMNOTREADY tells it to): the inner frame is the tail.
    let frames = wan.wait(1);
    assert!(frames[0].ends_with(&legal_a()), "{}", hex(&frames[0]));
    let rows = tshark(lab.dir.path(), &[(wan.label, frames[0].clone())]);
    let r = &rows[0];
    let family = if kind == Kind::Vxlan4 { "ip" } else { "ipv6" };
    r.expect(
        "frame.protocols",
        &format!("eth:ethertype:{family}:udp:vxlan:eth:ethertype:macc"),
    );
    r.expect(&format!("{family}.dst"), pe1_vtep);
    r.expect("udp.dstport", "4789");
    r.expect("vxlan.vni", "4242");
    r.expect_pfc(&legal_a());
}

#[test]
fn our_pe_decapsulates_kernel_vxlan_over_ipv4() {
    if require(
        "our_pe_decapsulates_kernel_vxlan_over_ipv4",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_vxlan_encapsulates(Kind::Vxlan4);
    }
}

#[test]
fn our_pe_decapsulates_kernel_vxlan_over_ipv6() {
    if require(
        "our_pe_decapsulates_kernel_vxlan_over_ipv6",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_vxlan_encapsulates(Kind::Vxlan6);
    }
}

/// Our PE2 encapsulates; a kernel `vxlan` device in PE1's place
/// decapsulates (checking the UDP checksum): a packet socket on it reads the
/// PFC frame exactly as DC2-GW sent it.
fn kernel_vxlan_decapsulates(kind: Kind, path: Path) {
    let lab = Lab::new(Wan::Transit);
    let [pe1_vtep, pe2_vtep, via, _] = vteps(kind);
    kernel_vtep(&lab.pe1, pe1_vtep, pe2_vtep, via, "pe1-wan");
    let (pe2, _pass) = our_pe2(&lab, kind, path);
    let tx = Port::open("DC2-GW", &lab.dc2, "gw2", Filter::MacControl);
    let mut wan = Port::open(
        "transit -> kernel PE1",
        &lab.pe1,
        "pe1-wan",
        wan_filter(kind),
    );
    let mut vx = Port::open("kernel PE1's vx0", &lab.pe1, "vx0", Filter::MacControl);

    tx.send(&legal_a());
    assert_eq!(
        vx.wait(1),
        vec![legal_a()],
        "the kernel took out the frame as sent"
    );
    pe2_relayed(&pe2, 1);
    relayed_on(&pe2, path, 1);

    let frames = wan.wait(1);
    let rows = tshark(
        lab.dir.path(),
        &[(wan.label, frames[0].clone()), (vx.label, legal_a())],
    );
    expect_tunnel(&rows[0], &lab.pe_config(2, kind).tunnel, true);
    rows[0].expect_pfc(&legal_a());
    rows[1].expect("frame.protocols", "eth:ethertype:macc");
    rows[1].expect_pfc(&legal_a());
}

#[test]
fn kernel_vxlan_decapsulates_our_pe_over_ipv4() {
    if require(
        "kernel_vxlan_decapsulates_our_pe_over_ipv4",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_vxlan_decapsulates(Kind::Vxlan4, Path::AfPacket);
    }
}

#[test]
fn kernel_vxlan_decapsulates_our_pe_over_ipv6() {
    if require(
        "kernel_vxlan_decapsulates_our_pe_over_ipv6",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_vxlan_decapsulates(Kind::Vxlan6, Path::AfPacket);
    }
}

// The same with our PE2 on its XDP path: the kernel takes apart what the
// program built, byte for byte what the core builds.

#[test]
fn kernel_end_dx2_decapsulates_our_srv6_from_xdp() {
    if xdp_oracles("kernel_end_dx2_decapsulates_our_srv6_from_xdp") {
        kernel_end_dx2_decapsulates(Kind::Srv6, Path::Xdp);
    }
}

#[test]
fn kernel_end_dx2_decapsulates_our_reduced_srv6_from_xdp() {
    if xdp_oracles("kernel_end_dx2_decapsulates_our_reduced_srv6_from_xdp") {
        kernel_end_dx2_decapsulates(Kind::Srv6Reduced, Path::Xdp);
    }
}

#[test]
fn kernel_vxlan_decapsulates_our_xdp_pe_over_ipv4() {
    if xdp_oracles("kernel_vxlan_decapsulates_our_xdp_pe_over_ipv4") {
        kernel_vxlan_decapsulates(Kind::Vxlan4, Path::Xdp);
    }
}

#[test]
fn kernel_vxlan_decapsulates_our_xdp_pe_over_ipv6() {
    if xdp_oracles("kernel_vxlan_decapsulates_our_xdp_pe_over_ipv6") {
        kernel_vxlan_decapsulates(Kind::Vxlan6, Path::Xdp);
    }
}

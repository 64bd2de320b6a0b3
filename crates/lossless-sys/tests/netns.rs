#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! lossless-sys against the real kernel, in network namespaces and veth
//! pairs this test makes and removes itself (`lsys-<pid>-<n>`).
//!
//! Needs root and iproute2's `ip`; the dcbnl test also needs gcc, which builds
//! lossless-testkit's emulated DCB driver. Without them every test fails naming
//! what to install, unless `LOSSLESS_SKIP_ORACLES=1` (then they print that they
//! were skipped and pass).
//!
//! Network namespaces are per thread: [`Netns::run`] enters one on a fresh
//! thread. A socket stays in the namespace it was created in, so sockets
//! opened inside `run` can be used from the test thread afterwards.

use std::io;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use lossless_sys::dcbnl::{DcbBuffer, DcbError, Dcbnl};
use lossless_sys::link::{dump_links, if_hwaddr, if_nametoindex, LinkError, LinkEvent, LinkInfo};
use lossless_sys::packet::{
    PacketSocket, ETH_P_LLDP, ETH_P_MAC_CONTROL, LLDP_MULTICAST, MAC_CONTROL_MULTICAST,
};

mod common;
use common::*;

#[allow(dead_code)]
#[path = "../examples/dcbnl_probe.rs"]
mod probe;

/// Waits up to 2 s for one frame.
fn recv_frame(s: &PacketSocket) -> io::Result<Vec<u8>> {
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut buf = vec![0u8; 2048];
    loop {
        match s.recv(&mut buf) {
            Ok(n) => return Ok(buf[..n].to_vec()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Asserts nothing (more) arrives within 200 ms.
fn assert_quiet(s: &PacketSocket) {
    std::thread::sleep(Duration::from_millis(200));
    let mut buf = vec![0u8; 2048];
    match s.recv(&mut buf) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        other => panic!("expected nothing, got {other:?} {:02x?}", &buf[..64]),
    }
}

const LLDP_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e];
const PFC_DST: [u8; 6] = [0x01, 0x80, 0xc2, 0x00, 0x00, 0x01];

/// An LLDPDU: chassis id (MAC), port id (MAC), TTL 120, a marker in an
/// organizationally specific TLV, end.
fn lldp(src: [u8; 6], marker: u8) -> Vec<u8> {
    let mut p = vec![0x02, 0x07, 0x04];
    p.extend_from_slice(&src);
    p.extend_from_slice(&[0x04, 0x07, 0x03]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&[0x06, 0x02, 0x00, 0x78]);
    p.extend_from_slice(&[0xfe, 0x05, 0x00, 0x1b, 0x21, 0x7f, marker]);
    p.extend_from_slice(&[0x00, 0x00]);
    eth(LLDP_DST, src, &[0x88cc], &p)
}

/// A PFC frame: opcode 0x0101, priorities 3 and 4, pause times.
fn pfc(src: [u8; 6]) -> Vec<u8> {
    let mut p = vec![0x01, 0x01, 0x00, 0x18];
    for t in [0u16, 0, 0, 0xffff, 0x1234, 0, 0, 0] {
        p.extend_from_slice(&t.to_be_bytes());
    }
    eth(PFC_DST, src, &[0x8808], &p)
}

#[test]
fn lldp_and_pfc_frames_cross_the_veth_byte_for_byte() {
    if !require(
        "lldp_and_pfc_frames_cross_the_veth_byte_for_byte",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    let (sa, sb) = pair.sockets();
    assert_eq!(sa.ifindex(), pair.a.run(|| if_nametoindex("va").unwrap()));

    let l = lldp(MAC_A, 1);
    sa.send(&l).unwrap();
    assert_eq!(recv_frame(&sb).unwrap(), l);

    let p = pfc(MAC_A);
    sa.send(&p).unwrap();
    assert_eq!(recv_frame(&sb).unwrap(), p);

    // And the other way.
    let l = lldp(MAC_B, 2);
    sb.send(&l).unwrap();
    assert_eq!(recv_frame(&sa).unwrap(), l);
    assert_quiet(&sb);
}

#[test]
fn the_filter_passes_lldp_and_mac_control_only() {
    if !require(
        "the_filter_passes_lldp_and_mac_control_only",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    let (sa, sb) = pair.sockets();

    // veth keeps order: whatever the filter lets through arrives before the
    // final marker.
    let ipv4 = eth(MAC_B, MAC_A, &[0x0800], &[0x45, 0, 0, 20]);
    let arp = eth([0xff; 6], MAC_A, &[0x0806], &[0, 1, 8, 0, 6, 4, 0, 1]);
    let tagged_ipv4 = eth(MAC_B, MAC_A, &[0x8100, 0x0005, 0x0800], &[0x45]);
    let to_other_group = eth(LLDP_DST, MAC_A, &[0x88b5], &[1, 2, 3]);
    for f in [&ipv4, &arp, &tagged_ipv4, &to_other_group] {
        sa.send(f).unwrap();
    }
    // An 802.1Q-tagged LLDPDU: the receive path moves the tag into skb
    // metadata before packet sockets see the frame, so it arrives (through
    // the filter's offset-12 branch) without its tag.
    let l = lldp(MAC_A, 3);
    let mut tagged_lldp = l[..12].to_vec();
    tagged_lldp.extend_from_slice(&[0x81, 0x00, 0x00, 0x07]);
    tagged_lldp.extend_from_slice(&l[12..]);
    sa.send(&tagged_lldp).unwrap();
    assert_eq!(recv_frame(&sb).unwrap(), l, "tagged LLDP arrives untagged");

    let marker = lldp(MAC_A, 4);
    sa.send(&marker).unwrap();
    assert_eq!(
        recv_frame(&sb).unwrap(),
        marker,
        "IPv4, ARP, tagged IPv4 and EtherType 0x88b5 were filtered out"
    );
    assert_quiet(&sb);
}

/// A socket opened for one EtherType (a port's own LLDP socket, its own MAC Control
/// socket) receives that EtherType only: PFC frames never take room in the LLDP
/// socket's receive buffer, LLDPDUs never in the MAC Control one's.
#[test]
fn a_socket_for_one_ethertype_receives_that_one_only() {
    if !require(
        "a_socket_for_one_ethertype_receives_that_one_only",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    let (sa, _sb) = pair.sockets();
    let open = |ethertype, group| {
        pair.b
            .run(|| {
                PacketSocket::open_ethertype(if_nametoindex("vb")?, ethertype, group, Some(1 << 16))
            })
            .expect("packet socket on vb")
    };
    let lldp_sock = open(ETH_P_LLDP, LLDP_MULTICAST);
    let mac_sock = open(ETH_P_MAC_CONTROL, MAC_CONTROL_MULTICAST);
    let (l1, p, l2) = (lldp(MAC_A, 5), pfc(MAC_A), lldp(MAC_A, 6));
    for f in [&l1, &p, &p, &l2, &p] {
        sa.send(f).unwrap();
    }
    assert_eq!(recv_frame(&lldp_sock).unwrap(), l1);
    assert_eq!(recv_frame(&lldp_sock).unwrap(), l2, "no PFC frame between");
    for _ in 0..3 {
        assert_eq!(recv_frame(&mac_sock).unwrap(), p);
    }
    assert_quiet(&lldp_sock);
    assert_quiet(&mac_sock);
    // The kernel handed each only its EtherType (PACKET_STATISTICS counts what the
    // socket's protocol and filter let in).
    assert_eq!(lldp_sock.stats().unwrap().packets, 2);
    assert_eq!(mac_sock.stats().unwrap().packets, 3);
}

#[test]
fn own_transmissions_are_not_read_back() {
    if !require("own_transmissions_are_not_read_back", &[Oracle::Netns]) {
        return;
    }
    let pair = Pair::new();
    let (sa, sb) = pair.sockets();
    // A second socket on va that did not send: the kernel shows it A's frame
    // as outgoing traffic of the interface unless PACKET_IGNORE_OUTGOING.
    let sa2 = pair
        .a
        .run(|| PacketSocket::open(if_nametoindex("va")?))
        .unwrap();

    let mine = lldp(MAC_A, 5);
    sa.send(&mine).unwrap();
    assert_eq!(recv_frame(&sb).unwrap(), mine);
    // The tap copy of an outgoing frame is queued during send(), before the
    // peer's answer exists: if it were delivered it would come first.
    let theirs = pfc(MAC_B);
    sb.send(&theirs).unwrap();
    assert_eq!(recv_frame(&sa).unwrap(), theirs);
    assert_eq!(recv_frame(&sa2).unwrap(), theirs);
    assert_quiet(&sa);
    assert_quiet(&sa2);
}

#[test]
fn outgoing_frames_are_dropped_without_packet_ignore_outgoing_too() {
    if !require(
        "outgoing_frames_are_dropped_without_packet_ignore_outgoing_too",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    let (sa, sb) = pair.sockets();
    // The kernel never loops a frame back to the packet socket that sent it
    // (skb_loop_sk), but every other packet socket on the interface sees it
    // as PACKET_OUTGOING: another process's LLDP agent, say. sa2 plays the
    // daemon next to it, with PACKET_IGNORE_OUTGOING switched off again as on
    // a kernel before 4.20, so recv() must drop those frames itself.
    let sa2 = pair
        .a
        .run(|| PacketSocket::open(if_nametoindex("va")?))
        .unwrap();
    let off: libc::c_int = 0;
    // SAFETY: a valid socket and a c_int option value.
    let r = unsafe {
        libc::setsockopt(
            sa2.as_raw_fd(),
            libc::SOL_PACKET,
            23, // PACKET_IGNORE_OUTGOING
            (&off as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "{}", io::Error::last_os_error());
    let mine = lldp(MAC_A, 7);
    sa.send(&mine).unwrap();
    assert_eq!(recv_frame(&sb).unwrap(), mine);
    let theirs = lldp(MAC_B, 8);
    sb.send(&theirs).unwrap();
    assert_eq!(recv_frame(&sa2).unwrap(), theirs);
    assert_quiet(&sa2);
}

#[test]
fn socket_priority_is_tc_prio_control_and_outgoing_is_ignored() {
    if !require(
        "socket_priority_is_tc_prio_control_and_outgoing_is_ignored",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    let (sa, _sb) = pair.sockets();
    assert_eq!(sa.priority().unwrap(), 7);
    // And PACKET_IGNORE_OUTGOING took (Linux 4.20+).
    let mut v: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: a valid socket; v and len are writable.
    let r = unsafe {
        libc::getsockopt(
            sa.as_raw_fd(),
            libc::SOL_PACKET,
            23, // PACKET_IGNORE_OUTGOING
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    assert_eq!((r, v), (0, 1), "{}", io::Error::last_os_error());
}

#[test]
fn a_frame_larger_than_the_buffer_is_an_error_not_a_truncation() {
    if !require(
        "a_frame_larger_than_the_buffer_is_an_error_not_a_truncation",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    let (sa, sb) = pair.sockets();
    let big = eth(LLDP_DST, MAC_A, &[0x88cc], &[0xab; 1000]);
    sa.send(&big).unwrap();
    let mut small = [0u8; 100];
    let deadline = Instant::now() + Duration::from_secs(2);
    let err = loop {
        match sb.recv(&mut small) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(2))
            }
            other => break other.unwrap_err(),
        }
    };
    assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    assert!(err.to_string().contains("1014-byte frame"), "{err}");
    // It was consumed; the next frame is whole.
    let l = lldp(MAC_A, 6);
    sa.send(&l).unwrap();
    assert_eq!(recv_frame(&sb).unwrap(), l);
}

#[test]
fn interface_helpers() {
    if !require("interface_helpers", &[Oracle::Netns]) {
        return;
    }
    let pair = Pair::new();
    pair.a.run(|| {
        assert_eq!(if_hwaddr("va").unwrap(), MAC_A);
        assert!(if_nametoindex("va").unwrap() > 1);
        assert_eq!(if_nametoindex("lo").unwrap(), 1);
        assert_eq!(
            if_nametoindex("nosuch0").unwrap_err().raw_os_error(),
            Some(libc::ENODEV)
        );
        assert_eq!(
            if_hwaddr("lo").unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        assert_eq!(
            if_nametoindex("a-name-far-too-long").unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    });
}

/// Reads events until `want` matches one (returns it) or 5 s pass.
fn wait_for(
    mon: &lossless_sys::link::LinkMonitor,
    seen: &mut Vec<LinkEvent>,
    what: &str,
    want: impl Fn(&LinkEvent) -> bool,
) -> LinkEvent {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match mon.recv() {
            Ok(evs) => {
                for ev in evs {
                    seen.push(ev.clone());
                    if want(&ev) {
                        return ev;
                    }
                }
            }
            Err(e) if e.would_block() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("waiting for {what}: {e}; events so far: {seen:#?}"),
        }
    }
}

fn is_new(ev: &LinkEvent, name: &str, admin: bool, oper: bool) -> bool {
    matches!(ev, LinkEvent::New(i) if i.name == name && i.admin_up == admin && i.oper_up == oper)
}

#[test]
fn the_link_monitor_sees_links_come_go_and_change_state() {
    if !require(
        "the_link_monitor_sees_links_come_go_and_change_state",
        &[Oracle::Netns],
    ) {
        return;
    }
    let ns = Netns::bare();
    let mon = ns
        .run(lossless_sys::link::LinkMonitor::open)
        .expect("link monitor");
    let mut seen = Vec::new();

    ns.ip(&[
        "link",
        "add",
        "x0",
        "address",
        "02:00:00:00:01:00",
        "type",
        "veth",
        "peer",
        "name",
        "x1",
    ]);
    let created = wait_for(&mon, &mut seen, "x0 created", |e| {
        is_new(e, "x0", false, false)
    });
    let LinkEvent::New(x0) = created else {
        unreachable!()
    };
    assert_eq!(x0.mac, Some([2, 0, 0, 0, 1, 0]));
    assert_eq!(x0.mtu, Some(1500));

    ns.ip(&["link", "set", "x0", "up"]);
    // Up, but the peer is down: no carrier, not running.
    wait_for(&mon, &mut seen, "x0 admin up", |e| {
        is_new(e, "x0", true, false)
    });
    ns.ip(&["link", "set", "x1", "mtu", "9000", "up"]);
    wait_for(&mon, &mut seen, "x0 oper up", |e| {
        is_new(e, "x0", true, true)
    });

    let links = ns.run(dump_links).expect("dump");
    let find = |n: &str| -> LinkInfo {
        links
            .iter()
            .find(|l| l.name == n)
            .unwrap_or_else(|| panic!("{n} not in the dump {links:#?}"))
            .clone()
    };
    assert_eq!(
        find("x0"),
        LinkInfo {
            ifindex: x0.ifindex,
            name: "x0".into(),
            mac: Some([2, 0, 0, 0, 1, 0]),
            admin_up: true,
            oper_up: true,
            carrier: true,
            mtu: Some(1500),
            alias: None,
        }
    );
    let x1 = find("x1");
    assert!(x1.admin_up && x1.oper_up && x1.mtu == Some(9000) && x1.mac.is_some());
    // One link, asked of the kernel: the same as the dump says.
    let x0_now = ns
        .run(move || lossless_sys::link::get_link(x0.ifindex))
        .expect("get_link");
    assert_eq!(x0_now, find("x0"));
    assert!(matches!(
        ns.run(|| lossless_sys::link::get_link(999_999)),
        Err(lossless_sys::LinkError::Kernel { errno: 19 })
    ));
    let lo = find("lo");
    assert_eq!((lo.ifindex, lo.mac, lo.admin_up), (1, None, false));
    assert_eq!(links.len(), 3, "{links:#?}");

    ns.ip(&["link", "set", "x0", "down"]);
    wait_for(&mon, &mut seen, "x0 down", |e| {
        is_new(e, "x0", false, false)
    });
    ns.ip(&["link", "del", "x0"]);
    let del = wait_for(
        &mon,
        &mut seen,
        "x0 deleted",
        |e| matches!(e, LinkEvent::Del { name, .. } if name == "x0"),
    );
    assert_eq!(
        del,
        LinkEvent::Del {
            ifindex: x0.ifindex,
            name: "x0".into()
        }
    );
    // Deleting one end of a veth deletes the other.
    wait_for(
        &mon,
        &mut seen,
        "x1 deleted",
        |e| matches!(e, LinkEvent::Del { name, .. } if name == "x1"),
    );
    assert_eq!(ns.run(dump_links).unwrap().len(), 1);
}

#[test]
fn a_link_monitor_that_falls_behind_reports_overrun_then_keeps_working() {
    if !require(
        "a_link_monitor_that_falls_behind_reports_overrun_then_keeps_working",
        &[Oracle::Netns],
    ) {
        return;
    }
    let ns = Netns::bare();
    // The smallest buffer the kernel allows holds a couple of messages.
    let mon = ns
        .run(|| lossless_sys::link::LinkMonitor::with_rcvbuf(0))
        .unwrap();
    // (No dummy driver on every kernel: veth pairs, two links each.)
    for i in 0..6 {
        let (a, b) = (format!("d{i}"), format!("e{i}"));
        ns.ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]);
    }
    let mut overrun = false;
    let mut events = 0;
    loop {
        match mon.recv() {
            Ok(evs) => events += evs.len(),
            Err(LinkError::Overrun) => overrun = true,
            Err(e) if e.would_block() => break,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(overrun, "no overrun reported after {events} events");
    assert!(events < 12, "{events} events and an overrun?");
    // Still subscribed after the overrun (one small change: deleting a veth
    // would overrun this tiny buffer again).
    ns.ip(&["link", "set", "lo", "up"]);
    let mut seen = Vec::new();
    wait_for(
        &mon,
        &mut seen,
        "lo up",
        |e| matches!(e, LinkEvent::New(i) if i.name == "lo" && i.admin_up),
    );
}

#[test]
fn dcbnl_on_a_veth_is_unsupported_as_the_kernel_says() {
    if !require(
        "dcbnl_on_a_veth_is_unsupported_as_the_kernel_says",
        &[Oracle::Netns],
    ) {
        return;
    }
    let pair = Pair::new();
    pair.a.run(|| {
        let mut d = Dcbnl::open().unwrap();
        match d.get_state("va") {
            Err(DcbError::Unsupported { ifname, .. }) => assert_eq!(ifname, "va"),
            other => panic!("GSTATE on a veth: {other:?}"),
        }
        match d.set_pfc("va", [true; 8]) {
            Err(DcbError::Unsupported { .. }) => {}
            other => panic!("PFC_SCFG on a veth: {other:?}"),
        }
        match d.get_state("nosuch0") {
            Err(DcbError::NoDevice { ifname, .. }) => assert_eq!(ifname, "nosuch0"),
            other => panic!("GSTATE on a missing device: {other:?}"),
        }
        // The IEEE commands too: the kernel refuses before any driver op.
        match d.get_ieee("va") {
            Err(DcbError::Unsupported { .. }) => {}
            other => panic!("IEEE_GET on a veth: {other:?}"),
        }
        match d.set_dcb_buffer("va", &DcbBuffer::default()) {
            Err(DcbError::Unsupported { .. }) => {}
            other => panic!("IEEE_SET of a buffer on a veth: {other:?}"),
        }
        // The socket is still in step after errors.
        assert!(matches!(d.get_pfc("va"), Err(DcbError::Unsupported { .. })));
        match d.get_state("") {
            Err(DcbError::Invalid(_)) => {}
            other => panic!("empty name: {other:?}"),
        }
    });
}

/// Runs examples/dcbnl_probe.rs (compiled into this test binary as
/// `dcbnl_probe_child`) under lossless-testkit's emulated DCB driver, which
/// replies as net/dcb/dcbnl.c does for a DCB-capable driver; its state file
/// shows what our requests programmed.
#[test]
fn dcbnl_programs_an_emulated_dcb_driver() {
    if !require(
        "dcbnl_programs_an_emulated_dcb_driver",
        &[Oracle::Netns, Oracle::Gcc],
    ) {
        return;
    }
    let tmp = lossless_testkit::TempDir::new();
    let shim = lossless_testkit::ShimEnv::new(tmp.path(), &["va"]);
    let pair = Pair::new();

    let mut cmd = pair.a.command(std::env::current_exe().unwrap());
    cmd.args([
        "dcbnl_probe_child",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("LSYS_DCBNL_PROBE_IFNAME", "va");
    shim.apply(&mut cmd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "probe failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the child did not run:\n{stdout}"
    );

    let st = shim.state("va").expect("the driver state");
    let log = shim.log_text();
    let want: [(&str, &[u64]); 14] = [
        ("dcb_state", &[1]),
        ("cee_pfc_state", &[1]),
        ("cee_pfc_up", &[0, 0, 0, 1, 1, 0, 0, 0]),
        // lldpad programs exactly this for the same CEE setting (the CEE PG of
        // lossless-testkit's lldpad tests).
        ("cee_pgtx_up2tc", &[0, 0, 0, 0, 1, 1, 1, 2]),
        ("cee_pgtx_tc_pgid", &[0, 1, 2, 3, 4, 5, 6, 7]),
        ("cee_pgtx_tc_strict", &[0, 0, 2, 0, 0, 0, 0, 0]),
        ("cee_pgtx_tc_bw_pct", &[100, 100, 0, 0, 0, 0, 0, 0]),
        ("cee_pgtx_pg_bw_pct", &[25, 75, 0, 0, 0, 0, 0, 0]),
        ("cee_pgrx_up2tc", &[0, 0, 0, 0, 1, 1, 1, 2]),
        ("cee_pgrx_tc_pgid", &[0, 1, 2, 3, 4, 5, 6, 7]),
        ("cee_pgrx_tc_strict", &[0, 0, 2, 0, 0, 0, 0, 0]),
        ("cee_pgrx_tc_bw_pct", &[100, 100, 0, 0, 0, 0, 0, 0]),
        ("cee_pgrx_pg_bw_pct", &[25, 75, 0, 0, 0, 0, 0, 0]),
        ("ieee_pfc_delay", &[20269]),
    ];
    for (key, value) in want {
        assert_eq!(
            st.list(key),
            value,
            "{key} in the driver state:\n{st}\ndriver log:\n{log}\nprobe:\n{stdout}"
        );
    }
    let entries = shim.log();
    let find = |cmd: &str| {
        entries
            .iter()
            .find(|e| e.ifname == "va" && e.cmd == cmd)
            .unwrap_or_else(|| panic!("{cmd} not in the driver log:\n{log}"))
    };
    let ieee = find("IEEE_SET");
    assert_eq!(
        (
            ieee.field("pfc.en"),
            ieee.field("pfc.mbc"),
            ieee.field("pfc.delay")
        ),
        (Some("0x18"), Some("0"), Some("20269"))
    );
    for cmd in ["SSTATE", "PFC_SCFG", "PFC_SSTATE", "PGTX_SCFG", "PGRX_SCFG"] {
        assert!(find(cmd).ok(), "{cmd}: {log}");
    }
    assert_eq!(find("SET_ALL").result, "status=2", "{log}");
}

/// The child half of [`dcbnl_programs_an_emulated_dcb_driver`]; does nothing
/// unless `LSYS_DCBNL_PROBE_IFNAME` is set.
#[test]
#[ignore = "run by dcbnl_programs_an_emulated_dcb_driver under LD_PRELOAD"]
fn dcbnl_probe_child() {
    let Ok(ifname) = std::env::var("LSYS_DCBNL_PROBE_IFNAME") else {
        return;
    };
    let r = probe::run(&ifname).expect("probe");
    probe::print(&r);
    assert_eq!(
        r.set_all, 2,
        "the driver answers SET_ALL with 2 (changed, no reset)"
    );
    assert!(r.state && r.pfc_state);
    assert_eq!(r.pfc, probe::PFC);
    assert_eq!(r.pg_tx, r.pg_rx);
    assert_eq!(r.pg_tx.to_cee(), probe::PG);
    // Errors come back through the same path.
    let mut d = Dcbnl::open().unwrap();
    // IEEE: the PFC object comes back as written. The emulated driver has no
    // DCB buffer ops: no DCB_ATTR_DCB_BUFFER in IEEE_GET, and a buffer in
    // IEEE_SET is answered with status 0 and dropped, as the kernel does for
    // a driver without dcbnl_setbuffer; only reading back tells.
    d.set_ieee_pfc(&ifname, 0x18, 20269).unwrap();
    let ieee = d.get_ieee(&ifname).unwrap();
    let pfc = ieee.pfc.expect("the driver reports ieee_pfc");
    assert_eq!((pfc.cap, pfc.enabled, pfc.delay), (8, 0x18, 20269));
    assert_eq!(ieee.buffer, None);
    let buffer = DcbBuffer {
        prio2buffer: [0, 0, 0, 1, 1, 0, 0, 0],
        buffer_size: [65_536, 131_072, 0, 0, 0, 0, 0, 0],
        total_size: 0,
    };
    d.set_dcb_buffer(&ifname, &buffer).unwrap();
    assert_eq!(d.get_ieee(&ifname).unwrap().buffer, None);
    assert!(matches!(
        d.get_state("nosuch0"),
        Err(DcbError::NoDevice { .. })
    ));
}

/// Waits up to 2 s for `f` to stop saying `WouldBlock`.
fn retry_2s<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
            }
            other => return other,
        }
    }
}

#[test]
fn measurement_socket_timestamps_both_ways_and_sees_only_0x88b5() {
    use lossless_sys::timestamp::{realtime_ps, Clock, MeasureSocket, TimestampMode};
    if !require(
        "measurement_socket_timestamps_both_ways_and_sees_only_0x88b5",
        &[Oracle::Netns],
    ) {
        return;
    }
    let p = Pair::new();
    let open = |ns: &Netns, name: &'static str| {
        ns.run(|| MeasureSocket::open(if_nametoindex(name)?, name, TimestampMode::Auto))
            .expect("measurement socket")
    };
    let (ma, mb) = (open(&p.a, "va"), open(&p.b, "vb"));
    // veth has no PTP clock; it stamps in software both ways (veth_xmit calls
    // skb_tx_timestamp).
    assert_eq!(ma.clocks().rx, Clock::Software);
    assert_eq!(
        ma.clocks().tx,
        Clock::Software,
        "veth gives software TX timestamps"
    );
    // The kernel turns receive timestamps on a moment after the first socket asks
    // for them (a deferred static key): frames go across until one arrives stamped
    // (each one's transmit timestamp taken off the error queue), not a fixed wait.
    let (mut buf, mut echo) = (vec![0u8; 2048], vec![0u8; 2048]);
    let warm = eth(LLDP_DST, MAC_A, &[0x88b5], &[0x4c, 0x48, 1, 1, 0, 1, 0, 1]);
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        ma.send(&warm).expect("send");
        let (_, rx) = retry_2s(|| mb.recv(&mut buf)).expect("received");
        retry_2s(|| ma.recv_tx_timestamp(&mut echo)).expect("tx timestamp");
        if rx.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "no receive timestamp within 2 s");
    }
    // A PacketSocket for LLDP on the same port must not see measurement frames, and
    // the measurement socket must not see LLDP.
    let (la, _lb) = p.sockets();
    let before = realtime_ps();
    let frame = eth(LLDP_DST, MAC_A, &[0x88b5], &[0x4c, 0x48, 1, 1, 0, 1, 0, 0]);
    ma.send(&frame).expect("send");
    let (n, rx) = retry_2s(|| mb.recv(&mut buf)).expect("received");
    assert_eq!(&buf[..n], &frame[..]);
    let rx = rx.expect("a receive timestamp");
    let (m, tx) = retry_2s(|| ma.recv_tx_timestamp(&mut echo)).expect("tx timestamp");
    assert_eq!(
        &echo[..m],
        &frame[..],
        "the error queue returns the frame it stamped"
    );
    let after = realtime_ps();
    // Same clock (CLOCK_REALTIME), one host: before <= tx <= rx <= after.
    assert!(
        tx.wrapping_sub(before) < 1 << 63,
        "tx {tx} before the send {before}"
    );
    assert!(rx.wrapping_sub(tx) < 1 << 63, "rx {rx} before tx {tx}");
    assert!(
        after.wrapping_sub(rx) < 1 << 63,
        "rx {rx} after the read {after}"
    );
    assert!(rx - tx < 1_000_000_000, "veth crossing took {} ps", rx - tx);
    // LLDP reaches the LLDP socket only.
    let lldp = eth(LLDP_DST, MAC_B, &[0x88cc], &[0; 46]);
    let (_, lb2) = p.sockets();
    lb2.send(&lldp).expect("send lldp");
    assert_eq!(recv_frame(&la).expect("lldp on va"), lldp);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        ma.recv(&mut buf).map(|r| r.0).unwrap_err().kind(),
        io::ErrorKind::WouldBlock,
        "the measurement socket saw a non-0x88B5 frame"
    );
    assert_quiet(&la);
}

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The XDP path in losslessd, on veth in network namespaces:
//!
//! ```text
//!  ns hosts: gw2 ==== pe2-dc [PE2: xdp_dc, xdp_wan] pe2-wan ==== pe1-wan [PE1] pe1-dc ==== gw1 :ns hosts
//! ```
//!
//! Both PEs attach the program natively (veth); DC2-GW sends two legal PFC
//! frames and five illegal ones; DC1-GW receives exactly the legal ones with
//! PE1's source MAC, the illegal ones are dropped in XDP under their reasons,
//! and `relay show` says the XDP path runs. gw1 runs a pass-through XDP
//! program: a veth takes redirected frames only when its receiving end runs
//! XDP (or has GRO on).
//!
//! A DC gateway's check in XDP (`xdp_gateway`) runs on a veth of its own:
//!
//! ```text
//!  ns pe: pe ==== gw [gateway losslessd: xdp_gateway] :ns gw
//! ```

mod common;

use std::time::Duration;

use common::relay::{
    counts, illegal, legal_a, legal_b, priority3, rewritten, show, TIMES_B, VECTOR_B,
};
use common::*;
use lossless_relay::example::{
    self, Kind, DC1_GW, DC2_GW, DC2_GW_SYSTEM, PE1_DC, PE1_WAN, PE2_DC, PE2_WAN,
};
use lossless_relay::{GatewayConfig, RelaySection, XdpMode};
use lossless_sys::batch::{wait_any, BatchOptions, BatchSocket, Filter, RxBatch};
use lossless_sys::if_nametoindex;
use lossless_sys::netns::in_netns;
use lossless_sys::xdp::PassProgram;
use lossless_wire::MacAddr;
use std::os::fd::AsFd;

const WAIT: Duration = Duration::from_secs(10);

fn start(dir: &TempDir, ns: &Netns, n: u8, kind: Kind) -> Daemon {
    start_with(dir, ns, n, example::pe(n, kind))
}

fn start_with(dir: &TempDir, ns: &Netns, n: u8, mut pe: lossless_relay::RelayConfig) -> Daemon {
    // On veth the daemon attaches XDP only when told to (auto leaves veth alone: the
    // receiving ends here run the pass program that makes redirects land).
    pe.datapath.xdp = lossless_relay::XdpMode::On;
    start_section(dir, ns, &format!("pe{n}"), RelaySection::Pe(pe))
}

/// losslessd in `ns` running `relay`, its files under `dir`/`name`.
fn start_section(dir: &TempDir, ns: &Netns, name: &str, relay: RelaySection) -> Daemon {
    #[derive(serde::Serialize)]
    struct File {
        relay: RelaySection,
    }
    let conf = dir.path().join(format!("{name}.toml"));
    std::fs::write(&conf, toml::to_string(&File { relay }).unwrap()).unwrap();
    Daemon::start(
        ns,
        &dir.path().join(name),
        &["--config", conf.to_str().unwrap()],
    )
}

/// Whether the test runs (the oracles are there; then the program must
/// have been built).
fn can_run(test: &str) -> bool {
    if !require(test, &[Oracle::Netns, Oracle::Bpf]) {
        return false;
    }
    if let Err(why) = lossless_sys::xdp::object() {
        panic!("the relay's XDP program was not built: {why} (install clang and libbpf-dev)");
    }
    true
}

/// The namespaces and links, gw1 with its pass program; `None`: skipped.
fn topology(test: &str) -> Option<(Netns, Netns, Netns, TempDir, PassProgram)> {
    if !can_run(test) {
        return None;
    }
    let (pe2, pe1, hosts, dir) = (Netns::new(), Netns::new(), Netns::new(), TempDir::new());
    let mac = |m: MacAddr| m.to_string();
    Veth::new(&hosts, "gw2", &mac(DC2_GW), &pe2, "pe2-dc", &mac(PE2_DC));
    Veth::new(
        &pe2,
        "pe2-wan",
        &mac(PE2_WAN),
        &pe1,
        "pe1-wan",
        &mac(PE1_WAN),
    );
    Veth::new(&pe1, "pe1-dc", &mac(PE1_DC), &hosts, "gw1", &mac(DC1_GW));
    for (ns, i) in [
        (&hosts, "gw2"),
        (&pe2, "pe2-dc"),
        (&pe2, "pe2-wan"),
        (&pe1, "pe1-wan"),
        (&pe1, "pe1-dc"),
        (&hosts, "gw1"),
    ] {
        ns.ip(&["link", "set", i, "up"]);
    }
    let pass = in_netns(&hosts.name, || PassProgram::attach(if_nametoindex("gw1")?))
        .unwrap()
        .unwrap();
    for (ns, i) in [(&hosts, "gw2"), (&pe1, "pe1-dc"), (&hosts, "gw1")] {
        ns.wait_running(i);
    }
    Some((pe2, pe1, hosts, dir, pass))
}

fn relays_through_xdp(kind: Kind) {
    let Some((pe2, pe1, hosts, dir, _pass)) = topology("relay_xdp_veth") else {
        return;
    };
    let (d2, d1) = (start(&dir, &pe2, 2, kind), start(&dir, &pe1, 1, kind));
    for d in [&d2, &d1] {
        let s = wait_for(WAIT, "the XDP path to attach", || {
            let s = show(d);
            s.xdp.as_ref().filter(|x| x.running).map(|_| s.clone())
        });
        let x = s.xdp.unwrap();
        assert_eq!(x.mode.as_deref(), Some("native"), "{x:?}");
    }
    let (gen, sink) = in_netns(&hosts.name, || {
        let o = BatchOptions::default();
        let g = BatchSocket::open(if_nametoindex("gw2")?, Filter::Mpls, o)?;
        let s = BatchSocket::open(if_nametoindex("gw1")?, Filter::MacControl, o)?;
        std::io::Result::Ok((g, s))
    })
    .unwrap()
    .unwrap();

    // The frames of the AF_PACKET relay test (`relay.rs`): every pause time
    // and the pad set, one legal frame from the system MAC.
    let bad = illegal();
    let mut frames = vec![legal_a()];
    frames.extend(bad.iter().map(|b| b.frame.clone()));
    frames.push(legal_b());
    gen.send_batch(frames.iter().map(Vec::as_slice)).unwrap();

    let mut got = Vec::new();
    let mut batch = RxBatch::new(16, 2048);
    while got.len() < 2 && wait_any(&[sink.as_fd()], Some(WAIT)).unwrap() {
        sink.recv_batch(&mut batch).unwrap();
        got.extend(batch.iter().map(<[u8]>::to_vec));
    }
    assert_eq!(
        got,
        vec![rewritten(&legal_a()), rewritten(&legal_b())],
        "{kind:?}"
    );

    let s2 = wait_for(WAIT, "PE2's XDP counters", || {
        let s = show(&d2);
        (s.xdp.as_ref()?.egress_dropped == bad.len() as u64).then_some(s)
    });
    let x2 = s2.xdp.unwrap();
    assert_eq!((x2.egress_relayed, x2.egress_passed), (2, 0), "{x2:?}");
    let e = s2.pe.unwrap().egress;
    assert_eq!((e.received, e.relayed), (frames.len() as u64, 2), "{e:?}");
    assert_eq!(
        e.dropped,
        counts(&bad.iter().map(|b| b.reason).collect::<Vec<_>>()),
        "{kind:?}"
    );
    assert_eq!(
        s2.ports[0].received, 0,
        "the AF_PACKET path saw none of them"
    );
    let s1 = wait_for(WAIT, "PE1's XDP counters", || {
        let s = show(&d1);
        (s.xdp.as_ref()?.ingress_delivered == 2).then_some(s)
    });
    let i = s1.pe.unwrap().ingress;
    assert_eq!((i.received, i.delivered, i.dropped.total()), (2, 2, 0));
    let text = relay_show(&d2);
    assert!(
        text.contains("data path: XDP (native) on both interfaces: 2 relayed"),
        "{text}"
    );
}

#[test]
fn srv6_relays_through_xdp() {
    relays_through_xdp(Kind::Srv6);
}

#[test]
fn vxlan_over_ipv6_relays_through_xdp() {
    relays_through_xdp(Kind::Vxlan6);
}

#[test]
fn sr_mpls_relays_through_xdp() {
    relays_through_xdp(Kind::Mpls);
}

/// The storm ceiling in XDP: DC2-GW refreshes a 65,535-quanta pause every
/// 200 us for 120 ms at 1 Gb/s (33.5 ms pauses, a 10 ms margin for a
/// loaded machine's late wake-ups), then
/// resumes. PE2's program holds the refreshes back in its map and its relay
/// thread sends a pause from the map before the far side's lapses: DC1-GW
/// gets the first pause, a few refreshes less than a pause time apart, and
/// the resume; the AF_PACKET path sees only frames the program passed up
/// behind a due flush (how many is the machine's load; that there are no
/// others is the program's).
#[test]
fn the_storm_ceiling_runs_in_xdp() {
    let Some((pe2, pe1, hosts, dir, _pass)) = topology("relay_xdp_veth_storm") else {
        return;
    };
    let kind = Kind::Srv6;
    let mut cfg2 = example::pe(2, kind);
    cfg2.storm.max_per_second = Some(100);
    cfg2.storm.link_speed = "1G".into();
    cfg2.storm.refresh_before = "10ms".into();
    let (d2, d1) = (start_with(&dir, &pe2, 2, cfg2), start(&dir, &pe1, 1, kind));
    for d in [&d2, &d1] {
        wait_for(WAIT, "the XDP path to attach", || {
            show(d).xdp.filter(|x| x.running)
        });
    }
    let (gen, sink) = in_netns(&hosts.name, || {
        let o = BatchOptions::default();
        let g = BatchSocket::open(if_nametoindex("gw2")?, Filter::Mpls, o)?;
        let s = BatchSocket::open(if_nametoindex("gw1")?, Filter::MacControl, o)?;
        std::io::Result::Ok((g, s))
    })
    .unwrap()
    .unwrap();
    let (pause, resume) = (priority3(0xffff), priority3(0));
    let start = std::time::Instant::now();
    let mut sent = 0;
    while start.elapsed() < Duration::from_millis(120) {
        gen.send_batch([pause.as_slice()]).unwrap();
        sent += 1;
        std::thread::sleep(Duration::from_micros(200));
    }
    gen.send_batch([resume.as_slice()]).unwrap();
    sent += 1;

    let mut got: Vec<(std::time::Instant, Vec<u8>)> = Vec::new();
    let mut batch = RxBatch::new(64, 2048);
    while got.last().is_none_or(|(_, f)| f[24..26] != [0, 0])
        && wait_any(&[sink.as_fd()], Some(Duration::from_secs(2))).unwrap()
    {
        sink.recv_batch(&mut batch).unwrap();
        let now = std::time::Instant::now();
        got.extend(batch.iter().map(|f| (now, f.to_vec())));
    }
    let times: Vec<u16> = got
        .iter()
        .map(|(_, f)| u16::from_be_bytes([f[24], f[25]]))
        .collect();
    // The first pause, the refreshes sent from the map (about one per 31.5 ms
    // in 120 ms), the resume: a handful instead of every refresh.
    assert!(
        (4..=14).contains(&got.len()),
        "{} of {sent} frames crossed: pause times {times:?}",
        got.len()
    );
    assert_eq!(times[0], 0xffff, "the first pause crosses at once");
    assert_eq!(
        *times.last().unwrap(),
        0,
        "the final resume crosses: {times:?}"
    );
    // Each pause arrives before the one before it lapses (33.5 ms at 1 Gb/s).
    for w in got.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(
            gap < Duration::from_micros(33_500),
            "a gap of {gap:?}: {times:?}"
        );
    }
    let s2 = wait_for(WAIT, "PE2's counters", || {
        let s = show(&d2);
        let e = s.pe.as_ref()?.egress;
        (e.received == sent).then_some(s)
    });
    let e = s2.pe.as_ref().unwrap().egress;
    assert_eq!(e.relayed + e.suppressed, e.received, "{e:?}");
    assert!(
        e.flushed >= 2 && e.suppressed as usize >= sent as usize - 20,
        "{e:?}"
    );
    let storm = s2.pe.as_ref().unwrap().storm.clone().unwrap();
    assert_eq!(storm.priorities[3].counters.episodes, 1, "{storm:?}");
    // The AF_PACKET path read only what the program passed up because a held value
    // was due when the frame came (the program cannot send the flush; the relay
    // thread does, and then has the program admit the frame). How many that is
    // depends on how late the thread wakes (a loaded machine: a hundred and more of
    // the refreshes); that none came up any other way does not.
    let xdp = s2.xdp.as_ref().expect("the XDP path's counts");
    assert!(
        s2.ports[0].received <= xdp.egress_passed,
        "the AF_PACKET path got {} frames, the program passed up {}: {xdp:?}",
        s2.ports[0].received,
        xdp.egress_passed
    );
    let text = relay_show(&d2);
    assert!(
        text.contains("the storm ceiling's state in a BPF map"),
        "{text}"
    );
}

/// A DC gateway whose PE sends with DC2-GW's MACs (so the relay tests'
/// frames are its PE's): losslessd with `xdp` as given on the gateway's veth;
/// the PE side sends the two legal frames, the five illegal ones and a frame
/// that is not MAC Control, and a packet socket the test opens on the
/// gateway's interface reads what the host gets. With XDP the illegal frames
/// never reach it (dropped in XDP), the others do; with `off` they all do
/// (the packet socket path only counts). Either way `relay show --json`
/// counts the same.
fn gateway_checks(xdp: XdpMode) {
    if !can_run("relay_xdp_veth_gateway") {
        return;
    }
    let (pe, gw, dir) = (Netns::new(), Netns::new(), TempDir::new());
    let mac = |m: MacAddr| m.to_string();
    Veth::new(&pe, "pe", &mac(PE1_DC), &gw, "gw", &mac(DC1_GW));
    for (ns, i) in [(&pe, "pe"), (&gw, "gw")] {
        ns.ip(&["link", "set", i, "up"]);
    }
    for (ns, i) in [(&pe, "pe"), (&gw, "gw")] {
        ns.wait_running(i);
    }
    let mut cfg = GatewayConfig {
        interface: Some("gw".into()),
        pe_port_mac: DC2_GW,
        pe_system_mac: Some(DC2_GW_SYSTEM),
        buffer: None,
        datapath: lossless_relay::Datapath::default(),
    };
    cfg.datapath.xdp = xdp;
    let d = start_section(&dir, &gw, "gw", RelaySection::Gateway(cfg));
    let s = wait_for(WAIT, "the data path to start", || {
        let s = show(&d);
        let ready = match xdp {
            XdpMode::Off => s.ports[0].open,
            _ => s.xdp.as_ref().is_some_and(|x| x.running),
        };
        ready.then_some(s)
    });
    if xdp != XdpMode::Off {
        // `auto` too: the gateway's program redirects nothing, veth is fine.
        assert_eq!(s.xdp.unwrap().mode.as_deref(), Some("native"));
    }
    let (gen, host) = in_netns(&pe.name, || {
        BatchSocket::open(if_nametoindex("pe")?, Filter::Mpls, BatchOptions::default())
    })
    .unwrap()
    .and_then(|g| {
        let h = in_netns(&gw.name, || {
            BatchSocket::open(if_nametoindex("gw")?, Filter::All, BatchOptions::default())
        })
        .unwrap()?;
        Ok((g, h))
    })
    .unwrap();

    let bad = illegal();
    let mut other = legal_a();
    other[12..14].copy_from_slice(&[0x88, 0xb5]); // local experimental
    let mut frames = vec![legal_a()];
    frames.extend(bad.iter().map(|b| b.frame.clone()));
    frames.push(legal_b());
    frames.push(other.clone());
    gen.send_batch(frames.iter().map(Vec::as_slice)).unwrap();

    // Everything sent before `other` arrived before it (one queue).
    let mut got = Vec::new();
    let mut batch = RxBatch::new(64, 2048);
    while !got.contains(&other) && wait_any(&[host.as_fd()], Some(WAIT)).unwrap() {
        host.recv_batch(&mut batch).unwrap();
        got.extend(
            batch
                .iter()
                .filter(|f| frames.iter().any(|s| s[..] == **f))
                .map(<[u8]>::to_vec),
        );
    }
    let expected = if xdp == XdpMode::Off {
        frames.clone()
    } else {
        vec![legal_a(), legal_b(), other]
    };
    assert_eq!(got, expected, "{xdp:?}: what the gateway's host got");

    let s = wait_for(WAIT, "the gateway's counters", || {
        let out = d.cli(&["relay", "show", "--json"]);
        let s: lossless_node::relay::RelayShow = serde_json::from_slice(&out.stdout).unwrap();
        (s.gateway.as_ref()?.counters.received == frames.len() as u64 - 1).then_some(s)
    });
    let g = s.gateway.unwrap();
    assert_eq!(g.counters.accepted, 2, "{g:?}");
    assert_eq!(
        g.counters.dropped,
        counts(&bad.iter().map(|b| b.reason).collect::<Vec<_>>()),
        "{xdp:?}"
    );
    let last = g.last_accepted.unwrap();
    assert_eq!(
        (last.src, u16::from(last.class_enable), last.quanta),
        (DC2_GW_SYSTEM, VECTOR_B, TIMES_B)
    );
    assert!(
        last.at_s > 0.0 && last.at_s < s.uptime_s,
        "{last:?} {}",
        s.uptime_s
    );
    let x = s.xdp.unwrap();
    let text = relay_show(&d);
    if xdp == XdpMode::Off {
        assert!(!x.running, "{x:?}");
        assert_eq!(s.ports[0].received, frames.len() as u64 - 1);
        assert!(
            text.contains("data path: AF_PACKET only; XDP off in the configuration"),
            "{text}"
        );
    } else {
        assert!(x.running, "{x:?}");
        assert_eq!(s.ports[0].received, 0, "the packet socket read none");
        assert!(
            s.ports[0].open && s.ports[0].error.is_none(),
            "served by the program: {:?}",
            s.ports[0]
        );
        assert!(
            text.contains("data path: XDP (native) on the interface facing the PE"),
            "{text}"
        );
    }
}

#[test]
fn the_gateway_drops_illegal_pfc_in_xdp() {
    gateway_checks(XdpMode::Auto);
}

#[test]
fn the_gateway_without_xdp_counts_the_same() {
    gateway_checks(XdpMode::Off);
}

/// `relay show` as the operator reads it (printed too with `LOSSLESS_PRINT_SHOW` set,
/// for the docs).
fn relay_show(d: &Daemon) -> String {
    let text = String::from_utf8_lossy(&d.cli(&["relay", "show"]).stdout).into_owned();
    if std::env::var_os("LOSSLESS_PRINT_SHOW").is_some() {
        eprintln!("{text}");
    }
    text
}

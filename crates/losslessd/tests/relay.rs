#![allow(clippy::unwrap_used)]
//! The PFC relay of draft-he-rtgwg-wan-pfc-00 run by losslessd in network
//! namespaces, against the Linux kernel and tshark as oracles.
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
//! kernel has no MPLS forwarding). The kernel also stands in for a PE:
//! `seg6local End.DX2` and a `vxlan` device decapsulate what our PE sends;
//! `seg6 mode l2encap` and a `vxlan` device encapsulate what our PE takes.

mod common;

use std::net::UdpSocket;
use std::path::Path;
use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_node::relay::RelayShow;
use lossless_relay::example::{
    self, Kind, DC1_GW, DC2_GW, DC2_GW_SYSTEM, PE1_DC, PE1_WAN, PE2_DC, PE2_WAN,
};
use lossless_relay::{
    DropCounts, DropReason, GatewayConfig, RelayConfig, RelaySection, TunnelConfig,
};
use lossless_sys::batch::{BatchOptions, BatchSocket, Filter, RxBatch};
use lossless_sys::if_nametoindex;
use lossless_sys::netns::in_netns;
use lossless_wire::tunnel::{Encap, IpProtocol, ParseOptions, TunnelFrame};
use lossless_wire::MacAddr;

/// The transit router's interfaces toward PE1 and PE2.
const T1: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 1]);
const T2: MacAddr = MacAddr([2, 0, 0, 0, 0xf0, 2]);
/// PE1's SRv6 End.DX2 SID (as in `lossless_relay::example`).
const PE1_SID: &str = "fc00::e1:d2";

const WAIT: Duration = Duration::from_secs(10);

// ---------------------------------------------------------------------------
// Frames

/// A PFC frame as draft-he-rtgwg-wan-pfc-00's figure 1 draws it: 60 octets without FCS.
/// Every pause time is set (the relay must carry disabled ones too) and the
/// pad is not zero, so "byte for byte" covers all 60 octets.
fn pfc(dst: MacAddr, src: MacAddr, opcode: u16, vector: u16, times: [u16; 8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&0x8808u16.to_be_bytes());
    f.extend_from_slice(&opcode.to_be_bytes());
    f.extend_from_slice(&vector.to_be_bytes());
    for t in times {
        f.extend_from_slice(&t.to_be_bytes());
    }
    f.extend((0..26u8).map(|i| 0xa0 ^ i));
    f
}

const TIMES_A: [u16; 8] = [
    0x0101, 0xffff, 0x1234, 0x8000, 0x0001, 0x4242, 0x0000, 0xbeef,
];
const TIMES_B: [u16; 8] = [7, 0, 65535, 3, 0, 100, 2, 1];
/// Priorities 0, 3, 5 and 7.
const VECTOR_A: u16 = 0x00a9;
/// Priority 3 only.
const VECTOR_B: u16 = 0x0008;

/// Legal, from DC2-GW's port MAC.
fn legal_a() -> Vec<u8> {
    pfc(MacAddr::MAC_CONTROL, DC2_GW, 0x0101, VECTOR_A, TIMES_A)
}

/// Legal, from DC2-GW's system MAC ("some vendors also use device system MAC
/// address").
fn legal_b() -> Vec<u8> {
    pfc(
        MacAddr::MAC_CONTROL,
        DC2_GW_SYSTEM,
        0x0101,
        VECTOR_B,
        TIMES_B,
    )
}

/// A frame PE2 must refuse, the reason it must count, and the tshark field
/// that shows what is wrong with it.
struct Illegal {
    frame: Vec<u8>,
    reason: DropReason,
    field: &'static str,
    value: String,
}

fn illegal() -> Vec<Illegal> {
    let stranger = MacAddr([2, 0, 0, 0, 0xd2, 0x99]);
    let mut short = legal_a();
    short.truncate(34); // every field, no pad
    let bad = |frame, reason, field, value: &str| Illegal {
        frame,
        reason,
        field,
        value: value.to_string(),
    };
    vec![
        bad(
            pfc(PE2_DC, DC2_GW, 0x0101, VECTOR_A, TIMES_A),
            DropReason::BadDmac,
            "eth.dst",
            &PE2_DC.to_string(),
        ),
        bad(
            pfc(MacAddr::MAC_CONTROL, stranger, 0x0101, VECTOR_A, TIMES_A),
            DropReason::BadSmac,
            "eth.src",
            &stranger.to_string(),
        ),
        bad(short, DropReason::ShortFrame, "frame.len", "34"),
        // 802.3x PAUSE: pause_time 0xffff where PFC's vector would be.
        bad(
            pfc(MacAddr::MAC_CONTROL, DC2_GW, 0x0001, 0xffff, [0; 8]),
            DropReason::NotPfc,
            "macc.opcode",
            "0x0001",
        ),
        bad(
            pfc(MacAddr::MAC_CONTROL, DC2_GW, 0x0101, 0x0108, TIMES_A),
            DropReason::ClassVectorReserved,
            "macc.cbfc.enbv",
            "0x0108",
        ),
    ]
}

/// `frame` as PE1 must deliver it: its source MAC replaced by PE1's DC MAC.
fn rewritten(frame: &[u8]) -> Vec<u8> {
    let mut f = frame.to_vec();
    f[6..12].copy_from_slice(&PE1_DC.0);
    f
}

fn counts(reasons: &[DropReason]) -> DropCounts {
    let mut c = DropCounts::default();
    for r in reasons {
        c.add(*r);
    }
    c
}

// ---------------------------------------------------------------------------
// Namespaces

/// How the PEs' WAN sides meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wan {
    /// Through `transit`, a kernel IPv4/IPv6 router.
    Transit,
    /// One veth between the PEs.
    Direct,
}

/// The five namespaces and their links, addressed, up and passing frames.
/// Who plays each PE (losslessd or the kernel) is up to the test.
struct Lab {
    dc2: Netns,
    pe2: Netns,
    transit: Option<Netns>,
    pe1: Netns,
    dc1: Netns,
    dir: TempDir,
}

impl Lab {
    fn new(wan: Wan) -> Lab {
        let dir = TempDir::new();
        let (dc2, pe2, pe1, dc1) = (Netns::new(), Netns::new(), Netns::new(), Netns::new());
        let mac = |m: MacAddr| m.to_string();
        Veth::new(&dc2, "gw2", &mac(DC2_GW), &pe2, "pe2-dc", &mac(PE2_DC));
        Veth::new(&pe1, "pe1-dc", &mac(PE1_DC), &dc1, "gw1", &mac(DC1_GW));
        let transit = match wan {
            Wan::Direct => {
                let (a, b) = (mac(PE2_WAN), mac(PE1_WAN));
                Veth::new(&pe2, "pe2-wan", &a, &pe1, "pe1-wan", &b);
                None
            }
            Wan::Transit => {
                let t = Netns::new();
                Veth::new(&pe2, "pe2-wan", &mac(PE2_WAN), &t, "t2", &mac(T2));
                Veth::new(&pe1, "pe1-wan", &mac(PE1_WAN), &t, "t1", &mac(T1));
                // The PEs' WAN sides have addresses so that the router's
                // neighbour discovery and ARP find them.
                ip(&pe2, "addr add fd00:2::2/64 dev pe2-wan nodad");
                ip(&pe2, "addr add 192.168.2.2/24 dev pe2-wan");
                ip(&pe1, "addr add fd00:1::1/64 dev pe1-wan nodad");
                ip(&pe1, "addr add 192.168.1.1/24 dev pe1-wan");
                ip(&t, "addr add fd00:2::f/64 dev t2 nodad");
                ip(&t, "addr add 192.168.2.15/24 dev t2");
                ip(&t, "addr add fd00:1::f/64 dev t1 nodad");
                ip(&t, "addr add 192.168.1.15/24 dev t1");
                Some(t)
            }
        };
        let lab = Lab {
            dc2,
            pe2,
            transit,
            pe1,
            dc1,
            dir,
        };
        let mut links: Vec<(&Netns, &str)> = vec![
            (&lab.dc2, "gw2"),
            (&lab.pe2, "pe2-dc"),
            (&lab.pe2, "pe2-wan"),
            (&lab.pe1, "pe1-wan"),
            (&lab.pe1, "pe1-dc"),
            (&lab.dc1, "gw1"),
        ];
        if let Some(t) = &lab.transit {
            links.extend([(t, "t1"), (t, "t2")]);
        }
        up(&links);
        if let Some(t) = &lab.transit {
            t.sysctl("net.ipv6.conf.all.forwarding=1");
            t.sysctl("net.ipv4.ip_forward=1");
            // Each PE's SRv6 SID and VXLAN endpoints (example.rs) behind it.
            for (dst, via, dev) in [
                (PE1_SID, "fd00:1::1", "t1"),
                ("fc00::1", "fd00:1::1", "t1"),
                ("10.0.0.1", "192.168.1.1", "t1"),
                ("fc00::e2:d2", "fd00:2::2", "t2"),
                ("fc00::2", "fd00:2::2", "t2"),
                ("10.0.0.2", "192.168.2.2", "t2"),
            ] {
                ip(t, &format!("route add {dst} via {via} dev {dev}"));
            }
        }
        lab
    }

    /// PE `n`'s relay configuration for `kind` with this lab's next hop.
    /// The AF_PACKET path: these tests read every link with packet sockets
    /// in the receiving namespace, which an XDP program on that interface
    /// would bypass (`relay_xdp_veth.rs` runs the XDP path).
    fn pe_config(&self, n: u8, kind: Kind) -> RelayConfig {
        let mut cfg = example::pe(n, kind);
        cfg.datapath.xdp = lossless_relay::XdpMode::Off;
        if self.transit.is_some() {
            cfg.wan.next_hop_mac = if n == 1 { T1 } else { T2 };
        }
        cfg
    }

    /// losslessd with `[relay]` = `section` in `ns`.
    fn daemon(&self, ns: &Netns, name: &str, section: RelaySection) -> Daemon {
        #[derive(serde::Serialize)]
        struct File<'a> {
            relay: &'a RelaySection,
        }
        let text = toml::to_string(&File { relay: &section }).unwrap();
        let conf = self.dir.path().join(format!("{name}.toml"));
        std::fs::write(&conf, &text).unwrap();
        let d = Daemon::start(
            ns,
            &self.dir.path().join(name),
            &["--config", conf.to_str().unwrap()],
        );
        wait_for(WAIT, &format!("{name}'s relay ports to open"), || {
            let s = show(&d);
            s.ports.iter().all(|p| p.open).then_some(())
        });
        d
    }

    /// Our PE `n` for `kind`.
    fn our_pe(&self, n: u8, kind: Kind) -> Daemon {
        let ns = if n == 1 { &self.pe1 } else { &self.pe2 };
        let cfg = self.pe_config(n, kind);
        self.daemon(ns, &format!("pe{n}"), RelaySection::Pe(cfg))
    }

    /// DC1-GW's check of what PE1 forwards.
    fn gateway(&self) -> Daemon {
        let cfg = GatewayConfig {
            interface: Some("gw1".into()),
            pe_port_mac: PE1_DC,
            pe_system_mac: None,
            buffer: None,
        };
        self.daemon(&self.dc1, "gw1", RelaySection::Gateway(cfg))
    }
}

/// `ip -n NS` with `cmd` split at spaces.
fn ip(ns: &Netns, cmd: &str) {
    ns.ip(&cmd.split_whitespace().collect::<Vec<_>>());
}

/// `devs` up, and passing frames.
fn up(devs: &[(&Netns, &str)]) {
    for (ns, dev) in devs {
        ns.ip(&["link", "set", dev, "up"]);
    }
    for (ns, dev) in devs {
        ns.wait_running(dev);
    }
}

fn show(d: &Daemon) -> RelayShow {
    let v = d.call(&Request::RelayShow);
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("relay show: {e}: {v}"))
}

// ---------------------------------------------------------------------------
// Packet sockets in the namespaces

/// A packet socket on one interface of a namespace that keeps what it reads.
struct Port {
    label: &'static str,
    sock: BatchSocket,
    rx: RxBatch,
    frames: Vec<Vec<u8>>,
}

impl Port {
    fn open(label: &'static str, ns: &Netns, dev: &str, filter: Filter) -> Port {
        let sock = in_netns(&ns.name, || {
            BatchSocket::open(if_nametoindex(dev)?, filter, BatchOptions::default())
        })
        .and_then(|r| r)
        .unwrap_or_else(|e| panic!("packet socket on {dev} in {}: {e}", ns.name));
        Port {
            label,
            sock,
            rx: RxBatch::new(64, 2048),
            frames: Vec::new(),
        }
    }

    /// Everything read so far.
    fn poll(&mut self) -> &[Vec<u8>] {
        while self.sock.recv_batch(&mut self.rx).unwrap() > 0 {
            self.frames.extend(self.rx.iter().map(<[u8]>::to_vec));
        }
        &self.frames
    }

    /// Waits until `n` frames were read.
    fn wait(&mut self, n: usize) -> Vec<Vec<u8>> {
        let label = self.label;
        wait_for(WAIT, &format!("{n} frame(s) on {label}"), || {
            (self.poll().len() >= n).then_some(())
        });
        self.frames.clone()
    }

    fn send(&self, frame: &[u8]) {
        assert_eq!(self.sock.send_batch([frame]).unwrap(), 1);
    }
}

fn wan_filter(kind: Kind) -> Filter {
    match kind {
        Kind::Srv6 | Kind::Srv6Reduced => Filter::Srv6,
        Kind::Vxlan4 | Kind::Vxlan6 => Filter::Udp { port: 4789 },
        Kind::Mpls => Filter::Mpls,
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

// ---------------------------------------------------------------------------
// tshark

const FIELDS: &[&str] = &[
    "frame.len",
    "frame.protocols",
    "eth.dst",
    "eth.src",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.tclass.dscp",
    "ipv6.hlim",
    "ipv6.routing.type",
    "ipv6.routing.segleft",
    "ipv6.routing.srh.addr",
    "ipv6.routing.nxt",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.ttl",
    "ip.checksum.status",
    "udp.dstport",
    "udp.checksum.status",
    "vxlan.flag_i",
    "vxlan.vni",
    "mpls.label",
    "mpls.exp",
    "mpls.bottom",
    "macc.opcode",
    "macc.cbfc.enbv",
    "macc.cbfc.pause_time.c0",
    "macc.cbfc.pause_time.c1",
    "macc.cbfc.pause_time.c2",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
    "macc.cbfc.pause_time.c5",
    "macc.cbfc.pause_time.c6",
    "macc.cbfc.pause_time.c7",
];

/// tshark's decode of one frame: field name to its values, comma-joined
/// (outer layer first).
struct Row {
    label: &'static str,
    frame: Vec<u8>,
    fields: Vec<String>,
}

impl Row {
    fn get(&self, name: &str) -> &str {
        let i = FIELDS
            .iter()
            .position(|f| *f == name)
            .expect("field listed");
        &self.fields[i]
    }

    #[track_caller]
    fn expect(&self, name: &str, want: &str) {
        assert_eq!(
            self.get(name),
            want,
            "tshark's {name} on {} for {}",
            self.label,
            hex(&self.frame)
        );
    }

    /// The PFC fields of `frame` (a PFC frame as sent, figure 1), as tshark
    /// must show them for the last (innermost) MAC Control layer.
    #[track_caller]
    fn expect_pfc(&self, frame: &[u8]) {
        let word = |at: usize| u16::from_be_bytes([frame[at], frame[at + 1]]);
        let last = |name: &str| self.get(name).rsplit(',').next().unwrap_or("").to_string();
        let show = |name: &str, want: String| {
            assert_eq!(
                last(name),
                want,
                "tshark's {name} on {} for {}",
                self.label,
                hex(&self.frame)
            );
        };
        show("eth.dst", mac(&frame[0..6]));
        show("eth.src", mac(&frame[6..12]));
        show("macc.opcode", format!("0x{:04x}", word(14)));
        show("macc.cbfc.enbv", format!("0x{:04x}", word(16)));
        for p in 0..8 {
            show(
                &format!("macc.cbfc.pause_time.c{p}"),
                word(18 + 2 * p).to_string(),
            );
        }
    }
}

fn mac(b: &[u8]) -> String {
    MacAddr(b.try_into().unwrap()).to_string()
}

/// Writes `frames` to one pcap (Ethernet) and returns tshark's decode of
/// each, in order.
fn tshark(dir: &Path, frames: &[(&'static str, Vec<u8>)]) -> Vec<Row> {
    let path = dir.join(format!("{}.pcap", unique("links")));
    let bytes: Vec<&[u8]> = frames.iter().map(|(_, f)| f.as_slice()).collect();
    lossless_testkit::write_pcap(&path, &bytes);
    let decoded = lossless_testkit::tshark_fields(
        &path,
        &[
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "udp.check_checksum:TRUE",
        ],
        FIELDS,
    );
    let text = decoded
        .rows
        .iter()
        .map(|r| r.join("|"))
        .collect::<Vec<_>>()
        .join("\n");
    let rows: Vec<Row> = decoded
        .rows
        .into_iter()
        .zip(frames)
        .map(|(fields, (label, frame))| Row {
            label,
            frame: frame.clone(),
            fields,
        })
        .collect();
    assert_eq!(
        rows.len(),
        frames.len(),
        "tshark decoded every frame:\n{text}"
    );
    for r in &rows {
        assert_eq!(r.fields.len(), FIELDS.len(), "{text}");
    }
    rows
}

/// What tshark must show of the tunnel headers of a frame PE2 sends with
/// `tunnel` (its configuration): the draft's highest-priority marking (DSCP
/// 48, MPLS TC 7) and the configured addresses, SIDs and labels. `routed`:
/// after the transit router (TTL / hop limit one less).
#[track_caller]
fn expect_tunnel(r: &Row, tunnel: &TunnelConfig, routed: bool) {
    let hops = if routed { "63" } else { "64" };
    match tunnel {
        TunnelConfig::Srv6 {
            source,
            segments,
            reduced,
            ..
        } => {
            let sid = segments[segments.len() - 1].to_string();
            r.expect("ipv6.src", &source.to_string());
            r.expect("ipv6.dst", &sid);
            r.expect("ipv6.tclass.dscp", "48");
            r.expect("ipv6.hlim", hops);
            if *reduced {
                r.expect("frame.protocols", "eth:ethertype:ipv6:eth:ethertype:macc");
                r.expect("ipv6.routing.type", "");
            } else {
                r.expect(
                    "frame.protocols",
                    "eth:ethertype:ipv6:ipv6.routing:eth:ethertype:macc",
                );
                r.expect("ipv6.routing.type", "4");
                r.expect("ipv6.routing.segleft", "0");
                r.expect("ipv6.routing.srh.addr", &sid);
                r.expect("ipv6.routing.nxt", "143");
            }
        }
        TunnelConfig::Vxlan {
            source,
            destination,
            vni,
            port,
            ..
        } => {
            let ip = if source.is_ipv4() { "ip" } else { "ipv6" };
            r.expect(
                "frame.protocols",
                &format!("eth:ethertype:{ip}:udp:vxlan:eth:ethertype:macc"),
            );
            r.expect(&format!("{ip}.src"), &source.to_string());
            r.expect(&format!("{ip}.dst"), &destination.to_string());
            if source.is_ipv4() {
                r.expect("ip.dsfield.dscp", "48");
                r.expect("ip.ttl", hops);
                r.expect("ip.checksum.status", "1");
            } else {
                r.expect("ipv6.tclass.dscp", "48");
                r.expect("ipv6.hlim", hops);
            }
            r.expect("udp.dstport", &port.to_string());
            r.expect("udp.checksum.status", "1");
            r.expect("vxlan.flag_i", "1");
            r.expect("vxlan.vni", &vni.to_string());
        }
        TunnelConfig::SrMpls { labels, .. } => {
            r.expect(
                "frame.protocols",
                "eth:ethertype:mpls:pwethheuristic:pwethcw:eth:ethertype:macc",
            );
            let joined = |f: &dyn Fn(usize) -> String| {
                (0..labels.len()).map(f).collect::<Vec<_>>().join(",")
            };
            r.expect("mpls.label", &joined(&|i| labels[i].to_string()));
            r.expect("mpls.exp", &joined(&|_| "7".into()));
            let bottom = |i: usize| u8::from(i + 1 == labels.len()).to_string();
            r.expect("mpls.bottom", &joined(&bottom));
        }
    }
}

/// The inner frame of a tunnel frame, by our decoder (tshark checks the same
/// frames independently).
fn inner(frame: &[u8]) -> Vec<u8> {
    TunnelFrame::parse(frame, &ParseOptions::default())
        .unwrap_or_else(|e| panic!("{e}: {}", hex(frame)))
        .inner
        .to_vec()
}

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

// ---------------------------------------------------------------------------
// The kernel as the other PE

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
fn kernel_end_dx2_decapsulates(kind: Kind) {
    let lab = Lab::new(Wan::Transit);
    let k = &lab.pe1;
    k.sysctl("net.ipv6.conf.all.forwarding=1");
    ip(
        k,
        &format!("-6 route add {PE1_SID} encap seg6local action End.DX2 oif pe1-dc dev pe1-wan"),
    );
    let pe2 = lab.our_pe(2, kind);
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
        kernel_end_dx2_decapsulates(Kind::Srv6);
    }
}

#[test]
fn kernel_end_dx2_decapsulates_our_reduced_srv6() {
    if require(
        "kernel_end_dx2_decapsulates_our_reduced_srv6",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_end_dx2_decapsulates(Kind::Srv6Reduced);
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
fn kernel_vxlan_decapsulates(kind: Kind) {
    let lab = Lab::new(Wan::Transit);
    let [pe1_vtep, pe2_vtep, via, _] = vteps(kind);
    kernel_vtep(&lab.pe1, pe1_vtep, pe2_vtep, via, "pe1-wan");
    let pe2 = lab.our_pe(2, kind);
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
        kernel_vxlan_decapsulates(Kind::Vxlan4);
    }
}

#[test]
fn kernel_vxlan_decapsulates_our_pe_over_ipv6() {
    if require(
        "kernel_vxlan_decapsulates_our_pe_over_ipv6",
        &[Oracle::Netns, Oracle::Tshark],
    ) {
        kernel_vxlan_decapsulates(Kind::Vxlan6);
    }
}

//! The relay lab's network namespaces (DC2-GW, PE2, an optional transit
//! router, PE1, DC1-GW) and their links, losslessd with a `[relay]` section in
//! each role, and packet sockets that read a link in its receiving namespace.

use lossless_node::protocol::Request;
use lossless_node::relay::RelayShow;
use lossless_relay::example::{self, Kind, DC1_GW, DC2_GW, PE1_DC, PE1_WAN, PE2_DC, PE2_WAN};
use lossless_relay::{GatewayConfig, RelayConfig, RelaySection};
use lossless_sys::batch::{BatchOptions, BatchSocket, Filter, RxBatch};
use lossless_sys::if_nametoindex;
use lossless_sys::netns::in_netns;
use lossless_sys::xdp::PassProgram;
use lossless_wire::MacAddr;

use super::{PE1_SID, T1, T2, WAIT};
use crate::common::{wait_for, Daemon, Netns, TempDir, Veth};

/// How the PEs' WAN sides meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wan {
    /// Through `transit`, a kernel IPv4/IPv6 router.
    Transit,
    /// One veth between the PEs.
    Direct,
}

/// The five namespaces and their links, addressed, up and passing frames.
/// Who plays each PE (losslessd or the kernel) is up to the test.
pub struct Lab {
    pub dc2: Netns,
    pub pe2: Netns,
    pub transit: Option<Netns>,
    pub pe1: Netns,
    pub dc1: Netns,
    pub dir: TempDir,
}

impl Lab {
    pub fn new(wan: Wan) -> Lab {
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
    pub fn pe_config(&self, n: u8, kind: Kind) -> RelayConfig {
        let mut cfg = example::pe(n, kind);
        cfg.datapath.xdp = lossless_relay::XdpMode::Off;
        if self.transit.is_some() {
            cfg.wan.next_hop_mac = if n == 1 { T1 } else { T2 };
        }
        cfg
    }

    /// losslessd with `[relay]` = `section` in `ns`.
    pub fn daemon(&self, ns: &Netns, name: &str, section: RelaySection) -> Daemon {
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
    pub fn our_pe(&self, n: u8, kind: Kind) -> Daemon {
        let ns = if n == 1 { &self.pe1 } else { &self.pe2 };
        let cfg = self.pe_config(n, kind);
        self.daemon(ns, &format!("pe{n}"), RelaySection::Pe(cfg))
    }

    /// Our PE 2 for `kind` on its XDP path (`xdp = "on"`, attached natively),
    /// its WAN side's peer through the transit router (`t2`) running a
    /// pass-through program: a veth takes redirected frames only when its
    /// receiving end runs XDP. Keep the program as long as the PE.
    pub fn our_pe2_xdp(&self, kind: Kind) -> (Daemon, PassProgram) {
        let t = self
            .transit
            .as_ref()
            .expect("the XDP lab has a transit router");
        let pass = in_netns(&t.name, || PassProgram::attach(if_nametoindex("t2")?))
            .unwrap()
            .unwrap();
        let mut cfg = self.pe_config(2, kind);
        cfg.datapath.xdp = lossless_relay::XdpMode::On;
        let d = self.daemon(&self.pe2, "pe2", RelaySection::Pe(cfg));
        wait_for(WAIT, "PE2's XDP path", || {
            let x = show(&d).xdp?;
            (x.running && x.mode.as_deref() == Some("native")).then_some(())
        });
        (d, pass)
    }

    /// DC1-GW's check of what PE1 forwards.
    pub fn gateway(&self) -> Daemon {
        let cfg = GatewayConfig {
            interface: Some("gw1".into()),
            pe_port_mac: PE1_DC,
            pe_system_mac: None,
            buffer: None,
            // The AF_PACKET path, as the PEs' here.
            datapath: lossless_relay::Datapath {
                xdp: lossless_relay::XdpMode::Off,
                ..lossless_relay::Datapath::default()
            },
        };
        self.daemon(&self.dc1, "gw1", RelaySection::Gateway(cfg))
    }
}

/// `ip -n NS` with `cmd` split at spaces.
pub fn ip(ns: &Netns, cmd: &str) {
    ns.ip(&cmd.split_whitespace().collect::<Vec<_>>());
}

/// `devs` up, and passing frames.
pub fn up(devs: &[(&Netns, &str)]) {
    for (ns, dev) in devs {
        ns.ip(&["link", "set", dev, "up"]);
    }
    for (ns, dev) in devs {
        ns.wait_running(dev);
    }
}

pub fn show(d: &Daemon) -> RelayShow {
    let v = d.call(&Request::RelayShow);
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("relay show: {e}: {v}"))
}

/// A packet socket on one interface of a namespace that keeps what it reads.
pub struct Port {
    pub label: &'static str,
    pub sock: BatchSocket,
    pub rx: RxBatch,
    pub frames: Vec<Vec<u8>>,
}

impl Port {
    pub fn open(label: &'static str, ns: &Netns, dev: &str, filter: Filter) -> Port {
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
    pub fn poll(&mut self) -> &[Vec<u8>] {
        while self.sock.recv_batch(&mut self.rx).unwrap() > 0 {
            self.frames.extend(self.rx.iter().map(<[u8]>::to_vec));
        }
        &self.frames
    }

    /// Waits until `n` frames were read.
    pub fn wait(&mut self, n: usize) -> Vec<Vec<u8>> {
        let label = self.label;
        wait_for(WAIT, &format!("{n} frame(s) on {label}"), || {
            (self.poll().len() >= n).then_some(())
        });
        self.frames.clone()
    }

    pub fn send(&self, frame: &[u8]) {
        assert_eq!(self.sock.send_batch([frame]).unwrap(), 1);
    }
}

pub fn wan_filter(kind: Kind) -> Filter {
    match kind {
        Kind::Srv6 | Kind::Srv6Reduced => Filter::Srv6,
        Kind::Vxlan4 | Kind::Vxlan6 => Filter::Udp { port: 4789 },
        Kind::Mpls => Filter::Mpls,
    }
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

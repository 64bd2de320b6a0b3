//! The PFC relay's data path on veth, against the kernel's own SRv6
//! encapsulation in the same run (needs root):
//!
//!   cargo bench -p losslessd --bench relay                   everything
//!   cargo bench -p losslessd --bench relay -- latency        one relay hop vs seg6 l2encap
//!   cargo bench -p losslessd --bench relay -- throughput     frames/s with nothing lost
//!   cargo bench -p losslessd --bench relay -- xdp            the XDP path: latency, frames/s
//!
//! ```text
//!  ns hosts                     ns pe                         ns hosts
//!  gen ---- veth ---- pe2-dc [ losslessd PE  | kernel seg6 l2encap ] pe2-wan ---- veth ---- sink
//! ```
//!
//! * latency: one frame at a time, alternating the two paths: a PFC frame the
//!   relay encapsulates in SRv6, and an IPv6 packet the kernel routes into a
//!   `seg6 mode l2encap` route to the same SID. Each sample is the sink's
//!   software receive timestamp minus the generator's software transmit
//!   timestamp (both taken by the kernel, CLOCK_REALTIME): two veth crossings
//!   plus the PE, for both paths alike. Printed: p50/p99/max per path, and the
//!   relay's median over the kernel's, for `poll = "wait"` and `"busy"`.
//!   (BENCH_SAMPLES, default 2000 per path.)
//! * throughput: the generator (pinned to CPU 0) offers PFC frames at a
//!   paced rate in sendmmsg batches; losslessd (pinned to CPU 1) relays them;
//!   the sink's veth counts them and its disabled IPv6 drops them. Printed
//!   per offered rate: delivered, lost, the relay ring's kernel drops, and
//!   the relay thread's CPU time. Run with `poll = "busy"` (is anything
//!   lost?) and `poll = "wait"` (the thread sleeps when idle, so relayed
//!   frames per CPU-second of its thread is the core's capacity, also where
//!   the generator cannot saturate it). Then the kernel's own l2encap
//!   forwarding offered the same way, as the anchor. (BENCH_RATES in M
//!   frames/s, default "0.5,1,1.5,2"; BENCH_SECONDS, default 2.)
//! * xdp: losslessd with its XDP path attached natively on pe2-dc and
//!   pe2-wan. Latency as above (the sink runs a pass-through XDP program,
//!   which a veth needs to take redirected frames), against seg6 l2encap in
//!   the same run. Throughput: the generator is an XDP program run on live
//!   frames (`BPF_PROG_RUN` with `BPF_F_TEST_XDP_LIVE_FRAMES`, as
//!   xdp-trafficgen does) that sends each out of `gen`; the sink's XDP
//!   program counts and drops. The bench thread is pinned to CPU 0, and the
//!   whole chain (generator, pe2-dc's XDP relay, the sink) runs in its
//!   softirq on that core: frames/s of the chain per core, and lost =
//!   generated - counted. The kernel's seg6 l2encap is offered the same
//!   way (IPv6 packets the kernel routes into the route) as the anchor. And
//!   the relay program alone: the kernel's own time per run
//!   (`BPF_PROG_TEST_RUN`, repeat). (BENCH_XDP_FRAMES, default 5,000,000.)
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use lossless_node::protocol::Request;
use lossless_relay::example::{self, Kind, DC2_GW, PE2_DC, PE2_WAN};
use lossless_relay::{Poll, RelaySection, XdpMode};
use lossless_sys::batch::{BatchOptions, BatchSocket, Filter};
use lossless_sys::if_nametoindex;
use lossless_sys::netns::in_netns;
use lossless_sys::timestamp::{wait_readable, MeasureSocket};
use lossless_sys::xdp::{counter, PassProgram, RelayCfg, Side, XdpRelay};
use lossless_wire::MacAddr;
use serde_json::Value;

const GEN_MAC: &str = "02:00:00:00:aa:01";
const SINK: MacAddr = MacAddr([2, 0, 0, 0, 0xaa, 2]);
/// The far PE's End.DX2 SID (example::pe(2, Srv6)'s segment).
const SID: &str = "fc00::e1:d2";
/// Where the kernel path's IPv6 packets go: routed into the l2encap route.
const KERNEL_DST: [u8; 16] = [0xfd, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const KERNEL_SRC: [u8; 16] = [0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2];

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| filter.is_empty() || filter.iter().any(|f| f == s);
    if !require("relay bench", &[Oracle::Netns]) {
        return;
    }
    println!("machine: {}", machine());
    let topo = Topo::new();
    if want("latency") {
        let samples = env_or("BENCH_SAMPLES", 2000);
        for poll in [Poll::Wait, Poll::Busy] {
            latency(&topo, poll, samples);
        }
    }
    if want("throughput") {
        let rates: Vec<f64> = std::env::var("BENCH_RATES")
            .unwrap_or_else(|_| "0.5,1,1.5,2".into())
            .split(',')
            .filter_map(|r| r.trim().parse().ok())
            .collect();
        let secs = env_or("BENCH_SECONDS", 2) as f64;
        throughput(&topo, &rates, secs);
    }
    if want("xdp") {
        let samples = env_or("BENCH_SAMPLES", 2000);
        xdp_latency(&topo, samples);
        xdp_throughput(&topo, env_or("BENCH_XDP_FRAMES", 5_000_000) as u32);
    }
}

/// The namespaces, veths and the kernel's SRv6 route; removed on drop.
struct Topo {
    pe: Netns,
    hosts: Netns,
    dir: TempDir,
}

impl Topo {
    fn new() -> Topo {
        let pe = Netns::new();
        let hosts = Netns::new();
        Veth::new(&hosts, "gen", GEN_MAC, &pe, "pe2-dc", &PE2_DC.to_string());
        Veth::new(
            &pe,
            "pe2-wan",
            &PE2_WAN.to_string(),
            &hosts,
            "sink",
            &SINK.to_string(),
        );
        for (ns, ifs) in [(&pe, ["pe2-dc", "pe2-wan"]), (&hosts, ["gen", "sink"])] {
            for i in ifs {
                ns.ip(&["link", "set", i, "up"]);
            }
        }
        // The kernel path: forward fd00:9::1 into seg6 l2encap toward the SID,
        // which is on the link to the sink.
        pe.sysctl("net.ipv6.conf.all.forwarding=1");
        pe.ip(&[
            "-6",
            "addr",
            "add",
            "fd00:1::1/64",
            "dev",
            "pe2-dc",
            "nodad",
        ]);
        pe.ip(&[
            "-6",
            "addr",
            "add",
            "fd00:2::1/64",
            "dev",
            "pe2-wan",
            "nodad",
        ]);
        pe.ip(&["sr", "tunsrc", "set", "fc00::e2"]);
        pe.ip(&[
            "-6",
            "route",
            "add",
            "fd00:9::1/128",
            "encap",
            "seg6",
            "mode",
            "l2encap",
            "segs",
            SID,
            "dev",
            "pe2-wan",
        ]);
        pe.ip(&[
            "-6",
            "route",
            "add",
            &format!("{SID}/128"),
            "dev",
            "pe2-wan",
        ]);
        pe.ip(&[
            "-6",
            "neigh",
            "add",
            SID,
            "lladdr",
            &SINK.to_string(),
            "dev",
            "pe2-wan",
            "nud",
            "permanent",
        ]);
        // The sink's IPv6 is off: the stack drops the frames on arrival
        // (cheaply: no route lookup); veth has counted them. (This kernel
        // has no tc drop action to do it earlier.)
        hosts.sysctl("net.ipv6.conf.sink.disable_ipv6=1");
        for (ns, i) in [
            (&pe, "pe2-dc"),
            (&pe, "pe2-wan"),
            (&hosts, "gen"),
            (&hosts, "sink"),
        ] {
            ns.wait_running(i);
        }
        Topo {
            pe,
            hosts,
            dir: TempDir::new(),
        }
    }

    /// losslessd as PE2 between pe2-dc and pe2-wan, AF_PACKET path.
    fn relay(&self, poll: Poll, tag: &str) -> Daemon {
        self.relay_with(poll, XdpMode::Off, tag)
    }

    /// losslessd as PE2, with the XDP path as `xdp` says (waits for it).
    fn relay_with(&self, poll: Poll, xdp: XdpMode, tag: &str) -> Daemon {
        let mut cfg = example::pe(2, Kind::Srv6);
        cfg.datapath.xdp = xdp;
        cfg.dc.interface = Some("pe2-dc".into());
        cfg.wan.interface = Some("pe2-wan".into());
        cfg.wan.next_hop_mac = SINK;
        cfg.datapath.poll = poll;
        cfg.datapath.batch = 256;
        #[derive(serde::Serialize)]
        struct File {
            relay: RelaySection,
        }
        let text = toml::to_string(&File {
            relay: RelaySection::Pe(cfg),
        })
        .unwrap();
        let dir = self.dir.path().join(tag);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("pe.toml");
        std::fs::write(&path, text).unwrap();
        let d = Daemon::start(&self.pe, &dir, &["--config", path.to_str().unwrap()]);
        wait_for(Duration::from_secs(5), "relay ports open", || {
            let v = d.call(&Request::RelayShow);
            v["ports"]
                .as_array()
                .is_some_and(|p| p.iter().all(|p| p["open"] == true))
                .then_some(())
        });
        if xdp == XdpMode::On {
            wait_for(Duration::from_secs(5), "the XDP path", || {
                let v = d.call(&Request::RelayShow);
                (v["xdp"]["running"] == true).then_some(())
            });
        }
        d
    }
}

/// A legal PFC frame from DC2's gateway: priority 7 paused for `seq` quanta
/// (never 0), so the sink can tell the frames apart.
fn pfc(seq: u16) -> Vec<u8> {
    let mut quanta = [0; 8];
    quanta[7] = seq.max(1);
    example::pfc(DC2_GW, 0x80, quanta)
}

/// An IPv6 packet (no next header) to the kernel's l2encap route, `seq` in
/// its payload.
fn kernel_packet(gen: MacAddr, seq: u16) -> Vec<u8> {
    let mut f = Vec::with_capacity(64);
    f.extend_from_slice(&PE2_DC.0);
    f.extend_from_slice(&gen.0);
    f.extend_from_slice(&[0x86, 0xdd]);
    f.extend_from_slice(&[0x60, 0, 0, 0, 0, 8, 59, 64]);
    f.extend_from_slice(&KERNEL_SRC);
    f.extend_from_slice(&KERNEL_DST);
    f.extend_from_slice(&seq.max(1).to_be_bytes());
    f.extend_from_slice(&[0; 6]);
    f
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Path {
    Relay,
    Kernel,
}

/// Which path an SRv6 frame at the sink came by and its sequence number.
fn classify(frame: &[u8]) -> Option<(Path, u16)> {
    // Outer Ethernet (14) + IPv6 (40) + SRH (8 + 16 per segment).
    if frame.get(12..14)? != [0x86, 0xdd] || *frame.get(14 + 6)? != 43 {
        return None;
    }
    let srh_len = 8 + 8 * usize::from(*frame.get(54 + 1)?);
    let inner = frame.get(54 + srh_len..)?;
    match inner.get(12..14)? {
        [0x88, 0x08] => Some((Path::Relay, u16::from_be_bytes([inner[32], inner[33]]))),
        [0x86, 0xdd] => {
            let p = inner.get(54..56)?;
            Some((Path::Kernel, u16::from_be_bytes([p[0], p[1]])))
        }
        _ => None,
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn latency(topo: &Topo, poll: Poll, samples: usize) {
    let daemon = topo.relay(poll, &format!("latency-{poll:?}"));
    latency_with(
        topo,
        &daemon,
        &format!("poll = {poll:?}"),
        "relay (losslessd)",
        samples,
    );
}

/// One frame at a time through `daemon` and through the kernel, alternating.
fn latency_with(topo: &Topo, daemon: &Daemon, label: &str, name: &str, samples: usize) {
    let gen_mac = MacAddr(if_hwaddr_in(&topo.hosts, "gen"));
    let (gen, sink) = in_netns(&topo.hosts.name, || {
        let g = MeasureSocket::open_all(if_nametoindex("gen")?, "gen")?;
        let s = MeasureSocket::open_all(if_nametoindex("sink")?, "sink")?;
        std::io::Result::Ok((g, s))
    })
    .unwrap()
    .unwrap();
    let mut buf = vec![0u8; 2048];
    let mut lat: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut lost = [0usize; 2];
    let warmup = 50;
    for i in 0..(samples + warmup) {
        for path in [Path::Relay, Path::Kernel] {
            let seq = (i % 60_000 + 1) as u16;
            let frame = match path {
                Path::Relay => pfc(seq),
                Path::Kernel => kernel_packet(gen_mac, seq),
            };
            gen.send(&frame).unwrap();
            let t0 = Instant::now();
            let tx = loop {
                match gen.recv_tx_timestamp(&mut buf) {
                    Ok((_, ts)) => break Some(ts),
                    Err(_) if t0.elapsed() < Duration::from_millis(100) => std::thread::yield_now(),
                    Err(_) => break None,
                }
            };
            let mut rx = None;
            while rx.is_none() && t0.elapsed() < Duration::from_millis(200) {
                if !wait_readable(&[&sink], Duration::from_millis(20)).unwrap() {
                    continue;
                }
                while let Ok((n, ts)) = sink.recv(&mut buf) {
                    if classify(&buf[..n]) == Some((path, seq)) {
                        rx = ts;
                    }
                }
            }
            let k = path as usize;
            match (tx, rx) {
                (Some(tx), Some(rx)) if i >= warmup => {
                    lat[k].push(rx.wrapping_sub(tx) as f64 / 1e6) // ps -> us
                }
                (_, None) if i >= warmup => lost[k] += 1,
                _ => {}
            }
        }
    }
    let relayed = daemon.call(&Request::RelayShow)["pe"]["egress"]["relayed"].clone();
    println!("latency, {label} (one PE hop + two veth crossings, gen tx -> sink rx):");
    let mut medians = [0.0; 2];
    for (k, name) in [(0, name), (1, "kernel seg6 l2encap")] {
        let v = &mut lat[k];
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            println!("  {name}: no samples ({} lost)", lost[k]);
            continue;
        }
        medians[k] = percentile(v, 0.5);
        println!(
            "  {name:<20} p50 {:>7.1} us  p99 {:>7.1} us  max {:>8.1} us  ({} samples, {} lost)",
            percentile(v, 0.5),
            percentile(v, 0.99),
            v[v.len() - 1],
            v.len(),
            lost[k]
        );
    }
    if medians[1] > 0.0 {
        println!(
            "  relay p50 / kernel p50 = {:.2} (target <= 2); relay counted {relayed} frames",
            medians[0] / medians[1]
        );
    }
}

fn if_hwaddr_in(ns: &Netns, name: &str) -> [u8; 6] {
    in_netns(&ns.name, || lossless_sys::if_hwaddr(name))
        .unwrap()
        .unwrap()
}

/// `rx_packets` of `dev` in `ns`.
fn rx_packets(ns: &Netns, dev: &str) -> u64 {
    let out = ns.ip(&["-s", "-j", "link", "show", dev]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v[0]["stats64"]["rx"]["packets"].as_u64().unwrap()
}

/// CPU seconds (user + system) of the thread named `relay` in process `pid`.
fn relay_cpu(pid: u32) -> f64 {
    let tick = String::from_utf8_lossy(&sh(&["getconf", "CLK_TCK"]).stdout)
        .trim()
        .parse::<f64>()
        .unwrap_or(100.0);
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() != "relay" {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap();
        // Fields after the parenthesised name: state is 3rd, utime 14th, stime 15th.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
        return ticks / tick;
    }
    panic!("no relay thread in {pid}");
}

fn pin(pid: u32, cpu: &str) {
    sh(&["taskset", "-a", "-p", "-c", cpu, &pid.to_string()]);
}

/// Sends `total` of `frames` (round robin) at `rate` frames/s in batches
/// of 64; returns how many the kernel took and the seconds it took.
fn offer(gen: &BatchSocket, frames: &[Vec<u8>], rate: f64, total: u64) -> (u64, f64) {
    let t0 = Instant::now();
    let mut sent = 0u64;
    while sent < total {
        if t0.elapsed() < Duration::from_secs_f64(sent as f64 / rate) {
            std::hint::spin_loop();
            continue;
        }
        let n = 64u64.min(total - sent) as usize;
        let start = sent as usize;
        let chunk = (0..n).map(|i| frames[(start + i) % frames.len()].as_slice());
        sent += gen.send_batch(chunk).unwrap_or(0) as u64;
    }
    (sent, t0.elapsed().as_secs_f64())
}

fn throughput(topo: &Topo, rates: &[f64], secs: f64) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 {
        pin(std::process::id(), "0");
    }
    let gen = in_netns(&topo.hosts.name, || {
        BatchSocket::open(
            if_nametoindex("gen")?,
            Filter::Mpls,
            BatchOptions::default(),
        )
    })
    .unwrap()
    .unwrap();
    let frames: Vec<Vec<u8>> = (1..=256u16).map(pfc).collect();
    // Busy: does anything get lost. Wait: the relay thread sleeps when idle,
    // so its CPU time is the work, and frames per CPU-second is the core's
    // capacity even where the generator cannot saturate it.
    for poll in [Poll::Busy, Poll::Wait] {
        let daemon = topo.relay(poll, &format!("throughput-{poll:?}"));
        if cpus >= 2 {
            pin(daemon.pid().unwrap(), "1");
        }
        println!(
            "throughput, poll = {poll:?}, batch 256 (generator on CPU 0, relay on CPU 1, {secs} s per rate):"
        );
        let mut best = None;
        for &mrate in rates {
            let rate = mrate * 1e6;
            let total = (rate * secs) as u64;
            let show0 = daemon.call(&Request::RelayShow);
            let rx0 = rx_packets(&topo.hosts, "sink");
            let cpu0 = relay_cpu(daemon.pid().unwrap());
            let (sent, send_secs) = offer(&gen, &frames, rate, total);
            std::thread::sleep(Duration::from_millis(300));
            let delivered = rx_packets(&topo.hosts, "sink") - rx0;
            let cpu = relay_cpu(daemon.pid().unwrap()) - cpu0;
            let show = daemon.call(&Request::RelayShow);
            let delta = |p: &str| {
                show["ports"][0][p].as_u64().unwrap() - show0["ports"][0][p].as_u64().unwrap()
            };
            let relayed = show["pe"]["egress"]["relayed"].as_u64().unwrap()
                - show0["pe"]["egress"]["relayed"].as_u64().unwrap();
            // The sink also counts the PE's own IPv6 chatter (router
            // solicitations): a few frames more than were sent.
            let lost = sent.saturating_sub(delivered);
            let achieved = sent as f64 / send_secs / 1e6;
            println!(
                "  offered {mrate:.2} M/s (sent {achieved:.2} M/s): delivered {delivered} of {sent}, lost {lost} \
                 (relay socket drops {}), relayed {relayed}; relay thread {cpu:.2} CPU-s = {:.2} M frames per CPU-second of the relay's core",
                delta("socket_drops"),
                relayed as f64 / cpu.max(1e-9) / 1e6,
            );
            if lost == 0 {
                best = Some(achieved);
            }
        }
        match best {
            Some(r) => {
                println!("  highest rate with nothing lost: {r:.2} M frames/s (target >= 1)")
            }
            None => println!("  every rate lost frames"),
        }
    }
    // The anchor: the kernel's own seg6 l2encap forwarding of IPv6 packets,
    // offered the same way. It runs in the generator's softirq on CPU 0.
    let gen_mac = MacAddr(if_hwaddr_in(&topo.hosts, "gen"));
    let packets: Vec<Vec<u8>> = (1..=256u16).map(|i| kernel_packet(gen_mac, i)).collect();
    println!("  anchor, kernel seg6 l2encap (forwarding in the generator's softirq, CPU 0):");
    for &mrate in rates {
        let rate = mrate * 1e6;
        let total = (rate * secs) as u64;
        let rx0 = rx_packets(&topo.hosts, "sink");
        let (sent, send_secs) = offer(&gen, &packets, rate, total);
        std::thread::sleep(Duration::from_millis(300));
        let delivered = rx_packets(&topo.hosts, "sink") - rx0;
        println!(
            "    offered {mrate:.2} M/s (sent {:.2} M/s): delivered {delivered} of {sent}, lost {}",
            sent as f64 / send_secs / 1e6,
            sent.saturating_sub(delivered)
        );
    }
}

/// The XDP path's latency, beside the kernel's in the same run.
fn xdp_latency(topo: &Topo, samples: usize) {
    let _pass = in_netns(&topo.hosts.name, || {
        PassProgram::attach(if_nametoindex("sink")?)
    })
    .unwrap()
    .unwrap();
    let daemon = topo.relay_with(Poll::Wait, XdpMode::On, "latency-xdp");
    latency_with(
        topo,
        &daemon,
        "XDP path (native, no polling)",
        "relay (XDP)",
        samples,
    );
}

fn load_bench_program(ns: &Netns, attach: Option<(Side, &str)>, port: Option<&str>) -> XdpRelay {
    in_netns(&ns.name, || {
        let mut x = XdpRelay::load(&RelayCfg::default())?;
        if let Some(dev) = port {
            let i = if_nametoindex(dev)?;
            x.set_ports(i, i)?;
        }
        if let Some((side, dev)) = attach {
            x.attach(side, if_nametoindex(dev)?)?;
        }
        std::io::Result::Ok(x)
    })
    .unwrap()
    .unwrap()
}

/// Frames/s through the XDP relay and through the kernel, generated by an
/// XDP program on live frames, counted and dropped by the sink's XDP program.
fn xdp_throughput(topo: &Topo, frames: u32) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus >= 2 {
        pin(std::process::id(), "0");
    }
    let sink = load_bench_program(&topo.hosts, Some((Side::Sink, "sink")), None);
    let mut gen = load_bench_program(&topo.hosts, None, Some("gen"));
    let daemon = topo.relay_with(Poll::Wait, XdpMode::On, "throughput-xdp");
    let gen_mac = MacAddr(if_hwaddr_in(&topo.hosts, "gen"));
    let counted = || sink.counters().unwrap()[counter::SINK];
    println!(
        "throughput, XDP path (generator: an XDP program on {frames} live frames; sink: XDP, counts and drops; one core):"
    );
    let mut rates = [0.0f64; 2];
    for (k, name, frame) in [
        (0, "relay (XDP)", pfc(7)),
        (1, "kernel seg6 l2encap", kernel_packet(gen_mac, 7)),
    ] {
        let before = counted();
        let t0 = Instant::now();
        in_netns(&topo.hosts.name, || {
            gen.live_frames(Side::Gen, &frame, frames)
        })
        .unwrap()
        .unwrap();
        let secs = t0.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_millis(300));
        let got = counted() - before;
        rates[k] = got as f64 / secs;
        println!(
            "  {name:<20} offered {frames} in {secs:.3} s: {:.2} M frames/s through, {got} counted, {} lost",
            got as f64 / secs / 1e6,
            u64::from(frames).saturating_sub(got)
        );
    }
    let v = daemon.call(&Request::RelayShow);
    println!(
        "  the daemon's XDP counters: relayed {}, redirects failed {}",
        v["xdp"]["egress_relayed"], v["xdp"]["redirect_failed"]
    );
    if rates[1] > 0.0 {
        println!("  relay / kernel = {:.2}", rates[0] / rates[1]);
    }
    // The relay program alone, as the kernel times it.
    let cfg = losslessd::relay::xdp::xdp_config(&example::pe(2, Kind::Srv6)).unwrap();
    let mut alone = XdpRelay::load(&cfg).unwrap();
    alone.set_ports(1, 1).unwrap();
    let ns = alone.time_run(Side::Dc, &pfc(7), 1_000_000).unwrap();
    println!(
        "  the relay program alone (BPF_PROG_TEST_RUN, 1,000,000 runs): {ns} ns per frame = {:.1} M frames/s per core",
        1e3 / f64::from(ns.max(1))
    );
    // The same with the storm ceiling on (its state read and written in a map
    // for every frame): a pause that keeps the far side paused at 100 Gb/s
    // (65,535 quanta), so after the first every run is a refresh held back.
    let mut storm = example::pe(2, Kind::Srv6);
    storm.storm.max_per_second = Some(100);
    let cfg = losslessd::relay::xdp::xdp_config(&storm).unwrap();
    let guard = storm
        .storm
        .guard(lossless_relay::Instant::ZERO)
        .unwrap()
        .expect("a ceiling");
    let mut ceiled = XdpRelay::load(&cfg).unwrap();
    ceiled.set_ports(1, 1).unwrap();
    ceiled
        .storm_init(&losslessd::relay::xdp::storm_state(
            &guard,
            lossless_sys::xdp::ktime_ns(),
        ))
        .unwrap();
    let mut quanta = [0; 8];
    quanta[7] = 0xffff;
    let pause = example::pfc(DC2_GW, 0x80, quanta);
    let ns = ceiled.time_run(Side::Dc, &pause, 1_000_000).unwrap();
    println!(
        "  the same with the storm ceiling on, refreshes held back: {ns} ns per frame = {:.1} M frames/s per core",
        1e3 / f64::from(ns.max(1))
    );
}

//! `lossless doctor` on a whole host (issue 25's floor: 64 ports checked in 200 ms or
//! less), without a daemon:
//!
//!   cargo bench -p lossless --bench doctor
//!
//! The host is lossless-testkit's emulated host tree of BENCH_PORTS ConnectX ports
//! (default 64; mlx5 with NVIDIA's driver package: RDMA device, configfs rdma_cm, ecn/,
//! tc/, debugfs cc_params), its NICs the emulated mlx5 driver (dcbnl, ethtool netlink
//! and ioctl statistics answered by the preloaded library, as the tests run it) on 64
//! veth netdevs in a network namespace, each given PFC and DSCP 26 on priority 3
//! through iproute2's `dcb` first. Each run is the whole command, as an operator types
//! it (`ip netns exec` included): process start, the ports found under `--sysfs`, every
//! check of every port, the JSON printed. Printed: the machine,
//! the load, then the wall time of BENCH_RUNS runs (default 20: median, p90, worst),
//! and beside it, in the same run, the anchor: `lossless --version` under the same
//! preload (what starting the process costs), so the figure shows what the checks add.
//! With BENCH_ANCHOR_BIN=PATH an older `lossless` with `doctor` is timed the same way;
//! BENCH_SHOW=1 prints every check that is not ok.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use lossless_testkit::sysfs::{HostTree, Port};
use lossless_testkit::{
    batch_ip, dcb_tool, load, machine, output_text, require, Model, Netns, Oracle, ShimEnv, TempDir,
};

/// The floor for a whole host of 64 ports.
const FLOOR: Duration = Duration::from_millis(200);

fn env_or(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The wall time of `runs` runs of `bin ARGS` under the emulated driver, sorted; each
/// must exit with one of `codes`.
fn time(
    ns: &Netns,
    bin: &Path,
    args: &[&str],
    shim: &ShimEnv,
    runs: usize,
    codes: &[i32],
) -> Vec<Duration> {
    let mut out: Vec<Duration> = (0..runs)
        .map(|_| {
            let mut c = ns.command(bin);
            shim.apply(&mut c);
            c.args(args);
            let t0 = Instant::now();
            let o = c.output().unwrap();
            let took = t0.elapsed();
            let code = o.status.code().unwrap_or(-1);
            assert!(
                codes.contains(&code),
                "{} {}: exit {code}\n{}{}",
                bin.display(),
                args.join(" "),
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            took
        })
        .collect();
    out.sort();
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn row(name: &str, v: &[Duration]) -> String {
    format!(
        "{name}: median {:.1} ms, p90 {:.1} ms, worst {:.1} ms ({} runs)",
        ms(pct(v, 0.5)),
        ms(pct(v, 0.9)),
        ms(pct(v, 1.0)),
        v.len()
    )
}

fn main() {
    if !require("doctor bench", &[Oracle::Netns, Oracle::Gcc, Oracle::Dcb]) {
        return;
    }
    println!("machine: {}", machine());
    println!("{}", load());
    let ports = env_or("BENCH_PORTS", 64);
    let runs = env_or("BENCH_RUNS", 20);
    let layout: Vec<Port> = (0..ports)
        .map(|i| {
            Port::new(
                &format!("p{i}"),
                Model::Mlx5,
                &format!("0000:{:02x}:{:02x}.0", 0x41 + i / 32, i % 32),
            )
            .ofed()
            .ibdev(&format!("mlx5_{i}"))
        })
        .collect();
    let tree = HostTree::new(&layout).unwrap();
    let dir = TempDir::new();
    let names: Vec<String> = layout.iter().map(|p| p.ifname.clone()).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let shim = ShimEnv::new(&dir.path().join("driver"), &names)
        .model(Model::Mlx5)
        .sysfs(tree.root());
    // The netdevs (one end of a veth pair each: the emulated driver answers for them),
    // each NIC given RoCE's DCB as `lossless profile roce` sets it (PFC on 3, DSCP 26 on
    // 3), through `dcb`.
    let ns = Netns::new();
    let links: String = (0..ports)
        .map(|i| format!("link add p{i} type veth peer name q{i}\n"))
        .collect();
    batch_ip(&ns, &links);
    for n in &names {
        for args in [
            ["pfc", "set", "dev", n, "prio-pfc", "3:on"],
            ["app", "add", "dev", n, "dscp-prio", "26:3"],
        ] {
            let o = dcb_tool(&ns, &shim, &args);
            assert!(
                o.status.success(),
                "dcb {}: {}",
                args.join(" "),
                output_text(&o)
            );
        }
    }
    let sock = dir.path().join("no-daemon.sock");
    let root = tree.root().to_str().unwrap().to_string();
    let args = [
        "doctor",
        "--json",
        "--socket",
        sock.to_str().unwrap(),
        "--sysfs",
        &root,
    ];
    let bin = Path::new(env!("CARGO_BIN_EXE_lossless"));
    // Once, to see it checks every port (and to warm the page cache).
    let o = {
        let mut c = ns.command(bin);
        shim.apply(&mut c);
        c.args(args).output().unwrap()
    };
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    assert_eq!(
        checks.len(),
        ports * 16,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    if std::env::var("BENCH_SHOW").is_ok() {
        for c in checks.iter().filter(|c| c["status"] != "ok") {
            println!("{} {} {}", c["port"], c["check"], c["evidence"]);
        }
    }
    let unknown = checks.iter().filter(|c| c["status"] == "unknown").count();
    let problems = checks.iter().filter(|c| c["status"] == "problem").count();
    println!(
        "{ports} ports, {} checks: {problems} problems, {unknown} unknown (no daemon; the NICs \
         with PFC and DSCP 26 on 3, the host settings at power-on)",
        checks.len()
    );
    let anchor = time(&ns, bin, &["--version"], &shim, runs, &[0]);
    let doctor = time(&ns, bin, &args, &shim, runs, &[1, 2]);
    println!(
        "{}",
        row("anchor: lossless --version, same preload", &anchor)
    );
    println!(
        "{}",
        row(&format!("lossless doctor, {ports} ports"), &doctor)
    );
    let median = pct(&doctor, 0.5);
    println!(
        "the checks' own share (median less the anchor's): {:.1} ms, {:.2} ms per port; floor \
         {} ms for 64 ports: {}",
        ms(median.saturating_sub(pct(&anchor, 0.5))),
        ms(median.saturating_sub(pct(&anchor, 0.5))) / ports as f64,
        FLOOR.as_millis(),
        if ports != 64 {
            "not judged (BENCH_PORTS is not 64)"
        } else if median <= FLOOR {
            "met"
        } else {
            "NOT met"
        }
    );
    if let Ok(other) = std::env::var("BENCH_ANCHOR_BIN") {
        let v = time(&ns, Path::new(&other), &args, &shim, runs, &[1, 2]);
        println!("{}", row(&format!("BENCH_ANCHOR_BIN {other}"), &v));
    }
}

//! The daemon's bounds under load (needs root):
//!
//!   cargo bench -p losslessd --bench limits              everything
//!   cargo bench -p losslessd --bench limits -- exit      only the exit
//!   BENCH_ANCHOR_BIN=/path/to/an/older/losslessd cargo bench ... runs each section with
//!   that binary too, the figure to compare with.
//!
//! * exit: one losslessd with 64 and then 256 ports (veth pairs, links up), SIGTERM ->
//!   the process has exited (wall, from just before the signal to waitpid's return);
//!   the daemon's own split from its `stopped` log line (shutdown LLDPDUs sent,
//!   sockets closed). BENCH_RUNS runs each (default 5).
//! * control: 5,000 idle control connections (every other one with half a request):
//!   the daemon's RSS before, with them, and after they are gone; `status` latency
//!   (a new connection each, 50 samples) while they are open. With the default limit
//!   (256 connections), and (this build only) with `control_max_connections = 5000`,
//!   which keeps them all.
//! * metrics: 10,500 connections to the metrics endpoint (every other one with half a
//!   request), the daemon under `prlimit --nofile=N:N` (BENCH_NOFILE, default 1024): RSS before, with them and
//!   after, descriptors, `status` and a scrape (each on a new connection, 20 samples,
//!   10 s at most) while they are open. With the default `metrics_max_connections`.
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;
use lossless_testkit::Fanout;

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| filter.is_empty() || filter.iter().any(|f| f == s);
    if !require("limits bench", &[Oracle::Netns]) {
        return;
    }
    println!("machine: {}", machine());
    println!("{}", load());
    let mut bins = vec![("this build", losslessd_bin())];
    if let Ok(anchor) = std::env::var("BENCH_ANCHOR_BIN") {
        bins.push(("anchor", PathBuf::from(anchor)));
    }
    // This process holds the client ends of the control connections.
    sh(&[
        "prlimit",
        "--pid",
        &std::process::id().to_string(),
        "--nofile=12000:12000",
    ]);
    let runs = env_or("BENCH_RUNS", 5);
    if want("exit") {
        for (name, bin) in &bins {
            for n in [64, 256] {
                exit(name, bin, n, runs);
            }
        }
    }
    if want("control") {
        for (name, bin) in &bins {
            control(name, bin, "", "default limit");
        }
        // An older daemon does not know the key (and keeps every connection anyway).
        control(
            "this build",
            &losslessd_bin(),
            "[daemon]\ncontrol_max_connections = 5000\n",
            "control_max_connections = 5000",
        );
    }
    if want("metrics") {
        for (name, bin) in &bins {
            metrics(name, bin);
        }
    }
}

/// A losslessd of binary `bin` in `ns`, config `conf`, its log in `dir/log`.
struct Proc {
    child: Child,
    socket: PathBuf,
    log: PathBuf,
}

impl Proc {
    fn start(bin: &Path, ns: &Netns, dir: &Path, conf: &str) -> Proc {
        std::fs::create_dir_all(dir).unwrap();
        let file = dir.join("conf.toml");
        std::fs::write(&file, conf).unwrap();
        let socket = dir.join("sock");
        let log = dir.join("log");
        let child = ns
            .command(bin)
            .arg("--config")
            .arg(&file)
            .arg("--socket")
            .arg(&socket)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
            .spawn()
            .unwrap();
        let p = Proc { child, socket, log };
        wait_for(Duration::from_secs(10), "the control socket", || {
            UnixStream::connect(&p.socket).ok().map(|_| ())
        });
        p
    }

    fn status(&self) -> serde_json::Value {
        let mut s = UnixStream::connect(&self.socket).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"{\"command\":\"status\"}\n").unwrap();
        let mut line = String::new();
        BufReader::new(s).read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    }

    fn rss_kb(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn summary(v: &mut [f64]) -> String {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return "no samples".into();
    }
    format!(
        "median {:.1} ms, min {:.1}, max {:.1} ({n} runs)",
        v[n / 2],
        v[0],
        v[n - 1]
    )
}

/// A number after `key=` in the last line of `log` that contains `message`.
fn logged(log: &str, message: &str, key: &str) -> Option<f64> {
    let line = log.lines().rev().find(|l| l.contains(message))?;
    let rest = line.split(&format!("{key}=")).nth(1)?;
    rest.split_whitespace().next()?.parse().ok()
}

fn exit(name: &str, bin: &Path, n: usize, runs: usize) {
    let mut wall = Vec::new();
    let mut sent = Vec::new();
    let mut closed = Vec::new();
    for _ in 0..runs {
        let f = Fanout::new(n);
        let dir = TempDir::new();
        let p = Proc::start(bin, &f.hub, dir.path(), "[ports.\"p*\"]\n");
        f.up();
        wait_every(
            Duration::from_secs(30),
            Duration::from_millis(20),
            "every port up",
            || {
                let v = p.status();
                let ports = v["result"]["ports"].as_array()?.clone();
                (ports.len() == n && ports.iter().all(|p| p["link_up"] == true)).then_some(())
            },
        );
        let mut p = p;
        let t0 = Instant::now();
        sh(&["kill", "-TERM", &p.child.id().to_string()]);
        let st = p.child.wait().unwrap();
        wall.push(ms(t0.elapsed()));
        assert!(st.success(), "{st}");
        let log = std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default()
            + &std::fs::read_to_string(&p.log).unwrap_or_default();
        if let (Some(s), Some(c)) = (
            logged(&log, "stopped", "lldpdus_ms"),
            logged(&log, "stopped", "closed_ms"),
        ) {
            sent.push(s);
            closed.push(c);
        }
    }
    println!(
        "exit ({name}), {n} ports: SIGTERM to exited {}",
        summary(&mut wall)
    );
    if !sent.is_empty() {
        println!(
            "exit ({name}), {n} ports: as the daemon logs it, shutdown LLDPDUs sent {}; then sockets closed {}",
            summary(&mut sent),
            summary(&mut closed)
        );
    }
}

fn control(name: &str, bin: &Path, conf: &str, what: &str) {
    let pair = lossless_testkit::Pair::down();
    let dir = TempDir::new();
    let p = Proc::start(
        bin,
        &pair.a,
        dir.path(),
        &format!("{conf}\n[ports.\"va\"]\n"),
    );
    std::thread::sleep(Duration::from_millis(300));
    let before = p.rss_kb();
    let conns: Vec<UnixStream> = (0..5000)
        .map(|i| {
            let mut s = UnixStream::connect(&p.socket).unwrap();
            if i % 2 == 1 {
                let _ = s.write_all(b"{\"command\":");
            }
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let with = p.rss_kb();
    let mut lat: Vec<f64> = (0..50)
        .map(|_| {
            let t0 = Instant::now();
            let v = p.status();
            assert_eq!(v["ok"], true);
            ms(t0.elapsed())
        })
        .collect();
    lat.sort_by(|a, b| a.total_cmp(b));
    let open = std::fs::read_dir(format!("/proc/{}/fd", p.child.id()))
        .map(|d| d.count())
        .unwrap_or(0);
    drop(conns);
    std::thread::sleep(Duration::from_millis(1000));
    let after = p.rss_kb();
    println!(
        "control ({name}, {what}): 5000 connections opened, {open} descriptors open in the daemon; \
         RSS {:.1} MB before, {:.1} MB with them, {:.1} MB after they closed; \
         status p50 {:.2} ms, p90 {:.2} ms, max {:.2} ms (50 samples)",
        before as f64 / 1024.0,
        with as f64 / 1024.0,
        after as f64 / 1024.0,
        lat[lat.len() / 2],
        lat[lat.len() * 9 / 10],
        lat[lat.len() - 1]
    );
}

const METRICS: &str = "127.0.0.1:9717";

/// One scrape on a new connection: its time, or None when it got no 200 within 10 s.
fn scrape(ns: &Netns) -> Option<f64> {
    ns.run(|| {
        let t0 = Instant::now();
        let mut s = std::net::TcpStream::connect(METRICS).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
        s.write_all(format!("GET /metrics HTTP/1.1\r\nHost: {METRICS}\r\n\r\n").as_bytes())
            .ok()?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).ok()?;
        raw.starts_with(b"HTTP/1.1 200").then(|| ms(t0.elapsed()))
    })
}

fn metrics(name: &str, bin: &Path) {
    let pair = lossless_testkit::Pair::down();
    let dir = TempDir::new();
    let p = Proc::start(
        bin,
        &pair.a,
        dir.path(),
        &format!("[daemon]\nmetrics = \"{METRICS}\"\n[ports.\"va\"]\n"),
    );
    let nofile = env_or("BENCH_NOFILE", 1024);
    sh(&[
        "prlimit",
        "--pid",
        &p.child.id().to_string(),
        &format!("--nofile={nofile}:{nofile}"),
    ]);
    std::thread::sleep(Duration::from_millis(300));
    let before = p.rss_kb();
    let conns: Vec<std::net::TcpStream> = pair.a.run(|| {
        (0..10_500)
            .filter_map(|i| {
                let mut s = std::net::TcpStream::connect(METRICS).ok()?;
                if i % 2 == 1 {
                    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\n");
                }
                Some(s)
            })
            .collect()
    });
    std::thread::sleep(Duration::from_millis(500));
    let with = p.rss_kb();
    let open = std::fs::read_dir(format!("/proc/{}/fd", p.child.id()))
        .map(|d| d.count())
        .unwrap_or(0);
    let mut status: Vec<f64> = (0..20)
        .map(|_| {
            let t0 = Instant::now();
            assert_eq!(p.status()["ok"], true);
            ms(t0.elapsed())
        })
        .collect();
    let scrapes: Vec<Option<f64>> = (0..20).map(|_| scrape(&pair.a)).collect();
    let failed = scrapes.iter().filter(|s| s.is_none()).count();
    let mut scraped: Vec<f64> = scrapes.into_iter().flatten().collect();
    let connected = conns.len();
    drop(conns);
    std::thread::sleep(Duration::from_millis(1000));
    let after = p.rss_kb();
    println!(
        "metrics ({name}, nofile {nofile}): {connected} connections opened, {open} descriptors open in the daemon; \
         RSS {:.1} MB before, {:.1} MB with them, {:.1} MB after they closed; status {}; \
         scrape {} ({failed} of 20 got no answer within 10 s)",
        before as f64 / 1024.0,
        with as f64 / 1024.0,
        after as f64 / 1024.0,
        summary(&mut status),
        summary(&mut scraped),
    );
}

//! Test harness: network namespaces, veth pairs and losslessd processes that
//! the tests create and remove themselves (Drop guards), plus polling helpers.
//! Needs root; without it the tests fail, unless LOSSLESS_SKIP_NETNS=1.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use lossless_client::Client;
use lossless_node::protocol::Request;
use serde_json::Value;

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A name unique to this process and call, short enough for an interface.
pub fn unique(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{}x{n}", std::process::id() % 100_000)
}

/// False (and a note on stderr) when the environment asks to skip; panics
/// when the tests cannot run for lack of root.
pub fn can_run(test: &str) -> bool {
    if std::env::var_os("LOSSLESS_SKIP_NETNS").is_some() {
        eprintln!("{test}: skipped (LOSSLESS_SKIP_NETNS is set)");
        return false;
    }
    let uid = Command::new("id").arg("-u").output().expect("id -u");
    assert_eq!(
        String::from_utf8_lossy(&uid.stdout).trim(),
        "0",
        "{test} needs root (network namespaces); set LOSSLESS_SKIP_NETNS=1 to skip"
    );
    true
}

pub fn sh(args: &[&str]) -> Output {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", args.join(" ")));
    assert!(
        out.status.success(),
        "{} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A network namespace, deleted on drop.
pub struct Netns {
    pub name: String,
    /// Deleted on drop (false: somebody else made it and removes it).
    owned: bool,
}

impl Netns {
    pub fn new() -> Netns {
        let name = unique("lt");
        sh(&["ip", "netns", "add", &name]);
        sh(&["ip", "-n", &name, "link", "set", "lo", "up"]);
        Netns { name, owned: true }
    }

    /// A namespace made by someone else (lldpad-pair.sh), left alone on drop.
    pub fn existing(name: &str) -> Netns {
        Netns {
            name: name.to_string(),
            owned: false,
        }
    }

    pub fn ip(&self, args: &[&str]) -> Output {
        let mut v = vec!["ip", "-n", &self.name];
        v.extend_from_slice(args);
        sh(&v)
    }

    pub fn exec(&self, args: &[&str]) -> Output {
        let mut v = vec!["ip", "netns", "exec", &self.name];
        v.extend_from_slice(args);
        sh(&v)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// A veth pair between two namespaces, `a` in the first, `b` in the second.
pub struct Veth {
    pub a: String,
    pub b: String,
}

impl Veth {
    pub fn new(na: &Netns, a: &str, mac_a: &str, nb: &Netns, b: &str, mac_b: &str) -> Veth {
        na.ip(&[
            "link", "add", a, "address", mac_a, "type", "veth", "peer", "name", b, "address",
            mac_b, "netns", &nb.name,
        ]);
        Veth {
            a: a.to_string(),
            b: b.to_string(),
        }
    }
}

pub fn losslessd_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_losslessd"))
}

/// The `lossless` CLI, built on demand when the workspace build did not.
pub fn lossless_bin() -> PathBuf {
    let p = losslessd_bin().with_file_name("lossless");
    if !p.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args(["build", "-p", "lossless", "--bin", "lossless"])
            .status()
            .expect("cargo build -p lossless");
        assert!(st.success());
    }
    p
}

/// A losslessd process in a namespace, with its own socket and state dir.
pub struct Daemon {
    pub ns: String,
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub state: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    child: Option<Child>,
}

impl Daemon {
    /// Starts losslessd in `ns` with `args` (e.g. --interface IF, --config F).
    pub fn start(ns: &Netns, dir: &Path, args: &[&str]) -> Daemon {
        Daemon::start_with_env(ns, dir, args, &[])
    }

    /// As `start`, with extra environment (e.g. LD_PRELOAD).
    pub fn start_with_env(ns: &Netns, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        std::fs::create_dir_all(dir).expect("daemon dir");
        let mut d = Daemon {
            ns: ns.name.clone(),
            dir: dir.to_path_buf(),
            socket: dir.join("sock"),
            state: dir.join("state"),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            child: None,
        };
        d.spawn();
        d
    }

    pub fn spawn(&mut self) {
        assert!(self.child.is_none(), "already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("log"))
            .expect("log file");
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns])
            .arg(losslessd_bin())
            .arg("--socket")
            .arg(&self.socket)
            .arg("--state-dir")
            .arg(&self.state)
            .args(&self.args)
            .env("RUST_LOG", "debug")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("spawn losslessd");
        self.child = Some(child);
        let t0 = Instant::now();
        while Client::connect(&self.socket).is_err() {
            if let Some(st) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("losslessd exited with {st}:\n{}", self.log());
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "losslessd did not open its socket:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    pub fn call(&self, req: &Request) -> Value {
        let mut c = Client::connect(&self.socket).expect("connect");
        c.call(req)
            .unwrap_or_else(|e| panic!("{req:?}: {e}\n{}", self.log()))
    }

    /// `dcbx show PORT` result for one port.
    pub fn dcbx(&self, port: &str) -> Value {
        let v = self.call(&Request::DcbxShow {
            port: Some(port.to_string()),
        });
        v["ports"][0].clone()
    }

    /// Runs the lossless CLI against this daemon.
    pub fn cli(&self, args: &[&str]) -> Output {
        Command::new(lossless_bin())
            .arg("--socket")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run lossless")
    }

    /// SIGTERM and wait for exit; returns its status code.
    pub fn stop(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let t0 = Instant::now();
        loop {
            if let Ok(Some(st)) = child.try_wait() {
                return st.code();
            }
            if t0.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("losslessd ignored SIGTERM:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// kill -9: no shutdown LLDPDU, nothing flushed.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Polls `f` every millisecond until it returns Some, or panics after `limit`.
pub fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            t0.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Every feature of a port Syncd with a DCBX peer present.
pub fn converged(d: &Value) -> bool {
    d["peer_present"] == true && ["pg", "pfc", "app"].iter().all(|f| d[f]["syncd"] == true)
}

pub fn priorities(cfg: &Value) -> Vec<u64> {
    cfg["priorities"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// A temp directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let p = std::env::temp_dir().join(unique("losslessd-test-"));
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// ../shared/tools/lldpad-peer, beside the repository.
pub fn lldpad_peer_tools() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/lldpad-peer")
}

/// Builds the dcbnl shim (an LD_PRELOAD library that answers dcbnl like a
/// DCB-capable driver, see lldpad-peer's README) into `dir`.
pub fn build_dcbnl_shim(dir: &Path) -> PathBuf {
    let src = lldpad_peer_tools().join("dcbnl_shim.c");
    assert!(
        src.exists(),
        "{} not found: shared/ must sit beside the repository",
        src.display()
    );
    let so = dir.join("dcbnl_shim.so");
    let out = Command::new("gcc")
        .args(["-O2", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&src)
        .arg("-ldl")
        .output()
        .expect("gcc (Debian package gcc) builds the dcbnl shim");
    assert!(
        out.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    so
}

/// Two namespaces `ns_a`/`ns_b` with veth `va`/`vb`, made by lldpad-peer's
/// lldpad-pair.sh (`veth`), lldpads started in them with `start`; its `down`
/// on drop stops exactly those lldpads and deletes the namespaces.
pub struct LldpadPair {
    pub state: PathBuf,
    pub a: Netns,
    pub b: Netns,
}

impl LldpadPair {
    /// The namespaces and the veth, links up or down.
    pub fn veth(dir: &Path, link_up: bool) -> LldpadPair {
        let pair = LldpadPair {
            state: dir.join("lldpad"),
            a: Netns::existing(&unique("la")),
            b: Netns::existing(&unique("lb")),
        };
        pair.script(&["veth"], link_up);
        pair
    }

    /// One shimmed lldpad in CEE mode on `ifname` in namespace `ns`.
    pub fn start(&self, ns: &Netns, ifname: &str) {
        self.script(&["start", &ns.name, ifname, "cee"], true);
    }

    fn script(&self, args: &[&str], link_up: bool) -> Output {
        let out = Command::new("bash")
            .arg(lldpad_peer_tools().join("lldpad-pair.sh"))
            .args(args)
            .env("STATE_DIR", &self.state)
            .env("NS_A", &self.a.name)
            .env("NS_B", &self.b.name)
            .env("LINK_UP", if link_up { "1" } else { "0" })
            .output()
            .expect("lldpad-pair.sh");
        assert!(
            out.status.success() || args == ["down"],
            "lldpad-pair.sh {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

impl Drop for LldpadPair {
    fn drop(&mut self) {
        self.script(&["down"], true);
    }
}

/// `dcbtool ARGS` in `ns`, its output (stdout and stderr) as it is.
pub fn dcbtool(ns: &Netns, args: &[&str]) -> String {
    let out = Command::new("ip")
        .args(["netns", "exec", &ns.name, "dcbtool"])
        .args(args)
        .output()
        .expect("dcbtool");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// dcbtool's `Key: value` lines (tab separated, values space-normalised).
pub fn dcbtool_fields(t: &str) -> Vec<(String, String)> {
    t.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| {
            (
                k.trim().to_string(),
                v.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect()
}

/// One field of [`dcbtool_fields`]; "" when absent.
pub fn dcbtool_field<'a>(f: &'a [(String, String)], k: &str) -> &'a str {
    f.iter()
        .find(|(key, _)| key == k)
        .map_or("", |(_, v)| v.as_str())
}

impl Netns {
    /// Waits up to 3 s for `dev` to pass frames: carrier on and, for a veth,
    /// the kernel's linkwatch worker done (until then its qdisc is `noop` and
    /// every frame sent on it is dropped). Devices without operational state
    /// (vxlan) stay `UNKNOWN`.
    pub fn wait_running(&self, dev: &str) {
        wait_for(Duration::from_secs(3), &format!("{dev} running"), || {
            let out = Command::new("ip")
                .args(["-n", &self.name, "-o", "link", "show", "dev", dev])
                .output()
                .ok()?;
            let text = String::from_utf8_lossy(&out.stdout);
            let state = text.contains("state UP") || text.contains("state UNKNOWN");
            (state && text.contains("LOWER_UP") && !text.contains("qdisc noop")).then_some(())
        });
    }

    /// `sysctl -w KEY=VALUE` in this namespace.
    pub fn sysctl(&self, setting: &str) {
        self.exec(&["sysctl", "-q", "-w", setting]);
    }
}

/// A number from the environment, or `d`.
pub fn env_or(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// Prints the machine a benchmark ran on: CPU, cores, kernel, build profile.
pub fn machine() {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = String::from_utf8_lossy(&sh(&["uname", "-r"]).stdout)
        .trim()
        .to_string();
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!("machine: {cpu}, {cores} cores, Linux {kernel}, losslessd {profile} build");
}

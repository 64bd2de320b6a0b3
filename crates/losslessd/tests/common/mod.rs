//! losslessd processes (and the `lossless` CLI against them) in the namespaces,
//! veth pairs and temporary directories of lossless-testkit, re-exported here with
//! its polling helpers, its lldpad peer and its oracle rule (`require`: a test whose
//! oracle is missing fails naming the Debian package, or is skipped with
//! LOSSLESS_SKIP_ORACLES=1).
#![allow(dead_code, unused_imports)] // each test file uses part of it

pub mod delayline;
pub mod fanout;
pub mod flood;
pub mod relay;
pub mod rig;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use lossless_client::Client;
use lossless_node::protocol::Request;
use serde_json::Value;

pub use lossless_testkit::oracle::{require, EMULATED_DRIVER, LLDPAD_PEER};
pub use lossless_testkit::{
    dcbtool_field, dcbtool_fields, http_get, http_request, load, machine, metric, metric_value,
    promtool_check_metrics, scrape_metrics, sh, unique, wait_every, wait_for, LldpadPeer, Mode,
    Netns, Oracle, ShimEnv, TempDir, Veth,
};

/// This build's losslessd, or the one `LOSSLESSD_BIN` names (to run a test against
/// another build, e.g. the one before a fix, and see it fail).
pub fn losslessd_bin() -> PathBuf {
    std::env::var_os("LOSSLESSD_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_losslessd")))
}

/// The `lossless` CLI, built on demand when the workspace build did not.
pub fn lossless_bin() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_BIN_EXE_losslessd")).with_file_name("lossless");
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

/// No extra environment, for [`Daemon::start_under`].
pub const NO_ENV: &[(&str, &str)] = &[];

/// A losslessd process in a namespace, with its own socket and state dir.
pub struct Daemon {
    pub ns: String,
    pub dir: PathBuf,
    pub socket: PathBuf,
    pub state: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// A command losslessd runs under (it ends by running its arguments, e.g.
    /// `setpriv ... --`, `strace -f -o FILE`); empty: none.
    pub wrapper: Vec<String>,
    /// The losslessd binary run: this build's ([`losslessd_bin`]) unless started with
    /// [`Daemon::start_bin`] (a benchmark's anchor, an older build).
    pub bin: PathBuf,
    child: Option<Child>,
    /// losslessd's own pid when it runs under a wrapper (the child is the wrapper).
    daemon_pid: Option<u32>,
}

impl Daemon {
    /// Starts losslessd in `ns` with `args` (e.g. --interface IF, --config F).
    pub fn start(ns: &Netns, dir: &Path, args: &[&str]) -> Daemon {
        Daemon::start_with_env(ns, dir, args, NO_ENV)
    }

    /// As `start`, with extra environment (e.g. LD_PRELOAD, or [`ShimEnv::vars`]).
    pub fn start_with_env<K: AsRef<str>, V: AsRef<str>>(
        ns: &Netns,
        dir: &Path,
        args: &[&str],
        env: &[(K, V)],
    ) -> Daemon {
        Daemon::start_under(ns, dir, &[], args, env)
    }

    /// As `start_with_env`, losslessd run by `wrapper` (a command that runs the
    /// command line it is given).
    pub fn start_under<K: AsRef<str>, V: AsRef<str>>(
        ns: &Netns,
        dir: &Path,
        wrapper: &[&str],
        args: &[&str],
        env: &[(K, V)],
    ) -> Daemon {
        let mut d = Daemon::unstarted(ns, dir, wrapper, args, env);
        d.spawn();
        d
    }

    /// As `start`, with the losslessd binary `bin` (e.g. `BENCH_ANCHOR_BIN`, an older
    /// build to compare with).
    pub fn start_bin(ns: &Netns, dir: &Path, bin: &Path, args: &[&str]) -> Daemon {
        let mut d = Daemon::unstarted(ns, dir, &[], args, NO_ENV);
        d.bin = bin.to_path_buf();
        d.spawn();
        d
    }

    fn unstarted<K: AsRef<str>, V: AsRef<str>>(
        ns: &Netns,
        dir: &Path,
        wrapper: &[&str],
        args: &[&str],
        env: &[(K, V)],
    ) -> Daemon {
        std::fs::create_dir_all(dir).expect("daemon dir");
        Daemon {
            ns: ns.name.clone(),
            dir: dir.to_path_buf(),
            socket: dir.join("sock"),
            state: dir.join("state"),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
                .collect(),
            wrapper: wrapper.iter().map(|s| s.to_string()).collect(),
            bin: losslessd_bin(),
            child: None,
            daemon_pid: None,
        }
    }

    pub fn spawn(&mut self) {
        assert!(self.child.is_none(), "already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("log"))
            .expect("log file");
        let mut command = match self.wrapper.split_first() {
            Some((wrapper, args)) => {
                let mut c = Netns::existing(&self.ns).command(wrapper);
                c.args(args).arg(&self.bin);
                c
            }
            None => Netns::existing(&self.ns).command(&self.bin),
        };
        let child = command
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
        // The socket accepts connections from its bind on, before the ports' packet
        // sockets are open: an answer comes only once the daemon is ready.
        let status = self.call(&Request::Status);
        if !self.wrapper.is_empty() {
            self.daemon_pid = status["daemon"]["pid"].as_u64().map(|p| p as u32);
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

    /// As [`Daemon::call`], None when the daemon does not answer (its listen queue
    /// full while it is busy, a connection refused): for benchmarks that poll hard.
    pub fn try_call(&self, req: &Request) -> Option<Value> {
        Client::connect(&self.socket).ok()?.call(req).ok()
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
            .env("LOSSLESS_SOCKET", &self.socket)
            .args(args)
            .output()
            .expect("run lossless")
    }

    /// SIGTERM and wait for exit; returns its status code.
    pub fn stop(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        let pid = self.daemon_pid.take().unwrap_or(child.id());
        let _ = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
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
        if let Some(pid) = self.daemon_pid.take() {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.daemon_pid.or(self.child.as_ref().map(Child::id))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A switch's daemon (namespace A, port `va`) and a host's (namespace B, port `vb`)
/// over a veth pair, DCBX converged on the host's side.
pub struct SwitchHost {
    // Drop order: the daemons before their namespaces.
    pub host: Daemon,
    pub switch: Daemon,
    pub na: Netns,
    pub nb: Netns,
    /// Where the switch's configuration is (rewrite it and `Reload`).
    pub switch_conf: PathBuf,
}

impl SwitchHost {
    /// Writes `switch.toml` and `host.toml` to `dir`, starts both daemons (the host's
    /// over the emulated DCB driver `shim`), brings the link up and waits until the
    /// host's `vb` has converged.
    pub fn start(dir: &Path, switch: &str, host: &str, shim: &ShimEnv) -> SwitchHost {
        SwitchHost::start_args(dir, switch, host, shim, &[])
    }

    /// As `start`, the host's losslessd given `args` too (`--sysfs ROOT`).
    pub fn start_args(
        dir: &Path,
        switch: &str,
        host: &str,
        shim: &ShimEnv,
        args: &[&str],
    ) -> SwitchHost {
        let (na, nb) = (Netns::new(), Netns::new());
        Veth::new(
            &na,
            "va",
            "02:00:00:00:00:0a",
            &nb,
            "vb",
            "02:00:00:00:00:0b",
        );
        let switch_conf = dir.join("switch.toml");
        std::fs::write(&switch_conf, switch).expect("switch.toml");
        let host_conf = dir.join("host.toml");
        std::fs::write(&host_conf, host).expect("host.toml");
        let mut host_args = vec!["--config", host_conf.to_str().unwrap()];
        host_args.extend_from_slice(args);
        let host = Daemon::start_with_env(&nb, &dir.join("host"), &host_args, &shim.vars());
        let switch = Daemon::start(
            &na,
            &dir.join("switch"),
            &["--config", switch_conf.to_str().unwrap()],
        );
        na.ip(&["link", "set", "va", "up"]);
        nb.ip(&["link", "set", "vb", "up"]);
        wait_for(Duration::from_secs(5), "convergence", || {
            converged(&host.dcbx("vb")).then_some(())
        });
        SwitchHost {
            host,
            switch,
            na,
            nb,
            switch_conf,
        }
    }
}

/// Every feature of a port Syncd with a DCBX peer present.
/// A port's `dcbx show`: a DCBX peer, every feature of the running version agreed.
pub fn converged(d: &Value) -> bool {
    d["peer_present"] == true && d["all_syncd"] == true
}

pub fn priorities(cfg: &Value) -> Vec<u64> {
    cfg["priorities"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// A number from the environment, or `d`.
pub fn env_or(k: &str, d: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

/// A not-willing IEEE 802.1Qaz switch port `va`: ETS recommendation priority 3 ->
/// class 1 at 50 %, CNP priority 6 -> class 2 strict; PFC on 3; APP DSCP 26 and UDP
/// 4791 -> 3 (what `lossless profile roce` configures, imposed).
pub const IEEE_SWITCH: &str = r#"
[ports."va"]
dcbx.mode = "ieee"
pfc = { willing = false, priorities = [3] }
app.willing = false
app.entries = [
    { selector = "dscp", protocol = 26, priority = 3 },
    { selector = "udp", protocol = 4791, priority = 3 },
]

[ports."va".ets]
willing = false
prio_tc = [0, 0, 0, 1, 0, 0, 2, 0]
tc_bw = [50, 50, 0, 0, 0, 0, 0, 0]
tsa = ["ets", "ets", "strict", "strict", "strict", "strict", "strict", "strict"]
"#;

/// `lossless profile roce --port PORT` (the CLI's own output), after a `[defaults]`
/// section that programs the NIC and holds `extra`.
pub fn roce_profile(port: &str, extra: &str) -> String {
    let text = roce_profile_with_host(port, extra);
    // The DCB part: the host's RoCE settings (`roce.*`) need an RDMA device, which the
    // tests of DCB do not lay (tests/roce_host.rs does).
    text.lines()
        .filter(|l| !l.starts_with("roce."))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// `lossless profile roce --port PORT` whole, its `roce.*` settings included, with
/// `apply = "dcbnl"` and `extra` in `[defaults]`.
pub fn roce_profile_with_host(port: &str, extra: &str) -> String {
    let out = std::process::Command::new(lossless_bin())
        .args(["profile", "roce", "--port", port])
        .output()
        .expect("lossless profile roce");
    assert!(out.status.success(), "{out:?}");
    format!(
        "[defaults]\napply = \"dcbnl\"\n{extra}\n{}",
        String::from_utf8_lossy(&out.stdout)
    )
}

/// losslessd on `vb` in namespace B with the configuration `conf` (and `env`, e.g. the
/// emulated driver's), the other end `va` in namespace A, the link up.
pub struct OnVeth {
    // Drop order: the daemon before the namespaces.
    pub d: Daemon,
    pub na: Netns,
    pub nb: Netns,
    pub dir: TempDir,
}

impl OnVeth {
    pub fn start(conf: &str, env: &[(String, String)]) -> OnVeth {
        let dir = TempDir::new();
        // testkit's pair: va (02:00:00:00:00:0a) in na, vb (..0b) in nb, both up.
        let lossless_testkit::Pair { a: na, b: nb, .. } = lossless_testkit::Pair::up();
        let file = dir.path().join("b.toml");
        std::fs::write(&file, conf).expect("b.toml");
        let d = Daemon::start_with_env(
            &nb,
            &dir.path().join("d"),
            &["--config", file.to_str().unwrap_or_default()],
            env,
        );
        OnVeth { d, na, nb, dir }
    }
}

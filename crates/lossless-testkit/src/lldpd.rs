//! Debian's lldpd as an LLDP neighbour on veth: what a switch, or a Linux host running
//! lldpd, makes of our LLDPDUs, and an LLDP peer whose identity TLVs we read.
//!
//! [`Lldpd::start`] runs `/usr/sbin/lldpd -d` confined to one interface of a namespace
//! (`-I IF`) with its own control socket and pid file (`-u`, `-p`) and an empty
//! configuration file (`-O`), in a temporary directory, so that several run at once;
//! it waits until `lldpcli -u SOCKET` answers, and stops exactly that process on drop.
//! A test that uses it starts with [`crate::require`]`(test, &[Oracle::Netns,
//! Oracle::Lldpd])`.
//! lldpd drops its privileges into `/run/lldpd` (the package's chroot), which the
//! instances share; nothing of theirs is kept there.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::netns::{Netns, TempDir};

const LLDPD: &str = "/usr/sbin/lldpd";
const MISSING: &str = "lldpd could not be run (Debian package lldpd); a test that needs it \
                       starts with lossless_testkit::require(TEST, &[Oracle::Lldpd])";

/// One lldpd process on one interface.
#[derive(Debug)]
pub struct Lldpd {
    ns: String,
    ifname: String,
    socket: PathBuf,
    child: Option<Child>,
    dir: TempDir,
}

impl Lldpd {
    /// lldpd on `ifname` in `ns`, sending every second (`configure lldp tx-interval
    /// 1`) so a test sees its changes quickly.
    pub fn start(ns: &Netns, ifname: &str) -> Lldpd {
        assert!(Path::new(LLDPD).exists(), "{MISSING}");
        let dir = TempDir::new();
        let socket = dir.path().join("lldpd.socket");
        let conf = dir.path().join("lldpd.conf");
        std::fs::write(&conf, "").unwrap_or_else(|e| panic!("{}: {e}", conf.display()));
        let log = std::fs::File::create(dir.path().join("lldpd.log")).expect("lldpd.log");
        // ip netns exec execs lldpd: the child's pid is lldpd's (its monitor; the
        // privilege-separated child follows it).
        let child = Command::new("ip")
            .args(["netns", "exec", &ns.name, LLDPD, "-d", "-I", ifname, "-u"])
            .arg(&socket)
            .arg("-p")
            .arg(dir.path().join("lldpd.pid"))
            .arg("-O")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log fd"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn lldpd: {e} ({MISSING})"));
        let mut l = Lldpd {
            ns: ns.name.clone(),
            ifname: ifname.to_string(),
            socket,
            child: Some(child),
            dir,
        };
        l.wait_answering();
        l.configure(&["lldp", "tx-interval", "1"]);
        l
    }

    fn wait_answering(&mut self) {
        let t0 = Instant::now();
        loop {
            if let Some(st) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("lldpd exited with {st}:\n{}", self.log());
            }
            if self.try_cli(&["show", "configuration"]).0 {
                return;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "lldpd does not answer on {} in {}:\n{}",
                self.socket.display(),
                self.ns,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn try_cli(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns, "lldpcli", "-u"])
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("lldpcli: {e} ({MISSING})"));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    /// `lldpcli ARGS` against this lldpd; it must succeed. Its output.
    pub fn cli(&self, args: &[&str]) -> String {
        let (ok, text) = self.try_cli(args);
        assert!(ok, "lldpcli {}: {text}\n{}", args.join(" "), self.log());
        text
    }

    /// `lldpcli configure WORDS` (e.g. `system hostname NAME`).
    pub fn configure(&self, words: &[&str]) {
        let mut args = vec!["configure"];
        args.extend_from_slice(words);
        self.cli(&args);
    }

    /// `lldpcli show neighbors details -f json`, parsed.
    pub fn neighbors(&self) -> serde_json::Value {
        let text = self.cli(&["show", "neighbors", "details", "-f", "json"]);
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("lldpcli gave no JSON ({e}):\n{text}"))
    }

    /// The neighbour lldpd knows on its interface (lldpcli's `interface.IF` object),
    /// once it knows one and `ready` accepts it; waits up to `limit`.
    pub fn wait_neighbor(
        &self,
        limit: Duration,
        ready: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let t0 = Instant::now();
        loop {
            let n = self.neighbors()["lldp"]["interface"][&self.ifname].clone();
            if !n.is_null() && ready(&n) {
                return n;
            }
            assert!(
                t0.elapsed() < limit,
                "lldpd's neighbour on {} after {limit:?}: {n:#}",
                self.ifname
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// lldpd's own output.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("lldpd.log")).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGTERM, then SIGKILL after 5 s; waits for exactly this process.
    pub fn stop(&mut self) {
        let Some(mut c) = self.child.take() else {
            return;
        };
        let pid = nix::unistd::Pid::from_raw(c.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = c.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = c.kill();
        let _ = c.wait();
    }
}

impl Drop for Lldpd {
    fn drop(&mut self) {
        self.stop();
    }
}

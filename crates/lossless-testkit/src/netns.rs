//! Network namespaces, veth pairs and temporary directories that a test makes and
//! removes itself (Drop guards, also when the test panics), commands run in them, and
//! polling. Needs root and iproute2's `ip`: a test that uses them starts with
//! [`crate::require`]`(test, &[Oracle::Netns])`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A name unique to this process and call, short enough for an interface or a
/// namespace (`prefix`, the pid modulo 100,000, `x`, a counter).
pub fn unique(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{}x{n}", std::process::id() % 100_000)
}

/// Runs `args[0]` with the rest as arguments; panics with its stderr unless it
/// succeeds.
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

/// A network namespace with `lo` up, deleted on drop.
#[derive(Debug)]
pub struct Netns {
    pub name: String,
    /// Deleted on drop (false: somebody else made it and removes it).
    owned: bool,
}

impl Netns {
    pub fn new() -> Netns {
        let ns = Netns::bare();
        ns.ip(&["link", "set", "lo", "up"]);
        ns
    }

    /// A namespace as the kernel makes it (`lo` down), deleted on drop.
    pub fn bare() -> Netns {
        let name = unique("lt");
        sh(&["ip", "netns", "add", &name]);
        Netns { name, owned: true }
    }

    /// A namespace made by someone else, left alone on drop.
    pub fn existing(name: &str) -> Netns {
        Netns {
            name: name.to_string(),
            owned: false,
        }
    }

    /// `ip -n NAME ARGS`; must succeed.
    pub fn ip(&self, args: &[&str]) -> Output {
        let mut v = vec!["ip", "-n", &self.name];
        v.extend_from_slice(args);
        sh(&v)
    }

    /// `ip netns exec NAME ARGS`; must succeed.
    pub fn exec(&self, args: &[&str]) -> Output {
        let mut v = vec!["ip", "netns", "exec", &self.name];
        v.extend_from_slice(args);
        sh(&v)
    }

    /// A command that runs `program` in this namespace (`ip netns exec`), to add
    /// arguments and environment to.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// `sysctl -w KEY=VALUE` in this namespace.
    pub fn sysctl(&self, setting: &str) {
        self.exec(&["sysctl", "-q", "-w", setting]);
    }

    /// Runs `f` on a thread that has entered this namespace (namespaces are per
    /// thread). A socket stays in the namespace it was made in, so sockets opened in
    /// `f` can be used from the calling thread afterwards.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        let path = Path::new("/run/netns").join(&self.name);
        std::thread::scope(|s| {
            s.spawn(|| {
                let ns =
                    File::open(&path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
                nix::sched::setns(ns, nix::sched::CloneFlags::CLONE_NEWNET)
                    .unwrap_or_else(|e| panic!("setns into {}: {e}", path.display()));
                f()
            })
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }

    /// Waits up to 3 s for `dev` to pass frames: carrier on and, for a veth, the
    /// kernel's linkwatch worker done (until then its qdisc is `noop` and every frame
    /// sent on it is dropped). Devices without operational state (vxlan) stay
    /// `UNKNOWN`.
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
}

impl Default for Netns {
    fn default() -> Netns {
        Netns::new()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if self.owned {
            let _ = Command::new("ip")
                .args(["netns", "del", &self.name])
                .output();
        }
    }
}

/// A veth pair between two namespaces, `a` in the first, `b` in the second (removed
/// with the namespaces).
#[derive(Debug, Clone)]
pub struct Veth {
    pub a: String,
    pub b: String,
}

impl Veth {
    /// Creates the pair, links down.
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

    /// Sets both ends up and waits until both pass frames.
    pub fn up(&self, na: &Netns, nb: &Netns) {
        na.ip(&["link", "set", &self.a, "up"]);
        nb.ip(&["link", "set", &self.b, "up"]);
        na.wait_running(&self.a);
        nb.wait_running(&self.b);
    }
}

/// The `AF_PACKET` sockets open in a namespace (`/proc/net/packet`, read from inside it).
pub fn packet_sockets(ns: &Netns) -> usize {
    let out = ns.exec(&["cat", "/proc/net/packet"]);
    String::from_utf8_lossy(&out.stdout).lines().skip(1).count()
}

/// Two namespaces joined by veth `va` (02:00:00:00:00:0a, in `a`) / `vb`
/// (02:00:00:00:00:0b, in `b`).
#[derive(Debug)]
pub struct Pair {
    pub a: Netns,
    pub b: Netns,
    pub veth: Veth,
}

impl Pair {
    pub const MAC_A: &'static str = "02:00:00:00:00:0a";
    pub const MAC_B: &'static str = "02:00:00:00:00:0b";

    /// The pair, links down.
    pub fn down() -> Pair {
        let a = Netns::new();
        let b = Netns::new();
        let veth = Veth::new(&a, "va", Pair::MAC_A, &b, "vb", Pair::MAC_B);
        Pair { a, b, veth }
    }

    /// The pair, both links up and running.
    pub fn up() -> Pair {
        let p = Pair::down();
        p.veth.up(&p.a, &p.b);
        p
    }
}

/// A temporary directory, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let p = std::env::temp_dir().join(unique("lossless-test-"));
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        TempDir(p)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Default for TempDir {
    fn default() -> TempDir {
        TempDir::new()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Polls `f` every millisecond until it returns Some, or panics after `limit` naming
/// `what`.
pub fn wait_for<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    wait_every(limit, Duration::from_millis(1), what, &mut f)
}

/// [`wait_for`] polling every `every` (for checks that run a command).
pub fn wait_every<T>(
    limit: Duration,
    every: Duration,
    what: &str,
    mut f: impl FnMut() -> Option<T>,
) -> T {
    let t0 = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            t0.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(every);
    }
}

//! The namespace harness the lossless-sys kernel tests share: namespaces and
//! veth pairs each test makes and removes itself (`lsys-<pid>-<n>`).
#![allow(dead_code)] // each test file uses part of it

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use lossless_sys::link::if_nametoindex;
use lossless_sys::packet::PacketSocket;

/// True when the test should run; prints and returns false when skipped;
/// panics with the reason otherwise.
pub fn privileged() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        if Command::new("ip").arg("-V").output().is_err() {
            panic!("the `ip` command (Debian package iproute2) is needed to make namespaces and veth pairs");
        }
        return true;
    }
    if std::env::var("LOSSLESS_SKIP_NETNS").as_deref() == Ok("1") {
        eprintln!("skipped: not root and LOSSLESS_SKIP_NETNS=1");
        return false;
    }
    panic!(
        "this test needs root (network namespaces, veth, AF_PACKET, dcbnl); \
         run it as root or set LOSSLESS_SKIP_NETNS=1 to skip it"
    );
}

pub fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("run `ip`");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A network namespace, deleted on drop (also when the test panics).
pub struct Netns {
    pub name: String,
}

impl Netns {
    pub fn new() -> Netns {
        let name = format!(
            "lsys-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        ip(&["netns", "add", &name]);
        Netns { name }
    }

    /// `ip -n NAME args...`
    pub fn ip(&self, args: &[&str]) {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        ip(&all);
    }

    /// Waits up to 3 s for the kernel's linkwatch worker to mark `dev`
    /// operationally up. Until then its qdisc is still `noop` and every frame
    /// sent on it is dropped, so a test that sends at once could lose its
    /// first frame (linkwatch may run up to a second after the carrier).
    pub fn wait_running(&self, dev: &str) {
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            let out = Command::new("ip")
                .args(["-n", &self.name, "-o", "link", "show", dev])
                .output()
                .expect("run ip");
            let text = String::from_utf8_lossy(&out.stdout);
            if text.contains("state UP") && !text.contains("qdisc noop") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{dev} not running after 3 s: {text}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Runs `f` on a thread that has entered this namespace.
    pub fn run<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        let path = Path::new("/run/netns").join(&self.name);
        std::thread::scope(|s| {
            s.spawn(|| {
                let ns = File::open(&path).expect("open the namespace file");
                // SAFETY: ns is an open namespace file; setns only affects
                // this thread.
                let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
                assert_eq!(r, 0, "setns: {}", io::Error::last_os_error());
                f()
            })
            .join()
            .expect("namespace thread")
        })
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

pub const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
pub const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];

/// Two namespaces joined by a veth pair `va` (in a) / `vb` (in b), both up.
pub struct Pair {
    pub a: Netns,
    pub b: Netns,
}

impl Pair {
    pub fn new() -> Pair {
        let a = Netns::new();
        let b = Netns::new();
        a.ip(&[
            "link",
            "add",
            "va",
            "address",
            "02:00:00:00:00:0a",
            "type",
            "veth",
            "peer",
            "name",
            "vb",
            "address",
            "02:00:00:00:00:0b",
            "netns",
            &b.name,
        ]);
        a.ip(&["link", "set", "va", "up"]);
        b.ip(&["link", "set", "vb", "up"]);
        a.wait_running("va");
        b.wait_running("vb");
        Pair { a, b }
    }

    pub fn sockets(&self) -> (PacketSocket, PacketSocket) {
        let sa = self
            .a
            .run(|| PacketSocket::open(if_nametoindex("va")?))
            .expect("packet socket on va");
        let sb = self
            .b
            .run(|| PacketSocket::open(if_nametoindex("vb")?))
            .expect("packet socket on vb");
        (sa, sb)
    }
}

pub fn eth(dst: [u8; 6], src: [u8; 6], types: &[u16], payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    for t in types {
        f.extend_from_slice(&t.to_be_bytes());
    }
    f.extend_from_slice(payload);
    f.resize(f.len().max(60), 0);
    f
}

//! Many ports at once: `n` veth pairs between two namespaces, `p0..p{n-1}` in the hub
//! and `q0..q{n-1}` in the leaf, made and set up with one `ip -batch` each (hundreds of
//! `ip` runs would take seconds).

use std::io::Write;
use std::process::{Command, Stdio};

use crate::netns::Netns;

/// `n` veth pairs, hub `p{i}` to leaf `q{i}`, removed with the namespaces.
#[derive(Debug)]
pub struct Fanout {
    pub hub: Netns,
    pub leaf: Netns,
    pub n: usize,
}

impl Fanout {
    /// The pairs, links down.
    pub fn new(n: usize) -> Fanout {
        let hub = Netns::new();
        let leaf = Netns::new();
        let batch: String = (0..n)
            .map(|i| {
                format!(
                    "link add p{i} type veth peer name q{i} netns {}\n",
                    leaf.name
                )
            })
            .collect();
        batch_ip(&hub, &batch);
        Fanout { hub, leaf, n }
    }

    /// The hub's port names, `p0..`.
    pub fn hub_ports(&self) -> Vec<String> {
        (0..self.n).map(|i| format!("p{i}")).collect()
    }

    /// Sets the hub's ends up.
    pub fn hub_up(&self) {
        batch_ip(&self.hub, &up("p", self.n));
    }

    /// Sets the leaf's ends up.
    pub fn leaf_up(&self) {
        batch_ip(&self.leaf, &up("q", self.n));
    }

    /// Sets every end up and waits until the last pair passes frames.
    pub fn up(&self) {
        self.hub_up();
        self.leaf_up();
        if self.n > 0 {
            let last = self.n - 1;
            self.hub.wait_running(&format!("p{last}"));
            self.leaf.wait_running(&format!("q{last}"));
        }
    }
}

fn up(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("link set {prefix}{i} up\n"))
        .collect()
}

/// `ip -n NS -batch -` with `commands` on its standard input; must succeed.
pub fn batch_ip(ns: &Netns, commands: &str) {
    let mut child = Command::new("ip")
        .args(["-n", &ns.name, "-batch", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("ip -batch: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(commands.as_bytes())
            .unwrap_or_else(|e| panic!("ip -batch: {e}"));
    }
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("ip -batch: {e}"));
    assert!(
        out.status.success(),
        "ip -n {} -batch failed: {}",
        ns.name,
        String::from_utf8_lossy(&out.stderr)
    );
}

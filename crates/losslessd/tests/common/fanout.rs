//! Many ports: a `Fanout` (hub `p*` to leaf `q*`) with a losslessd on each side.

use lossless_testkit::{Fanout, TempDir};
use serde_json::Value;

use super::Daemon;

/// `n` veth pairs, links down, a daemon in the hub taking every `p*` with `hub`'s
/// port section (TOML after `[ports."p*"]`) and one in the leaf taking every `q*`.
pub struct FanoutDaemons {
    pub f: Fanout,
    pub hub: Daemon,
    pub leaf: Daemon,
    pub dir: TempDir,
}

impl FanoutDaemons {
    pub fn start(n: usize, hub: &str) -> FanoutDaemons {
        let f = Fanout::new(n);
        let dir = TempDir::new();
        let start = |ns, name: &str, conf: String| {
            let path = dir.path().join(format!("{name}.toml"));
            std::fs::write(&path, conf).expect("write the configuration");
            let path = path.to_str().unwrap_or_default().to_string();
            Daemon::start(ns, &dir.path().join(name), &["--config", &path])
        };
        let hub = start(&f.hub, "hub", format!("[ports.\"p*\"]\n{hub}"));
        let leaf = start(&f.leaf, "leaf", "[ports.\"q*\"]\n".into());
        FanoutDaemons { f, hub, leaf, dir }
    }
}

/// The `ports` array of an answer (none: empty).
pub fn ports(v: &Value) -> Vec<Value> {
    v["ports"].as_array().cloned().unwrap_or_default()
}

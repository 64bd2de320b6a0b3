//! DCBX cases as data, one directory each under `tests/conformance/`, all read
//! by this one runner on the lab's simulator (the shape of holo's conformance
//! tests):
//!
//! - `topology.toml`: the nodes (name, MAC, the losslessd configuration file
//!   of each, in the same directory, whose `[ports."p0"]` is its port) and the
//!   links between them (`delay` and `loss` per direction);
//! - `inputs.toml`: what happens when: `link-up`/`link-down` of a link named
//!   `"a-b"`, `unplug`/`plug` of a node's port, `reload` of a node with
//!   another file (as on SIGHUP), `restart` (a crash: state lost, the state
//!   directory kept);
//! - `expected.toml`: at given instants, parts of a node's DCBX state as
//!   `lossless dcbx show --json` and `lossless lab --json` print it (`state.*`:
//!   every key given must be there with that value; keys not given are not
//!   looked at).
//!
//! At an instant with both, the expectations are checked first, then the
//! inputs are applied. A directory not listed in `cases!` fails the run, so a
//! new case cannot be skipped by mistake.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use lossless_dcbx::{Duration, Instant};
use lossless_lab::nic::Driver;
use lossless_lab::sim::PORT;
use lossless_lab::{NodeId, PathProps, SegmentId, Sim};
use lossless_node::config::{DaemonConfig, PortSettings};
use lossless_node::identity::LocalInfo;
use lossless_wire::MacAddr;
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Topology {
    /// What the case shows, for people (printed when it fails).
    description: String,
    #[serde(default)]
    seed: u64,
    node: Vec<NodeSpec>,
    link: Vec<LinkSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeSpec {
    name: String,
    mac: MacAddr,
    config: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkSpec {
    ends: [String; 2],
    #[serde(default)]
    delay: Option<String>,
    #[serde(default)]
    loss: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Inputs {
    #[serde(default)]
    input: Vec<Input>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    /// Seconds on the virtual clock.
    at: f64,
    action: Action,
    #[serde(default)]
    link: Option<String>,
    #[serde(default)]
    node: Option<String>,
    /// `reload`, `restart`: the node's new file (restart: default its current one).
    #[serde(default)]
    config: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum Action {
    LinkUp,
    LinkDown,
    Unplug,
    Plug,
    Reload,
    Restart,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expected {
    expect: Vec<Expect>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    at: f64,
    node: String,
    state: toml::Table,
}

fn dir(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance")
        .join(case)
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> T {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The port settings of a node's configuration file: what losslessd would run
/// on its port `p0`.
fn settings(case: &Path, file: &str) -> PortSettings {
    let path = case.join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let config = DaemonConfig::parse(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        config.selects(PORT),
        "{}: no [ports.\"{PORT}\"] section",
        path.display()
    );
    config.port(PORT)
}

fn at(s: f64) -> Instant {
    Instant::from_secs_f64(s)
}

/// Where `expected` differs from `actual`: every key of an expected table must
/// be in the actual one with a matching value; anything else must be equal.
fn differences(path: &str, expected: &Value, actual: &Value, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                let p = format!("{path}.{k}");
                match a.get(k) {
                    Some(got) => differences(&p, v, got, out),
                    None => out.push(format!("{p}: expected {v}, not in the state")),
                }
            }
        }
        (e, a) if e == a => {}
        (e, a) => out.push(format!("{path}: expected {e}, got {a}")),
    }
}

struct Run {
    description: String,
    sim: Sim,
    case: PathBuf,
    nodes: BTreeMap<String, NodeId>,
    links: BTreeMap<String, SegmentId>,
}

impl Run {
    fn new(case: &str) -> Run {
        let case = dir(case);
        let topo: Topology = read(&case.join("topology.toml"));
        let mut sim = Sim::new(topo.seed).with_capture();
        let mut nodes = BTreeMap::new();
        for n in &topo.node {
            let s = settings(&case, &n.config);
            let id = sim
                .add_node(&n.name, n.mac, s, Driver::NoDcbnl)
                .unwrap_or_else(|e| panic!("{}: {e}", n.name));
            nodes.insert(n.name.clone(), id);
        }
        let mut links = BTreeMap::new();
        for l in &topo.link {
            let [a, b] = l.ends.clone().map(|n| nodes[&n]);
            let seg = sim.connect(a, b);
            let delay = l.delay.as_deref().map_or(Duration::ZERO, |d| {
                let ps = lossless_headroom::units::parse_duration(d)
                    .unwrap_or_else(|e| panic!("link delay {d:?}: {e}"))
                    .0;
                Duration::from_nanos(ps.div_ceil(1000) as u64)
            });
            sim.set_link_props(
                a,
                b,
                PathProps {
                    delay,
                    loss: l.loss,
                },
            );
            links.insert(l.ends.join("-"), seg);
        }
        Run {
            description: topo.description,
            sim,
            case,
            nodes,
            links,
        }
    }

    fn node(&self, input: &Input) -> NodeId {
        let name = input.node.as_deref().expect("an input naming a node");
        self.nodes[name]
    }

    fn apply(&mut self, input: &Input) {
        match input.action {
            Action::LinkUp | Action::LinkDown => {
                let name = input.link.as_deref().expect("an input naming a link");
                let seg = self.links[name];
                self.sim
                    .set_link(seg, matches!(input.action, Action::LinkUp));
            }
            Action::Unplug | Action::Plug => {
                let n = self.node(input);
                self.sim
                    .set_node_link(n, matches!(input.action, Action::Plug));
            }
            Action::Reload => {
                let n = self.node(input);
                let file = input.config.as_deref().expect("reload: a config file");
                let s = settings(&self.case, file);
                self.sim
                    .write_settings(n, s)
                    .unwrap_or_else(|e| panic!("reload {file}: {e}"));
            }
            Action::Restart => {
                let n = self.node(input);
                let s = match input.config.as_deref() {
                    Some(file) => settings(&self.case, file),
                    None => self.sim.settings(n).clone(),
                };
                let mac = self.sim.agent(n).mac();
                self.sim
                    .restart(n, s.port_config(mac, &LocalInfo::default()))
                    .unwrap_or_else(|e| panic!("restart: {e}"));
            }
        }
    }
}

/// Runs one case; returns what it shows and what did not hold.
fn run_case(case: &str) -> (String, Vec<String>) {
    let mut run = Run::new(case);
    let inputs: Inputs = {
        let path = run.case.join("inputs.toml");
        if path.exists() {
            read(&path)
        } else {
            Inputs::default()
        }
    };
    let expected: Expected = read(&run.case.join("expected.toml"));
    let mut times: Vec<f64> = inputs
        .input
        .iter()
        .map(|i| i.at)
        .chain(expected.expect.iter().map(|e| e.at))
        .collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    let mut failures = Vec::new();
    for t in times {
        run.sim.run_until(at(t));
        for e in expected.expect.iter().filter(|e| e.at == t) {
            let n = run.nodes[&e.node];
            let actual = serde_json::to_value(run.sim.agent(n).status()).expect("JSON");
            let want = serde_json::to_value(&e.state).expect("JSON");
            let mut diffs = Vec::new();
            differences("state", &want, &actual, &mut diffs);
            failures.extend(
                diffs
                    .into_iter()
                    .map(|d| format!("{case} at {t} s, {}: {d}", e.node)),
            );
        }
        for i in inputs.input.iter().filter(|i| i.at == t) {
            run.apply(i);
        }
    }
    (run.description, failures)
}

macro_rules! cases {
    ($($name:ident => $dir:literal,)*) => {
        $(
            #[test]
            fn $name() {
                let (description, failures) = run_case($dir);
                assert!(failures.is_empty(), "{description}\n{}", failures.join("\n"));
            }
        )*

        #[test]
        fn every_case_directory_runs() {
            let listed = [$($dir),*];
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
            let mut found: Vec<String> = std::fs::read_dir(&root)
                .expect("tests/conformance")
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            found.sort();
            let mut listed: Vec<String> = listed.iter().map(|s| s.to_string()).collect();
            listed.sort();
            assert_eq!(found, listed, "every directory is a case in cases!");
        }
    };
}

cases! {
    cee_willing_host_adopts_the_switch => "cee-willing",
    cee_neither_willing_reports_the_mismatch => "cee-mismatch",
    cee_a_reload_moves_pfc_and_the_host_follows => "cee-reload",
    ieee_a_link_flap_drops_the_peer_and_takes_it_back => "ieee-link-flap",
}

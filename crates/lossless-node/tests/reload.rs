#![allow(clippy::unwrap_used)]
//! The node core on its own, fed by hand: a reload that reads an empty file (an
//! editor caught writing it) is refused, and a burst of SIGHUPs is one reload.

use std::path::{Path, PathBuf};

use lossless_dcbx::{Duration, Instant};
use lossless_node::config::DaemonConfig;
use lossless_node::link::Link;
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::protocol::{ErrorKind, Request, Response};
use lossless_node::state::PersistedState;

const FILE: &str = "[ports.\"va\"]\n";

fn at(ms: u64) -> Now {
    Now {
        mono: Instant::ZERO + Duration::from_millis(ms),
        unix: 1.8e9 + ms as f64 / 1000.0,
    }
}

fn node() -> Node {
    let path = PathBuf::from("/etc/lossless/reload.toml");
    let config = DaemonConfig::parse(FILE, Path::new(&path)).unwrap();
    let identity = Identity {
        config_path: Some(path),
        ..Identity::default()
    };
    let mut n = Node::new(config, identity, PersistedState::default(), at(0));
    n.handle_links(
        at(0),
        vec![Link {
            ifindex: 10,
            name: "va".into(),
            mac: Some([2, 0, 0, 0, 0, 0x0a]),
            admin_up: true,
            oper_up: true,
            carrier: true,
            alias: None,
        }],
    );
    drain(&mut n);
    n
}

/// Takes the outputs; how many asked for the file, and the replies.
fn drain(n: &mut Node) -> (usize, Vec<Response>) {
    let mut reads = 0;
    let mut replies = Vec::new();
    while let Some(out) = n.poll_output() {
        match out {
            Output::ReadConfig => reads += 1,
            Output::Reply { response, .. } => replies.push(response),
            _ => {}
        }
    }
    (reads, replies)
}

fn ports(n: &Node) -> Vec<String> {
    n.ports().map(|p| p.name.clone()).collect()
}

#[test]
fn a_reload_of_an_empty_file_is_refused_and_every_port_stays() {
    let mut n = node();
    assert_eq!(ports(&n), ["va"]);
    n.handle_request(at(10), 1, Request::Reload);
    assert_eq!(drain(&mut n).0, 1);
    n.handle_config(at(11), Ok(Some(String::new())));
    let (_, replies) = drain(&mut n);
    let [Response {
        ok: false,
        error: Some(error),
        ..
    }] = replies.as_slice()
    else {
        panic!("one refusal: {replies:?}")
    };
    assert_eq!(error.kind, ErrorKind::InvalidConfig);
    assert!(error.message.contains("empty"), "{}", error.message);
    assert_eq!(ports(&n), ["va"]);

    // A file with only a comment selects no port, and is taken.
    n.handle_request(at(20), 2, Request::Reload);
    drain(&mut n);
    n.handle_config(at(21), Ok(Some("# no port here\n".into())));
    let (_, replies) = drain(&mut n);
    assert!(
        matches!(replies.as_slice(), [Response { ok: true, .. }]),
        "{replies:?}"
    );
    assert!(ports(&n).is_empty());
}

#[test]
fn a_burst_of_sighups_is_one_reload() {
    let mut n = node();
    let mut reads = 0;
    // Ten signals 10 ms apart, the file answered as soon as it is asked for.
    for i in 0..10 {
        n.handle_reload_signal(at(100 + 10 * i));
        let (r, _) = drain(&mut n);
        reads += r;
        if r > 0 {
            n.handle_config(at(100 + 10 * i), Ok(Some(FILE.into())));
        }
    }
    // Run the node's timers for the next 5 s.
    let mut now = 200;
    while now < 5_000 {
        let Some(t) = n.poll_timeout() else { break };
        now = (t.since_epoch().as_millis() as u64).max(now);
        n.handle_timeout(at(now));
        let (r, _) = drain(&mut n);
        for _ in 0..r {
            n.handle_config(at(now), Ok(Some(FILE.into())));
            drain(&mut n);
        }
        reads += r;
        now += 1;
    }
    assert_eq!(reads, 1);
    assert_eq!(ports(&n), ["va"]);
}

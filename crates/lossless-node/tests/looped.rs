#![allow(clippy::unwrap_used)]
//! The node core on its own, fed by hand: an LLDPDU one of its ports sent, coming back
//! on a port (a looped cable), is discarded and counted, and makes the port unhealthy
//! until the TTL of such LLDPDUs has passed or the link goes down.

use std::path::Path;

use lossless_dcbx::{Duration, Instant};
use lossless_node::config::DaemonConfig;
use lossless_node::link::{Link, LinkChange};
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::state::PersistedState;

fn at(s: u64) -> Now {
    Now {
        mono: Instant::ZERO + Duration::from_secs(s),
        unix: 1.8e9 + s as f64,
    }
}

fn link(ifindex: u32, name: &str, last: u8, up: bool) -> Link {
    Link {
        ifindex,
        name: name.into(),
        mac: Some([2, 0, 0, 0, 0, last]),
        admin_up: true,
        oper_up: up,
        carrier: up,
        alias: None,
    }
}

/// What the node sent on `ifindex` since the last call.
fn sent(n: &mut Node, ifindex: u32) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(o) = n.poll_output() {
        if let Output::Send { ifindex: i, frame } = o {
            if i == ifindex {
                out.push(frame);
            }
        }
    }
    out
}

fn node() -> Node {
    let config =
        DaemonConfig::parse("[ports.\"va\"]\n[ports.\"vb\"]\n", Path::new("l.toml")).unwrap();
    let mut n = Node::new(
        config,
        Identity::default(),
        PersistedState::default(),
        at(0),
    );
    n.handle_links(
        at(0),
        vec![link(10, "va", 0x0a, true), link(11, "vb", 0x0b, true)],
    );
    n
}

fn looped(n: &Node, port: &str) -> bool {
    n.port(port).unwrap().health().health.contains("loop:")
}

#[test]
fn our_own_lldpdu_back_on_a_port_is_a_loop_until_its_ttl_or_the_link_goes() {
    let mut n = node();
    let lldpdu = sent(&mut n, 10)
        .into_iter()
        .next()
        .expect("va sends at link-up");
    // Back on va itself (a reflecting device), and on vb (va and vb joined).
    n.handle_frame(at(1), 10, &lldpdu);
    n.handle_frame(at(1), 11, &lldpdu);
    for port in ["va", "vb"] {
        let p = n.port(port).unwrap();
        assert_eq!(p.io.rx_own_lldpdus, 1, "{port}");
        assert!(
            p.agent.neighbors().is_empty(),
            "{port}: no neighbour made of it"
        );
        assert!(looped(&n, port), "{:?}", p.health());
        assert!(
            p.health().health.contains("Port ID of va"),
            "{:?}",
            p.health()
        );
    }
    // No more such LLDPDUs: the loop holds for their TTL (120 s), then is gone.
    let mut now = 1;
    while looped(&n, "vb") {
        let t = n.poll_timeout().unwrap();
        now = t.since_epoch().as_secs().max(now);
        assert!(now <= 122, "still looped at {now} s");
        n.handle_timeout(at(now));
        now += 1;
    }
    assert!(now >= 120, "the loop went at {now} s, before the TTL");
    // A link going down ends it at once.
    n.handle_frame(at(now), 11, &lldpdu);
    assert!(looped(&n, "vb"));
    n.handle_link_change(at(now), LinkChange::New(link(11, "vb", 0x0b, false)));
    n.handle_link_change(at(now), LinkChange::New(link(11, "vb", 0x0b, true)));
    assert!(!looped(&n, "vb"));
    // va took a new MAC: its old LLDPDU is no longer this host's, and is a neighbour.
    n.handle_link_change(at(now), LinkChange::New(link(10, "va", 0x1a, true)));
    sent(&mut n, 10);
    n.handle_frame(at(now + 1), 11, &lldpdu);
    assert!(!looped(&n, "vb"));
    assert_eq!(n.port("vb").unwrap().agent.neighbors().len(), 1);
}

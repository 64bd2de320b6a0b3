#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Every answer of a live daemon reads into its typed view (lossless-proto's, what
//! lossless-client and the CLI read) and writes back to exactly the daemon's JSON.
//! What this catches: a part of an answer built outside the view types (by hand, or a
//! `serde_json::Value` field), and serde attributes that do not read back what they
//! write (`flatten`, `untagged`, `skip_serializing_if` without a default). A field
//! renamed in a view type is not caught here: the daemon writes and the CLI reads the
//! same type, so both change together; the documented names are docs/daemon.md's.
//!
//! Two daemons over a veth pair, so that the views have a peer, neighbours and
//! negotiated features to show: A runs CEE DCBX from a file and measures its link's
//! headroom, B the defaults (IEEE 802.1Qaz, falling back to CEE for A, no measurement);
//! both are asked every request kind (`events` without `follow`).

mod common;

use std::time::Duration;

use common::*;
use lossless_client::{Client, ClientError};
use lossless_node::headroom::HeadroomShow;
use lossless_node::pfc::view::PortPfcView;
use lossless_node::protocol::EventsResult;
use lossless_proto::{
    Changed, CountersResult, DcbxView, ErrorKind, FeatureChange, FeatureName, PortNeighbors, Ports,
    ReloadResult, Request, RoceView, StatusResult,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

const CONFIG_A: &str = r#"
[defaults.dcbx]
mode = "cee"

[ports."va"]
pfc = { willing = false, priorities = [3, 4] }
pg = { willing = false, pgid = [0, 0, 0, 1, 1, 1, 15, 2], percent = [25, 75, 0, 0, 0, 0, 0, 0] }
headroom = { measure = true, speed = "100G" }
"#;

/// The first place where `a` and `b` differ, as a path (`ports[0].mode.reason`).
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys()) {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => {
                        if let Some(d) = first_difference(&p, u, v) {
                            return Some(d);
                        }
                    }
                    (Some(u), None) => return Some(format!("{p}: {u} only in the daemon's")),
                    (None, Some(v)) => return Some(format!("{p}: {v} only in the view's")),
                    (None, None) => {}
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(&format!("{path}[{i}]"), u, v)),
        _ => (a != b).then(|| format!("{path}: the daemon's {a}, the view's {b}")),
    }
}

/// Reads `v` (the daemon's answer to `what`) as `T`, writes it back and requires the
/// very same JSON.
fn round_trip<T: DeserializeOwned + Serialize>(what: &str, v: &Value) -> T {
    let typed: T = serde_json::from_value(v.clone())
        .unwrap_or_else(|e| panic!("{what}: the answer does not read as its view: {e}\n{v:#}"));
    let back = serde_json::to_value(&typed).unwrap();
    if let Some(d) = first_difference(what, v, &back) {
        panic!("{what}: the view does not write back the daemon's JSON: {d}\n{v:#}");
    }
    typed
}

fn call(d: &Daemon, req: &Request) -> Result<Value, ClientError> {
    Client::connect(&d.socket).unwrap().call(req)
}

fn every_answer_reads_into_its_view_and_back(d: &Daemon, port: &str) {
    let one = || Some(port.to_string());
    let st: StatusResult = round_trip("status", &d.call(&Request::Status));
    assert_eq!(st.ports[0].summary.port, port);
    for p in [None, one()] {
        let nb: Ports<PortNeighbors> = round_trip(
            "neighbors",
            &d.call(&Request::Neighbors { port: p.clone() }),
        );
        assert!(!nb.ports[0].neighbors.is_empty(), "{port}: no neighbour");
        let show: Ports<DcbxView> =
            round_trip("dcbx_show", &d.call(&Request::DcbxShow { port: p.clone() }));
        assert!(show.ports[0].dcbx.peer_present);
        round_trip::<CountersResult>("counters", &d.call(&Request::Counters { port: p.clone() }));
        round_trip::<Ports<PortPfcView>>(
            "pfc_show",
            &d.call(&Request::PfcShow { port: p.clone() }),
        );
        round_trip::<Ports<HeadroomShow>>(
            "headroom_show",
            &d.call(&Request::HeadroomShow { port: p }),
        );
    }
    let change = FeatureChange {
        feature: FeatureName::Pfc,
        priorities: Some(vec![3]),
        ..FeatureChange::default()
    };
    round_trip::<Changed<DcbxView>>(
        "dcbx_set",
        &d.call(&Request::DcbxSet {
            port: port.into(),
            change,
        }),
    );
    round_trip::<Changed<DcbxView>>(
        "dcbx_reset",
        &d.call(&Request::DcbxReset {
            port: port.into(),
            feature: None,
        }),
    );
    round_trip::<Changed<RoceView>>(
        "roce_reset",
        &d.call(&Request::RoceReset { port: port.into() }),
    );
    round_trip::<ReloadResult>("reload", &d.call(&Request::Reload));
    let ev: EventsResult = round_trip("events", &d.call(&Request::Events { follow: false }));
    assert!(ev.events.iter().any(|e| e.port == port), "{port}: no event");
    // No [relay] section: refused, by kind.
    match call(d, &Request::RelayShow) {
        Err(ClientError::Daemon(e)) => assert_eq!(e.kind, ErrorKind::NotConfigured),
        other => panic!("relay_show without [relay]: {other:?}"),
    }
}

#[test]
fn every_answer_of_a_live_daemon_reads_into_its_view_and_writes_back_the_same_json() {
    if !require(
        "every_answer_of_a_live_daemon_reads_into_its_view_and_writes_back_the_same_json",
        &[Oracle::Netns],
    ) {
        return;
    }
    let dir = TempDir::new();
    let pair = lossless_testkit::Pair::up();
    let conf = dir.path().join("a.toml");
    std::fs::write(&conf, CONFIG_A).unwrap();
    let a = Daemon::start(
        &pair.a,
        &dir.path().join("a"),
        &["--config", conf.to_str().unwrap()],
    );
    let b = Daemon::start(&pair.b, &dir.path().join("b"), &["--interface", "vb"]);
    for (d, port) in [(&a, "va"), (&b, "vb")] {
        wait_for(
            Duration::from_secs(10),
            &format!("{port} to converge"),
            || converged(&d.dcbx(port)).then_some(()),
        );
    }
    every_answer_reads_into_its_view_and_back(&a, "va");
    every_answer_reads_into_its_view_and_back(&b, "vb");
}

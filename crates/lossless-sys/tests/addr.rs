#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Interface addresses and aliases from the real kernel, in a namespace this test
//! makes and removes itself: what the daemon's Management Address and Port
//! Description come from.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use lossless_sys::addr::{dump_addresses, AddrEvent, AddrInfo, AddrMonitor};
use lossless_sys::link::dump_links;

mod common;
use common::*;

/// Reads address events until one matches `want`, or 5 s pass.
fn wait_for(mon: &AddrMonitor, what: &str, want: impl Fn(&AddrEvent) -> bool) -> AddrEvent {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = Vec::new();
    loop {
        match mon.recv() {
            Ok(evs) => {
                for ev in evs {
                    if want(&ev) {
                        return ev;
                    }
                    seen.push(ev);
                }
            }
            Err(e) if e.would_block() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("waiting for {what}: {e}; events so far: {seen:#?}"),
        }
    }
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn addresses_are_dumped_and_followed_and_an_alias_is_read() {
    if !require(
        "addresses_are_dumped_and_followed_and_an_alias_is_read",
        &[Oracle::Netns],
    ) {
        return;
    }
    let ns = Netns::new();
    let mon = ns.run(AddrMonitor::open).expect("address monitor");
    ns.ip(&["link", "add", "x0", "type", "veth", "peer", "name", "x1"]);
    ns.ip(&["link", "set", "x0", "alias", "to leaf 1 swp3"]);
    ns.ip(&["addr", "add", "192.0.2.3/24", "dev", "x0"]);
    ns.ip(&["addr", "add", "192.0.2.9/24", "dev", "x0"]);
    // nodad: usable at once, not tentative while duplicate detection runs.
    ns.ip(&["addr", "add", "2001:db8::3/64", "dev", "x0", "nodad"]);
    let x0 = ns
        .run(dump_links)
        .unwrap()
        .into_iter()
        .find(|l| l.name == "x0")
        .expect("x0");
    assert_eq!(x0.alias.as_deref(), Some("to leaf 1 swp3"));

    let new = wait_for(
        &mon,
        "192.0.2.3 added",
        |e| matches!(e, AddrEvent::New(a) if a.address == ip("192.0.2.3")),
    );
    let AddrEvent::New(a) = new else {
        unreachable!()
    };
    assert_eq!(
        (a.ifindex, a.prefix_len, a.secondary),
        (x0.ifindex, 24, false)
    );

    let all = ns.run(dump_addresses).unwrap();
    let on_x0: Vec<&AddrInfo> = all.iter().filter(|a| a.ifindex == x0.ifindex).collect();
    let v4: Vec<(IpAddr, bool)> = on_x0
        .iter()
        .filter(|a| a.address.is_ipv4())
        .map(|a| (a.address, a.secondary))
        .collect();
    // The second address in the same subnet is secondary, and listed after.
    assert_eq!(v4, vec![(ip("192.0.2.3"), false), (ip("192.0.2.9"), true)]);
    let v6 = on_x0
        .iter()
        .find(|a| a.address == ip("2001:db8::3"))
        .expect("the IPv6 address");
    assert!(!v6.tentative && !v6.secondary && v6.prefix_len == 64);
    // lo's addresses are there too, host scope.
    let lo = all
        .iter()
        .find(|a| a.address == ip("127.0.0.1"))
        .expect("lo");
    assert_eq!((lo.ifindex, lo.scope), (1, 254));

    ns.ip(&["addr", "del", "192.0.2.3/24", "dev", "x0"]);
    wait_for(
        &mon,
        "192.0.2.3 removed",
        |e| matches!(e, AddrEvent::Del(a) if a.address == ip("192.0.2.3")),
    );
}

#![allow(clippy::unwrap_used)]
//! The node core told who the host is (`handle_host`), as losslessd and the lab tell
//! it: its LLDPDUs carry the host's name, description, capabilities, a management
//! address and the interface's alias, and any change goes out at once.

use std::net::IpAddr;
use std::path::Path;

use lossless_dcbx::Instant;
use lossless_node::config::DaemonConfig;
use lossless_node::identity::{HostAddress, HostInfo};
use lossless_node::link::{Link, LinkChange};
use lossless_node::node::{Identity, Node, Now, Output};
use lossless_node::state::PersistedState;
use lossless_wire::frame::{Frame, Payload};

const IFINDEX: u32 = 4;

fn now(secs: f64) -> Now {
    Now {
        mono: Instant::from_secs_f64(secs),
        unix: secs,
    }
}

fn link(alias: Option<&str>) -> Link {
    Link {
        ifindex: IFINDEX,
        name: "eth0".into(),
        mac: Some([2, 0, 0, 0, 0, 4]),
        admin_up: true,
        oper_up: true,
        carrier: true,
        alias: alias.map(str::to_string),
    }
}

fn host(name: &str, addresses: &[(u32, &str)]) -> HostInfo {
    HostInfo {
        hostname: Some(name.into()),
        description: Some("Linux 6.1.0 #1 SMP x86_64".into()),
        forwarding: false,
        addresses: addresses
            .iter()
            .map(|(ifindex, a)| HostAddress {
                ifindex: *ifindex,
                address: a.parse().unwrap(),
                secondary: false,
            })
            .collect(),
    }
}

/// What an LLDPDU says about its sender.
#[derive(Debug, PartialEq)]
struct Said {
    system_name: Option<String>,
    port_description: Option<String>,
    system_description: Option<String>,
    capabilities: Option<(u16, u16)>,
    management: Vec<(IpAddr, u32)>,
}

/// The identity of every LLDPDU the node sent since the last call.
fn sent(node: &mut Node) -> Vec<Said> {
    let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
    let mut out = Vec::new();
    while let Some(o) = node.poll_output() {
        let Output::Send { frame, .. } = o else {
            continue;
        };
        let Ok(Frame {
            payload: Payload::Lldp(pdu),
            ..
        }) = Frame::parse(&frame)
        else {
            continue;
        };
        out.push(Said {
            system_name: text(pdu.system_name),
            port_description: text(pdu.port_description),
            system_description: text(pdu.system_description),
            capabilities: pdu.system_capabilities.map(|c| (c.capabilities, c.enabled)),
            management: pdu
                .management_addresses
                .iter()
                .map(|m| {
                    let a: IpAddr = match m.address.len() {
                        4 => <[u8; 4]>::try_from(m.address).unwrap().into(),
                        _ => <[u8; 16]>::try_from(m.address).unwrap().into(),
                    };
                    (a, m.interface_number)
                })
                .collect(),
        });
    }
    out
}

fn node(file: &str) -> Node {
    let config = DaemonConfig::parse(file, Path::new("host.toml")).unwrap();
    Node::new(
        config,
        Identity::default(),
        PersistedState::default(),
        now(0.0),
    )
}

#[test]
fn the_first_lldpdu_says_who_the_host_is_and_changes_go_out_at_once() {
    let mut n = node("[ports.\"eth0\"]\n");
    n.handle_host(
        now(0.0),
        host("rack7-host3", &[(1, "127.0.0.1"), (IFINDEX, "192.0.2.4")]),
    );
    n.handle_links(now(0.0), vec![link(None)]);
    let first = sent(&mut n);
    assert_eq!(
        first.first(),
        Some(&Said {
            system_name: Some("rack7-host3".into()),
            port_description: Some("eth0".into()),
            system_description: Some("Linux 6.1.0 #1 SMP x86_64".into()),
            capabilities: Some((0x80, 0x80)),
            management: vec![("192.0.2.4".parse().unwrap(), IFINDEX)],
        })
    );

    // A new host name, an address gone: one LLDPDU now, not at the next timer.
    n.handle_host(now(10.0), host("rack7-host3b", &[(2, "2001:db8::2")]));
    let s = sent(&mut n);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].system_name.as_deref(), Some("rack7-host3b"));
    assert_eq!(
        s[0].management,
        vec![("2001:db8::2".parse().unwrap(), IFINDEX)]
    );

    // The same again: nothing to say.
    n.handle_host(now(10.5), host("rack7-host3b", &[(2, "2001:db8::2")]));
    assert_eq!(sent(&mut n), vec![]);

    // An alias set on the interface is its Port Description.
    n.handle_link_change(now(11.0), LinkChange::New(link(Some("to leaf1 swp3"))));
    let s = sent(&mut n);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(s[0].port_description.as_deref(), Some("to leaf1 swp3"));
}

#[test]
fn the_file_overrides_and_turns_off() {
    let mut n = node(
        "[ports.\"eth0\"]\nsystem_name = \"h3.example.net\"\nsystem_description = false\n\
         management_address = false\nport_description = \"uplink\"\n",
    );
    n.handle_host(now(0.0), host("rack7-host3", &[(IFINDEX, "192.0.2.4")]));
    n.handle_links(now(0.0), vec![link(Some("alias"))]);
    let first = sent(&mut n);
    assert_eq!(
        first.first(),
        Some(&Said {
            system_name: Some("h3.example.net".into()),
            port_description: Some("uplink".into()),
            system_description: None,
            capabilities: Some((0x80, 0x80)),
            management: vec![],
        })
    );
    // Host changes the file overrides do not show: nothing to send.
    n.handle_host(now(5.0), host("other", &[(IFINDEX, "192.0.2.5")]));
    assert_eq!(sent(&mut n), vec![]);
}

//! The identity TLVs in the configuration file: `port_description`, `system_name`,
//! `system_description`, `system_capabilities`, `management_address`; what each value
//! means, every refusal with its line, column and key, and the room they leave the
//! DCBX TLVs in one frame.

use std::net::IpAddr;
use std::path::Path;

use lossless_node::config::DaemonConfig;
use lossless_node::identity::{Advertise, Host, HostAddress, HostInfo, LocalInfo};
use lossless_node::link::Link;
use lossless_wire::lldp::{capability, SystemCapabilities};
use lossless_wire::MacAddr;

const FILE: &str = "/etc/lossless/losslessd.toml";

fn parse(text: &str) -> DaemonConfig {
    DaemonConfig::parse(text, Path::new(FILE)).unwrap_or_else(|e| panic!("refused: {e}"))
}

fn refuse(text: &str) -> String {
    match DaemonConfig::parse(text, Path::new(FILE)) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("address")
}

fn host() -> HostInfo {
    HostInfo {
        hostname: Some("rack7-host3".into()),
        description: Some("Linux 6.1.0-18-amd64 #1 SMP Debian x86_64".into()),
        forwarding: false,
        addresses: vec![
            HostAddress {
                ifindex: 1,
                address: ip("127.0.0.1"),
                secondary: false,
            },
            HostAddress {
                ifindex: 2,
                address: ip("10.1.0.3"),
                secondary: false,
            },
            HostAddress {
                ifindex: 5,
                address: ip("fe80::5"),
                secondary: false,
            },
        ],
    }
}

fn link(name: &str, ifindex: u32, alias: Option<&str>) -> Link {
    Link {
        ifindex,
        name: name.into(),
        mac: Some([2, 0, 0, 0, 0, 5]),
        admin_up: true,
        oper_up: true,
        carrier: true,
        alias: alias.map(str::to_string),
    }
}

#[test]
fn by_default_every_value_is_the_hosts() {
    let c = parse("");
    let s = c.port("enp65s0f0");
    let id = &s.identity;
    assert_eq!(id.port_description, Advertise::Host);
    assert_eq!(id.system_name, Advertise::Host);
    assert_eq!(id.system_description, Advertise::Host);
    assert_eq!(id.system_capabilities, Advertise::Host);
    assert_eq!(id.management_address, Advertise::Host);

    let mac = MacAddr([2, 0, 0, 0, 0, 5]);
    let l = link("enp65s0f0", 5, Some("to leaf1 swp3"));
    let cfg = s.port_config(mac, &LocalInfo::of(&Host::new(host()), &l));
    assert_eq!(cfg.port_description.as_deref(), Some("to leaf1 swp3"));
    assert_eq!(cfg.system_name.as_deref(), Some("rack7-host3"));
    assert_eq!(
        cfg.system_description.as_deref(),
        Some("Linux 6.1.0-18-amd64 #1 SMP Debian x86_64")
    );
    let station = SystemCapabilities {
        capabilities: capability::STATION_ONLY,
        enabled: capability::STATION_ONLY,
    };
    assert_eq!(cfg.system_capabilities, Some(station));
    // The port has a link-local address only: the host's IPv4 address, numbered with
    // the port's ifIndex.
    let m = cfg.management_address.expect("an address");
    assert_eq!((m.address, m.ifindex), (ip("10.1.0.3"), 5));

    // No alias: the interface's name. A forwarding host is a router.
    let mut router = host();
    router.forwarding = true;
    let cfg = s.port_config(
        mac,
        &LocalInfo::of(&Host::new(router.clone()), &link("enp65s0f0", 5, None)),
    );
    assert_eq!(cfg.port_description.as_deref(), Some("enp65s0f0"));
    assert_eq!(
        cfg.system_capabilities,
        Some(SystemCapabilities {
            capabilities: capability::ROUTER,
            enabled: capability::ROUTER
        })
    );
}

#[test]
fn each_value_is_set_or_turned_off_in_defaults_and_per_port() {
    let c = parse(
        "\
[defaults]
system_name = \"rack7-host3.example.net\"
system_description = false
system_capabilities = { capabilities = [\"bridge\", \"router\"], enabled = [\"router\"] }

[ports.\"enp65s0f*\"]
management_address = \"2001:db8:7::3\"

[ports.\"enp65s0f1\"]
port_description = \"to leaf2 swp7\"
system_description = true
system_name = false
management_address = false
",
    );
    let mac = MacAddr([2, 0, 0, 0, 0, 5]);
    let cfg = |port: &str| {
        c.port(port).port_config(
            mac,
            &LocalInfo::of(&Host::new(host()), &link(port, 5, Some("alias"))),
        )
    };
    let f0 = cfg("enp65s0f0");
    assert_eq!(f0.system_name.as_deref(), Some("rack7-host3.example.net"));
    assert_eq!(f0.system_description, None);
    assert_eq!(f0.port_description.as_deref(), Some("alias"));
    assert_eq!(
        f0.system_capabilities,
        Some(SystemCapabilities {
            capabilities: capability::BRIDGE | capability::ROUTER,
            enabled: capability::ROUTER
        })
    );
    let m = f0.management_address.expect("an address");
    assert_eq!((m.address, m.ifindex), (ip("2001:db8:7::3"), 5));

    let f1 = cfg("enp65s0f1");
    assert_eq!(f1.port_description.as_deref(), Some("to leaf2 swp7"));
    assert_eq!(f1.system_name, None);
    assert_eq!(
        f1.system_description.as_deref(),
        Some("Linux 6.1.0-18-amd64 #1 SMP Debian x86_64")
    );
    assert_eq!(f1.management_address, None);
    // A list gives the capabilities, all enabled.
    let c = parse("[defaults]\nsystem_capabilities = [\"station_only\"]\n");
    assert_eq!(
        c.port("x").identity.system_capabilities,
        Advertise::Value(SystemCapabilities {
            capabilities: 0x80,
            enabled: 0x80
        })
    );
}

#[test]
fn refusals_name_line_column_key_and_why() {
    let long = "x".repeat(256);
    for (text, want) in [
        (
            format!("[defaults]\nsystem_description = \"{long}\"\n"),
            "2:22: defaults.system_description: 256 octets: the TLV carries at most 255",
        ),
        (
            format!(
                "[ports.\"eth0\"]\nport_description = \"{}\"\n",
                "é".repeat(128)
            ),
            "2:20: ports.\"eth0\".port_description: 256 octets: the TLV carries at most 255",
        ),
        (
            "[defaults]\nsystem_name = 7\n".into(),
            "2:15: defaults.system_name: expected a string, true (the host's value) or \
             false (not sent), found an integer",
        ),
        (
            "[defaults]\nsystem_capabilities = [\"router\", \"teleporter\"]\n".into(),
            "2:34: defaults.system_capabilities[1]: unknown capability \"teleporter\"; \
             expected one of: other, repeater, bridge, wlan_access_point, router, telephone, \
             docsis_cable_device, station_only, cvlan_component, svlan_component, \
             two_port_mac_relay",
        ),
        (
            "[defaults]\nsystem_capabilities = [\"router\", \"router\"]\n".into(),
            "2:34: defaults.system_capabilities[1]: \"router\" is listed twice",
        ),
        (
            "[defaults]\nsystem_capabilities = { capabilities = [\"station_only\"], \
             enabled = [\"router\"] }\n"
                .into(),
            "2:68: defaults.system_capabilities.enabled: router enabled but not among the \
             capabilities: a system can only enable what it has",
        ),
        (
            "[defaults]\nsystem_capabilities = { enabled = [\"router\"] }\n".into(),
            "2:23: defaults.system_capabilities: missing key `capabilities`",
        ),
        (
            "[defaults]\nsystem_capabilities = \"router\"\n".into(),
            "2:23: defaults.system_capabilities: expected a list of capabilities such as \
             [\"station_only\"], a table { capabilities = [..], enabled = [..] }, true \
             (the host's value) or false (not sent), found a string",
        ),
        (
            "[defaults]\nmanagement_address = \"192.0.2.300\"\n".into(),
            "2:22: defaults.management_address: \"192.0.2.300\" is not an IPv4 or IPv6 address",
        ),
        (
            "[ports.\"eth0\"]\nmanagement_address = \"127.0.0.1\"\n".into(),
            "2:22: ports.\"eth0\".management_address: 127.0.0.1 is a loopback address: a \
             neighbour's manager could not reach the host there",
        ),
        (
            "[defaults]\nmanagement_address = \"ff02::1\"\n".into(),
            "2:22: defaults.management_address: ff02::1 is not a unicast address: a \
             neighbour's manager could not reach the host there",
        ),
    ] {
        assert_eq!(refuse(&text), format!("{FILE}:{want}"), "{text}");
    }
}

/// Chassis ID and Port ID of 255 octets each, and the host's values counted at their
/// longest, leave no room for a CEE DCBX TLV: the file is refused, blamed on the key
/// set last, saying how much each part takes. Turning the host's strings off makes
/// room. (One of them alone fits.)
#[test]
fn identity_that_leaves_no_room_for_dcbx_is_refused() {
    let x = "x".repeat(255);
    let defaults = format!("[defaults]\nchassis_id = \"{x}\"\n");
    parse(&defaults);
    let text = format!("{defaults}\n[ports.\"eth0\"]\nport_id = \"{x}\"\n");
    // Chassis 258, Port 258, TTL 4, Port Description 257, System Name 66, System
    // Description 257, capabilities 6, an IPv6 management address 26, End 2.
    assert_eq!(
        refuse(&text),
        format!(
            "{FILE}:5:11: ports.\"eth0\".port_id: the LLDPDU could reach 1647 octets, over \
             the 1500 one Ethernet frame carries: Chassis ID, Port ID and the identity TLVs \
             take 1134, the DCBX TLVs up to 513; shorten chassis_id, port_id or the identity \
             strings, or turn one off (the values left to the host are counted at their \
             longest: a host name of 64 octets, an alias and a description of 255)"
        )
    );
    // IEEE 802.1Qaz only: its TLVs as configured (ETS 27, PFC 8, APP 7) fit.
    parse(&format!("{text}dcbx.mode = \"ieee\"\n"));
    // Or fewer identity TLVs.
    parse(&format!(
        "{text}system_description = false\nport_description = \"p1\"\n"
    ));
}

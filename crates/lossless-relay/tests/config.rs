//! The `[relay]` section as an operator writes it, read with serde from TOML.

mod common;

use common::*;
use lossless_relay::{
    ConfigError, GatewayConfig, Marking, Relay, RelayConfig, RelaySection, TunnelConfig,
};
use lossless_wire::MacAddr;

#[derive(serde::Deserialize)]
struct File {
    relay: RelaySection,
}

fn section(text: &str) -> Result<RelaySection, String> {
    toml::from_str::<File>(text)
        .map(|f| f.relay)
        .map_err(|e| e.to_string())
}

fn pe(text: &str) -> RelayConfig {
    match section(text).expect("parses") {
        RelaySection::Pe(c) => c,
        other => panic!("not a PE: {other:?}"),
    }
}

const SRV6: &str = r#"
[relay]
role = "pe"

[relay.dc]
interface = "pe2-dc"
port_mac = "02:00:00:00:e2:00"
gateway_port_mac = "02:00:00:00:d2:01"
gateway_system_mac = "02:00:00:00:d2:00"

[relay.wan]
interface = "pe2-wan"
port_mac = "02:00:00:00:e2:01"
next_hop_mac = "02:00:00:00:e1:01"

[relay.tunnel]
type = "srv6"
source = "fc00::e2"
segments = ["fc00::e1:d2"]
local_sid = "fc00::e2:d2"
"#;

#[test]
fn a_minimal_srv6_pe_takes_the_defaults() {
    let cfg = pe(SRV6);
    assert_eq!(cfg, pe2(Kind::Srv6));
    assert_eq!(cfg.marking, Marking::default());
    assert_eq!(
        (
            cfg.marking.dscp,
            cfg.marking.vlan_pcp,
            cfg.marking.mpls_tc,
            cfg.marking.socket_priority
        ),
        (48, 7, 7, 7)
    );
    assert_eq!(cfg.storm.max_per_second, None);
    assert_eq!(cfg.storm.episode_gap, "100ms");
    assert!(Relay::new(cfg, t(0)).is_ok());
}

#[test]
fn every_section_spelled_out() {
    let text = r#"
[relay]
role = "pe"
[relay.dc]
port_mac = "02:00:00:00:e2:00"
gateway_port_mac = "02:00:00:00:d2:01"
[relay.wan]
port_mac = "02:00:00:00:e2:01"
next_hop_mac = "02:00:00:00:e1:01"
vlan = 100
[relay.tunnel]
type = "sr-mpls"
labels = [16001, 101]
local_label = 102
pop_labels = [16002]
control_word = false
ttl = 255
[relay.marking]
dscp = 56
vlan_pcp = 6
mpls_tc = 5
socket_priority = 6
[relay.storm]
max_per_second = 1000
burst = 50
episode_gap = "20ms"
[relay.buffer]
wan_delay = "2ms"
rx_rate = "100G"
tx_rate = "60G"
reserved = "12MB"
"#;
    let cfg = pe(text);
    assert_eq!(cfg.wan.vlan, Some(100));
    assert_eq!(
        cfg.tunnel,
        TunnelConfig::SrMpls {
            labels: vec![16001, 101],
            local_label: 102,
            pop_labels: vec![16002],
            control_word: false,
            ttl: 255
        }
    );
    assert_eq!(cfg.marking.dscp, 56);
    assert_eq!(cfg.storm.burst, Some(50));
    let r = Relay::new(cfg.clone(), t(0)).expect("valid");
    let s = r.status();
    let b = s.gateway_buffer.expect("buffer configured");
    assert_eq!(b.product_bits, 80_000_000);
    assert_eq!(b.minimum_bytes, 10_000_001);
    assert_eq!(b.holds, Some(true));
    assert_eq!(s.storm.expect("on").episode_gap_ns, 20_000_000);
    // What serializes reads back the same.
    let back: RelayConfig =
        toml::from_str(&toml::to_string(&cfg).expect("to toml")).expect("from toml");
    assert_eq!(back, cfg);
}

#[test]
fn vxlan_defaults() {
    let text = SRV6.replace(
        "type = \"srv6\"\nsource = \"fc00::e2\"\nsegments = [\"fc00::e1:d2\"]\nlocal_sid = \"fc00::e2:d2\"",
        "type = \"vxlan\"\nsource = \"10.0.0.2\"\ndestination = \"10.0.0.1\"\nvni = 4242",
    );
    assert_eq!(pe(&text).tunnel, tunnel(Kind::Vxlan4, 2));
}

#[test]
fn a_gateway_names_its_pe() {
    let text = r#"
[relay]
role = "gateway"
interface = "dc1-pe"
pe_port_mac = "02:00:00:00:e1:00"
pe_system_mac = "02:00:00:00:e1:ff"
"#;
    assert_eq!(
        section(text).expect("parses"),
        RelaySection::Gateway(GatewayConfig {
            interface: Some("dc1-pe".into()),
            pe_port_mac: PE1_DC,
            pe_system_mac: Some(MacAddr([2, 0, 0, 0, 0xe1, 0xff])),
            buffer: None,
            datapath: lossless_relay::Datapath::default(),
        })
    );
}

/// A gateway's `[relay.datapath]`: the PE's keys, checked by the same rule.
#[test]
fn a_gateway_takes_the_datapath_keys() {
    let text = |extra: &str| {
        format!(
            "[relay]\nrole = \"gateway\"\npe_port_mac = \"02:00:00:00:e1:00\"\n\
             [relay.datapath]\n{extra}\n"
        )
    };
    let RelaySection::Gateway(g) = section(&text("xdp = \"off\"\nbatch = 8")).expect("parses")
    else {
        panic!("not a gateway");
    };
    assert_eq!(
        (g.datapath.xdp, g.datapath.batch),
        (lossless_relay::XdpMode::Off, 8)
    );
    let RelaySection::Gateway(g) = section(&text("batch = 0")).expect("parses") else {
        panic!("not a gateway");
    };
    assert_eq!(
        g.validate().expect_err("batch 0").to_string(),
        "datapath.batch = 0: out of range, allowed 1..=1024"
    );
    let e = section(&text("xdp = \"fast\"")).expect_err("unknown mode");
    assert!(e.contains("unknown variant `fast`"), "{e}");
}

#[test]
fn mistakes_are_refused_with_the_key() {
    for (from, to, needle) in [
        (
            "role = \"pe\"",
            "role = \"router\"",
            "unknown variant `router`",
        ),
        ("type = \"srv6\"", "type = \"gre\"", "unknown variant `gre`"),
        ("local_sid", "locale_sid", "unknown field `locale_sid`"),
        ("next_hop_mac", "nexthop_mac", "unknown field `nexthop_mac`"),
        (
            "\"02:00:00:00:d2:01\"",
            "\"02:00:00:00:d2\"",
            "invalid MAC address",
        ),
        ("\"fc00::e2\"", "\"fc00::g2\"", "invalid"),
    ] {
        let text = SRV6.replace(from, to);
        let e = section(&text).expect_err(needle);
        assert!(e.contains(needle), "{from} -> {to}: {e}");
    }
}

#[test]
fn values_out_of_range_are_refused_by_validate() {
    let refuse = |f: &dyn Fn(&mut RelayConfig), expected: &str| {
        let mut cfg = pe2(Kind::Srv6);
        f(&mut cfg);
        let e: ConfigError = Relay::new(cfg, t(0)).expect_err(expected);
        assert_eq!(e.to_string(), expected);
    };
    refuse(
        &|c| c.dc.gateway_port_mac = MacAddr::MAC_CONTROL,
        "dc.gateway_port_mac = 01:80:c2:00:00:01: must be a unicast MAC address",
    );
    refuse(
        &|c| c.wan.next_hop_mac = MacAddr::default(),
        "wan.next_hop_mac = 00:00:00:00:00:00: must be a unicast MAC address",
    );
    refuse(
        &|c| c.wan.vlan = Some(4095),
        "wan.vlan = 4095: out of range, allowed 0..=4094",
    );
    refuse(
        &|c| c.marking.dscp = 64,
        "marking.dscp = 64: out of range, allowed 0..=63",
    );
    refuse(
        &|c| c.marking.vlan_pcp = 8,
        "marking.vlan_pcp = 8: out of range, allowed 0..=7",
    );
    refuse(
        &|c| {
            c.tunnel = TunnelConfig::Srv6 {
                source: v6("fc00::1"),
                segments: vec![],
                local_sid: v6("fc00::2"),
                reduced: false,
                hop_limit: 64,
                flow_label: 0,
            }
        },
        "tunnel.segments: 0 segments, allowed 1..=127",
    );
    refuse(
        &|c| {
            c.tunnel = TunnelConfig::Srv6 {
                source: v6("fc00::1"),
                segments: vec![v6("fc00::3"), v6("fc00::4")],
                local_sid: v6("fc00::2"),
                reduced: true,
                hop_limit: 64,
                flow_label: 0,
            }
        },
        "tunnel.reduced: a reduced SRv6 encapsulation carries one segment, not 2",
    );
    refuse(
        &|c| {
            c.tunnel = TunnelConfig::Srv6 {
                source: v6("fc00::1"),
                segments: vec![v6("fc00::3")],
                local_sid: v6("fc00::2"),
                reduced: false,
                hop_limit: 64,
                flow_label: 0x10_0000,
            }
        },
        "tunnel.flow_label = 1048576: out of range, allowed 0..=1048575 (20 bits)",
    );
    refuse(
        &|c| {
            c.tunnel = TunnelConfig::Vxlan {
                source: ip("10.0.0.1"),
                destination: ip("fc00::1"),
                vni: 1,
                port: 4789,
                source_port: 1,
                ttl: 1,
                ipv4_checksum: true,
            }
        },
        "tunnel: source 10.0.0.1 and destination fc00::1 are not of one address family",
    );
    refuse(
        &|c| {
            c.tunnel = TunnelConfig::Vxlan {
                source: ip("10.0.0.1"),
                destination: ip("10.0.0.2"),
                vni: 1 << 24,
                port: 4789,
                source_port: 1,
                ttl: 1,
                ipv4_checksum: true,
            }
        },
        "tunnel.vni = 16777216: out of range, allowed 0..=16777215 (24 bits)",
    );
    refuse(
        &|c| {
            c.tunnel = TunnelConfig::SrMpls {
                labels: vec![16001, 3],
                local_label: 100,
                pop_labels: vec![],
                control_word: true,
                ttl: 64,
            }
        },
        "tunnel.labels = 3: out of range, allowed 16..=1048575 (0..=15 are reserved)",
    );
    refuse(
        &|c| {
            c.tunnel = TunnelConfig::SrMpls {
                labels: vec![],
                local_label: 100,
                pop_labels: vec![],
                control_word: true,
                ttl: 64,
            }
        },
        "tunnel.labels: the stack is empty",
    );
    refuse(
        &|c| {
            c.buffer = Some(lossless_relay::config::BufferConfig {
                wan_delay: "2 fortnights".into(),
                rx_rate: "100G".into(),
                tx_rate: None,
                reserved: None,
            })
        },
        "buffer.wan_delay = \"2 fortnights\": \"2 fortnights\": unknown unit \"fortnights\"; expected a duration such as 500ns, 5us, 1.5ms or 2s",
    );
}

//! The `[relay]` section of losslessd's configuration: what it accepts, and
//! the one-line refusal (file, line, column, key) of each kind of mistake.

use std::path::Path;

use lossless_node::config::DaemonConfig;
use lossless_relay::example::{self, Kind};
use lossless_relay::{Poll, RelaySection};

const FILE: &str = "/etc/lossless/losslessd.toml";

const PE2: &str = r#"[relay]
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

fn refuse(text: &str) -> String {
    match DaemonConfig::parse(text, Path::new(FILE)) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "more than one line: {line:?}");
            line
        }
    }
}

#[test]
fn a_pe_section_is_the_example_pe2() {
    let cfg = DaemonConfig::parse(PE2, Path::new(FILE)).expect("accepted");
    assert_eq!(
        cfg.relay,
        Some(RelaySection::Pe(example::pe(2, Kind::Srv6))),
        "interfaces, MACs, tunnel; defaults for the rest"
    );
    let busy = format!("{PE2}\n[relay.datapath]\npoll = \"busy\"\nbatch = 256\n");
    match DaemonConfig::parse(&busy, Path::new(FILE))
        .expect("accepted")
        .relay
    {
        Some(RelaySection::Pe(p)) => {
            assert_eq!((p.datapath.poll, p.datapath.batch), (Poll::Busy, 256))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        DaemonConfig::parse("[daemon]\n", Path::new(FILE))
            .expect("accepted")
            .relay,
        None
    );
}

#[test]
fn a_gateway_section() {
    let text = "[relay]\nrole = \"gateway\"\ninterface = \"dc1-pe\"\npe_port_mac = \"02:00:00:00:e1:00\"\n\
                [relay.buffer]\nwan_delay = \"2ms\"\nrx_rate = \"100G\"\nreserved = \"32MB\"\n";
    match DaemonConfig::parse(text, Path::new(FILE))
        .expect("accepted")
        .relay
    {
        Some(RelaySection::Gateway(g)) => {
            assert_eq!(g.interface.as_deref(), Some("dc1-pe"));
            let b = g.buffer.expect("buffer").evaluate().expect("evaluates");
            assert_eq!((b.minimum_bytes, b.holds), (25_000_001, Some(true)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        refuse("[relay]\nrole = \"gateway\"\npe_port_mac = \"02:00:00:00:e1:00\"\n"),
        "/etc/lossless/losslessd.toml:1:2: relay.interface: required: the interface name"
    );
}

#[test]
fn mistakes_name_the_line_and_the_key() {
    let cases = [
        // A value the relay refuses: at the value, with the key path.
        (
            ("next_hop_mac = \"02:00:00:00:e1:01\"", "next_hop_mac = \"01:80:c2:00:00:01\""),
            "/etc/lossless/losslessd.toml:13:16: relay.wan.next_hop_mac: 01:80:c2:00:00:01: must be a unicast MAC address",
        ),
        // An unknown key: serde names it, at its line.
        (
            ("type = \"srv6\"", "type = \"srv6\"\nsid = \"fc00::1\""),
            "/etc/lossless/losslessd.toml:17:1: relay.tunnel.sid: unknown field `sid`, expected one of `source`, `segments`, `local_sid`, `reduced`, `hop_limit`, `flow_label`",
        ),
        // A missing interface.
        (
            ("interface = \"pe2-wan\"\n", ""),
            "/etc/lossless/losslessd.toml:10:8: relay.wan.interface: required: the interface name",
        ),
        // The same interface on both sides.
        (
            ("interface = \"pe2-wan\"", "interface = \"pe2-dc\""),
            "/etc/lossless/losslessd.toml:11:13: relay.wan.interface: \"pe2-dc\" is the DC interface too: a PE relays between two",
        ),
        // A glob is not an interface.
        (
            ("interface = \"pe2-dc\"", "interface = \"pe2-*\""),
            "/etc/lossless/losslessd.toml:5:13: relay.dc.interface: \"pe2-*\": one interface name, not a pattern",
        ),
        // Range checks of the datapath.
        (
            ("[relay.tunnel]", "[relay.datapath]\nbatch = 0\n\n[relay.tunnel]"),
            "/etc/lossless/losslessd.toml:16:9: relay.datapath.batch: 0: out of range, allowed 1..=1024",
        ),
        // A wrong role.
        (
            ("role = \"pe\"", "role = \"p\""),
            "/etc/lossless/losslessd.toml:2:8: relay: unknown variant `p`, expected `pe` or `gateway`",
        ),
    ];
    for ((from, to), want) in cases {
        assert!(PE2.contains(from), "{from}");
        let text = PE2.replacen(from, to, 1);
        assert_eq!(refuse(&text), want, "{to}");
    }
}

#[test]
fn the_shipped_relay_example_is_accepted() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/relay-pe.toml");
    let text = std::fs::read_to_string(&path).expect("examples/relay-pe.toml");
    let cfg = DaemonConfig::parse(&text, &path).expect("examples/relay-pe.toml");
    let Some(RelaySection::Pe(pe)) = cfg.relay else {
        panic!("a PE section");
    };
    assert_eq!(pe.dc.interface.as_deref(), Some("pe2-dc"));
    assert_eq!(pe.storm.max_per_second, Some(1000));
    let b = pe.buffer.expect("buffer").evaluate().expect("evaluates");
    assert_eq!(b.holds, Some(true));
}

#![allow(clippy::unwrap_used)]
//! LLDP that a switch can identify: the Port Description, System Name, System
//! Description, System Capabilities and Management Address losslessd sends, by default
//! (the host's) and as configured, read by three others: lldpd (`lldpcli show
//! neighbors`), lldpad (`lldptool -t -n -V sysName` ...) and tshark. And the other
//! way: `lossless neighbors` shows lldpd's system name and port description.
//!
//! losslessd runs on `va` in namespace A, the oracle on `vb` in namespace B.

mod common;

use std::process::Command;
use std::time::Duration;

use common::*;
use lossless_node::protocol::Request;
use lossless_testkit::{tshark_fields, Capture, Lldpd};
use serde_json::Value;

/// losslessd on `va` (namespace A); the other end `vb` in namespace B.
struct Link {
    d: Option<Daemon>,
    a: Netns,
    b: Netns,
    dir: TempDir,
}

impl Link {
    /// The pair, `va` with an alias and an IPv4 address; losslessd not started yet.
    fn new() -> Link {
        let a = Netns::new();
        let b = Netns::new();
        // Not a router, whatever the machine is: a new namespace takes IPv4 forwarding
        // from the initial one (net.core.devconf_inherit_init_net), which a container
        // runtime on the test machine may have turned on.
        a.sysctl("net.ipv4.ip_forward=0");
        a.sysctl("net.ipv6.conf.all.forwarding=0");
        let veth = Veth::new(&a, "va", "02:00:00:00:00:0a", &b, "vb", "02:00:00:00:00:0b");
        a.ip(&["link", "set", "va", "alias", "to leaf1 swp3"]);
        a.ip(&["addr", "add", "192.0.2.1/24", "dev", "va"]);
        veth.up(&a, &b);
        Link {
            d: None,
            a,
            b,
            dir: TempDir::new(),
        }
    }

    /// losslessd on `va` with this configuration file (None: no file, the defaults).
    fn start(&mut self, config: Option<&str>) -> &Daemon {
        let mut args = vec!["--interface".to_string(), "va".to_string()];
        if let Some(text) = config {
            let path = self.dir.path().join("losslessd.toml");
            std::fs::write(&path, text).unwrap();
            args.extend(["--config".to_string(), path.display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.d = Some(Daemon::start(&self.a, &self.dir.path().join("d"), &args));
        self.d.as_ref().unwrap()
    }

    fn daemon(&self) -> &Daemon {
        self.d.as_ref().expect("started")
    }

    /// `va`'s ifindex in namespace A.
    fn ifindex(&self) -> String {
        let out = self.a.exec(&["cat", "/sys/class/net/va/ifindex"]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// What the host says of itself: `uname -n`, and `uname -s -r -v -m` (losslessd's
/// System Description, as lldpd's without the distribution).
fn uname() -> (String, String) {
    let run = |args: &[&str]| {
        let out = Command::new("uname").args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    (run(&["-n"]), run(&["-s", "-r", "-v", "-m"]))
}

/// lldpcli's JSON has one object where there is one item, an array where there are
/// several: always a list.
fn list(v: &Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a.clone(),
        Value::Null => Vec::new(),
        v => vec![v.clone()],
    }
}

/// lldpd's neighbour: (system name, the chassis object).
fn chassis(n: &Value) -> (String, Value) {
    let (name, c) = n["chassis"]
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), v.clone()))
        .unwrap_or_default();
    (name, c)
}

/// (type, enabled) of every capability lldpd shows.
fn capabilities(c: &Value) -> Vec<(String, bool)> {
    list(&c["capability"])
        .iter()
        .map(|x| {
            (
                x["type"].as_str().unwrap_or("").to_string(),
                x["enabled"] == true,
            )
        })
        .collect()
}

#[test]
fn lldpd_sees_the_hosts_identity_and_we_see_lldpds() {
    if !require(
        "lldpd_sees_the_hosts_identity_and_we_see_lldpds",
        &[Oracle::Netns, Oracle::Lldpd],
    ) {
        return;
    }
    let mut l = Link::new();
    l.b.ip(&["link", "set", "vb", "alias", "lldpd side of the cable"]);
    let lldpd = Lldpd::start(&l.b, "vb");
    lldpd.configure(&["system", "hostname", "lldpd-peer"]);
    l.start(None);
    let (hostname, description) = uname();

    // lldpcli show neighbors: all five of ours, by default the host's.
    let n = lldpd.wait_neighbor(Duration::from_secs(10), |n| {
        chassis(n).1["mgmt-ip"].is_string()
    });
    let (name, c) = chassis(&n);
    assert_eq!(name, hostname, "{n:#}");
    assert_eq!(c["descr"], description.as_str(), "{n:#}");
    assert_eq!(c["mgmt-ip"], "192.0.2.1", "{n:#}");
    assert_eq!(c["mgmt-iface"], l.ifindex().as_str(), "{n:#}");
    assert_eq!(capabilities(&c), [("Station".to_string(), true)], "{n:#}");
    assert_eq!(n["port"]["descr"], "to leaf1 swp3", "{n:#}");

    // lossless neighbors: lldpd's system name and port description, in the table and
    // in the JSON.
    let d = l.daemon();
    wait_every(
        Duration::from_secs(10),
        Duration::from_millis(100),
        "lldpd's name",
        || {
            let v = d.call(&Request::Neighbors { port: None });
            (v["ports"][0]["neighbors"][0]["system_name"] == "lldpd-peer").then_some(())
        },
    );
    let v = d.call(&Request::Neighbors { port: None });
    let peer = &v["ports"][0]["neighbors"][0];
    assert_eq!(
        peer["port_description"], "lldpd side of the cable",
        "{peer:#}"
    );
    assert_eq!(peer["port_id"], "vb", "{peer:#}");
    let out = d.cli(&["neighbors"]);
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    let mut lines = table.lines();
    let head: Vec<&str> = lines
        .next()
        .unwrap()
        .split("  ")
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(
        head.iter().map(|s| s.trim()).collect::<Vec<_>>(),
        [
            "PORT",
            "SYSTEM",
            "PORT ID",
            "PORT DESCR",
            "CHASSIS",
            "MAC",
            "TTL",
            "EXPIRES",
            "DCBX",
            "ROLE"
        ],
        "{table}"
    );
    let row = lines.next().unwrap();
    assert!(
        row.starts_with("va")
            && row.contains("lldpd-peer")
            && row.contains("lldpd side of the cable")
            && row.trim_end().ends_with("alone"),
        "{table}"
    );

    // Changes go out at once: a new alias; the IPv4 address gone, the IPv6 one taken.
    l.a.ip(&["link", "set", "va", "alias", "to leaf1 swp4"]);
    lldpd.wait_neighbor(Duration::from_secs(5), |n| {
        n["port"]["descr"] == "to leaf1 swp4"
    });
    l.a.ip(&["addr", "add", "2001:db8::a/64", "dev", "va", "nodad"]);
    l.a.ip(&["addr", "del", "192.0.2.1/24", "dev", "va"]);
    let n = lldpd.wait_neighbor(Duration::from_secs(5), |n| {
        chassis(n).1["mgmt-ip"] == "2001:db8::a"
    });
    assert_eq!(chassis(&n).1["mgmt-iface"], l.ifindex().as_str());
}

const CONFIGURED: &str = r#"
[defaults]
system_name = "h3.example.net"
system_capabilities = { capabilities = ["bridge", "router"], enabled = ["router"] }

[ports."va"]
port_description = "uplink to leaf1"
system_description = false
management_address = "198.51.100.7"
"#;

#[test]
fn lldpd_sees_configured_values_and_not_what_is_turned_off() {
    if !require(
        "lldpd_sees_configured_values_and_not_what_is_turned_off",
        &[Oracle::Netns, Oracle::Lldpd],
    ) {
        return;
    }
    let mut l = Link::new();
    let lldpd = Lldpd::start(&l.b, "vb");
    l.start(Some(CONFIGURED));
    let n = lldpd.wait_neighbor(Duration::from_secs(10), |n| {
        n["port"]["descr"] == "uplink to leaf1"
    });
    let (name, c) = chassis(&n);
    assert_eq!(name, "h3.example.net", "{n:#}");
    assert!(c["descr"].is_null(), "no System Description: {n:#}");
    assert_eq!(c["mgmt-ip"], "198.51.100.7", "{n:#}");
    assert_eq!(c["mgmt-iface"], l.ifindex().as_str(), "{n:#}");
    assert_eq!(
        capabilities(&c),
        [("Bridge".to_string(), false), ("Router".to_string(), true)],
        "{n:#}"
    );
}

/// Complete frames from `src` in a pcap file being written (its 24-octet header, then
/// a 16-octet header and the bytes of each frame).
fn pcap_frames(path: &std::path::Path, src: [u8; 6]) -> usize {
    let bytes = std::fs::read(path).unwrap_or_default();
    let mut at = 24;
    let mut n = 0;
    while let Some(h) = bytes.get(at..at + 16) {
        let len = u32::from_ne_bytes([h[8], h[9], h[10], h[11]]) as usize;
        let Some(frame) = bytes.get(at + 16..at + 16 + len) else {
            break;
        };
        n += usize::from(frame.get(6..12) == Some(&src[..]));
        at += 16 + len;
    }
    n
}

/// tshark decodes every identity TLV of the LLDPDU as sent, here with a System
/// Description of the TLV's full 255 octets, which lldpd shows whole too.
#[test]
fn tshark_decodes_the_identity_tlvs() {
    if !require(
        "tshark_decodes_the_identity_tlvs",
        &[Oracle::Netns, Oracle::Tshark, Oracle::Lldpd],
    ) {
        return;
    }
    let mut l = Link::new();
    let long: String = (0..255)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let pcap = l.dir.path().join("identity.pcap");
    let mut cap = Capture::start(&l.b, "vb", "ether proto 0x88cc", &pcap);
    let lldpd = Lldpd::start(&l.b, "vb");
    l.start(Some(&format!(
        "[ports.\"va\"]\nsystem_description = \"{long}\"\n\
         system_capabilities = [\"station_only\"]\n"
    )));
    // tshark writes what it captured after a while, and what it has not written when
    // it is stopped is lost: wait until the file holds two frames of ours.
    wait_every(
        Duration::from_secs(10),
        Duration::from_millis(50),
        "two LLDPDUs in the capture",
        || (pcap_frames(&pcap, [2, 0, 0, 0, 0, 0x0a]) >= 2).then_some(()),
    );
    cap.stop();
    let (hostname, _) = uname();
    let f = tshark_fields(
        &pcap,
        &[
            "-Y",
            "lldp.time_to_live > 0 && eth.src == 02:00:00:00:00:0a",
        ],
        &[
            "lldp.tlv.system.name",
            "lldp.tlv.system.desc",
            "lldp.port.desc",
            "lldp.tlv.system_cap",
            "lldp.tlv.enable_system_cap",
            "lldp.mgn.address.subtype",
            "lldp.mgn.addr.ip4",
            "lldp.mgn.interface.subtype",
            "lldp.mgn.interface.number",
            "lldp.mgn.obj.len",
        ],
    );
    assert!(!f.is_empty(), "no LLDPDU captured");
    assert_eq!(f.get(0, "lldp.tlv.system.name"), hostname);
    assert_eq!(f.get(0, "lldp.tlv.system.desc"), long);
    assert_eq!(f.get(0, "lldp.port.desc"), "to leaf1 swp3");
    assert_eq!(f.get(0, "lldp.tlv.system_cap"), "0x0080");
    assert_eq!(f.get(0, "lldp.tlv.enable_system_cap"), "0x0080");
    assert_eq!(f.get(0, "lldp.mgn.address.subtype"), "1");
    assert_eq!(f.get(0, "lldp.mgn.addr.ip4"), "192.0.2.1");
    assert_eq!(f.get(0, "lldp.mgn.interface.subtype"), "2");
    assert_eq!(f.get(0, "lldp.mgn.interface.number"), l.ifindex());
    assert_eq!(f.get(0, "lldp.mgn.obj.len"), "0");
    let n = lldpd.wait_neighbor(Duration::from_secs(10), |n| {
        !chassis(n).1["descr"].is_null()
    });
    assert_eq!(chassis(&n).1["descr"], long.as_str(), "{n:#}");
}

/// lldpad, the DCBX reference, reads the same TLVs (`lldptool -t -n -V ...`), next to
/// the IEEE 802.1Qaz ones it negotiates on.
#[test]
fn lldpad_sees_the_identity_tlvs() {
    if !require("lldpad_sees_the_identity_tlvs", LLDPAD_PEER) {
        return;
    }
    let mut l = Link::new();
    let lldpad = LldpadPeer::start(&l.b, "vb", Mode::Ieee);
    l.start(Some(
        "[ports.\"va\"]\nsystem_name = \"h3.example.net\"\n\
         system_description = \"Linux 6.1.0 x86_64\"\n",
    ));
    // Each view as its lines, whitespace runs made single spaces.
    let view = |tlv: &str| -> Vec<String> {
        lldpad
            .lldptool(&["-t", "-n", "-i", "vb", "-V", tlv])
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect()
    };
    wait_every(
        Duration::from_secs(15),
        Duration::from_millis(100),
        "lldpad's sysName",
        || (view("sysName") == ["System Name TLV", "h3.example.net"]).then_some(()),
    );
    assert_eq!(
        view("sysDesc"),
        ["System Description TLV", "Linux 6.1.0 x86_64"]
    );
    assert_eq!(view("portDesc"), ["Port Description TLV", "to leaf1 swp3"]);
    assert_eq!(
        view("sysCap"),
        [
            "System Capabilities TLV",
            "System capabilities: Station Only",
            "Enabled capabilities: Station Only"
        ]
    );
    assert_eq!(
        view("mngAddr"),
        [
            "Management Address TLV".to_string(),
            "IPv4: 192.0.2.1".to_string(),
            format!("Ifindex: {}", l.ifindex())
        ]
    );
}

/// A file whose identity leaves the DCBX TLVs no room is refused by `--check`, with
/// the key, the sizes and what to do.
#[test]
fn check_refuses_an_lldpdu_that_would_not_fit() {
    let dir = TempDir::new();
    let x = "x".repeat(255);
    let path = dir.path().join("big.toml");
    std::fs::write(
        &path,
        format!("[defaults]\nchassis_id = \"{x}\"\nport_id = \"{x}\"\n"),
    )
    .unwrap();
    let out = Command::new(losslessd_bin())
        .arg("--config")
        .arg(&path)
        .arg("--check")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "{}:3:11: defaults.port_id: the LLDPDU could reach 1647 octets, over the 1500 one \
             Ethernet frame carries",
            path.display()
        )),
        "{err}"
    );
}

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Snapshots of what users read when a policy is wrong: parse errors (line:column, token,
//! what was expected) and check diagnostics.

use lossless_policy::check::check;
use lossless_policy::compile::OsmQos;
use lossless_policy::fabric::topo;
use lossless_policy::partitions::{self, Partitions};

fn parse_err(src: &str) -> String {
    match lossless_policy::parse_policy("p.conf", src) {
        Ok(_) => "parsed".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn parse_errors() {
    let cases = [
        ("unknown keyword", "qos-levels\n  qos-level\n    name: A\n    sll: 1\n  end-qos-level\nend-qos-levels\n"),
        ("sl out of range", "qos-levels\n  qos-level\n    name: DEFAULT\n    sl: 20\n  end-qos-level\nend-qos-levels\n"),
        ("missing sl", "qos-levels\n  qos-level\n    name: DEFAULT\n  end-qos-level\nend-qos-levels\n"),
        ("unclosed section", "qos-levels\n  qos-level\n    name: DEFAULT\n    sl: 0\n  end-qos-level\n"),
        ("empty port-groups", "port-groups\nend-port-groups\n"),
        ("duplicate name", "port-groups\n port-group\n  name: a\n  name: b\n end-port-group\nend-port-groups\n"),
        ("bad range", "qos-match-rules\n qos-match-rule\n  service-id: 0x10-\n  qos-level-name: x\n end-qos-match-rule\nend-qos-match-rules\n"),
        ("bad ulp", "qos-ulps\n  default : 0\n  sdp, port 10 : 1\nend-qos-ulps\n"),
        ("ulp sl", "qos-ulps\n  default : 16\nend-qos-ulps\n"),
        ("keyword in name", "port-groups\n port-group\n  name: my-qos-levels\n end-port-group\nend-port-groups\n"),
        ("sl2vl length", "qos-setup\n sl2vl-tables\n  sl2vl-scope\n   group: a\n   sl2vl-table: 0,1,2\n  end-sl2vl-scope\n end-sl2vl-tables\nend-qos-setup\n"),
        ("port name", "port-groups\n port-group\n  name: a\n  port-name: hca1/1\n end-port-group\nend-port-groups\n"),
        ("port name without a slash is an interface", "port-groups\n port-group\n  name: a\n  port-name: hca1-P1\n end-port-group\nend-port-groups\n"),
        ("lossless", "qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n  lossless: sure\n end-qos-level\nend-qos-levels\n"),
        ("mtu", "qos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n  mtu-limit: 6\n end-qos-level\nend-qos-levels\n"),
        ("trailing", "qos-levels extra\n"),
        ("vlarb to", "qos-setup\n vlarb-tables\n  vlarb-scope\n   group: a\n   to: *\n  end-vlarb-scope\n end-vlarb-tables\nend-qos-setup\n"),
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|(n, s)| format!("{n}: {}", parse_err(s)))
        .collect();
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn check_diagnostics() {
    let net = include_str!("data/net");
    let fabric = topo::parse("net", net).unwrap();
    let conf = partitions::parse("partitions.conf", include_str!("data/partitions.conf")).unwrap();
    let parts = Partitions::build(Some(&conf), &fabric);
    let osm = OsmQos::default();
    let src = "\
port-groups
  port-group
    name: Storage
    port-guid: 0x100004, 0x999999
    port-name: vs1 HCA-1/P1, Hca3/P1
    partition: part1
  end-port-group
  port-group
    name: storage
    node-type: CA
  end-port-group
  port-group
    name: Unused
    pkey: 0x4444
  end-port-group
end-port-groups
qos-levels
  qos-level
    name: DEFAULT
    sl: 0
  end-qos-level
  qos-level
    name: Fast
    sl: 010
  end-qos-level
  qos-level
    name: Idle
    sl: 2
  end-qos-level
end-qos-levels
qos-match-rules
  qos-match-rule
    destination: Storage
    service-id: 0x20-0x10
    qos-level-name: Fast
  end-qos-match-rule
  qos-match-rule
    destination: Storage
    service-id: 0x12
    qos-level-name: Fast
  end-qos-match-rule
end-qos-match-rules
qos-ulps
  default : 1
  any, source-target-port-guid 0x100001 : 3
end-qos-ulps
";
    let policy = lossless_policy::parse_policy("p.conf", src).unwrap();
    let without: Vec<String> = check("p.conf", &policy, None)
        .iter()
        .map(|d| d.to_string())
        .collect();
    let with: Vec<String> = check("p.conf", &policy, Some((&fabric, &parts, &osm)))
        .iter()
        .map(|d| d.to_string())
        .collect();
    insta::assert_snapshot!(format!(
        "without fabric:\n{}\n\nwith fabric:\n{}",
        without.join("\n"),
        with.join("\n")
    ));
}

#[test]
fn fabric_errors() {
    let cases = [
        ("unknown remote", "Switch 4 \"S\"\n[1] \"H\"[1]\n"),
        (
            "bad port",
            "Hca 2 \"H\"\n[3] \"S\"[1]\n\nSwitch 4 \"S\"\n[1] \"H\"[3]\n",
        ),
        (
            "asymmetric",
            "Switch 4 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[2]\n",
        ),
        ("no header", "[1] \"S\"[1]\n"),
    ];
    let out: Vec<String> = cases
        .iter()
        .map(|(n, s)| {
            format!(
                "{n}: {}",
                topo::parse("net", s)
                    .map(|_| "parsed".to_string())
                    .unwrap_or_else(|e| e.to_string())
            )
        })
        .collect();
    insta::assert_snapshot!(out.join("\n"));
}

#[test]
fn extension_warnings() {
    let net = include_str!("data/net");
    let fabric = topo::parse("net", net).unwrap();
    let parts = Partitions::build(None, &fabric);
    let src = "\
port-groups
  port-group
    name: hosts
    port-name: Hca1/P1, enp65s0f0
  end-port-group
end-port-groups
qos-levels
  qos-level
    name: DEFAULT
    sl: 3
    lossless: yes
  end-qos-level
end-qos-levels
";
    let p = lossless_policy::parse_policy("p.conf", src).unwrap();
    let with: Vec<String> = check("p.conf", &p, Some((&fabric, &parts, &OsmQos::default())))
        .iter()
        .map(ToString::to_string)
        .collect();
    // Without a fabric there is no InfiniBand context: an interface name is not suspicious.
    let without = check("p.conf", &p, None);
    assert!(without.iter().all(|d| d.code != "interface-name"));
    assert!(without.iter().any(|d| d.code == "extension"));
    insta::assert_snapshot!(with.join("\n"));
}

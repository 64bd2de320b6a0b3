#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! The Ethernet profile on a policy written for a mixed fabric: what it takes (interface
//! names, levels, scopes), what it leaves out and says so, and the TOML it writes.

use lossless_policy::check::Severity;
use lossless_policy::ethernet::{compile_ethernet, EthOptions};

const MIXED: &str = "\
port-groups
  port-group
    name: hosts
    port-guid: 0x100001-0x100010
    port-name: Hca1/P1, eth0, eth1
    node-type: CA
  end-port-group
  port-group
    name: uplinks
    port-name: swp1
  end-port-group
end-port-groups
qos-setup
  sl2vl-tables
    sl2vl-scope
      group: hosts
      across-to: uplinks
      to: 1-4
      sl2vl-table: 0,1,1,2,2,0,0,0,15,15,15,15,15,15,15,15
    end-sl2vl-scope
  end-sl2vl-tables
  vlarb-tables
    vlarb-scope
      group: hosts
      vlarb-high: 2:100
      vlarb-low: 0:50,1:50,9:255
      vl-high-limit: 4
    end-vlarb-scope
  end-vlarb-tables
end-qos-setup
qos-levels
  qos-level
    name: DEFAULT
    sl: 0
  end-qos-level
  qos-level
    name: bulk
    sl: 1
  end-qos-level
  qos-level
    name: rdma
    sl: 3
  end-qos-level
end-qos-levels
qos-ulps
  sdp : 2
end-qos-ulps
";

#[test]
fn mixed_policy() {
    let opts = EthOptions {
        ports: vec![],
        lossless: vec!["RDMA".into()],
    };
    let (cfg, diags) = compile_ethernet(
        "mixed.conf",
        &lossless_policy::parse_policy("mixed.conf", MIXED).unwrap(),
        &opts,
    );
    assert!(
        diags.iter().all(|d| d.severity == Severity::Warning),
        "{diags:#?}"
    );
    let cfg = cfg.unwrap();
    let names: Vec<&str> = cfg.ports.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["eth0", "eth1", "swp1"]);
    let eth0 = &cfg.ports[0];
    // SL2VL 0,1,1,2,2,0,0,0: priorities 1-2 in PG 1, 3-4 in PG 2.
    assert_eq!(eth0.pgid, [0, 1, 1, 2, 2, 0, 0, 0]);
    // Weights: VL0 50, VL1 50, VL2 100 (high and low added); VL9 carries no priority.
    assert_eq!(eth0.percent, [25, 25, 50, 0, 0, 0, 0, 0]);
    // Level names are case-insensitive, as everywhere in OpenSM's policy.
    assert_eq!(eth0.pfc, [3]);
    assert_eq!(cfg.ports[2].pgid, [0, 1, 2, 3, 4, 5, 6, 7]);
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("mixed_notes", text.join("\n"));
    insta::assert_snapshot!("mixed_toml", cfg.to_toml("mixed.conf", &diags));
}

#[test]
fn sl_beyond_7_in_qos_ulps() {
    let src = "port-groups\n port-group\n  name: a\n  port-name: eth0\n end-port-group\nend-port-groups\nqos-ulps\n default : 0\n iser : 12\nend-qos-ulps\n";
    let (cfg, diags) = compile_ethernet(
        "u.conf",
        &lossless_policy::parse_policy("u.conf", src).unwrap(),
        &EthOptions::default(),
    );
    assert!(cfg.is_none());
    let e: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert_eq!(e, ["u.conf:9:9: error[sl-not-priority]: qos-ulps `iser : 12` gives SL 12: on Ethernet the SL is the 802.1p priority, 0-7"]);
}

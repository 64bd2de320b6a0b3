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

/// `qos-class` rules become APP entries DSCP (TClass >> 2) -> the level's priority: first
/// rule wins, `source` chooses the ports, a rule narrower than its DSCP is left out.
#[test]
fn qos_class_rules_become_dscp_app_entries() {
    let policy = "\
port-groups
  port-group
    name: roce
    port-name: eth0
  end-port-group
  port-group
    name: storage
    port-name: eth1
  end-port-group
end-port-groups
qos-levels
  qos-level
    name: DEFAULT
    sl: 0
  end-qos-level
  qos-level
    name: roce
    sl: 3
  end-qos-level
  qos-level
    name: cnp
    sl: 6
  end-qos-level
  qos-level
    name: storage
    sl: 4
  end-qos-level
end-qos-levels
qos-match-rules
  qos-match-rule
    qos-class: 104-107,106
    qos-level-name: roce
  end-qos-match-rule
  qos-match-rule
    qos-class: 192
    qos-level-name: CNP
  end-qos-match-rule
  qos-match-rule
    qos-class: 105,136
    source: storage
    qos-level-name: storage
  end-qos-match-rule
  qos-match-rule
    qos-class: 184
    destination: storage
    qos-level-name: storage
  end-qos-match-rule
end-qos-match-rules
";
    let parsed = lossless_policy::parse_policy("app.conf", policy).unwrap();
    let (cfg, diags) = compile_ethernet("app.conf", &parsed, &EthOptions::default());
    let cfg = cfg.unwrap_or_else(|| panic!("{diags:#?}"));
    let entries = |i: usize| -> Vec<(u8, u8, Vec<u8>)> {
        cfg.ports[i]
            .app
            .iter()
            .map(|e| (e.dscp, e.priority, e.tclass.clone()))
            .collect()
    };
    // eth0: TClass 104-107 is DSCP 26 once; 192 is CS6 (48).
    assert_eq!(
        entries(0),
        [(26, 3, vec![104, 105, 106, 107]), (48, 6, vec![192])]
    );
    // eth1 also gets the storage rule's DSCP 34 (TClass 136); its DSCP 26 (TClass 105)
    // is the first rule's already.
    assert_eq!(
        entries(1),
        [
            (26, 3, vec![104, 105, 106, 107]),
            (48, 6, vec![192]),
            (34, 4, vec![136])
        ]
    );
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    let has = |code: &str, part: &str| {
        diags
            .iter()
            .any(|d| d.code == code && d.message.contains(part))
    };
    assert!(
        has("app-shadowed", "eth1: qos-class 105 is DSCP 26, which the rule at 30:3 already sends to priority 3 (level roce)"),
        "{text:#?}"
    );
    assert!(
        has("app-narrower", "qos-class with destination"),
        "{text:#?}"
    );
    assert!(!cfg.ports.iter().any(|p| p.app.iter().any(|e| e.dscp == 46)));
    let toml = cfg.to_toml("app.conf", &diags);
    assert!(
        toml.contains(
            "app.entries = [\n    { selector = \"dscp\", protocol = 26, priority = 3 },  # qos-class 104,105,106,107 at 30:3 -> level roce\n"
        ),
        "{toml}"
    );

    // A traffic class is one byte.
    let wide = policy.replace("qos-class: 192", "qos-class: 192-300");
    let parsed = lossless_policy::parse_policy("app.conf", &wide).unwrap();
    let (cfg, diags) = compile_ethernet("app.conf", &parsed, &EthOptions::default());
    assert!(cfg.is_none());
    assert!(
        diags.iter().any(|d| d.code == "tclass-range"
            && d.message
                .contains("qos-class 300: a traffic class is 0..255")),
        "{diags:#?}"
    );
}

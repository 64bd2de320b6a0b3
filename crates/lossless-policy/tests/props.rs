#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Properties: the parser never panics, and the bitset engine always agrees with OpenSM's
//! sequential scan.

use lossless_policy::bind::bind;
use lossless_policy::fabric::{topo, PortRef};
use lossless_policy::matcher::{scan, Engine, Request};
use lossless_policy::partitions::Partitions;
use proptest::prelude::*;

proptest! {
    #[test]
    fn parser_total(s in "\\PC{0,400}") {
        let _ = lossless_policy::parse_policy("f", &s);
        let _ = topo::parse("f", &s);
        let _ = lossless_policy::partitions::parse("f", &s);
    }

    #[test]
    fn parser_total_on_keyword_soup(words in prop::collection::vec(prop::sample::select(vec![
        "port-groups", "end-port-groups", "port-group", "end-port-group", "name:", "use:", "qos-levels",
        "end-qos-levels", "qos-level", "end-qos-level", "sl:", "1", "0x10-0x1", ",", "\n", "qos-ulps",
        "end-qos-ulps", "sdp", ":", "any, pkey", "default", "\"", "#", "qos-match-rules", "qos-match-rule",
        "end-qos-match-rule", "source:", "a", "-", "*", "qos-setup", "sl2vl-tables", "sl2vl-scope", "from:",
    ]), 0..60)) {
        let s = words.join(" ");
        let _ = lossless_policy::parse_policy("f", &s);
    }

    #[test]
    fn engine_equals_scan(
        rules in prop::collection::vec((0u8..4, 0u8..4, prop::option::of((0u64..20, 0u64..20)), prop::option::of((0u64..8, 0u64..8)), prop::option::of(0u64..3)), 1..40),
        queries in prop::collection::vec((0usize..6, 0usize..6, prop::option::of(0u64..25), prop::option::of(0u16..10), prop::option::of(prop::sample::select(vec![0x7fffu16, 0xffff, 0x1234, 0x9234, 1, 2]))), 1..50),
    ) {
        let fabric = topo::parse("net", include_str!("data/net")).unwrap();
        let parts = Partitions::build(None, &fabric);
        let groups = ["A", "B", "C"];
        let mut src = String::from("port-groups\n port-group\n  name: A\n  port-name: Hca1/P1, Hca2/P1\n end-port-group\n port-group\n  name: B\n  node-type: SWITCH\n end-port-group\n port-group\n  name: C\n  port-guid: 0x100004-0x100008\n end-port-group\nend-port-groups\nqos-levels\n qos-level\n  name: DEFAULT\n  sl: 0\n end-qos-level\nend-qos-levels\nqos-match-rules\n");
        for (s, d, sid, cls, pk) in &rules {
            src.push_str(" qos-match-rule\n");
            if let Some(g) = groups.get(usize::from(*s)) { src.push_str(&format!("  source: {g}\n")); }
            if let Some(g) = groups.get(usize::from(*d)) { src.push_str(&format!("  destination: {g}\n")); }
            if let Some((a, b)) = sid { src.push_str(&format!("  service-id: {a}-{b}\n")); }
            if let Some((a, b)) = cls { src.push_str(&format!("  qos-class: {a}-{b}, 9\n")); }
            if let Some(p) = pk { src.push_str(&format!("  pkey: {}\n", [0x7fff, 0x1234, 1][*p as usize])); }
            src.push_str("  qos-level-name: DEFAULT\n end-qos-match-rule\n");
        }
        src.push_str("end-qos-match-rules\n");
        let policy = lossless_policy::parse_policy("f", &src).unwrap();
        let b = bind("f", &policy, &fabric, &parts).unwrap();
        let e = Engine::new(&b, &fabric);
        let ends = fabric.end_ports();
        for (s, d, sid, cls, pk) in queries {
            let (s, d): (PortRef, PortRef) = (ends[s % ends.len()], ends[d % ends.len()]);
            let q = Request { service_id: sid, qos_class: cls, pkey: pk };
            prop_assert_eq!(e.first_match(s, d, &q), scan(&b, &fabric, s, d, &q));
        }
    }
}

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
use lossless_policy::bind::bind;
use lossless_policy::compile::OsmQos;
use lossless_policy::fabric::topo;
use lossless_policy::matcher::Request;
use lossless_policy::partitions::{self, Partitions};
use lossless_policy::resolve::{find_node, Query, Resolver};

const NET: &str = include_str!("data/net");
const POLICY: &str = include_str!("data/qos-policy.conf");
const PARTS: &str = include_str!("data/partitions.conf");
const OSM: &str = include_str!("data/opensm.conf");

#[test]
fn oracle_recipe_answers() {
    let fabric = topo::parse("net", NET).unwrap();
    let conf = partitions::parse("partitions.conf", PARTS).unwrap();
    let parts = Partitions::build(Some(&conf), &fabric);
    let osm = OsmQos::parse(OSM);
    let policy = lossless_policy::parse_policy("qos-policy.conf", POLICY).unwrap();
    let b = bind("qos-policy.conf", &policy, &fabric, &parts).unwrap();
    let r = Resolver::new(&fabric, &parts, &osm, Some((&policy, &b)));
    let q = |s: &str, d: &str, sid: Option<u64>, pkey: Option<u16>, sl: Option<u8>| {
        let q = Query {
            src: find_node(&fabric, s).unwrap(),
            dst: find_node(&fabric, d).unwrap(),
            request: Request {
                service_id: sid,
                qos_class: None,
                pkey,
            },
            sl,
        };
        r.resolve(&q)
            .map(|p| (p.sl, p.mtu, p.rate, p.packet_life, p.pkey))
    };
    assert_eq!(
        q("Hca1", "Hca2", None, None, None).unwrap(),
        (1, 2, 2, 8, 0x9234)
    );
    assert_eq!(
        q("Hca1", "Hca4", None, None, None).unwrap(),
        (0, 4, 3, 0x12, 0xffff)
    );
    assert_eq!(
        q("Hca1", "Hca4", Some(0x11234), None, None).unwrap(),
        (3, 4, 3, 0x12, 0xffff)
    );
    assert_eq!(
        q("Hca1", "Hca3", None, Some(0x1234), None).unwrap(),
        (4, 4, 3, 0x12, 0x1234)
    );
    assert_eq!(
        q("Hca1", "Hca3", None, Some(0xffff), None).unwrap(),
        (5, 4, 3, 0x12, 0xffff)
    );
    assert!(q("Hca1", "Hca2", None, None, Some(7)).is_err());
    assert_eq!(
        q("Switch1", "Hca1", None, None, None).unwrap(),
        (0, 3, 3, 0x12, 0xffff)
    );
}

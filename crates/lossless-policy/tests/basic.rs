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
            requester: None,
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

/// An ibsim net file with ibsim's own GUID lines is still an ibsim file (the first port is the
/// SM's, MTU capabilities are ibsim's), and `rtguid=` numbers the router.
#[test]
fn ibsim_guid_lines_keep_the_ibsim_flavor() {
    let net = "caguid=0x500000\nHca\t1 \"H1\"\n[1]\t\"R1\"[1]\n\nrtguid=0x300000\nRt\t1 \"R1\"\n[1]\t\"H1\"[1]\n";
    let fabric = topo::parse("net", net).unwrap();
    assert_eq!(fabric.flavor, lossless_policy::fabric::Flavor::Ibsim);
    let r1 = find_node(&fabric, "R1").unwrap();
    let h1 = find_node(&fabric, "H1").unwrap();
    assert_eq!(fabric.port(r1).unwrap().guid, 0x30_0001);
    assert_eq!(fabric.port(h1).unwrap().guid, 0x50_0001);
    let disc = topo::parse("disc", include_str!("data/lft/ibnetdiscover.txt")).unwrap();
    assert_eq!(disc.flavor, lossless_policy::fabric::Flavor::Ibnetdiscover);
}

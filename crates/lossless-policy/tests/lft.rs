#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! Routes from LFT dumps: ibroute, dump_lfts (with and without destinations) and OpenSM's own
//! opensm-lfts.dump, all captured from OpenSM on ibsim running the recipe fabric
//! (tests/data/net), where OpenSM balances Switch1's routes over its two links to Switch2
//! (ports 3 and 5) and min-hop always takes port 3.

use lossless_policy::compile::OsmQos;
use lossless_policy::fabric::{lft, topo, Fabric};
use lossless_policy::matcher::Request;
use lossless_policy::partitions::Partitions;
use lossless_policy::resolve::{find_node, Query, Resolver};

const NET: &str = include_str!("data/net");
const DISC: &str = include_str!("data/lft/ibnetdiscover.txt");

fn route(f: &Fabric, lfts: Option<&lft::Lfts>, src: &str, dst: &str) -> Result<String, String> {
    let parts = Partitions::build(None, f);
    let osm = OsmQos::default();
    let mut r = Resolver::new(f, &parts, &osm, None);
    if let Some(l) = lfts {
        r = r.with_lfts(l);
    }
    let q = Query {
        requester: None,
        src: find_node(f, src).unwrap(),
        dst: find_node(f, dst).unwrap(),
        request: Request::default(),
        sl: None,
    };
    match r.resolve(&q) {
        Ok(p) => Ok(format!(
            "{} via {}",
            p.routing,
            p.hops
                .iter()
                .map(|h| format!("{}[{}->{}]", h.node, h.in_port, h.out_port))
                .collect::<Vec<_>>()
                .join(" ")
        )),
        Err(e) => Err(e.reason),
    }
}

#[test]
fn every_printer_gives_the_same_tables() {
    let net = topo::parse("net", NET).unwrap();
    let disc = topo::parse("ibnetdiscover.txt", DISC).unwrap();
    let a = lft::parse("x", include_str!("data/lft/ibroute.txt"), &net).unwrap();
    let b = lft::parse("x", include_str!("data/lft/dump_lfts.txt"), &net).unwrap();
    let c = lft::parse("x", include_str!("data/lft/opensm-lfts.dump"), &net).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
    // Without destinations the LIDs come from the fabric dump (ibnetdiscover has them).
    let d = lft::parse("x", include_str!("data/lft/dump_lfts-n.txt"), &disc).unwrap();
    let e = lft::parse("x", include_str!("data/lft/dump_lfts.txt"), &disc).unwrap();
    assert_eq!(d, e);
    // What OpenSM programmed: Switch1 sends LID 6 (Hca4) out of port 5, LID 4 (Hca2) out of 3.
    let s1 = net.by_desc("Switch1").unwrap();
    assert_eq!(a.egress(s1, 6), Some(5));
    assert_eq!(a.egress(s1, 4), Some(3));
    assert_eq!(a.lid_of(find_node(&net, "Hca4").unwrap()), Some(6));
}

#[test]
fn resolve_follows_the_lft() {
    let net = topo::parse("net", NET).unwrap();
    let l = lft::parse("lfts.txt", include_str!("data/lft/dump_lfts.txt"), &net).unwrap();
    assert_eq!(
        route(&net, Some(&l), "Hca1", "Hca4").unwrap(),
        "LFT from lfts.txt via Hca1[0->1] Switch1[1->5] Switch2[5->2]"
    );
    assert_eq!(
        route(&net, None, "Hca1", "Hca4").unwrap(),
        "min-hop (no LFT dump given) via Hca1[0->1] Switch1[1->3] Switch2[3->2]"
    );
    assert_eq!(
        route(&net, Some(&l), "Hca2", "Hca3").unwrap(),
        "LFT from lfts.txt via Hca2[0->1] Switch2[1->5] Switch1[5->2]"
    );
    // A switch as destination: its port 0.
    assert_eq!(
        route(&net, Some(&l), "Hca1", "Switch2").unwrap(),
        "LFT from lfts.txt via Hca1[0->1] Switch1[1->3] Switch2[3->0]"
    );
    // -n dump on a net file: no LIDs for the CAs anywhere.
    let n = lft::parse("n.txt", include_str!("data/lft/dump_lfts-n.txt"), &net).unwrap();
    let err = route(&net, Some(&n), "Hca1", "Hca4").unwrap_err();
    assert!(
        err.starts_with("no LID known for Hca4/P1: n.txt has no destination column"),
        "{err}"
    );
    // A hole in a table is a dead end, named.
    let holed = include_str!("data/lft/dump_lfts.txt").replace("0x0006 005", "0x0006 255");
    let h = lft::parse("holed.txt", &holed, &net).unwrap();
    let err = route(&net, Some(&h), "Hca1", "Hca4").unwrap_err();
    assert_eq!(
        err,
        "the LFT of Switch1 in holed.txt has no route for LID 0x0006 (Hca4/P1)"
    );
    // A loop between the two switches.
    let looped = include_str!("data/lft/dump_lfts.txt").replace("0x0006 002", "0x0006 005");
    let lp = lft::parse("loop.txt", &looped, &net).unwrap();
    let err = route(&net, Some(&lp), "Hca1", "Hca4").unwrap_err();
    assert_eq!(err, "route needs more than 64 hops");
}

#[test]
fn dumps_that_do_not_fit_the_fabric() {
    let net = topo::parse("net", NET).unwrap();
    let disc = topo::parse("ibnetdiscover.txt", DISC).unwrap();
    let good = include_str!("data/lft/ibroute.txt");
    let err = |src: &str, f: &Fabric| lft::parse("l.txt", src, f).unwrap_err().to_string();
    let only_one: String = good.lines().take(10).collect::<Vec<_>>().join("\n");
    let cases = [
        ("one switch", err(&only_one, &net)),
        (
            "unknown switch",
            err(
                &good.replace("Lid 3 guid 0x0000000000200001", "Lid 3 guid 0x0000000000abcdef"),
                &net,
            ),
        ),
        ("unconnected port", err(&good.replace("0x0004 003", "0x0004 007"), &net)),
        ("unknown port guid", err(&good.replace("0x0000000000100004", "0x0000000000999999"), &net)),
        ("bad port", err(&good.replace("0x0004 003", "0x0004 x3"), &net)),
        ("multicast", err("Multicast mlids [0xc000-0xc001] of switch Lid 1 guid 0x0000000000200000 (Switch1):\n", &net)),
        ("garbage", err("ibroute: iberror: failed: dump tables: not a switch\n", &net)),
        ("entry first", err("0x0001 000\n", &net)),
        (
            "lids disagree with ibnetdiscover",
            err(&good.replace("'Hca2'", "'x'").replace("0x0000000000100004", "0x0000000000100007"), &disc),
        ),
        ("twice", err(&format!("{good}{good}"), &net)),
    ];
    let out: Vec<String> = cases.iter().map(|(n, e)| format!("{n}: {e}")).collect();
    insta::assert_snapshot!(out.join("\n"));
}

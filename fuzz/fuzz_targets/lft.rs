//! Routing dumps (`lossless policy resolve --lfts FILE`: ibroute, dump_lfts with and
//! without -n, OpenSM's opensm-lfts.dump): any text against the recipe fabric in, routes
//! or a precise error out, no panic; routes that parse resolve every pair of ends (a
//! path, or why there is none: a hole, a loop) without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lossless_policy::compile::OsmQos;
use lossless_policy::fabric::{lft, topo, Fabric};
use lossless_policy::matcher::Request;
use lossless_policy::partitions::Partitions;
use lossless_policy::resolve::{Query, Resolver};

const NET: &str = include_str!("../../crates/lossless-policy/tests/data/net");

fn fabric() -> &'static Fabric {
    static F: std::sync::OnceLock<Fabric> = std::sync::OnceLock::new();
    F.get_or_init(|| topo::parse("net", NET).expect("the recipe fabric parses"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let f = fabric();
    let Ok(lfts) = lft::parse("fuzz", text, f) else {
        return;
    };
    let parts = Partitions::build(None, f);
    let osm = OsmQos::default();
    let r = Resolver::new(f, &parts, &osm, None).with_lfts(&lfts);
    let ends = f.end_ports();
    for src in &ends {
        for dst in &ends {
            let _ = r.resolve(&Query {
                src: src.clone(),
                dst: dst.clone(),
                request: Request::default(),
                sl: None,
            });
        }
    }
});

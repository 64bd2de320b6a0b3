//! OpenSM's `opensm.conf` (`lossless policy compile --opensm-conf FILE`: its `qos_*`
//! keys and `subnet_timeout`): any text in, no panic, as OpenSM reads any file; the
//! tables of every port of the recipe fabric compile from what it read without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;
use lossless_policy::compile::{compile, OsmQos};
use lossless_policy::fabric::{topo, Fabric};

const NET: &str = include_str!("../../crates/lossless-policy/tests/data/net");

fn fabric() -> &'static Fabric {
    static F: std::sync::OnceLock<Fabric> = std::sync::OnceLock::new();
    F.get_or_init(|| topo::parse("net", NET).expect("the recipe fabric parses"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let osm = OsmQos::parse(text);
    let _ = compile(fabric(), &osm, None, None);
});

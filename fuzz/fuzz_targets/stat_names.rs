//! Any text as a driver's ethtool statistic name (lossless-node's `pfc::names::classify`),
//! an RDMA hw counter's file name (`RoceCounter::of`) and a hw counter file's content
//! (`parse_hw_counter`): no panic; a name classified is exactly one of the drivers'
//! names, made again from its pattern; a value parsed prints back to text that parses
//! to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_node::pfc::names::{classify, PfcStat, PER_PRIORITY, STORM};
use lossless_node::pfc::rdma::{parse_hw_counter, HW_COUNTERS};
use lossless_node::pfc::RoceCounter;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    match classify(&s) {
        Some(PfcStat::Counter(c, p)) => {
            assert!(p < 8, "{s:?}: priority {p}");
            assert!(
                PER_PRIORITY
                    .iter()
                    .any(|(pattern, counter)| *counter == c
                        && pattern.replace('#', &p.to_string()) == s),
                "{s:?} classified as {c:?} {p} by no pattern"
            );
        }
        Some(PfcStat::Storm) => assert_eq!(s, STORM),
        None => {}
    }
    if let Some(c) = RoceCounter::of(&s) {
        assert!(
            HW_COUNTERS.iter().any(|(_, n, k)| *n == s && *k == c),
            "{s:?}"
        );
    }
    if let Some(v) = parse_hw_counter(&s) {
        assert_eq!(parse_hw_counter(&format!("{v}\n")), Some(v));
        assert_eq!(
            s.trim_end_matches('\n').parse::<u64>().ok(),
            Some(v),
            "{s:?}"
        );
    }
});

#![allow(clippy::unwrap_used)]
//! `heap::trim` gives back what glibc kept: 48 MB of small blocks freed below a
//! block still in use stay in the RSS (only the top of the heap goes back by
//! itself) until it is called.
//!
//! Alone in its test binary: it reads the process's RSS.

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[test]
fn trim_gives_freed_heap_memory_back() {
    const BLOCKS: usize = 200_000;
    let blocks: Vec<Box<[u8; 240]>> = (0..BLOCKS).map(|i| Box::new([i as u8; 240])).collect();
    // Allocated after them: the heap's top stays in use.
    let pin = Box::new([1u8; 240]);
    let full = rss_kib();
    drop(blocks);
    let freed = rss_kib();
    lossless_sys::heap::trim();
    let trimmed = rss_kib();
    println!("RSS {full} KiB with the blocks, {freed} KiB freed, {trimmed} KiB trimmed");
    assert!(
        freed > full - 8 * 1024,
        "glibc kept the freed blocks: {full} -> {freed} KiB"
    );
    assert!(
        trimmed + 40 * 1024 < freed,
        "trim gave back less than 40 MB: {freed} -> {trimmed} KiB"
    );
    assert_eq!(pin[0], 1);
}

//! The batch path allocates nothing once its buffers have grown: a relay
//! that must keep up with a PFC storm at line rate cannot lean on the
//! allocator per frame.
//!
//! A counting global allocator sees every allocation of this test binary,
//! from any thread. libtest's own threads allocate while a test runs (its
//! bookkeeping of running tests, which races with the test on a loaded
//! machine), so this binary runs without the harness (`harness = false`):
//! `main` is the only thread.

mod common;

use std::alloc::System;

use common::*;
use lossless_relay::{Port, StormConfig, TxBatch};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

// `stats_alloc` holds the one `unsafe impl GlobalAlloc`; the workspace
// forbids unsafe code in ours.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn main() {
    batches_do_not_allocate();
    println!("batches_do_not_allocate: ok");
}

fn batches_do_not_allocate() {
    for kind in KINDS {
        let mut cfg = pe2(kind);
        cfg.storm = StormConfig {
            max_per_second: Some(1000),
            burst: Some(100),
            episode_gap: "1ms".into(),
            ..StormConfig::default()
        };
        let mut pe2 = relay(cfg);
        let mut pe1 = relay(pe1(kind));
        let legal: Vec<Vec<u8>> = (0..64).map(|i| pfc_one(i % 8, (i as u16) * 7)).collect();
        let mut mixed = legal.clone();
        mixed.push(pfc_from(STRANGER, 1, [1; 8]));
        mixed.push(vec![0u8; 30]);
        let mut wan = TxBatch::with_capacity(256, 256);
        let mut dc = TxBatch::with_capacity(256, 256);
        // Warm up: grow the buffers, let the storm guard see every priority.
        pe2.process(t(0), Port::Dc, mixed.iter().map(Vec::as_slice), &mut wan);
        let mut relayed = 0;
        let region = Region::new(GLOBAL);
        for round in 1..50u64 {
            wan.clear();
            dc.clear();
            pe2.process(
                t_us(round * 300),
                Port::Dc,
                mixed.iter().map(Vec::as_slice),
                &mut wan,
            );
            pe2.process_timeout(t_us(round * 300 + 150), &mut wan);
            for tx in wan.iter() {
                pe1.process(t_us(round * 300), Port::Wan, [tx.frame], &mut dc);
            }
            relayed += dc.len();
        }
        let stats = region.change();
        assert!(relayed > 0, "{kind:?}: something crossed");
        assert_eq!(stats.allocations, 0, "{kind:?}: {stats:?}");
        assert_eq!(stats.reallocations, 0, "{kind:?}: {stats:?}");
    }
}

//! Any bytes as a buffer of rtnetlink messages: parse_addr_messages must return
//! events or a NetlinkError, never panic, and whatever it accepts must be consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_sys::addr::{parse_addr_messages, AddrEvent};

fuzz_target!(|data: &[u8]| {
    match parse_addr_messages(data) {
        Ok(events) => {
            // At most one event per 16-byte header.
            assert!(events.len() <= data.len() / 16);
            for ev in events {
                let (AddrEvent::New(a) | AddrEvent::Del(a)) = ev;
                assert!(a.ifindex > 0 && a.ifindex <= i32::MAX as u32);
                let max = if a.address.is_ipv4() { 32 } else { 128 };
                assert!(a.prefix_len <= max);
            }
        }
        Err(e) => assert!(e.offset <= data.len(), "{e}"),
    }
});

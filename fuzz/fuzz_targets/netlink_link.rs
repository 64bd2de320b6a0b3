//! Any bytes as a buffer of rtnetlink messages: parse_link_messages must
//! return events or a NetlinkError, never panic, and whatever it accepts
//! must be consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lossless_sys::link::{parse_link_messages, LinkEvent};

fuzz_target!(|data: &[u8]| {
    match parse_link_messages(data) {
        Ok(events) => {
            // At most one event per 16-byte header.
            assert!(events.len() <= data.len() / 16);
            for ev in events {
                let (LinkEvent::New(lossless_sys::link::LinkInfo { ifindex, .. })
                | LinkEvent::Del { ifindex, .. }) = ev;
                assert!(ifindex > 0 && ifindex <= i32::MAX as u32);
            }
        }
        Err(e) => assert!(e.offset <= data.len(), "{e}"),
    }
});

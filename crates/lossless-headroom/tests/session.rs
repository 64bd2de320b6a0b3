#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
//! One measurement session on its own: what it does with frames that are not
//! answers to its round. Sessions measuring over a link (delays, clock
//! offsets, late timestamps, losses) run on the lab's simulator:
//! `lossless-lab/tests/session.rs`.

use lossless_dcbx::Instant;
use lossless_headroom::session::{Session, SessionConfig};
use lossless_wire::measure::{Measure, MessageKind};
use lossless_wire::MacAddr;

const A: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const B: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);

#[test]
fn stale_and_foreign_frames_are_counted_not_used() {
    let mut s = Session::new(SessionConfig::default(), A, 1).unwrap();
    let now = Instant::ZERO;
    s.set_link(now, true);
    s.set_agreed(now, true);
    while s.poll_transmit().is_some() {}
    // A response for a round that is not ours.
    let mut f = Vec::new();
    let stale = Measure {
        kind: MessageKind::Response,
        session: 999,
        sequence: 0,
        flags: 0,
        t1: 0,
        t2: 5,
        t3: 0,
    };
    lossless_wire::emit_measure_frame(B, &stale, &mut f);
    s.handle_frame(now, &f, 10);
    assert_eq!(s.stats().stale, 1);
    // A truncated measurement frame.
    s.handle_frame(now, &f[..20], 10);
    assert_eq!(s.stats().malformed, 1);
    // An LLDP frame: ignored.
    let mut lldp = f.clone();
    lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
    s.handle_frame(now, &lldp, 10);
    assert_eq!(s.stats().malformed, 1);
}
